"""The Lesson's keys: the right arrow (or Page Down, as a presenter's clicker sends) = Next, the left arrow (or Page
Up) = Previous.

keys.js is a components.v2 component, as the Explorer's keys are (app_pages/explorer_parts/keys.py): Streamlit mounts
it in the page's own document, not in an iframe, so its listener hears the page's keys without reaching into another
window, and Streamlit calls the cleanup it returns when the component leaves the page (another page of the app has
no Lesson keys). A key clicks the enabled button, so keys and buttons do the same. Keys typed into a field that takes
them (text, numbers, a select box, a slider) are the field's; a switch, a check box or a button that has the focus
after a click (the Present switch) does not take arrows, so the keys still move the lesson.
"""

import pathlib

import streamlit as st

HERE = pathlib.Path(__file__).parent
# Each key and the button (its key, so its element's class .st-key-<key>) it clicks.
KEYS = {"ArrowRight": "lesson_next", "PageDown": "lesson_next", "ArrowLeft": "lesson_prev", "PageUp": "lesson_prev"}
LESSON_KEYS = st.components.v2.component("pcrp_lesson_keys", js=(HERE / "keys.js").read_text(encoding="utf-8"))


def lesson_keys():
    """The Lesson's keys, on the page while it shows the Lesson."""
    LESSON_KEYS(key="lesson_keys", data={"keys": KEYS}, height="content")

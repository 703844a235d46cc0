"""Keyboard shortcuts of the Explorer: Space = pause / resume (or start), Right arrow or Page Down (a presenter's
clicker) = one sweep, R = reset.

keys.js is a components.v2 component, as the live canvas is (live_canvas.py): Streamlit mounts such a component in
the page's own document, not in an iframe, so its listener hears the page's keys without reaching into another
window, and Streamlit calls the cleanup it returns when the component leaves the page (another page of the app has no
Explorer keys). It clicks the enabled button, so keys and buttons do the same thing. Keys typed into a field are the
field's, and so are those of a control reached with Tab (the pace slider's arrows, Space on the Present toggle); a
control focused by a click keeps none, so the keys work after any click. Space never reaches a focused button. Space
on a finished run (a new run) and R (reset) act at the second press: the first says so at the top of the page, in
the component's own notice.
"""

import pathlib

import streamlit as st

HERE = pathlib.Path(__file__).parent
# The notice: fixed at the top of the window, above the page (the component's own styles, in its shadow root). (On
# several lines: Streamlit reads a one-line string with brackets as a file's path.)
NOTICE_CSS = """
#pcrp-key-notice { position: fixed; top: 10px; left: 50%; transform: translateX(-50%); z-index: 1000000;
  max-width: 90vw; padding: 0.5rem 1.1rem; border-radius: 0.5rem; background: #fff3cd; color: #31333f;
  border: 2px solid #d39e00; box-shadow: 0 4px 14px rgba(0, 0, 0, 0.25); font: 20px "Source Sans", sans-serif; }
#pcrp-key-notice[hidden] { display: none; }
"""
KEYS = st.components.v2.component("pcrp_keys", js=(HERE / "keys.js").read_text(encoding="utf-8"), css=NOTICE_CSS)


def keyboard_shortcuts():
    """The Explorer's keys, on the page while it shows the Explorer."""
    KEYS(key="keys", height="content")

"""Keyboard shortcuts of the Explorer: Space = pause / resume (or start), Right arrow or Page Down (a presenter's
clicker) = one sweep, R = reset.

A listener on the page (keys.js, added once, from an invisible same-origin component) clicks the enabled button, so
keys and buttons do the same thing. Keys typed into a field are the field's, and so are those of a control reached
with Tab (the pace slider's arrows, Space on the Present toggle); a control focused by a click keeps none, so the keys
work after any click. Space never reaches a focused button. Space on a finished run (a new run) and R (reset) act at
the second press: the first says so at the top of the page.
"""

import json
import pathlib

import streamlit as st

KEYS_CODE = (pathlib.Path(__file__).with_name("keys.js")).read_text(encoding="utf-8")
# The component's own frame is replaced on every full redraw, and a listener defined there would die with it:
# the code runs as a script element of the page itself, once.
KEYS_SCRIPT = ("<script>const host = window.parent; if (!host.pcrpKeys) { host.pcrpKeys = true; "
               "const s = host.document.createElement('script'); s.textContent = " + json.dumps(KEYS_CODE) + "; "
               "host.document.head.appendChild(s); }</script>")


def keyboard_shortcuts():
    st.iframe(KEYS_SCRIPT, height=1)  # same-origin: may reach the page (st.components.v1.html is deprecated)

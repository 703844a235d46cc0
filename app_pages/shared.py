"""What every page shares: the server's run registry, the session's claim on its runs, and the
guard that turns an unexpected error into a short message (details go to the server log only).

Not a page: app.py lists the pages explicitly.
"""

import logging
import threading
from contextlib import contextmanager

import streamlit as st

from pcrp.live import RunRegistry, SessionOwner

LOG = logging.getLogger("pcrp.app")


@st.cache_resource(show_spinner=False)
def registry():
    """The one RunRegistry of this server process (shared by every session; it is thread-safe)."""
    return RunRegistry()


def _release(owner):
    owner.release_all()


@st.cache_resource(scope="session", on_release=_release, show_spinner=False)
def session_owner():
    """This browser session's owner token. Streamlit releases it when the session disconnects (tab
    closed, reload, network lost); its runs then stop after a short grace unless the session returns."""
    return SessionOwner()


# Building the live view's charts is pure Python and holds the GIL. When every session redraws at once,
# the server's event loop (which answers every browser and the health check) waits its turn behind all
# of them; one redraw at a time keeps it answering, and redraws slow down evenly. Only for short,
# periodic work: a long computation (a posterior summary) must not hold the slot.
_RENDER_SLOT = threading.Lock()
RENDER_WAIT_SECONDS = 10.0  # never wait longer than this for the slot (then draw anyway)


@contextmanager
def render_slot():
    """Hold the server's one drawing slot while a live view builds its charts (see _RENDER_SLOT)."""
    acquired = _RENDER_SLOT.acquire(timeout=RENDER_WAIT_SECONDS)
    try:
        yield
    finally:
        if acquired:
            _RENDER_SLOT.release()


@contextmanager
def guarded(what="this page"):
    """Run a page (or a fragment) body; an unexpected error shows one line, never a traceback."""
    try:
        yield
    except Exception:  # st.rerun / st.stop are BaseExceptions and pass through
        LOG.exception("unexpected error in %s", what)
        st.error(f"Something went wrong in {what}; the details are in the server's log. "
                 "Press Reset or reload the page to start again.")

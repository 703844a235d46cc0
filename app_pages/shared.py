"""What every page shares: the server's run registry, the session's claim on its runs, and the
guard that turns an unexpected error into a short message (details go to the server log only).

Not a page: app.py lists the pages explicitly.
"""

import logging
import os
import re
import threading
import time
from contextlib import contextmanager

import streamlit as st

from pcrp.app import warm_up
from pcrp.sampling.compute import SessionWork
from pcrp.app.browser_keys import (COOKIE, DOWNLOADS, KEY_DAYS as BROWSER_COOKIE_DAYS, SERVER_KEYS, key_rate_setting,
                                   middleware_active)
from pcrp.app.fair_share import RunRegistry, SessionOwner, share_settings, visitor_address

LOG = logging.getLogger("pcrp.app")


def sampler_ready():
    """Whether the kernels are ready, after waiting for their separate compile if it is still running (once per
    installation: pcrp.app.warm_up), with what it is doing and for how long on the page; a page calls it before it
    samples. False, with the reason shown, when the compile failed. The wait sleeps: other sessions run meanwhile."""
    if warm_up.state().ready:
        return True
    box = st.empty()
    final = warm_up.wait_until_ready(lambda w: box.info(w.describe(), icon=":material/hourglass_top:"))
    box.empty()
    if final.error:
        st.error(final.describe())
        return False
    return True


@st.cache_resource(show_spinner=False)
def registry():
    """The one RunRegistry of this server process (shared by every session; it is thread-safe), with the settings
    the administrator may make in the environment (PCRP_MAX_LIVE_RUNS, PCRP_CHAINS_PER_BROWSER, and for the browser
    keys PCRP_NEW_KEYS_PER_MINUTE; docs/serving.md)."""
    kwargs, problems = share_settings(os.environ)
    SERVER_KEYS.rate.per_minute, key_problems = key_rate_setting(os.environ)
    for problem in problems + key_problems:
        LOG.warning(problem)
    return RunRegistry(**kwargs)


def _release(owner):
    owner.release_all()


@st.cache_resource(scope="session", on_release=_release, show_spinner=False)
def session_owner():
    """This browser session's owner token. Streamlit releases it when the session disconnects (tab
    closed, reload, network lost); its runs then stop after a short grace unless the session returns."""
    return SessionOwner()


def _cancel_work(work):
    work.cancel_all("the page was closed or reloaded")


@st.cache_resource(scope="session", on_release=_cancel_work, show_spinner=False)
def session_work():
    """This session's :class:`pcrp.sampling.compute.SessionWork` (Choose r's fits): released, and so cancelled, when the
    session disconnects, so a closed tab's fits stop within about a second."""
    return SessionWork()


# A run belongs to the browser that started it. The browser keeps a key in a cookie and sends it with every new
# connection, so its own reload finds its run again (RunRegistry.latest_for); an address carries nothing of a run,
# so another visitor who opens a projected or bookmarked address gets a fresh page. Only this server issues keys
# (pcrp.app.browser_keys: random, HMAC-signed with a secret kept in this process's memory); a value the server did
# not sign is never adopted. Under serve.py the server sets the cookie itself, HttpOnly, on the page's HTTP
# response; under `streamlit run app.py` a script on the page sets it (see keep_browser_key).
BROWSER_COOKIE = COOKIE


def _cookie():
    try:
        return st.context.cookies.get(BROWSER_COOKIE)
    except Exception:  # no browser connection (a test harness): the session alone owns its runs
        return None


def browser_key():
    """This browser's key, verified once per connection (each new session): the ``pcrp_browser`` cookie when this
    server signed it and it has not expired, else a fresh key for this session (which keep_browser_key stores in
    the browser when the server did not already). An unsigned, altered, expired or foreign value is never
    adopted: it is replaced, and the server's log says so. None when this network address has been issued its
    new keys for the last minute (pcrp.app.browser_keys.KeyRate): the page then asks for a reload (the next
    connection tries again)."""
    state = st.session_state
    if state.get("browser_key") is None:
        cookie = _cookie()
        key = SERVER_KEYS.verify(cookie)
        if key is not None:
            state.browser_key, state.browser_key_stored = key, True
        else:
            if cookie:
                LOG.info("refused a browser key this server did not issue (%d characters); issued a new one",
                         len(str(cookie)))
            registry()  # (the administrator's key rate is read with the registry's settings)
            state.browser_key, state.browser_key_stored = SERVER_KEYS.mint_for(client_address()), False
    return state.browser_key


def no_key_message():
    """What a page says when this browser has no key because its address's new keys are spent (see browser_key)."""
    wait = SERVER_KEYS.rate.wait(client_address())
    return (f"Too many new browsers came from your network address in the last minute (this server issues at most "
            f"{SERVER_KEYS.rate.per_minute} a minute to one address, so that nobody can take it over by opening many "
            f"windows): reload this page in about {max(5, round(wait))} s to start a run.")


def client_address():
    """The network address this session counts under for the fair share (pcrp.app.live_runs.visitor_address of
    st.context.ip_address: the connection's address, or the visitor's as a trusted reverse proxy reports it in
    X-Forwarded-For; see docs/serving.md)."""
    try:
        ip = st.context.ip_address
    except Exception:  # no browser connection (a test harness)
        ip = None
    return visitor_address(ip)


def keep_browser_key():
    """Store this session's browser key in the browser (SameSite=Strict cookie) when it did not come from there and
    the server does not set it itself (serve.py does, HttpOnly, on every page load without a valid key). A script
    cannot set an HttpOnly cookie, so under `streamlit run app.py` page scripts can read the key (docs/serving.md)."""
    key = browser_key()
    if key is None or st.session_state.get("browser_key_stored") or middleware_active():
        return
    max_age = BROWSER_COOKIE_DAYS * 86400
    secure = "; Secure" if str(st.context.url or "").startswith("https:") else ""
    # st.iframe runs this HTML same-origin (it may set the app's cookie); nothing in it comes from a visitor:
    # the key is our own signed token (letters, digits, '.', '_' and '-'). (st.components.v1.html is deprecated.)
    st.iframe(f"<script>window.parent.document.cookie = '{BROWSER_COOKIE}={key}; path=/; "
              f"max-age={max_age}; SameSite=Strict{secure}';</script>", height=1)


def owned_download(build):
    """``build`` (a function returning a file's text or bytes, called when the visitor clicks) as the data of an
    st.download_button whose file only this browser can fetch: the bytes are recorded as this browser's
    (pcrp.app.browser_keys.DOWNLOADS), and under serve.py the server answers its /media/ link for this browser
    only. (Streamlit runs the function outside the page's session: the key is read now.)"""
    key = browser_key()

    def data():
        content = build()
        content = content.encode("utf-8") if isinstance(content, str) else bytes(content)
        DOWNLOADS.own(content, key)
        return content

    return data


# Building the live view's charts is pure Python and holds the GIL. When every session redraws at once,
# the server's event loop (which answers every browser and the health check) waits its turn behind all
# of them; one redraw at a time keeps it answering, and redraws slow down evenly. Only for short,
# periodic work: a long computation (a posterior summary) must not hold the slot. A redraw that follows a press
# (``urgent``) goes before the periodic frames that wait: thirty pages' frames queued ahead of a Pause held the press
# for seconds (bench/load_client.py).
class DrawingSlot:
    """One holder at a time; a waiting urgent acquirer goes before every waiting ordinary one. Thread-safe."""

    def __init__(self):
        self._cond = threading.Condition()
        self._held = False
        self._urgent = 0

    def acquire(self, urgent=False, timeout=None):
        with self._cond:
            if urgent:
                self._urgent += 1
            try:
                taken = self._cond.wait_for(lambda: not self._held and (urgent or not self._urgent), timeout)
                if taken:
                    self._held = True
                return taken
            finally:
                if urgent:
                    self._urgent -= 1
                    self._cond.notify_all()  # (ordinary waiters may go now)

    def release(self):
        with self._cond:
            self._held = False
            self._cond.notify_all()


_RENDER_SLOT = DrawingSlot()
RENDER_WAIT_SECONDS = 10.0  # never wait longer than this for the slot (then draw anyway)


_FRAME_CPU = threading.local()  # a script thread's CPU time when it last reported a frame


@contextmanager
def render_slot(urgent=False):
    """Hold the server's one drawing slot while a live view builds its charts (see DrawingSlot; urgent: the redraw
    follows a press), and report the frame's CPU time to the server's load meter (pcrp.app.fair_share.LoadMeter:
    what a live page costs is what the server admits runs by). A frame's CPU time is its script thread's since that
    thread last reported one (Streamlit runs a script run in a thread of its own, or a queued rerun in the same
    thread right after): the run's own bookkeeping counts, not just the live panel's code."""
    acquired = _RENDER_SLOT.acquire(urgent=urgent, timeout=RENDER_WAIT_SECONDS)
    try:
        yield
    finally:
        now = time.thread_time()
        registry().meter.frame(now - getattr(_FRAME_CPU, "last", 0.0))
        _FRAME_CPU.last = now
        if acquired:
            _RENDER_SLOT.release()


_MARKDOWN_ACTIVE = re.compile(r"([!-/:-@\[-`{-~])")  # every ASCII punctuation character
# GFM's literal autolinks (http://..., www...., name@host.tld) are found in the text after escapes are
# resolved, so escaping cannot stop them: an invisible word joiner (U+2060) breaks each pattern instead.
_AUTOLINK_STARTS = re.compile(r"(://|(?i:www)(?=\.)|@)")
WORD_JOINER = "\u2060"
INERT_MAX_CHARS = 200


def inert(text, max_chars=INERT_MAX_CHARS):
    """``text`` (a column or file name, a cell, a query value, a message quoting one) made safe to put
    inside Markdown: every ASCII punctuation character is backslash-escaped (CommonMark allows it for
    all of them), so no link, image, emphasis, heading, list, ``:colour[...]`` directive, emoji short
    code, ``$`` formula or bare-URL autolink can form; line breaks and other control characters become
    spaces; over ``max_chars`` characters it is cut with an ellipsis. Streamlit renders no raw HTML in
    Markdown (without unsafe_allow_html), and ``<`` is escaped anyway. Bare addresses stay unlinked: an
    invisible word joiner follows every ``://``, ``www`` and ``@`` (see _AUTOLINK_STARTS)."""
    text = "".join(" " if (ch < " " or ch == "\x7f") else ch for ch in str(text))
    if len(text) > max_chars:
        text = text[: max_chars - 1] + "…"
    text = _AUTOLINK_STARTS.sub(lambda m: m.group(1) + WORD_JOINER, text)
    return _MARKDOWN_ACTIVE.sub(r"\\\1", text)


@contextmanager
def guarded(what="this page"):
    """Run a page (or a fragment) body; an unexpected error shows one line, never a traceback."""
    try:
        yield
    except Exception:  # st.rerun / st.stop are BaseExceptions and pass through
        LOG.exception("unexpected error in %s", what)
        st.error(f"Something went wrong in {what}; the details are in the server's log. "
                 "Press Reset or reload the page to start again.")

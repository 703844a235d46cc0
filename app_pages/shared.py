"""What every page shares: the server's run registry, the session's one state object (its claim on its runs
among it), and the guard that turns an unexpected error into a short message (details go to the server log only).

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
from pcrp.app.browser_keys import (COOKIE, DOWNLOADS, KEY_DAYS as BROWSER_COOKIE_DAYS, SERVER_KEYS, key_rate_setting,
                                   middleware_active)
from pcrp.app.drawing_slot import DrawingSlot
from pcrp.app.fair_share import RunRegistry, share_settings, visitor_address
from pcrp.app.page_session import PageSession
from pcrp.app.memory import release_soon

LOG = logging.getLogger("pcrp.app")


def sampler_ready(need=None):
    """Whether the kernels the page needs are ready (``need``: a covariance type's sweep, "full" for the 1-D pages;
    None: every group), after waiting for their separate compile if it is still running (once per installation:
    pcrp.app.warm_up), with what it is doing and for how long on the page; a page calls it before it samples. False,
    with the reason shown, when the compile failed. The wait sleeps: other sessions run meanwhile."""
    if warm_up.state(need).ready:
        return True
    box = st.empty()
    final = warm_up.wait_until_ready(lambda w: box.info(w.describe(), icon=":material/hourglass_top:"), need=need)
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


# This session's one state object (pcrp.app.page_session.PageSession): every page keeps its state in it, under one
# key of st.session_state. Streamlit releases a session-scoped resource when the session disconnects (tab closed,
# reload, network lost); the one below holds the session's object, so that its release is the object's cleanup, one
# call (PageSession.close): its runs stop after a short grace unless the session returns, and what it holds goes.
SESSION_KEY = "pcrp"


def _close_session(session):
    session.close()
    release_soon()  # what the session held, back to the system (pcrp.app.memory)


@st.cache_resource(scope="session", on_release=_close_session, show_spinner=False)
def _closed_at_the_end(object_id, _session):
    """``_session`` (one per Streamlit session; ``object_id``: its id, so that each object has its own entry), closed
    when Streamlit releases the session's resources."""
    return _session


def page_session():
    """This session's :class:`pcrp.app.page_session.PageSession` (made on its first page run)."""
    state = st.session_state
    session = state.get(SESSION_KEY)
    if session is None:
        session = state[SESSION_KEY] = PageSession()
    _closed_at_the_end(id(session), session)
    return session


def session_owner():
    """This browser session's claim on its runs (pcrp.app.fair_share.SessionOwner), released with the session."""
    return page_session().owner


def session_work():
    """This session's :class:`pcrp.sampling.compute.SessionWork` (Choose r's and Reproduce's fits), part of its one
    object: cancelled by the object's close when the session disconnects, so a closed tab's fits stop within about a
    second."""
    return page_session().work


def page_part(name, make):
    """This session's part of page ``name`` (an attribute of PageSession: "lesson", "choose_r", ...), made by
    ``make()`` on the page's first visit."""
    session = page_session()
    part = getattr(session, name)
    if part is None:
        part = make()
        setattr(session, name, part)
    return part


# ----------------------------------------------------------------------------- widgets and the address from a part
# The design of the Explorer's settings (app_pages/explorer_parts/session.py), for the other pages' parts
# (pcrp.app.page_session.PagePart): a page's settings have one copy, the part's ``settings``; a widget's key exists
# because Streamlit needs one, its value is set from the part before it is drawn and its change is written back at
# once; the page's part of the address is written from the settings, and an address the visitor brings is read
# into them.
def _write_back(values, pairs, after=None, after_args=()):
    for name, key in pairs:
        values[name] = st.session_state[key]
    if after is not None:
        after(*after_args)


def bind(values, name, key, on_change=None, args=(), form=False):
    """The keyword arguments that bind a widget to ``values[name]`` (a page's settings): ``key`` (Streamlit needs one),
    whose value is set from the settings before the widget is drawn, and the callback that writes a change back at
    once, then calls ``on_change(*args)``. In a form (``form``: whose widgets may have no callback) the form's submit
    button writes them back (:func:`write_back`). The key is set only when it differs: setting it makes the browser
    show the value again, which in a form would undo what the visitor typed but has not submitted."""
    if key not in st.session_state or st.session_state[key] != values[name]:
        st.session_state[key] = values[name]
    if form:
        return {"key": key}
    return {"key": key, "on_change": _write_back, "args": (values, ((name, key),), on_change, tuple(args))}


def write_back(values, pairs, then=None):
    """The keyword arguments (on_click, args) of a form's submit button that write the form's bound widgets back:
    each widget's value (``pairs``: (name, key)) into ``values``, then ``then()``."""
    return {"on_click": _write_back, "args": (values, tuple(pairs), then)}


def follow_address(part, readers):
    """Read into ``part.settings`` what the address brings (the first visit, a link, a reload, the browser's Back):
    for each name of ``readers`` whose value in the address (None: absent) is not what the page last wrote there
    (``part.address``), ``readers[name](values or None)`` gives (value, problem or None) and the value replaces the
    setting (None: the setting is kept). Returns the problems, which the page says once (then the address is its
    own again)."""
    problems = []
    for name, read in readers.items():
        given = st.query_params.get_all(name)
        if (given[-1] if given else None) == part.address.get(name):
            continue
        value, problem = read(given or None)
        if value is not None:
            part.settings[name] = value
        if problem:
            problems.append(problem)
    return problems


def write_address(part, texts):
    """Write the page's part of the address from its settings: ``texts`` {name: text, or None: left out}, changed in
    the address only where it differs, and remembered as the page's own (``part.address``)."""
    for name, text in texts.items():
        given = st.query_params.get_all(name)
        if text is None:
            if given:
                del st.query_params[name]
        elif given != [text]:
            st.query_params[name] = text
        part.address[name] = text


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
    session = page_session()
    if session.browser_key is None:
        cookie = _cookie()
        key = SERVER_KEYS.verify(cookie)
        if key is not None:
            session.browser_key, session.key_stored = key, True
        else:
            if cookie:
                LOG.info("refused a browser key this server did not issue (%d characters); issued a new one",
                         len(str(cookie)))
            registry()  # (the administrator's key rate is read with the registry's settings)
            session.browser_key, session.key_stored = SERVER_KEYS.mint_for(client_address()), False
    return session.browser_key


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


# A components.v2 component runs in the page's own document (no iframe), so its script sets the app's cookie itself.
STORE_COOKIE = st.components.v2.component(
    "pcrp_browser_key", js="export default function ({data}) {\n  if (data && data.cookie) document.cookie = data.cookie;\n}\n")


def keep_browser_key():
    """Store this session's browser key in the browser (SameSite=Strict cookie) when it did not come from there and
    the server does not set it itself (serve.py does, HttpOnly, on every page load without a valid key). A script
    cannot set an HttpOnly cookie, so under `streamlit run app.py` page scripts can read the key (docs/serving.md)."""
    key = browser_key()
    if key is None or page_session().key_stored or middleware_active():
        return
    max_age = BROWSER_COOKIE_DAYS * 86400
    secure = "; Secure" if str(st.context.url or "").startswith("https:") else ""
    # Nothing in the cookie comes from a visitor: the key is our own signed token (letters, digits, '.', '_', '-').
    STORE_COOKIE(key="browser_key_cookie", height="content",
                 data={"cookie": f"{BROWSER_COOKIE}={key}; path=/; max-age={max_age}; SameSite=Strict{secure}"})


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


# One redraw at a time, a press's first (pcrp.app.drawing_slot says why).
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


# ----------------------------------------------------------------------------- presentation mode
# Presentation mode (?present=1 in the address, or a page's Present switch), every page's: no sidebar, header or
# toolbars, the page the projector's whole width (PRESENT_RULES), and text in projector type: 20 px, captions 16 px
# (PROJECTOR_TEXT, the Lesson's and Rich get richer's; the Explorer and Choose r size theirs with their charts:
# app_pages/explorer_parts/header.py: present_style's ``text``). A page adds its own rules (``extra``).
# Streamlit 1.67 has no public way to hide the sidebar with its control, the app's header or an element's toolbar
# during a session (st.set_page_config's initial_sidebar_state is the state a page starts in; no option leaves out a
# header or a chart's toolbar), so these styles name Streamlit's own data-testid attributes (docs/design.md section 7).
PRESENT_RULES = """
section[data-testid='stSidebar'], [data-testid='stSidebarCollapsedControl'], header[data-testid='stHeader'],
[data-testid='stElementToolbar'], [data-testid='stToolbar'] {display: none !important;}
[data-testid='stMainBlockContainer'] {padding: 0.6rem 1.5rem 0.5rem 1.5rem !important; max-width: 100% !important;}
[data-testid='stMainBlockContainer'] h1 {font-size: 1.9rem; padding: 0 0 0.2rem 0;}
"""
PROJECTOR_TEXT = """
[data-testid='stMainBlockContainer'] p, [data-testid='stMainBlockContainer'] a,
[data-testid='stMainBlockContainer'] li, [data-testid='stCaptionContainer'] {font-size: 20px !important;}
[data-testid='stMainBlockContainer'] [data-testid='stCaptionContainer'] p {font-size: 16px !important;}
"""
# A style-only st.html goes to the page's event container, where st.toast puts its notices too; one that comes and
# goes (with Present, or with polling) moves the notices after it, and Streamlit's browser shows a moved notice again
# (the Explorer's "Started ..." notice came back when a run ended). So every run of a page sends the same style
# elements, this one where they do not apply.
EMPTY_STYLE = "<style></style>"
PRESENT_HELP = "Hide the sidebar and the header and set the text in projector type (or add &present=1 to the address)."


def read_present(values):
    """(presentation mode, problem or None) from the address's ``present`` values (None: absent, off), read by the
    Explorer's declaration of it (pcrp.app.explorer_settings): a bad value leaves it off, with the sentence saying
    why (for :func:`follow_address`)."""
    from pcrp.app import explorer_settings as es

    if not values:
        return False, None
    try:
        return bool(es.BY_NAME["present"].parse(values[-1])), None
    except ValueError as err:
        return False, str(err)


def present_text(present):
    """Presentation mode in the address: ?present=1 when on, left out when off."""
    return "1" if present else None


def present_switch(place, part, key, help=PRESENT_HELP):
    """The Present switch (widget ``key``) in ``place``, bound to ``part.settings["present"]``; the page writes it
    into the address (?present=1), so that a reload or a shared address keeps the mode."""
    return place.toggle("Present", help=help, **bind(part.settings, "present", key))


def present_style(present, extra="", text=PROJECTOR_TEXT):
    """Presentation mode's styles when ``present`` (PRESENT_RULES, the page's ``text`` sizes, then its ``extra``
    rules), else an empty style: every run of a page sends one style element here, so the elements after it keep
    their places."""
    st.html(f"<style>{PRESENT_RULES}{text}{extra}</style>" if present else EMPTY_STYLE)

"""What the AppTests of the Explorer share: the session's one state object (pcrp.app.page_session.PageSession, under
app_pages.shared.SESSION_KEY) and the Explorer's part of it, read from an AppTest."""

from pcrp.app.page_session import PageSession

SESSION_KEY = "pcrp"  # app_pages.shared.SESSION_KEY (not imported: importing app_pages.shared needs a Streamlit run)


def page_session(at):
    """The AppTest's PageSession (None before its first run)."""
    return at.session_state[SESSION_KEY] if SESSION_KEY in at.session_state else None


def explorer_state(at):
    """The Explorer's part of the AppTest's session (pcrp.app.page_session.ExplorerState)."""
    return page_session(at).explorer


def current_run(at):
    """The run the Explorer shows, or None."""
    session = page_session(at)
    return None if session is None or session.explorer is None else session.explorer.run


def run_view(at):
    """The RunView of the run shown (the caches its frames reuse)."""
    return explorer_state(at).run_view


def as_browser(at, browser_key):
    """Make the AppTest (before its first run) a session of the browser whose signed key is ``browser_key``, as if its
    cookie had come with the connection."""
    at.session_state[SESSION_KEY] = PageSession(browser_key=browser_key, key_stored=True)
    return at


def browser_key(at):
    return page_session(at).browser_key

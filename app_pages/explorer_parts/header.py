"""The Explorer's top: styles (presentation mode's among them), the title, and notes about the address or a run the
server no longer keeps."""

import streamlit as st

from app_pages.explorer_parts.session import explorer
from app_pages.shared import inert
from pcrp.app import explorer_settings as es
from pcrp.app.live_runs import RELOAD_SECONDS
from pcrp.model import PRIORS

# Presentation mode (?present=1, or the Present toggle): no sidebar, header or chart toolbars, every text
# larger (status text 20 px), charts sized so both rows fit a 1280 x 800 projector without scrolling.
# Streamlit 1.67 has no public way to hide the sidebar with its control, the app's header or an element's toolbar
# during a session (st.set_page_config's initial_sidebar_state is the state a page starts in; no option leaves out a
# header or a chart's toolbar), so these styles name Streamlit's own data-testid attributes (docs/design.md section 7).
PRESENT_CSS = """<style>
section[data-testid='stSidebar'], [data-testid='stSidebarCollapsedControl'], header[data-testid='stHeader'],
[data-testid='stElementToolbar'], [data-testid='stToolbar'] {display: none !important;}
[data-testid='stMainBlockContainer'] {padding: 0.6rem 1.5rem 0.5rem 1.5rem !important; max-width: 100% !important;}
[data-testid='stMainBlockContainer'] h1 {font-size: 1.9rem; padding: 0 0 0.2rem 0;}
[data-testid='stMainBlockContainer'] p, [data-testid='stMainBlockContainer'] li,
[data-testid='stMainBlockContainer'] button, [data-testid='stCaptionContainer'] {font-size: 20px !important;}
[data-testid='stMainBlockContainer'] [data-testid='stVerticalBlock'] {gap: 0.35rem;}
</style>"""


# The live charts have no toolbar (fullscreen, export): four tab stops per chart, 24 in all, before the buttons.
# (No public option of st.vega_lite_chart leaves it out: see PRESENT_CSS.)
NO_TOOLBAR_CSS = ("<style>div:has(> [data-testid='stVegaLiteChart']) > [data-testid='stElementToolbar'] "
                  "{display: none !important;}</style>")
EMPTY_STYLE = "<style></style>"


def page_top(S, presentation):
    """Styles, the title, and notes about the address or a run the server no longer keeps."""
    st.html(NO_TOOLBAR_CSS)
    # A style-only st.html goes to the page's event container, where st.toast puts its notices too; one that comes
    # and goes (with Present, or with polling) moves the notices after it, and Streamlit's browser shows a moved
    # notice again (the "Started ..." notice came back when a run ended). So every run of the page sends the same
    # style elements, empty where they do not apply.
    st.html(PRESENT_CSS if presentation else EMPTY_STYLE)
    ex = explorer()
    if ex.run is not None and ex.run.discarded:  # this tab was away longer than the server keeps runs
        ex.show(None)
        ex.notices.missing_run = True
    rows = es.active_rows(S)  # more than two: the rows' headings name them (a title of five names takes 2 lines)
    st.title((" vs ".join(PRIORS[S[es.prior_key(row)]].label for row in rows) if len(rows) <= 2
              else f"{len(rows)} priors on the same data") + ", live"
             + (f" · {(es.SOURCE_LABELS[S['data']] if S['data'] != 'csv' else 'your data')}" if presentation else ""))
    for problem in ex.notices.take("address_problems"):
        st.warning(f"Ignored a setting in the address bar: {inert(problem)}.")
    # "press Start" only where Start can run: an uploaded file is used first (its data do not outlive the run)
    start = ("press **Start** to run them" if S["data"] != "csv" or ex.csv.dataset is not None else
             "upload your file and press **Use this CSV**, then **Start**")
    if ex.notices.take("run_in_address"):
        st.info("Addresses no longer name runs: a run is shown only in the browser that started it. This page "
                f"starts with the settings of the address; {start}.")
    if ex.notices.take("missing_run"):
        st.info(f"Your run is no longer kept on this server (a run is kept for {RELOAD_SECONDS:.0f} s after its "
                f"page closes, so that a reload finds it). To run again, {start.replace(' to run them', '')}.")

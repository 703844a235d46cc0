"""The Explorer's top: styles (presentation mode's among them), the title, and notes about the address or a run the
server no longer keeps."""

import streamlit as st

from app_pages.explorer_parts.session import explorer
from app_pages.shared import inert, present_style
from pcrp.app import explorer_settings as es
from pcrp.app.live_runs import RELOAD_SECONDS
from pcrp.model import PRIORS

# The Explorer's text in presentation mode (?present=1, or the Present toggle; the rest is shared.PRESENT_RULES):
# every text larger (status text 20 px), buttons too, and blocks closer, so that its rows of charts fit a 1280 x 800
# projector without scrolling. Choose r uses it too.
EXPLORER_PRESENT_TEXT = """
[data-testid='stMainBlockContainer'] p, [data-testid='stMainBlockContainer'] li,
[data-testid='stMainBlockContainer'] button, [data-testid='stCaptionContainer'] {font-size: 20px !important;}
[data-testid='stMainBlockContainer'] [data-testid='stVerticalBlock'] {gap: 0.35rem;}
"""


# The live charts have no toolbar (fullscreen, export): four tab stops per chart, 24 in all, before the buttons.
# (No public option of st.vega_lite_chart leaves it out: see shared.PRESENT_RULES.)
NO_TOOLBAR_CSS = ("<style>div:has(> [data-testid='stVegaLiteChart']) > [data-testid='stElementToolbar'] "
                  "{display: none !important;}</style>")


def page_top(S, presentation):
    """Styles, the title, and notes about the address or a run the server no longer keeps."""
    st.html(NO_TOOLBAR_CSS)
    present_style(presentation, text=EXPLORER_PRESENT_TEXT)  # (one style element always: see shared.EMPTY_STYLE)
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

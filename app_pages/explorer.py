"""Explorer: one to five priors (CRP above pCRP by default; any of pcrp.model.PRIORS, ``?priors=crp,pcrp,py``) cluster
the same data live, one row each.

The page only arranges its parts (app_pages/explorer_parts/) and calls the library: runs are
pcrp.app.live_runs.LiveRun objects (threads, memory plan, lifetime), display summaries come from pcrp.app.live_view,
figures from pcrp.plots. Settings are declared once (pcrp.app.live_params, the prior registry, pcrp.app.explorer_settings);
their one copy lives in the session's state object (pcrp.app.page_session.ExplorerState), from which the widgets and
the URL are drawn; a run is never in the URL: it belongs to the browser that started it, whose reload finds it again
(until it is reset).
Every string a visitor supplies (file and column names, cells, address values) goes through ``inert`` before it
reaches Markdown.
"""

from app_pages.explorer_parts.controls import PageData
from app_pages.explorer_parts.data_sidebar import current_data, data_lines, data_sidebar
from app_pages.explorer_parts.details import details_section
from app_pages.explorer_parts.header import page_top
from app_pages.explorer_parts.help_text import how_to_read
from app_pages.explorer_parts.keys import keyboard_shortcuts
from app_pages.explorer_parts.live_panel import live_section
from app_pages.explorer_parts.model_sidebar import apply_pending_r, model_and_run_sidebar
from app_pages.explorer_parts.session import publish_address, settings


def page():
    """The Explorer, top to bottom."""
    S = settings()
    presentation = bool(S["present"])
    page_top(S, presentation)
    source = data_sidebar()
    ds, ds_key = current_data(S, source)
    apply_pending_r(S)  # (before the data lines: their "what to watch for" reads the pCRP row's r)
    data_lines(S, ds, ds_key, source, presentation)
    niw_choice = model_and_run_sidebar(S, ds, ds_key, source)
    publish_address()
    data = PageData(ds, ds_key, niw_choice)
    live_section(data, presentation)
    details_section()
    if not presentation:
        how_to_read()
    keyboard_shortcuts()


page()

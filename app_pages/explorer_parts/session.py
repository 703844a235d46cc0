"""The Explorer's settings for the whole session, their widgets' binding, and their mirror in the address.

Settings live in st.session_state["explorer"] for the whole session and are mirrored in the URL; a run never is: it
belongs to the browser that started it (app_pages.shared.browser_key), whose reload finds it again. The declarations
and the address's parsing are pcrp.app.explorer_settings'.

A row's tuned parameter (the pCRP's r, :attr:`pcrp.model.PriorSpec.tuned`) follows the data set (its shipped
cross-validated value) until the visitor chooses one: by the address, the widget or Choose r's "use this r".
"""

import streamlit as st

from app_pages.shared import browser_key, registry
from pcrp.app import explorer_settings as es

state = st.session_state


def settings():
    """The session's settings dict; on the session's first visit, read from the URL (validated)."""
    if "explorer" not in state:
        values = es.defaults()
        query = st.query_params.to_dict()
        parsed, problems = es.from_query(query)
        values.update(parsed)
        state.explorer = values
        state.explorer_r_set = address_tuned_keys(query, parsed, problems, values)
        state.explorer_url_problems = problems
        if "run" in st.query_params:  # an address of an older version: it grants nothing now
            state.explorer_run_in_address = True
        if state.get("run") is None:  # this browser's reload finds its own run, and only that
            state.run = registry().latest_for(browser_key())
            data_key = state.run.config.get("data_key") if state.run is not None else None
            if data_key and data_key[0] == "csv":  # ... and the file it uploaded: the run's own data
                state.csv_dataset, state.csv_key = state.run.dataset, data_key
    return state.explorer


def address_tuned_keys(query, parsed, problems, values):
    """The rows' tuned settings ("r2") that the address sets (itself or by an older key) and that were kept: the
    visitor's choice, which the data set's own value never replaces."""
    given = set(query) | {new for old, new in es.LEGACY_KEYS.items() if old in query}
    refused = {problem.split(" ", 1)[0] for problem in problems}
    keys = {es.tuned_key(values, row) for row in es.active_rows(values)} - {None}
    return {key for key in keys if key in given and key in parsed and key not in refused}


def tuned_set_by_visitor():
    """The rows' tuned settings the visitor chose (address, widget, Choose r's "use this r")."""
    return state.setdefault("explorer_r_set", set())


def tuned_origin():
    """{tuned setting: how the visitor chose it, in words; None: with the widget}."""
    return state.setdefault("explorer_r_origin", {})


def automatic_rows(values):
    """Rows whose prior has a tuned parameter the visitor has not chosen: its value follows the data set."""
    return [row for row in es.active_rows(values)
            if es.tuned_key(values, row) is not None and es.tuned_key(values, row) not in tuned_set_by_visitor()]


def address_values(values):
    """``values`` as the address shows them: an automatic tuned value (from the data set) is left out, so a reload
    or a demo link picks the data set's value again rather than fixing this one."""
    out = dict(values)
    for row in automatic_rows(values):
        key = es.tuned_key(values, row)
        out[key] = es.param_default(values, row, es.ROW_PARAMS[key][1])  # the data set's r: left out
    return out


def bind(name):
    """Widget key for setting ``name``, filled from the session's settings if the widget is new."""
    key = "w_" + name
    if key not in state:
        state[key] = settings()[name]
    return key


def number(label, name, high=None, **kwargs):
    """A number box for declared setting ``name`` with the bounds of its declaration (pcrp.app.live_params), its top
    lowered to ``high`` where given (the chains per prior that the rows' share allows)."""
    low, declared_high = es.number_bounds(name)
    high = declared_high if high is None else min(high, declared_high)
    key = bind(name)
    state[key] = min(state[key], high)
    return st.number_input(label, low, high, key=key, **kwargs)


def remember(names=None):
    """Copy the rendered widgets' values (of ``names``, default every setting) into the session's settings
    and the URL."""
    values = settings()
    for name in names if names is not None else es.BY_NAME:
        if "w_" + name in state:
            values[name] = state["w_" + name]
    query = es.to_query(address_values(values))
    if st.query_params.to_dict() != query:
        st.query_params.from_dict(query)


def say(message):
    """Queue ``message`` as a toast: callbacks may not draw, so the live panel shows it."""
    state.toast_message = message

"""The Explorer's part of this session's one state object, its widgets' binding and its mirror in the address.

The state is a :class:`pcrp.app.page_session.ExplorerState` (``page_session().explorer``), made on the session's first
visit from the address (validated by pcrp.app.explorer_settings). Its ``settings`` are the one copy of each setting:
a widget's key exists because Streamlit needs one, its value is set from the object before the widget is drawn
(:func:`bind`), and the widget's callback writes a change back into the object at once; the address is written from
the object (:func:`publish_address`). A run is never in the address: it belongs to the browser that started it
(app_pages.shared.browser_key), whose reload finds it again, unless it was reset.

A row's tuned parameter (the pCRP's r, :attr:`pcrp.model.PriorSpec.tuned`) follows the data set (its shipped
cross-validated value) until the visitor chooses one: by the address, the widget or Choose r's "use this r".
"""

import streamlit as st

from app_pages.shared import browser_key, page_session, registry
from pcrp.app import explorer_settings as es
from pcrp.app.page_session import ExplorerState

WIDGET_PREFIX = "w_"  # a setting's widget key: "w_" + its name (the tests and the browser's keys find widgets by it)


def explorer():
    """This session's :class:`ExplorerState`: made on the first visit from the URL (validated); when it has not
    looked yet (the first visit, a session that came back), it finds this browser's latest run (a reload's), unless
    that run was reset."""
    session = page_session()
    ex = session.explorer
    if ex is None:
        values = es.defaults()
        query = st.query_params.to_dict()
        parsed, problems = es.from_query(query)
        values.update(parsed)
        ex = session.explorer = ExplorerState(values, tuned_by_visitor=address_tuned_keys(query, parsed, problems,
                                                                                          values))
        ex.notices.address_problems = list(problems)
        ex.notices.run_in_address = "run" in st.query_params  # an address of an older version: it grants nothing
    if ex.find_run:
        ex.find_run = False
        if ex.run is None:  # this browser's reload finds its own run, and only that
            run = registry().latest_for(browser_key())
            if run is not None:
                ex.show(run)
                data_key = run.config.get("data_key")
                if data_key and data_key[0] == "csv":  # ... and the file it uploaded: the run's own data
                    ex.csv.dataset, ex.csv.key = run.dataset, data_key
    return ex


def settings():
    """The one copy of the session's settings, {name: value} (ExplorerState.settings)."""
    return explorer().settings


def address_tuned_keys(query, parsed, problems, values):
    """The rows' tuned settings ("r2") that the address sets (itself or by an older key) and that were kept: the
    visitor's choice, which the data set's own value never replaces."""
    given = set(query) | {new for old, new in es.LEGACY_KEYS.items() if old in query}
    refused = {problem.split(" ", 1)[0] for problem in problems}
    keys = {es.tuned_key(values, row) for row in es.active_rows(values)} - {None}
    return {key for key in keys if key in given and key in parsed and key not in refused}


def tuned_set_by_visitor():
    """The rows' tuned settings the visitor chose (address, widget, Choose r's "use this r")."""
    return explorer().tuned_by_visitor


def tuned_origin():
    """{tuned setting: how the visitor chose it, in words; None: with the widget}."""
    ex = explorer()
    if ex.tuned_origin is None:
        ex.tuned_origin = {}
    return ex.tuned_origin


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


def widget_key(name):
    return WIDGET_PREFIX + name


def _write_back(name, after, after_args):
    """A bound widget changed: its value into the one copy at once, then the widget's own callback."""
    settings()[name] = st.session_state[widget_key(name)]
    if after is not None:
        after(*after_args)


def bind(name, on_change=None, args=()):
    """The keyword arguments (key, on_change, args) that bind a widget to setting ``name``: the widget shows the
    object's value (set under its key now, before it is drawn) and its change is written into the object at once,
    then ``on_change(*args)`` runs."""
    key = widget_key(name)
    st.session_state[key] = settings()[name]
    return {"key": key, "on_change": _write_back, "args": (name, on_change, tuple(args))}


def choices(name):
    """The options of a widget of setting ``name``: its declaration's choices (pcrp.app.explorer_settings)."""
    return list(es.BY_NAME[name].choices)


def number(label, name, high=None, **kwargs):
    """A number box for declared setting ``name`` with the bounds of its declaration (pcrp.app.live_params), its top
    lowered to ``high`` where given (the chains per prior that the rows' share allows: a value above it is lowered in
    the object too, so the box and the object agree)."""
    low, declared_high = es.number_bounds(name)
    high = declared_high if high is None else min(high, declared_high)
    values = settings()
    values[name] = min(values[name], high)
    on_change, args = kwargs.pop("on_change", None), kwargs.pop("args", ())
    return st.number_input(label, low, high, **bind(name, on_change, args), **kwargs)


def publish_address():
    """Write the session's settings into the URL (only what differs from the defaults), when they changed."""
    query = es.to_query(address_values(settings()))
    if st.query_params.to_dict() != query:
        st.query_params.from_dict(query)


def say(message):
    """Queue ``message`` as a toast: callbacks may not draw, so the live panel shows it."""
    explorer().notices.toast = message

"""Explorer: two priors (CRP and pCRP by default; any of pcrp.model.PRIORS) cluster the same data live,
one above the other.

The page only arranges widgets and calls the library: runs are pcrp.app.live_runs.LiveRun objects (threads,
memory plan, lifetime), display summaries come from pcrp.app.live_view, figures from pcrp.plots.
Settings live in st.session_state["explorer"] for the whole session and are mirrored in the URL; a run
never is: it belongs to the browser that started it (app_pages.shared.browser_key), whose reload finds it
again. Every string a visitor supplies (file and column names, cells, address values) goes through
``inert`` before it reaches Markdown.
"""

import io
import json
import re
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd
import streamlit as st

from app_pages.shared import (browser_key, client_address, guarded, inert, keep_browser_key, owned_download, registry,
                               render_slot, session_owner)
from pcrp import data, plots
from pcrp.app import explorer_settings as es, live_charts, live_view
from pcrp.density import predictive_density
from pcrp.app.live_runs import (PAUSED, RELOAD_SECONDS, RUNNING, SESSION_BUDGET_BYTES, ServerBusy, contrasting_starts,
                                live_specs, new_run)
from pcrp.model import PRIORS, WITHIN_SCALE, ModelError, resolve_niw
from pcrp.posterior import summarise
from pcrp.json_text import dumps
from pcrp.projection import id_like_columns, pca_projection
from pcrp.compiling import warm_up
from pcrp.errors import SamplerError
from pcrp.collapse import judge, judge_chains, kept_clusters, live_reference
from pcrp.summary import MIN_DRAWS, chains_agree, nmi, oracle_alpha, rhat_warnings, vi

state = st.session_state
REDRAW_SECONDS = 0.5


# ----------------------------------------------------------------------------- settings
def settings():
    """The session's settings dict; on the session's first visit, read from the URL (validated)."""
    if "explorer" not in state:
        values = es.defaults()
        parsed, problems = es.from_query(st.query_params.to_dict())
        values.update(parsed)
        state.explorer = values
        state.explorer_r_set = address_r_keys(st.query_params.to_dict(), parsed)
        state.explorer_url_problems = problems
        if "run" in st.query_params:  # an address of an older version: it grants nothing now
            state.explorer_run_in_address = True
        if state.get("run") is None:  # this browser's reload finds its own run, and only that
            state.run = registry().latest_for(browser_key())
            data_key = state.run.config.get("data_key") if state.run is not None else None
            if data_key and data_key[0] == "csv":  # ... and the file it uploaded: the run's own data
                state.csv_dataset, state.csv_key = state.run.dataset, data_key
    return state.explorer


R_KEYS = {row: es.row_key("r", row) for row in es.ROWS}


def address_r_keys(query, parsed):
    """The rows' r settings ("r1", "r2") that the address sets (itself or by an older key) and that were kept:
    the visitor's choice, which the built-in r never replaces."""
    given = set(query) | ({"r2"} if "r" in query else set())
    widget = es.param_widget("pcrp", "r")
    return {key for key in R_KEYS.values()
            if key in given and key in parsed and widget.low <= parsed[key] <= widget.high}


def r_set_by_visitor():
    """The rows' r settings the visitor chose (address, widget, Choose r's "use this r")."""
    return state.setdefault("explorer_r_set", set())


def automatic_r_rows(values):
    """Rows whose prior is the pCRP and whose r the visitor has not chosen: their r follows the data set."""
    return [row for row in es.ROWS
            if values[es.prior_key(row)] == "pcrp" and R_KEYS[row] not in r_set_by_visitor()]


def address_values(values):
    """``values`` as the address shows them: an automatic r (from the data set) is left out, so a reload or
    a demo link picks the data set's r again rather than fixing this one."""
    out = dict(values)
    for row in automatic_r_rows(values):
        out[R_KEYS[row]] = es.param_widget("pcrp", "r").default
    return out


def bind(name):
    """Widget key for setting ``name``, filled from the session's settings if the widget is new."""
    key = "w_" + name
    if key not in state:
        state[key] = settings()[name]
    return key


def number(label, name, **kwargs):
    """A number box for setting ``name`` with the bounds of its explorer_settings entry (declared once)."""
    setting = es.BY_NAME[name]
    return st.number_input(label, setting.low, setting.high, key=bind(name), **kwargs)


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


# Presentation mode (?present=1, or the Present toggle): no sidebar, header or chart toolbars, every text
# larger (status text 20 px), charts sized so both rows fit a 1280 x 800 projector without scrolling.
PRESENT_CSS = """<style>
section[data-testid='stSidebar'], [data-testid='stSidebarCollapsedControl'], header[data-testid='stHeader'],
[data-testid='stElementToolbar'], [data-testid='stToolbar'] {display: none !important;}
[data-testid='stMainBlockContainer'] {padding: 0.6rem 1.5rem 0.5rem 1.5rem !important; max-width: 100% !important;}
[data-testid='stMainBlockContainer'] h1 {font-size: 1.9rem; padding: 0 0 0.2rem 0;}
[data-testid='stMainBlockContainer'] p, [data-testid='stMainBlockContainer'] li,
[data-testid='stMainBlockContainer'] button, [data-testid='stCaptionContainer'] {font-size: 20px !important;}
[data-testid='stMainBlockContainer'] [data-testid='stVerticalBlock'] {gap: 0.35rem;}
</style>"""


def page_top(S, presentation):
    """Styles, the title, and notes about the address or a run the server no longer keeps."""
    # The live charts have no toolbar (fullscreen, export): four tab stops per chart, 24 in all, before the buttons.
    st.html("<style>div:has(> [data-testid='stVegaLiteChart']) > [data-testid='stElementToolbar'] "
            "{display: none !important;}</style>")
    if presentation:
        st.html(PRESENT_CSS)
    if state.get("run") is not None and state.run.discarded:  # this tab was away longer than the server keeps runs
        state.run = None
        state.explorer_missing_run = True
    st.title(f"{PRIORS[S['prior1']].label} vs {PRIORS[S['prior2']].label}, live"
             + (f" · {(es.SOURCE_LABELS[S['data']] if S['data'] != 'csv' else 'your data')}" if presentation else ""))
    for problem in state.pop("explorer_url_problems", []):
        st.warning(f"Ignored a setting in the address bar: {inert(problem)}.")
    if state.pop("explorer_run_in_address", False):
        st.info("Addresses no longer name runs: a run is shown only in the browser that started it. This page "
                "starts with the settings of the address; press **Start** to run them.")
    if state.pop("explorer_missing_run", False):
        st.info(f"Your run is no longer kept on this server (a run is kept for {RELOAD_SECONDS:.0f} s after its "
                "page closes, so that a reload finds it). Press **Start** to run again.")




# ----------------------------------------------------------------------------- data
# One line per built-in data set, for the default pair CRP over pCRP at the pCRP row's shipped r (figures:
# bench/default_demo.py with the candidates (old-faithful, 1.7), (sim2, 1.2) and (sim1, 1.1), 2,000 sweeps = 20 s
# at 100 sweeps/s, seeds 0-3, k-means start: Old Faithful CRP more coloured clusters in 62% of sweeps (58% at
# r = 1.1), Sim 2 tiny clusters CRP 1.32, pCRP 0.37 (2026-12-04); MNIST: DESIGN.md's 2 chains of 2,000 sweeps at
# r = 1.1).
WATCH_FOR = {
    "old-faithful": "two eruption types. The CRP keeps opening extra clusters beside them (grey = tiny); in the "
                    "first 20 s it shows more coloured clusters than the pCRP in about 6 sweeps of 10.",
    "sim1": "three true clusters, one narrow and one wide. The CRP splits them into about 5 clusters; the pCRP at "
            "r = 1.1 keeps about 3 + 1 tiny. Raise r to 1.3 and the pCRP merges two true clusters (its row says "
            "which).",
    "sim2": "three equal, well-separated clusters. Both rows find them; the CRP adds about 1.3 tiny clusters in "
            "the tails at any moment, the pCRP at r = 1.2 about a quarter as many.",
    "mnist": "handwritten digits in a low-dimensional embedding. The CRP splits digits into styles (about 7.5 clusters for digits 1-4), "
             "the pCRP at r = 1.1, the cross-validated r its row starts at, about 6.5; NMI compares each with "
             "the true digits.",
}
@st.cache_data(max_entries=16, show_spinner=False)
def builtin_dataset(source, sim_n, sim_seed, digits, mnist_n, embedding, dims):
    """A built-in data set: a pure function of its settings, shared by all sessions (bounded)."""
    if source == "old-faithful":
        return data.old_faithful()
    if source == "mnist":
        return data.mnist(digits=list(digits), n=mnist_n, embedding=embedding, dims=dims, seed=0)
    return data.simulation(source, n=sim_n, seed=sim_seed)


def builtin_key(values):
    source = values["data"]
    if source == "mnist":
        return (source, tuple(values["digits"]), values["mnist_n"], values["embedding"], values["dims"])
    if source in ("sim1", "sim2"):
        return (source, values["sim_n"], values["sim_seed"])
    return (source,)

def data_sidebar():
    """The sidebar's data widgets (a CSV's upload and column choices included); returns the chosen source."""
    with st.sidebar:
        st.header("Data")
        st.selectbox("Data set", es.SOURCES, format_func=es.SOURCE_LABELS.get, key=bind("data"))
        source = state["w_data"]
        if source == "mnist":
            st.multiselect("Digits", list(range(10)), key=bind("digits"))
            number("N (bundled file: 500 per digit)", "mnist_n", step=50)
            st.selectbox("Embedding", ["spectral", "pca"], key=bind("embedding"))
            number("Dimensions", "dims")
        if source in ("sim1", "sim2"):
            number("N", "sim_n", step=50)
            number("Data seed", "sim_seed")
        remember()
        if source == "csv":
            st.caption(f"Limits: {data.APP_MAX_BYTES // 2**20} MiB, {data.APP_MAX_ROWS:,} rows, "
                       f"{data.MAX_CLUSTER_COLUMNS} columns clustered.")
            upload = st.file_uploader("CSV file (numeric columns; a header row names them)", type=["csv", "txt", "tsv"],
                                      key="upload")
            if upload is not None:
                table = None
                try:
                    table = data.read_csv_table(upload.getvalue(), max_rows=data.APP_MAX_ROWS,
                                                 max_bytes=data.APP_MAX_BYTES)
                except data.DataError as err:
                    st.error(f"{inert(upload.name)}: {inert(err)}")
                if table is not None:
                    fid = upload.file_id  # fresh column widgets for every new file
                    guessed = data.guess_label_column(table)
                    label_col = st.selectbox("True labels (optional)", ["(none)"] + table.header,
                                             index=0 if guessed is None else 1 + table.header.index(guessed),
                                             key=f"csv_label_{fid}",
                                             help="Preselected when a column obviously holds class labels (integer "
                                                  "codes or text with few values, named like class, label, species).")
                    if guessed is not None and label_col == guessed:
                        st.caption(f"{inert(repr(guessed))} looks like class labels: used for NMI / VI, not clustered.")
                    label = None if label_col == "(none)" else label_col
                    usable, notes = data.default_columns(table, label)
                    notes = table.notes + notes  # (e.g. no header found: columns named x1..xd)
                    ids = id_like_columns({c: table.numeric[c] for c in usable})
                    usable = [c for c in usable if c not in ids]
                    notes += [f"Column {c!r} was not clustered: {why}, like an identifier. Add it under Columns to "
                              "cluster to use it." for c, why in ids.items()]
                    cols = st.multiselect("Columns to cluster", [c for c in table.header if c != label],
                                          default=usable[: data.MAX_CLUSTER_COLUMNS], key=f"csv_columns_{fid}")
                    for note in notes:
                        st.caption(f"Note: {inert(note)}")
                    standardise = st.checkbox("Standardise columns", True, key=f"csv_standardise_{fid}")
                    if st.button("Use this CSV", key="use_csv"):
                        try:
                            state.csv_dataset = data.dataset_from_table(
                                table, columns=cols, label_column=label, standardize_data=standardise, name=upload.name)
                            state.csv_key = ("csv", upload.name, fid, tuple(cols), label, standardise)
                            st.toast(f"Using {inert(upload.name)}: {state.csv_dataset.n} rows.")
                        except data.DataError as err:
                            st.error(f"{inert(upload.name)}: {inert(err)}")
    return source


def current_data(S, source):
    """(data set or None, its key) for the chosen source: a built-in one (cached for all sessions) or the
    CSV this session chose with "Use this CSV"."""
    if source == "csv":
        ds, ds_key = state.get("csv_dataset"), state.get("csv_key")
    else:
        ds, ds_key = None, builtin_key(S)
        try:
            with st.spinner("Loading data…"):
                ds = builtin_dataset(S["data"], S["sim_n"], S["sim_seed"], tuple(S["digits"]), S["mnist_n"],
                                     S["embedding"], S["dims"])
        except data.DataError as err:
            st.error(inert(err))
    state.dataset = ds  # the Choose r page clusters the same data
    return ds, ds_key


def data_lines(S, ds, source, presentation):
    """What the data are, their notes and what to watch for (one line per built-in data set)."""
    if ds is None:
        st.info("Upload a CSV file in the sidebar and press **Use this CSV** to begin." if source == "csv"
                else "Choose a data set in the sidebar to begin.")
    elif not presentation:
        st.caption(f"**Data:** {inert(ds.description)} N = {ds.n}, d = {ds.dim}"
                   f"{', standardised' if ds.standardized else ''}"
                   f"{f', {ds.true_k} true classes' if ds.labels is not None else ''}.")
        for note in ds.notes:
            st.caption(f"Note: {inert(note)}")
    if ds is not None and (S["prior1"], S["prior2"]) == ("crp", "pcrp") and S["data"] in WATCH_FOR:
        st.markdown(f"**What to watch for:** {WATCH_FOR[S['data']]}")



# ----------------------------------------------------------------------------- model and run settings
ROW_NAMES = {1: "Top row", 2: "Bottom row"}
SYMBOLS = {"alpha": "α", "sigma": "σ", "gamma": "γ", "lam": "λ"}  # how a parameter name is printed


def on_prior_change(row):
    """A row's prior changed: its parameters start from the new prior's defaults."""
    values = settings()
    values[es.prior_key(row)] = state["w_" + es.prior_key(row)]
    es.reset_row(values, row)
    r_set_by_visitor().discard(R_KEYS[row])  # a new pCRP row starts from the data set's r
    r_set_by_visitor_origin().pop(R_KEYS[row], None)
    for name in es.row_param_names(values, row):
        state["w_" + es.row_key(name, row)] = values[es.row_key(name, row)]


def on_r_change(row):
    """The visitor moved a row's r: theirs from now on (the data set's r no longer replaces it)."""
    r_set_by_visitor().add(R_KEYS[row])
    r_set_by_visitor_origin()[R_KEYS[row]] = None  # said with the data set's own r (see r_caption)


def builtin_r_matches(name, values):
    """Whether the data settings in ``values`` are those the built-in r of data set ``name`` was chosen on."""
    from pcrp.cv import builtin_r_table

    chosen = builtin_r_table()[name]["data"]
    if name in ("sim1", "sim2"):
        return (values["sim_n"], values["sim_seed"]) == (chosen["n"], chosen["seed"])
    if name == "mnist":
        return (list(values["digits"]), values["mnist_n"], values["embedding"], values["dims"]) == (
            list(chosen["digits"]), chosen["n"], chosen["embedding"], chosen["dims"])
    return True


def r_origin(values):
    """(r, one short line, the full provenance) of the r a pCRP row gets when the visitor has not chosen one:
    the cross-validated r shipped for a built-in data set, or pcrp's default for a CSV (pcrp.cv.builtin_r)."""
    from pcrp.cv import builtin_r, builtin_r_table

    name = values["data"]
    r, provenance = builtin_r(name if name != "csv" else None)
    if name == "csv":
        return r, f"r = {r:g}: a default, not chosen for your data; the **Choose r** page chooses one.", provenance
    if builtin_r_matches(name, values):
        return r, f"r = {r:g}: cross-validated for these data.", provenance
    chosen = builtin_r_table()[name]["data"]
    where = (f"N = {chosen['n']}, seed {chosen['seed']}" if name in ("sim1", "sim2") else "its default settings")
    return r, f"r = {r:g}: cross-validated for {es.SOURCE_LABELS[name]} at {where}.", provenance


def r_caption(row):
    """One line under a pCRP row's r: where its r came from (full provenance in the help)."""
    S = settings()
    r, line, provenance = r_origin(S)
    if R_KEYS[row] not in r_set_by_visitor():
        st.caption(line, help=provenance)
        return
    origin = r_set_by_visitor_origin().get(R_KEYS[row])
    if origin is None:  # moved with the widget
        origin = (f"Your r (pcrp's default is {r:g}; Choose r picks one for your data)." if S["data"] == "csv"
                  else f"Your r (cross-validated for {es.SOURCE_LABELS[S['data']]}: {r:g}).")
    st.caption(origin, help=provenance)


def r_set_by_visitor_origin():
    """{r setting: how the visitor chose it, in words; None: with the widget}."""
    return state.setdefault("explorer_r_origin", {})


def prior_widgets(row):
    """The prior of one row and its parameters' widgets, all generated from the pcrp.model.PRIORS registry."""
    st.selectbox(f"{ROW_NAMES[row]}: prior", tuple(PRIORS), format_func=lambda name: PRIORS[name].label,
                 key=bind(es.prior_key(row)), on_change=on_prior_change, args=(row,),
                 help=" · ".join(f"{spec.label}: {spec.help}" for spec in PRIORS.values()))
    prior = state["w_" + es.prior_key(row)]
    settings()[es.prior_key(row)] = prior
    for w in es.prior_widgets(prior):
        key = bind(es.row_key(w.name, row))
        state[key] = min(max(state[key], w.low), w.high)  # a value another prior allowed
        label = f"{PRIORS[prior].label} {w.label}"
        if w.slider_step:
            st.slider(label, float(w.low), float(w.high), step=w.slider_step, key=key, help=w.help,
                      on_change=on_r_change if w.name == "r" else None, args=(row,) if w.name == "r" else None)
            if w.name == "r" and prior == "pcrp":
                r_caption(row)
        elif w.integer:
            state[key] = int(state[key])
            st.number_input(label, int(w.low), int(w.high), step=1, key=key, help=w.help)
        else:
            state[key] = float(state[key])
            st.number_input(label, float(w.low), float(w.high), step=0.05 if w.high <= 1 else 0.1,
                            format="%.3f", key=key, help=w.help)


def on_oracle(ds):
    """Every CRP row's alpha = K_true / ln N (the paper's CRP-Oracle), for the data set ``ds``."""
    S = settings()
    value = round(oracle_alpha(ds.true_k, ds.n), 3)
    for row in es.ROWS:
        if S[es.prior_key(row)] == "crp":
            state["w_" + es.row_key("alpha", row)] = settings()[es.row_key("alpha", row)] = value
    say(f"CRP alpha set to K_true / ln N = {ds.true_k} / ln {ds.n} = {value:g}.")

def apply_pending_r(S):
    """An r sent by the Choose r page, and each automatic pCRP row's r (the data set's own)."""
    if "pending_r" in state:  # sent by the "Choose r" page: every pCRP row takes it (the bottom row becomes one)
        r_value = float(np.clip(state.pop("pending_r"), es.BY_NAME["r2"].low, es.BY_NAME["r2"].high))
        rows = [row for row in es.ROWS if S[es.prior_key(row)] == "pcrp"] or [es.ROWS[-1]]
        for row in rows:
            if S[es.prior_key(row)] != "pcrp":
                S[es.prior_key(row)] = state["w_" + es.prior_key(row)] = "pcrp"
                es.reset_row(S, row)
                for name in es.row_param_names(S, row):
                    state["w_" + es.row_key(name, row)] = S[es.row_key(name, row)]
            S[es.row_key("r", row)] = state["w_" + es.row_key("r", row)] = r_value
            r_set_by_visitor().add(R_KEYS[row])
            r_set_by_visitor_origin()[R_KEYS[row]] = f"r = {r_value:g} from Choose r's cross validation."
        st.toast(f"pCRP power set to r = {r_value:g} from cross validation.")

    if "explorer_r_origin" not in state:
        r_set_by_visitor_origin().update({key: "r from the address." for key in r_set_by_visitor()})
    for row in automatic_r_rows(S):  # no silent default: the data set's own r, said under the widget
        r_auto = float(np.clip(r_origin(S)[0], es.BY_NAME[R_KEYS[row]].low, es.BY_NAME[R_KEYS[row]].high))
        S[R_KEYS[row]] = state["w_" + R_KEYS[row]] = r_auto


def model_and_run_sidebar(S, ds, ds_key, source):
    """The sidebar's prior, NIW and run widgets and the demo link; returns the NIW choice {name: value}."""
    with st.sidebar:
        st.header("Model")
        for row in es.ROWS:
            prior_widgets(row)
        if ds is not None and ds.labels is not None and any(S[es.prior_key(row)] == "crp" for row in es.ROWS):
            st.button("CRP-Oracle alpha = K_true / ln N", key="oracle", on_click=on_oracle, args=(ds,))
        remember([es.prior_key(row) for row in es.ROWS]
                 + [es.row_key(name, row) for row in es.ROWS for name in es.row_param_names(S, row)])
        niw_choice = {}
        if ds is not None:
            default = resolve_niw(ds.X)
            with st.expander("NIW prior (defaults from the data)"):
                st.caption("mu_k | Sigma_k ~ N(m0, Sigma_k / kappa0), Sigma_k ~ IW(S0, nu0). "
                           f"m0 = column means; kappa0 = {WITHIN_SCALE**2:g}; nu0 = d + 3; S0 = s * I. "
                           "Larger S0 = broader clusters a priori = fewer clusters; smaller kappa0 = means expected "
                           "far apart = fewer clusters.")
                niw_choice["kappa0"] = st.number_input("kappa0: strength of m0, in points", 1e-4, 1e4,
                                                       float(default.kappa0), format="%.4f", key=f"kappa0_{ds_key}")
                niw_choice["nu0"] = st.number_input(f"nu0: degrees of freedom (> d - 1 = {ds.dim - 1})",
                                                    float(ds.dim - 1) + 0.01, 1e4, float(default.nu0),
                                                    key=f"nu0_{ds_key}")
                niw_choice["S0"] = st.number_input("S0 = s * identity, s =", 1e-6, 1e6, float(default.S0[0, 0]),
                                                   format="%.4f", key=f"s0_{ds_key}")
        st.header("Run")
        number("Sweeps", "sweeps", step=100)
        number("Burn-in", "burn_in", step=100)
        number("Thin", "thin")
        number("Seed", "seed")
        st.checkbox("Split-merge moves", key=bind("split_merge"),
                    help="Off = the paper's plain Gibbs; pCRP chains then tend to stay where they start.")
        st.selectbox("Start", es.STARTS, key=bind("start"))
        number("Chains per prior", "chains",
               help="The first starts as chosen above; the others from unlike starts (one cluster, random "
                    "clusters, k-means). When they disagree (R-hat above 1.01), the result depends on the start.")
        remember()
        with st.popover("Copy demo link"):
            st.caption("These settings as an address (copy button at its right). Whoever opens it gets a page of "
                       "their own with these settings, never your run or your data"
                       + (": an uploaded CSV must be uploaded again." if source == "csv" else "."))
            st.code(es.demo_link(st.context.url, address_values(settings())), language=None, wrap_lines=True)
        keep_browser_key()
    return niw_choice


def current_config(data):
    """The settings a Start press would use now (for comparing with the shown run): the data (a PageData),
    each row's prior and its parameters, the run settings and the NIW choice."""
    S = settings()
    config = {"data_key": data.key, "niw_choice": {k: float(v) for k, v in data.niw_choice.items()}}
    config.update({key: S[name] for name, key in es.RUN_SETTINGS.items()})
    for row in es.ROWS:
        config[es.prior_key(row)] = S[es.prior_key(row)]
        config.update({es.row_key(name, row): value for name, value in es.row_params(S, row).items()})
    return config


def changed_since(cfg, now):
    """Names (in the widgets' words) of the settings in which ``now`` (current_config) differs from the
    run's ``cfg``; a row whose prior changed is named once, not with each of its parameters."""
    words = {"data_key": "data", "niw_choice": "NIW prior",
             **{key: es.BY_NAME[name].label for name, key in es.RUN_SETTINGS.items()},
             **{es.prior_key(row): f"{ROW_NAMES[row].lower()}'s prior" for row in es.ROWS}}
    names = []
    for key, value in now.items():
        if cfg.get(key) == value:
            continue
        if key in es.ROW_PARAMS:
            row, name = es.ROW_PARAMS[key]
            if cfg.get(es.prior_key(row)) == now[es.prior_key(row)]:
                names.append(f"{PRIORS[now[es.prior_key(row)]].label} {name}")
        else:
            names.append(words[key])
    if "data" in names and "NIW prior" in names:
        names.remove("NIW prior")  # its defaults follow the data
    if "data" in names:  # ... and so does an r the visitor has not chosen (the data set's own)
        for row in automatic_r_rows(settings()):
            if cfg.get(es.prior_key(row)) == now[es.prior_key(row)] and f"{PRIORS['pcrp'].label} r" in names:
                names.remove(f"{PRIORS['pcrp'].label} r")
    return names


def row_priors():
    """{group name: prior} of the two rows: the prior's label, or its label with parameters (and the row)
    when both rows pick the same prior."""
    S = settings()
    priors = es.check_rows(S)
    labels = {row: PRIORS[S[es.prior_key(row)]].label for row in es.ROWS}
    if labels[1] == labels[2]:
        labels = {row: priors[row].label() for row in es.ROWS}
        if labels[1] == labels[2]:
            labels = {row: f"{labels[row]} {ROW_NAMES[row].lower()}" for row in es.ROWS}
    return {labels[row]: priors[row] for row in es.ROWS}


def in_page_words(message):
    """A library message in the words of this page's widgets (the library says iters and burn_in)."""
    return re.sub(r"\biters\b", "sweeps", message).replace("burn_in", "burn-in")


def start_run(data):
    """Build, register and start a run on ``data`` (a PageData) with the current settings; returns an error
    message or None."""
    ds, S = data.dataset, settings()
    if ds is None:
        return "Load a data set first."
    try:
        niw = resolve_niw(ds.X, **data.niw_choice)
        priors = row_priors()
        config = {**current_config(data), "data": ds.description, "source": ds.source, "columns": ds.columns,
                  "standardized": ds.standardized, "niw": niw.as_dict(),
                  "priors": {k: p.params() for k, p in priors.items()}}
        specs = live_specs(ds, priors, niw, iters=S["sweeps"], burn_in=S["burn_in"], thin=S["thin"], seed=S["seed"],
                           inits=contrasting_starts(S["start"], S["chains"]), split_merge=S["split_merge"])
        with st.spinner("Preparing the sampler (compiling on first use)…"):
            warm_up()
            import arviz  # noqa: F401  (seconds on first import: here, not in the middle of the live view)

            run = new_run(ds, specs, config=config)
        run.browser, run.address = browser_key(), client_address()
        registry().add(run, replacing=state.get("run"))  # this tab's previous run is stopped below
    except (ModelError, SamplerError, ServerBusy) as err:
        return in_page_words(str(err))
    old = state.get("run")
    if old is not None:
        old.stop("a new run was started")
    session_owner().adopt(run)
    run.set_pace(es.PACES[S["pace"]])
    run.start()
    state.run = run
    state.pop("scrub", None)
    return None


# ----------------------------------------------------------------------------- controls
# Buttons act in on_click callbacks, which run before the page is drawn again: the buttons below
# then show the new state (Pause disabled once paused, and so on). Callbacks may not draw, so their
# feedback is queued and shown as a toast by the live panel.
def say(message):
    state.toast_message = message


def on_start(data):
    error = start_run(data)
    if error:
        state.start_error = error
    else:
        S = settings()
        say(f"Started {' and '.join(state.run.groups)} on {data.dataset.name}, {S['chains']} chain(s) each: "
            f"{S['sweeps']:,} sweeps at {S['pace']}.")
    state.app_rerun = True  # polling starts with a full redraw


def on_pause():
    run = state.get("run")
    if run is not None:
        run.pause()  # returns once every chain has recorded its last call: the page shows where they stopped
        say("Paused: " + ", ".join(f"{group} at sweep {min(run.chains[n].done for n in names):,}"
                                   for group, names in run.groups.items()) + ".")


def on_resume():
    run = state.get("run")
    if run is not None:
        try:
            registry().readmit(run)  # a run reclaimed while nobody watched it needs room in the pool again
        except ServerBusy as err:
            state.start_error = str(err)
            return
        say("Resumed.")


def on_step():
    run = state.get("run")
    if run is not None and any(run.step_once()):  # returns once the sweep is recorded
        say("One sweep: " + ", ".join(f"{group} at sweep {min(run.chains[n].done for n in names):,}"
                                      for group, names in run.groups.items()) + ".")


def on_stop():
    run = state.get("run")
    if run is not None:
        run.stop("you pressed Stop")
        say("Stopped; the results so far stay on the page.")
    # no full redraw here: the live panel shows "stopped" first and then redraws the page (see its end)


def on_present():
    settings()["present"] = state["w_present"]
    state.app_rerun = True  # the whole page changes (sidebar, fonts, chart sizes)


def on_reset():
    run = state.pop("run", None)
    if run is not None:
        run.stop("you pressed Reset")
    say("Cleared.")
    state.app_rerun = True  # the details and notes below the live panel go too


def controls(run, data):
    """Start / Pause / Resume / One sweep / Stop / Reset, each enabled only where it does something (Start
    runs the settings on ``data``, a PageData)."""
    states = set(run.states.values()) if run is not None else set()
    running, paused = RUNNING in states, PAUSED in states
    # no tooltips here: after a click they covered the text under the buttons (keys: see keyboard_shortcuts)
    b = st.columns([1, 1, 1.15, 1.4, 1, 1, 2.6, 1.3], vertical_alignment="center")
    b[0].button("Start", type="primary", key="start", disabled=data.dataset is None, on_click=on_start,
                args=(data,))
    b[1].button("Pause", key="pause", disabled=not running, on_click=on_pause)
    b[2].button("Resume", key="resume", disabled=not paused, on_click=on_resume)
    b[3].button("One sweep", key="step", disabled=not paused, on_click=on_step)
    b[4].button("Stop", key="stop", disabled=not (running or paused), on_click=on_stop)
    b[5].button("Reset", key="reset", disabled=run is None, on_click=on_reset)
    b[6].select_slider("Pace", options=list(es.PACES), key=bind("pace"), label_visibility="collapsed")
    b[7].toggle("Present", key=bind("present"), on_change=on_present)
    remember(("pace", "present"))  # in the live fragment: its own widgets only
    if "start_error" in state:
        st.error(state.pop("start_error"))  # the library's own words about the settings: no visitor text
    if "toast_message" in state:
        st.toast(state.pop("toast_message"))


# ----------------------------------------------------------------------------- the live panel
def run_prior(run, group):
    """The seating prior (pcrp.model) of one group of a run: that of its first chain."""
    return run.chains[run.groups[group][0]].prior


def chain_label(run, name):
    """A row's heading: its group name and its prior's parameters ("CRP (α = 1)", "pCRP (α = 1, r = 1.1)")."""
    params = dict(run.config["priors"][name])
    prior = params.pop("prior")
    shown = ", ".join(f"{SYMBOLS.get(k, k)} = {v:g}" for k, v in params.items())
    head = name if name.startswith(PRIORS[prior].label) else f"{name}: {PRIORS[prior].label}"
    return head if "(" in name else f"{head} ({shown})"


def group_status(group, snaps):
    """One line for a prior's chains: state, progress (the slowest chain), wall-clock speed, time left,
    and why they stopped."""
    first = snaps[0]
    done = min(s.sweeps_done for s in snaps)
    states = {s.state for s in snaps}
    state_word = first.state if len(states) == 1 else "/".join(sorted(states))
    text = f"**{group}** {state_word}: {done:,} / {first.total_sweeps:,} sweeps"
    if len(snaps) > 1:
        text += f" ({len(snaps)} chains)"
    rates = [s.sweeps_per_second for s in snaps if s.state == RUNNING and s.sweeps_per_second > 0]
    if rates:
        text += f", {min(rates):,.0f}/s"
        left = max((s.seconds_left for s in snaps if np.isfinite(s.seconds_left)), default=float("nan"))
        if np.isfinite(left):
            text += f", about {left:,.0f} s left"
    reasons = {s.stop_reason for s in snaps if s.stop_reason}
    if reasons:
        text += f" (stopped because {'; '.join(sorted(reasons))})"
    errors = {s.error for s in snaps if s.error}
    if errors:
        text += f" (failed: {'; '.join(sorted(errors))})"
    return text


def metrics_text(run, snaps):
    """Mean and max K after burn-in pooled over the prior's chains, NMI now (first chain)."""
    first = snaps[0]
    parts = []
    after = [s.K[run.plan.burn_in:] for s in snaps]
    if all(a.size for a in after):
        pooled = np.concatenate(after)
        parts.append(f"mean K {pooled.mean():.2f} (max {pooled.max()}) after burn-in")
    else:
        parts.append("in burn-in")
    if run.dataset.labels is not None:
        parts.append(f"NMI now {nmi(run.dataset.labels, first.labels):.2f}")
    return " · ".join(parts)


RHAT_EVERY_SECONDS = 2.0


def rhat_badge(run, group):
    """R-hat of K and of the log joint over the prior's chains, as a short coloured text (recomputed at
    most every RHAT_EVERY_SECONDS while the chains run)."""
    if len(run.groups[group]) < 2:
        return ""
    cache = state.setdefault("rhat_cache", {})
    key = (run.token, group)
    now = time.monotonic()
    if key not in cache or (run.running and now - cache[key][0] > RHAT_EVERY_SECONDS) or \
            (not run.running and cache[key][2]):
        chain_set = run.chain_set(group)
        value = None
        if chain_set is not None and chain_set.n_kept >= MIN_DRAWS:
            diag = chain_set.diagnostics()
            value = (diag["K"]["rhat"], diag["log_joint"]["rhat"],
                     chains_agree(diag["K"]) and chains_agree(diag["log_joint"]))
        cache[key] = (now, value, run.running)
    value = cache[key][1]
    if value is None:
        return "R-hat after a few kept draws"
    worst = max((v for v in value[:2] if v is not None and np.isfinite(v)), default=float("nan"))
    text = f"R-hat {worst:.3f}" if np.isfinite(worst) else "R-hat undefined"  # the worse of K's and the log joint's
    return f":green[{text}: chains agree]" if value[2] else f":orange[{text}: chains disagree]"


TINY_WORDS = f"grey = tiny, < {live_view.TINY_SHARE:.0%} of points"
MARKDOWN_COLOURS = ("blue", "red", "green", "violet")  # the priors' colours, as Streamlit markdown names
CHART_COLUMNS = [2.3, 1.05, 1.6]  # trace | posterior of K | clusters


def column_headers(run, presentation):
    """What each column of charts shows, once above the rows (larger text for a projector)."""
    several = any(len(names) > 1 for names in run.groups.values())
    texts = ("**trace of K**" + (" (dashed: other chains)" if several else "") + ", grey = burn-in",
             "**posterior of K**" + (", all chains" if several else ""),
             f"**density now**, {TINY_WORDS}" if run.dataset.dim == 1
             else f"**{'PCA view' if run.dataset.dim > 2 else 'clusters now'}**, {TINY_WORDS}")
    for col, text in zip(st.columns(CHART_COLUMNS), texts):
        if presentation:
            col.markdown(text)
        else:
            col.caption(text)


def view_coordinates(run):
    """The coordinates "clusters now" draws, (N, 1 or 2), and their axis titles: the data's columns for d <= 2,
    else the first two principal components of the standardised data (fixed for the run, computed once)."""
    ds_run = run.dataset
    if ds_run.dim <= 2:
        return ds_run.X, tuple(ds_run.columns)
    kept = state.get("view_projection")
    if kept is None or kept[0] != run.token:
        state.view_projection = kept = (run.token, pca_projection(ds_run.X))
    return kept[1].coords, kept[1].titles


def row_labels(snaps, replay_index):
    """The partition a row shows (the first chain now, or at the replayed sweep) and the replayed sweep."""
    first = snaps[0]
    if replay_index is not None and replay_index < len(first.replay):
        return first.replay[replay_index], int(first.replay_sweeps[replay_index])
    return first.labels, None


def row_colours(run, shown):
    """{group: (N,) colour index per point} of the partitions ``shown`` {group: labels}: matched to the true
    classes when the data have them, else to the top row's colours at the previous redraw (so colours stay
    put from one redraw to the next and mean the same cluster in both rows)."""
    if run.dataset.labels is not None:
        reference = live_view.reference_colours(run.dataset.labels)
    else:
        kept = state.get("colour_reference")
        first = next(iter(shown.values()))
        reference = kept[1] if kept is not None and kept[0] == run.token else live_view.reference_colours(first)
    colours = {group: live_view.matched_colours(labels, reference) for group, labels in shown.items()}
    if run.dataset.labels is None:
        state.colour_reference = (run.token, colours[next(iter(shown))])
    return colours


COLOUR_NAMES = ("blue", "orange", "green", "red", "purple", "brown", "pink", "grey", "olive", "cyan")  # PALETTE


def merge_notes(run, shown):
    """{group: text} for each row that merges true classes which another row keeps apart (by the partitions
    shown), naming the classes by their colours ("merges true green + blue"); empty without true labels."""
    truth = run.dataset.labels
    if truth is None:
        return {}
    reference = live_view.reference_colours(truth)
    merged = {group: live_view.merged_true_clusters(truth, labels) for group, labels in shown.items()}
    notes = {}
    for group, groups in merged.items():
        others = [g for g in merged if g != group and not merged[g]]
        if groups and others:
            names = [" + ".join(sorted(COLOUR_NAMES[int(reference[truth == c][0]) % len(COLOUR_NAMES)]
                                       for c in classes)) for classes in groups]
            notes[group] = (f":orange[**merges true {' and '.join(names)}**], which {' and '.join(others)} "
                            "keeps apart")
    return notes


def crp_group(run):
    """The run's CRP row (the first whose prior is the CRP), or None."""
    return next((g for g in run.groups if run.config["priors"][g]["prior"] == "crp"), None)


REFERENCE_FRAMES = 50  # the CRP row's latest replay frames after burn-in that the live collapse note reads


def live_crp_reference(run, crp_snaps):
    """The clusters the CRP row keeps so far: pcrp.collapse.live_reference of its first chain's latest replay frames
    after burn-in (and its partition now); None before the burn-in ends. Cached per run and frame count: it
    changes only when a frame is added."""
    first = crp_snaps[0]
    after = [frame for frame, sweep in zip(first.replay, first.replay_sweeps) if sweep > run.plan.burn_in]
    if not after:
        return None
    key = (run.token, len(after), run.live)
    cached = state.get("live_crp_reference")
    if cached is not None and cached[0] == key:
        return cached[1]
    reference = live_reference(np.stack(after[-REFERENCE_FRAMES:] + [first.labels]))
    state.live_crp_reference = (key, reference)
    return reference


def collapse_notes(run, groups):
    """{group: text} for each pCRP row that has collapsed below the clusters the CRP row keeps on the same data
    (pcrp.collapse: a chain's mean K after burn-in more than half a cluster below the clusters of the point
    estimate of the CRP row's latest frames, :func:`live_crp_reference`, counting clusters of at least 2% of the
    points); empty without a CRP row or before the burn-in ends. Disagreeing chains are the R-hat badge's to say."""
    crp = crp_group(run)
    if crp is None:
        return {}
    reference = live_crp_reference(run, groups[crp])
    if reference is None:
        return {}
    notes = {}
    for group, snaps in groups.items():
        after = [s.K[run.plan.burn_in:] for s in snaps]
        if run.config["priors"][group]["prior"] != "pcrp" or not all(a.size for a in after):
            continue
        verdict = judge([a.mean() for a in after], reference=reference, reference_name="the CRP row")
        if verdict.collapsed:
            notes[group] = f":red[**COLLAPSED** below the CRP's {reference} clusters]"
    return notes


PRESENT_CHART_HEIGHT = 198  # px per row (the bottom row adds its axis): both rows fit 1280 x 800
NORMAL_CHART_HEIGHT = 138  # ... with the sidebar collapsed and the data and "what to watch for" lines above


def prior_row(run, index, group, snaps, replay_index, k_max, presentation, last, colours, note=""):
    """One prior: a heading with its figures, then trace (every chain) | posterior of K (pooled) | clusters
    (the first chain now). Vega-Lite charts whose specifications stay the same between redraws, so only
    their data are sent again. Rows share their x axes; only the last row labels them."""
    ds_run, plan = run.dataset, run.plan
    colour = live_charts.CHAIN_COLOURS[index % len(live_charts.CHAIN_COLOURS)]
    height = (PRESENT_CHART_HEIGHT if presentation else NORMAL_CHART_HEIGHT) + (45 if last else 0)
    labels, marker = row_labels(snaps, replay_index)
    badge = rhat_badge(run, group)
    st.markdown(f"**:{MARKDOWN_COLOURS[index % 4]}[{chain_label(run, group)}]** · "
                f"**{live_view.counts_text(labels)}**" + (f" · {note}" if note else "") + f" · {metrics_text(run, snaps)}"
                + (f" · {badge}" if badge else "") + (f" · showing sweep {marker:,}" if marker else ""))
    cols = st.columns(CHART_COLUMNS)
    common = dict(presentation=presentation, x_axis=last)
    cols[0].vega_lite_chart(live_charts.trace_chart([live_view.trace_envelope(s.K) for s in snaps], burn_in=plan.burn_in,
                                              total_sweeps=plan.iters, k_max=k_max, colour=colour,
                                              marker_sweep=marker, **common),
                            key=f"trace-{group}", width="stretch", height=height)
    cols[1].vega_lite_chart(live_charts.k_histogram_chart(live_view.running_k_histogram([s.K for s in snaps], plan.burn_in),
                                                    k_max=k_max, colour=colour, **common),
                            key=f"khist-{group}", width="stretch", height=height)
    shown = live_view.display_subset(ds_run.n)
    xy, titles = view_coordinates(run)
    x = xy[:, 0]
    x_domain = (float(x.min() - 0.05 * np.ptp(x)), float(x.max() + 0.05 * np.ptp(x)))
    if ds_run.dim == 1:
        grid = np.linspace(*x_domain, 200)
        # the model's predictive density of a new point given this partition (the prior's seating weights,
        # the new-cluster term included in the total); the clusters' terms drawn dashed
        density, comps = predictive_density(grid, x, np.asarray(labels), run_prior(run, group), run.niw)
        first_point = np.unique(np.asarray(labels), return_index=True)[1]  # components: in np.unique order
        chart = live_charts.density_chart(grid, density, comps[:-1], colours[first_point], x[shown], colours[shown],
                                    x_domain=x_domain, x_title=titles[0], **common)
    else:
        y = xy[:, 1]
        y_domain = (float(y.min() - 0.05 * np.ptp(y)), float(y.max() + 0.05 * np.ptp(y)))
        chart = live_charts.clusters_chart(x[shown], y[shown], colours[shown], x_domain=x_domain,
                                     y_domain=y_domain, x_title=titles[0],
                                     y_title=titles[1], **common)
    cols[2].vega_lite_chart(chart, key=f"clusters-{group}", width="stretch", height=height)


def live_panel(data, presentation):
    """The controls, the status line and one row of charts per prior: a fragment (see live_section) that
    redraws itself every REDRAW_SECONDS while the run is live. data: a PageData."""
    with guarded("the live view"), render_slot():
        if state.pop("app_rerun", False):
            st.rerun(scope="app")
        run = state.get("run")
        S = settings()
        controls(run, data)
        if run is None:
            st.info(f"Press **Start** to run {PRIORS[S['prior1']].label} and {PRIORS[S['prior2']].label} side by "
                    "side on these data.")
            return
        session_owner().adopt(run)
        run.watch()  # drawn: a run nobody watches for a while gives its chains back (RunRegistry.sweep)
        run.set_pace(es.PACES[S["pace"]])
        if run.reclaimed:
            st.info(f"Paused by the server: nobody watched this run for {registry().reclaim_seconds / 60:g} minutes, "
                    "so its chains went back to the pool for other visitors. Press **Resume** to go on (when the "
                    "server has room).")
        snaps = run.snapshots()
        groups = {group: [snaps[name] for name in names] for group, names in run.groups.items()}
        st.container(key="status").markdown(" · ".join(group_status(group, g) for group, g in groups.items()))
        # the replay slider sits below the charts (so showing it does not move them): read its value first
        first = next(iter(snaps.values()))
        options = [f"{s:,}" for s in first.replay_sweeps] + ["now"]  # past at the left, now at the right
        choice = state.get("scrub", "now") if not run.running else "now"
        replay_index = options.index(choice) if choice in options[:-1] else None
        # the K axes grow in steps, so the charts' specifications (and the page) stay still
        k_top = max([int(s.K.max()) for s in snaps.values() if s.K.size] + [3])
        state.k_axis = k_max = max(state.get("k_axis", 0) if state.get("k_axis_run") == run.token else 0,
                                   int(np.ceil((k_top + 1) / 4) * 4))
        state.k_axis_run = run.token
        column_headers(run, presentation)
        shown = {group: row_labels(group_snaps, replay_index)[0] for group, group_snaps in groups.items()}
        colours = row_colours(run, shown)
        notes = merge_notes(run, shown)
        for group, text in collapse_notes(run, groups).items():
            notes[group] = f"{notes[group]} · {text}" if group in notes else text
        for index, (group, group_snaps) in enumerate(groups.items()):
            prior_row(run, index, group, group_snaps, replay_index, k_max, presentation,
                      last=index == len(groups) - 1, colours=colours[group], note=notes.get(group, ""))
        if run.plan.thin_raised:
            st.caption(run.plan.describe())
        if not run.running and len(options) > 1:
            st.select_slider("Replay: show the clusters at sweep", options=options, value=choice, key="scrub")
        if state.get("polling") and not run.live:
            # the run ended (finished, or Stop: this redraw already says so): redraw the whole page once,
            # with its details, and stop polling
            st.rerun(scope="app")


def live_section(data, presentation):
    """The previous run's "changed since" note and the live panel (polling while the run is live)."""
    run = state.get("run")
    state.polling = run is not None and run.live
    if run is not None:
        session_owner().adopt(run)
        changed = changed_since(run.config, current_config(data))
        if changed:
            st.warning(f"Showing the previous run, on {inert(run.dataset.description)} N = {run.dataset.n}. Changed "
                       f"since it started: {', '.join(changed)}. Press **Start** to run with the current settings.")
    # a fragment made on each full run: whether it polls follows the run as this page run finds it
    st.fragment(live_panel, run_every=REDRAW_SECONDS if state.polling else None)(data, presentation)




# ----------------------------------------------------------------------------- details (not while running)
PLOT_CONFIG = {"displayModeBar": False}


def posterior_summaries(run):
    """pcrp.posterior summaries of every prior's chains, computed once per run and kept draw count."""
    cache = state.setdefault("posterior_cache", {})
    out = {}
    for group in run.groups:
        chain_set = run.chain_set(group)
        if chain_set is None:
            continue
        key = (run.token, group, chain_set.n_kept, chain_set.K.shape[1])
        if key not in cache:
            if len(cache) > 8:  # summaries of old runs: let them go
                cache.clear()
            cache[key] = summarise(chain_set, run.dataset.X, run.niw, seed=run.config.get("seed") or 0, scale=True,
                                   prior=run_prior(run, group))
        out[group] = cache[key]
    return out


def posterior_tab(run):
    ds_run = run.dataset
    st.caption("Over the kept draws of every chain of each prior: the partition that minimises the posterior "
               "expected variation of information (a SALSO-style search), how often each pair of points shares "
               "a cluster, the posterior density averaged over draws, and R-hat / ESS / MCSE from ArviZ.")
    if not state.get(f"summarised-{run.token}") and not st.button("Summarise the posterior", key="summarise",
                                                                   type="primary"):
        return
    state[f"summarised-{run.token}"] = True
    with st.spinner("Summarising the posterior…"):
        summaries = posterior_summaries(run)
    if not summaries:
        st.info("No draws kept yet: they start after the burn-in.")
        return
    cols = st.columns(len(summaries))
    for col, (group, summary) in zip(cols, summaries.items()):
        with col:
            st.markdown(f"**{chain_label(run, group)}**")
            st.plotly_chart(plots.diagnostics_table(summary.diagnostics, title=f"{group}: MCMC diagnostics"),
                            key=f"diag-{group}", width="stretch", config=PLOT_CONFIG)
            for line in rhat_warnings({"K": summary.diagnostics["K"],
                                       "the log joint": summary.diagnostics["log_joint"]}):
                st.warning(line)
            collapse_section(run, group, summaries)
            modes_section(group, summary)
            if summary.point is not None:
                sizes = ", ".join(str(n) for n in np.bincount(summary.point.labels))
                text = (f"Point estimate: {summary.point.n_clusters} clusters (sizes {sizes}); expected VI "
                        f"{summary.point.expected_loss:.3f} bits.")
                if ds_run.labels is not None:
                    text += (f" Against the true labels: NMI {nmi(ds_run.labels, summary.point.labels):.3f}, "
                             f"VI {vi(ds_run.labels, summary.point.labels):.3f} bits.")
                st.markdown(text)
                if ds_run.raw is not None and ds_run.raw.shape[1] == 784:
                    fig = plots.digit_gallery(ds_run.raw, summary.point.labels,
                                              title=f"{group}: digits per cluster of the point estimate")
                elif ds_run.dim > 1:
                    fig = plots.point_estimate_scatter(ds_run.X, summary.point.labels, summary.confidence,
                                                       ds_run.columns, f"{group}: point estimate (faint = unsure)")
                else:
                    fig = None
                if fig is not None:
                    st.plotly_chart(fig, key=f"point-{group}", width="stretch", config=PLOT_CONFIG)
                if summary.psm is not None:
                    sampled = "" if summary.psm_rows is None else f", {summary.psm_rows.size:,} sampled points"
                    st.plotly_chart(plots.similarity_heatmap(summary.psm, summary.psm_labels,
                                                             f"{group}: P(two points share a cluster){sampled}"),
                                    key=f"psm-{group}", width="stretch", config=PLOT_CONFIG)
            point_labels = summary.point.labels if summary.point is not None else summary.chains.labels[0, -1]
            fig = plots.posterior_density(summary.density, point_labels, ds_run.columns,
                                          f"{group}: {summary.density.density.label.split(' (')[0]} (mean over draws)")
            plots.add_new_cluster_term(fig, summary.density)
            st.plotly_chart(fig, key=f"postdens-{group}", width="stretch", config=PLOT_CONFIG)
            st.caption(density_caption(summary.density))
            if summary.note:
                st.caption(summary.note)
            downloads(group, summary)


def collapse_section(run, group, summaries):
    """For a pCRP row beside a CRP row: pcrp.collapse's verdict against the clusters of the CRP's point estimate on
    the same data, in words (red when it collapsed or its chains disagree)."""
    crp = crp_group(run)
    if run.config["priors"][group]["prior"] != "pcrp" or crp is None or crp not in summaries:
        return
    crp_summary, summary = summaries[crp], summaries[group]
    reference = kept_clusters(crp_summary.point.labels if crp_summary.point is not None
                              else crp_summary.chains.labels[0, -1])
    verdict = judge_chains(summary.chains, reference, summary.diagnostics, what=group, reference_name="the CRP row")
    if verdict.flagged:
        st.error(verdict.text)  # the library's sentence: numbers and the row's name
    else:
        st.caption(f"No collapse: every chain keeps the {reference} clusters of the CRP row's point estimate "
                   "(clusters of at least 2% of the points), and the chains agree.")


def modes_section(group, summary):
    """The modes warning (the chains settled in different places) and, with more than one mode, each mode's
    figures: chains (1-based), mean K, mean log joint and its MCSE, the mode's own point estimate."""
    if summary.modes_warning:
        st.warning(f"{inert(group)}: {summary.modes_warning}")  # the library's sentence: numbers, no visitor text
    if len(summary.modes) > 1:
        rows = []
        for m in summary.modes:
            d = m.as_dict()
            rows.append({"chains": ", ".join(str(c) for c in d["chains"]), "mean K": round(d["mean_K"], 2),
                         "mean log joint": round(d["mean_log_joint"], 1),
                         "MCSE": None if d["mcse_log_joint"] is None else round(d["mcse_log_joint"], 2),
                         "point estimate": f"{d.get('point_clusters', '—')} clusters"
                                           + (f" (sizes {', '.join(map(str, d['point_sizes']))})"
                                              if "point_sizes" in d else "")})
        st.dataframe(pd.DataFrame(rows), hide_index=True, key=f"modes-{group}")


def density_caption(panel):
    """What the posterior density figure draws, in one line."""
    dens = panel.density
    text = (f"Black: the {dens.label}, mean over {dens.n_draws} draws"
            + (f" with its {dens.level:.0%} pointwise band" if dens.lower is not None and panel.dim == 1 else "")
            + "; coloured dashes: the point estimate's clusters")
    if panel.new_component is not None:
        text += "; grey dots: the new-cluster term (a point unlike any cluster)"
    return text + "."


def downloads(group, summary):
    """Files of one prior's posterior, built when clicked."""
    stem = file_stem(group)
    c = st.columns(2)
    c[0].download_button("chains (RESULT.npz)", owned_download(lambda: summary.chains.npz_bytes()),
                         f"{stem}_chains.npz", key=f"dl-npz-{group}", on_click="ignore",
                         help="The command line's result format: pcrp.chains.ChainSet.load reads it.")
    c[1].download_button("traces (NetCDF)", owned_download(lambda: summary.chains.netcdf_bytes()), f"{stem}_traces.nc",
                         key=f"dl-nc-{group}", on_click="ignore",
                         help="K and the log joint as (chain, draw) in an xarray Dataset (ArviZ: "
                              "az.convert_to_inference_data(xr.open_dataset(...))).")
    if summary.point is not None:
        c = st.columns(2)
        c[0].download_button("point estimate (CSV)",
                             owned_download(lambda: pd.DataFrame({"cluster": summary.point.labels})
                                            .to_csv(index_label="point")),
                             f"{stem}_point_estimate.csv", key=f"dl-point-{group}", on_click="ignore")
    if summary.psm is not None and summary.psm_rows is None:  # the full matrix exists (not a row sample)
        c[1].download_button("similarity matrix (.npy)", owned_download(lambda: npy_bytes(summary.psm)),
                             f"{stem}_similarity.npy", key=f"dl-psm-{group}", on_click="ignore",
                             help="(N, N) float32; numpy.load reads it.")


def file_stem(name):
    """A chain's or prior's name as a file name: "pCRP · chain 2" -> "pcrp_chain_2", "pCRP (alpha=1, r=1.5)" ->
    "pcrp_alpha_1_r_1_5"."""
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_") or "chain"


def npy_bytes(array):
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    return buffer.getvalue()


def details(run):
    snaps = run.snapshots()
    firsts = {group: snaps[names[0]] for group, names in run.groups.items()}
    tabs = st.tabs(["Posterior summary", "Cluster sizes now", "Density now", "Digits now", "Run files",
                    "Settings of this run"])
    ds_run = run.dataset
    with tabs[0]:
        posterior_tab(run)
    with tabs[1]:
        cols = st.columns(len(firsts))
        size_max = max(int(np.bincount(s.labels).max()) for s in firsts.values()) * 1.05
        for col, (group, snap) in zip(cols, firsts.items()):
            col.plotly_chart(plots.cluster_sizes(snap.labels, f"{group}: cluster sizes now", y_max=size_max),
                             key=f"sizes-{group}", width="stretch", config=PLOT_CONFIG)
    with tabs[2]:
        cols = st.columns(len(firsts))
        for col, (group, snap) in zip(cols, firsts.items()):
            prior = run_prior(run, group)
            if ds_run.dim == 1:
                fig = plots.density_1d(ds_run.X, snap.labels, run.niw, f"{group}: predictive density now",
                                       prior=prior)
            else:
                fig = plots.density_2d(ds_run.X, snap.labels, run.niw, ds_run.columns,
                                       f"{group}: predictive density now", prior=prior)
            col.plotly_chart(fig, key=f"density-{group}", width="stretch", config=PLOT_CONFIG)
    with tabs[3]:
        if ds_run.raw is not None and ds_run.raw.shape[1] == 784:
            cols = st.columns(len(firsts))
            for col, (group, snap) in zip(cols, firsts.items()):
                col.plotly_chart(plots.digit_gallery(ds_run.raw, snap.labels, title=f"{group}: digits per cluster"),
                                 key=f"digits-{group}", width="stretch", config=PLOT_CONFIG)
        else:
            st.caption("Digit images exist for MNIST only.")
    with tabs[4]:
        st.caption("Files are built when you click.")
        for name, chain in run.chains.items():
            c = st.columns(2)
            c[0].download_button(f"{name}: trace (CSV)", owned_download(lambda ch=chain: traces_csv(ch)),
                                 f"{file_stem(name)}_trace.csv", key=f"dl-traces-{name}",
                                 on_click="ignore")
            c[1].download_button(f"{name}: labels now (CSV)", owned_download(lambda ch=chain: now_csv(ch)),
                                 f"{file_stem(name)}_labels.csv", key=f"dl-labels-{name}",
                                 on_click="ignore")
        st.download_button("Run configuration (JSON)", owned_download(lambda: dumps(run.config, indent=2)),
                           "run_config.json", key="dl-config", on_click="ignore")
    with tabs[5]:
        st.caption(run.plan.describe())
        st.json(run.config, expanded=False)


def traces_csv(chain):
    snap = chain.snapshot()
    return pd.DataFrame({"sweep": np.arange(1, snap.K.size + 1), "K": snap.K,
                         "log_joint": snap.log_joint}).to_csv(index=False)


def now_csv(chain):
    return pd.DataFrame({"label": chain.snapshot().labels}).to_csv(index_label="point")


def details_section():
    """The tabs below the live panel, once the run is paused or over."""
    run = state.get("run")
    if run is not None:
        with guarded("the details"):
            if run.running:
                st.caption("The posterior summary, cluster sizes, densities, digits and files appear here when the "
                           "run is paused or finished.")
            else:
                details(run)



# Keyboard: Space = pause / resume (or start), Right arrow = one sweep, R = reset. A listener on the page
# (added once, from an invisible same-origin component) clicks the enabled button, so keys and buttons do the
# same thing; keys typed into a field or on the pace slider are theirs. Space never reaches a focused button.
KEYS_CODE = """
(() => {
  const doc = document;
  const click = (key) => {
    const b = doc.querySelector('.st-key-' + key + ' button');
    if (b && !b.disabled) { b.click(); return true; }
    return false;
  };
  const typing = (t) => t && (['INPUT', 'TEXTAREA', 'SELECT'].includes(t.tagName) || t.isContentEditable ||
                              (t.getAttribute && t.getAttribute('role') === 'slider'));
  doc.addEventListener('keydown', (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey || typing(e.target)) return;
    let handled = false;
    if (e.code === 'Space') { handled = true; if (!e.repeat) click('pause') || click('resume') || click('start'); }
    else if (e.key === 'ArrowRight') { handled = click('step'); }
    else if (e.key === 'r' || e.key === 'R') { handled = click('reset'); }
    if (handled) { e.preventDefault(); e.stopPropagation(); if (doc.activeElement) doc.activeElement.blur(); }
  }, true);
  doc.addEventListener('keyup', (e) => {
    if (e.code === 'Space' && !typing(e.target)) { e.preventDefault(); e.stopPropagation(); }
  }, true);
})();
"""
# The component's own frame is replaced on every full redraw, and a listener defined there would die with it:
# the code runs as a script element of the page itself, once.
KEYS_SCRIPT = ("<script>const host = window.parent; if (!host.pcrpKeys) { host.pcrpKeys = true; "
               "const s = host.document.createElement('script'); s.textContent = " + json.dumps(KEYS_CODE) + "; "
               "host.document.head.appendChild(s); }</script>")


def keyboard_shortcuts():
    st.iframe(KEYS_SCRIPT, height=1)  # same-origin: may reach the page (st.components.v1.html is deprecated)


def how_to_read():
    """The expander that explains every chart and key (not in presentation mode)."""
    with st.expander("How to read this"):
        st.markdown(
            "- Both rows see the same data, NIW model, seed and start; only the partition prior differs.\n"
            "- **Clusters now**: the first chain's partition; the same colour means the same cluster in both rows "
            "(clusters are matched to the true classes, or else to the top row). For d > 2 the view is the first "
            "two principal components of the standardised data (PCA view), each axis with its share of the "
            "variance.\n"
            "- **Trace of K**: clusters after every sweep; the band is the range of K within each pixel column, the "
            "line its mean; the grey part is burn-in.\n"
            "- **Density now** (1-D data): the model's predictive density of a new point given the current "
            "partition (black: the prior's seating weights, the new-cluster term included) and its clusters' terms "
            "(dashed); the rug below shows the points in their clusters' colours.\n"
            "- **Posterior of K**: share of post-burn-in sweeps with each K (grey while only burn-in sweeps exist).\n"
            "- **NMI** = I(U;V)/sqrt(H(U)H(V)) (1 = identical); **VI** = H(U|V)+H(V|U) in bits (0 = identical).\n"
            "- For a fixed data set the sampler targets an exchangeable partition posterior, "
            "p(z|X) ∝ alpha^K ∏ ((N_k-1)!)^r ∏ m(X_k); the non-exchangeability of the pCRP is a property "
            "of the seating process as N grows (see *Rich get richer*).\n"
            f"- Each run stores at most {SESSION_BUDGET_BYTES // 2**20} MiB; a run stops a few seconds after its "
            "page is closed. Reloading the page brings your run back, in this browser only: the address holds "
            "settings, never a run, so a projected or shared address shows nobody your run or your data.\n"
            "- **Keys**: Space = pause / resume (start when there is no run), → = one sweep, R = reset. **Present** "
            "(or `?present=1` in the address) shows the comparison alone, in large type, for a projector.")


@dataclass(frozen=True)
class PageData:
    """What one run of the page works on, passed to the functions and callbacks that need it.

    dataset: the pcrp.data.Dataset shown (None until one is loaded); key: what identifies it (a built-in data
    set's settings, or the uploaded file and its column choices), compared with a run's; niw_choice: the NIW
    settings of the sidebar {"kappa0", "nu0", "S0": float}, empty until a data set is loaded."""

    dataset: object
    key: tuple
    niw_choice: dict


def page():
    """The Explorer, top to bottom."""
    S = settings()
    presentation = bool(S["present"])
    page_top(S, presentation)
    source = data_sidebar()
    ds, ds_key = current_data(S, source)
    data_lines(S, ds, source, presentation)
    apply_pending_r(S)
    niw_choice = model_and_run_sidebar(S, ds, ds_key, source)
    data = PageData(ds, ds_key, niw_choice)
    live_section(data, presentation)
    details_section()
    if not presentation:
        how_to_read()
    keyboard_shortcuts()


page()

"""The Explorer's model and run sidebar: each row's prior and its parameters (generated from the pcrp.model.PRIORS
registry), where a tuned parameter's value came from, the CRP-Oracle, the clusters' covariance and prior, the run's
settings and the demo link. What differs between priors is read from the registry's fields (``reference``, ``tuned``), never a name."""

import numpy as np
import streamlit as st

from app_pages.explorer_parts.session import (address_values, automatic_rows, bind, choices, explorer, number, say,
                                              settings, tuned_origin, tuned_set_by_visitor)
from app_pages.shared import keep_browser_key, page_session
from pcrp.app import explorer_settings as es
from pcrp.app.live_params import chains_cap, default_chains, one_chain_words
from pcrp.model import PRIORS, WITHIN_SCALE, resolve_niw
from pcrp.summaries.summary import oracle_alpha

ROW_NAMES = {1: "Top row", 2: "Bottom row"}  # the names of two rows; with more, "Row 3"


def row_name(row, n_rows):
    """What the page calls row ``row`` of ``n_rows``: "Top row" and "Bottom row" of two, else "Row 3"."""
    return ROW_NAMES[row] if n_rows == 2 and row in ROW_NAMES else f"Row {row}"


def on_prior_change(row):
    """A row's prior changed (written into the settings already): its parameters start from the new prior's
    defaults."""
    values = settings()
    es.reset_row(values, row)
    for key in [key for key in tuned_set_by_visitor() if es.ROW_PARAMS[key][0] == row]:
        tuned_set_by_visitor().discard(key)  # a new row's tuned parameter starts from the data set's value
        tuned_origin().pop(key, None)


def on_rows_change(old_rows):
    """The number of rows changed (from ``old_rows``): the chains per prior follow it (one per row above two on a
    2-core server, never more than the browser's share allows)."""
    values = settings()
    if values["chains"] == default_chains(old_rows) or values["chains"] > chains_cap(values["rows"]):
        values["chains"] = default_chains(values["rows"])


def on_tuned_change(row):
    """The visitor moved a row's tuned parameter (r): theirs from now on (the data set's value no longer replaces
    it)."""
    key = es.tuned_key(settings(), row)
    tuned_set_by_visitor().add(key)
    tuned_origin()[key] = None  # said with the data set's own value (see r_caption)


def r_origin(values):
    """(r, one short line, the full provenance) of the r a pCRP row gets when the visitor has not chosen one: the r
    cross-validated for these data, data settings and covariance type (pcrp.analyses.cv.shipped_r through
    pcrp.app.explorer_settings.shipped), or, where none was, another setting's r or pcrp's default (a CSV), which the
    line says is not a choice for these settings."""
    shipped = es.shipped(values)
    name = values["data"]
    if name == "csv":
        return shipped.r, f"r = {shipped.r:g}: a default, not chosen for your data; the **Choose r** page chooses one.", \
            shipped.text
    if shipped.matched:
        return shipped.r, (f"r = {shipped.r:g}: cross-validated for these data with "
                           f"{covariance_words(shipped.covariance_type)}."), shipped.text
    return shipped.r, (f"No r was cross-validated for {es.SOURCE_LABELS[name]} at these settings: r = {shipped.r:g} is "
                       f"{where_chosen(shipped)}, a starting point, not a choice for these data (the **Choose r** "
                       "page chooses one)."), shipped.text


def where_chosen(shipped):
    """Where an unmatched shipped r comes from, in the sidebar's words: "the r cross-validated for Sim 1 at N = 300,
    data seed 0 with full covariances", or "pcrp's default"."""
    entry = shipped.entry
    if entry is None:
        return "pcrp's default"
    chosen = entry["data"]
    words = {"sim1": [f"N = {chosen.get('n')}", f"data seed {chosen.get('seed')}"],
             "sim2": [f"N = {chosen.get('n')}", f"data seed {chosen.get('seed')}"],
             "mnist": [f"digits {', '.join(str(d) for d in chosen.get('digits', []))}", f"N = {chosen.get('n')}",
                       f"{chosen.get('embedding')} embedding", f"{chosen.get('dims')} dimensions"]}.get(entry["name"], [])
    label = es.SOURCE_LABELS.get(entry["name"], entry["name"])
    at = f" at {', '.join(words)}" if words else ""
    return f"the r cross-validated for {label}{at} with {covariance_words(shipped.covariance_type)}"


def covariance_words(covariance_type):
    """"full covariances", "diagonal covariances", "spherical covariances"."""
    from pcrp.analyses.collapse import covariance_words as words

    return words(covariance_type)


def r_caption(row):
    """One line under a pCRP row's r: where its r came from (full provenance in the help)."""
    S = settings()
    r, line, provenance = r_origin(S)
    key = es.tuned_key(S, row)
    if key not in tuned_set_by_visitor():
        st.caption(line, help=provenance)
        return
    origin = tuned_origin().get(key)
    if origin is None:  # moved with the widget
        if S["data"] == "csv":
            origin = f"Your r (pcrp's default is {r:g}; Choose r picks one for your data)."
        elif es.shipped(S).matched:
            origin = (f"Your r (cross-validated for {es.SOURCE_LABELS[S['data']]} at these settings with "
                      f"{covariance_words(S['covariance'])}: {r:g}).")
        else:
            origin = f"Your r (no r was cross-validated for {es.SOURCE_LABELS[S['data']]} at these settings)."
    st.caption(origin, help=provenance)


def prior_widgets(row):
    """The prior of one row and its parameters' widgets, all generated from the pcrp.model.PRIORS registry."""
    values = settings()
    st.selectbox(f"{row_name(row, len(es.active_rows(values)))}: prior", choices(es.prior_key(row)),
                 format_func=lambda name: PRIORS[name].label, **bind(es.prior_key(row), on_prior_change, (row,)),
                 help=" · ".join(f"{spec.label}: {spec.help}" for spec in PRIORS.values()))
    prior = values[es.prior_key(row)]
    for w in es.prior_widgets(prior):
        name = es.row_key(w.name, row)
        value = min(max(values[name], w.low), w.high)  # a value another prior allowed
        values[name] = int(value) if w.integer else float(value)
        label = f"{PRIORS[prior].label} {w.label}"
        if w.slider_step:  # the prior's tuned parameter (the pCRP's r)
            low, high = es.slider_span(w, float(values[name]))
            st.slider(label, float(low), float(high), step=w.slider_step, help=w.help,
                      **bind(name, on_tuned_change, (row,)))
            r_caption(row)
        elif w.integer:
            st.number_input(label, int(w.low), int(w.high), step=1, help=w.help, **bind(name))
        else:
            st.number_input(label, float(w.low), float(w.high), step=0.05 if w.high <= 1 else 0.1,
                            format="%.3f", help=w.help, **bind(name))


def oracle_rows(S):
    """Rows whose prior is the over-clustering reference (the CRP) with a concentration alpha: the paper's
    CRP-Oracle sets it."""
    return [row for row in es.active_rows(S)
            if PRIORS[S[es.prior_key(row)]].reference and "alpha" in es.row_param_names(S, row)]


def on_oracle(ds):
    """Every reference row's alpha = K_true / ln N (the paper's CRP-Oracle), for the data set ``ds``."""
    S = settings()
    value = round(oracle_alpha(ds.true_k, ds.n), 3)
    for row in oracle_rows(S):
        S[es.row_key("alpha", row)] = value
    say(f"CRP alpha set to K_true / ln N = {ds.true_k} / ln {ds.n} = {value:g}.")


def apply_pending_r(S):
    """An r sent by the Choose r page, and each automatic pCRP row's r (the data set's own)."""
    sent = page_session().take_sent_r()
    if sent is not None:  # sent by the "Choose r" page: every tuned row takes it (the bottom row becomes one)
        tuned_prior = PRIORS[es.CHOOSE_R_PRIOR]
        widget = es.param_widget(tuned_prior.name, tuned_prior.tuned)
        r_value = float(np.clip(sent, widget.low, widget.high))
        shown = es.active_rows(S)
        rows = [row for row in shown if es.tuned_key(S, row) is not None] or [shown[-1]]
        for row in rows:
            if es.tuned_key(S, row) is None:
                S[es.prior_key(row)] = tuned_prior.name
                es.reset_row(S, row)
            key = es.tuned_key(S, row)
            S[key] = r_value
            tuned_set_by_visitor().add(key)
            tuned_origin()[key] = f"r = {r_value:g} from Choose r's cross validation."
        st.toast(f"{tuned_prior.label} power set to r = {r_value:g} from cross validation.")

    if explorer().tuned_origin is None:  # the first visit: a tuned value the visitor set came with the address
        tuned_origin().update({key: "r from the address." for key in tuned_set_by_visitor()})
    for row in automatic_rows(S):  # no silent default: the data set's own r, said under the widget
        key = es.tuned_key(S, row)
        widget = es.param_widget(S[es.prior_key(row)], es.ROW_PARAMS[key][1])
        S[key] = float(np.clip(es.data_r(S), widget.low, widget.high))


NIW_NAMES = ("kappa0", "nu0", "S0")  # the cluster prior's settings of the sidebar (S0: its scale s, S0 = s * I)


def niw_values(ds, ds_key):
    """The cluster prior's settings in the session's object (ExplorerState.niw) for the data set ``ds`` (its key
    ``ds_key``): the data's defaults (pcrp.model.resolve_niw) until the visitor changes them; another data set starts
    from its own."""
    ex = explorer()
    if ex.niw is None or ex.niw["data"] != ds_key:
        ex.niw = {"data": ds_key, **niw_defaults(ds)}
    return ex.niw


def niw_defaults(ds):
    """{"kappa0", "nu0", "S0"}: the cluster prior's settings the data ``ds`` get by default (pcrp.model.resolve_niw)."""
    default = resolve_niw(ds.X)
    return {"kappa0": float(default.kappa0), "nu0": float(default.nu0), "S0": float(default.S0[0, 0])}


def _niw_back(name, key):
    explorer().niw[name] = float(st.session_state[key])


def bind_niw(name, ds_key):
    """key, on_change and args of the widget of cluster-prior setting ``name``: it shows the object's value, and a
    change goes into the object at once (as session.bind does for the declared settings)."""
    key = f"{name.lower()}_{ds_key}"
    st.session_state[key] = explorer().niw[name]
    return {"key": key, "on_change": _niw_back, "args": (name, key)}


COVARIANCE_LABELS = {"full": "Full", "diag": "Diagonal", "spherical": "Spherical"}
CLUSTER_PRIOR_WORDS = {
    "full": "mu_k | Sigma_k ~ N(m0, Sigma_k / kappa0), Sigma_k ~ IW(S0, nu0).",
    "diag": "Per column j: sigma_kj^2 ~ Inverse-Gamma((nu0 - d + 1) / 2, s / 2), mu_kj | sigma_kj ~ "
            "N(m0_j, sigma_kj^2 / kappa0): each column's variance has the prior the full model gives it.",
    "spherical": "sigma_k^2 ~ Inverse-Gamma((nu0 - d + 1) / 2, s / 2), one for all columns, mu_k | sigma_k ~ "
                 "N(m0, sigma_k^2 I / kappa0).",
}


def covariance_line(values, dim):
    """(one short line, its full text or None) by the covariance selector: which type the data support, from the
    shipped cross validation of the three types for a built-in data set at these settings
    (pcrp.analyses.cv.shipped_covariance_choice); for a CSV, or settings never compared, where to compare them (Choose
    r's Compare all three; nothing is run here)."""
    from pcrp.analyses.cv.covariance import shipped_covariance_choice

    name = values["data"]
    compare = "the **Choose r** page's **Compare all three** compares them by cross validation"
    if name == "csv":
        if dim == 1:
            return "At d = 1 the three types are one model.", None
        return f"Which type your data support: {compare}.", None
    choice = shipped_covariance_choice(name, es.data_settings(values))
    if choice is None:
        return (f"Which type {es.SOURCE_LABELS[name]} supports was not cross-validated at these settings: "
                f"{compare}."), None
    if choice.one_model:
        return "At d = 1 the three types are one model (the same clusters, the same r).", choice.text()
    chosen = COVARIANCE_LABELS[choice.chosen]
    shown = " (this one)" if values["covariance"] == choice.chosen else ""
    return (f"Cross validation of the three types on these data supports **{chosen}**{shown}: held-out log "
            "predictive per point at each type's own r."), choice.text()


def covariance_caption(values, ds):
    """The covariance line (:func:`covariance_line`), with its full text as help."""
    line, text = covariance_line(values, ds.dim if ds is not None else 2)
    st.caption(line, help=text)


def model_and_run_sidebar(S, ds, ds_key, source):
    """The sidebar's prior, NIW and run widgets and the demo link; returns the NIW choice {name: value}."""
    with st.sidebar:
        st.header("Model")
        number("Rows: priors compared", "rows", on_change=on_rows_change, args=(S["rows"],),
               help="Each row runs one prior on the same data, seed and start. A demo link names them: "
                    "?priors=crp,pcrp,py,mfm,sfm.")
        for row in es.active_rows(S):
            prior_widgets(row)
        if ds is not None and ds.labels is not None and oracle_rows(S):
            st.button("CRP-Oracle alpha = K_true / ln N", key="oracle", on_click=on_oracle, args=(ds,))
        st.selectbox("Clusters' covariance", choices("covariance"), **bind("covariance"),
                     format_func=COVARIANCE_LABELS.get,
                     help="scikit-learn's covariance_type. Full: each cluster its own d x d covariance (the "
                          "paper's). Diagonal: its own variance per column, O(d) a point, fewer parameters for many "
                          "columns. Spherical: one variance per cluster. Tied is not offered: a collapsed sampler "
                          "needs one marginal likelihood per cluster.")
        covariance_caption(S, ds)
        niw_choice = {}
        if ds is not None:
            values = niw_values(ds, ds_key)
            with st.expander("Cluster prior (defaults from the data)"):
                full = S["covariance"] == "full"
                st.caption(CLUSTER_PRIOR_WORDS[S["covariance"]]
                           + f" m0 = column means; kappa0 = {WITHIN_SCALE**2:g}; nu0 = d + 3; "
                           + ("S0 = s * I. Larger S0" if full else "s = the variances' prior scale. Larger s")
                           + " = broader clusters a priori = fewer clusters; smaller kappa0 = means expected "
                           "far apart = fewer clusters.")
                st.number_input("kappa0: strength of m0, in points", 1e-4, 1e4, format="%.4f",
                                **bind_niw("kappa0", ds_key))
                st.number_input(f"nu0: degrees of freedom (> d - 1 = {ds.dim - 1})", float(ds.dim - 1) + 0.01, 1e4,
                                **bind_niw("nu0", ds_key))
                s_label = "S0 = s * identity, s =" if full else "s: the variances' prior scale"
                st.number_input(s_label, 1e-6, 1e6, format="%.4f", **bind_niw("S0", ds_key))
            niw_choice = {name: values[name] for name in NIW_NAMES}
        st.header("Run")
        number("Sweeps", "sweeps", step=100)
        number("Burn-in", "burn_in", step=100)
        number("Thin", "thin")
        number("Seed", "seed")
        st.checkbox("Split-merge moves", **bind("split_merge"),
                    help="Off = the paper's plain Gibbs; pCRP chains then tend to stay where they start.")
        st.selectbox("Start", choices("start"), **bind("start"))
        number("Chains per prior", "chains", high=chains_cap(len(es.active_rows(S))),
               help="The first starts as chosen above; the others from unlike starts (one cluster, random "
                    "clusters, k-means). When they disagree (R-hat above 1.01), the result depends on the start.")
        one_chain = one_chain_words(len(es.active_rows(S)), S["chains"])
        if one_chain:
            st.caption(one_chain)
        with st.popover("Copy demo link"):
            st.caption("These settings as an address (copy button at its right). Whoever opens it gets a page of "
                       "their own with these settings, never your run or your data"
                       + (": an uploaded CSV must be uploaded again." if source == "csv" else "."))
            st.code(es.demo_link(st.context.url, address_values(settings())), language=None, wrap_lines=True)
        keep_browser_key()
    return niw_choice

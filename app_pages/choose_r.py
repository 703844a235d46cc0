"""Choose r: cross validation of the pCRP power (paper Sec. 2.3) read together with the exact merge path, for the
clusters' covariance type the visitor picks, or for all three compared (which type the data support).

The page's settings and its last result are its part of the session's one object (pcrp.app.page_session.ChooseRState):
the widgets (the form's included) are drawn from the settings, the address (?present=1) is written from them. It
clusters the Explorer's data set (ExplorerState.dataset, Old Faithful before the Explorer has loaded one) and hands the
Explorer an r (PageSession.sent_r)."""

import numpy as np
import pandas as pd
import streamlit as st

from app_pages.explorer_parts.header import EXPLORER_PRESENT_TEXT  # the Explorer's presentation text, not a copy
from app_pages.shared import (bind, follow_address, inert, page_part, page_session, present_style, present_switch,
                              present_text, read_present, sampler_ready, session_work, write_address, write_back)
from pcrp import data, plots
from pcrp.analyses.collapse import COVARIANCE_WORDS, covariance_words
from pcrp.app.page_session import ChooseRResult, ChooseRState
from pcrp.sampling.compute import WorkCancelled, WorkOverBudget, WorkTicket, describe_seconds, expected_clusters
from pcrp.analyses.cv import (CHECK_CHAINS, CHOOSE_R_BUDGET, CHOOSE_R_PAGE, CHOOSE_R_START_CHAINS, CV_PARAMS, CVError,
                              check_with_chains, choose_r_work, compare_covariance_types,
                              cross_validate, cv_kept_clusters)
from pcrp.model import COVARIANCE_TYPES
from pcrp.runs.dask_cluster import configured_scheduler
from pcrp.model import ModelError, resolve_niw
from pcrp.analyses.k_over_r import k_over_r
from pcrp.analyses.path import PathError, crp_start, describe_r, merge_path
from pcrp.basics.errors import SamplerError

# The largest whole number a browser's number widget holds exactly (a seed's declared bound is larger).
WIDGET_MAX_INT = 2**53 - 1
# The covariance choices: one type (its r cross-validated), or all three compared.
COMPARE = "compare"
COVARIANCE_CHOICES = tuple(COVARIANCE_TYPES) + (COMPARE,)
COVARIANCE_LABELS = {**{t: f"{w.capitalize()}" for t, w in COVARIANCE_WORDS.items()},
                     COMPARE: "Compare all three"}
PRESENT_FONT = 18  # the figure's text in Present, for a projector at 1280 x 800 (the page's text is 20 px there)
# The comparison's table in Present, at the page's size (EXPLORER_PRESENT_TEXT sizes paragraphs, not table cells):
# its cells in the container keyed TYPES_TABLE_KEY, by the class Streamlit gives a keyed element (.st-key-<key>).
TYPES_TABLE_KEY = "choose_r_types_table"
PRESENT_TABLE_CSS = (f"<style>.st-key-{TYPES_TABLE_KEY} td, .st-key-{TYPES_TABLE_KEY} th "
                     "{font-size: 19px !important;}</style>")
# The form's settings: cross validation's declared settings (pcrp.analyses.cv.CV_PARAMS) and the covariance, each with
# its widget's key ("cv_" + its name: the tests find widgets by it).
FORM_SETTINGS = ("r_start", "r_stop", "r_step", "folds", "iters", "burn_in", "seed", "repeats", "covariance")
PRESENT_KEY = "choose_r_present"


def widget_key(name):
    return "cv_" + name


def explorer_covariance():
    """The clusters' covariance of the Explorer's rows (its settings), full before the Explorer's first visit."""
    ex = page_session().explorer
    chosen = ex.settings.get("covariance") if ex is not None else None
    return chosen if chosen in COVARIANCE_TYPES else "full"


def first_settings():
    """The page's settings on its first visit: each declared setting's preset or default (CHOOSE_R_PAGE, CV_PARAMS),
    the Explorer's covariance, Present off; "use_r" comes with the first result."""
    values = {}
    for name in FORM_SETTINGS[:-1]:
        param = CV_PARAMS[name]
        default = CHOOSE_R_PAGE.get(name, param.default)
        values[name] = int(default) if param.integer else float(default)
    return {**values, "covariance": explorer_covariance(), "use_r": None, "present": False}


def part():
    """This session's part of the page (pcrp.app.page_session.ChooseRState), made on its first visit."""
    return page_part("choose_r", lambda: ChooseRState(first_settings()))


def present_mode():
    """Presentation mode, as the Explorer and the Lesson have it: the part's setting, which the Present switch sets and
    the address shows (?present=1); no sidebar, header or toolbars, larger text (the Explorer's
    EXPLORER_PRESENT_TEXT). A bad value in the address is said and left off."""
    cr = part()
    for problem in follow_address(cr, {"present": read_present}):
        st.warning(f"Ignored a setting in the address bar: {inert(problem)}.")
    write_address(cr, {"present": present_text(cr.settings["present"])})
    return cr.settings["present"]


def setting_input(container, name, **options):
    """A number widget in the form for cross validation's setting ``name``, bound to the part's settings: label and
    bounds from its declaration (pcrp.analyses.cv.CV_PARAMS; its first value the page's preset, CHOOSE_R_PAGE);
    ``options``: the widget's step and format."""
    param = CV_PARAMS[name]
    bound = bind(part().settings, name, widget_key(name), form=True)
    if param.integer:
        low = int(param.low) + (0 if param.low_closed else 1)
        high = min(int(param.high) - (0 if param.high_closed else 1), WIDGET_MAX_INT)
        return container.number_input(param.label, low, high, help=param.help, **bound, **options)
    return container.number_input(param.label, float(param.low), float(param.high), help=param.help, **bound,
                                  **options)


def covariance_submitted():
    """Run was pressed (the form's values are in the settings): a covariance other than the Explorer's rows' is the
    visitor's choice from now on; the same one keeps following the Explorer's."""
    cr = part()
    cr.covariance_chosen = cr.settings["covariance"] != explorer_covariance()


def r_grid(start, stop, step):
    """The r values from start to stop (inclusive) on multiples of step, start first."""
    grid = np.round(np.r_[start, np.arange(np.ceil(start / step + 1e-9) * step, stop + 1e-9, step)], 4)
    return np.unique(grid[grid <= stop + 1e-9])

def title_row():
    """The title and the Present switch."""
    c = st.columns([5, 1], vertical_alignment="bottom")
    c[0].title("Choose r by cross validation")
    present_switch(c[1], part(), PRESENT_KEY,
                   help="Hide the sidebar and the header and enlarge the text, for a projector (or add ?present=1 to "
                        "the address).")


def introduction():
    """What r does, how cross validation chooses it, and why not the largest r that looks safe."""
    st.caption(
        "This page chooses the pCRP's power r. The other priors in the Explorer are not chosen here: the CRP's and "
        "Pitman-Yor's alpha, the MFM's gamma and lam and the sparse finite mixture's gamma and k_max are prior "
        "beliefs about the number and sizes of clusters, which the paper's loss (eq. 5) was not designed to tune.")
    st.markdown(
        "**What r does.** For a fixed clustering, raising r tips the balance towards fewer, larger clusters: every "
        "pair of clusters has a *critical power* r\\* above which the pCRP prefers that single partition with the "
        "two merged (the *exact merge path* below computes r\\* for each merge of a CRP fit's clusters). r\\* "
        "compares a per-point penalty for keeping clusters apart with the per-point likelihood gain of doing so, so "
        "it does not fade as the data grow. r\\* is about single partitions, not posterior mass: the sampler can "
        "keep the clusters a little above r\\* and merge them only further up, which is why this page shows the "
        "clusters the sampler holds for each r beside the merge path. Where real clusters do merge, they merge at "
        "any N, so r has to be chosen for each data set; this page does it.")
    st.markdown(
        "**How.** For each r on a grid, a pCRP chain is fitted on the training folds (the data's scaling and the "
        "prior are set from those folds alone); each held-out point then joins the existing cluster with the highest "
        "posterior seating probability N_k^r p(x | cluster k), and the held-out clustering is scored by the loss of "
        "the paper's eq. (5):")
    st.latex(r"L = \sum_{k=1}^{K} \sqrt{\sum_{j \in C_k} \lVert x_j - \bar x_k \rVert^2}")
    st.markdown(
        "The square root makes two clusters with the same mean cost more than one. The loss stays flat while r only "
        "removes small spurious clusters and jumps when r becomes large enough to merge real ones; the proposed r is "
        "the last one before the jump. Below the loss, on the same r axis: the number of clusters the sampler finds "
        "on all the data for each r, and the exact merge path, which shows at which r each pair of clusters of a "
        "CRP fit would be merged.")
    st.markdown(
        "**Why not the largest r that looks safe.** An r just below where real clusters merge is fragile: there the "
        "partition that keeps them and the one that merges them differ by only a few nats of log posterior, so some "
        "chains fall to the merged one. So the proposed r is the one before any repeat of the folds, or a quarter of "
        "the splits, sees the loss jump; then four chains at that r run on all the data you will fit, from unlike starts, and where they "
        "fall below the clusters a CRP fit keeps, or disagree, r steps down, keeping one grid step of margin below "
        "the largest r that holds (the r handed to the Explorer is that checked r).")
    st.markdown(
        "**Which covariance.** Each cluster's covariance can be full (a tilted ellipse), diagonal (an ellipse along the "
        "axes) or spherical (a circle), and each type gets its own r: a type that cannot draw the clusters' shape "
        "needs pieces of them, and its r is chosen for those. *Compare all three* cross-validates r for each type "
        "on the same folds, checks each, and compares the types by the held-out log predictive density at their own "
        "r: the simplest type within two standard errors of the best (split by split) is the one the data support.")


def page_data():
    """The Explorer's data (Old Faithful until it loads some) and the server's Dask scheduler (or None)."""
    ex = page_session().explorer
    ds = ex.dataset if ex is not None else None
    if ds is None:
        ds = data.old_faithful()
        st.info("No data loaded in the Explorer yet: using Old Faithful. Load other data on the Explorer page.")
    st.markdown(f"**Data:** {inert(ds.description)} N = {ds.n}, d = {ds.dim}.")
    # The Dask cluster, if any, is the server's setting; a visitor can never make the server connect anywhere.
    scheduler = configured_scheduler(st.secrets)
    st.caption(f"Cross-validation fits run on the Dask cluster at {scheduler}, set by this server's administrator."
               if scheduler else "Fits run on this server's cores (a Dask cluster can be set server-side: see docs/serving.md).")
    return ds, scheduler


def settings_form():
    """The cross validation's settings; returns them as a dict and whether Run was pressed."""
    cr = part()
    if not cr.covariance_chosen:  # the Explorer's rows' type, until the visitor runs with another
        cr.settings["covariance"] = explorer_covariance()
    with st.form("cv_settings"):
        cols = st.columns(4)
        r_start = setting_input(cols[0], "r_start", step=0.01, format="%.2f")
        r_stop = setting_input(cols[1], "r_stop", step=0.05, format="%.2f")
        r_step = setting_input(cols[2], "r_step", step=0.01, format="%.2f")
        folds = setting_input(cols[3], "folds")
        cols = st.columns(4)
        iters = setting_input(cols[0], "iters", step=100)
        burn_in = setting_input(cols[1], "burn_in", step=100)
        seed = setting_input(cols[2], "seed")
        repeats = setting_input(cols[3], "repeats")
        covariance = st.radio("Clusters' covariance", COVARIANCE_CHOICES, horizontal=True,
                              format_func=COVARIANCE_LABELS.get,
                              help="The type whose r is chosen (the Explorer's rows' type to start with), or all "
                                   "three, each with its own r, compared by held-out log predictive density.",
                              **bind(cr.settings, "covariance", widget_key("covariance"), form=True))
        submitted = st.form_submit_button(
            "Run cross validation", type="primary", key="cv_run",
            **write_back(cr.settings, [(name, widget_key(name)) for name in FORM_SETTINGS], covariance_submitted))
    settings = dict(r_start=r_start, r_stop=r_stop, r_step=r_step, folds=int(folds), iters=int(iters),
                    burn_in=int(burn_in), seed=int(seed), repeats=int(repeats), covariance=covariance)
    return settings, submitted


def run_cross_validation(ds, scheduler, grid, work, settings):
    """Cross validation (of one covariance type, or of all three compared), K for each r and the merge path of the
    type whose r is chosen, with a progress bar; the result goes to the page's part (ChooseRResult, replacing the
    one before) and the r it checked to the "r to use" box. ``work``: the run's estimated core-seconds, checked
    against the budget; ``settings``: from settings_form."""
    folds, iters, burn_in, seed, repeats = (settings[k] for k in ("folds", "iters", "burn_in", "seed", "repeats"))
    compare = settings["covariance"] == COMPARE
    if not sampler_ready(None if compare else settings["covariance"]):
        return
    bar = st.progress(0.0, text="Starting…")
    stages = ("cross validation", "clusters for each r", "merge path", "check on all the data")
    if compare:
        stages = tuple(f"{COVARIANCE_WORDS[t]}: {stage}" for t in COVARIANCE_TYPES
                       for stage in ("cross validation", "check")) + stages[1:3]

    def show(stage, fraction):
        bar.progress(min((stages.index(stage) + fraction) / len(stages), 1.0), text=f"{stage}: {fraction:.0%}")

    ticket = session_work().start(WorkTicket(budget=CHOOSE_R_BUDGET), "a new cross validation was started")
    try:
        if burn_in >= iters:
            raise SamplerError(f"Burn-in ({burn_in}) must be smaller than the sweeps per fit ({iters}).")
        if work > CHOOSE_R_BUDGET:
            raise WorkOverBudget(
                f"These settings need about {describe_seconds(work)} of sampling, more than the "
                f"{describe_seconds(CHOOSE_R_BUDGET)} a run of this page may use: use fewer values of r (a larger "
                "step), fewer folds or repeats, or fewer sweeps per fit" + (", or one covariance type" if compare
                                                                           else "") + ".")
        schedule = dict(iters=int(iters), burn_in=int(burn_in), seed=int(seed))
        thin = max(1, (int(iters) - int(burn_in)) // 50)
        choice = None
        if compare:
            choice, runs = compare_covariance_types(
                ds.X, standardize=ds.standardized, r_grid=grid, folds=int(folds), repeats=int(repeats), thin=thin,
                scheduler=scheduler, work=ticket,
                progress=lambda t, stage, done, total: show(f"{COVARIANCE_WORDS[t]}: {stage}", done / total),
                **schedule)
            covariance_type = choice.chosen
            result, check = runs[covariance_type]
        else:
            covariance_type = settings["covariance"]
            result = cross_validate(
                ds.X, {"covariance_type": covariance_type}, standardize=ds.standardized, r_grid=grid,
                folds=int(folds), repeats=int(repeats), thin=thin, scheduler=scheduler, work=ticket,
                progress=lambda done, total: show("cross validation", done / total), **schedule)
        niw = resolve_niw(ds.X, covariance_type=covariance_type)
        k_curve = k_over_r(ds.X, niw, grid, progress=lambda done, total: show("clusters for each r", done / total),
                           work=ticket, **schedule)
        show("merge path", 0.0)
        start = crp_start(ds.X, niw, n_chains=CHOOSE_R_START_CHAINS, thin=max(1, (int(iters) - int(burn_in)) // 100),
                          work=ticket, **schedule)
        path = merge_path(ds.X, start.labels, niw, config=start.config)
        if not compare:
            # the proposal checked where it will be used: pCRP chains on all the data against the CRP fit just made
            show("check on all the data", 0.0)
            _, check = check_with_chains(ds.X, result.chosen_r, grid, niw, crp_labels=start.labels,
                                         cv_mean_k=cv_kept_clusters(result, result.chosen_r), work=ticket,
                                         progress=lambda done, total: show("check on all the data", done / total),
                                         iters=int(iters), seed=int(seed))
        cr = part()
        cr.result = ChooseRResult(result, k_curve, path, check, covariance_type, choice, ds.description)
        cr.settings["use_r"] = round(check["r"] if check is not None else result.chosen_r, 2)
        bar.empty()  # done: the results below say what was run
    except (CVError, ModelError, PathError, SamplerError, WorkOverBudget) as err:
        bar.empty()
        st.error(inert(err))
    except WorkCancelled as err:
        bar.empty()
        st.warning(f"Cross validation {err}.")
    finally:
        session_work().finish(ticket)


def comparison_section(choice):
    """Which covariance type the data support: each type's held-out log predictive at its own r, how far behind the
    best, its loss and mean K, and the sentence that says which type and why (pcrp.analyses.cv.choose_covariance)."""
    st.subheader("Which covariance the data support", anchor=False)
    st.markdown(choice.text())
    rows = [{"covariance": COVARIANCE_LABELS[row["covariance_type"]], "r": f"{row['r']:g}",
             "log predictive per point": f"{row['log_pred']:.4f} ± {row['log_pred_se']:.4f}",
             "behind the best": "best" if row["best"] else f"{row['behind_best']:.4f} ± {row['behind_best_se']:.4f}",
             "loss of eq. (5)": f"{row['loss']:.3f} ± {row['loss_se']:.3f}", "mean K": f"{row['mean_k']:.2f}",
             "": "chosen" if row["chosen"] else ""}
            for row in choice.table()]
    if part().settings["present"]:  # a grid's canvas keeps its small type; a table takes the page's
        st.html(PRESENT_TABLE_CSS)
        with st.container(key=TYPES_TABLE_KEY):
            st.table(pd.DataFrame(rows).set_index("covariance"))
    else:
        st.dataframe(pd.DataFrame(rows), hide_index=True, key="choose-r-types")
    st.caption("Each type at its own r (cross-validated on the same folds, then checked on all the data); ± one "
               "standard error over the splits (\"behind the best\": of the split-by-split difference). Higher log "
               "predictive is better; the loss is the one r is chosen by, in the same units for every type, and "
               "does not choose the type.")


def results():
    """The proposed r, its figure and table, and the button that sends the chosen r to the Explorer."""
    cr = part()
    if cr.result is None:
        return
    result, k_curve, path, check = cr.result.cv, cr.result.k_curve, cr.result.path, cr.result.check
    covariance_type = cr.result.covariance_type
    proposed = result.chosen_r
    checked = check["r"] if check is not None else proposed

    if cr.result.types is not None:
        comparison_section(cr.result.types)
    title = (f"Checked r = {checked:g}" + (f" (cross validation proposed {proposed:g})" if checked != proposed else "")
             + f", {covariance_words(covariance_type)}")
    figure = plots.choose_r_figure(result, k_curve, path, checked, title)
    if cr.settings["present"]:  # Streamlit's chart theme sets its own small type: plotly's white one here
        figure.update_layout(template="plotly_white", font=dict(size=PRESENT_FONT),
                             title_font=dict(size=PRESENT_FONT + 4))
        figure.update_annotations(font_size=PRESENT_FONT)  # the panels' titles
        st.plotly_chart(figure, key="choose-r-figure", width="stretch", theme=None,
                        config={"displayModeBar": False})
    else:
        st.plotly_chart(figure, key="choose-r-figure", width="stretch")
    if result.blow_up.index is None:
        st.warning(f"Cross validation proposes r = {proposed:g}: {result.blow_up.reason}.")
    else:
        st.markdown(f"Cross validation proposes r = **{proposed:g}**: {result.blow_up.reason}.")
    if check is not None:
        check_section(check)
    if path is not None:
        st.markdown(describe_r(path, checked))

    log_pred, _ = result.curve("log_pred")
    best = int(np.argmax(log_pred))
    at_proposed = int(np.flatnonzero(np.isclose(result.r_grid, proposed))[0])
    st.markdown(
        "**Why the held-out log predictive density (in the table) does not pick the same r.** It scores how much "
        "density the fitted mixture puts on each held-out point, and a mixture that keeps extra small clusters spreads "
        "its density a little more widely, so it usually does best at the smallest r. The loss of eq. (5) asks "
        "another question: whether the held-out points fall into compact groups. Read the two together: on these "
        f"data the log predictive is highest at r = {result.r_grid[best]:g}, and the proposed r costs "
        f"{log_pred[best] - log_pred[at_proposed]:.3f} nats per held-out point against it"
        + (f"; from there to r = {result.r_grid[result.blow_up.index]:g}, where the loss jumps because real clusters "
           f"are merged, it changes by {log_pred[result.blow_up.index] - log_pred[at_proposed]:+.3f} nats per point."
           if result.blow_up.index is not None else "."))
    st.caption(f"Fitted on: {inert(cr.result.data_description)}  Standard errors are over "
               f"{result.loss.shape[0]} folds; folds share training points, so they are somewhat optimistic. "
               "The clusters-for-each-r chains and the CRP fit of the merge path use all the data.")
    st.dataframe(pd.DataFrame(result.table()).round(4), hide_index=True)

    cols = st.columns([1, 2])
    # any r the grid could have held: from the lowest start to the highest stop cross validation accepts
    chosen = cols[0].number_input("r to use (override if you disagree)", CV_PARAMS["r_start"].low,
                                  CV_PARAMS["r_stop"].high, step=0.01, format="%.2f",
                                  **bind(cr.settings, "use_r", widget_key("use_r")))
    if cols[1].button(f"Use r = {chosen:g} in the Explorer", key="use_r"):
        page_session().sent_r = float(chosen)  # the Explorer takes it at its next run
        st.switch_page("app_pages/explorer.py")
    explorer_type = explorer_covariance()
    if explorer_type != covariance_type:
        cols[1].caption(f"This r was chosen for {covariance_words(covariance_type)}; the Explorer's rows run with "
                        f"{covariance_words(explorer_type)}: set its clusters' covariance to "
                        f"{COVARIANCE_LABELS[covariance_type]} in its sidebar.")


def check_section(check):
    """The check of the proposed r on all the data: the r it keeps (green, or red when no r held), why, and what
    the chains did at each r tried (pcrp.analyses.cv.check_with_chains; its sentences use pcrp.analyses.collapse's verdicts)."""
    final, proposed = check["r"], check["proposed"]
    if not check["kept"]:
        st.error(f"**Checked r = {final:g}: no r tried keeps the clusters on all the data.** {check['text']}")
    elif final != proposed:
        st.warning(f"**Checked r = {final:g}** (stepped down from {proposed:g}). {check['text']}")
    else:
        st.success(f"**Checked r = {final:g}**, as proposed. {check['text']}")
    rows = [{"r": t["r"], "mean K per chain": ", ".join(f"{k:.2f}" for k in t["mean_K_per_chain"]),
             "verdict": "COLLAPSED" if t["collapsed"] else "chains disagree" if t["disagree"] else "keeps the clusters"}
            for t in check["tried"]]
    st.dataframe(pd.DataFrame(rows), hide_index=True, key="choose-r-check")
    st.caption(f"Each r tried: {CHECK_CHAINS} pCRP chains from unlike starts (k-means, one cluster, 20 random, k-means) "
               f"on all {check['n']:,} points. COLLAPSED: a chain's mean K fell more than half a cluster below the "
               f"{check['reference']} clusters the CRP fit keeps; the r kept has one grid step of margin below the "
               "largest r that holds, because the r at which real clusters merge differs from one data set to the "
               "next and cross validation's change point has no margin of its own.")


def page():
    """Choose r, top to bottom (in Present: the title, the results, then what the page does, folded)."""
    present = present_mode()
    present_style(present, text=EXPLORER_PRESENT_TEXT)
    title_row()
    if present:
        with st.expander("What r does, how cross validation chooses it, and which covariance"):
            introduction()
    else:
        introduction()
    ds, scheduler = page_data()
    settings, submitted = settings_form()
    grid = r_grid(settings["r_start"], settings["r_stop"], settings["r_step"])
    folds, repeats, iters = settings["folds"], settings["repeats"], settings["iters"]
    n_types = len(COVARIANCE_TYPES) if settings["covariance"] == COMPARE and ds.dim > 1 else 1
    work = choose_r_work(ds.n, ds.dim, grid.size, folds, repeats, iters, n_types=n_types)
    types = (f"for each of the {n_types} covariance types " if n_types > 1 else "")
    st.caption(f"This run: {types}{grid.size} values of r x {folds} folds x {repeats} repeat(s) x {iters:,} sweeps, "
               f"plus one chain per r, {CHOOSE_R_START_CHAINS} CRP chains and, to check the proposed r, "
               f"{CHECK_CHAINS} pCRP chains at a few values of r, on all {ds.n:,} points in {ds.dim} dimension(s): at "
               f"most about {describe_seconds(work)} of sampling (points x (expected clusters + 1) x sweeps, with "
               f"{expected_clusters(ds.n):.1f} expected clusters, at the measured cost of one evaluation in "
               f"{ds.dim} dimension(s)). A run may use at most {describe_seconds(CHOOSE_R_BUDGET)}; its fits take "
               "turns with every visitor's live chains on this server's cores, and stop when you leave the page."
               + (" At d = 1 the three covariance types are one model: one is cross-validated."
                  if settings["covariance"] == COMPARE and ds.dim == 1 else ""))
    if submitted:
        run_cross_validation(ds, scheduler, grid, work, settings)
    results()


page()

"""The tabs below the Explorer's live panel, once the run is paused or over: the posterior summary (diagnostics,
collapse, modes, point estimate, similarity, density, downloads), cluster sizes, densities and digits now, the run's
files (built when clicked) and its settings."""

import io
import re

import numpy as np
import pandas as pd
import streamlit as st

from app_pages.explorer_parts.live_panel import chain_label, partition_colours, run_prior
from app_pages.explorer_parts.row_notes import builtin_name, fit_words, group_prior, reference_group
from app_pages.explorer_parts.session import explorer
from app_pages.shared import guarded, inert, owned_download
from pcrp import plots
from pcrp.analyses.collapse import judge, judge_chains
from pcrp.analyses.density import predictive_density
from pcrp.app import live_view
from pcrp.basics.json_text import dumps
from pcrp.analyses.posterior import summarise
from pcrp.plots.posterior import mean_with_mcse, point_colours, recolour_points
from pcrp.summaries.summary import RHAT_THRESHOLD, nmi, rhat_warnings, vi

PLOT_CONFIG = {"displayModeBar": False}


def posterior_summaries(run):
    """pcrp.analyses.posterior summaries of every prior's chains, computed once per run and kept draw count (the latest
    one per prior is kept, in the run's view)."""
    cache = explorer().view(run).summaries
    out = {}
    for group in run.groups:
        chain_set = run.chain_set(group)
        if chain_set is None:
            continue
        key = (chain_set.n_kept, chain_set.K.shape[1])
        if group not in cache or cache[group][0] != key:
            cache[group] = (key, summarise(chain_set, run.dataset.X, run.niw, seed=run.config.get("seed") or 0,
                                           scale=True, prior=run_prior(run, group)))
        out[group] = cache[group][1]
    return out


def posterior_tab(run):
    ds_run = run.dataset
    st.caption("Over the kept draws of every chain of each prior: the partition that minimises the posterior "
               "expected variation of information (a SALSO-style search), how often each pair of points shares "
               "a cluster, the posterior density averaged over draws, and R-hat / ESS / MCSE as ArviZ defines them.")
    view = explorer().view(run)
    if not view.summarised and not st.button("Summarise the posterior", key="summarise", type="primary"):
        return
    view.summarised = True
    with st.spinner("Summarising the posterior…"):
        summaries = posterior_summaries(run)
    if not summaries:
        st.info("No draws kept yet: they start after the burn-in.")
        return
    note = log_joint_note(run, summaries)
    if note:
        st.caption(note)
    cols = st.columns(len(summaries))
    for col, (group, summary) in zip(cols, summaries.items()):
        with col:
            st.markdown(f"**{chain_label(run, group)}**")
            normalised = group_prior(run, group).normalised
            st.plotly_chart(plots.diagnostics_table(summary.diagnostics, title=f"{group}: MCMC diagnostics",
                                                    names=None if normalised else {"log_joint": UNNORMALISED}),
                            key=f"diag-{group}", width="stretch", config=PLOT_CONFIG)
            for line in rhat_lines(summary.diagnostics):
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
                                                       ds_run.columns, f"{group}: point estimate (faint = unsure)",
                                                       colour_index=partition_colours(run, group,
                                                                                      summary.point.labels))
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
                                          f"{group}: {summary.density.density.label.split(' (')[0]} (mean over draws)",
                                          colour_index=partition_colours(run, group, point_labels))
            plots.add_new_cluster_term(fig, summary.density)
            st.plotly_chart(fig, key=f"postdens-{group}", width="stretch", config=PLOT_CONFIG)
            st.caption(density_caption(summary.density))
            if summary.note:
                st.caption(summary.note)
            downloads(group, summary)


# A log joint known only up to a constant (the pCRP's: its seating prior has no normalising constant), as the
# diagnostics table names it.
UNNORMALISED = "log joint + c"


def log_joint_note(run, summaries):
    """Why the rows' log joints are not compared (a sentence), when two or more rows are summarised and one of them
    has a prior without a normalising constant (the pCRP's): its log joint is log p(z, X) + c with c unknown, so its
    value beside another row's (the CRP's -454.2 beside the pCRP's +1,580.1) says nothing about either."""
    if len(summaries) < 2:
        return ""
    loose = [group for group in summaries if not group_prior(run, group).normalised]
    if not loose:
        return ""
    values = ", ".join(f"{group} {summaries[group].diagnostics['log_joint']['mean']:+,.1f}" for group in summaries)
    return (f"The log joints ({values}) are not comparable between rows: {' and '.join(loose)}'s is known only up "
            f"to a constant c ('{UNNORMALISED}': its seating prior has no normalising constant). Compare a log joint "
            "between the chains of one row (their modes, their R-hat), never between rows.")


def rhat_lines(diagnostics):
    """Warning lines for K and the log joint of one prior's chains (:meth:`ChainSet.diagnostics`), in the R-hat
    badge's words (live_panel.rhat_text): the library's warning where the chains disagree
    (pcrp.summaries.summary.rhat_warnings), a softer line where R-hat is above the threshold but the chains' means lie
    within MCSE of each other (pcrp.app.live_view.chain_verdict), nothing where they agree."""
    lines = []
    for name, key in (("K", "K"), ("the log joint", "log_joint")):
        verdict = live_view.chain_verdict(diagnostics[key])
        if verdict.state == "disagree":
            lines += rhat_warnings({name: diagnostics[key]})
        elif verdict.state == "unsettled":
            means = ", ".join(mean_with_mcse(m, e) for m, e in zip(verdict.means, verdict.mcses))
            lines.append(f"R-hat on {name} is {verdict.rhat:.4f}, above {RHAT_THRESHOLD} (but not above "
                         f"{live_view.UNSETTLED_MAX_RHAT}), and the chains' means ({means}) lie within "
                         f"{live_view.MCSE_Z:g} Monte Carlo standard errors of each other: nothing here says that the "
                         "chains settled in different places. More sweeps would settle R-hat; check again after them.")
    return lines


def collapse_section(run, group, summaries):
    """For a tuned row (the pCRP's) beside a reference row (the CRP's): pcrp.analyses.collapse's verdict against what
    the CRP row's point estimate, with the same covariance type, shows to be real on these data
    (pcrp.analyses.run_summary.data_reference: the true classes, the covariance type the data support and the clusters
    cross validation of r for this type keeps, where known), in the library's words: red when it collapsed or its
    chains disagree, orange when it keeps fewer clusters than the CRP's count alone (which shows no merge by itself).
    Chains whose R-hat is above the threshold while their means agree within MCSE (rhat_lines says so) are not called
    disagreeing here either."""
    from pcrp.analyses.run_summary import data_reference

    crp = reference_group(run)
    if group_prior(run, group).tuned is None or crp is None or crp not in summaries:
        return
    crp_summary, summary = summaries[crp], summaries[group]
    crp_labels = (crp_summary.point.labels if crp_summary.point is not None else crp_summary.chains.labels[0, -1])
    reference = data_reference(crp_labels, run.dataset.X, crp_from="the CRP row",
                               covariance_type=run.niw.covariance_type, name=builtin_name(run), data=run.dataset,
                               true_labels=run.dataset.labels)
    what = fit_words(run, group)
    verdict = judge_chains(summary.chains, reference, summary.diagnostics, what=what)
    states = {live_view.chain_verdict(summary.diagnostics[key]).state for key in ("K", "log_joint")}
    unsettled = verdict.disagree and "disagree" not in states
    if unsettled:  # the collapse part of the verdict only
        verdict = judge(verdict.chain_mean_k, agree=True, reference=reference, what=what,
                        prior=summary.chains.config["prior"],
                        inits=list(getattr(summary.chains, "inits", []) or []) or None)
    if verdict.flagged:
        st.error(verdict.text)  # the library's sentences: numbers and the row's name
    elif verdict.fewer:
        st.warning(verdict.text)
    else:
        st.caption(f"No collapse: every chain of {what} keeps {reference.words()}"
                   + (", and R-hat, above 1.01, needs more sweeps (above)." if unsettled else
                      ", and the chains agree."))


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
                         help="The command line's result format: pcrp.runs.chains.ChainSet.load reads it.")
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
            fig = plots.cluster_sizes(snap.labels, f"{group}: cluster sizes now", y_max=size_max)
            col.plotly_chart(recolour_sizes(fig, snap.labels, partition_colours(run, group, snap.labels)),
                             key=f"sizes-{group}", width="stretch", config=PLOT_CONFIG)
    with tabs[2]:
        cols = st.columns(len(firsts))
        for col, (group, snap) in zip(cols, firsts.items()):
            prior = run_prior(run, group)
            colour_index = partition_colours(run, group, snap.labels)
            if ds_run.dim == 1:
                fig = plots.density_1d(ds_run.X, snap.labels, run.niw, f"{group}: predictive density now",
                                       prior=prior)
                recolour_components(fig, ds_run.X[:, 0], snap.labels, colour_index, prior, run.niw)
            else:
                fig = plots.density_2d(ds_run.X, snap.labels, run.niw, ds_run.columns,
                                       f"{group}: predictive density now", prior=prior)
                recolour_points(fig, colour_index)
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


def recolour_sizes(fig, labels, colour_index):
    """plots.cluster_sizes' bars (largest first) in the colours their clusters have on the page (``colour_index``
    (N,): partition_colours); bars of equal size are equal whichever cluster each shows."""
    ids, first, counts = np.unique(labels, return_index=True, return_counts=True)
    order = np.argsort(-counts, kind="stable")
    fig.data[0].marker.color = point_colours(np.asarray(colour_index)[first[order]])
    return fig


def recolour_components(fig, x, labels, colour_index, prior, niw):
    """plots.density_1d's dashed cluster components in the colours their clusters have on the page: each component
    line is the cluster whose predictive term (pcrp.analyses.density.predictive_density, in np.unique order) it
    draws."""
    lines = [trace for trace in fig.data if (trace.name or "").startswith("component")]
    if not lines:
        return fig
    _, comps = predictive_density(np.asarray(lines[0].x), x, np.asarray(labels), prior, niw)
    first = np.unique(labels, return_index=True)[1]
    colours = point_colours(np.asarray(colour_index)[first])
    for line in lines:
        k = int(np.argmin(np.abs(comps[:-1] - np.asarray(line.y)[None, :]).max(axis=1)))
        line.line.color = colours[k]
    return fig


def traces_csv(chain):
    snap = chain.snapshot()
    return pd.DataFrame({"sweep": np.arange(1, snap.K.size + 1), "K": snap.K,
                         "log_joint": snap.log_joint}).to_csv(index=False)


def now_csv(chain):
    return pd.DataFrame({"label": chain.snapshot().labels}).to_csv(index_label="point")


def details_section():
    """The tabs below the live panel, once the run is paused or over."""
    run = explorer().run
    if run is not None:
        with guarded("the details"):
            if run.running:
                st.caption("The posterior summary, cluster sizes, densities, digits and files appear here when the "
                           "run is paused or finished.")
            else:
                details(run)

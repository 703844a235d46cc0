"""The tabs below the Explorer's live panel, once the run is paused or over: the posterior summary (diagnostics,
collapse, modes, point estimate, similarity, density, downloads), cluster sizes, densities and digits now, the run's
files (built when clicked) and its settings."""

import io
import re

import numpy as np
import pandas as pd
import streamlit as st

from app_pages.explorer_parts.live_panel import chain_label, run_prior
from app_pages.explorer_parts.row_notes import group_prior, reference_group
from app_pages.shared import guarded, inert, owned_download
from pcrp import plots
from pcrp.analyses.collapse import judge_chains, kept_clusters
from pcrp.basics.json_text import dumps
from pcrp.analyses.posterior import summarise
from pcrp.summaries.summary import nmi, rhat_warnings, vi

state = st.session_state

PLOT_CONFIG = {"displayModeBar": False}


def posterior_summaries(run):
    """pcrp.analyses.posterior summaries of every prior's chains, computed once per run and kept draw count."""
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
               "a cluster, the posterior density averaged over draws, and R-hat / ESS / MCSE as ArviZ defines them.")
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
    """For a tuned row (the pCRP's) beside a reference row (the CRP's): pcrp.analyses.collapse's verdict against the clusters of the CRP's point estimate on
    the same data, in words (red when it collapsed or its chains disagree)."""
    crp = reference_group(run)
    if group_prior(run, group).tuned is None or crp is None or crp not in summaries:
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

"""Choose r: cross validation of the pCRP power on the explorer's data (paper Sec. 2.3)."""

import numpy as np
import pandas as pd
import streamlit as st

from pcrp import data, plots
from pcrp.cv import CVError, cross_validate
from pcrp.dask_cluster import configured_scheduler
from pcrp.model import ModelError, resolve_niw
from pcrp.sampler import SamplerError, warm_up

state = st.session_state

st.title("Choose r by cross validation")
st.markdown(
    "For each power r on a grid, a pCRP chain is fitted on the training folds; each held-out point then joins "
    "the existing cluster with the highest posterior seating probability N_k^r p(x | cluster k), and the "
    "held-out clustering is scored by the loss of the paper's eq. (5):")
st.latex(r"L = \sum_{k=1}^{K} \sqrt{\sum_{j \in C_k} \lVert x_j - \bar x_k \rVert^2}")
st.markdown(
    "The square root makes two clusters with the same mean cost more than one. The loss stays flat while r "
    "only removes small spurious clusters and **blows up** when r becomes large enough to merge real ones; the "
    "proposed r is the grid value just before that. The held-out log predictive density (higher is better) is "
    "shown as a second opinion.")

ds = state.get("dataset")
if ds is None:
    ds = data.old_faithful()
    st.info("No data loaded in the Explorer yet: using Old Faithful. Load other data on the Explorer page.")
st.markdown(f"**Data:** {ds.description} N = {ds.n}, d = {ds.dim}.")
# The Dask cluster, if any, is the server's setting; a visitor can never make the server connect anywhere.
scheduler = configured_scheduler(st.secrets)
st.caption(f"Fits run on the Dask cluster at {scheduler}, set by this server's administrator."
           if scheduler else "Fits run on this server's cores (a Dask cluster can be set server-side: see README).")

with st.form("cv_settings"):
    cols = st.columns(4)
    r_start = cols[0].number_input("first r (1 + eps)", 0.05, 5.0, 1.01, step=0.01, format="%.2f", key="cv_r_start")
    r_stop = cols[1].number_input("last r", 0.1, 6.0, 2.0, step=0.05, format="%.2f", key="cv_r_stop")
    r_step = cols[2].number_input("step", 0.01, 1.0, 0.05, step=0.01, format="%.2f", key="cv_r_step")
    folds = cols[3].number_input("folds", 2, 20, 5, key="cv_folds")
    cols = st.columns(4)
    iters = cols[0].number_input("sweeps per fit", 20, 50_000, 1000, step=100, key="cv_iters")
    burn_in = cols[1].number_input("burn-in per fit", 0, 49_999, 500, step=100, key="cv_burn_in")
    seed = cols[2].number_input("seed", 0, 2**31 - 1, 0, key="cv_seed")
    repeats = cols[3].number_input("repeats of the folds", 1, 10, 1, key="cv_repeats")
    submitted = st.form_submit_button("Run cross validation", type="primary", key="cv_run")

if submitted:
    grid = np.round(np.r_[r_start, np.arange(np.ceil(r_start / r_step + 1e-9) * r_step, r_stop + 1e-9, r_step)], 4)
    grid = np.unique(grid[grid <= r_stop + 1e-9])
    bar = st.progress(0.0, text="Preparing the sampler…")
    try:
        if burn_in >= iters:
            raise SamplerError(f"Burn-in ({burn_in}) must be smaller than the sweeps per fit ({iters}).")
        warm_up()
        result = cross_validate(
            ds.X, standardize=ds.standardized, r_grid=grid, folds=int(folds), repeats=int(repeats), iters=int(iters),
            burn_in=int(burn_in), thin=max(1, (int(iters) - int(burn_in)) // 50), seed=int(seed),
            scheduler=scheduler,
            progress=lambda done, total: bar.progress(done / total, text=f"{done}/{total} fits done"))
        state.cv_result = result
        state.cv_data_description = ds.description
    except (CVError, ModelError, SamplerError) as err:
        bar.empty()
        st.error(str(err))

result = state.get("cv_result")
if result is None:
    st.stop()

st.plotly_chart(plots.cv_curves(result, "Cross validation"), key="cv-curves", width="stretch")
if result.blow_up.index is None:
    st.warning(f"Proposed r = {result.chosen_r:g}: {result.blow_up.reason}.")
else:
    st.success(f"Proposed r = **{result.chosen_r:g}**: {result.blow_up.reason} "
               f"(r = {result.r_grid[result.blow_up.index]:g}).")
st.caption(f"Fitted on: {state.get('cv_data_description', '')}  Standard errors are over "
           f"{result.loss.shape[0]} folds; folds share training points, so they are somewhat optimistic.")
st.dataframe(pd.DataFrame(result.table()).round(4), hide_index=True)

cols = st.columns([1, 2])
chosen = cols[0].number_input("r to use (override if you disagree)", 0.05, 3.0, round(result.chosen_r, 2),
                              step=0.01, format="%.2f", key="cv_use_r")
if cols[1].button(f"Use r = {chosen:g} in the Explorer", key="use_r"):
    state.pending_r = float(chosen)
    st.switch_page("app_pages/explorer.py")

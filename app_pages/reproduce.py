"""Reproduce the paper: one experiment at a time, our numbers next to the published ones."""

from pathlib import Path

import pandas as pd
import streamlit as st

from pcrp.cv import CVError
from pcrp.reproduce import (EXPERIMENTS, FULL, N_CHAINS, QUICK, claims, disagreement_lines, display_rows, figures,
                            gap_lines, run_experiment)
from pcrp.sampler import SamplerError, warm_up

state = st.session_state
PUBLISHED_RUN = Path(__file__).resolve().parent.parent / "docs" / "reproduce" / "tables.md"

st.title("Reproduce the paper")
st.markdown(
    "Each experiment cross-validates r on a separate sample, then runs **CRP-Oracle** "
    "(alpha = K_true / ln N), **CRP** (alpha = 1) and **pCRP** (alpha = 1, the cross-validated r) on the same "
    f"data, {N_CHAINS} chains per method from different starts. *Full* is the paper's protocol (20,000 sweeps, "
    "burn-in 10,000, thin 5; minutes per experiment); *quick* uses 2,000 sweeps.")
st.markdown(
    "**Reading the table.** Our numbers stand next to the paper's. Ours are means over the kept draws of all "
    "chains, written *value ± standard error*; the standard error is the Monte Carlo one (it allows for "
    "successive draws being alike). NMI (higher is better) and VI in bits (lower is better) compare the "
    "clustering with the true one; K is the mean number of clusters and K max the largest seen. **R-hat** compares "
    "the chains: near 1 they agree; above 1.01 they disagree, the row is flagged, and its numbers depend on where "
    "the chains started. The paper does not give its simulation parameters: our Sim 1 and Sim 2 are calibrated "
    "to its CRP and CRP-Oracle rows, so those rows are a check of the calibration and the pCRP rows are the "
    "actual comparison.")

titles = {e.title: key for key, e in EXPERIMENTS.items()}
cols = st.columns([2, 1, 1])
title = cols[0].selectbox("Experiment", list(titles), key="repro_experiment")
mode = cols[1].radio("Protocol", ["quick", "full"], horizontal=True, key="repro_mode")
seed = cols[2].number_input("Seed", 0, 2**31 - 1, 0, key="repro_seed")
key = titles[title]

if st.button("Run", type="primary", key="repro_run"):
    bar = st.progress(0.0, text="Preparing the sampler…")
    stages = ["cross validation", "CRP-Oracle", "CRP", "pCRP"]

    def progress(stage, fraction):
        done = stages.index(stage) + fraction
        bar.progress(min(done / len(stages), 1.0), text=f"{stage}: {fraction:.0%}")

    try:
        warm_up()
        result = run_experiment(EXPERIMENTS[key], QUICK if mode == "quick" else FULL, seed=int(seed),
                                progress=progress)
        state.setdefault("repro_results", {})[key] = (mode, int(seed), result)
        bar.progress(1.0, text="done")
    except (CVError, SamplerError) as err:
        bar.empty()
        st.error(str(err))

stored = state.get("repro_results", {}).get(key)
if stored is None:
    st.info("Press **Run** to run this experiment.")
else:
    run_mode, run_seed, result = stored
    e = result.experiment
    st.subheader(f"{e.title} ({run_mode} protocol, seed {run_seed})")
    st.markdown(f"Cross validation on {result.cv.settings['n']} points proposed **r = {result.cv.chosen_r:g}**: "
                f"{result.cv.blow_up.reason}.")
    table = pd.DataFrame(display_rows(result))
    st.table(table.loc[:, (table != "").any()], hide_index=True)  # no empty columns (Old Faithful: no NMI/VI)
    for line in disagreement_lines(result):
        st.warning(line)
    for line in gap_lines(result):
        st.info(line)
    if e.paper_note:
        st.caption(e.paper_note)
    done = [res for _, _, res in state.get("repro_results", {}).values()]
    for line in claims(done):
        st.markdown(f"- {line}")
    for name, fig in figures(result).items():
        st.plotly_chart(fig, key=f"repro-{key}-{name}", width="stretch")

if PUBLISHED_RUN.is_file():
    with st.expander("Our full run of every experiment (docs/reproduce/tables.md)"):
        st.markdown(PUBLISHED_RUN.read_text())

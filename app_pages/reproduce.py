"""Reproduce the paper: one experiment at a time, our numbers next to the published ones.

The page's settings and the last result of each experiment are its part of the session's one object
(pcrp.app.page_session.ReproduceState); its widgets are drawn from the settings."""

from pathlib import Path

import pandas as pd
import streamlit as st

from app_pages.shared import bind, page_part, sampler_ready, session_work
from pcrp.app.page_session import ReproduceState
from pcrp.sampling.compute import WorkCancelled, WorkOverBudget, WorkTicket, describe_seconds
from pcrp.analyses.cv import CVError
from pcrp.experiments.reproduce import (EXPERIMENTS, FULL, N_CHAINS, QUICK, REPRODUCE_BUDGET, SPREAD_MULT, TOLERANCE, claims,
                            data_seeds, display_seed_rows, extra_lines, figures, reproduce_work, run_over_seeds,
                            seed_disagreement_lines, seed_gap_lines, versus_lines)
from pcrp.experiments.reproduce.methods import extra_methods_text
from pcrp.basics.errors import SamplerError

PUBLISHED_RUN = Path(__file__).resolve().parent.parent / "docs" / "reproduce" / "tables.md"
PUBLISHED_COMPARISON = Path(__file__).resolve().parent.parent / "docs" / "compare" / "compare.json"


def introduction():
    """What each experiment runs and how to read its table."""
    st.title("Reproduce the paper")
    st.markdown(
        "Each experiment cross-validates r on a separate sample, checks it with chains on the data compared (stepping "
        "down where the pCRP collapses there, with one grid step of margin), then runs **CRP-Oracle** "
        f"(alpha = K_true / ln N), **CRP** (alpha = {FULL.alpha:g}) and **pCRP** (alpha = {FULL.alpha:g}, the checked "
        f"r) on the same data, {N_CHAINS} chains per method from different starts. *Full* is the paper's protocol "
        f"({FULL.iters:,} sweeps, burn-in {FULL.burn_in:,}, thin {FULL.thin}; minutes per experiment and data set); "
        f"*quick* uses {QUICK.iters:,} sweeps. A simulation is "
        f"drawn afresh several times (quick: {QUICK.n_seeds} data sets, full: {FULL.n_seeds}), each with its own cross "
        "validation, because one data set's numbers differ from the next's by as much as the methods differ. After "
        f"the paper's three methods come priors **beyond the paper**, {extra_methods_text()}, at their registry "
        "defaults on the same data and chains.")
    st.markdown(
        "**Reading the table.** Our numbers stand next to the paper's. Ours are means over the kept draws of all "
        "chains, written *value ± standard error*; the standard error is the Monte Carlo one (it allows for "
        "successive draws being alike). NMI (higher is better) and VI in bits (lower is better) compare the "
        "clustering with the true one; K is the mean number of clusters and K max the largest seen. Over several "
        "data sets a cell reads *mean ± spread (MCSE ...)*: the mean over data sets, the standard deviation between "
        "data sets, and the typical Monte Carlo standard error within one run. The paper's number comes from one data "
        f"set; '(outside)' marks one more than {SPREAD_MULT:g} spreads from our mean and beyond the calibration's "
        f"tolerance ({', '.join(f'{v:g} {k}' for k, v in TOLERANCE.items())}). **R-hat** compares "
        "the chains: near 1 they agree; above 1.01 they disagree, the row is flagged with the data sets where it "
        "happened, and there its numbers depend on where the chains started. A pCRP fit that **collapsed** (a chain's "
        "mean K fell more than half a cluster below the clusters the CRP keeps on the same data) or whose chains "
        "disagree is never pooled into the pCRP's mean: such data sets form their own row, *pCRP (flagged)*, and a "
        "sentence counts on how many data sets the pCRP beat, matched or lost to the CRP. A pCRP row is also flagged "
        "where, at its r, the true clusters beat the best merged state of the exact merge path by only a few nats. "
        "The paper does not give its simulation parameters: our Sim 1 and Sim 2 are calibrated "
        "to its CRP and CRP-Oracle rows, so those rows are a check of the calibration and the pCRP rows are the "
        "actual comparison.")


PROTOCOLS = {"quick": QUICK, "full": FULL}


def part():
    """This session's part of the page (pcrp.app.page_session.ReproduceState), made on its first visit: the first
    experiment, the quick protocol, seed 0, each protocol's data sets, the priors beyond the paper too."""
    return page_part("reproduce", lambda: ReproduceState({
        "experiment": next(iter(EXPERIMENTS.values())).title, "mode": "quick", "seed": 0,
        **{f"sets_{mode}": protocol.n_seeds for mode, protocol in PROTOCOLS.items()}, "extra": True}))


def widget(name):
    """The keyword arguments binding a widget to setting ``name`` (its key: "repro_" + the name)."""
    return bind(part().settings, name, "repro_" + name)


def choices():
    """The experiment, protocol, first data seed, number of data sets and the extra priors; returns
    (experiment key, protocol name, protocol, seed, data sets, extra)."""
    titles = {e.title: key for key, e in EXPERIMENTS.items()}
    cols = st.columns([2, 1, 1, 1])
    title = cols[0].selectbox("Experiment", list(titles), **widget("experiment"))
    mode = cols[1].radio("Protocol", list(PROTOCOLS), horizontal=True, **widget("mode"))
    seed = cols[2].number_input("First data seed", 0, 2**31 - 1000, **widget("seed"))
    protocol = PROTOCOLS[mode]
    key = titles[title]
    simulated = len(data_seeds(EXPERIMENTS[key], 0, 2)) > 1
    n_sets = cols[3].number_input("Data sets", 1, 10, disabled=not simulated,
                                  help="Simulations only: how many data sets to draw (seeds from the first data seed "
                                       "on). MNIST and Old Faithful are one fixed data set.",
                                  **widget(f"sets_{mode}"))
    extra = st.checkbox(f"Also run {extra_methods_text()} (beyond the paper)", **widget("extra"))
    return key, mode, protocol, int(seed), int(n_sets), extra


def run_experiment(key, mode, protocol, seed, n_sets, extra):
    """Run one experiment over its data sets with a progress bar; the result goes to the session."""
    if not sampler_ready("full"):  # the paper's mixtures: full covariances
        return
    bar = st.progress(0.0, text="Starting…")

    def progress(text, fraction):
        bar.progress(min(fraction, 1.0), text=f"{text} ({fraction:.0%} of the whole)")

    ticket = session_work().start(WorkTicket(budget=REPRODUCE_BUDGET), "another experiment was started")
    try:
        need = reproduce_work(EXPERIMENTS[key], protocol, int(n_sets), extra=extra)
        if need > REPRODUCE_BUDGET:  # before anything runs (run_over_seeds checks the same against the ticket)
            raise WorkOverBudget(
                f"This experiment needs about {describe_seconds(need)} of sampling, more than the "
                f"{describe_seconds(REPRODUCE_BUDGET)} a run of this page may use: choose fewer data sets or the "
                "quick protocol, or run it with the command line (`pcrp reproduce`), which has no such limit.")
        result = run_over_seeds(EXPERIMENTS[key], protocol, seed=int(seed), n_seeds=int(n_sets), extra=extra,
                                progress=progress, work=ticket)
        part().results[key] = (mode, int(seed), result)  # replaces this experiment's previous result
        bar.progress(1.0, text="done")
    except (CVError, SamplerError, WorkOverBudget) as err:
        bar.empty()
        st.error(str(err))
    except WorkCancelled as err:
        bar.empty()
        st.warning(f"The experiment {err}.")
    finally:
        session_work().finish(ticket)


def experiment_results(key):
    """The stored result of experiment ``key``: its table, notes, claims and figures."""
    stored = part().results.get(key)
    if stored is None:
        st.info("Press **Run** to run this experiment.")
    else:
        run_mode, run_seed, result = stored
        e, first = result.experiment, result.first
        sets = (f"{len(result.runs)} data sets, seeds {result.seeds[0]}-{result.seeds[-1]}" if len(result.runs) > 1
                else f"data seed {run_seed}")
        st.subheader(f"{e.title} ({run_mode} protocol, {sets})")
        st.markdown("Cross validation proposed **r = " + ", ".join(f"{run.cv.chosen_r:g}" for run in result.runs)
                    + "**; the pCRP ran at **r = " + ", ".join(f"{run.methods['pCRP'].r:g}" for run in result.runs)
                    + "** (checked on the data compared: where pCRP chains there fell below the CRP's clusters or "
                    "disagreed, r stepped down, keeping one grid step of margin); on data set "
                    f"{first.seed}, {first.cv.blow_up.reason}.")
        table = pd.DataFrame(display_seed_rows(result))
        st.table(table.loc[:, (table != "").any()], hide_index=True)  # no empty columns (Old Faithful: no NMI/VI)
        for line in versus_lines(result):
            st.markdown(line)
        for line in seed_disagreement_lines(result):
            st.warning(line)
        for line in seed_gap_lines(result):
            st.info(line)
        for line in extra_lines(result):
            st.markdown(line)
        if e.paper_note:
            st.caption(e.paper_note)
        done = [res for _, _, res in part().results.values()]
        for line in claims(done):
            st.markdown(f"- {line}")
        if len(result.runs) > 1:
            st.caption(f"The figures show data set {first.seed}.")
        for name, fig in figures(first).items():
            st.plotly_chart(fig, key=f"repro-{key}-{name}", width="stretch")


def page():
    """Reproduce the paper, top to bottom."""
    introduction()
    key, mode, protocol, seed, n_sets, extra = choices()
    need = reproduce_work(EXPERIMENTS[key], protocol, n_sets, extra=extra)
    st.caption(f"This run: about {describe_seconds(need)} of sampling (points x (expected clusters + 1) x sweeps "
               "over every chain and cross-validation fit, at the measured cost of one evaluation for these data). A "
               f"run of this page may use at most {describe_seconds(REPRODUCE_BUDGET)}; its chains take turns with "
               "every visitor's on this server's cores, and stop when you leave the page.")
    if st.button("Run", type="primary", key="repro_run"):
        run_experiment(key, mode, protocol, seed, n_sets, extra)
    experiment_results(key)
    if PUBLISHED_RUN.is_file():
        with st.expander("Our full run of every experiment (docs/reproduce/tables.md)"):
            st.markdown(PUBLISHED_RUN.read_text())
    comparison()


def comparison():
    """Beyond the paper: the pCRP against the other priors and scikit-learn's BayesianGaussianMixture on more data
    sets (`pcrp compare`'s shipped run, docs/compare/compare.md): where it wins and where it does not, and one
    figure."""
    if not PUBLISHED_COMPARISON.is_file():
        return
    from pcrp.experiments.compare import read_report
    from pcrp.plots.compare import compare_figure

    report = read_report(PUBLISHED_COMPARISON)
    st.header("Compared with what? (beyond the paper)")
    st.markdown("Does the pCRP fix over-clustering, compared with the CRP, Pitman-Yor, the MFM, the sparse finite "
                "mixture and scikit-learn's BayesianGaussianMixture? Each prior with 4 chains and the automatic "
                "budget, the pCRP at the r chosen and checked on each data set. On how many data sets (each data "
                "seed of a simulation counted once) the **pCRP's** NMI was higher, and its mean K nearer the true "
                "number of clusters, than each other method's:")
    st.dataframe(report["counts"], hide_index=True, width="stretch")
    st.markdown(report["flagged"])
    st.plotly_chart(compare_figure(report["rows"]), key="repro-compare", width="stretch")
    st.caption(f"Made by {report['provenance']}; the table is in docs/compare/compare.md.")


page()

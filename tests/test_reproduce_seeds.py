"""Reproduce over data sets drawn with different seeds: rows carry the mean, the spread between data sets and the
within-run MCSE; the priors beyond the paper; the pCRP's margin on the exact merge path."""

from dataclasses import replace

import numpy as np
import pytest
from scipy.special import gammaln

from pcrp import data as data_mod
from pcrp.model import resolve_niw
from pcrp.model.niw_math import log_marginal
from pcrp.experiments.reproduce import (EXPERIMENTS, EXTRA_METHODS, FLAGGED_PCRP, METHODS, QUICK, Experiment, Protocol, data_seeds,
                            extra_lines, markdown_seed_table, run_over_seeds, seed_disagreement_lines, seed_gap_lines,
                            seed_rows, true_partition_margin, write_report)

TINY = Protocol(iters=120, burn_in=60, thin=10, cv_iters=60, cv_burn_in=30, cv_thin=10, cv_folds=2, n_seeds=3,
                check_iters=120)
SMALL = Experiment("sim2-small", "Sim 2, N = 80", "Table 1", 3, "sim2", 80, 40, {"CRP": {"NMI": 0.9, "K": 4.8}})


@pytest.fixture(scope="module")
def over_seeds():
    return run_over_seeds(SMALL, TINY, seed=2, n_jobs=1, r_grid=[1.05, 1.5, 3.0], n_chains=2)


def test_simulations_run_on_several_data_sets_and_the_others_on_one():
    assert QUICK.n_seeds == 3 and Protocol().n_seeds == 10
    assert data_seeds(EXPERIMENTS["sim1-300"], 5, protocol=QUICK) == [5, 6, 7]
    assert data_seeds(EXPERIMENTS["sim2-2000"], 0) == list(range(10))
    assert data_seeds(EXPERIMENTS["mnist-1000"], 4, n_seeds=3) == [4]
    assert data_seeds(EXPERIMENTS["old-faithful"], 0) == [0]


def test_rows_carry_mean_spread_and_mcse_over_data_sets(over_seeds, tmp_path):
    res = over_seeds
    assert res.seeds == [2, 3, 4]
    # each data set is drawn afresh: different points, each with its own CV of r
    xs = [run.data.X[:, 0] for run in res.runs]
    assert not np.allclose(xs[0], xs[1]) and all(run.data.source["seed"] == s for run, s in zip(res.runs, res.seeds))
    assert list(res.first.methods) == list(METHODS + EXTRA_METHODS)
    rows = {row["method"]: row for row in seed_rows(res)}
    # the pCRP's data sets are split between its row (where it held) and "pCRP (flagged)", never pooled
    flagged = [run.seed for run in res.runs if run.methods["pCRP"].flagged]
    assert rows.get(FLAGGED_PCRP, {}).get("seeds", []) == flagged
    assert rows.get("pCRP", {}).get("seeds", []) == [s for s in res.seeds if s not in flagged]
    for name, row in rows.items():
        if name == "Ground truth":
            continue
        method = "pCRP" if name == FLAGGED_PCRP else name
        per = [run.methods[method] for run in res.runs if run.seed in row["seeds"]]
        for col in ("NMI", "VI", "K"):
            means = np.array([m.metrics[col][0] for m in per])
            mcse = np.array([m.metrics[col][1] for m in per])
            assert row[col] == pytest.approx(means.mean())
            # nan for a row over one data set (the pCRP's data sets split between its two rows can leave one)
            assert row[col + " spread"] == pytest.approx(means.std(ddof=1) if len(per) > 1 else np.nan, nan_ok=True)
            assert row[col + " MCSE"] == pytest.approx(np.sqrt(np.mean(mcse ** 2)))
        assert row["beyond_paper"] == (method in EXTRA_METHODS)
        assert row["K max"] == max(int(m.K[:, 60:].max()) for m in per)
        assert sum(row["P(K)"].values()) == pytest.approx(1.0)
    assert sorted(r for name in ("pCRP", FLAGGED_PCRP) for r in rows.get(name, {}).get("r", [])) == sorted(
        run.methods["pCRP"].r for run in res.runs)
    assert all(run.methods["pCRP"].r <= run.cv.chosen_r for run in res.runs)
    assert rows["MFM"]["settings"] == "MFM: gamma 1, lam 1"
    # only the first data set keeps every label draw (the figures); the others keep their last draw per chain
    assert res.runs[0].methods["CRP"].labels.shape == (2, 6, 80)
    assert res.runs[1].methods["CRP"].labels.shape == (2, 1, 80)
    table = markdown_seed_table(res)
    assert "| MFM (beyond the paper) |" in table and "| SFM (beyond the paper) |" in table
    crp = next(line for line in table.splitlines() if line.startswith("| CRP |"))
    assert f"{rows['CRP']['K']:.2f} ± {rows['CRP']['K spread']:.2f} (MCSE" in crp and "| 4.8" in crp
    (line,) = extra_lines(res)
    assert "Beyond the paper" in line and "pCRP K" in line and "MFM K" in line
    path = write_report([res], tmp_path, command="pcrp reproduce --quick", seconds=90)
    text = path.read_text()
    assert "Wall time: 1.5 min." in text and "Data sets (seeds): 2, 3, 4." in text and "Incomplete" not in text
    partial = write_report([res], tmp_path / "partial", seconds=90, pending=["Sim 2, N = 2000"]).read_text()
    assert "Wall time: 1.5 min so far." in partial and "still to run when this was written: Sim 2, N = 2000" in partial
    # 1-D data: the density figure is each method's own predictive (its prior's weights), never the plug-in
    density = list((tmp_path / "figures").glob("*density*.html"))
    assert density and not any("plug-in" in f.read_text() for f in density)
    by_seed = (tmp_path / "tables_by_seed.csv").read_text().splitlines()
    assert len(by_seed) == 1 + 3 * (1 + len(METHODS + EXTRA_METHODS))  # header, then truth + 5 methods per data set


def test_the_later_data_sets_keep_only_their_last_draws_in_memory_of_their_own(over_seeds):
    """The first data set keeps its chains whole (the figures read them); the others only the last kept draw of each
    chain, copied: a slice of the draws is a view, which kept all of them in memory (the Reproduce page holds these
    results for the session: pcrp.app.page_session.ReproduceState)."""
    first, *later = over_seeds.runs
    kept = first.methods["CRP"].chains.labels.shape[1]
    assert kept > 1 and later
    for run in later:
        for m in run.methods.values():
            for part in (m.chains.labels, m.chains.kept_sweeps, m.chains.split_merge_history):
                assert part.base is None, m.method  # owns its memory: no view of the whole draws
            assert m.chains.labels.shape[1] == 1 and m.chains.labels.nbytes * kept == \
                first.methods[m.method].chains.labels.nbytes


def test_the_paper_is_compared_with_the_spread(over_seeds):
    rows = {row["method"]: row for row in seed_rows(over_seeds)}
    mean, spread = rows["CRP"]["K"], rows["CRP"]["K spread"]
    # outside: beyond 2 SDs between data sets and beyond the calibration's tolerance of 0.5 in K
    inside = replace(over_seeds, experiment=replace(SMALL, paper={"CRP": {"K": mean + 1.9 * spread}}))
    outside = replace(over_seeds, experiment=replace(SMALL, paper={"CRP": {"K": mean + max(2.1 * spread, 0.51)}},
                                                     gap_note="Because."))
    small = replace(over_seeds, experiment=replace(SMALL, paper={"CRP": {"K": mean + 0.49}}))
    assert {r["method"]: r for r in seed_rows(small)}["CRP"]["K within spread"] is True
    assert {r["method"]: r for r in seed_rows(inside)}["CRP"]["K within spread"] is True
    assert seed_gap_lines(inside) == []
    assert {r["method"]: r for r in seed_rows(outside)}["CRP"]["K within spread"] is False
    (line,) = seed_gap_lines(outside)
    assert "CRP K" in line and line.endswith("Because.")
    assert "(outside)" in markdown_seed_table(outside)


def _joint(X, labels, r, niw, alpha=1.0):
    """The pCRP log joint up to its constant, from the points (the reference for the path's L + r G)."""
    total = 0.0
    for k in np.unique(labels):
        block = X[labels == k]
        total += np.log(alpha) + r * gammaln(len(block)) + log_marginal(block, niw.m0, niw.kappa0, niw.nu0, niw.S0)
    return total


def test_true_partition_margin_is_the_gap_to_the_best_merged_state_on_the_path():
    ds = data_mod.simulation("sim2", 150, seed=3)
    niw = resolve_niw(ds.X)
    truth = ds.labels
    for r in (1.0, 1.3, 1.8, 3.0):
        margin = true_partition_margin(ds.X, truth, r, niw=niw)
        base = _joint(ds.X, truth, r, niw)
        merged = [np.where(np.isin(truth, pair), pair[0], truth) for pair in ([0, 1], [0, 2], [1, 2])]
        states = [_joint(ds.X, z, r, niw) for z in merged] + [_joint(ds.X, np.zeros_like(truth), r, niw)]
        # the path holds one of the two-cluster states and the one-cluster state: its margin is at least the
        # margin over every coarser partition, and equals the gap to one of them
        assert margin >= base - max(states) - 1e-6
        assert min(abs(base - s - margin) for s in states) < 1e-6
    # the margin falls as r grows (every merge gains r G with G > 0), and a large r merges everything
    margins = [true_partition_margin(ds.X, truth, r, niw=niw) for r in (1.0, 1.5, 2.0, 4.0)]
    assert np.all(np.diff(margins) < 0) and margins[-1] < 0


def test_a_pcrp_run_near_the_merged_state_is_flagged(over_seeds):
    flagged = replace(over_seeds, margins={s: (2.5 if i == 0 else 40.0) for i, s in enumerate(over_seeds.seeds)})
    lines = [line for line in seed_disagreement_lines(flagged) if line.startswith("pCRP: at the r it ran at")]
    assert len(lines) == 1 and "data set 2 at r =" in lines[0] and "+2.5 nats" in lines[0]
    below = int(np.sum(over_seeds.runs[0].methods["pCRP"].chains.kept_K.mean(axis=1) < 2.5))
    assert f"{below} of 2 chains below 3 clusters" in lines[0]
    assert ("some did" in lines[0]) == (below > 0)
    assert "true partition vs best merged: +2.5 nats" in markdown_seed_table(flagged)
    calm = replace(over_seeds, margins={s: 40.0 for s in over_seeds.seeds})
    assert not [line for line in seed_disagreement_lines(calm) if line.startswith("pCRP: at the r it ran at")]


@pytest.mark.parametrize("method", ["spectral", "pca"])
def test_the_mnist_embedding_does_not_depend_on_the_blas_thread_count(method, monkeypatch):
    """The same digits give bit-identical embeddings under 1 and 2 BLAS threads, and the solver itself always
    runs on one thread (so a machine with 64 threads gets the numbers of a machine with 1)."""
    from threadpoolctl import threadpool_info, threadpool_limits

    images, labels = data_mod._bundled_mnist()
    pool = np.flatnonzero(np.isin(labels, (1, 2, 3, 4)))
    P = images[np.sort(np.random.default_rng(0).choice(pool, size=400, replace=False))].astype(float) / 255.0
    out = {}
    for threads in (1, 2):
        with threadpool_limits(limits=threads):
            out[threads] = data_mod.embed(P, method, 2, seed=0)
    assert out[1].shape == (400, 2) and np.array_equal(out[1], out[2])

    seen = []
    if method == "spectral":
        from sklearn.manifold import SpectralEmbedding as Solver
    else:
        from sklearn.decomposition import PCA as Solver
    original = Solver.fit_transform

    def spy(self, *args, **kwargs):
        seen.append(max((info["num_threads"] for info in threadpool_info() if info["user_api"] == "blas"),
                        default=1))
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Solver, "fit_transform", spy)
    with threadpool_limits(limits=2):
        data_mod.embed(P, method, 2, seed=0)
    assert seen == [1]


# ----------------------------------------------------------------------------- the app's work budget
def test_the_work_estimate_knows_each_experiments_dimensions():
    """reproduce_work reads DATA_DIMS before any data are loaded: they must be the loaded data's."""
    from pcrp.experiments.reproduce import DATA_DIMS, load_experiment_data

    for key in ("sim1-300", "sim2-300", "mnist-1000", "old-faithful"):
        e = EXPERIMENTS[key]
        ds, cv_ds = load_experiment_data(e, seed=0)
        assert ds.X.shape[1] == cv_ds.X.shape[1] == DATA_DIMS[e.data], key


def test_a_reproduce_run_over_its_budget_is_refused_before_anything_runs(monkeypatch):
    """Everything a run does counts: its cross validations, chain checks and every method's chains, per data set;
    a ticket whose budget is a little under that refuses the job before any fit starts."""
    from pcrp.experiments import reproduce
    from pcrp.sampling.compute import WorkOverBudget, WorkTicket, work_cost
    from pcrp.analyses.cv import check_work, cv_work
    from pcrp.experiments.reproduce import REPRODUCE_BUDGET, reproduce_work

    grid = [1.05, 1.5, 3.0]
    per_set = (cv_work(40, 1, 3, TINY.cv_folds, TINY.cv_repeats, TINY.cv_iters) + check_work(80, 1, len(grid), TINY.check_iters)
               + work_cost(80, 1, TINY.iters, chains=2 * 5))
    assert reproduce_work(SMALL, TINY, 3, n_chains=2, r_grid=grid) == pytest.approx(3 * per_set)
    assert reproduce_work(SMALL, TINY, 3, n_chains=2, r_grid=grid, extra=False) < 3 * per_set
    calls = []
    monkeypatch.setattr(reproduce.runner, "cross_validate", lambda *a, **k: calls.append("cv"))
    ticket = WorkTicket(budget=0.99 * reproduce_work(SMALL, TINY, 3, n_chains=2, r_grid=grid))
    with pytest.raises(WorkOverBudget, match=r"Sim 2, N = 80 on 3 data set\(s\) needs about .* of sampling"):
        run_over_seeds(SMALL, TINY, seed=0, n_chains=2, r_grid=grid, work=ticket)
    assert calls == [] and ticket.reserved == 0
    # the page's budget: every quick run fits; the full protocol on ten Sim 1 data sets of 2,000 points does not
    assert all(reproduce_work(e, QUICK) <= REPRODUCE_BUDGET for e in EXPERIMENTS.values())
    assert reproduce_work(EXPERIMENTS["sim1-2000"], Protocol()) > REPRODUCE_BUDGET
    assert reproduce_work(EXPERIMENTS["sim1-2000"], Protocol(), 3) <= REPRODUCE_BUDGET


def test_a_flagged_pcrp_data_set_is_reported_apart_and_counted(over_seeds):
    """One data set whose pCRP collapsed (two chains below the CRP's three clusters) is never pooled into the
    pCRP's mean: its own row follows, the sentence says why, and the per-data-set counts name it."""
    import copy

    from pcrp.analyses.collapse import judge
    from pcrp.experiments.reproduce import versus_crp, versus_lines

    res = copy.deepcopy(over_seeds)
    for i, run in enumerate(res.runs):
        run.methods["pCRP"].verdict = judge([1.1, 3.2] if i == 0 else [3.3, 3.2], agree=i != 0, reference=3,
                                            what="the pCRP")
    rows = {row["method"]: row for row in seed_rows(res)}
    assert rows["pCRP"]["seeds"] == res.seeds[1:] and rows[FLAGGED_PCRP]["seeds"] == res.seeds[:1]
    held_k = [run.methods["pCRP"].metrics["K"][0] for run in res.runs[1:]]
    assert rows["pCRP"]["K"] == pytest.approx(np.mean(held_k))  # the collapsed data set is not in the mean
    table = markdown_seed_table(res)
    assert "| pCRP (2 of 3 data sets) |" in table and "| pCRP, flagged (1 of 3 data sets) |" in table
    assert "data set 2: COLLAPSED (1 of 2 chains below the CRP's 3 clusters); chains disagree" in table
    lines = seed_disagreement_lines(res)
    assert any(line.startswith("Data set 2: COLLAPSED: 1 of 2 chains of the pCRP fell below the 3 clusters")
               and "reported apart from the pCRP's mean" in line for line in lines), lines
    (line,) = versus_lines(res)
    outcomes = [versus_crp(run, 3) for run in res.runs]
    for word in ("higher", "matched", "lower"):
        assert f"{word} on {sum(o['NMI'] == word for o in outcomes)}" in line
    assert "flagged (collapsed below the CRP's clusters, or chains disagree) on 1 (data set 2)" in line


def test_versus_the_crp_counts_a_difference_within_its_monte_carlo_error_as_a_match():
    from types import SimpleNamespace

    from pcrp.experiments.reproduce import versus_crp

    def run(nmi_p, nmi_c, k_p, k_c, se=0.001):
        method = lambda nmi, k: SimpleNamespace(metrics={"NMI": (nmi, se), "K": (k, 0.01)}, verdict=None)
        return SimpleNamespace(methods={"pCRP": method(nmi_p, k_p), "CRP": method(nmi_c, k_c)})

    # 2 x sqrt(0.001^2 + 0.001^2) = 0.0028: a difference of 0.002 is a match, 0.004 is not
    assert versus_crp(run(0.952, 0.950, 3.4, 4.8), 3) == {"flag": "", "NMI": "matched", "K": "nearer"}
    assert versus_crp(run(0.954, 0.950, 4.8, 3.4), 3)["NMI"] == "higher"
    assert versus_crp(run(0.946, 0.950, 2.0, 4.0), 3) == {"flag": "", "NMI": "lower", "K": "as near"}
    assert versus_crp(run(0.9, 0.9, 1.5, 4.0), 3)["K"] == "farther"  # 1.5 from the truth against 1.0

"""Cross validation of r, the change-point rule, metrics and a small reproduce run end to end."""

import json
from dataclasses import replace

import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import normalized_mutual_info_score

from pcrp import cli
from pcrp.model import niw_math
from pcrp.analyses import cv as cv_module
from pcrp.analyses.cv import (CVError, cross_validate, find_blow_up, make_splits, prepare_split, score_held_out,
                     within_cluster_loss)
from pcrp.model import PowerCRP, resolve_niw
from pcrp.experiments.reproduce import (Experiment, Protocol, gap_lines, gaps, markdown_table, plain, run_experiment,
                            write_report)
from pcrp.summaries.summary import metric_summary, nmi, oracle_alpha, vi


def test_loss_of_eq5_by_hand():
    X = np.array([[0.0, 0.0], [2.0, 0.0], [10.0, 1.0], [10.0, 3.0], [10.0, 5.0], [7.0, 7.0]])
    labels = np.array([3, 3, 1, 1, 1, 0])
    # cluster 3: mean (1, 0), SS = 1 + 1 = 2; cluster 1: mean (10, 3), SS = 4 + 0 + 4 = 8; singleton: 0
    assert within_cluster_loss(X, labels) == pytest.approx(np.sqrt(2) + np.sqrt(8))


def test_loss_favours_fewer_clusters_with_the_same_mean():
    """The square root makes splitting one cluster into two with the same mean cost more (the paper's point)."""
    X = np.array([[-1.0], [1.0], [-1.0], [1.0]])
    assert within_cluster_loss(X, np.array([0, 0, 1, 1])) > within_cluster_loss(X, np.zeros(4, int))


def _curve(seed, blow_up_at=None, size=20, level=15.0, wobble=0.15, jump=8.0):
    rng = np.random.default_rng(seed)
    curve = level + rng.uniform(-wobble, wobble, size)
    if blow_up_at is not None:
        curve[blow_up_at:] += jump + np.arange(size - blow_up_at)
    return curve


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("at", [1, 6, 14, 19])
def test_change_point_found_where_the_curve_blows_up(seed, at):
    found = find_blow_up(_curve(seed, at))
    assert found.index == at
    assert found.chosen_index == at - 1


@pytest.mark.parametrize("seed", range(5))
def test_flat_curve_has_no_change_point(seed):
    found = find_blow_up(_curve(seed))
    assert found.index is None
    assert found.chosen_index == 19
    assert "extend the grid" in found.reason


def test_a_blow_up_on_a_short_grid_is_not_hidden_by_itself():
    """With three grid points the jump was half the differences its noise scale was measured on."""
    found = find_blow_up([8.72, 8.76, 16.5])
    assert found.index == 2 and found.chosen_index == 1


def test_falling_curve_is_not_a_blow_up():
    assert find_blow_up(np.linspace(20, 10, 12)).index is None


def test_slow_drift_within_ten_percent_is_flat():
    """The paper's Sim 1 flat stage drifts from 15.5 to 14.9 (4%): not a change point."""
    assert find_blow_up(np.linspace(14.9, 15.5, 15)).index is None


def test_large_standard_errors_hide_a_small_rise():
    curve = np.r_[np.full(5, 10.0), np.full(5, 12.0)]
    assert find_blow_up(curve).index == 5
    assert find_blow_up(curve, se=np.full(10, 1.0)).index is None  # 2 sqrt(2) x 1 > 2


def test_bad_curves_and_grids():
    with pytest.raises(CVError, match="at least two finite"):
        find_blow_up([1.0, np.nan])
    X = np.random.default_rng(0).normal(size=(40, 1))
    for grid, message in (([1.2], "at least two"), ([1.2, 1.1], "increasing"), ([-1.0, 1.0], "positive")):
        with pytest.raises(CVError, match=message):
            cross_validate(X, r_grid=grid)
    with pytest.raises(CVError, match="folds must be"):
        cross_validate(X, folds=1)
    with pytest.raises(CVError, match="some of m0, kappa0, nu0, S0"):
        cross_validate(X, {"s0": 2.0})


def test_splits_partition_the_data():
    splits = make_splits(23, folds=4, repeats=2, seed=1)
    assert len(splits) == 8
    for rep in range(2):
        tests = np.concatenate([test for _, test in splits[4 * rep: 4 * rep + 4]])
        assert np.array_equal(np.sort(tests), np.arange(23))
    for train, test in splits:
        assert np.intersect1d(train, test).size == 0 and train.size + test.size == 23


def test_held_out_scores_against_closed_form():
    """One training cluster: every held-out point joins it, and the predictive density is
    g(n) / (g(n) + alpha) t_n(x) + alpha / (g(n) + alpha) t_0(x)."""
    rng = np.random.default_rng(3)
    X_train, X_test = rng.normal(size=(12, 2)), rng.normal(size=(5, 2))
    niw = resolve_niw(X_train)
    prior = PowerCRP(0.7, 1.4)
    losses, lpd = score_held_out(X_train, np.zeros((2, 12), dtype=np.int64), X_test, prior, niw)
    assert losses == pytest.approx([within_cluster_loss(X_test, np.zeros(5, int))] * 2)
    g = 12 ** 1.4
    for t, x in enumerate(X_test):
        joined = np.exp(niw_math.log_predictive(x, X_train, niw.m0, niw.kappa0, niw.nu0, niw.S0))
        new = np.exp(niw_math.log_predictive(x, X_train[:0], niw.m0, niw.kappa0, niw.nu0, niw.S0))
        assert lpd[t] == pytest.approx(np.log((g * joined + 0.7 * new) / (g + 0.7)), rel=1e-9)


def test_held_out_point_joins_the_cluster_with_the_highest_seating_probability():
    X_train = np.r_[np.zeros((10, 1)) + np.linspace(-0.1, 0.1, 10)[:, None],
                    np.full((10, 1), 5.0) + np.linspace(-0.1, 0.1, 10)[:, None]]
    labels = np.r_[np.zeros(10, int), np.ones(10, int)][None]
    X_test = np.array([[0.05], [4.9], [-0.2], [5.3]])
    losses, _ = score_held_out(X_train, labels, X_test, PowerCRP(1.0, 1.3), resolve_niw(X_train))
    # right seating: {0.05, -0.2} and {4.9, 5.3}
    assert losses[0] == pytest.approx(np.sqrt(2 * 0.125 ** 2) + np.sqrt(2 * 0.2 ** 2))


def _two_blobs(n=60, seed=0):
    rng = np.random.default_rng(seed)
    return np.r_[rng.normal(-2, 0.6, (n // 2, 2)), rng.normal(2, 0.6, (n // 2, 2))]


def test_cross_validation_is_reproducible_whatever_the_number_of_jobs():
    X = _two_blobs()
    kwargs = dict(r_grid=[1.05, 1.5, 2.5, 4.0], folds=3, iters=150, burn_in=50, thin=10, seed=7)
    one = cross_validate(X, n_jobs=1, **kwargs)
    two = cross_validate(X, n_jobs=2, **kwargs)
    np.testing.assert_array_equal(one.loss, two.loss)
    np.testing.assert_array_equal(one.log_pred, two.log_pred)
    assert one.chosen_r == two.chosen_r
    assert one.loss.shape == (3, 4)


def test_curve_is_the_mean_and_standard_error_over_splits():
    loss = np.array([[10.0, 12.0], [11.0, 18.0], [12.0, 15.0]])
    result = cv_module.CVResult(np.array([1.1, 1.5]), loss, -loss, np.ones_like(loss),
                                find_blow_up([11.0, 15.0]))
    mean, se = result.curve("loss")
    np.testing.assert_allclose(mean, [11.0, 15.0])
    np.testing.assert_allclose(se, [1.0 / np.sqrt(3), 3.0 / np.sqrt(3)])  # std (ddof 1) / sqrt(splits)
    one_split = cv_module.CVResult(np.array([1.1, 1.5]), loss[:1], -loss[:1], np.ones((1, 2)),
                                   find_blow_up([10.0, 12.0]))
    assert np.all(np.isnan(one_split.curve("loss")[1]))  # no spread from one split: unknown, not 0


def test_standardisation_and_prior_come_from_the_training_part_only():
    rng = np.random.default_rng(2)
    raw = np.c_[rng.normal(50, 10, 30), rng.normal(-3, 0.1, 30)]
    train, test = np.arange(20), np.arange(20, 30)
    part = prepare_split(raw, train, test, standardize=True)
    centre, scale = raw[train].mean(axis=0), raw[train].std(axis=0)
    np.testing.assert_allclose(part.X_train, (raw[train] - centre) / scale)
    np.testing.assert_allclose(part.X_test, (raw[test] - centre) / scale)
    expected = resolve_niw(part.X_train)
    np.testing.assert_allclose(part.niw.m0, expected.m0, atol=1e-12)
    np.testing.assert_allclose(part.niw.S0, expected.S0)
    # data z-scored on every row (what a Dataset holds) give the same training-part z-scores
    globally = (raw - raw.mean(axis=0)) / raw.std(axis=0)
    again = prepare_split(globally, train, test, standardize=True)
    np.testing.assert_allclose(again.X_train, part.X_train, atol=1e-12)
    np.testing.assert_allclose(again.X_test, part.X_test, atol=1e-12)
    # fixed settings stay fixed; the rest still come from the training part
    fixed = prepare_split(raw, train, test, niw={"kappa0": 2.0})
    assert fixed.niw.kappa0 == 2.0
    np.testing.assert_allclose(fixed.niw.m0, raw[train].mean(axis=0))


@pytest.mark.parametrize("standardize", [False, True])
def test_training_fits_never_see_the_held_out_points(standardize):
    """Moving split 0's held-out points far away must leave split 0's fits exactly as they were
    (same prior, same scaling, same seeded chains); before the fix m0 and S0 came from every row."""
    X = _two_blobs(60)
    kwargs = dict(r_grid=[1.05, 2.0], folds=3, iters=80, burn_in=40, thin=10, seed=4, n_jobs=1,
                  standardize=standardize)
    _, test0 = make_splits(60, 3, 1, 4)[0]
    moved_X = X.copy()
    moved_X[test0] = moved_X[test0] * 50.0 + 100.0
    base, moved = cross_validate(X, **kwargs), cross_validate(moved_X, **kwargs)
    assert base.settings["niw_per_split"][0] == moved.settings["niw_per_split"][0]
    np.testing.assert_array_equal(base.mean_k[0], moved.mean_k[0])
    # the other splits train on some moved points, so their priors do change
    assert base.settings["niw_per_split"][1] != moved.settings["niw_per_split"][1]


def test_cross_validation_on_a_dask_cluster_matches_the_local_run():
    import distributed  # in the test extra: a missing install fails here rather than skipping

    X = _two_blobs(40, seed=1)
    kwargs = dict(r_grid=[1.05, 2.0, 4.0], folds=2, iters=100, burn_in=50, thin=10, seed=3)
    local = cross_validate(X, n_jobs=1, **kwargs)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        remote = cross_validate(X, scheduler=cluster.scheduler_address, **kwargs)
    np.testing.assert_array_equal(local.loss, remote.loss)
    assert remote.settings["scheduler"] == cluster.scheduler_address


def test_unreachable_scheduler_is_a_clear_error():
    X = _two_blobs(20)
    with pytest.raises(CVError, match="Dask scheduler at tcp://127.0.0.1:9"):
        cross_validate(X, r_grid=[1.0, 2.0], folds=2, iters=10, burn_in=0, thin=1,
                       scheduler="tcp://127.0.0.1:9")


def test_a_silent_scheduler_times_out_instead_of_hanging():
    """A server that accepts TCP and never answers hung distributed.Client for ever."""
    import socket
    import time

    from pcrp.runs.dask_cluster import DaskConnectionError, connect

    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        address = "tcp://127.0.0.1:%d" % server.getsockname()[1]
        start = time.monotonic()
        with pytest.raises(DaskConnectionError, match="did not answer within 1 s"):
            connect(address, timeout=1.0)
        assert time.monotonic() - start < 30  # the hang it replaces never returned


def test_server_side_scheduler_setting(monkeypatch):
    from pcrp.runs.dask_cluster import ENV_VAR, configured_scheduler

    monkeypatch.delenv(ENV_VAR, raising=False)
    assert configured_scheduler() is None and configured_scheduler({}) is None
    monkeypatch.setenv(ENV_VAR, " tcp://10.0.0.5:8786 ")
    assert configured_scheduler() == "tcp://10.0.0.5:8786"
    assert configured_scheduler({"dask_scheduler": "tcp://h:1"}) == "tcp://h:1"  # secrets win


@pytest.mark.parametrize("seed", range(4))
def test_nmi_matches_scikit_learn_geometric(seed):
    rng = np.random.default_rng(seed)
    a, b = rng.integers(0, 4, 50), rng.integers(0, 6, 50)
    assert nmi(a, b) == pytest.approx(normalized_mutual_info_score(a, b, average_method="geometric"))


def test_vi_by_hand_in_bits():
    # contingency [[2, 0], [0, 2]] vs one cluster: H(U|V) = 1 bit, H(V|U) = 0
    assert vi([0, 0, 1, 1], [5, 5, 5, 5]) == pytest.approx(1.0)
    assert vi([0, 0, 1, 1], [1, 1, 0, 0]) == pytest.approx(0.0, abs=1e-12)
    # [[1, 1], [1, 1]]: H(U|V) = H(V|U) = 1 bit
    assert vi([0, 0, 1, 1], [0, 1, 0, 1]) == pytest.approx(2.0)
    # 3 vs 1+2: p = (1/3, 2/3) -> H(V|U) = H(1/3, 2/3) bits
    assert vi([0, 0, 0], [0, 1, 1]) == pytest.approx(stats.entropy([1, 2], base=2))


def test_metric_summary_is_mean_over_draws():
    # the standard error is the MCSE (tests/test_chains.py); 3 draws are too few to estimate it
    true = np.array([0, 0, 1, 1])
    draws = np.array([[0, 0, 1, 1], [0, 0, 0, 0], [0, 1, 0, 1]])
    out = metric_summary(true, draws)
    assert out["VI"][0] == pytest.approx(1.0) and np.isnan(out["VI"][1])


def test_oracle_alpha_matches_the_paper():
    assert oracle_alpha(3, 300) == pytest.approx(0.526, abs=0.005)
    assert oracle_alpha(3, 2000) == pytest.approx(0.395, abs=0.005)
    assert oracle_alpha(4, 1000) == pytest.approx(0.58, abs=0.005)
    assert oracle_alpha(2, 172) == pytest.approx(0.39, abs=0.005)


TINY = Protocol(iters=120, burn_in=60, thin=10, cv_iters=60, cv_burn_in=30, cv_thin=10, cv_folds=2, check_iters=120)


def test_quick_reproduce_end_to_end(tmp_path):
    experiment = Experiment("sim2-small", "Sim 2, N = 80", "Table 1", 3, "sim2", 80, 40,
                            {"CRP": {"NMI": 0.9, "K": 4.8}})
    result = run_experiment(experiment, TINY, seed=2, n_jobs=1, r_grid=[1.05, 1.5, 3.0], n_chains=2)
    assert set(result.methods) == {"CRP-Oracle", "CRP", "pCRP"}
    check = result.cv.settings["chain_check"]  # the CV r, checked on the data fitted (80 points), not the CV's 40
    assert check["n"] == 80 and result.cv.settings["n"] == 40
    assert check["tried"][0]["r"] == check["proposed"] == result.cv.chosen_r
    assert result.methods["pCRP"].r == check["r"] <= result.cv.chosen_r
    verdict = result.methods["pCRP"].verdict  # judged against the CRP's point estimate on the same data
    assert verdict is not None and verdict.reference == result.reference
    assert result.methods["CRP-Oracle"].alpha == pytest.approx(3 / np.log(80))
    truth = result.data.labels
    for m in result.methods.values():
        assert m.K.shape == (2, 120) and m.labels.shape == (2, 6, 80)
        assert m.chains.config["init"][:2] == ["kmeans:10", "one"]  # the chains start apart
        # the table's NMI is the mean over every chain's kept draws (scikit-learn as the reference)
        draws = m.labels.reshape(-1, 80)
        expected = np.mean([normalized_mutual_info_score(truth, z, average_method="geometric") for z in draws])
        assert m.metrics["NMI"][0] == pytest.approx(expected)
        assert m.metrics["K"][0] == pytest.approx(np.mean([np.unique(z).size for z in draws]))
        assert sum(m.p_k.values()) == pytest.approx(1.0)
        assert m.metrics["K max"][0] == m.K[:, 60:].max()
    table = markdown_table(result)
    assert "| method | alpha | r | NMI, ours | NMI, paper |" in table
    crp_row = next(line for line in table.splitlines() if line.startswith("| CRP |"))
    assert "| 0.900 |" in crp_row and "| 4.8 |" in crp_row  # the paper's numbers sit in the CRP row
    path = write_report([result], tmp_path, command="pcrp reproduce --quick")
    text = path.read_text()
    assert "pcrp reproduce --quick" in text and "Sim 2, N = 80" in text
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["sim2-small"]["chosen_r"] == [result.cv.chosen_r]  # one per data set
    assert set(summary["sim2-small"]["methods"][0]["CRP"]["diagnostics"]) >= {"K", "log_joint"}
    assert (tmp_path / "cv_sim2-small.csv").read_text().startswith("r,loss,loss_se")
    names = {p.name for p in (tmp_path / "figures").iterdir()}
    assert {"sim2-small_cv.html", "sim2-small_k_traces.html", "sim2-small_density.html", "plotly.min.js"} <= names
    # a gap beyond the tolerance is found and explained; one within it is not
    ours = result.methods["CRP"].metrics
    moved = replace(experiment, paper={"CRP": {"NMI": ours["NMI"][0] + 0.05, "K": ours["K"][0] + 0.4}},
                    gap_note="Because.")
    found = gaps(replace(result, experiment=moved))
    assert [(m, c) for m, c, _, _ in found] == [("CRP", "NMI")]
    assert gap_lines(replace(result, experiment=moved))[0].endswith("Because.")


def test_standard_errors_in_plain_notation():
    assert plain(0.6163, 0.0011) == "0.616 ± 0.001"
    assert plain(4.634, 0.028, digits=2) == "4.63 ± 0.03"
    assert plain(0.12345, 0.00004) == "0.12345 ± 0.00004"  # as many places as the SE needs
    assert plain(0.5, float("nan")) == "0.500" and plain(12, None) == "12" and plain(None) == ""


def test_chains_that_disagree_are_flagged():
    from pcrp.experiments.reproduce import MethodResult, disagreement_lines

    class Chains:
        kept_K = K_after_burn_in = np.array([[4.0, 4.0], [5.0, 5.0]])

    def method(rhat_k, rhat_lj):
        diagnostics = {"K": {"rhat": rhat_k}, "log_joint": {"rhat": rhat_lj}}
        return MethodResult("pCRP", 1.0, 1.4, Chains(), {}, {}, diagnostics)

    assert method(1.005, 1.002).chains_agree and method(float("nan"), 1.0).chains_agree
    assert not method(1.34, 1.0).chains_agree and not method(1.0, 2.26).chains_agree

    class Result:
        methods = {"pCRP": method(1.34, 2.26)}

    (line,) = disagreement_lines(Result())
    assert "R-hat 1.340 on K, 2.260 on the log joint" in line and "mean K per chain 4.00, 5.00" in line


def test_cli_cv_prints_the_curve_and_writes_files(tmp_path, capsys):
    out_csv, out_json = tmp_path / "cv.csv", tmp_path / "cv.json"
    code = cli.main(["cv", "old-faithful", "--r-grid", "1.05,1.5,3", "--folds", "2", "--iters", "60",
                     "--burn-in", "30", "--thin", "10", "--n-jobs", "1", "--out-csv", str(out_csv),
                     "--out-json", str(out_json)])
    assert code == 0
    printed = capsys.readouterr().out
    assert "proposed r =" in printed and "<- proposed" in printed
    payload = json.loads(out_json.read_text())
    # Old Faithful's two clusters merge near r = 1.8 (its merge path): r = 3 blows the loss up
    assert payload["cv_r"] == 1.5 and payload["blow_up_index"] == 2
    # the check starts at CV's r, on all the data (272 points), and the r it keeps is the one proposed
    check = payload["chain_check"]
    assert check["tried"][0]["r"] == 1.5 and check["chains"] == 4 and check["n"] == 272
    assert payload["chosen_r"] == check["r"] <= 1.5
    assert f"proposed r = {payload['chosen_r']:g}" in printed
    assert payload["settings"]["folds"] == 2 and payload["settings"]["data"] == "old-faithful"
    assert len(out_csv.read_text().strip().splitlines()) == 4


def test_cli_cv_compares_covariance_types_and_says_which_the_data_support(tmp_path, capsys):
    """`pcrp cv --covariance-type full,diag,spherical`: each type's curve, proposal and check, then the comparison by
    held-out log predictive at each type's own r with the type the data support; the JSON holds each type and the
    comparison, the CSV a covariance_type column. The types are cross-validated on the same splits, and the comparison
    is the library's (pcrp.analyses.cv.choose_covariance of each type's scores). At d = 1 one type is run."""
    from pcrp.analyses.cv import choose_covariance
    from pcrp.analyses.cv.covariance import TypeScore

    out_csv, out_json = tmp_path / "cv.csv", tmp_path / "cv.json"
    light = ["--r-grid", "1.05,1.5,2", "--folds", "2", "--iters", "80", "--burn-in", "40", "--thin", "10",
             "--n-jobs", "1"]
    assert cli.main(["cv", "old-faithful", "--covariance-type", "full,diag,spherical", *light, "--out-csv",
                     str(out_csv), "--out-json", str(out_json)]) == 0
    printed = capsys.readouterr().out
    for words in ("full", "diagonal", "spherical"):
        assert f"== {words} covariances ==" in printed and f"for {words} covariances" in printed
    assert "== which covariance the data support" in printed and "<- chosen" in printed
    payload = json.loads(out_json.read_text())
    assert set(payload["types"]) == {"full", "diag", "spherical"}
    for t, one in payload["types"].items():
        assert one["settings"]["niw_fixed"] == {"covariance_type": t}
        assert one["chain_check"]["tried"][0]["r"] == one["cv_r"]
    choice = payload["covariance_choice"]
    assert choice["chosen"] in payload["types"] and f"The data support " in choice["text"]
    assert [row["covariance_type"] for row in choice["table"]] == ["spherical", "diag", "full"]
    assert any(f"{row['covariance_type']:>10s}" in printed and row["chosen"] for row in choice["table"])
    lines = out_csv.read_text().strip().splitlines()
    assert lines[0].startswith("covariance_type,r,") and len(lines) == 1 + 3 * 3
    # the same rule on the scores the table shows
    rows = {row["covariance_type"]: row for row in choice["table"]}
    assert choice["chosen"] == next(t for t in ("spherical", "diag", "full") if rows[t]["chosen"])
    with pytest.raises(CVError, match="different splits"):
        choose_covariance({"full": TypeScore("full", 1.5, 1.5, -1.0, 0.1, 5.0, 0.1, 2.0, (-1.0, -1.1)),
                           "diag": TypeScore("diag", 1.5, 1.5, -1.2, 0.1, 5.0, 0.1, 2.0, (-1.2,))})
    assert cli.main(["cv", "sim1", "--covariance-type", "diag,full", *light, "--no-chain-check"]) == 0
    captured = capsys.readouterr()
    assert "one model: cross-validating diag alone" in captured.err and "== which covariance" not in captured.out


def test_the_covariance_rule_prefers_the_simpler_type_within_noise():
    """choose_covariance: the best type by mean held-out log predictive; the simplest within 2 SE of the split-by-
    split difference is chosen. Constructed scores: spherical 0.01 behind with a difference SE of 0.02 is chosen
    over a best full; 0.5 behind (SE 0.02) it is not, and diagonal, 0.03 behind, is."""
    from pcrp.analyses.cv import choose_covariance
    from pcrp.analyses.cv.covariance import TypeScore

    base = np.random.default_rng(0).normal(-1.5, 0.1, 15)
    pattern = np.tile([1.0, -1.0, 0.0], 5)  # mean 0: each type's mean difference from the best is its shift

    def score(t, shift, noise):  # the difference's SE over the 15 splits: noise x 0.816 / sqrt(15) = noise x 0.218
        values = base + shift + noise * pattern
        return TypeScore(t, 1.5, 1.5, float(values.mean()), 0.03, 5.0, 0.1, 2.0, tuple(values))

    near = choose_covariance({"full": score("full", 0, 0), "diag": score("diag", -0.3, 0.01),
                              "spherical": score("spherical", -0.01, 0.05)})  # 0.01 behind, 2 SE = 0.022
    assert near.best == "full" and near.chosen == "spherical" and "is the simpler model" in near.reason
    far = choose_covariance({"full": score("full", 0, 0), "diag": score("diag", -0.03, 0.1),  # 2 SE = 0.044
                             "spherical": score("spherical", -0.5, 0.05)})
    assert far.best == "full" and far.chosen == "diag"
    diff, se = far.differences["diag"]
    assert diff <= 2 * se and far.differences["spherical"][0] > 2 * far.differences["spherical"][1]
    assert far.text().startswith("The data support diagonal covariances: ")


@pytest.mark.parametrize("argv, message", [
    (["cv", "old-faithful", "--r-grid", "1.5,1.2"], "increasing"),
    (["cv", "old-faithful", "--r-grid", "a,b"], "comma-separated numbers"),
    (["cv", "old-faithful", "--folds", "1"], "folds must be"),
    (["cv", "old-faithful", "--iters", "100", "--burn-in", "50", "--thin", "60"], "leaves no draws"),
    (["cv", "old-faithful", "--iters", "100", "--burn-in", "100"], "must be smaller than iters"),
    (["cv", "old-faithful", "--n-jobs", "0"], "--n-jobs must be -1 (all cores) or a whole number from 1"),
    (["reproduce", "--experiments", "sim3"], "unknown experiment sim3"),
])
def test_cli_cv_and_reproduce_errors(argv, message, capsys):
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


# ----------------------------------------------------------------------------- the app's work budget
def test_choose_r_work_is_counted_and_refused_above_its_budget():
    from pcrp.sampling.compute import WorkOverBudget, WorkTicket, work_cost
    from pcrp.analyses.cv import CHOOSE_R_BUDGET, check_work, choose_r_work, cv_work

    # 3 r x 5 folds x 2 repeats fits of 100 sweeps on 80 training points (100 less a fold of 20), in 1-D
    assert cv_work(100, 1, 3, 5, 2, 100) == pytest.approx(work_cost(80, 1, 100, chains=30))
    # ... + one chain per r and 4 CRP chains on all 100 points, + the check: at most 3 values of r (the grid's) x 4
    assert choose_r_work(100, 1, 3, 5, 2, 100) == pytest.approx(work_cost(80, 1, 100, chains=30)
                                                                + work_cost(100, 1, 100, chains=3 + 4)
                                                                + work_cost(100, 1, 100, chains=3 * 4))
    # the check alone: at most CHECK_TRIES = 8 values of r x 4 chains, and its CRP reference's 4 chains
    assert check_work(100, 1, 21, 100) == pytest.approx(work_cost(100, 1, 100, chains=8 * 4 + 4))
    # the form maximum (596 r x 20 folds x 10 repeats x 50,000 sweeps) on Old Faithful is far over it
    assert choose_r_work(272, 2, 596, 20, 10, 50_000) > 1000 * CHOOSE_R_BUDGET
    X = np.random.default_rng(0).normal(size=(100, 1))
    ticket = WorkTicket(budget=cv_work(100, 1, 3, 5, 1, 100) * 0.99)
    with pytest.raises(WorkOverBudget, match=r"Cross validation \(3 values of r x 5 folds .* core-seconds? of "
                                             r"sampling, more than .* budget of"):
        cross_validate(X, r_grid=[1.0, 1.2, 1.4], folds=5, iters=100, burn_in=50, work=ticket)
    assert ticket.reserved == 0  # nothing ran, nothing counted


@pytest.mark.parametrize("dims, accepted", [(2, True), (10, True), (50, False)])
def test_choose_r_counts_dimensions_at_the_pages_defaults_on_2000_points(dims, accepted):
    """The page's defaults (21 values of r, 5 folds, 1 repeat, 1,000 sweeps per fit) on 2,000 points: within the
    budget in 2-D and 10-D, refused in 50-D before any fit starts. Counting points x sweeps only (before issue 32)
    accepted 50-D at about 67 core-minutes."""
    from pcrp.sampling.compute import WorkOverBudget, WorkTicket
    from pcrp.analyses.cv import CHOOSE_R_BUDGET, DEFAULT_GRID, choose_r_work

    assert len(DEFAULT_GRID) == 21
    work = choose_r_work(2000, dims, 21, 5, 1, 1000)
    assert (work <= CHOOSE_R_BUDGET) == accepted
    if accepted:
        return
    assert work > 20 * 60  # well over 20 core-minutes, as the measurement found (67)
    X = np.random.default_rng(0).normal(size=(2000, dims))
    ticket = WorkTicket(budget=CHOOSE_R_BUDGET)
    with pytest.raises(WorkOverBudget, match=r"core-minutes of sampling, more than the 5 core-minutes left"):
        cross_validate(X, r_grid=DEFAULT_GRID, folds=5, iters=1000, burn_in=500, work=ticket)
    assert ticket.reserved == 0


def test_a_cancelled_ticket_stops_running_and_queued_fits_within_seconds():
    """5,000 points x 50,000 sweeps per fit would take minutes per fit; cancelled 1 s in, cross_validate must
    raise within 5 s (kernel calls of ticketed work last about 0.1 s; the bound leaves room for a busy machine)."""
    import threading
    import time

    from pcrp.sampling.compute import WorkCancelled, WorkTicket
    from pcrp.data import simulation

    X = simulation("sim1", n=5000, seed=0).X
    ticket = WorkTicket()
    threading.Timer(1.0, ticket.cancel, args=("the page was closed",)).start()
    started = time.monotonic()
    with pytest.raises(WorkCancelled, match="the page was closed"):
        cross_validate(X, r_grid=[1.0, 1.1, 1.2, 1.3], folds=2, iters=50_000, burn_in=100, thin=100, work=ticket)
    assert time.monotonic() - started < 5.0


def test_ticketed_fits_wait_for_a_compute_slot():
    import threading

    from pcrp.sampling.compute import FairSlots, WorkTicket
    from pcrp.runs.chains import run_chain as run

    slots = FairSlots(1)
    slots.acquire()  # every slot busy (live chains of other visitors)
    X = np.random.default_rng(1).normal(size=(200, 2))
    sweeps = []
    result = {}
    fit = threading.Thread(target=lambda: result.setdefault("chain", run(
        X, PowerCRP(1.0, 1.2), resolve_niw(X), iters=300, burn_in=100, seed=0, work=WorkTicket(slots=slots),
        callback=sweeps.append)))
    fit.start()
    fit.join(1.0)
    assert fit.is_alive() and sweeps == []  # no sweep without a slot
    slots.release()
    fit.join(60)
    assert not fit.is_alive() and sweeps[-1] == 300 and result["chain"].K.size == 300


def test_a_session_that_ends_cancels_its_work_and_a_new_action_cancels_the_old():
    from pcrp.app.page_session import PageSession
    from pcrp.sampling.compute import WorkTicket

    session = PageSession()  # a session's work is part of its one object (tests/test_page_parts.py: the release)
    work = session.work
    first = work.start(WorkTicket())
    second = work.start(WorkTicket(), "a new cross validation was started")
    assert first.cancelled and "new cross validation" in first.reason and not second.cancelled
    session.close()  # what Streamlit calls when the session's tab closes
    assert second.cancelled and "closed" in second.reason


def _curves(blow_at, G=8, flat=10.0, jump=6.0, seed=0):
    """(len(blow_at), G) loss curves: flat with 1% wobble, then a jump of ``jump`` from grid index blow_at[s]."""
    rng = np.random.default_rng(seed)
    loss = flat * (1 + 0.01 * rng.standard_normal((len(blow_at), G)))
    for s, j in enumerate(blow_at):
        loss[s, j:] += jump
    return loss


def test_robust_rule_takes_the_earliest_repeat_and_the_splits_lower_quartile():
    grid = np.round(np.arange(1.05, 1.45, 0.05), 2)
    # two repeats of three folds; in the first, one split of three merges at index 4, the others at 6
    loss = _curves([4, 6, 6, 6, 6, 6], jump=4.0)
    mean_rule = cv_module.find_blow_up(loss.mean(axis=0), loss.std(axis=0, ddof=1) / np.sqrt(6), r_grid=grid)
    robust = cv_module.robust_blow_up(loss, 3, r_grid=grid)
    per_split = sorted(cv_module.find_blow_up(c, r_grid=grid).chosen_index for c in loss)
    assert per_split == [3, 5, 5, 5, 5, 5]
    # at index 4 the first repeat's mean rises 13%, beyond the 10% rule; the mean over all six only 7%
    assert mean_rule.chosen_index == 5 and robust.chosen_index == 3 and robust.index == 4
    assert "1.2" in robust.reason and "lower quartile of the 6 splits" in robust.reason
    # the lower quartile alone: one repeat of eight folds, two of which merge early (2 of 8 = a quarter)
    loss = _curves([3, 3, 6, 6, 6, 6, 6, 6], jump=3.0, seed=1)  # the mean rises 2 x 3 / 8 = 7.5% at index 3
    assert cv_module.robust_blow_up(loss, 8, r_grid=grid).chosen_index == 2
    assert cv_module.find_blow_up(loss.mean(axis=0), r_grid=grid).chosen_index == 5
    # nothing blows up: the last grid point, and the advice to extend the grid
    flat = cv_module.robust_blow_up(_curves([99] * 4), 2, r_grid=grid)
    assert flat.index is None and flat.chosen_index == 7 and "extend the grid" in flat.reason
    with pytest.raises(CVError, match="not whole repeats of 4 folds"):
        cv_module.robust_blow_up(_curves([4] * 6), 4)


def test_cross_validate_records_both_rules():
    X = np.r_[np.random.default_rng(0).normal(-4, 1, 30), np.random.default_rng(1).normal(4, 1, 30)][:, None]
    kwargs = dict(r_grid=[1.05, 1.5, 2.5, 4.0], folds=3, repeats=2, iters=60, burn_in=30, thin=5, seed=0, n_jobs=1)
    robust = cross_validate(X, **kwargs)
    mean = cross_validate(X, rule="mean", **kwargs)
    assert robust.settings["rule"] == "robust" and mean.settings["rule"] == "mean"
    np.testing.assert_array_equal(robust.loss, mean.loss)  # the same fits; only the reading differs
    assert robust.mean_blow_up == mean.blow_up == mean.mean_blow_up
    again = cv_module.robust_blow_up(robust.loss, 3, r_grid=robust.r_grid)
    assert (robust.blow_up.chosen_index, robust.blow_up.reason) == (again.chosen_index, again.reason)
    assert robust.chosen_r <= mean.chosen_r
    with pytest.raises(CVError, match="rule must be one of robust, mean"):
        cross_validate(X, rule="median", **kwargs)


def test_each_builtin_data_set_ships_its_cross_validated_r_with_provenance():
    from pcrp.analyses.cv import (BUILTIN_R_COMMAND, BUILTIN_R_DATA, BUILTIN_R_SETTINGS, BUILTIN_R_VARIANTS,
                                  DEFAULT_GRID, builtin_r, builtin_r_entries, builtin_r_table, types_for)
    from pcrp.model import COVARIANCE_TYPES, DEFAULT_R

    table = builtin_r_table()
    assert set(table) == set(BUILTIN_R_DATA)
    entries = builtin_r_entries()
    # one entry per data set variant and covariance type (one serving all three at d = 1), each cross-validated
    # for its own type
    made = {(e["name"], tuple(sorted(e["variant"].items())), e["covariance_type"]) for e in entries}
    assert made == {(name, tuple(sorted(v.items())), t) for name, v in BUILTIN_R_VARIANTS
                    for t in types_for(2 if name in ("old-faithful", "mnist") else 1)}
    for entry in entries:
        name, t = entry["name"], entry["covariance_type"]
        r, text = builtin_r(name, t, entry["variant"])
        assert r == entry["r"] and r in DEFAULT_GRID
        assert entry["command"] == BUILTIN_R_COMMAND and BUILTIN_R_COMMAND in text
        assert {k: entry["cv"][k] for k in BUILTIN_R_SETTINGS} == BUILTIN_R_SETTINGS
        assert entry["cv"]["niw_fixed"] == {"covariance_type": t}  # fitted with the type it is shipped for
        assert entry["data"]["name"] == name and f"for {name}" in text
        assert entry["types"] == (list(COVARIANCE_TYPES) if entry["d"] == 1 else [t])
        words = {"full": "full", "diag": "diagonal", "spherical": "spherical"}
        for served in entry["types"]:
            assert f"with {words[served]} covariances" in builtin_r(name, served, entry["variant"])[1]
        if entry["d"] == 1:
            assert "one model, so this r serves all three" in text
        assert entry["curve"][DEFAULT_GRID.index(r)]["r"] == r
        # each split's held-out scores at r, for the comparison of the types (the same splits for every type)
        assert entry["splits"]["r"] == r and len(entry["splits"]["log_pred"]) == 15
        assert np.mean(entry["splits"]["log_pred"]) == pytest.approx(entry["curve"][DEFAULT_GRID.index(r)]["log_pred"])
    r, text = builtin_r("my.csv")
    assert r == DEFAULT_R and "not chosen for these data" in text and "Choose r" in text
    # the default call is the full type at the data set's default settings
    assert builtin_r("old-faithful") == builtin_r("old-faithful", "full", {})


def test_no_r_is_passed_off_as_cross_validated_for_settings_it_was_not():
    """Old Faithful with diagonal covariances gets the r cross-validated for them, not the full type's; MNIST at 10
    dimensions its own; where nothing was cross-validated for the settings at hand (another N, another MNIST
    embedding), the r is the same type's at the default settings and the text says that none was for these."""
    from types import SimpleNamespace

    from pcrp import data as data_mod
    from pcrp.analyses.cv import builtin_r_entries, shipped_r

    def entry(name, t, variant=None):
        return next(e for e in builtin_r_entries() if e["name"] == name and e["covariance_type"] == t
                    and e["variant"] == (variant or {}))

    diag = shipped_r("old-faithful", "diag")
    assert diag.matched and diag.r == entry("old-faithful", "diag")["r"] and diag.entry["covariance_type"] == "diag"
    assert diag.line == f"r = {diag.r:g}: cross-validated for these data with diagonal covariances."
    ten = shipped_r("mnist", "spherical", {"dims": 10})
    assert ten.matched and ten.r == entry("mnist", "spherical", {"dims": 10})["r"] and "10 dimensions" in ten.text
    # a pcrp.data.Dataset is matched by its source and standardisation
    ds = data_mod.load("mnist", dims=10)
    assert shipped_r("mnist", "spherical", ds) == ten
    assert not shipped_r("old-faithful", "full", SimpleNamespace(source=ds.source, standardized=False)).matched
    for name, t, data in (("sim2", "full", {"n": 1000}), ("mnist", "diag", {"embedding": "pca"}),
                          ("mnist", "full", {"dims": 5}), ("old-faithful", "full", {"standardize_data": False}),
                          ("old-faithful", "diag", {"columns": ["eruptions", "waiting"]})):
        other = shipped_r(name, t, data)
        assert not other.matched and other.r == entry(name, t)["r"], (name, data)
        assert other.text.startswith(f"No r was cross-validated for {name} at these data settings: r = {other.r:g} is "
                                     "the one cross-validated for"), other.text
        assert "not a choice for these data" in other.text and "not for these settings" in other.line
        assert other.cv_kept is None  # nothing backs a collapse verdict from another setting's cross validation
    assert shipped_r("sim1", "spherical", {"n": 300, "seed": 0}).matched  # the defaults, given, match
    with pytest.raises(Exception, match="tied"):
        shipped_r("old-faithful", "tied")


def test_pcrp_run_with_another_covariance_type_uses_its_r_and_is_not_called_collapsed(tmp_path, capsys):
    """Issue 57: `pcrp run old-faithful --covariance-type diag` ran at the full type's r and was called COLLAPSED below
    the CRP's 3 clusters while it kept the two eruption types. It now runs at the r cross-validated for diagonal
    covariances, says so, and is judged against the clusters the shipped cross validation of that type keeps and
    the CRP's, whose third cluster a CRP with full covariances (the type these data support) joins."""
    from pcrp.analyses.cv import shipped_r
    from pcrp.cli import main
    from pcrp.runs.chains import ChainSet

    for t, words in (("diag", "diagonal"), ("spherical", "spherical")):
        out = tmp_path / f"{t}.npz"
        assert main(["run", "old-faithful", "--covariance-type", t, "--iters", "600", "--seed", "0", "--out",
                     str(out)]) == 0
        printed = capsys.readouterr().out
        assert ChainSet.load(out).config["r"] == shipped_r("old-faithful", t).r
        assert f"where r came from: r = {shipped_r('old-faithful', t).r:g} for old-faithful with {words} covariances" \
            in printed
        line = next(line for line in printed.splitlines() if line.startswith("  against the CRP:"))
        assert line.startswith("  against the CRP: no collapse; every chain keeps the 2 clusters kept by cross "
                               f"validation of r for {words} covariances on these data"), line
        assert "COLLAPSED" not in printed
@pytest.mark.slow
def test_the_shipped_r_of_old_faithful_is_what_its_command_computes():
    """Recomputes Old Faithful's full and diagonal entries (a few minutes on two cores): CV is reproducible per seed
    whatever n_jobs, so the same settings must give the shipped curves, r and splits exactly."""
    from pcrp.analyses.cv import builtin_r_entries, compute_builtin_r

    shipped = {e["covariance_type"]: e for e in builtin_r_entries() if e["name"] == "old-faithful"}
    for entry in compute_builtin_r(["old-faithful"], n_jobs=2, types=("full", "diag")):
        old = shipped[entry["covariance_type"]]
        assert (entry["r"], entry["cv_r"]) == (old["r"], old["cv_r"])
        assert all(row == pytest.approx(was, rel=1e-9) for row, was in zip(entry["curve"], old["curve"]))
        assert entry["splits"] == old["splits"] and len(entry["curve"]) == len(old["curve"])


def test_settings_are_checked_by_their_declarations():
    """alpha, folds and repeats are checked once, by CV_PARAMS (alpha's bounds are the registry's), before any fit;
    the presets are values over the same declarations and the default grid is the registry's tune_grid."""
    from pcrp.analyses.cv import BUILTIN_R_SETTINGS, CHOOSE_R_PAGE, CV_PARAMS, DEFAULT_GRID
    from pcrp.model import PRIORS

    X = np.random.default_rng(0).normal(size=(40, 1))
    with pytest.raises(CVError, match=r"alpha must be a finite number > 0 \(got 0\)"):
        cross_validate(X, alpha=0)
    with pytest.raises(CVError, match="repeats must be a whole number >= 1"):
        cross_validate(X, repeats=0)
    assert CV_PARAMS["alpha"] is PRIORS["pcrp"].param("alpha")
    assert DEFAULT_GRID == PRIORS["pcrp"].tune_grid
    assert {k: v for k, v in BUILTIN_R_SETTINGS.items() if k != "rule"} == CV_PARAMS.preset(
        **{k: v for k, v in BUILTIN_R_SETTINGS.items() if k != "rule"})
    assert set(CHOOSE_R_PAGE) <= set(CV_PARAMS)

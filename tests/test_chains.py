"""Several chains: run_chains, the ChainSet container (save / load / InferenceData), and the diagnostics."""

import json

import arviz as az
import numpy as np
import pytest

from pcrp.chains import DEFAULT_INITS, ChainSet, chain_seeds, resolve_inits, run_chains, run_config
from pcrp.model import CRP, PowerCRP, resolve_niw
from pcrp.sampler import SamplerError, keep_schedule, run
from pcrp.summary import chain_diagnostics, mean_and_mcse, metric_summary, rhat_warnings


@pytest.fixture(scope="module")
def X():
    rng = np.random.default_rng(0)
    return np.concatenate([rng.normal(-2, 0.5, size=(25, 2)), rng.normal(2, 0.5, size=(25, 2))])


@pytest.fixture(scope="module")
def chains(X):
    return run_chains(X, PowerCRP(1.0, 1.3), resolve_niw(X), n_chains=3, init=["one", "random:5"], iters=60,
                      burn_in=20, thin=4, seed=11, n_jobs=2)


def test_shapes_schedule_and_config(X, chains):
    assert chains.K.shape == (3, 60) and chains.log_joint.shape == (3, 60)
    assert chains.labels.shape == (3, 10, 50) and chains.labels.dtype == np.int16
    assert np.array_equal(chains.kept_sweeps, keep_schedule(60, 20, 4))
    assert chains.seconds_per_sweep.shape == (3,) and chains.split_merge_stats.shape == (3, 4)
    assert chains.inits == ["one", "random:5", "one"]  # cycled
    config = chains.config
    assert config["n_chains"] == 3 and len(set(config["chain_seeds"])) == 3 and config["seed"] == 11
    assert config["split_merge"] == 1 and config["r"] == 1.3 and config["n"] == 50 and config["d"] == 2
    json.dumps(config)  # JSON-serialisable as it is


def test_each_chain_is_the_single_chain_run_with_its_seed_and_start(X, chains):
    seeds = chain_seeds(11, 3)
    assert seeds == chains.config["chain_seeds"]
    for c, init in enumerate(["one", "random:5", "one"]):
        single = run(X, PowerCRP(1.0, 1.3), resolve_niw(X), iters=60, burn_in=20, thin=4, seed=seeds[c], init=init)
        assert np.array_equal(single.K, chains.K[c])
        assert np.array_equal(single.labels, chains.labels[c])
    assert len(set(seeds)) == 3 and chain_seeds(12, 3) != seeds  # one stream per chain, from the run's seed


def test_same_seed_same_chains_whatever_the_threads(X, chains):
    again = run_chains(X, PowerCRP(1.0, 1.3), resolve_niw(X), n_chains=3, init=["one", "random:5"], iters=60,
                       burn_in=20, thin=4, seed=11, n_jobs=1)
    assert np.array_equal(again.labels, chains.labels) and np.array_equal(again.log_joint, chains.log_joint)


def test_one_chain_keeps_the_axis_and_sampler_options_pass_through(X):
    one = run_chains(X, CRP(1.0), resolve_niw(X), n_chains=1, iters=10, burn_in=0, thin=1, seed=0, split_merge=0)
    assert one.K.shape == (1, 10) and one.labels.shape == (1, 10, 50)
    assert one.config["split_merge"] == 0 and one.config["r"] == 1.0 and one.inits == [DEFAULT_INITS[0]]
    assert one.split_merge_stats.sum() == 0


def test_split_merge_history_adds_up_to_the_totals(chains):
    # the last kept sweep is the last sweep (60), so the per-draw counts sum to the chain totals
    assert chains.kept_sweeps[-1] == 60
    assert np.array_equal(chains.split_merge_history.sum(axis=1), chains.split_merge_stats)
    assert chains.split_merge_stats[:, 0].min() > 0  # one proposal per sweep was made


def test_save_and_load_round_trip_without_pickle(tmp_path, chains):
    path = tmp_path / "run.result"  # written exactly there: no .npz appended
    chains.save(path, extra={"psm": np.eye(50, dtype=np.float32)})
    loaded = ChainSet.load(path)
    for name in ("K", "log_joint", "labels", "kept_sweeps", "seconds_per_sweep", "split_merge_stats",
                 "split_merge_history"):
        assert np.array_equal(getattr(loaded, name), getattr(chains, name)), name
        assert getattr(loaded, name).dtype == getattr(chains, name).dtype
    assert loaded.config == chains.config
    with np.load(path, allow_pickle=False) as f:
        assert f["psm"].shape == (50, 50) and all(f[k].dtype != object for k in f.files)


def test_load_reads_a_single_chain_file_and_refuses_others(tmp_path):
    old = tmp_path / "old.npz"
    np.savez(old, K=np.ones(8, int), log_joint=np.zeros(8), labels=np.zeros((4, 5), np.int16),
             kept_sweeps=np.arange(5, 9), config=np.array(json.dumps({"burn_in": 4})))
    loaded = ChainSet.load(old)
    assert loaded.K.shape == (1, 8) and loaded.labels.shape == (1, 4, 5)
    assert loaded.split_merge_history.shape == (1, 4, 4)
    bad = tmp_path / "bad.npz"
    np.savez(bad, K=np.ones(3))
    with pytest.raises(ValueError, match="is not a pcrp result: it lacks log_joint, labels, kept_sweeps, config"):
        ChainSet.load(bad)


def test_inference_data_holds_the_kept_draws(chains):
    idata = chains.to_inference_data()
    post = idata.posterior
    assert post["K"].dims == ("chain", "draw") and post["labels"].dims == ("chain", "draw", "point")
    assert np.array_equal(post["K"].values, chains.kept_K)
    assert np.array_equal(post["log_joint"].values, chains.kept_log_joint)
    assert np.array_equal(post["labels"].values, chains.labels)
    assert np.array_equal(post["draw"].values, chains.kept_sweeps)
    assert int(idata.sample_stats["splits_proposed"].sum()) == int(chains.split_merge_stats[:, 0].sum())
    assert json.loads(idata.attrs["config"]) == chains.config
    diag = chains.diagnostics()
    assert diag["K"]["rhat"] == pytest.approx(float(az.rhat(idata, var_names=["K"])["K"]), nan_ok=True)
    # the log joint is ranked to 1e-6 nats: these chains share one partition, whose log joint differs only
    # in rounding between the rank-one updates and a recomputation; that noise must not look like mixing
    rounded = np.round(chains.kept_log_joint, 6)
    assert np.ptp(rounded) == 0 and np.ptp(chains.kept_log_joint) > 0
    assert np.isnan(diag["log_joint"]["rhat"])


def ar1(n_chains, n, phi, seed, shift=()):
    rng = np.random.default_rng(seed)
    x = np.zeros((n_chains, n))
    for t in range(1, n):
        x[:, t] = phi * x[:, t - 1] + rng.normal(size=n_chains)
    for c, s in enumerate(shift):
        x[c] += s
    return x


def test_mcse_accounts_for_autocorrelation():
    # AR(1) with phi = 0.9: the variance of the mean is (1 + phi) / (1 - phi) = 19 times the iid value, so the
    # MCSE is about sqrt(19) = 4.4 times std / sqrt(n); std / sqrt(n) would understate it
    x = ar1(4, 2000, 0.9, seed=1)
    mean, mcse = mean_and_mcse(x)
    naive = x.std() / np.sqrt(x.size)
    assert mean == pytest.approx(x.mean())
    assert 3.0 < mcse / naive < 6.0
    iid = np.random.default_rng(2).normal(size=(4, 2000))
    assert mean_and_mcse(iid)[1] / (iid.std() / np.sqrt(iid.size)) == pytest.approx(1.0, abs=0.15)
    assert np.isnan(mean_and_mcse(np.arange(3.0))[1])  # too few draws to tell


def test_rhat_flags_chains_that_disagree_and_not_chains_that_agree():
    agree = chain_diagnostics(ar1(4, 1000, 0.5, seed=3))
    assert agree["rhat"] < 1.01 and len(agree["per_chain"]) == 4
    assert all(c["rhat"] < 1.05 for c in agree["per_chain"])
    apart = chain_diagnostics(ar1(4, 1000, 0.5, seed=3, shift=(0, 0, 0, 3)))
    assert apart["rhat"] > 1.1
    assert rhat_warnings({"log_joint": agree}) == []
    lines = rhat_warnings({"K": apart})
    assert len(lines) == 1 and lines[0].startswith("R-hat on K is") and "more sweeps" in lines[0]
    stuck = chain_diagnostics(np.array([[1.0] * 50, [2.0] * 50]))  # each chain constant at its own K
    assert stuck["rhat"] == np.inf and rhat_warnings({"K": stuck})
    assert np.isnan(chain_diagnostics(np.ones((2, 50)))["rhat"])  # identical constants: nothing to compare


def test_metric_summary_pools_chains_with_mcse():
    true = np.repeat([0, 1], 5)
    draws = np.array([[true if (c + s) % 3 else np.zeros(10, int) for s in range(8)] for c in range(2)])
    out = metric_summary(true, draws)
    nmi_values = np.array([[1.0 if (c + s) % 3 else 0.0 for s in range(8)] for c in range(2)])
    assert out["NMI"] == pytest.approx(mean_and_mcse(nmi_values))
    assert out["NMI"][1] == pytest.approx(float(az.mcse(nmi_values)[0]))
    assert metric_summary(true, draws[0])["NMI"] == pytest.approx(mean_and_mcse(nmi_values[0]))


def test_run_config_is_one_json_shape():
    niw = resolve_niw(np.random.default_rng(0).normal(size=(10, 2)))
    config = run_config(CRP(2.0), niw, iters=100, burn_in=50, thin=2, seed=3, chain_seeds=[1, 2],
                        inits=["one", np.zeros(10, int)], moves={"split_merge": 1},
                        data={"data": "x.csv", "columns": ["a", "b"], "n": np.int64(10)})
    assert config["prior"] == "crp" and config["r"] == 1.0 and config["alpha"] == 2.0
    assert config["init"] == ["one", "labels"] and config["n_chains"] == 2 and config["n"] == 10
    assert json.loads(json.dumps(config)) == config


@pytest.mark.parametrize("kwargs,message", [
    (dict(n_chains=0), "n_chains must be a whole number >= 1"),
    (dict(init=["one", "kmeans:x"]), "init must be 'one', 'random:K' or 'kmeans:K'"),
    (dict(init=[]), "init must be one start"),
    (dict(seed=-1), "seed must be a whole number >= 0"),
    (dict(n_jobs=0), "n_jobs must be a whole number"),
    (dict(moves_per_sweep=3), "unknown sampler option moves_per_sweep; the sampler accepts: split_merge"),
    (dict(burn_in=30), r"burn_in \(30\) must be smaller than iters \(30\)"),
    (dict(thin=21), r"thin \(21\) leaves no draws to keep"),
])
def test_bad_settings_are_refused_with_a_message(X, kwargs, message):
    settings = dict(n_chains=2, iters=30, burn_in=10, thin=2, seed=0)
    with pytest.raises(SamplerError, match=message):
        run_chains(X, CRP(1.0), resolve_niw(X), **{**settings, **kwargs})


def test_callback_reports_every_chain(X):
    seen = set()
    run_chains(X, CRP(1.0), resolve_niw(X), n_chains=2, iters=1200, burn_in=4, thin=4, seed=0,
               callback=lambda chain, done: seen.add((chain, done)))
    assert seen == {(c, done) for c in (0, 1) for done in (500, 1000, 1200)}  # every CALL_SWEEPS and the end


def test_resolve_inits_accepts_label_arrays():
    labels = np.array([0, 0, 1])
    starts = resolve_inits(labels, 2)
    assert len(starts) == 2 and all(np.array_equal(s, labels) for s in starts)
    assert resolve_inits(None, 4) == ["kmeans:10", "one", "random:20", "kmeans:10"]

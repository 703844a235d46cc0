"""Several chains: run_chains, the ChainSet container (save / load / InferenceData), and the diagnostics."""

import errno
import io
import json
import os
import re
import zipfile

import arviz as az
import numpy as np
import pytest

from pcrp.runs.chains import ChainFileError, ChainSet, run_chains
from pcrp.model import CRP, PowerCRP, resolve_niw
from pcrp.runs.run_spec import DEFAULT_INITS, chain_seeds, make_run_spec, resolve_inits
from pcrp.runs.chains import run_chain as run
from pcrp.sampling.sampler import Sampler
from pcrp.basics.errors import SamplerError
from pcrp.sampling.recorder import keep_schedule
from pcrp.summaries.summary import chain_diagnostics, mean_and_mcse, metric_summary, rhat_warnings


@pytest.fixture(scope="module")
def X():
    rng = np.random.default_rng(0)
    return np.concatenate([rng.normal(-2, 0.5, size=(25, 2)), rng.normal(2, 0.5, size=(25, 2))])


def run_on(X, prior, **settings):
    """run_chains of the spec that make_run_spec builds from ``settings``."""
    return run_chains(X, make_run_spec(X, prior=prior, **settings))


@pytest.fixture(scope="module")
def chains(X):
    return run_on(X, PowerCRP(1.0, 1.3), n_chains=3, init=["one", "random:5"], iters=60, burn_in=20, thin=4, seed=11,
                  n_jobs=2)


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
        single = Sampler(X, PowerCRP(1.0, 1.3), resolve_niw(X), seed=seeds[c], init=init)
        keep = np.zeros(60, dtype=bool)
        keep[keep_schedule(60, 20, 4) - 1] = True
        info = single.step(60, keep=keep)
        assert np.array_equal(info.K, chains.K[c])
        assert np.array_equal(info.kept_labels, chains.labels[c])
    assert len(set(seeds)) == 3 and chain_seeds(12, 3) != seeds  # one stream per chain, from the run's seed


def test_same_seed_same_chains_whatever_the_threads(X, chains):
    again = run_on(X, PowerCRP(1.0, 1.3), n_chains=3, init=["one", "random:5"], iters=60, burn_in=20, thin=4,
                   seed=11, n_jobs=1)
    assert np.array_equal(again.labels, chains.labels) and np.array_equal(again.log_joint, chains.log_joint)


def test_one_chain_keeps_the_axis_and_sampler_options_pass_through(X):
    one = run_on(X, CRP(1.0), n_chains=1, iters=10, burn_in=0, thin=1, seed=0, split_merge=0)
    assert one.K.shape == (1, 10) and one.labels.shape == (1, 10, 50)
    assert one.config["split_merge"] == 0 and one.config["prior"] == "crp" and one.inits == [DEFAULT_INITS[0]]
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
    with pytest.raises(ValueError, match="is not a pcrp result file: it lacks log_joint, labels, kept_sweeps, config"):
        ChainSet.load(bad)


def _arrays(chains):
    """The arrays ChainSet.save writes, as a dict to tamper with (3 chains, 60 sweeps, 10 kept draws, 50 points)."""
    arrays = {name: getattr(chains, name).copy() for name in ("K", "log_joint", "labels", "kept_sweeps",
                                                              "seconds_per_sweep", "split_merge_stats",
                                                              "split_merge_history")}
    arrays["config"] = np.array(json.dumps(chains.config))
    return arrays


def _changed(chains, **changes):
    return {**_arrays(chains), **changes}


def _bump_k_at_a_kept_sweep(chains):
    K = chains.K.copy()
    K[0, chains.kept_sweeps[3] - 1] += 1
    return _changed(chains, K=K)


def _object_array(chains):
    return _changed(chains, K=np.array([{"K": 2}], dtype=object))


# One row per tampered file (issue 18): how the file is made from a good one, and what the message must say.
# A callable gets the ChainSet and returns the arrays to save; bytes are written as they are.
TAMPERED = {
    "float labels": (lambda c: _changed(c, labels=c.labels.astype(float)),
                     r"labels must hold whole numbers \(cluster codes\), but it holds float64"),
    "K with the wrong chain count": (lambda c: _changed(c, K=c.K[:2]), r"K has 2 chains but the config says n_chains = 3"),
    "kept_sweeps of the wrong length": (lambda c: _changed(c, kept_sweeps=c.kept_sweeps[:-1]),
                                        r"labels has shape \(3, 10, 50\), but \(chains, kept draws, points\) must be "
                                        r"\(3, 9, 50\) to match K and kept_sweeps\.$"),
    "labels of the wrong width": (lambda c: _changed(c, labels=c.labels[:, :, :-1]),
                                  r"labels has 49 points per draw but the config says n = 50"),
    "string K": (lambda c: _changed(c, K=c.K.astype(str)), r"K must hold whole numbers, but it holds <U\d+"),
    "K / labels mismatch": (_bump_k_at_a_kept_sweep,
                            r"K disagrees with labels \(at sweep \d+ of chain 1 K is \d+, but the labels of that draw "
                            r"form \d+ clusters\)"),
    "not a zip": (lambda c: b"K,log_joint\n1,2\n",
                  r"is not a pcrp result file: it is not a complete zip archive \(an \.npz file is one; a file cut "
                  r"short, e.g. by a full disk, is not\)"),
    "a zip cut short": (lambda c: c.npz_bytes()[:len(c.npz_bytes()) // 2],
                        r"is not a pcrp result file: it is not a complete zip archive"),
    "object arrays": (_object_array, r"its array K holds Python objects, which pcrp never writes and which could "
                                     r"be read only by unpickling"),
    "negative labels": (lambda c: _changed(c, labels=c.labels - 1),
                        r"labels must be cluster codes from 0 to 49 \(one less than the 50 points\), but they hold -1"),
    "integer log joint": (lambda c: _changed(c, log_joint=c.log_joint.astype(np.int64)),
                          r"log_joint must hold floating-point numbers, but it holds int64"),
    "log joint one sweep short": (lambda c: _changed(c, log_joint=c.log_joint[:, :-1]),
                                  r"log_joint has shape \(3, 59\), but \(chains, sweeps\) must be \(3, 60\) to match K"),
    "labels without the chain axis": (lambda c: _changed(c, labels=c.labels[0]),
                                      r"labels must have 3 dimensions \(chains, kept draws, points\), but it has 2"),
    "more sweeps than iters": (lambda c: _changed(c, K=np.concatenate([c.K, c.K[:, -1:]], axis=1),
                                                  log_joint=np.concatenate([c.log_joint, c.log_joint[:, -1:]], axis=1)),
                               r"K has 61 sweeps but the config says iters = 60"),
    "kept_sweeps decreasing": (lambda c: _changed(c, kept_sweeps=c.kept_sweeps[::-1].copy()),
                               r"kept_sweeps must increase, but sweep 56 follows sweep 60"),
    "kept_sweeps beyond the sweeps": (lambda c: _changed(c, kept_sweeps=c.kept_sweeps + 4),
                                      r"kept_sweeps must be sweeps from 1 to 60 \(K's sweeps\), but they run from "
                                      r"28 to 64"),
    "kept_sweeps off the schedule": (lambda c: _changed(c, kept_sweeps=c.kept_sweeps - 1),
                                     r"kept_sweeps \(10 draws from sweep 23\) is not the config's schedule \(iters 60, "
                                     r"burn_in 20, thin 4: 10 draws from sweep 24\)"),
    "K of zero": (lambda c: _changed(c, K=np.where(np.arange(60) == 0, 0, c.K)),
                  r"K must count clusters from 1 to the 50 points, but it holds 0"),
    "split-merge counts of the wrong shape": (lambda c: _changed(c, split_merge_history=c.split_merge_history[:, :, :3]),
                                              r"split_merge_history has shape \(3, 10, 3\), but \(chains, kept draws, "
                                              r"4 counts\) must be \(3, 10, 4\) to match K and kept_sweeps"),
    "float split-merge counts": (lambda c: _changed(c, split_merge_stats=c.split_merge_stats * 1.0),
                                 r"split_merge_stats must hold whole numbers \(counts\), but it holds float64"),
    "config not JSON": (lambda c: _changed(c, config=np.array("{iters: 60")), r"config is not valid JSON"),
    "config a JSON list": (lambda c: _changed(c, config=np.array("[60, 20, 4]")),
                           r"config must be a JSON object of settings, not list"),
    "config as numbers": (lambda c: _changed(c, config=np.arange(3)),
                          r"config must be one JSON string, but it holds int64 of shape \(3,\)"),
}


@pytest.mark.parametrize("case", list(TAMPERED))
def test_each_tampered_file_is_refused_in_one_sentence(tmp_path, chains, case):
    make, message = TAMPERED[case]
    path = tmp_path / "tampered.npz"
    content = make(chains)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        np.savez(path, **content)
    with pytest.raises(ChainFileError) as caught:
        ChainSet.load(path)
    text = str(caught.value)
    assert isinstance(caught.value, ValueError)
    assert text.startswith(f"{path} is not a pcrp result file: ") and text.endswith(".") and "\n" not in text, text
    assert "allow_pickle" not in text and "Traceback" not in text
    assert re.search(message, text), text


def test_a_damaged_or_oversized_array_is_refused_before_it_is_read(tmp_path, chains):
    good = chains.npz_bytes()
    raw = bytearray(_stored_npz(chains))
    at = raw.find(chains.K.tobytes())
    raw[at + 8] ^= 0xFF  # a bit of K's data: the zip member's checksum no longer matches
    (tmp_path / "damaged.npz").write_bytes(bytes(raw))
    with pytest.raises(ChainFileError, match=r"its array K is damaged \(Bad CRC-32"):
        ChainSet.load(tmp_path / "damaged.npz")
    # a header promising 8 TB in a few bytes is refused from the header, before numpy allocates it
    arrays = zipfile.ZipFile(io.BytesIO(good))
    with zipfile.ZipFile(tmp_path / "huge.npz", "w") as out:
        for member in arrays.namelist():
            out.writestr(member, arrays.read(member))
        header = io.BytesIO()
        np.lib.format.write_array_header_1_0(header, {"descr": "<i8", "fortran_order": False, "shape": (10**12,)})
        out.writestr("seconds_per_sweep.npy", header.getvalue() + b"\0" * 64)
    with pytest.raises(ChainFileError, match=r"its array seconds_per_sweep is cut short \(its header promises "
                                             r"7,629,394.5 MiB, the archive holds 64 bytes\)"):
        ChainSet.load(tmp_path / "huge.npz")


def _stored_npz(chains):
    """The arrays of ``chains`` in an uncompressed .npz (np.savez), so their bytes can be found and changed."""
    buffer = io.BytesIO()
    np.savez(buffer, **_arrays(chains))
    return buffer.getvalue()


def test_load_reads_what_save_and_npz_bytes_write_and_a_stopped_live_run(tmp_path, chains):
    """Files of the current code load, from a path or from bytes; so does a live run cut short, whose K is
    shorter than iters and whose kept draws are a prefix of the schedule."""
    assert np.array_equal(ChainSet.load(io.BytesIO(chains.npz_bytes())).labels, chains.labels)
    cut = ChainSet(K=chains.K[:, :41], log_joint=chains.log_joint[:, :41], labels=chains.labels[:, :5],
                   kept_sweeps=chains.kept_sweeps[:5], seconds_per_sweep=chains.seconds_per_sweep,
                   split_merge_stats=chains.split_merge_stats, split_merge_history=chains.split_merge_history[:, :5],
                   config=chains.config)
    cut.save(tmp_path / "cut.npz")
    assert ChainSet.load(tmp_path / "cut.npz").K.shape == (3, 41)


class _FullDisk:
    """A file whose writes fail with ENOSPC once ``room`` bytes are written (the disk is full)."""

    def __init__(self, f, room):
        self._f, self._room = f, room

    def write(self, data):
        if len(data) > self._room:
            self._f.write(bytes(data[:self._room]))
            self._room = 0
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        self._room -= len(data)
        return self._f.write(data)

    def __getattr__(self, name):
        return getattr(self._f, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._f.close()


def test_save_on_a_full_disk_leaves_the_earlier_file_and_no_temporary_file(tmp_path, chains, monkeypatch):
    from pcrp.basics import files

    path = tmp_path / "run.npz"
    chains.save(path)
    before = path.read_bytes()
    real_open = files._open_temp
    monkeypatch.setattr(files, "_open_temp", lambda fd, mode: _FullDisk(real_open(fd, mode), room=1000))
    with pytest.raises(OSError) as caught:
        chains.save(path, extra={"psm": np.eye(50, dtype=np.float32)})
    assert caught.value.errno == errno.ENOSPC
    assert path.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["run.npz"]
    assert ChainSet.load(path).K.shape == (3, 60)


def test_netcdf_bytes_open_with_xarray_and_arviz(tmp_path, chains):
    import xarray as xr

    content = chains.netcdf_bytes()
    assert type(content) is bytes  # Streamlit's download refuses the memoryview xarray returns
    path = tmp_path / "traces.nc"
    path.write_bytes(content)
    with xr.open_dataset(path) as ds:
        assert ds["K"].dims == ("chain", "draw") and ds["log_joint"].dims == ("chain", "draw")
        assert np.array_equal(ds["K"].values, chains.K_after_burn_in)
        assert np.array_equal(ds["log_joint"].values, chains.log_joint_after_burn_in)
        assert np.array_equal(ds["draw"].values, np.arange(21, 61))
        assert json.loads(ds.attrs["config"]) == chains.config
        idata = az.convert_to_inference_data(ds)
        assert idata.posterior["K"].shape == (3, 40)


def test_inference_data_holds_every_sweep_after_burn_in_and_the_kept_labels(chains):
    X = np.arange(chains.n_points * 2, dtype=float).reshape(-1, 2)
    idata = chains.to_inference_data(observed=X)
    post = idata.posterior
    assert sorted(post.data_vars) == ["K", "log_joint"]  # az.summary lists these two, not a row per label
    assert list(az.summary(idata).index) == ["K", "log_joint"]
    assert post["K"].dims == ("chain", "draw") and idata.labels["labels"].dims == ("chain", "draw", "point")
    assert np.array_equal(post["K"].values, chains.K_after_burn_in)
    assert np.array_equal(post["log_joint"].values, chains.log_joint_after_burn_in)
    assert np.array_equal(post["draw"].values, np.arange(chains.burn_in + 1, 61))
    assert np.array_equal(idata.labels["labels"].values, chains.labels)
    assert np.array_equal(idata.labels["draw"].values, chains.kept_sweeps)
    assert np.array_equal(idata.sample_stats["draw"].values, chains.kept_sweeps)
    assert idata.observed_data["X"].dims == ("point", "feature") and np.array_equal(idata.observed_data["X"], X)
    assert "observed_data" not in chains.to_inference_data().groups()
    assert "labels" not in chains.to_inference_data(labels=False).groups()
    with pytest.raises(ValueError, match=r"observed must be the \(50, d\) data of the run"):
        chains.to_inference_data(observed=X[:3])
    assert int(idata.sample_stats["splits_proposed"].sum()) == int(chains.split_merge_stats[:, 0].sum())
    assert json.loads(idata.attrs["config"]) == chains.config


def test_arviz_summary_of_the_export_is_the_diagnostics():
    """What az.summary (ArviZ 0.x, unrounded) says of to_inference_data() is what diagnostics() says and a run
    prints: R-hat, bulk and tail ESS and the MCSE of the mean of K and of the log joint. Both are ArviZ's code (ours
    through arviz-stats), so they agree to rounding (1e-9; az.summary may take its numba path). One log joint:
    before, the export carried a log joint that moved in its last bits while the diagnostics rounded it (R-hat 1.15
    against 1.001 on the README's example)."""
    from pcrp import data

    ds = data.load("old-faithful")
    chains = run_on(ds.X, PowerCRP(1.0, 1.7), seed=0)
    summary = az.summary(chains.to_inference_data(), kind="diagnostics", round_to="none")
    diag = chains.diagnostics()
    for name in ("K", "log_joint"):
        for theirs, ours in (("r_hat", "rhat"), ("ess_bulk", "ess_bulk"), ("ess_tail", "ess_tail"),
                             ("mcse_mean", "mcse")):
            assert diag[name][ours] == pytest.approx(summary.loc[name, theirs], rel=1e-9), (name, ours)
    # the recorded log joint is one number per partition: rounded to 1e-6 nats where the sampler records it
    assert np.array_equal(chains.log_joint, np.round(chains.log_joint, 6))


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


def test_a_settled_quantity_is_judged_by_its_values_not_by_rhat():
    # Every chain holds K = 3 in 99.05% of 2,000 draws; 19 stray draws in two chains (at the start of one, the end of
    # another) push rank-normalised R-hat past 1.01 through ties alone. The old rule (R-hat > 1.01) called this
    # disagreement (the MFM false alarm on Sim 2); the chains agree.
    K = np.full((4, 2000), 3.0)
    K[0, :19], K[1, -19:] = 4, 2
    near_constant = chain_diagnostics(K)
    assert near_constant["rhat"] > 1.01 and near_constant["settled"] and near_constant["agree"]
    assert rhat_warnings({"K": near_constant}) == []
    # chains settled at different values disagree, whatever R-hat reads (inf here; nan for some ties)
    collapsed = chain_diagnostics(np.array([[3.0] * 200, [3.0] * 200, [1.0] * 200, [3.0] * 199 + [2.0]]))
    assert collapsed["settled"] and not collapsed["agree"]
    (line,) = rhat_warnings({"K": collapsed})
    assert "different values" in line and "3, 3, 1, 3" in line
    # one value off 2% of the time is not settled: R-hat decides
    moving = K.copy()
    moving[2, :40] = 5
    assert not chain_diagnostics(moving)["settled"]


def test_metric_summary_pools_chains_with_mcse():
    true = np.repeat([0, 1], 5)
    draws = np.array([[true if (c + s) % 3 else np.zeros(10, int) for s in range(8)] for c in range(2)])
    out = metric_summary(true, draws)
    nmi_values = np.array([[1.0 if (c + s) % 3 else 0.0 for s in range(8)] for c in range(2)])
    assert out["NMI"] == pytest.approx(mean_and_mcse(nmi_values))
    assert out["NMI"][1] == pytest.approx(float(az.mcse(nmi_values)[0]))
    assert metric_summary(true, draws[0])["NMI"] == pytest.approx(mean_and_mcse(nmi_values[0]))


def test_the_config_is_the_spec_as_one_json_shape(X):
    spec = make_run_spec(X, prior=CRP(2.0), iters=100, burn_in=50, thin=2, seed=3, n_chains=2,
                         init=["one", np.zeros(50, int)], data={"data": "x.csv", "columns": ["a", "b"]})
    config = spec.as_dict()
    assert config["prior"] == "crp" and config["alpha"] == 2.0 and "r" not in config  # its own parameters
    assert config["init"] == ["one", "labels"] and config["n_chains"] == 2 and config["n"] == 50
    assert config["budget"]["kind"] == "fixed" and config["iters"] == 100 and config["burn_in"] == 50
    assert json.loads(json.dumps(config)) == config


@pytest.mark.parametrize("kwargs,message", [
    (dict(n_chains=0), "n_chains must be a whole number >= 1"),
    (dict(init=["one", "kmeans:x"]), "init must be 'one', 'random:K' or 'kmeans:K'"),
    (dict(init=[]), "init must be one start"),
    (dict(seed=-1), "seed must be a whole number >= 0"),
    (dict(n_jobs=0), "n_jobs must be -1"),
    (dict(burn_in=30), r"burn_in \(30\) must be smaller than iters \(30\)"),
    (dict(thin=21), r"thin \(21\) leaves no draws to keep"),
])
def test_bad_settings_are_refused_with_a_message(X, kwargs, message):
    settings = dict(n_chains=2, iters=30, burn_in=10, thin=2, seed=0)
    with pytest.raises(SamplerError, match=message):
        run_on(X, CRP(1.0), **{**settings, **kwargs})


def test_callback_reports_every_chain(X):
    seen = {}
    spec = make_run_spec(X, prior=CRP(1.0), n_chains=2, iters=1200, burn_in=4, thin=4, seed=0)
    run_chains(X, spec, callback=lambda chain, done: seen.setdefault(chain, []).append(done))
    assert set(seen) == {0, 1}
    assert all(done == sorted(done) and done[-1] == 1200 for done in seen.values())  # each chain's own progress


def test_resolve_inits_accepts_label_arrays():
    labels = np.array([0, 0, 1])
    starts = resolve_inits(labels, 2)
    assert len(starts) == 2 and all(np.array_equal(s, labels) for s in starts)
    assert resolve_inits(None, 4) == ["kmeans:10", "one", "random:20", "kmeans:10"]


def test_result_files_hold_the_narrowest_labels_and_load_widens_them(tmp_path, chains):
    path = tmp_path / "run.npz"
    chains.save(path)
    with np.load(path, allow_pickle=False) as f:
        assert f["labels"].dtype == np.int8 and np.array_equal(f["labels"], chains.labels)
    loaded = ChainSet.load(path)
    assert loaded.labels.dtype == chains.labels.dtype and np.array_equal(loaded.labels, chains.labels)
    earlier = tmp_path / "earlier.npz"  # as result files were written before: savez_compressed, labels in int16
    np.savez_compressed(earlier, **_arrays(chains))
    assert np.array_equal(ChainSet.load(earlier).labels, chains.labels)


def test_large_arrays_are_stored_uncompressed_and_read_back(tmp_path, chains, monkeypatch):
    import pcrp.runs.result_file

    monkeypatch.setattr(pcrp.runs.result_file, "STORE_ABOVE_BYTES", chains.labels.size - 1)  # the int8 labels exceed it
    path = tmp_path / "run.npz"
    chains.save(path)
    with zipfile.ZipFile(path) as zf:
        assert zf.getinfo("labels.npy").compress_type == zipfile.ZIP_STORED
        assert zf.getinfo("K.npy").compress_type == zipfile.ZIP_DEFLATED
    loaded = ChainSet.load(path)
    assert np.array_equal(loaded.labels, chains.labels) and np.array_equal(loaded.K, chains.K)

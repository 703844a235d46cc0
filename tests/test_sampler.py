"""Sampler mechanics: incremental statistics, determinism, one compiled signature, init."""

import arviz as az
import numpy as np
import pytest

from pcrp.model import niw_math
from pcrp.kernels import sweep
from pcrp.data import simulation
from pcrp.model.exact import canonical
from pcrp.model import CRP, PowerCRP, resolve_niw
from pcrp.runs.chains import run_chain as run
from pcrp.runs.run_spec import chain_seeds
from pcrp.sampling.sampler import REFRESH_EVERY, Sampler
from pcrp.basics.errors import SamplerError
from pcrp.sampling.starts import initial_labels


@pytest.mark.parametrize("d", [1, 3])
def test_incremental_statistics_equal_recomputation(d):
    """After REFRESH_EVERY - 1 sweeps of rank-one updates (no refresh yet) the cached
    statistics equal a recomputation from the labels to 1e-8 relative."""
    rng = np.random.default_rng(d)
    X = np.r_[rng.normal(-1, 1, (60, d)), rng.normal(2, 0.7, (60, d))]
    s = Sampler(X, CRP(1.0), resolve_niw(X), seed=5, init="random:6")
    s.step(REFRESH_EVERY - 1)
    K = s.K
    assert s.cluster_sizes().sum() == X.shape[0]
    assert np.array_equal(np.bincount(s.labels, minlength=K), s.cluster_sizes())
    incremental = s.cluster_statistics()
    s.refresh()
    fresh = s.cluster_statistics()
    assert np.array_equal(incremental[0], fresh[0])
    for cached, recomputed in zip(incremental[1:], fresh[1:]):
        np.testing.assert_allclose(cached, recomputed, rtol=1e-8, atol=1e-10)
    _, means, precs, _ = fresh
    for k in range(K):
        m_n, kappa_n, nu_n, S_n = niw_math.posterior_params(X[s.labels == k], s.niw.m0, s.niw.kappa0,
                                                           s.niw.nu0, s.niw.S0)
        np.testing.assert_allclose(np.linalg.inv(precs[k]), S_n, rtol=1e-9)
        np.testing.assert_allclose(means[k], m_n, rtol=1e-9, atol=1e-12)


def test_same_seed_same_chain_whatever_the_chunking(blobs2d):
    """Same seed: the same labels and the same per-sweep traces, in one call or in chunks.
    Another seed: another chain (its log joint trace differs: the trace is a function of the
    partitions visited, so the check does not depend on how clusters are numbered)."""
    niw = resolve_niw(blobs2d)
    a = Sampler(blobs2d, PowerCRP(1.0, 1.3), niw, seed=42)
    info_a = a.step(1500)
    b = Sampler(blobs2d, PowerCRP(1.0, 1.3), niw, seed=42)
    infos_b = [b.step(n) for n in [7] * 200 + [100]]
    assert np.array_equal(a.labels, b.labels)
    assert np.array_equal(info_a.K, np.concatenate([i.K for i in infos_b]))
    assert np.array_equal(info_a.log_joint, np.concatenate([i.log_joint for i in infos_b]))
    c = Sampler(blobs2d, PowerCRP(1.0, 1.3), niw, seed=43)
    info_c = c.step(1500)
    assert not np.allclose(info_c.log_joint, info_a.log_joint)


def test_one_sweep_kernel_serves_every_d_prior_move_and_start():
    """Priors, moves, starts and every d share one compiled sweep kernel per covariance type (numba compiles one per
    type: pcrp.kernels.scales): no run compiles another."""
    rng = np.random.default_rng(0)
    for covariance_type in ("full", "diag", "spherical"):
        for d, prior, sm, init in [(1, CRP(1.0), True, "one"), (3, PowerCRP(2.0, 1.5), False, "kmeans:4"),
                                   (2, CRP(0.5), 2, "random:3"), (17, CRP(1.0), 1, "random:2")]:
            X = rng.normal(size=(30, d))
            niw = resolve_niw(X, covariance_type=covariance_type)
            Sampler(X, prior, niw, split_merge=sm, init=init, seed=1).step(3)
    slots_types = [signature[3] for signature in sweep.run_sweeps.signatures]
    assert len(slots_types) == 3 and {slots.types[2].ndim for slots in slots_types} == {1, 2, 3}


def test_slot_arrays_grow_when_clusters_multiply():
    """Start with 16 slots; an enormous alpha opens a cluster for almost every point."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 1)) * 50
    s = Sampler(X, CRP(1e6), resolve_niw(X), seed=0, init="one")
    s.step(3)
    assert s.K > 16 and s.slots.counts.shape[0] >= s.K
    assert s.cluster_sizes().sum() == 200
    s.refresh()  # statistics still consistent after growth
    assert np.array_equal(np.bincount(s.labels), s.cluster_sizes())


def separates_blobs(labels):
    """True when the two 30-point blobs of ``blobs2d`` are two clusters of their own."""
    return len(set(labels[:30])) == 1 and len(set(labels[30:])) == 1 and labels[0] != labels[-1]


def test_split_merge_lets_pcrp_leave_one_cluster(blobs2d):
    """docs/design.md section 1.7: from one cluster, plain Gibbs under r = 1.5 never separates the two
    blobs in 300 sweeps (it only opens an occasional singleton); with split-merge moves the
    chain separates them within 10 sweeps and keeps them separated almost always."""
    niw = resolve_niw(blobs2d)
    stuck = Sampler(blobs2d, PowerCRP(1.0, 1.5), niw, seed=3, init="one", split_merge=False)
    mixing = Sampler(blobs2d, PowerCRP(1.0, 1.5), niw, seed=3, init="one", split_merge=True)
    stuck_separated, mixing_separated = [], []
    for _ in range(300):
        stuck.step(1)
        mixing.step(1)
        stuck_separated.append(separates_blobs(stuck.labels))
        mixing_separated.append(separates_blobs(mixing.labels))
    assert not any(stuck_separated)
    assert any(mixing_separated[:10])
    assert np.mean(mixing_separated[-100:]) > 0.9
    assert mixing.move_totals[1] >= 1  # at least one split accepted


@pytest.mark.parametrize("init,expected_k", [("one", 1), ("random:5", 5), ("kmeans:4", 4)])
def test_initialisations(blobs2d, init, expected_k):
    labels = initial_labels(blobs2d, init, np.random.default_rng(0))
    assert labels.shape == (60,)
    assert sorted(np.unique(labels)) == list(range(expected_k))


def test_given_labels_are_compacted(blobs2d):
    given = np.where(np.arange(60) < 30, 7, 3)
    s = Sampler(blobs2d, CRP(1.0), resolve_niw(blobs2d), init=given)
    assert s.K == 2 and set(s.labels) == {0, 1}


def test_kmeans_start_separates_blobs(blobs2d):
    labels = initial_labels(blobs2d, "kmeans:2", np.random.default_rng(0))
    assert len(set(labels[:30])) == 1 and len(set(labels[30:])) == 1 and labels[0] != labels[-1]


def test_run_keeps_thinned_draws():
    """Each kept draw is the state after its sweep: a sampler with the same seed stepped to
    that sweep has the same partition, and K and the log joint recorded for that sweep are
    those of the kept labels. On these overlapping data the partition changes in about half
    the sweeps; the test checks that it did change at some kept sweep, so keeping the state
    of the sweep before or after would fail."""
    X = np.random.default_rng(7).normal(size=(60, 2))
    niw = resolve_niw(X)
    prior = PowerCRP(1.0, 1.2)
    chain = run(X, prior, niw, iters=103, burn_in=50, thin=5, seed=0, init="random:8")
    assert chain.K.shape == (103,) and chain.log_joint.shape == (103,)
    assert list(chain.kept_sweeps) == list(range(55, 104, 5))
    assert chain.labels.shape == (10, 60)
    replay = Sampler(X, prior, niw, seed=chain_seeds(0, 1)[0], init="random:8")  # the one chain's seed
    done = 0
    changed_at_a_kept_sweep = False
    for labels, sweep in zip(chain.labels, chain.kept_sweeps):
        replay.step(sweep - 1 - done)
        before = canonical(replay.labels)
        replay.step(1)
        done = sweep
        assert canonical(labels) == canonical(replay.labels)
        changed_at_a_kept_sweep |= before != canonical(labels)
        assert chain.K[sweep - 1] == len(set(labels.tolist()))
        fresh = Sampler(X, prior, niw, init=labels.astype(np.int64))
        assert chain.log_joint[sweep - 1] == pytest.approx(fresh.log_joint(), abs=5e-7)  # recorded to 1e-6 nats
    assert changed_at_a_kept_sweep


def test_pcrp_gives_fewer_clusters_than_crp():
    """The paper's claim at sampler level: on Sim 2 (three well separated Gaussians, N = 300)
    the CRP posterior over-clusters (mean K about 4.3) and the pCRP with r = 1.2 does much
    less (about 3.3). Tolerance: the difference of posterior means must exceed 0.5 clusters
    and 5 standard errors (ArviZ MCSE of each chain's mean, combined); measured, it is about
    0.95 with a standard error of about 0.05."""
    X = simulation("sim2", n=300, seed=0, standardize_data=True).X
    niw = resolve_niw(X)
    means, errors = [], []
    for prior in (CRP(1.0), PowerCRP(1.0, 1.2)):
        K = run(X, prior, niw, iters=3000, burn_in=1000, seed=1).K[1000:].astype(float)
        means.append(K.mean())
        errors.append(np.asarray(az.mcse(K[None], method="mean")).item())
    difference = means[0] - means[1]
    assert difference > max(0.5, 5 * np.hypot(*errors))
    assert abs(means[1] - 3) < abs(means[0] - 3)  # and pCRP is the closer to the true K = 3


@pytest.mark.parametrize("kwargs,message", [
    ({"init": "kmeans:0"}, "init must be"),
    ({"init": "walk"}, "init must be"),
    ({"init": np.zeros(3)}, "one entry per row"),
    ({"split_merge": -1}, "split_merge must be a whole number >= 0"),
    ({"split_merge": 0.5}, "split_merge must be a whole number >= 0"),
    ({"split_merge": "often"}, "split_merge must be a whole number >= 0"),
])
def test_bad_sampler_settings(blobs2d, kwargs, message):
    with pytest.raises(SamplerError, match=message):
        Sampler(blobs2d, CRP(1.0), resolve_niw(blobs2d), **kwargs)


def test_nan_data_rejected():
    X = np.ones((5, 2))
    X[2, 1] = np.nan
    with pytest.raises(SamplerError, match="NaN or infinite"):
        Sampler(X, CRP(1.0), resolve_niw(np.ones((5, 2)) + np.arange(5)[:, None]))


@pytest.mark.parametrize("iters,burn_in,thin,message", [
    (0, 0, 1, "iters must be"), (10, 10, 1, "burn_in .* must be smaller"), (10, 2, 0, "thin must be"),
    (10, -1, 1, "burn_in must be"),
])
def test_bad_schedule(blobs2d, iters, burn_in, thin, message):
    with pytest.raises(SamplerError, match=message):
        run(blobs2d, CRP(1.0), resolve_niw(blobs2d), iters=iters, burn_in=burn_in, thin=thin)

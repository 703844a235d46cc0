"""Sampler mechanics: incremental statistics, determinism, one compiled signature, init."""

import numpy as np
import pytest

from pcrp import niw_math
from pcrp._kernels import gibbs
from pcrp.model import CRP, PowerCRP, resolve_niw
from pcrp.sampler import REFRESH_EVERY, Sampler, SamplerError, initial_labels, run


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
    incremental = (s.means[:K].copy(), s.precs[:K].copy(), s.logdets[:K].copy())
    s.refresh()
    for cached, fresh in zip(incremental, (s.means[:K], s.precs[:K], s.logdets[:K])):
        np.testing.assert_allclose(cached, fresh, rtol=1e-8, atol=1e-10)
    for k in range(K):
        m_n, kappa_n, nu_n, S_n = niw_math.posterior_params(X[s.labels == k], s.niw.m0, s.niw.kappa0,
                                                           s.niw.nu0, s.niw.S0)
        np.testing.assert_allclose(np.linalg.inv(s.precs[k]), S_n, rtol=1e-9)
        np.testing.assert_allclose(s.means[k], m_n, rtol=1e-9, atol=1e-12)


def test_same_seed_same_chain_whatever_the_chunking(blobs2d):
    niw = resolve_niw(blobs2d)
    a = Sampler(blobs2d, PowerCRP(1.0, 1.3), niw, seed=42)
    info_a = a.step(1500)
    b = Sampler(blobs2d, PowerCRP(1.0, 1.3), niw, seed=42)
    K_b = np.concatenate([b.step(n).K for n in [7] * 200 + [100]])
    assert np.array_equal(a.labels, b.labels)
    assert np.array_equal(info_a.K, K_b)
    c = Sampler(blobs2d, PowerCRP(1.0, 1.3), niw, seed=43)
    c.step(1500)
    assert not np.array_equal(c.step(50).K, a.step(50).K) or not np.array_equal(c.labels, a.labels)


def test_sweep_kernel_compiles_to_one_signature():
    rng = np.random.default_rng(0)
    for d, prior, sm, init in [(1, CRP(1.0), True, "one"), (3, PowerCRP(2.0, 1.5), False, "kmeans:4"),
                               (2, CRP(0.5), 2, "random:3")]:
        X = rng.normal(size=(30, d))
        Sampler(X, prior, resolve_niw(X), split_merge=sm, init=init, seed=1).step(3)
    assert len(gibbs.gibbs_sweeps.signatures) == 1


def test_slot_arrays_grow_when_clusters_multiply():
    """Start with 16 slots; an enormous alpha opens a cluster for almost every point."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 1)) * 50
    s = Sampler(X, CRP(1e12), resolve_niw(X), seed=0, init="one")
    s.step(3)
    assert s.K > 16 and s.counts.shape[0] >= s.K
    assert s.cluster_sizes().sum() == 200
    s.refresh()  # statistics still consistent after growth
    assert np.array_equal(np.bincount(s.labels), s.cluster_sizes())


def test_split_merge_lets_pcrp_leave_one_cluster(blobs2d):
    """DESIGN.md 'Mixing': from one cluster, plain Gibbs under r = 1.5 is stuck; split-merge finds K = 2."""
    niw = resolve_niw(blobs2d)
    stuck = Sampler(blobs2d, PowerCRP(1.0, 1.5), niw, seed=3, init="one", split_merge=False)
    mixing = Sampler(blobs2d, PowerCRP(1.0, 1.5), niw, seed=3, init="one", split_merge=True)
    K_stuck = stuck.step(300).K
    K_mixing = mixing.step(300).K
    assert K_mixing[-100:].mean() > 1.9
    assert mixing.sm_stats[1] >= 1  # at least one split accepted
    assert K_stuck.max() <= K_mixing[-100:].mean()


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


def test_run_keeps_thinned_draws(blobs2d):
    chain = run(blobs2d, CRP(1.0), resolve_niw(blobs2d), iters=103, burn_in=50, thin=5, seed=0)
    assert chain.K.shape == (103,) and chain.log_joint.shape == (103,)
    assert list(chain.kept_sweeps) == list(range(55, 104, 5))
    assert chain.labels.shape == (10, 60)
    assert chain.seconds_per_sweep > 0
    assert np.all(np.isfinite(chain.log_joint))


@pytest.mark.parametrize("kwargs,message", [
    ({"init": "kmeans:0"}, "init must be"),
    ({"init": "walk"}, "init must be"),
    ({"init": np.zeros(3)}, "one entry per row"),
    ({"split_merge": -1}, "split_merge must be >= 0"),
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

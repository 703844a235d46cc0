"""The multi-point moves of pcrp._kernels.moves: bookkeeping, schedule, determinism.

Their correctness as MCMC (detailed balance with respect to the exact partition
posterior) is tested in test_exact_posterior.py, each move alone and all combined.
"""

import numpy as np
import pytest

from pcrp._kernels import moves
from pcrp._kernels.rng import seed_state
from pcrp.data import mnist
from pcrp.model import CRP, PowerCRP, resolve_niw
from pcrp.niw_math import log_predictive, posterior_params
from pcrp.sampler import REFRESH_EVERY, Sampler

ALL_MOVES = {"split_merge": 1, "gibbs_split_merge": 1, "reallocate": 1, "regroup": 1}


@pytest.fixture
def three_blobs():
    """Three overlapping 2-D blobs, 120 points: moves of every kind get accepted."""
    rng = np.random.default_rng(4)
    centres = np.array([[-1.5, 0.0], [1.5, 0.0], [0.0, 2.0]])
    return centres[np.repeat(np.arange(3), 40)] + rng.normal(scale=0.8, size=(120, 2))


@pytest.mark.parametrize("kind", ["split_merge", "gibbs_split_merge", "reallocate", "regroup"])
def test_statistics_after_moves_equal_recomputation(three_blobs, kind):
    """Before the first refresh every cached statistic comes from incremental updates and
    from the moves writing their proposals back; they must equal a recomputation from the
    labels (a move that wrote a side into the wrong slot or relabelled the wrong points fails)."""
    options = {"split_merge": 0, kind: 3}
    s = Sampler(three_blobs, PowerCRP(1.0, 1.3), resolve_niw(three_blobs), seed=2, init="random:5", **options)
    s.step(REFRESH_EVERY // 5)
    assert s.sweeps_done % REFRESH_EVERY != 0  # no refresh has happened yet
    K = s.K
    assert np.array_equal(np.bincount(s.labels, minlength=K), s.cluster_sizes())
    assert s.labels.max() == K - 1 and s.cluster_sizes().min() >= 1
    cached = (s.means[:K].copy(), s.precs[:K].copy(), s.logdets[:K].copy(), s.log_joint())
    s.refresh()
    for before, after in zip(cached[:3], (s.means[:K], s.precs[:K], s.logdets[:K])):
        np.testing.assert_allclose(before, after, rtol=1e-8, atol=1e-10)
    assert cached[3] == pytest.approx(s.log_joint(), abs=1e-7)


@pytest.mark.parametrize("kind,positions", [
    ("split_merge", (moves.STAT_SPLITS, moves.STAT_MERGES)),
    ("gibbs_split_merge", (moves.STAT_SPLITS, moves.STAT_MERGES)),
    ("reallocate", (moves.STAT_REALLOCATIONS,)),
    ("regroup", (moves.STAT_REGROUPS_2_TO_3, moves.STAT_REGROUPS_3_TO_2)),
])
def test_each_move_is_proposed_and_accepted(three_blobs, kind, positions):
    """Every direction of every move is proposed and sometimes accepted on overlapping data,
    and no other move runs."""
    s = Sampler(three_blobs, CRP(1.0), resolve_niw(three_blobs), seed=1, init="random:4",
                **{"split_merge": 0, kind: 2})
    s.step(300)
    for p in positions:
        assert s.move_stats[p] > 0 and s.move_stats[p + 1] > 0
    others = [p for p in range(0, moves.N_MOVE_STATS, 2) if p not in positions]
    assert not s.move_stats[others].any()


def test_one_move_every_p_sweeps(three_blobs):
    """gibbs_split_merge = 0.25 runs one move after sweeps 4, 8, ...: 25 in 100 sweeps, however
    the sweeps are split into calls (each of these moves proposes a split or a merge)."""
    niw = resolve_niw(three_blobs)
    for chunks in ([100], [3] * 33 + [1], [7] * 14 + [2]):
        s = Sampler(three_blobs, CRP(1.0), niw, seed=0, split_merge=2, gibbs_split_merge=0.25)
        for n in chunks:
            s.step(n)
        proposed = s.move_stats[moves.STAT_SPLITS] + s.move_stats[moves.STAT_MERGES]
        assert proposed == 2 * 100 + 25


def test_same_seed_same_chain_with_every_move_whatever_the_chunking():
    """With every move on and clusters multiplying past the 16 initial slots (so the kernel
    stops, the slots grow and it resumes in the middle of a sweep or of its moves), one call
    and many small calls give the same chain."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(150, 1)) * 20
    niw = resolve_niw(X)
    a = Sampler(X, CRP(30.0), niw, seed=9, init="one", **ALL_MOVES)
    info_a = a.step(60)
    b = Sampler(X, CRP(30.0), niw, seed=9, init="one", **ALL_MOVES)
    infos_b = [b.step(n) for n in [1] * 20 + [3] * 10 + [10]]
    assert a.counts.shape[0] > 16 and b.counts.shape[0] > 16  # the slots did grow
    assert np.array_equal(a.labels, b.labels)
    assert np.array_equal(info_a.K, np.concatenate([i.K for i in infos_b]))
    assert np.array_equal(info_a.log_joint, np.concatenate([i.log_joint for i in infos_b]))
    assert np.array_equal(a.move_stats, b.move_stats)


def test_split_merge_false_is_plain_gibbs(three_blobs):
    """split_merge=False alone (the CLI's --no-split-merge, the app's checkbox) turns every move
    off; a move given explicitly still runs."""
    niw = resolve_niw(three_blobs)
    plain = Sampler(three_blobs, CRP(1.0), niw, seed=0, split_merge=False)
    plain.step(20)
    assert not plain.move_stats.any()
    explicit = Sampler(three_blobs, CRP(1.0), niw, seed=0, split_merge=False, reallocate=1)
    explicit.step(20)
    assert explicit.move_stats[moves.STAT_REALLOCATIONS] > 0


@pytest.mark.slow
def test_default_moves_leave_the_mnist_start_with_2s_and_3s_together():
    """Issue 13's start: MNIST digits 1-4, N = 2000, r = 1.4, the true labels with the 2s and 3s
    in one cluster. With the default moves the chain reaches the mode every other start reaches
    (log joint about 15,363; the start's basin is about 15,199 under plain Gibbs): over 20 seeds
    the first sweep above 15,300 was sweep 4 to 79 (median 16), so a budget of 500 sweeps is more
    than six times the slowest. Plain Gibbs from the same start stays in the basin for those 500
    sweeps (it did for 2,500 sweeps with two seeds), so the budget tests the moves.
    At N = 1000 the same start is a second mode of the posterior that no move here leaves in
    20,000 sweeps (README, Speed and mixing)."""
    ds = mnist(n=2000)
    start = np.where(ds.labels == 2, 1, ds.labels).astype(np.int64)  # digits 1-4 are coded 0-3
    niw = resolve_niw(ds.X)
    moved = Sampler(ds.X, PowerCRP(1.0, 1.4), niw, seed=1, init=start).step(500).log_joint
    stuck = Sampler(ds.X, PowerCRP(1.0, 1.4), niw, seed=1, init=start, split_merge=False).step(500).log_joint
    assert moved.max() > 15_300 and moved[-100:].min() > 15_300
    assert stuck.max() < 15_300


def reference_log_weights(X, blocks, x, prior, niw):
    """log g(n_s) + log p(x | block s) for each side, from the NumPy closed forms."""
    return np.array([prior.log_weight(len(b)) + log_predictive(x, X[b], niw.m0, niw.kappa0, niw.nu0, niw.S0)
                     for b in blocks])


def log_softmax_at(weights, s):
    return weights[s] - np.logaddexp.reduce(weights)


@pytest.fixture
def allocation_problem():
    """12 points in 2-D, a pCRP, anchors 0, 1, 2 and members 3..11 in a shuffled order, and
    scratch arrays as the sweep kernel allocates them."""
    rng = np.random.default_rng(11)
    X = rng.normal(size=(12, 2))
    prior = PowerCRP(1.0, 1.3)
    sampler = Sampler(X, prior, resolve_niw(X), seed=0, init="one")
    members = rng.permutation(np.arange(3, 12)).astype(np.int64)
    d = X.shape[1]
    scratch = dict(
        counts=np.zeros(moves.N_SCRATCH_SLOTS, dtype=np.int64), means=np.zeros((moves.N_SCRATCH_SLOTS, d)),
        precs=np.zeros((moves.N_SCRATCH_SLOTS, d, d)), logdets=np.zeros(moves.N_SCRATCH_SLOTS),
        x=np.empty(d), work=np.empty(d), lw=np.empty(3), terms=np.empty(3),
    )
    return X, prior, sampler, np.array([0, 1, 2], dtype=np.int64), members, scratch


def kernel_allocation(sampler, anchors, n_sides, members, side, draw, sc, seed=0):
    """Scratch sides = the anchors, then the kernel's sequential allocation of the members."""
    s = sampler
    moves._start_sides(s.X, anchors, n_sides, s.m0, s.P0, s.logdet0, sc["counts"], sc["means"], sc["precs"],
                       sc["logdets"], s.tables, sc["work"])
    return moves.sequential_allocation(s.X, members, 0, members.size, side, draw, n_sides, sc["counts"], sc["means"],
                                       sc["precs"], sc["logdets"], s.tables, seed_state(seed), sc["x"], sc["work"],
                                       sc["lw"], sc["terms"])


@pytest.mark.parametrize("n_sides", [2, 3])
def test_sequential_allocation_probability_matches_numpy(allocation_problem, n_sides):
    """The log probability of a sequential allocation is the sum over points, in order, of
    log [g(n_s) p(x | side s so far) / sum over sides]: checked against the closed forms of
    pcrp.niw_math, for given sides and for sides the kernel draws itself."""
    X, prior, sampler, anchors, members, sc = allocation_problem
    niw = sampler.niw
    for draw in (False, True):
        side = (np.arange(members.size) % n_sides).astype(np.int64)
        log_q = kernel_allocation(sampler, anchors, n_sides, members, side, draw, sc)
        blocks = [[int(a)] for a in anchors[:n_sides]]
        expected = 0.0
        for t, m in enumerate(members):
            expected += log_softmax_at(reference_log_weights(X, blocks, X[m], prior, niw), side[t])
            blocks[side[t]].append(int(m))
        assert log_q == pytest.approx(expected, abs=1e-9)
        assert list(sc["counts"][:n_sides]) == [len(b) for b in blocks]


@pytest.mark.parametrize("n_sides", [2, 3])
def test_restricted_scan_probability_matches_numpy(allocation_problem, n_sides):
    """One restricted Gibbs scan from a launch split L to a target split: each point in order
    leaves its side and the log probability of its target side given all the other points is
    added; checked against the closed forms. The scratch statistics end as those of the target."""
    X, prior, sampler, anchors, members, sc = allocation_problem
    niw = sampler.niw
    launch = (np.arange(members.size) % n_sides).astype(np.int64)
    target = ((np.arange(members.size) * 7 + 1) % n_sides).astype(np.int64)
    side = launch.copy()
    kernel_allocation(sampler, anchors, n_sides, members, side, False, sc)
    s = sampler
    log_k = moves.restricted_scan(s.X, members, 0, members.size, side, target, False, anchors, n_sides, s.m0, s.P0,
                                  s.logdet0, sc["counts"], sc["means"], sc["precs"], sc["logdets"], s.tables,
                                  seed_state(0), sc["x"], sc["work"], sc["lw"], sc["terms"])
    current = {int(m): int(launch[t]) for t, m in enumerate(members)}
    expected = 0.0
    for t, m in enumerate(members):
        del current[int(m)]
        blocks = [[int(anchors[k])] + [p for p, q in current.items() if q == k] for k in range(n_sides)]
        expected += log_softmax_at(reference_log_weights(X, blocks, X[m], prior, niw), target[t])
        current[int(m)] = int(target[t])
    assert log_k == pytest.approx(expected, abs=1e-9)
    assert np.array_equal(side, target)
    for k in range(n_sides):
        block = X[[int(anchors[k])] + [int(m) for t, m in enumerate(members) if target[t] == k]]
        m_n, _, _, S_n = posterior_params(block, niw.m0, niw.kappa0, niw.nu0, niw.S0)
        np.testing.assert_allclose(sc["means"][k], m_n, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(np.linalg.inv(sc["precs"][k]), S_n, rtol=1e-9)


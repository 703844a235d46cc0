"""The kernels' pieces: the log joint after every sweep against a recomputation, the vectorisable log and exp
against math.log and math.exp, the merged statistics of two clusters against a rebuild, the random numbers, and each
covariance type's sweep compiled with its own type's code only."""

import math

import numpy as np
import pytest
from numba import njit

from pcrp.kernels.vecmath import EXP_CEILING, exp_in_range, log_positive
from pcrp.model import CRP, PowerCRP, resolve_niw
from pcrp.sampling.sampler import Sampler


def mixture(n, d, seed):
    rng = np.random.default_rng(seed)
    centres = rng.normal(0, 3, (3, d))
    return centres[rng.integers(0, 3, n)] + rng.normal(size=(n, d))


@pytest.mark.parametrize("d", [1, 2])
def test_log_joint_after_every_sweep_equals_a_recomputation(d):
    X = mixture(120, d, seed=10 + d)
    s = Sampler(X, CRP(1.0), resolve_niw(X), seed=4, init="random:6", split_merge=1)
    fresh = Sampler(X, CRP(1.0), resolve_niw(X), seed=4, init="random:6")
    for _ in range(40):
        value = s.step(1).log_joint[0]
        fresh.labels = np.unique(s.labels, return_inverse=True)[1].astype(np.int64)
        fresh.K = int(fresh.labels.max()) + 1
        fresh.refresh()
        assert abs(value - fresh.log_joint()) <= 1e-8 * max(1.0, abs(value)) + 1e-6  # value rounded to 1e-6


@njit
def _apply(y, t, logs, exps):
    for i in range(y.shape[0]):
        logs[i] = log_positive(y[i])
    for i in range(t.shape[0]):
        exps[i] = exp_in_range(t[i])


def test_vectorisable_log_and_exp_are_within_one_ulp_of_math_log_and_exp():
    """log over the sweep's range (y >= 1), exp from below -708 (0) up to EXP_CEILING, and their special values."""
    rng = np.random.default_rng(0)
    y = 1.0 + rng.exponential(1.0, 200_000) * 10.0 ** rng.uniform(-16, 8, 200_000)
    t = -rng.exponential(1.0, 200_000) * 10.0 ** rng.uniform(-16, 2.8, 200_000)
    t = np.concatenate([t, -t[:50_000] / 10.0, rng.uniform(0.0, EXP_CEILING, 50_000)])  # and up to the ceiling
    logs, exps = np.empty_like(y), np.empty_like(t)
    _apply(y, t, logs, exps)
    ref_log = np.array([math.log(v) for v in y])
    ref_exp = np.array([math.exp(v) for v in t])
    nonzero = ref_log != 0
    assert np.all(logs[~nonzero] == 0.0)
    assert np.max(np.abs(logs - ref_log)[nonzero] / np.spacing(np.abs(ref_log[nonzero]))) <= 1.0
    normal = t >= -708.0  # below, exp is subnormal or 0 and exp_in_range gives 0
    assert np.max(np.abs(exps - ref_exp)[normal] / np.spacing(ref_exp[normal])) <= 1.0
    assert np.all(exps[~normal] == 0.0) and np.all(ref_exp[~normal] < 3.4e-308)
    specials_y = np.array([1.0, np.inf, 0.0, -1.0, np.nan])
    specials_t = np.array([0.0, -708.0, -800.0, -np.inf, np.nan, EXP_CEILING, 700.0, np.inf])
    logs, exps = np.empty(5), np.empty(8)
    _apply(specials_y, specials_t, logs, exps)
    assert logs[0] == 0.0 and logs[1] == np.inf and np.all(np.isnan(logs[2:]))
    assert exps[0] == 1.0 and exps[1] == pytest.approx(math.exp(-708.0), rel=1e-15)
    assert exps[2] == 0.0 and exps[3] == 0.0 and np.isnan(exps[4])
    assert exps[5] == pytest.approx(math.exp(EXP_CEILING), rel=1e-15) and exps[6] == exps[7] == exps[5]  # clamped


@pytest.mark.parametrize("d", [1, 3])
def test_merged_statistics_from_two_clusters_equal_a_rebuild_from_their_points(d):
    """clusters.merge_into (the merge proposal's O(d^3) union) against the union rebuilt from the points."""
    from pcrp.kernels import clusters
    from pcrp.model import log_weight_table, prior_tables
    from pcrp.model.niw_math import kernel_tables
    from pcrp.sampling.sampler import base_measure, prior_slots, slots_for

    X = mixture(90, d, seed=20 + d)
    niw = resolve_niw(X)
    tables = kernel_tables(90, d, niw.kappa0, niw.nu0, niw.S0, log_weight_table(CRP(1.0), 90),
                           *prior_tables(CRP(1.0), 90))
    base = base_measure(niw)
    labels = (np.arange(90) % 3 == 0).astype(np.int64)  # two clusters, of 60 and 30 points
    two = slots_for(X, labels, 2, base, tables, "full")
    merged = prior_slots(d, 8, base, tables, "full")
    assert clusters.merge_into(two, 0, 1, base, tables, merged, 2)
    one = slots_for(X, np.zeros(90, dtype=np.int64), 1, base, tables, "full")
    assert merged.counts[2] == one.counts[0] == 90
    np.testing.assert_allclose(merged.means[2], one.means[0], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(merged.precs[2], one.precs[0], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(merged.logdets[2], one.logdets[0], rtol=1e-10)
    np.testing.assert_allclose(merged.consts[:, 2], one.consts[:, 0], rtol=1e-10)


def test_fill_uniform_draws_what_uniform_draws():
    """The split-merge move's bulk draws (rng.fill_uniform, the state in registers) are the numbers and the final
    state of as many rng.uniform calls: a chain's draws do not depend on which of the two a kernel uses."""
    from pcrp.kernels.rng import fill_uniform, seed_state, uniform

    one_by_one, bulk = seed_state(7), seed_state(7)
    expected = np.array([uniform(one_by_one) for _ in range(37)])
    out = np.full(40, -1.0)
    fill_uniform(bulk, out, 37)
    assert np.array_equal(out[:37], expected) and np.all(out[37:] == -1.0)
    assert np.array_equal(bulk, one_by_one)


# The diagonal covariance type's product bounds (pcrp.kernels.scales.diagonal_log_term: its products are kept within
# 2^-350 .. 2^350), as LLVM IR writes doubles: constants that no other type's code uses
DIAGONAL_CODE = ("0x55D0000000000000", "0x2A10000000000000")


@pytest.mark.slow  # three compiles of the sweep, about 10 s
def test_the_covariance_type_is_chosen_when_numba_compiles_each_sweep_carries_its_own_types_code_only():
    """Each covariance type's sweep (run_sweeps, with the seating and the split-merge move it links in) is compiled
    from the rank of the stored scales (pcrp.kernels.state.FULL_RANK): numba's branch pruning on a direct
    argument's ndim keeps that type's branches only. Read from the LLVM IR numba's public inspect_llvm returns for a
    fresh compile of each: the diagonal type's code is in its own sweep and in neither the full nor the spherical
    type's; a choice made at run time (a field of the state, or a rank read through a structure) would put every
    type's code in every sweep."""
    import numba

    from pcrp.kernels import sweep
    from pcrp.kernels.state import DIAG_RANK, FULL_RANK, SPHERICAL_RANK, Record

    carries = {}
    for covariance_type, rank in (("full", FULL_RANK), ("diag", DIAG_RANK), ("spherical", SPHERICAL_RANK)):
        X = mixture(30, 3, seed=1)
        s = Sampler(X, CRP(1.0), resolve_niw(X, covariance_type=covariance_type), seed=0, init="random:2")
        assert s.slots.precs.ndim == rank
        fresh = njit(cache=False, nogil=True, error_model="numpy")(sweep.run_sweeps.py_func)  # compiled here
        record = Record(np.zeros(1, dtype=np.int64), np.zeros(1), np.full(1, -1, dtype=np.int64),
                        np.empty((0, 30), dtype=np.int64), np.empty((0, 4), dtype=np.int64), s.move_totals)
        args = (s.data, s.labels, s.K, s.slots, s.settings(), s._scan, record, 1, s.rng_state)
        fresh.compile(tuple(numba.typeof(a) for a in args))
        ir = fresh.inspect_llvm(fresh.signatures[0])
        carries[covariance_type] = all(constant in ir for constant in DIAGONAL_CODE)
    assert carries == {"full": False, "diag": True, "spherical": False}

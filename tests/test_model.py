"""What the model and the sampler refuse, and why their bounds hold: each bound is where double precision
stops supporting the arithmetic (pcrp/model.py), and values inside the bounds must run cleanly."""

import math
import warnings

import numpy as np
import pytest

from pcrp import data as data_mod
from pcrp.kernels.state import LOG_W, MARGINAL_CONST
from pcrp.model import (ALPHA_MAX,
    COND_MAX, NIW, NU0_MAX, R_MAX, CRP, ModelError, PowerCRP, check_niw_for_data, log_weight_table, prior_tables, resolve_niw,
)
from pcrp.model.niw_math import kernel_tables
from pcrp.runs.run_spec import check_schedule
from pcrp.runs.chains import run_chain as run
from pcrp.sampling.sampler import REFRESH_EVERY, Sampler
from pcrp.basics.errors import SamplerError
from pcrp.sampling.starts import initial_labels
N_LIMIT = data_mod.MAX_ROWS  # the bounds are stated for data sets up to this many points
D_LIMIT = data_mod.MAX_CLUSTER_COLUMNS


@pytest.fixture
def blobs():
    rng = np.random.default_rng(0)
    X = np.r_[rng.normal(-1, 1, (60, 2)), rng.normal(2, 0.7, (60, 2))]
    return (X - X.mean(0)) / X.std(0)


def test_r_above_its_bound_is_refused_and_says_why():
    with pytest.raises(ModelError, match=r"r must be at most 1000 \(got 1e\+308\).*double precision"):
        PowerCRP(1.0, 1e308)
    with pytest.raises(ModelError, match="r must be at most"):
        PowerCRP(1.0, R_MAX * 1.001)
    assert PowerCRP(1.0, R_MAX).r == R_MAX


def test_nu0_above_its_bound_is_refused_and_says_why():
    with pytest.raises(ModelError, match=r"nu0 must be at most 1e\+07 \(got 1e\+300\).*double precision"):
        NIW(m0=[0.0], kappa0=1.0, nu0=1e300, S0=[[1.0]])
    assert NIW(m0=[0.0], kappa0=1.0, nu0=NU0_MAX, S0=[[1.0]]).nu0 == NU0_MAX


@pytest.mark.slow
def test_r_bound_keeps_the_prior_term_accurate_at_the_data_limit():
    """The kernels' prior term sum_{j<n} r log j (a running sum) at r = R_MAX and n = MAX_ROWS (1,000,000) is
    within 1e-13 of an exactly rounded sum (math.fsum), relatively. The sum is about 1.3e10 nats there, whose
    double-precision spacing is 1.9e-6, so no stored value is nearer than that; measured 3.6e-4 nats (2.8e-14
    relatively). A split-merge ratio or log joint off by 1e-3 nats changes an acceptance probability by 0.1%;
    a lost or doubled term (r log n, about 1.4e4 nats) fails by eight orders of magnitude."""
    n = N_LIMIT
    prior = PowerCRP(1.0, R_MAX)
    table = kernel_tables(n, 1, 1.0, 3.0, np.eye(1), log_weight_table(prior, n), *prior_tables(prior, n))
    exact = R_MAX * math.fsum(math.log(j) for j in range(1, n))
    assert abs(table.per_count[n, LOG_W] - exact) < 1e-13 * exact


@pytest.mark.slow
def test_nu0_bound_keeps_the_marginal_accurate_at_the_data_limit():
    """log m(X) for n = MAX_ROWS (1,000,000) points in d = 50 columns at nu0 = NU0_MAX: the table's constant (a difference
    of two log Gamma_d of about 4e9) is within 1e-6 nats of the exact one, which for even n is a sum of logs:
    Gamma_d(a + n/2) / Gamma_d(a) = prod_j prod_{i < n/2} (a - j/2 + i). Measured: 4e-7 at 1e7, 6e-6 at 1e8.
    S0 = I and kappa0 = 1 make the other terms exact up to about 1e-10."""
    n, d, nu0 = N_LIMIT, D_LIMIT, NU0_MAX
    table = kernel_tables(n, d, 1.0, nu0, np.eye(d), log_weight_table(CRP(1.0), n), *prior_tables(CRP(1.0), n))
    a = nu0 / 2
    gamma_ratio = math.fsum(math.log(a - j / 2 + i) for j in range(d) for i in range(n // 2))
    exact = -0.5 * n * d * math.log(math.pi) + gamma_ratio - 0.5 * d * math.log(1.0 + n)
    assert abs(table.per_count[n, MARGINAL_CONST] - exact) < 1e-6


def test_m0_far_from_the_data_is_refused(blobs):
    with pytest.raises(ModelError, match="squared distances of the points from m0 overflow"):
        resolve_niw(blobs, m0=[1e308, 0.0])
    with pytest.raises(ModelError, match=r"condition number of .* above the supported 1e\+12.*move m0 nearer"):
        resolve_niw(blobs, m0=[1e10, 0.0])


def test_tiny_s0_is_refused(blobs):
    with pytest.raises(ModelError, match=r"above the supported 1e\+12\. Make S0 larger"):
        resolve_niw(blobs, S0=1e-300)


def test_sampler_checks_a_niw_built_by_hand(blobs):
    niw = NIW(m0=[0.0, 0.0], kappa0=1.0, nu0=5.0, S0=1e-20 * np.eye(2))
    with pytest.raises(ModelError, match="Make S0 larger"):
        Sampler(blobs, CRP(1.0), niw, seed=0)


def test_rank_one_updates_stay_accurate_just_inside_the_condition_bound(blobs):
    """With S0 chosen so that the bound is 0.9 COND_MAX, REFRESH_EVERY - 1 sweeps of rank-one updates still
    agree with a recomputation to 1e-6 relative (measured about 1e-13); S0 ten thousand times smaller, which
    the check refuses, leaves the cached log-determinants off by 25 (see pcrp/model.py)."""
    spread = float(np.sum((blobs - blobs.mean(0)) ** 2))
    s0 = (spread + 1.0) / (0.9 * COND_MAX)
    niw = resolve_niw(blobs, S0=s0)
    s = Sampler(blobs, PowerCRP(1.0, 1.3), niw, seed=1, init="kmeans:5")
    info = s.step(REFRESH_EVERY - 1)
    assert np.all(np.isfinite(info.log_joint))
    K = s.K
    cached = s.cluster_statistics()[3]
    s.refresh()
    np.testing.assert_allclose(cached, s.cluster_statistics()[3], rtol=1e-6)
    with pytest.raises(ModelError):
        check_niw_for_data(NIW(niw.m0, niw.kappa0, niw.nu0, niw.S0 * 1e-4), blobs)


@pytest.mark.parametrize("prior, niw_kwargs", [
    (PowerCRP(1.0, R_MAX), {}),
    (PowerCRP(1.0, 1e-300), {}),
    (CRP(ALPHA_MAX), {}),
    (CRP(1e-300), {}),
    (CRP(1.0), {"kappa0": 1e-300}),
    (CRP(1.0), {"kappa0": 1e300}),
    (CRP(1.0), {"nu0": NU0_MAX}),
    (CRP(1.0), {"S0": 1e300}),
])
def test_extreme_values_inside_the_bounds_run_cleanly(blobs, prior, niw_kwargs):
    """No warning (kappa0 = 1e-300 used to divide by zero in the tables) and a finite log joint."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        chain = run(blobs, prior, resolve_niw(blobs, **niw_kwargs), iters=20, burn_in=10, thin=5, seed=0)
    assert np.all(np.isfinite(chain.log_joint))


def test_a_schedule_that_keeps_no_draw_is_refused():
    with pytest.raises(SamplerError, match=r"thin \(11\) leaves no draws to keep.*at most iters - burn_in = 10"):
        check_schedule(20, 10, 11)
    assert check_schedule(20, 10, 10) == (20, 10, 10)


@pytest.mark.parametrize("value", [float("nan"), float("inf"), "ten", 2.5, True])
def test_schedule_values_that_are_not_whole_numbers_are_refused(value):
    with pytest.raises(SamplerError, match="iters must be a (whole )?number"):
        check_schedule(value, 0, 1)


@pytest.mark.parametrize("seed", [-1, 2.5, "7", True])
def test_bad_seeds_are_refused(blobs, seed):
    with pytest.raises(SamplerError, match="seed must be a whole number >= 0"):
        Sampler(blobs, CRP(1.0), resolve_niw(blobs), seed=seed)


def test_a_run_that_cannot_fit_in_memory_is_refused_before_allocating(blobs, monkeypatch):
    """The run's memory plan holds the record (16 bytes per sweep for K and the log joint, one int16 label per point
    per kept draw) plus the sampler's state and the summaries' work (well under 0.2 GiB here)."""
    import re

    import pcrp.basics.dtypes

    monkeypatch.setattr(pcrp.basics.dtypes, "available_memory", lambda: 2**30)
    iters = 10_000_000  # the most sweeps a run may have (pcrp.runs.run_spec.MAX_SWEEPS)
    record = (16 * iters + (iters - 1) * 120 * 2) / 2**30
    with pytest.raises(SamplerError, match=r"more than the 1\.0 GiB available now\. Keep fewer draws") as err:
        run(blobs, CRP(1.0), resolve_niw(blobs), iters=iters, burn_in=1, thin=1)
    need = float(re.search(r"would need about ([\d,.]+) GiB", str(err.value)).group(1).replace(",", ""))
    assert record <= need <= record + 0.2


def test_kmeans_start_beyond_n_is_every_point_alone(blobs):
    labels = initial_labels(blobs, "kmeans:100000", np.random.default_rng(0))
    assert np.array_equal(np.sort(labels), np.arange(120))


def test_kmeans_start_on_duplicated_points_has_no_empty_cluster():
    """Three distinct points, each repeated: k-means++ cannot find 5 distinct seeds."""
    X = np.repeat(np.array([[0.0, 0.0], [5.0, 0.0], [0.0, 5.0]]), 10, axis=0)
    labels = initial_labels(X, "kmeans:5", np.random.default_rng(0))
    assert set(labels) == set(range(labels.max() + 1)) and labels.max() + 1 == 3
    for block in range(3):
        assert len(set(labels[10 * block:10 * block + 10])) == 1

"""Closed forms against scipy, and the kernels against the closed forms."""

import numpy as np
import pytest
from scipy import stats

from pcrp import niw_math
from pcrp._kernels import gibbs
from pcrp.model import NIW, CRP, log_weight_table, resolve_niw
from pcrp.sampler import Sampler


def random_niw(d, rng):
    A = rng.normal(size=(d, d))
    return NIW(m0=rng.normal(size=d), kappa0=0.3, nu0=d + 2.5, S0=A @ A.T + d * np.eye(d))


@pytest.mark.parametrize("d", [1, 2, 5])
def test_student_t_predictive_matches_scipy(d):
    rng = np.random.default_rng(d)
    niw = random_niw(d, rng)
    X = rng.normal(size=(7, d))
    x = rng.normal(size=d)
    df, loc, scale = niw_math.student_t_params(X, niw.m0, niw.kappa0, niw.nu0, niw.S0)
    expected = stats.multivariate_t(loc=loc, shape=scale, df=df).logpdf(x)
    assert niw_math.log_predictive(x, X, niw.m0, niw.kappa0, niw.nu0, niw.S0) == pytest.approx(expected, rel=1e-10)


@pytest.mark.parametrize("d", [1, 3])
def test_marginal_is_product_of_sequential_predictives(d):
    rng = np.random.default_rng(10 + d)
    niw = random_niw(d, rng)
    X = rng.normal(size=(6, d))
    chained = sum(niw_math.log_predictive(X[i], X[:i], niw.m0, niw.kappa0, niw.nu0, niw.S0) for i in range(6))
    assert niw_math.log_marginal(X, niw.m0, niw.kappa0, niw.nu0, niw.S0) == pytest.approx(chained, rel=1e-10)


def test_marginal_of_one_point_is_the_prior_student_t():
    """m({x}) in 1-D is a Student-t with nu0 df, location m0, scale^2 S0 (kappa0 + 1) / (kappa0 nu0)."""
    niw = NIW(m0=[0.3], kappa0=0.5, nu0=3.0, S0=[[2.0]])
    x = 1.7
    scale = np.sqrt(2.0 * 1.5 / (0.5 * 3.0))
    expected = stats.t(df=3.0, loc=0.3, scale=scale).logpdf(x)
    assert niw_math.log_marginal([[x]], niw.m0, niw.kappa0, niw.nu0, niw.S0) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("d", [1, 2, 4])
def test_kernel_predictive_and_marginal_match_reference(d):
    rng = np.random.default_rng(20 + d)
    X = rng.normal(size=(40, d))
    niw = resolve_niw(X)
    labels = np.repeat([0, 1, 2, 3], 10)
    s = Sampler(X, CRP(1.0), niw, init=labels, seed=0)
    log_pred = gibbs.log_predictive_all(X, s.counts, s.means, s.precs, s.logdets, s.tables, s.K)
    for k in range(4):
        block = X[labels == k]
        for i in (0, 17, 39):
            ref = niw_math.log_predictive(X[i], block, niw.m0, niw.kappa0, niw.nu0, niw.S0)
            assert log_pred[i, k] == pytest.approx(ref, rel=1e-10, abs=1e-10)
    expected_joint = sum(
        np.log(1.0) + np.sum(np.log(np.arange(1, 10))) +
        niw_math.log_marginal(X[labels == k], niw.m0, niw.kappa0, niw.nu0, niw.S0) for k in range(4)
    )
    assert s.log_joint() == pytest.approx(expected_joint, rel=1e-10)


def test_log_joint_of_pcrp_uses_powered_factorials():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(9, 2))
    niw = resolve_niw(X)
    from pcrp.model import PowerCRP

    labels = np.array([0, 0, 0, 0, 1, 1, 1, 2, 2])
    prior = PowerCRP(alpha=0.7, r=1.6)
    s = Sampler(X, prior, niw, init=labels, seed=0)
    from math import factorial, log

    expected = sum(
        log(0.7) + 1.6 * log(factorial(n - 1))
        + niw_math.log_marginal(X[labels == k], niw.m0, niw.kappa0, niw.nu0, niw.S0)
        for k, n in enumerate([4, 3, 2])
    )
    assert s.log_joint() == pytest.approx(expected, rel=1e-10)


def test_kernel_tables_prior_rows():
    table = log_weight_table(CRP(2.0), 5)
    assert np.isneginf(table[0])
    assert np.allclose(table[1:], np.log(np.arange(1, 7)))

"""Closed forms against scipy, and the kernels against the closed forms."""

import numpy as np
import pytest
from scipy import stats

from pcrp.model import niw_math
from pcrp.kernels import clusters
from pcrp.model import NIW, CRP, log_weight_table, resolve_niw
from pcrp.sampling.sampler import Sampler
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
    log_pred = clusters.log_predictive(X, s.slots, s.K, s.data.tables)
    for k in range(4):
        block = X[labels == k]
        for i in (0, 17, 39):
            ref = niw_math.log_predictive(X[i], block, niw.m0, niw.kappa0, niw.nu0, niw.S0)
            assert log_pred[i, k] == pytest.approx(ref, rel=1e-10, abs=1e-10)
    expected_joint = sum(
        np.log(1.0) + np.sum(np.log(np.arange(1, 10))) +
        niw_math.log_marginal(X[labels == k], niw.m0, niw.kappa0, niw.nu0, niw.S0) for k in range(4)
    ) - np.sum(np.log(1.0 + np.arange(40)))  # the CRP's normaliser: V_N(K) = alpha^K / alpha^(N), alpha = 1
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


def test_log_weight_table_of_the_crp():
    table = log_weight_table(CRP(2.0), 5)
    assert np.isneginf(table[0])
    assert np.allclose(table[1:], np.log(np.arange(1, 7)))


@pytest.mark.parametrize("d", [1, 3])
def test_kernel_tables_rows_against_the_closed_forms(d):
    """Every row of kernel_tables, for clusters of n = 1..6 points, against niw_math's closed forms: the
    pCRP's log g(n) = r log n and sum_{j<n} log g(j) = r log (n-1)!; the Student-t predictive and the
    marginal as the kernels assemble them from the rows and log|S_n|; the rank-one add / remove steps of
    the mean and the scatter. Tolerance 1e-10 relative: both sides are a few double-precision operations."""
    from math import factorial, log

    from pcrp.kernels.state import (
        ADD_STEP, LOG_G, LOG_W, MARGINAL_CONST, N_COLUMNS, NU, REMOVE_STEP, REMOVE_WEIGHT, T_CONST, T_EXPONENT,
        T_SCALE,
    )
    from pcrp.model import PowerCRP, prior_tables

    rng = np.random.default_rng(40 + d)
    niw = random_niw(d, rng)
    m0, k0, nu0, S0 = niw.m0, niw.kappa0, niw.nu0, niw.S0
    prior = PowerCRP(0.8, 1.7)
    tables = niw_math.kernel_tables(6, d, k0, nu0, S0, log_weight_table(prior, 6), *prior_tables(prior, 6)).per_count
    assert tables.shape == (8, N_COLUMNS)
    X = rng.normal(size=(7, d))
    x = rng.normal(size=d)
    for n in range(1, 7):
        row = tables[n]
        block = X[:n]
        m_n, kappa_n, nu_n, S_n = niw_math.posterior_params(block, m0, k0, nu0, S0)
        logdet_n = np.linalg.slogdet(S_n)[1]
        assert row[LOG_G] == pytest.approx(1.7 * log(n), rel=1e-12, abs=1e-15)
        assert row[LOG_W] == pytest.approx(1.7 * log(factorial(n - 1)), rel=1e-12, abs=1e-15)
        assert row[NU] == nu0 + n
        q = (x - m_n) @ np.linalg.solve(S_n, x - m_n)
        predictive = row[T_CONST] - 0.5 * logdet_n - row[T_EXPONENT] * np.log1p(row[T_SCALE] * q)
        assert predictive == pytest.approx(niw_math.log_predictive(x, block, m0, k0, nu0, S0), rel=1e-10)
        marginal = row[MARGINAL_CONST] - 0.5 * row[NU] * logdet_n
        assert marginal == pytest.approx(niw_math.log_marginal(block, m0, k0, nu0, S0), rel=1e-10)
        # adding x: m_{n+1} = m_n + (x - m_n) ADD_STEP; S_{n+1} = S_n + T_SCALE (x - m_n)(x - m_n)^T
        m_add, _, _, S_add = niw_math.posterior_params(np.vstack([block, x]), m0, k0, nu0, S0)
        np.testing.assert_allclose(m_n + (x - m_n) * row[ADD_STEP], m_add, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(S_n + row[T_SCALE] * np.outer(x - m_n, x - m_n), S_add, rtol=1e-10)
        # removing the block's last point y: m_{n-1} = m_n + (m_n - y) REMOVE_STEP;
        # S_{n-1} = S_n - REMOVE_WEIGHT (y - m_n)(y - m_n)^T
        y = block[-1]
        m_less, _, _, S_less = niw_math.posterior_params(block[:-1], m0, k0, nu0, S0)
        np.testing.assert_allclose(m_n + (m_n - y) * row[REMOVE_STEP], m_less, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(S_n - row[REMOVE_WEIGHT] * np.outer(y - m_n, y - m_n), S_less,
                                   rtol=1e-9, atol=1e-12)



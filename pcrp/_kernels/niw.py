"""Leaf numba kernels for Normal-Inverse-Wishart cluster statistics.

A cluster slot ``k`` is described by four arrays shared by all slots:

- ``counts[k]``       int64, number of points n;
- ``means[k]``        (d,) posterior mean m_n;
- ``precs[k]``        (d, d) inverse S_n^{-1} of the posterior scale matrix S_n;
- ``logdets[k]``      log |S_n|.

Adding or removing one point is a rank-one change of S_n: its inverse follows by
Sherman-Morrison and its log-determinant by the matrix determinant lemma, both
in O(d^2) with one log and no square root. The log of a point's arrival,
log(1 + q kappa_n / kappa_{n+1}), is the same one its Student-t predictive
needs, so it is computed once (:func:`log_term`) and passed to :func:`add_point`.
(A Cholesky factor costs d square roots and 2d divisions per move on the
critical path, about 4x slower at d = 2.) The per-count constants are
precomputed in :func:`pcrp.niw_math.kernel_tables` (rows named by the ``ROW_*``
constants below), so the inner loops do no division.

All kernels use ``error_model="numpy"``: a float division by zero gives inf or
NaN instead of raising, so the hot loops carry no exception branches.

Speed note: numba inlines ``inline="always"`` helpers at the IR level, and for
helpers that write into array arguments it keeps atomic reference counting on
those arrays in the caller's loop. Measured on Old Faithful this doubled the
sweep time, so the per-point remove/add of the Gibbs sweep and the add of the
split-merge allocation are written out in :mod:`pcrp._kernels.gibbs`, following
:func:`add_point` line for line; the tests compare the statistics they keep
with a recomputation from the labels.
"""

import math

import numpy as np
from numba import njit

# Columns of the ``tables`` array built by pcrp.niw_math.kernel_tables; row n
# holds the values for a cluster of n points.
ROW_LOG_G = 0  # log g(n) = log W(n + 1) / W(n): seating weight of an existing cluster of size n
ROW_LOG_G_PROD = 1  # sum_{j=1}^{n-1} log g(j) = log W(n) - log W(1): the prior's per-block factor
ROW_T_CONST = 2  # Student-t log normaliser, without -0.5 log|S_n|
ROW_T_SCALE = 3  # kappa_n / (kappa_n + 1): multiplies the S_n-quadratic form
ROW_T_EXPONENT = 4  # (df_n + d) / 2
ROW_MARGINAL_CONST = 5  # log m(X_block) + (nu_n / 2) log|S_n|
ROW_NU = 6  # nu_n = nu0 + n
ROW_ADD_STEP = 7  # 1 / (kappa_n + 1): mean step when a point joins
ROW_REMOVE_WEIGHT = 8  # kappa_n / (kappa_n - 1): rank-one weight when a point leaves
ROW_REMOVE_STEP = 9  # 1 / (kappa_n - 1): mean step when a point leaves
N_TABLE_ROWS = 10


@njit(cache=True, nogil=True, error_model="numpy")
def cholesky(A, L):
    """Lower Cholesky factor of the SPD matrix ``A`` (d, d) written into ``L``.

    Returns False when ``A`` is not numerically positive definite.
    """
    d = A.shape[0]
    for j in range(d):
        s = A[j, j]
        for k in range(j):
            s -= L[j, k] * L[j, k]
        if not s > 0.0:
            return False
        L[j, j] = math.sqrt(s)
        for i in range(j + 1, d):
            t = A[i, j]
            for k in range(j):
                t -= L[i, k] * L[j, k]
            L[i, j] = t / L[j, j]
        for i in range(j):
            L[i, j] = 0.0
    return True


@njit(cache=True, nogil=True, error_model="numpy")
def spd_inverse_logdet(A, out):
    """Write inv(A) into ``out`` (d, d) and return log|A|, via a Cholesky factor.

    Returns NaN when ``A`` is not numerically positive definite.
    """
    d = A.shape[0]
    L = np.zeros((d, d))
    if not cholesky(A, L):
        return np.nan
    Linv = np.zeros((d, d))
    for j in range(d):  # solve L Linv = I column by column
        for i in range(j, d):
            t = 1.0 if i == j else 0.0
            for k in range(j, i):
                t -= L[i, k] * Linv[k, j]
            Linv[i, j] = t / L[i, i]
    logdet = 0.0
    for i in range(d):
        logdet += 2.0 * math.log(L[i, i])
        for j in range(d):
            t = 0.0
            for k in range(max(i, j), d):
                t += Linv[k, i] * Linv[k, j]
            out[i, j] = t
    return logdet


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def reset_slot(k, m0, P0, logdet0, counts, means, precs, logdets):
    """Make slot ``k`` an empty cluster (prior statistics)."""
    d = m0.shape[0]
    counts[k] = 0
    for a in range(d):
        means[k, a] = m0[a]
        for b in range(d):
            precs[k, a, b] = P0[a, b]
    logdets[k] = logdet0


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def copy_slot(src, dst, counts, means, precs, logdets, counts2, means2, precs2, logdets2):
    """Copy slot ``src`` of the first arrays into slot ``dst`` of the second."""
    d = means.shape[1]
    counts2[dst] = counts[src]
    for a in range(d):
        means2[dst, a] = means[src, a]
        for b in range(d):
            precs2[dst, a, b] = precs[src, a, b]
    logdets2[dst] = logdets[src]


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def add_point(x, k, counts, means, precs, logdets, tables, work, log_term):
    """Add the point ``x`` (d,) to slot ``k``; ``work`` is (d,) scratch.

    S_{n+1} = S_n + w (x - m_n)(x - m_n)^T with w = kappa_n / kappa_{n+1}; its
    inverse by Sherman-Morrison. ``log_term`` must be log(1 + w q), q the
    S_n^{-1}-quadratic form of x - m_n: the log-determinant change, which the
    caller has computed for the predictive anyway (:func:`log_term`).
    """
    n = counts[k]
    d = x.shape[0]
    weight = tables[n, ROW_T_SCALE]
    q = 0.0
    for a in range(d):
        t = 0.0
        for b in range(d):
            t += precs[k, a, b] * (x[b] - means[k, b])
        work[a] = t  # S_n^{-1} (x - m_n)
        q += t * (x[a] - means[k, a])
    coef = weight / (1.0 + weight * q)
    for a in range(d):
        ca = coef * work[a]
        for b in range(d):
            precs[k, a, b] -= ca * work[b]
    logdets[k] += log_term
    step = tables[n, ROW_ADD_STEP]
    for j in range(d):
        means[k, j] += (x[j] - means[k, j]) * step
    counts[k] = n + 1


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def log_term(x, k, counts, means, precs, tables, work):
    """log(1 + q kappa_n / (kappa_n + 1)), q = (x - m_n)^T S_n^{-1} (x - m_n).

    The one transcendental of the Student-t predictive, and the log-determinant
    change when ``x`` joins slot k. Uses the lower triangle only. ``work`` (d,)
    receives x - m_n. log(1 + y) rather than log1p(y): the absolute error is
    the same (a few 1e-16) and log is about twice as fast here.
    """
    d = x.shape[0]
    for a in range(d):
        work[a] = x[a] - means[k, a]
    q = 0.0
    for a in range(d):
        t = 0.0
        for b in range(a):
            t += precs[k, a, b] * work[b]
        q += work[a] * (2.0 * t + precs[k, a, a] * work[a])
    return math.log(1.0 + q * tables[counts[k], ROW_T_SCALE])


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def log_predictive_from_term(k, counts, logdets, tables, term):
    """log p(x | slot k) given ``term`` = log_term(x, k, ...)."""
    n = counts[k]
    return tables[n, ROW_T_CONST] - 0.5 * logdets[k] - tables[n, ROW_T_EXPONENT] * term


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def log_predictive(x, k, counts, means, precs, logdets, tables, work):
    """log p(x | points in slot k): multivariate Student-t of DESIGN.md section 2."""
    term = log_term(x, k, counts, means, precs, tables, work)
    return log_predictive_from_term(k, counts, logdets, tables, term)


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def log_marginal(k, counts, logdets, tables):
    """log m(X_k): NIW marginal likelihood of the points in slot k."""
    n = counts[k]
    return tables[n, ROW_MARGINAL_CONST] - 0.5 * tables[n, ROW_NU] * logdets[k]


@njit(cache=True, nogil=True, error_model="numpy")
def rebuild_slot(X, labels, label, k, m0, S0, kappa0, counts, means, precs, logdets):
    """Recompute slot ``k`` from scratch from the points whose label is ``label``.

    S_n = S0 + C + (kappa0 n / kappa_n)(xbar - m0)(xbar - m0)^T.
    """
    N, d = X.shape
    xbar = np.zeros(d)
    n = 0
    for i in range(N):
        if labels[i] == label:
            n += 1
            for j in range(d):
                xbar[j] += X[i, j]
    S = S0.copy()
    if n > 0:
        for j in range(d):
            xbar[j] /= n
        for i in range(N):
            if labels[i] == label:
                for a in range(d):
                    da = X[i, a] - xbar[a]
                    for b in range(d):
                        S[a, b] += da * (X[i, b] - xbar[b])
        shrink = kappa0 * n / (kappa0 + n)
        for a in range(d):
            for b in range(d):
                S[a, b] += shrink * (xbar[a] - m0[a]) * (xbar[b] - m0[b])
    logdets[k] = spd_inverse_logdet(S, precs[k])
    counts[k] = n
    for j in range(d):
        means[k, j] = (kappa0 * m0[j] + n * xbar[j]) / (kappa0 + n)

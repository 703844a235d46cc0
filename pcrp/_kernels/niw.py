"""Leaf numba kernels for Normal-Inverse-Wishart cluster statistics.

A cluster slot ``k`` is described by four arrays shared by all slots:

- ``counts[k]``       int64, number of points n;
- ``means[k]``        (d,) posterior mean m_n;
- ``precs[k]``        (d, d) inverse S_n^{-1} of the posterior scale matrix S_n;
- ``logdets[k]``      log |S_n|.

Adding or removing one point is a rank-one change of S_n: its inverse follows by
Sherman-Morrison and its log-determinant by the matrix determinant lemma, both
in O(d^2) with one log and no square root. (A Cholesky factor costs d square
roots and 2d divisions per move on the critical path, about 4x slower at d = 2.)
The per-count constants of the Student-t predictive and of the marginal
likelihood are precomputed in :func:`pcrp.niw_math.kernel_tables` (rows named by
the ``ROW_*`` constants below), so the inner loop only does a triangular solve,
one ``log1p`` and table look-ups.
"""

import math

import numpy as np
from numba import njit

# Columns of the ``tables`` array built by pcrp.niw_math.kernel_tables; row n
# holds the values for a cluster of n points.
ROW_LOG_G = 0  # log g(n): seating weight of an existing cluster of size n
ROW_LOG_G_PROD = 1  # sum_{j=1}^{n-1} log g(j): the prior's per-block factor
ROW_T_CONST = 2  # Student-t log normaliser, without -0.5 log|S_n|
ROW_T_SCALE = 3  # kappa_n / (kappa_n + 1): multiplies the S_n-quadratic form
ROW_T_EXPONENT = 4  # (df_n + d) / 2
ROW_MARGINAL_CONST = 5  # log m(X_block) + (nu_n / 2) log|S_n|
ROW_NU = 6  # nu_n = nu0 + n
N_TABLE_ROWS = 7


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True, inline="always")
def reset_slot(k, m0, P0, logdet0, counts, means, precs, logdets):
    """Make slot ``k`` an empty cluster (prior statistics)."""
    counts[k] = 0
    means[k, :] = m0
    precs[k, :, :] = P0
    logdets[k] = logdet0


@njit(cache=True, nogil=True, inline="always")
def copy_slot(src, dst, counts, means, precs, logdets, counts2, means2, precs2, logdets2):
    """Copy slot ``src`` of the first arrays into slot ``dst`` of the second."""
    counts2[dst] = counts[src]
    means2[dst, :] = means[src]
    precs2[dst, :, :] = precs[src]
    logdets2[dst] = logdets[src]


@njit(cache=True, nogil=True, inline="always")
def _rank_one(x, k, weight, counts, means, precs, logdets, work):
    """S_n <- S_n + weight (x - m_n)(x - m_n)^T on the inverse, by Sherman-Morrison.

    Updates precs[k] and logdets[k] (matrix determinant lemma); returns False,
    leaving the slot untouched, when the result would not be positive definite.
    """
    d = x.shape[0]
    q = 0.0
    for a in range(d):
        t = 0.0
        for b in range(d):
            t += precs[k, a, b] * (x[b] - means[k, b])
        work[a] = t
        q += t * (x[a] - means[k, a])
    denom = 1.0 + weight * q
    if not denom > 0.0:
        return False
    coef = weight / denom
    for a in range(d):
        ca = coef * work[a]
        for b in range(d):
            precs[k, a, b] -= ca * work[b]
    logdets[k] += math.log(denom)
    return True


@njit(cache=True, nogil=True, inline="always")
def add_point(x, k, kappa0, counts, means, precs, logdets, work):
    """Add the point ``x`` (d,) to slot ``k``; ``work`` is (d,) scratch."""
    kappa_n = kappa0 + counts[k]
    _rank_one(x, k, kappa_n / (kappa_n + 1.0), counts, means, precs, logdets, work)
    for j in range(x.shape[0]):
        means[k, j] += (x[j] - means[k, j]) / (kappa_n + 1.0)
    counts[k] += 1


@njit(cache=True, nogil=True, inline="always")
def remove_point(x, k, kappa0, counts, means, precs, logdets, work):
    """Remove the point ``x`` from slot ``k`` (which holds it).

    S_{n-1} = S_n - (kappa_n / kappa_{n-1})(x - m_n)(x - m_n)^T. Returns False
    when rounding made that downdate lose positive definiteness; the slot's
    matrix must then be rebuilt from its members (count and mean are updated).
    """
    kappa_n = kappa0 + counts[k]
    kappa_less = kappa_n - 1.0
    ok = True
    if counts[k] > 1:
        ok = _rank_one(x, k, -kappa_n / kappa_less, counts, means, precs, logdets, work)
    for j in range(x.shape[0]):
        means[k, j] = (kappa_n * means[k, j] - x[j]) / kappa_less
    counts[k] -= 1
    return ok


@njit(cache=True, nogil=True, inline="always")
def log_predictive(x, k, counts, means, precs, logdets, tables, work):
    """log p(x | points in slot k): multivariate Student-t of DESIGN.md section 2.

    ``work`` (d,) receives x - m_n.
    """
    n = counts[k]
    d = x.shape[0]
    for a in range(d):
        work[a] = x[a] - means[k, a]
    q = 0.0
    for a in range(d):
        t = 0.0
        for b in range(a):
            t += precs[k, a, b] * work[b]
        q += work[a] * (2.0 * t + precs[k, a, a] * work[a])
    return (
        tables[n, ROW_T_CONST]
        - 0.5 * logdets[k]
        - tables[n, ROW_T_EXPONENT] * math.log1p(q * tables[n, ROW_T_SCALE])
    )


@njit(cache=True, nogil=True, inline="always")
def log_marginal(k, counts, logdets, tables):
    """log m(X_k): NIW marginal likelihood of the points in slot k."""
    n = counts[k]
    return tables[n, ROW_MARGINAL_CONST] - 0.5 * tables[n, ROW_NU] * logdets[k]


@njit(cache=True, nogil=True)
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

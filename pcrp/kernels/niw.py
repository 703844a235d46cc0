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
precomputed in :func:`pcrp.model.niw_math.kernel_tables` (rows named by the ``ROW_*``
constants below), so the inner loops do no division.

All kernels use ``error_model="numpy"``: a float division by zero gives inf or
NaN instead of raising, so the hot loops carry no exception branches.

The per-slot operations of the sampler (adding a point, the predictive, the marginal) are in
:mod:`pcrp.kernels.slots`; this module holds the table layout and the from-scratch recomputation.
"""

import math

import numpy as np
from numba import njit

# Columns of the ``tables`` array built by pcrp.model.niw_math.kernel_tables; row n
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


@njit(cache=True, nogil=True)
def log_gamma(x):
    """log Gamma(x) of each entry of ``x`` (n,) float64, from libm's lgamma: the special function of
    pcrp.model.niw_math, here because importing scipy.special costs a run 0.2-0.3 s of its start (SciPy's gammaln
    gives the same values to a few units in the last place)."""
    out = np.empty(x.shape[0])
    for i in range(x.shape[0]):
        out[i] = math.lgamma(x[i])
    return out


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

"""Cluster slots of the sweep: statistics, the member index and cached per-cluster constants.

- ``counts[k]``        int64 (C,), number of points n;
- ``means[k]``         (C, d) posterior mean m_n;
- ``precs[k]``         (C, d, d) inverse S_n^{-1} of the posterior scale matrix, a slot's matrix contiguous:
  every point changes two slots by a rank-one update, which then runs along contiguous rows (with the
  slots innermost instead, the d = 10 sweep measured 1.5x slower than before);
- ``logdets[k]``       (C,) log |S_n|;
- ``consts[:, k]``     (N_CONSTS, C) what the predictive of slot k needs besides the quadratic form,
  refreshed only when the slot changes (:func:`set_consts`): CONST_LOG_WEIGHT = log g(n) + Student-t log
  normaliser - log|S_n| / 2, CONST_SCALE = kappa_n / (kappa_n + 1), CONST_EXPONENT = (df_n + d) / 2;
- for the split-merge moves, a member index (:func:`build_member_index`, once per sweep): the points of
  slot k are ``order[starts[k]:starts[k] + counts[k]]``, so that a move touching two clusters costs their
  sizes, never N (kept up to date by the moves themselves).

The rank-one algebra is that of :mod:`pcrp.kernels.niw` (Sherman-Morrison and the determinant lemma);
the tests compare these statistics with a recomputation from the labels.
``D`` arguments are the dimension, a compile-time constant in the kernels specialised to d.
"""

import numpy as np
from numba import njit

from . import libm
from .niw import (
    ROW_ADD_STEP,
    ROW_LOG_G,
    ROW_MARGINAL_CONST,
    ROW_NU,
    ROW_T_CONST,
    ROW_T_EXPONENT,
    ROW_T_SCALE,
    spd_inverse_logdet,
)

CONST_LOG_WEIGHT = 0
CONST_SCALE = 1
CONST_EXPONENT = 2
N_CONSTS = 3


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def set_consts(k, counts, logdets, tables, consts):
    """Refresh slot k's cached constants after its count or log-determinant changed."""
    n = counts[k]
    consts[CONST_LOG_WEIGHT, k] = tables[n, ROW_LOG_G] + tables[n, ROW_T_CONST] - 0.5 * logdets[k]
    consts[CONST_SCALE, k] = tables[n, ROW_T_SCALE]
    consts[CONST_EXPONENT, k] = tables[n, ROW_T_EXPONENT]


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def reset_slot(k, D, m0, P0, logdet0, counts, means, precs, logdets):
    """Make slot ``k`` an empty cluster (prior statistics)."""
    counts[k] = 0
    for a in range(D):
        means[k, a] = m0[a]
        for b in range(D):
            precs[k, a, b] = P0[a, b]
    logdets[k] = logdet0


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def copy_slot(src, dst, D, counts, means, precs, logdets, counts2, means2, precs2, logdets2):
    """Copy slot ``src`` of the first arrays into slot ``dst`` of the second."""
    counts2[dst] = counts[src]
    for a in range(D):
        means2[dst, a] = means[src, a]
        for b in range(D):
            precs2[dst, a, b] = precs[src, a, b]
    logdets2[dst] = logdets[src]


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def scaled_form(x, k, D, counts, means, precs, tables):
    """1 + q kappa_n / (kappa_n + 1), q = (x - m_n)^T S_n^{-1} (x - m_n), lower triangle only."""
    q = 0.0
    for a in range(D):
        da = x[a] - means[k, a]
        t = 0.0
        for b in range(a):
            t += precs[k, a, b] * (x[b] - means[k, b])
        q += da * (2.0 * t + precs[k, a, a] * da)
    return 1.0 + q * tables[counts[k], ROW_T_SCALE]


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def log_term(x, k, D, counts, means, precs, tables):
    """log(1 + q kappa_n / (kappa_n + 1)): x's log predictive term under slot k (:func:`scaled_form`)."""
    return libm.log(scaled_form(x, k, D, counts, means, precs, tables))


@njit(cache=True, nogil=True, error_model="numpy")
def log_predictive(x, k, D, counts, means, precs, logdets, tables):
    """log p(x | points in slot k): multivariate Student-t of docs/design.md section 1.2."""
    return log_predictive_from_term(k, counts, logdets, tables, log_term(x, k, D, counts, means, precs, tables))


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def log_predictive_from_term(k, counts, logdets, tables, term):
    """log p(x | slot k) given ``term`` = log_term(x, k, ...)."""
    n = counts[k]
    return tables[n, ROW_T_CONST] - 0.5 * logdets[k] - tables[n, ROW_T_EXPONENT] * term


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def log_marginal(k, counts, logdets, tables):
    """log m(X_k): NIW marginal likelihood of the points in slot k."""
    n = counts[k]
    return tables[n, ROW_MARGINAL_CONST] - 0.5 * tables[n, ROW_NU] * logdets[k]


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def add_point(x, k, D, counts, means, precs, logdets, tables, work, term):
    """Add ``x`` (d,) to slot k; ``term`` = log_term(x, k, ...) is its log-determinant change."""
    n = counts[k]
    weight = tables[n, ROW_T_SCALE]
    q = 0.0
    for a in range(D):
        t = 0.0
        for b in range(D):
            t += precs[k, a, b] * (x[b] - means[k, b])
        work[a] = t
        q += t * (x[a] - means[k, a])
    coef = weight / (1.0 + weight * q)
    for a in range(D):
        ca = coef * work[a]
        for b in range(D):
            precs[k, a, b] -= ca * work[b]
    logdets[k] += term
    step = tables[n, ROW_ADD_STEP]
    for a in range(D):
        means[k, a] += (x[a] - means[k, a]) * step
    counts[k] = n + 1


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def move_slot(src, dst, D, counts, means, precs, logdets, consts):
    """Copy slot ``src`` (statistics and constants) into slot ``dst``; the labels are the caller's."""
    copy_slot(src, dst, D, counts, means, precs, logdets, counts, means, precs, logdets)
    for r in range(consts.shape[0]):
        consts[r, dst] = consts[r, src]


@njit(cache=True, nogil=True, error_model="numpy")
def merge_slots(a, b, D, counts, means, precs, m0, S0, kappa0, dst, counts2, means2, precs2, logdets2):
    """Statistics of the union of slots a and b, from theirs alone (O(d^3), not a pass over the points), into
    slot ``dst`` of the second arrays; returns False (nothing written) when rounding leaves the union's scale
    matrix not positive definite. With n_i points of mean xbar_i = (kappa_i m_i - kappa0 m0) / n_i and scatter
    C_i = S_i - S0 - (kappa0 n_i / kappa_i)(xbar_i - m0)(xbar_i - m0)^T, the union has
    C = C_a + C_b + (n_a n_b / n)(xbar_a - xbar_b)(xbar_a - xbar_b)^T and S = S0 + C + (kappa0 n / kappa_n)(xbar - m0)(...)^T
    (S_i recovered by inverting precs[i])."""
    n_a = counts[a]
    n_b = counts[b]
    n = n_a + n_b
    S = np.empty((D, D))
    S_b = np.empty((D, D))
    if np.isnan(spd_inverse_logdet(precs[a], S)) or np.isnan(spd_inverse_logdet(precs[b], S_b)):
        return False
    xa = np.empty(D)
    xb = np.empty(D)
    xbar = np.empty(D)
    for i in range(D):
        xa[i] = ((kappa0 + n_a) * means[a, i] - kappa0 * m0[i]) / n_a - m0[i]  # about m0
        xb[i] = ((kappa0 + n_b) * means[b, i] - kappa0 * m0[i]) / n_b - m0[i]
        xbar[i] = (n_a * xa[i] + n_b * xb[i]) / n
    w_a = kappa0 * n_a / (kappa0 + n_a)
    w_b = kappa0 * n_b / (kappa0 + n_b)
    w_ab = n_a * n_b / n
    w = kappa0 * n / (kappa0 + n)
    for i in range(D):
        for j in range(D):
            S[i, j] += (S_b[i, j] - S0[i, j] - w_a * xa[i] * xa[j] - w_b * xb[i] * xb[j]
                        + w_ab * (xa[i] - xb[i]) * (xa[j] - xb[j]) + w * xbar[i] * xbar[j])
    logdet = spd_inverse_logdet(S, precs2[dst])
    if np.isnan(logdet):
        return False
    logdets2[dst] = logdet
    counts2[dst] = n
    for i in range(D):
        means2[dst, i] = m0[i] + n * xbar[i] / (kappa0 + n)
    return True


@njit(cache=True, nogil=True, error_model="numpy")
def build_member_index(labels, K, counts, order, starts):
    """Group the points by cluster: the members of slot k become order[starts[k]:starts[k] + counts[k]]
    (increasing point number). One pass over the labels; returns the first free position of ``order``."""
    position = 0
    for k in range(K):
        starts[k] = position
        position += counts[k]
    cursor = starts[:K].copy()
    for i in range(labels.shape[0]):
        k = labels[i]
        order[cursor[k]] = i
        cursor[k] += 1
    return position


@njit(cache=True, nogil=True, error_model="numpy")
def finish_slot(k, n, total, scatter, m0, S0, kappa0, counts, means, precs, logdets):
    """Slot k from its count ``n``, the sum of its points ``total`` (d,) and their scatter about their mean
    ``scatter`` (d, d): S_n = S0 + C + (kappa0 n / kappa_n)(xbar - m0)(xbar - m0)^T."""
    d = m0.shape[0]
    S = S0.copy()
    xbar = np.zeros(d)
    if n > 0:
        for a in range(d):
            xbar[a] = total[a] / n
        shrink = kappa0 * n / (kappa0 + n)
        for a in range(d):
            for b in range(d):
                S[a, b] += scatter[a, b] + shrink * (xbar[a] - m0[a]) * (xbar[b] - m0[b])
    logdets[k] = spd_inverse_logdet(S, precs[k])
    counts[k] = n
    for a in range(d):
        means[k, a] = (kappa0 * m0[a] + n * xbar[a]) / (kappa0 + n)


@njit(cache=True, nogil=True, error_model="numpy")
def rebuild_all(X, labels, K, m0, S0, kappa0, counts, means, precs, logdets, consts, tables):
    """Recompute every slot's statistics and constants from the labels, in one pass over the data.

    Per cluster the pass accumulates sums about a shift (the cluster's first point), so the scatter
    C = sum (x - s)(x - s)^T - n (xbar - s)(xbar - s)^T loses no digits to a far-away origin.
    """
    N, d = X.shape
    shift = np.zeros((K, d))
    total = np.zeros((K, d))
    scatter = np.zeros((K, d, d))
    n = np.zeros(K, dtype=np.int64)
    for i in range(N):
        k = labels[i]
        if n[k] == 0:
            for a in range(d):
                shift[k, a] = X[i, a]
        n[k] += 1
        for a in range(d):
            da = X[i, a] - shift[k, a]
            total[k, a] += da
            for b in range(a + 1):
                scatter[k, a, b] += da * (X[i, b] - shift[k, b])
    sums = np.zeros(d)
    C = np.zeros((d, d))
    for k in range(K):
        nk = n[k]
        for a in range(d):
            sums[a] = total[k, a] + nk * shift[k, a]
        for a in range(d):
            for b in range(a + 1):
                c = scatter[k, a, b] - total[k, a] * total[k, b] / nk if nk > 0 else 0.0
                C[a, b] = c
                C[b, a] = c
        finish_slot(k, nk, sums, C, m0, S0, kappa0, counts, means, precs, logdets)
        set_consts(k, counts, logdets, tables, consts)

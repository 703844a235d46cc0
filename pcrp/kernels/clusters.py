"""The clusters' conjugate statistics in :class:`pcrp.kernels.state.Slots`: adding and removing a point,
rebuilding from the labels, merging two slots, and the marginal and predictive they give.

A block of n points has the posterior kappa_n = kappa0 + n, mean m_n and scale S_n (docs/design.md section 1.2);
a slot keeps n, m_n, the inverse of its scale and log|S_n|. Adding or removing one point multiplies the scale by a
factor y (for the full type a rank-one change, whose inverse follows by Sherman-Morrison and log-determinant by the
matrix determinant lemma, in O(d^2)), and log y is the point's predictive term too:

    y = 1 + t_scale(n) q,  q = (x - m_n)^T S_n^{-1} (x - m_n),  log|S_{n+1}| = log|S_n| + log y.

The covariance types' own operations (the form q, the updates, the scale from sums) are in
:mod:`pcrp.kernels.scales`, chosen when numba compiles; what is here is the same for every type. The predictive of
x under slot c is consts[LOG_WEIGHT, c] - consts[EXPONENT, c] log y_c, with the slot's constants
(:func:`refresh_weights`) holding its seating weight log g(n) too. Every empty slot holds the prior's statistics
(m0, the inverse of S0, log|S0|, count 0) and log weight -inf, so that the form of a point against an empty slot is
the form it would have in a new cluster.

All kernels use ``error_model="numpy"``: a float division by zero gives inf or NaN instead of raising, so loops
carry no exception branches.
"""

import math

import numpy as np
from numba import njit

from .scales import (copy_scale, logdet_step, predictive_term, scale_from_sums, scale_times_factor, set_prior_scale,
                     stored_scale)
from .state import (ADD_STEP, EXPONENT, FULL_RANK, LOG_G, LOG_W, LOG_WEIGHT, MARGINAL_CONST, N_CONSTS, NU, REMOVE_STEP,
                    REMOVE_WEIGHT, SCALE, T_CONST, T_EXPONENT, T_SCALE)
from .vecmath import LANES


@njit(cache=True, nogil=True, error_model="numpy")
def padded(n):
    """n rounded up to whole vectors of LANES: the length of a vectorised pass over n slots or members."""
    return (n + LANES - 1) // LANES * LANES


# fastmath={"contract"} (a multiply and an add may fuse into one FMA) here, in pcrp.kernels.scales, in the sweep and
# in the move: docs/design.md section 2 gives the bound measured; NaN, infinity and the order of every sum are kept.


@njit(cache=True, nogil=True, error_model="numpy")
def refresh_weights(slots, k, tables):
    """Slot k's predictive constants after its count or log-determinant changed: log g(n) + the Student-t log
    normaliser - log|S_n| / 2, the form's scale and the exponent; an empty slot gets log weight -inf and the scale
    and exponent of a new cluster (its form is that of a new cluster, its weight comes from the prior's table)."""
    n = slots.counts[k]
    if n == 0:
        slots.consts[LOG_WEIGHT, k] = -np.inf
    else:
        slots.consts[LOG_WEIGHT, k] = tables.per_count[n, LOG_G] + tables.per_count[n, T_CONST] - 0.5 * slots.logdets[k]
    slots.consts[SCALE, k] = tables.per_count[n, T_SCALE]
    slots.consts[EXPONENT, k] = tables.per_count[n, T_EXPONENT]


@njit(cache=True, nogil=True, error_model="numpy")
def empty_slot(slots, k, base, tables):
    """Make slot k an empty cluster: the prior's statistics, count 0."""
    slots.counts[k] = 0
    for a in range(base.m0.shape[0]):
        slots.means[k, a] = base.m0[a]
    set_prior_scale(slots.precs, k, base.P0)
    slots.logdets[k] = base.logdet0
    refresh_weights(slots, k, tables)


@njit(cache=True, nogil=True, error_model="numpy")
def copy_slot(source, src, target, dst):
    """Slot ``src`` of ``source`` (statistics and constants) into slot ``dst`` of ``target``."""
    target.counts[dst] = source.counts[src]
    for a in range(source.means.shape[1]):
        target.means[dst, a] = source.means[src, a]
    copy_scale(target.precs, dst, source.precs, src)
    target.logdets[dst] = source.logdets[src]
    for r in range(N_CONSTS):
        target.consts[r, dst] = source.consts[r, src]


@njit(cache=True, nogil=True, error_model="numpy", fastmath={"contract"}, inline="always")
def move_mean(x, slots, k, n, logdet_change, step, count_change, tables):
    """The rest of a point joining (count_change 1, step 1 / (kappa_n + 1)) or leaving (-1, step -1 / kappa_{n-1})
    slot k of n points, after its scale (:mod:`pcrp.kernels.scales`: full_scale_change, diagonal_scale_change, or
    the spherical type's one number divided by the factor): log|S_n| plus ``logdet_change``, the mean a step towards
    x (away for a negative step), the count, the constants. The sweep and the move's exact phase call the scale's
    update and this one directly, one level of inlining each: an inlined function that inlines these in turn made
    the full type's sweep 2.8 times slower at N = 2,000, d = 1 (its reference counts were no longer pruned)."""
    slots.logdets[k] += logdet_change
    for a in range(x.shape[0]):
        slots.means[k, a] += (x[a] - slots.means[k, a]) * step
    slots.counts[k] = n + count_change
    refresh_weights(slots, k, tables)


@njit(cache=True, nogil=True, error_model="numpy", fastmath={"contract"})
def change_point(x, slots, precs, k, q, tables, work, joining):
    """x (d,) joins (``joining``) or leaves slot k of any covariance type, x's form being q (unused by the diagonal
    type): the split-merge moves' update, where a call per member costs little. ``precs`` is slots.precs again, an
    argument so that numba compiles only its type's code (pcrp.kernels.scales)."""
    n = slots.counts[k]
    if joining:
        term = scale_times_factor(x, slots.means, precs, k, q, tables.per_count[n, T_SCALE], work)
        move_mean(x, slots, k, n, logdet_step(precs, x.shape[0]) * term, tables.per_count[n, ADD_STEP], 1, tables)
    else:
        term = scale_times_factor(x, slots.means, precs, k, q, -tables.per_count[n, REMOVE_WEIGHT], work)
        move_mean(x, slots, k, n, logdet_step(precs, x.shape[0]) * term, -tables.per_count[n, REMOVE_STEP], -1,
                  tables)


@njit(cache=True, nogil=True, error_model="numpy")
def set_from_sums(slots, k, n, total, scatter, base, tables):
    """Slot k from its count n, the sum of its points ``total`` (d,) and their scatter about their mean
    ``scatter`` (d, d; the diagonal only is read for the diagonal and spherical types):
    S_n = S0 + C + (kappa0 n / kappa_n)(xbar - m0)(xbar - m0)^T as the type keeps it
    (:func:`pcrp.kernels.scales.scale_from_sums`). n = 0 empties the slot. Returns False (the slot unchanged)
    when rounding leaves S_n not positive definite."""
    if n == 0:
        empty_slot(slots, k, base, tables)
        return True
    m0, kappa0 = base.m0, base.kappa0
    D = m0.shape[0]
    centre = np.empty(D)
    for a in range(D):
        centre[a] = total[a] / n - m0[a]
    logdet = scale_from_sums(slots.precs, k, base.S0, scatter, centre, kappa0 * n / (kappa0 + n))
    if np.isnan(logdet):
        return False
    for a in range(D):
        slots.means[k, a] = (kappa0 * m0[a] + total[a]) / (kappa0 + n)
    slots.logdets[k] = logdet
    slots.counts[k] = n
    refresh_weights(slots, k, tables)
    return True


@njit(cache=True, nogil=True, error_model="numpy")
def rebuild(X, labels, n_slots, slots, base, tables):
    """Every slot 0 .. n_slots - 1 from the points X (N, d) whose label is its index, in one pass over the data
    (a label < 0 belongs to no slot; a slot without points becomes empty). Per slot the pass accumulates sums about
    a shift (its first point), so that the scatter C = sum (x - s)(x - s)^T - n (xbar - s)(xbar - s)^T loses no
    digits to a far-away origin; the diagonal and spherical types accumulate its diagonal only. Returns False when
    some slot's S_n was not positive definite (left as it was)."""
    N, D = X.shape
    cross = slots.precs.ndim == FULL_RANK  # the full type's scatter needs the products of two columns
    shift = np.zeros((n_slots, D))
    first = np.zeros((n_slots, D))
    second = np.zeros((n_slots, D, D))
    n = np.zeros(n_slots, dtype=np.int64)
    for i in range(N):
        k = labels[i]
        if k < 0:
            continue
        if n[k] == 0:
            for a in range(D):
                shift[k, a] = X[i, a]
        n[k] += 1
        for a in range(D):
            da = X[i, a] - shift[k, a]
            first[k, a] += da
            for b in range(0 if cross else a, a + 1):
                second[k, a, b] += da * (X[i, b] - shift[k, b])
    total = np.empty(D)
    scatter = np.zeros((D, D))
    ok = True
    for k in range(n_slots):
        nk = n[k]
        for a in range(D):
            total[a] = first[k, a] + nk * shift[k, a]
            for b in range(0 if cross else a, a + 1):
                c = second[k, a, b] - first[k, a] * first[k, b] / nk if nk > 0 else 0.0
                scatter[a, b] = c
                scatter[b, a] = c
        ok = set_from_sums(slots, k, nk, total, scatter, base, tables) and ok
    return ok


@njit(cache=True, nogil=True, error_model="numpy")
def merge_into(slots, a, b, base, tables, target, dst):
    """The union of slots a and b from their statistics alone (no pass over the points), into slot ``dst``
    of ``target``; False (nothing written) when rounding leaves a scale not positive definite. With n_i points of
    mean xbar_i = (kappa_i m_i - kappa0 m0) / n_i and scatter C_i = S_i - S0 - (kappa0 n_i / kappa_i)
    (xbar_i - m0)(xbar_i - m0)^T, the union has C = C_a + C_b + (n_a n_b / n)(xbar_a - xbar_b)(xbar_a - xbar_b)^T,
    so S = S_a + S_b - S0 + [the terms in the means]: the S_i recovered from the slots (for the full type by
    inverting S_i^{-1}, O(d^3)), the terms in the means written as one scatter-like matrix."""
    m0, kappa0 = base.m0, base.kappa0
    D = m0.shape[0]
    n_a = slots.counts[a]
    n_b = slots.counts[b]
    n = n_a + n_b
    ok_a, S_a = stored_scale(slots.precs, a, base.S0)  # S_a - S0
    ok_b, S_b = stored_scale(slots.precs, b, base.S0)
    if not (ok_a and ok_b):
        return False
    xa = np.empty(D)
    xb = np.empty(D)
    xbar = np.empty(D)
    for i in range(D):  # the blocks' means, about m0
        xa[i] = ((kappa0 + n_a) * slots.means[a, i] - kappa0 * m0[i]) / n_a - m0[i]
        xb[i] = ((kappa0 + n_b) * slots.means[b, i] - kappa0 * m0[i]) / n_b - m0[i]
        xbar[i] = (n_a * xa[i] + n_b * xb[i]) / n
    w_a = kappa0 * n_a / (kappa0 + n_a)
    w_b = kappa0 * n_b / (kappa0 + n_b)
    w_ab = n_a * n_b / n
    # the union's scatter: (S_a - S0) + (S_b - S0) - w_a xa xa^T - w_b xb xb^T + w_ab (xa - xb)(xa - xb)^T; with S0
    # and w xbar xbar^T added by scale_from_sums, S = S_a + S_b - S0 + [the terms in the means] + w xbar xbar^T
    scatter = np.zeros((D, D))
    cross = slots.precs.ndim == FULL_RANK
    for i in range(D):
        for j in range(D):
            if cross or i == j:
                scatter[i, j] = (- w_a * xa[i] * xa[j] - w_b * xb[i] * xb[j]
                                 + w_ab * (xa[i] - xb[i]) * (xa[j] - xb[j]))
    add_scales(slots.precs, S_a, S_b, scatter)
    logdet = scale_from_sums(target.precs, dst, base.S0, scatter, xbar, kappa0 * n / (kappa0 + n))
    if np.isnan(logdet):
        return False
    for i in range(D):
        target.means[dst, i] = m0[i] + n * xbar[i] / (kappa0 + n)
    target.logdets[dst] = logdet
    target.counts[dst] = n
    refresh_weights(target, dst, tables)
    return True


@njit(cache=True, nogil=True, error_model="numpy")
def add_scales(precs, S_a, S_b, scatter):
    """scatter (d, d) += S_a + S_b, differences of scales from the prior's as :func:`pcrp.kernels.scales.stored_scale`
    gives them for slots of the covariance type of ``precs``: (d, d), or one number per column on the diagonal
    ((d,)), or the spherical type's one number (1,) at scatter[0, 0], where scale_from_sums reads it in the trace."""
    if precs.ndim == FULL_RANK:
        for i in range(scatter.shape[0]):
            for j in range(scatter.shape[0]):
                scatter[i, j] += S_a[i, j] + S_b[i, j]
    else:
        for i in range(S_a.shape[0]):
            scatter[i, i] += S_a[i] + S_b[i]


@njit(cache=True, nogil=True, error_model="numpy")
def log_marginal(slots, k, tables):
    """log m(X_k), the NIW marginal likelihood of the points in slot k (docs/design.md section 1.2)."""
    n = slots.counts[k]
    return tables.per_count[n, MARGINAL_CONST] - 0.5 * tables.per_count[n, NU] * slots.logdets[k]


@njit(cache=True, nogil=True, error_model="numpy")
def log_joint(K, slots, tables):
    """log p(z, X) = log V_N(K) + sum_k [log W(N_k) + log m(X_k)] over slots 0 .. K-1 (normalised when V_N is:
    every prior but the pCRP)."""
    total = tables.log_v[K]
    for k in range(K):
        total += tables.per_count[slots.counts[k], LOG_W] + log_marginal(slots, k, tables)
    return total


@njit(cache=True, nogil=True, error_model="numpy")
def log_predictive(points, slots, n_slots, tables):
    """(M, n_slots) log p(x_i | the points in slot k), the Student-t predictive of each row of ``points`` (M, d)
    under each slot (an empty slot: the prior predictive; the diagonal type: the product of one Student-t per
    column)."""
    M = points.shape[0]
    out = np.empty((M, n_slots))
    means, precs, consts = slots.means, slots.precs, slots.consts
    for i in range(M):
        x = points[i]
        for k in range(n_slots):
            term = predictive_term(x, means, precs, consts[SCALE, k], k)
            count = slots.counts[k]
            out[i, k] = tables.per_count[count, T_CONST] - 0.5 * slots.logdets[k] - tables.per_count[count, T_EXPONENT] * term
    return out

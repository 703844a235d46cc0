"""The clusters' Normal-Inverse-Wishart statistics in :class:`pcrp.kernels.state.Slots`: the one quadratic form of a
point against the slots, adding and removing a point, rebuilding from the labels, merging two slots.

A block of n points has the posterior kappa_n = kappa0 + n, nu_n = nu0 + n, mean m_n and scale matrix S_n
(docs/design.md section 1.2); a slot keeps n, m_n, S_n^{-1} and log|S_n|. Adding or removing one point is a
rank-one change of S_n, so its inverse follows by Sherman-Morrison and its log-determinant by the matrix
determinant lemma, in O(d^2) with one log, and that log is the one the point's Student-t predictive needs:

    y = 1 + t_scale(n) q,  q = (x - m_n)^T S_n^{-1} (x - m_n),  log|S_{n+1}| = log|S_n| + log y.

The predictive of x under slot c is then consts[LOG_WEIGHT, c] - consts[EXPONENT, c] log y_c, with the slot's
constants (:func:`refresh_weights`) holding its seating weight log g(n) too. Every empty slot holds the prior's statistics
(m0, S0^{-1}, log|S0|, count 0) and log weight -inf, so that the form of a point against an empty slot is the form
it would have in a new cluster.

All kernels use ``error_model="numpy"``: a float division by zero gives inf or NaN instead of raising, so loops
carry no exception branches.
"""

import math

import numpy as np
from numba import njit

from .state import ADD_STEP, EXPONENT, LOG_WEIGHT, N_CONSTS, SCALE, LOG_G, LOG_W, MARGINAL_CONST, NU, REMOVE_STEP, REMOVE_WEIGHT, T_CONST, T_EXPONENT, T_SCALE
from .vecmath import LANES


@njit(cache=True, nogil=True, error_model="numpy")
def padded(n):
    """n rounded up to whole vectors of LANES: the length of a vectorised pass over n slots or members."""
    return (n + LANES - 1) // LANES * LANES


# fastmath={"contract"} (a multiply and an add may fuse into one FMA) here, in the sweep and in the move:
# docs/design.md section 2 gives the bound measured; NaN, infinity and the order of every sum are kept.
@njit(cache=True, nogil=True, error_model="numpy", fastmath={"contract"}, inline="always")
def scaled_form(x, means, precs, consts, c):
    """(q, y) for the point x (d,) and slot c of a :class:`Slots`' arrays: q = (x - m_c)^T S_c^{-1} (x - m_c) from the
    lower triangle, and y = 1 + consts[SCALE, c] q, whose log is x's predictive term and the log-determinant's change when
    x joins. The one quadratic form of a point against a slot. Inlined (it runs for every point and slot), and
    given the arrays rather than the Slots, whose fields would each cost two atomic reference counts a call."""
    q = 0.0
    for a in range(x.shape[0]):
        da = x[a] - means[c, a]
        t = 0.0
        for b in range(a):
            t += precs[c, a, b] * (x[b] - means[c, b])
        q += da * (2.0 * t + precs[c, a, a] * da)
    return q, 1.0 + q * consts[SCALE, c]


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
    D = base.m0.shape[0]
    slots.counts[k] = 0
    for a in range(D):
        slots.means[k, a] = base.m0[a]
        for b in range(D):
            slots.precs[k, a, b] = base.P0[a, b]
    slots.logdets[k] = base.logdet0
    refresh_weights(slots, k, tables)


@njit(cache=True, nogil=True, error_model="numpy")
def copy_slot(source, src, target, dst):
    """Slot ``src`` of ``source`` (statistics and constants) into slot ``dst`` of ``target``."""
    D = source.means.shape[1]
    target.counts[dst] = source.counts[src]
    for a in range(D):
        target.means[dst, a] = source.means[src, a]
        for b in range(D):
            target.precs[dst, a, b] = source.precs[src, a, b]
    target.logdets[dst] = source.logdets[src]
    for r in range(N_CONSTS):
        target.consts[r, dst] = source.consts[r, src]


@njit(cache=True, nogil=True, error_model="numpy", fastmath={"contract"}, inline="always")
def add_point(x, slots, k, q, log_y, tables, work):
    """Add x (d,) to slot k, whose form of x (:func:`scaled_form`) is ``q`` with log y = ``log_y``:
    S_{n+1}^{-1} = S_n^{-1} - t_scale(n) w w^T / y with w = S_n^{-1} (x - m_n), log|S_{n+1}| = log|S_n| + log y.
    work (d,) is scratch."""
    means, precs = slots.means, slots.precs
    D = x.shape[0]
    n = slots.counts[k]
    weight = tables.per_count[n, T_SCALE]
    for a in range(D):
        t = 0.0
        for b in range(D):
            t += precs[k, a, b] * (x[b] - means[k, b])
        work[a] = t
    coef = weight / (1.0 + weight * q)
    for a in range(D):
        ca = coef * work[a]
        for b in range(D):
            precs[k, a, b] -= ca * work[b]
    slots.logdets[k] += log_y
    step = tables.per_count[n, ADD_STEP]
    for a in range(D):
        means[k, a] += (x[a] - means[k, a]) * step
    slots.counts[k] = n + 1
    refresh_weights(slots, k, tables)


@njit(cache=True, nogil=True, error_model="numpy", fastmath={"contract"}, inline="always")
def remove_point(x, slots, k, shrink, log_shrink, tables, work):
    """Take x (d,) out of slot k (n >= 2 points), where ``shrink`` = 1 - remove_weight(n) q > 0 for its form q
    and ``log_shrink`` its log: S_{n-1} = S_n - remove_weight(n) (x - m_n)(x - m_n)^T, so
    S_{n-1}^{-1} = S_n^{-1} + remove_weight(n) w w^T / shrink and log|S_{n-1}| = log|S_n| + log shrink.
    work (d,) is scratch."""
    means, precs = slots.means, slots.precs
    D = x.shape[0]
    n = slots.counts[k]
    for a in range(D):
        t = 0.0
        for b in range(D):
            t += precs[k, a, b] * (x[b] - means[k, b])
        work[a] = t
    coef = tables.per_count[n, REMOVE_WEIGHT] / shrink
    for a in range(D):
        ca = coef * work[a]
        for b in range(D):
            precs[k, a, b] += ca * work[b]
    slots.logdets[k] += log_shrink
    step = tables.per_count[n, REMOVE_STEP]
    for a in range(D):
        means[k, a] += (means[k, a] - x[a]) * step
    slots.counts[k] = n - 1
    refresh_weights(slots, k, tables)


@njit(cache=True, nogil=True, error_model="numpy")
def cholesky(A, L):
    """The lower Cholesky factor of the symmetric positive definite A (d, d), written into L; False when A is not
    numerically positive definite."""
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
    """inv(A) of the symmetric positive definite A (d, d) into ``out`` (d, d), through a Cholesky factor; returns
    log|A|, or NaN (``out`` untouched) when A is not numerically positive definite."""
    d = A.shape[0]
    L = np.zeros((d, d))
    if not cholesky(A, L):
        return np.nan
    Linv = np.zeros((d, d))
    for j in range(d):  # L Linv = I, column by column
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
def set_from_sums(slots, k, n, total, scatter, base, tables):
    """Slot k from its count n, the sum of its points ``total`` (d,) and their scatter about their mean
    ``scatter`` (d, d): S_n = S0 + C + (kappa0 n / kappa_n)(xbar - m0)(xbar - m0)^T. n = 0 empties the slot.
    Returns False (the slot unchanged) when rounding leaves S_n not positive definite."""
    if n == 0:
        empty_slot(slots, k, base, tables)
        return True
    m0, kappa0 = base.m0, base.kappa0
    D = m0.shape[0]
    S = base.S0.copy()
    xbar = np.empty(D)
    for a in range(D):
        xbar[a] = total[a] / n
    shrink = kappa0 * n / (kappa0 + n)
    for a in range(D):
        for b in range(D):
            S[a, b] += scatter[a, b] + shrink * (xbar[a] - m0[a]) * (xbar[b] - m0[b])
    P = np.empty((D, D))
    logdet = spd_inverse_logdet(S, P)
    if np.isnan(logdet):
        return False
    for a in range(D):
        slots.means[k, a] = (kappa0 * m0[a] + n * xbar[a]) / (kappa0 + n)
        for b in range(D):
            slots.precs[k, a, b] = P[a, b]
    slots.logdets[k] = logdet
    slots.counts[k] = n
    refresh_weights(slots, k, tables)
    return True


@njit(cache=True, nogil=True, error_model="numpy")
def rebuild(X, labels, n_slots, slots, base, tables):
    """Every slot 0 .. n_slots - 1 from the points X (N, d) whose label is its index, in one pass over the data
    (a label < 0 belongs to no slot; a slot without points becomes empty). Per slot the pass accumulates sums about
    a shift (its first point), so that the scatter C = sum (x - s)(x - s)^T - n (xbar - s)(xbar - s)^T loses no
    digits to a far-away origin. Returns False when some slot's S_n was not positive definite (left as it was)."""
    N, D = X.shape
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
            for b in range(a + 1):
                second[k, a, b] += da * (X[i, b] - shift[k, b])
    total = np.empty(D)
    scatter = np.empty((D, D))
    ok = True
    for k in range(n_slots):
        nk = n[k]
        for a in range(D):
            total[a] = first[k, a] + nk * shift[k, a]
            for b in range(a + 1):
                c = second[k, a, b] - first[k, a] * first[k, b] / nk if nk > 0 else 0.0
                scatter[a, b] = c
                scatter[b, a] = c
        ok = set_from_sums(slots, k, nk, total, scatter, base, tables) and ok
    return ok


@njit(cache=True, nogil=True, error_model="numpy")
def merge_into(slots, a, b, base, tables, target, dst):
    """The union of slots a and b from their statistics alone (O(d^3), no pass over the points), into slot ``dst``
    of ``target``; False (nothing written) when rounding leaves a scale matrix not positive definite. With n_i
    points of mean xbar_i = (kappa_i m_i - kappa0 m0) / n_i and scatter C_i = S_i - S0 - (kappa0 n_i / kappa_i)
    (xbar_i - m0)(xbar_i - m0)^T, the union has C = C_a + C_b + (n_a n_b / n)(xbar_a - xbar_b)(xbar_a - xbar_b)^T
    (S_i recovered by inverting the slot's S_i^{-1})."""
    m0, S0, kappa0 = base.m0, base.S0, base.kappa0
    D = m0.shape[0]
    n_a = slots.counts[a]
    n_b = slots.counts[b]
    n = n_a + n_b
    S_a = np.empty((D, D))
    S_b = np.empty((D, D))
    if np.isnan(spd_inverse_logdet(slots.precs[a], S_a)) or np.isnan(spd_inverse_logdet(slots.precs[b], S_b)):
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
    w = kappa0 * n / (kappa0 + n)
    for i in range(D):
        for j in range(D):
            S_a[i, j] += (S_b[i, j] - S0[i, j] - w_a * xa[i] * xa[j] - w_b * xb[i] * xb[j]
                          + w_ab * (xa[i] - xb[i]) * (xa[j] - xb[j]) + w * xbar[i] * xbar[j])
    logdet = spd_inverse_logdet(S_a, target.precs[dst])
    if np.isnan(logdet):
        return False
    for i in range(D):
        target.means[dst, i] = m0[i] + n * xbar[i] / (kappa0 + n)
    target.logdets[dst] = logdet
    target.counts[dst] = n
    refresh_weights(target, dst, tables)
    return True


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
    under each slot (an empty slot: the prior predictive)."""
    M = points.shape[0]
    out = np.empty((M, n_slots))
    means, precs, consts = slots.means, slots.precs, slots.consts
    for i in range(M):
        x = points[i]
        for k in range(n_slots):
            _, y = scaled_form(x, means, precs, consts, k)
            count = slots.counts[k]
            out[i, k] = tables.per_count[count, T_CONST] - 0.5 * slots.logdets[k] - tables.per_count[count, T_EXPONENT] * math.log(y)
    return out

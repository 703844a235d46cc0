"""Each covariance type's operations on a cluster's scale (docs/design.md section 1.2), told apart by the rank of
the stored scale (:func:`pcrp.kernels.state.scale_shape`):

- full, ``Slots.precs`` (C, d, d): S_n^{-1}, updated by Sherman-Morrison, O(d^2) a point;
- diagonal, (C, d): each column's 1 / beta_n,j, a Normal-Gamma per column, O(d) a point;
- spherical, (C,): one 1 / beta_n, a Normal-Inverse-Gamma, O(d) a point.

In all three a point x meets slot c through factors y = 1 + t_scale(n) q: one for the full and spherical types,
with q the form (x - m_n)^T S_n^{-1} (x - m_n) or |x - m_n|^2 / beta_n, and one a column for the diagonal type,
q_j = (x_j - m_j)^2 / beta_j. x's predictive term is log y (the sum of the log y_j), and when x joins, the scale is
multiplied by its factor (S_n by a rank-one step, each beta_j by y_j, beta by y), so log|S_n| grows by log y
(spherical: d log y, the log-determinant of beta I). When x leaves, the factors are 1 - remove_weight(n) q.

How numba compiles one type's code only: a function whose argument is the stored scale sees ``precs.ndim`` as a
constant and drops the other types' branches before typing (numba's dead branch pruning: the comment at
:data:`pcrp.kernels.state.FULL_RANK`), so numba compiles a kernel once per type in use with that type's code alone. The sweep (:func:`pcrp.kernels.sweep.seat_points`) therefore takes ``precs`` as an argument
and calls the inlined per-type functions below in such branches; elsewhere the functions here that take ``precs``
branch on its rank themselves. (A runtime branch between the types inside the sweep's loop, or these operations as
calls or overloads there, made the full type's sweep 1.5 to 2.4 times slower: numba's reference-count pruning
gave up on the loop. docs/records/covariance_types.md.)
"""

import math

import numpy as np
from numba import njit

from .state import DIAG_RANK, FULL_RANK, SPHERICAL_RANK

# A diagonal slot's log term is the log of the product of its d factors, multiplied DIAG_CHUNK at a time: on data that
# pcrp.model.check_niw_for_data accepts each factor lies within 2^-42 .. 2^42 (the form q_j is at most 4 COND_MAX; a
# leaving point's factor beta_{n-1,j} / beta_n,j is at least 1 / COND_MAX), so a chunk of 16 moves the product by at
# most 2^672. Whenever the product leaves 2^-350 .. 2^350 after a chunk its log is taken and it restarts at 1, so it
# never leaves 2^-1022 .. 2^1022: one log a slot for most points (their factors are near 1) instead of d.
DIAG_CHUNK = 16
_PRODUCT_BOUND = 2.0 ** 350


# ----- inlined into the sweep, one type each ----------------------------------------------------------------------

@njit(cache=True, nogil=True, error_model="numpy", fastmath={"contract"}, inline="always")
def full_form(x, means, precs, c):
    """q = (x - m_c)^T S_c^{-1} (x - m_c) from the lower triangle of a full slot c."""
    q = 0.0
    for a in range(x.shape[0]):
        da = x[a] - means[c, a]
        t = 0.0
        for b in range(a):
            t += precs[c, a, b] * (x[b] - means[c, b])
        q += da * (2.0 * t + precs[c, a, a] * da)
    return q


@njit(cache=True, nogil=True, error_model="numpy", fastmath={"contract"}, inline="always")
def spherical_form(x, means, precs, c):
    """q = |x - m_c|^2 / beta_c for a spherical slot c."""
    q = 0.0
    for a in range(x.shape[0]):
        da = x[a] - means[c, a]
        q += da * da
    return q * precs[c]


@njit(cache=True, nogil=True, error_model="numpy", fastmath={"contract"}, inline="always")
def diagonal_log_term(x, means, precs, weight, c):
    """sum_j log(1 + weight (x_j - m_c,j)^2 / beta_c,j) for a diagonal slot c, as the log of the product of the
    factors kept within bounds (DIAG_CHUNK): with weight = the slot's t_scale, x's log term; with weight =
    -remove_weight(n), the change when x leaves (NaN when rounding makes a factor <= 0)."""
    D = x.shape[0]
    total = 0.0
    product = 1.0
    for start in range(0, D, DIAG_CHUNK):
        end = min(start + DIAG_CHUNK, D)
        for a in range(start, end):
            da = x[a] - means[c, a]
            factor = 1.0 + weight * precs[c, a] * da * da
            product *= factor if factor > 0.0 else np.nan
        if not (1.0 / _PRODUCT_BOUND < product < _PRODUCT_BOUND):
            total += math.log(product)
            product = 1.0
    return total + math.log(product)


@njit(cache=True, nogil=True, error_model="numpy", fastmath={"contract"}, inline="always")
def diagonal_factor(x, means, precs, weight, c):
    """prod_j (1 + weight (x_j - m_c,j)^2 / beta_c,j) for a diagonal slot c of at most DIAG_CHUNK columns, whose
    log :func:`diagonal_log_term` gives: the sweep takes it with the other slots' logs in one vector pass (NaN when
    rounding makes a factor <= 0)."""
    product = 1.0
    for a in range(x.shape[0]):
        da = x[a] - means[c, a]
        factor = 1.0 + weight * precs[c, a] * da * da
        product *= factor if factor > 0.0 else np.nan
    return product


@njit(cache=True, nogil=True, error_model="numpy", fastmath={"contract"}, inline="always")
def full_scale_change(x, means, precs, k, coef, work):
    """S_k^{-1} += coef w w^T with w = S_k^{-1} (x - m_k): a point joining (coef = -t_scale / y) or leaving
    (coef = remove_weight / shrink) a full slot, by Sherman-Morrison. work (d,) is scratch."""
    D = x.shape[0]
    for a in range(D):
        t = 0.0
        for b in range(D):
            t += precs[k, a, b] * (x[b] - means[k, b])
        work[a] = t
    for a in range(D):
        ca = coef * work[a]
        for b in range(D):
            precs[k, a, b] += ca * work[b]


@njit(cache=True, nogil=True, error_model="numpy", fastmath={"contract"}, inline="always")
def diagonal_scale_change(x, means, precs, k, weight):
    """Each 1 / beta_k,j divided by 1 + weight (x_j - m_k,j)^2 / beta_k,j: a point joining (weight = t_scale) or
    leaving (weight = -remove_weight) a diagonal slot."""
    for a in range(x.shape[0]):
        da = x[a] - means[k, a]
        precs[k, a] /= 1.0 + weight * precs[k, a] * da * da


# ----- by the rank of an argument, outside the sweep's loop -------------------------------------------------------

@njit(cache=True, nogil=True, error_model="numpy", fastmath={"contract"})
def form_and_log(x, means, precs, scale, c):
    """(q, log term) of the point x against slot c with t_scale ``scale``: log y (full, spherical) or the sum of
    the columns' log y_j (diagonal, whose q is not used and is 0)."""
    if precs.ndim == DIAG_RANK:
        return 0.0, diagonal_log_term(x, means, precs, scale, c)
    q = full_form(x, means, precs, c) if precs.ndim == FULL_RANK else spherical_form(x, means, precs, c)
    return q, math.log(1.0 + scale * q)


@njit(cache=True, nogil=True, error_model="numpy", fastmath={"contract"})
def predictive_term(x, means, precs, scale, k):
    """x's log term against slot k for any point x (:func:`pcrp.kernels.clusters.log_predictive`): the diagonal
    type takes one log a column, since the product of a far point's factors could overflow."""
    if precs.ndim == DIAG_RANK:
        term = 0.0
        for a in range(x.shape[0]):
            da = x[a] - means[k, a]
            term += math.log(1.0 + scale * precs[k, a] * da * da)
        return term
    return form_and_log(x, means, precs, scale, k)[1]


@njit(cache=True, nogil=True, error_model="numpy", fastmath={"contract"})
def scale_times_factor(x, means, precs, k, q, weight, work):
    """The stored scale of slot k when x joins it (weight = t_scale(n), q x's form) or leaves it (weight =
    -remove_weight(n)), before its mean moves: each factor 1 + weight q (one a column for the diagonal type) applied
    as above. Returns the log term, log of the factor (the diagonal type: the sum of the columns' logs, NaN when a
    factor was not positive); log|S_n| changes by logdet_step times it. The split-merge moves' update; the sweep
    inlines the same per type."""
    if precs.ndim == DIAG_RANK:
        term = diagonal_log_term(x, means, precs, weight, k)
        diagonal_scale_change(x, means, precs, k, weight)
        return term
    factor = 1.0 + weight * q
    if precs.ndim == FULL_RANK:
        full_scale_change(x, means, precs, k, -weight / factor, work)
    else:
        precs[k] /= factor
    return math.log(factor)


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def logdet_step(precs, d):
    """How many times its log term log|S_n| changes by when a point joins or leaves: d for the spherical type
    (log|beta I| = d log beta), else 1 (the diagonal type's log term is already the sum over the columns). Inlined:
    both branches type for every rank, and the rank is a constant once compiled."""
    return d if precs.ndim == SPHERICAL_RANK else 1


@njit(cache=True, nogil=True, error_model="numpy")
def copy_scale(precs, k, source, i):
    """Slot k's stored scale from slot i of ``source``, another Slots' precs of the same type (element by element:
    a slice would cost a view's reference counts)."""
    if precs.ndim == FULL_RANK:
        for a in range(precs.shape[1]):
            for b in range(precs.shape[2]):
                precs[k, a, b] = source[i, a, b]
    elif precs.ndim == DIAG_RANK:
        for a in range(precs.shape[1]):
            precs[k, a] = source[i, a]
    else:
        precs[k] = source[i]


@njit(cache=True, nogil=True, error_model="numpy")
def set_prior_scale(precs, k, P0):
    """Slot k's stored scale from the prior's inverse scale P0 (BaseMeasure.P0: (d, d), (d,), or the spherical
    type's one number as (1,))."""
    if precs.ndim == FULL_RANK:
        for a in range(precs.shape[1]):
            for b in range(precs.shape[2]):
                precs[k, a, b] = P0[a, b]
    elif precs.ndim == DIAG_RANK:
        for a in range(precs.shape[1]):
            precs[k, a] = P0[a]
    else:
        precs[k] = P0[0]


@njit(cache=True, nogil=True, error_model="numpy")
def scale_from_sums(precs, k, S0, scatter, centre, weight):
    """Slot k's scale S = S0 + scatter + weight centre centre^T (centre (d,) = xbar - m0), as the type keeps it:
    the matrix (full), its diagonal (diagonal), or beta = beta0 + the trace of scatter + weight |centre|^2
    (spherical; S0 its beta0 as a (1,) array); only the diagonal of ``scatter`` (d, d) is read by the last two.
    Writes the inverse into precs[k] and returns log|S| of the implied d x d scale, or NaN (precs[k] untouched)
    when S is not numerically positive definite."""
    D = centre.shape[0]
    if precs.ndim == FULL_RANK:
        S = S0.copy()
        for a in range(D):
            for b in range(D):
                S[a, b] += scatter[a, b] + weight * centre[a] * centre[b]
        return spd_inverse_logdet(S, precs[k])
    betas = S0.copy()
    for a in range(D):
        betas[a if precs.ndim == DIAG_RANK else 0] += scatter[a, a] + weight * centre[a] * centre[a]
    logdet = 0.0
    for a in range(betas.shape[0]):
        if not betas[a] > 0.0:
            return np.nan
        logdet += math.log(betas[a])
    if precs.ndim == DIAG_RANK:
        for a in range(D):
            precs[k, a] = 1.0 / betas[a]
        return logdet
    precs[k] = 1.0 / betas[0]
    return D * logdet


@njit(cache=True, nogil=True, error_model="numpy")
def stored_scale(precs, k, S0):
    """(ok, S - S0): the scale S of slot k, recovered from what the slot stores (the full type inverts S_k^{-1},
    O(d^3)), less the prior's S0, in S0's shape ((d, d), (d,), (1,)); ok False when a full slot's stored inverse is
    not numerically positive definite."""
    out = S0.copy()
    if precs.ndim == FULL_RANK:
        ok = not np.isnan(spd_inverse_logdet(precs[k], out))
        for a in range(out.shape[0]):
            for b in range(out.shape[0]):
                out[a, b] -= S0[a, b]
        return ok, out
    if precs.ndim == DIAG_RANK:
        for a in range(out.shape[0]):
            out[a] = 1.0 / precs[k, a] - S0[a]
    else:
        out[0] = 1.0 / precs[k] - S0[0]
    return True, out


@njit(cache=True, nogil=True, error_model="numpy")
def scratch_scales(precs, rows):
    """Zero stored scales of ``rows`` slots of the same type as ``precs`` (a move's own slots)."""
    if precs.ndim == FULL_RANK:
        return np.zeros((rows, precs.shape[1], precs.shape[2]))
    if precs.ndim == DIAG_RANK:
        return np.zeros((rows, precs.shape[1]))
    return np.zeros(rows)


@njit(cache=True, nogil=True, error_model="numpy")
def frozen_score(precs, r, gain, score):
    """score (d, d) = gain S_r^{-1} of slot r, a matrix for every type (diagonal for the diagonal and spherical
    types): the frozen Gaussian score of a split-merge move (pcrp.kernels.split_merge.frozen_seating)."""
    D = score.shape[0]
    for a in range(D):
        for b in range(D):
            score[a, b] = 0.0
        if precs.ndim == FULL_RANK:
            for b in range(D):
                score[a, b] = gain * precs[r, a, b]
        elif precs.ndim == DIAG_RANK:
            score[a, a] = gain * precs[r, a]
        else:
            score[a, a] = gain * precs[r]


# ----- the full type's matrix algebra ----------------------------------------------------------------------------

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

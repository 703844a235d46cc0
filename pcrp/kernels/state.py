"""What the kernels read and write, as a few named structures (NamedTuples of arrays, as blackjax passes its state).

A chain's sweeps read :class:`Data` (the points, the NIW base measure and the per-count tables, fixed for the
run), change the labels, the cluster statistics in :class:`Slots` and the random state, are steered by
:class:`Settings` and report into :class:`Record`. :class:`ScanBuffers` holds the sweep's order and its position,
so that a call that runs out of slots can be resumed. Python builds each of them once per chain
(:mod:`pcrp.sampling.sampler`); numba compiles one kernel for all of them, whatever d.

Shapes: N points, d columns, C slots (capacity, a multiple of :data:`pcrp.kernels.vecmath.LANES`).
"""

from typing import NamedTuple

import numpy as np


# The columns of Tables.per_count: row n holds a block of n points' constants, so that one cache line serves every
# look-up for a block.
LOG_G = 0  # log g(n) = log W(n + 1) / W(n): the seating weight of an existing block of n
LOG_W = 1  # log W(n) - log W(1): the prior's factor of a block of n
T_CONST = 2  # the block's Student-t log normaliser, without -log|S_n| / 2
T_SCALE = 3  # kappa_n / (kappa_n + 1): multiplies the quadratic form in S_n^{-1}
T_EXPONENT = 4  # (df_n + d) / 2
MARGINAL_CONST = 5  # log m(X_block) + (nu_n / 2) log|S_n|
NU = 6  # nu_n = nu0 + n
ADD_STEP = 7  # 1 / (kappa_n + 1): the mean's step when a point joins a block of n
REMOVE_WEIGHT = 8  # kappa_n / kappa_{n-1}: the rank-one weight when a point leaves a block of n
REMOVE_STEP = 9  # 1 / kappa_{n-1}: the mean's step when a point leaves a block of n
N_COLUMNS = 10

# The clusters' covariance types, scikit-learn's names (docs/design.md section 1.2): a slot's scale S_n is a (d, d)
# matrix (FULL), a diagonal (DIAG: each column its own Normal-Gamma) or one number times the identity (SPHERICAL: one
# variance per cluster, Normal-Inverse-Gamma).
FULL, DIAG, SPHERICAL = "full", "diag", "spherical"

# The kernels tell the types apart by the rank of the slots' stored scales, Slots.precs: (C, d, d), (C, d) or (C,).
# Each kernel whose code differs by type takes the stored scales as a direct argument ``precs`` and branches on
# ``precs.ndim == FULL_RANK`` (DIAG_RANK, SPHERICAL_RANK). The choice is made when numba compiles, not when the kernel
# runs: numba's dead branch pruning, before type inference, rewrites the ndim of a direct array argument as the
# constant its type gives (its passes RewriteSemanticConstants and DeadBranchPrune) and drops the branches that
# cannot be taken, so numba compiles a kernel once per type in use with that type's code alone (the other types'
# branches are never typed; most would not type with this rank). A rank read through a structure (slots.precs.ndim)
# or a type held in a field is not pruned: a runtime branch between the types in the sweep's loop made the full
# type 1.8-2.9 times slower (docs/records/covariance_types.md). tests/test_kernels.py checks that the full type's
# compiled sweep carries none of the other types' code.
FULL_RANK, DIAG_RANK, SPHERICAL_RANK = 3, 2, 1
RANKS = {FULL: FULL_RANK, DIAG: DIAG_RANK, SPHERICAL: SPHERICAL_RANK}


class Tables(NamedTuple):
    """The prior's and the NIW's constants, built by :func:`pcrp.model.niw_math.kernel_tables`. A Gibbs-type prior
    p(z) = V_N(K) prod_k W(n_k) (docs/design.md section 1.1) enters the kernels only here."""

    per_count: np.ndarray  # (N + 2, N_COLUMNS): row n, the columns above, for a block of n = 0 .. N + 1 points
    log_new: np.ndarray  # (N + 2,) per K: log W(1) V_N(K + 1) / V_N(K), the new-block weight (-inf: impossible)
    log_v: np.ndarray  # (N + 2,) per K: log V_N(K) + K log W(1), for the log joint


def scale_shape(covariance, d):
    """The shape of one cluster's stored scale for a covariance type: the (d, d) matrix S_n^{-1} (FULL), the d
    inverses 1 / beta_n,j (DIAG), or one 1 / beta_n (SPHERICAL: a number, shape ())."""
    return {FULL: (d, d), DIAG: (d,), SPHERICAL: ()}[covariance]


def covariance_of(slots):
    """The covariance type of slots, read from the rank of their stored scale."""
    return {rank: covariance for covariance, rank in RANKS.items()}[slots.precs.ndim]


class BaseMeasure(NamedTuple):
    """The base measure as the kernels read it, its scale in the type's shape."""

    m0: np.ndarray  # (d,)
    S0: np.ndarray  # S0 (d, d) for FULL; its diagonal (d,) for DIAG; its one number beta0 as (1,) for SPHERICAL
    P0: np.ndarray  # the inverse of S0 in the same shape (elementwise for DIAG and SPHERICAL)
    logdet0: float  # log|S0| of the implied d x d scale (SPHERICAL: d log beta0)
    kappa0: float


class Data(NamedTuple):
    """What a chain's sweeps read and never change."""

    X: np.ndarray  # (N, d) float64
    log_pred_new: np.ndarray  # (N,) log prior predictive of each point (a new block's Student-t)
    base: BaseMeasure
    tables: Tables


class Slots(NamedTuple):
    """The clusters' statistics, one slot per cluster, the slot index first: a slot's scale is contiguous, so the
    form of a point against it (:func:`pcrp.kernels.scales.point_forms`) and the update when a point joins or
    leaves run along contiguous rows. A slot holds its count n, the posterior mean m_n, the inverse of its scale in
    the covariance type's shape (:func:`scale_shape`) and log|S_n|, and three constants of its predictive
    refreshed whenever it changes (:func:`pcrp.kernels.clusters.refresh_weights`); an empty slot has log weight
    -inf."""

    counts: np.ndarray  # (C,) int64
    means: np.ndarray  # (C, d)
    precs: np.ndarray  # (C,) + scale_shape: S_n^{-1} (C, d, d) FULL; 1 / beta_n,j (C, d) DIAG; 1 / beta_n (C,)
    logdets: np.ndarray  # (C,) log|S_n| of the implied d x d scale
    consts: np.ndarray  # (N_CONSTS, C): rows LOG_WEIGHT, SCALE, EXPONENT below


# The rows of Slots.consts, a slot's predictive constants: x's log predictive under slot c is
# consts[LOG_WEIGHT, c] - consts[EXPONENT, c] log(1 + consts[SCALE, c] q) for its quadratic form q. One array rather
# than three: the loop over the slots for every point then keeps one pointer less in a register per row.
LOG_WEIGHT = 0  # log g(n) + t_const(n) - log|S_n| / 2; -inf for an empty slot
SCALE = 1  # t_scale(n)
EXPONENT = 2  # t_exponent(n)
N_CONSTS = 3


def empty_slots(d, capacity, covariance=FULL):
    """Slots of ``capacity`` empty clusters for d columns (zero statistics, log weight -inf)."""
    consts = np.zeros((N_CONSTS, capacity))
    consts[LOG_WEIGHT] = -np.inf
    return Slots(np.zeros(capacity, dtype=np.int64), np.zeros((capacity, d)),
                 np.zeros((capacity,) + scale_shape(covariance, d)), np.zeros(capacity), consts)


def enlarged(slots, capacity):
    """The same slots with room for ``capacity`` clusters (the new ones zero: empty them before use)."""
    bigger = empty_slots(slots.means.shape[1], capacity, covariance_of(slots))
    used = slots.counts.shape[0]
    for old, new in zip(slots[:4], bigger[:4]):
        new[:used] = old
    bigger.consts[:, :used] = slots.consts
    return bigger


class Settings(NamedTuple):
    """How the sweeps run: their order and the moves after each, and the thresholds that choose a code path, which
    the exact-enumeration tests lower so that their few points reach every path."""

    scan: int  # SCAN_MEMORY or SCAN_RANDOM (pcrp.kernels.sweep)
    split_merge: int  # split-merge moves after each sweep
    vector_from: int  # from this many slots in use a point's weights are computed in one vector pass
    exact_members: int  # members a move seats with the exact predictives before the frozen score
    logs_from: int  # from this many columns the diagonal type's forms are sums of logs (pcrp.kernels.sweep.LOGS_FROM)


class ScanBuffers(NamedTuple):
    """The sweep's order and where a call stopped. For SCAN_RANDOM, X, the labels and the prior predictive are
    gathered in the sweep's permutation once per sweep so that the sweep reads them in order."""

    perm: np.ndarray  # (N,) int64, the current random order
    X_order: np.ndarray  # (N, d)
    labels_order: np.ndarray  # (N,) int64
    log_pred_order: np.ndarray  # (N,)
    progress: np.ndarray  # (N_PROGRESS,) int64, see pcrp.kernels.sweep.PROGRESS_*


class Record(NamedTuple):
    """What a call of the sweeps reports: after sweep s, K[s] and log_joint[s]; when keep_rows[s] = j >= 0 the
    labels go to kept_labels[j] and the move totals to kept_moves[j]; move_totals counts, over the chain,
    [splits proposed, splits accepted, merges proposed, merges accepted]."""

    K: np.ndarray  # (n_sweeps,) int64
    log_joint: np.ndarray  # (n_sweeps,)
    keep_rows: np.ndarray  # (n_sweeps,) int64, -1 = not kept
    kept_labels: np.ndarray  # (n_keep, N) int64
    kept_moves: np.ndarray  # (n_keep, 4) int64
    move_totals: np.ndarray  # (4,) int64


class SweepScratch(NamedTuple):
    """The working memory of a sweep's pass over the slots for one point (capacity C slots)."""

    x: np.ndarray  # (d,) the point
    work: np.ndarray  # (d,)
    qs: np.ndarray  # (C,) the quadratic forms
    ys: np.ndarray  # (C,) 1 + the scaled forms, then their logs
    weights: np.ndarray  # (C + 1,) the slots' seating weights, and a new cluster's after the slots in use
    free: np.ndarray  # (C,) int64, the slots emptied in this sweep (holes), filled first by new clusters

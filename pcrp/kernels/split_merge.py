"""Dahl's sequentially-allocated merge-split move (Jain & Neal 2004; Dahl 2003), at the cost of the two clusters
it touches.

The points of a cluster are read from a member index (:func:`build_member_index`, built once per sweep and kept up
to date by the moves), so a move costs the sizes of the two clusters involved, never N. The prior enters through
the tables (:class:`pcrp.kernels.state.Tables`), the clusters' statistics through :mod:`pcrp.kernels.clusters`.
"""

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from .clusters import (change_point, copy_slot, empty_slot, move_mean,
                       log_marginal, merge_into, padded, rebuild)
from .rng import fill_uniform, randint, uniform
from .scales import (diagonal_log_term, diagonal_scale_change, form_and_log, frozen_score, full_form,
                     full_scale_change, logdet_step, scratch_scales, spherical_form)
from .state import ADD_STEP, DIAG_RANK, EXPONENT, FULL_RANK, LOG_W, LOG_WEIGHT, N_CONSTS, SCALE, T_SCALE, Slots
from .vecmath import LANES, exp_in_range

_TINY = 2.0 ** -900
_RESCALE = 2.0 ** 900  # exact: a power of two
_LOG_RESCALE = 900 * math.log(2.0)
# A move seats this many members with the sides' exact predictives, the rest with a frozen Gaussian score
# (Settings.exact_members; the tests lower it so that enumeration reaches the frozen phase)
EXACT_MEMBERS = 32
# The frozen members' terms log(1 + ratio) (ratio <= 1) are summed as logs of products of this many vectors' worth
# (at most 2 ** 64: far from overflow), which agrees with the sum of the logs to rounding.
_PRODUCT_VECTORS = 64
# the move's own slots: i's side, j's side, the merged cluster of a merge proposal. numpy integers, not Python ones:
# numba compiles a function called with a Python int constant once per value (a literal type), with these once.
SIDE_I, SIDE_J, MERGED = np.int64(0), np.int64(1), np.int64(2)


class MoveScratch(NamedTuple):
    """The member index and the working memory of the moves, allocated once per call of the sweeps."""

    order: np.ndarray  # (2N,) int64: the points of slot k are order[starts[k]:starts[k] + counts[k]]
    starts: np.ndarray  # (C,) int64
    tail: np.ndarray  # (1,) int64, the first free position of ``order``
    members: np.ndarray  # (N,) int64
    side: np.ndarray  # (N,) int64
    sides: Slots  # three slots: SIDE_I, SIDE_J, MERGED
    x: np.ndarray  # (d,)
    work: np.ndarray  # (d,)


@njit(cache=True, nogil=True, error_model="numpy")
def move_scratch(N, D, capacity, precs):
    """A MoveScratch for N points, d = D, and ``capacity`` slots (N = 0 when the sweeps make no moves), its own
    slots of the covariance type of ``precs`` (the chain's Slots.precs)."""
    sides = Slots(np.zeros(3, dtype=np.int64), np.zeros((3, D)), scratch_scales(precs, 3), np.zeros(3),
                  np.zeros((N_CONSTS, 3)))
    return MoveScratch(np.empty(2 * N, dtype=np.int64), np.empty(capacity, dtype=np.int64), np.zeros(1, np.int64),
                       np.empty(N, dtype=np.int64), np.empty(N, dtype=np.int64), sides, np.empty(D), np.empty(D))


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


@njit(cache=True, nogil=True, error_model="numpy", fastmath={"contract"})
def seat_on_side(X, m, s, scratch, tables):
    """Add point m of X to slot s of the move's own slots."""
    x, sides = scratch.x, scratch.sides
    for a in range(X.shape[1]):
        x[a] = X[m, a]
    q, _ = form_and_log(x, sides.means, sides.precs, sides.consts[SCALE, s], s)
    change_point(x, sides, sides.precs, s, q, tables, scratch.work, True)


# The move's steps, one function each, in the order split_merge takes them: what a merge would give, the members,
# their seating (the exact phase in seat_exactly, the frozen one in frozen_seating), the split's target, and the
# accepted split or merge. The two seatings are kernels of their own, each compiled once per covariance type from the
# rank of the stored scale they take; the other steps have no branch by type and are inlined into split_merge
# (inline="always", their flags the move's). Measured (docs/records/compile.md): split_merge as one 227-line function
# and these steps compile in about the same CPU; the steps as kernels of their own compiled in more (each its own
# module, wrapper and cache entry, linked into the move again), and an inlined step that inlines a point's update in
# turn made the move slower (its reference counts were no longer pruned).

@njit(cache=True, nogil=True, error_model="numpy", fastmath={"contract"}, inline="always")
def merge_gain(data, K, slots, ci, cj, scratch):
    """The merged cluster of ci and cj in the move's slot MERGED, from the two clusters' statistics (O(d^3); if
    rounding defeats that, cluster ci plus every point of cluster cj); returns log target(merged) - log
    target(the two clusters)."""
    tables, sides, order, starts = data.tables, scratch.sides, scratch.order, scratch.starts
    if not merge_into(slots, ci, cj, data.base, tables, sides, MERGED):
        copy_slot(slots, ci, sides, MERGED)
        for t in range(starts[cj], starts[cj] + slots.counts[cj]):
            seat_on_side(data.X, order[t], MERGED, scratch, tables)
    return (tables.per_count[sides.counts[MERGED], LOG_W] + log_marginal(sides, MERGED, tables) - tables.log_new[K - 1]
            - tables.per_count[slots.counts[ci], LOG_W] - log_marginal(slots, ci, tables)
            - tables.per_count[slots.counts[cj], LOG_W] - log_marginal(slots, cj, tables))


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def gather_members(i, j, ci, cj, is_split, counts, scratch, exact_members, rng):
    """The points of cluster ci (and of cj for a merge) but i and j into scratch.members, the first ``n_exact`` of
    them a uniformly random ordered subset (a partial Fisher-Yates): only those places of the order matter, the later
    members being scored independently of one another and of their order. Returns (members, n_exact)."""
    order, starts, members = scratch.order, scratch.starts, scratch.members
    n_members = 0
    for t in range(starts[ci], starts[ci] + counts[ci]):
        m = order[t]
        if m != i and m != j:
            members[n_members] = m
            n_members += 1
    if not is_split:
        for t in range(starts[cj], starts[cj] + counts[cj]):
            m = order[t]
            if m != j:
                members[n_members] = m
                n_members += 1
    n_exact = min(n_members, exact_members)
    for t in range(n_exact):
        r = t + randint(rng, n_members - t)
        m = members[t]
        members[t] = members[r]
        members[r] = m
    return n_members, n_exact


@njit(cache=True, nogil=True, error_model="numpy", fastmath={"contract"})
def seat_exactly(data, labels, i, j, ci, is_split, n_exact, scratch, precs, rng):
    """The exact phase: the move's sides SIDE_I and SIDE_J start as i and j, and the first ``n_exact`` members are
    seated one by one with each side's exact predictive, the side updated after each (a split draws each side, a merge
    re-creates the current ones; scratch.side[t] receives member t's side). Returns the log probability of those
    seatings. ``precs`` is the sides' stored scales, an argument so that numba keeps only their covariance type's
    branches (pcrp.kernels.state.FULL_RANK)."""
    X, tables = data.X, data.tables
    D = X.shape[1]
    sides, members, side, x, work = scratch.sides, scratch.members, scratch.side, scratch.x, scratch.work
    means, consts, counts = sides.means, sides.consts, sides.counts  # out of their structure once: read per member
    det_step = logdet_step(precs, D)
    empty_slot(sides, SIDE_I, data.base, tables)
    empty_slot(sides, SIDE_J, data.base, tables)
    seat_on_side(X, i, SIDE_I, scratch, tables)
    seat_on_side(X, j, SIDE_J, scratch, tables)
    q_product = 1.0  # probability of the seatings produced / re-created, times _RESCALE ** q_scales
    q_scales = 0
    log_q_tail = 0.0  # the log probabilities of sides too unlikely for the product
    for t in range(n_exact):
        m = members[t]
        for a in range(D):
            x[a] = X[m, a]
        # each side's form and log term, inlined per covariance type
        if precs.ndim == DIAG_RANK:
            q_a = q_b = 0.0
            term_a = diagonal_log_term(x, means, precs, consts[SCALE, SIDE_I], SIDE_I)
            term_b = diagonal_log_term(x, means, precs, consts[SCALE, SIDE_J], SIDE_J)
        else:
            if precs.ndim == FULL_RANK:
                q_a = full_form(x, means, precs, SIDE_I)
                q_b = full_form(x, means, precs, SIDE_J)
            else:
                q_a = spherical_form(x, means, precs, SIDE_I)
                q_b = spherical_form(x, means, precs, SIDE_J)
            term_a = math.log(1.0 + q_a * consts[SCALE, SIDE_I])
            term_b = math.log(1.0 + q_b * consts[SCALE, SIDE_J])
        la = consts[LOG_WEIGHT, SIDE_I] - consts[EXPONENT, SIDE_I] * term_a
        lb = consts[LOG_WEIGHT, SIDE_J] - consts[EXPONENT, SIDE_J] * term_b
        # P(side a) = 1 / (1 + exp(lb - la)), with one exp; the probabilities of the sides taken are multiplied
        # (kept above 2^-900 by a power of two), their log taken once at the end
        ratio = math.exp(-abs(la - lb))
        p_a = (1.0 if la >= lb else ratio) / (1.0 + ratio)
        if is_split:
            s = SIDE_I if uniform(rng) < p_a else SIDE_J
        else:
            s = SIDE_I if labels[m] == ci else SIDE_J
        p_side = p_a if s == SIDE_I else (1.0 if lb > la else ratio) / (1.0 + ratio)
        if p_side < _TINY:  # a side of tiny probability: its log, which does not underflow
            log_q_tail += (la if s == SIDE_I else lb) - ((la if la > lb else lb) + math.log(1.0 + ratio))
        else:
            q_product *= p_side
            if q_product < _TINY:
                q_product *= _RESCALE
                q_scales += 1
        side[t] = s
        q = q_a if s == SIDE_I else q_b
        term = term_a if s == SIDE_I else term_b
        # the side's scale by x's factor (the full type's by Sherman-Morrison), then its mean, count and constants
        n = counts[s]
        weight = tables.per_count[n, T_SCALE]
        if precs.ndim == FULL_RANK:
            full_scale_change(x, means, precs, s, -(weight / (1.0 + weight * q)), work)
        elif precs.ndim == DIAG_RANK:
            diagonal_scale_change(x, means, precs, s, weight)
        else:
            precs[s] /= 1.0 + weight * q
        move_mean(x, sides, s, n, det_step * term, tables.per_count[n, ADD_STEP], 1, tables)
    return math.log(q_product) - q_scales * _LOG_RESCALE + log_q_tail


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def split_target(data, K, i, j, n_members, n_exact, on_side_j, scratch):
    """The two sides' exact statistics from their points (i and j first: each side's sums are kept about its first
    point), O(d^3) once, not the rank-one updates of the seating; returns the split's log target relative to the
    merged state's V(K) (W(1) V(K + 1) / V(K) = exp(log_new[K])), or NaN when rounding left a side's scale not
    positive definite (the split is rejected)."""
    X, tables, sides, members, side = data.X, data.tables, scratch.sides, scratch.members, scratch.side
    D = X.shape[1]
    points = np.empty((n_members + 2, D))
    groups = np.empty(n_members + 2, dtype=np.int64)
    for t in range(n_members + 2):
        m = i if t == 0 else (j if t == 1 else members[t - 2])
        for a in range(D):
            points[t, a] = X[m, a]
        if t < 2:
            groups[t] = SIDE_I if t == 0 else SIDE_J
        elif t - 2 < n_exact:
            groups[t] = side[t - 2]
        else:
            groups[t] = SIDE_J if on_side_j[t - 2 - n_exact] > 0.5 else SIDE_I
    if not rebuild(points, groups, np.int64(2), sides, data.base, tables):
        return np.nan
    return (tables.log_new[K]
            + tables.per_count[sides.counts[SIDE_I], LOG_W] + tables.per_count[sides.counts[SIDE_J], LOG_W]
            + log_marginal(sides, SIDE_I, tables) + log_marginal(sides, SIDE_J, tables))


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def accept_split(labels, K, slots, i, j, ci, n_members, n_exact, on_side_j, scratch):
    """Cluster ci becomes i's side and the new slot K j's side: their statistics from the move's slots, the labels
    of j's side, and ci's stretch of the member index (i's side, i first, then j's side, j first)."""
    order, starts, members, side, sides = scratch.order, scratch.starts, scratch.members, scratch.side, scratch.sides
    start = starts[ci]
    order[start] = i
    front = start + 1
    back = start + sides.counts[SIDE_I]
    order[back] = j
    labels[j] = K
    back += 1
    for t in range(n_members):
        m = members[t]
        on_j = side[t] == SIDE_J if t < n_exact else on_side_j[t - n_exact] > 0.5
        if not on_j:
            order[front] = m
            front += 1
        else:
            order[back] = m
            back += 1
            labels[m] = K
    starts[K] = start + sides.counts[SIDE_I]
    copy_slot(sides, SIDE_I, slots, ci)
    copy_slot(sides, SIDE_J, slots, K)


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def accept_merge(data, labels, K, slots, ci, cj, scratch):
    """Clusters ci and cj become ci, the merged cluster of the move's slot MERGED, its members at the end of the
    member index; slot K - 1 moves into cj (its members relabelled from the index) and empties. Returns K - 1."""
    order, starts, tail, sides = scratch.order, scratch.starts, scratch.tail, scratch.sides
    n_merged = slots.counts[ci] + slots.counts[cj]
    if tail[0] + n_merged > order.shape[0]:  # no room after the used part: regroup (one pass)
        tail[0] = build_member_index(labels, K, slots.counts, order, starts)
    position = tail[0]
    for t in range(starts[ci], starts[ci] + slots.counts[ci]):
        order[position] = order[t]
        position += 1
    for t in range(starts[cj], starts[cj] + slots.counts[cj]):
        order[position] = order[t]
        labels[order[t]] = ci
        position += 1
    starts[ci] = tail[0]
    tail[0] = position
    copy_slot(sides, MERGED, slots, ci)
    last = K - 1
    if cj != last:
        copy_slot(slots, last, slots, cj)
        starts[cj] = starts[last]
        for t in range(starts[cj], starts[cj] + slots.counts[cj]):
            labels[order[t]] = cj
    empty_slot(slots, last, data.base, data.tables)
    return last


@njit(cache=True, nogil=True, error_model="numpy")
def split_merge(data, labels, K, slots, scratch, exact_members, totals, rng):
    """One sequentially-allocated merge-split move; returns the new K.

    Two distinct points i, j are drawn uniformly. If they share a cluster, a split is proposed by seating the
    cluster's other points one by one next to i or j with probability proportional to g(size) times a score;
    otherwise the merge of their clusters is proposed, and the probability of re-creating the current split in that
    way enters the ratio.

    The score: for the first ``exact_members`` members each side's exact predictive (Student-t, one log a member
    and side, the side updated after each: :func:`seat_exactly`); then each side is frozen as it stands, its
    Student-t read as a Gaussian: log g(n_s) + c_s - e_s k_s (x - m_s)^T S_s^{-1} (x - m_s) with n_s, c_s, e_s, k_s,
    m_s, S_s those of the side at the freeze (:func:`frozen_seating`). The later members are seated independently of
    one another (no log and no update per member, a loop along the members that LLVM vectorises), so only the first
    exact_members places of the order matter: they are a uniformly random ordered subset of the members (a partial
    Fisher-Yates). Why the move stays exact: Metropolis-Hastings needs only that the proposal probability in the
    ratio is the probability with which the proposal is drawn, and that the target ratio is exact. (a) A split and
    the reverse computation in a merge run the same code on the same quantities: the merged set's members with a
    uniformly random ordered subset first (its distribution a function of the set alone), i and j first, the same
    freeze point and the same updates; nothing depends on the cluster statistics held before the move. (b) Each
    seating probability is 1 / (1 + exp(-|la - lb|)) or its complement, and a side whose probability is below 2^-900
    enters through its log, which does not underflow. (c) The target ratio uses exact marginal likelihoods: a split's
    sides are rebuilt from their points (:func:`pcrp.kernels.clusters.rebuild`, O(d^3) once), a merge's union from
    merge_into. The score only changes how often a good split is proposed, not what is accepted; the
    exact-enumeration tests (N = 6-7 points) lower exact_members to reach the frozen phase.

    Target ratios use only the partition posterior of docs/design.md section 1.3: a split of a block of n into
    n1 + n2 multiplies the prior by [V(K + 1) / V(K)] W(n1) W(n2) / W(n) = exp(log_new[K] + log_w[n1] + log_w[n2]
    - log_w[n]). A merge is rejected before the allocation when the uniform already fails against the target ratio
    alone (the allocation's log probability is <= 0). The caller guarantees a free slot (K < capacity).
    totals (4,) counts [splits proposed, accepted, merges proposed, accepted].
    """
    N = data.X.shape[0]
    if N < 2:
        return K
    i = randint(rng, N)
    j = randint(rng, N - 1)
    if j >= i:
        j += 1
    ci = labels[i]
    cj = labels[j]
    is_split = ci == cj
    log_u = 0.0
    log_merge_gain = 0.0  # log target(merged) - log target(current split), merge proposals only
    if not is_split:
        log_merge_gain = merge_gain(data, K, slots, ci, cj, scratch)
        totals[2] += 1
        log_u = math.log(uniform(rng))
        # The acceptance ratio is log_merge_gain + log q(re-creating the split) and log q <= 0: when u fails against
        # log_merge_gain alone the move is rejected whatever the allocation below would give, so skip it.
        if log_u >= log_merge_gain:
            return K
    n_members, n_exact = gather_members(i, j, ci, cj, is_split, slots.counts, scratch, exact_members, rng)
    sides = scratch.sides
    log_q = seat_exactly(data, labels, i, j, ci, is_split, n_exact, scratch, sides.precs, rng)
    n_frozen = n_members - n_exact
    on_side_j = np.zeros(padded(n_frozen))  # 1 where a frozen member is seated on j's side
    if n_frozen > 0:
        log_q += frozen_seating(data.X, labels, ci, is_split, scratch.members, n_exact, n_frozen, sides, on_side_j,
                                rng)
        n_side_j = 0
        for t in range(n_frozen):
            n_side_j += np.int64(on_side_j[t])
        sides.counts[SIDE_I] += n_frozen - n_side_j
        sides.counts[SIDE_J] += n_side_j
    if is_split:
        totals[0] += 1
        log_split_target = split_target(data, K, i, j, n_members, n_exact, on_side_j, scratch)
        if np.isnan(log_split_target):
            return K  # rounding left a side's scale matrix not positive definite: rejected
        log_merged_target = data.tables.per_count[slots.counts[ci], LOG_W] + log_marginal(slots, ci, data.tables)
        if math.log(uniform(rng)) < log_split_target - log_merged_target - log_q:
            totals[1] += 1
            accept_split(labels, K, slots, i, j, ci, n_members, n_exact, on_side_j, scratch)
            K += 1
    elif log_u < log_merge_gain + log_q:
        totals[3] += 1
        K = accept_merge(data, labels, K, slots, ci, cj, scratch)
    return K


@njit(cache=True, nogil=True, error_model="numpy", fastmath={"contract"})
def frozen_seating(X, labels, ci, is_split, members, n_exact, n_frozen, sides, on_side_j, rng):
    """Seat the members after the exact phase against the two sides frozen as they stand (see split_merge): each
    side's Student-t read as a Gaussian, log g(n_s) + c_s - e_s k_s (x - m_s)^T S_s^{-1} (x - m_s) (S_s^{-1}
    diagonal for the diagonal and spherical covariance types, whose scoring is O(d) a member). A split draws
    each member's side with a uniform, a merge re-creates the current sides. Fills on_side_j (lanes,): 1 for a
    member seated on j's side; returns the log probability of the seatings. Every member is scored independently of the others, so the loops along the
    members are vector code; sums are kept by lanes, each lane in order, which vectorises without reassociating a
    float sum."""
    D = X.shape[1]
    lanes = on_side_j.shape[0]
    cols = np.empty((D, lanes))
    live = np.zeros(lanes)  # 1 for a member, 0 for a pad
    frozen_mean = np.empty((2, D))
    score = np.empty((2, D, D))
    score_const = np.empty(2)
    for r in range(2):
        for a in range(D):
            frozen_mean[r, a] = sides.means[r, a]
        frozen_score(sides.precs, r, sides.consts[EXPONENT, r] * sides.consts[SCALE, r], score[r])
        score_const[r] = sides.consts[LOG_WEIGHT, r]
    cross = sides.precs.ndim == FULL_RANK  # the diagonal and spherical types' scores have no cross terms
    # The members' coordinates gathered first, one row per dimension (a gather inside the scoring loop keeps LLVM
    # from vectorising it), padded to whole vectors with weight 0. ``draw``: a split's uniforms; a merge's -1 seats
    # on i's side whatever its probability, 2 on j's.
    draw = np.empty(lanes)
    if is_split:
        fill_uniform(rng, draw, n_frozen)
    for t in range(n_frozen):
        m = members[n_exact + t]
        for a in range(D):
            cols[a, t] = X[m, a]
        if not is_split:
            draw[t] = -1.0 if labels[m] == ci else 2.0
        live[t] = 1.0
    for t in range(n_frozen, lanes):
        for a in range(D):
            cols[a, t] = frozen_mean[0, a]
        draw[t] = -1.0
    form_i = np.empty(lanes)
    form_j = np.empty(lanes)
    for t in range(lanes):  # the two frozen forms of each member, from the lower triangle
        fi = 0.0
        fj = 0.0
        for a in range(D):
            di = cols[a, t] - frozen_mean[0, a]
            dj = cols[a, t] - frozen_mean[1, a]
            ti = 0.0
            tj = 0.0
            for b in range(0 if cross else a, a):
                ti += score[0, a, b] * (cols[b, t] - frozen_mean[0, b])
                tj += score[1, a, b] * (cols[b, t] - frozen_mean[1, b])
            fi += di * (2.0 * ti + score[0, a, a] * di)
            fj += dj * (2.0 * tj + score[1, a, a] * dj)
        form_i[t] = fi
        form_j[t] = fj
    log_p_side = np.empty(lanes)  # log P(side) + log(1 + ratio)
    one_plus = np.empty(lanes)  # 1 + ratio (1 for a pad)
    for t in range(lanes):
        la = score_const[0] - form_i[t]
        lb = score_const[1] - form_j[t]
        top = max(la, lb)
        ratio = exp_in_range(-abs(la - lb))
        # i's side when the uniform is below P(side i) = (1 if la >= lb else ratio) / (1 + ratio), without the
        # division (a uniform within a rounding of that boundary may fall the other way)
        sj = 0.0 if draw[t] * (1.0 + ratio) < (1.0 if la >= lb else ratio) else 1.0
        on_side_j[t] = sj * live[t]
        # log P(side) = l_side - top - log(1 + ratio), never log 0; the logs of 1 + ratio are taken of products
        # below, one per lane and chunk rather than one per member
        log_p_side[t] = live[t] * ((la if sj == 0.0 else lb) - top)
        one_plus[t] = 1.0 + live[t] * ratio
    lane_log_q = np.zeros(LANES)
    lane_product = np.ones(LANES)  # of 1 + ratio, at most 2 ** _PRODUCT_VECTORS before its log is taken
    for c in range(0, lanes, LANES):
        for lane in range(LANES):
            lane_log_q[lane] += log_p_side[c + lane]
            lane_product[lane] *= one_plus[c + lane]
        if (c // LANES) % _PRODUCT_VECTORS == _PRODUCT_VECTORS - 1 or c + LANES == lanes:
            for lane in range(LANES):
                lane_log_q[lane] -= math.log(lane_product[lane])
                lane_product[lane] = 1.0
    log_q = 0.0
    for lane in range(LANES):
        log_q += lane_log_q[lane]
    return log_q

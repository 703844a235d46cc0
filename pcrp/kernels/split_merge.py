"""Dahl's sequentially-allocated merge-split move, at the cost of the two clusters it touches.

The points of a cluster are read from the member index (:func:`pcrp.kernels.slots.build_member_index`,
built once per sweep and kept up to date by the moves), so a move costs
the sizes of the two clusters involved, never N. State layout and constants: :mod:`pcrp.kernels.slots`;
the prior enters through the tables of :mod:`pcrp.kernels.gibbs`.
"""

import math

import numpy as np
from numba import njit

from . import libm
from .niw import ROW_ADD_STEP, ROW_LOG_G, ROW_LOG_G_PROD, ROW_T_CONST, ROW_T_EXPONENT, ROW_T_SCALE
from .rng import fill_uniform, randint, uniform
from .slots import (
    add_point,
    build_member_index,
    copy_slot,
    finish_slot,
    log_marginal,
    log_predictive_from_term,
    log_term,
    merge_slots,
    move_slot,
    reset_slot,
    set_consts,
)
from .vecmath import LANES, exp_in_range


_TINY = 2.0 ** -900
_RESCALE = 2.0 ** 900  # exact: a power of two
_LOG_RESCALE = 900 * math.log(2.0)
# A move seats this many members with the sides' exact predictives, the rest with a frozen Gaussian score
# (the ``exact_members`` argument of split_merge; the tests lower it so that enumeration reaches the frozen phase)
EXACT_MEMBERS = 32
# The frozen members' terms log(1 + ratio) (ratio <= 1) are summed as logs of products of this many vectors' worth
# (at most 2 ** 64: far from overflow), which agrees with the sum of the logs to rounding.
_PRODUCT_VECTORS = 64
# Up to this d the frozen members' sums for a split's statistics are added by lanes (vector code); above it the
# 2 d^2 lane accumulators cost more than adding each member to its side's sums (measured at d = 10)
_LANE_SUMS_MAX_D = 3


@njit(cache=True, nogil=True, error_model="numpy", fastmath={"contract"})  # as gibbs_sweeps: see there
def split_merge(
    dims, X, labels, K, counts, means, precs, logdets, consts, order, starts, tail,
    m0, S0, P0, logdet0, kappa0, log_new, tables, rng,
    members, side, sc_counts, sc_means, sc_precs, sc_logdets, x, work, sm_stats, exact_members,
):
    """One sequentially-allocated merge-split move (Dahl 2003); returns the new K.

    dims: as for :func:`pcrp.kernels.gibbs.gibbs_sweeps` (d zeros, or the empty tuple for the general kernel).
    Two distinct points i, j are drawn uniformly. If they share a cluster, a
    split is proposed by seating the cluster's other points one by one (random
    order) next to i or j with probability proportional to g(size) times a score; otherwise the merge of their
    clusters is proposed and the probability of re-creating the current split in that way enters the ratio.

    The score: for the first ``exact_members`` members (EXACT_MEMBERS) each side's exact predictive (Student-t, two logs a
    member, the side updated after each); then each side is frozen as it stands, its Student-t read as a Gaussian:
    log g(n_s) + c_s - e_s k_s (x - m_s)^T S_s^{-1} (x - m_s) with n_s, c_s, e_s, k_s, m_s, S_s those of the side
    at the freeze. The later members are then seated independently of one another (no log, no update per
    member, a loop LLVM vectorises), so only the first exact_members places of the order matter: they are a
    uniformly random ordered subset of the members (a partial Fisher-Yates). Why the move stays exact:
    Metropolis-Hastings needs only that the proposal probability in the ratio is the probability with which the
    proposal is drawn, and that the target ratio is exact. (a) A split and the reverse computation in a merge run
    the same code on the same quantities: the merged set's members with a uniformly random ordered subset first
    (its distribution a function of the set alone), i and j first, the same freeze point and the same updates;
    nothing depends on the cluster statistics held before the move. (b) Each seating probability is 1 / (1 + exp(-|la - lb|)) or its complement, and a side whose
    probability is below 2^-900 enters through its log, which does not underflow: no log 0. (c) The target
    ratio uses exact marginal likelihoods: a split's sides are rebuilt from their points (sums, then scatters about
    their means, then :func:`pcrp.kernels.slots.finish_slot`, O(d^3) once), a merge's union from merge_slots.
    The score only changes how often a good split is proposed, not what is accepted; the exact-enumeration
    tests tests/test_exact_posterior.py, tests/test_custom_prior.py: N = 6-7, so the frozen phase is checked with
    exact_members lowered to 1) pass unchanged.
    Target ratios use only the partition posterior of docs/design.md section 1.3: a split of a
    block of n into n1 + n2 multiplies the prior by [V(K + 1) / V(K)] W(n1) W(n2) / W(n),
    i.e. by exp(log_new[K] + G(n1) + G(n2) - G(n)) with G = ROW_LOG_G_PROD.
    A merge is rejected before the allocation when the uniform already fails
    against the target ratio alone (the allocation's log probability is <= 0).
    Scratch slots (sc_*: counts (3,), means (3, d), precs (3, d, d), logdets (3,)): 0 = side of i,
    1 = side of j, 2 = merged cluster. The caller guarantees a free slot (K < capacity).
    order (2N,), starts (C,), tail (1,): the member index of :func:`pcrp.kernels.slots.build_member_index`
    with tail[0] its first free position, kept up to date here. members, side: (N,) int64 scratch.
    """
    N = X.shape[0]
    D = X.shape[1] if len(dims) == 0 else len(dims)  # a compile-time constant in the kernels specialised to d
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
        # merged statistics, from the two clusters' own (O(d^3)); if rounding defeats that, cluster ci plus
        # every point of cluster cj
        if not merge_slots(ci, cj, D, counts, means, precs, m0, S0, kappa0, 2, sc_counts, sc_means, sc_precs,
                           sc_logdets):
            copy_slot(ci, 2, D, counts, means, precs, logdets, sc_counts, sc_means, sc_precs, sc_logdets)
            for t in range(starts[cj], starts[cj] + counts[cj]):
                m = order[t]
                for a in range(D):
                    x[a] = X[m, a]
                add_point(x, 2, D, sc_counts, sc_means, sc_precs, sc_logdets, tables, work,
                          log_term(x, 2, D, sc_counts, sc_means, sc_precs, tables))
        log_merge_gain = (
            tables[sc_counts[2], ROW_LOG_G_PROD] + log_marginal(2, sc_counts, sc_logdets, tables)
            - log_new[K - 1]
            - tables[counts[ci], ROW_LOG_G_PROD] - log_marginal(ci, counts, logdets, tables)
            - tables[counts[cj], ROW_LOG_G_PROD] - log_marginal(cj, counts, logdets, tables)
        )
        sm_stats[2] += 1
        log_u = math.log(uniform(rng))
        # The acceptance ratio is log_merge_gain + log q(re-creating the split) and log q <= 0:
        # when u fails against log_merge_gain alone the move is rejected whatever the
        # allocation below would give, so skip it.
        if log_u >= log_merge_gain:
            return K

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
    # Only the first exact_members places of the order matter: the later members are scored independently of
    # one another and of their order (below). A partial Fisher-Yates makes those places a uniformly random ordered
    # subset of the members, whatever order the member index held them in.
    n_exact = min(n_members, exact_members)
    for t in range(n_exact):
        r = t + randint(rng, n_members - t)
        m = members[t]
        members[t] = members[r]
        members[r] = m

    for s in range(2):  # slot 2 holds the merged cluster of a merge proposal
        reset_slot(s, D, m0, P0, logdet0, sc_counts, sc_means, sc_precs, sc_logdets)
    for a in range(D):
        x[a] = X[i, a]
    add_point(x, 0, D, sc_counts, sc_means, sc_precs, sc_logdets, tables, work,
              log_term(x, 0, D, sc_counts, sc_means, sc_precs, tables))
    for a in range(D):
        x[a] = X[j, a]
    add_point(x, 1, D, sc_counts, sc_means, sc_precs, sc_logdets, tables, work,
              log_term(x, 1, D, sc_counts, sc_means, sc_precs, tables))
    q_product = 1.0  # probability of the exact-phase seatings produced / re-created, times _RESCALE ** q_scales
    q_scales = 0
    log_q_tail = 0.0  # the log probabilities of sides too unlikely for the product
    for t in range(n_exact):
        m = members[t]
        for a in range(D):
            x[a] = X[m, a]
        term_a = log_term(x, 0, D, sc_counts, sc_means, sc_precs, tables)
        term_b = log_term(x, 1, D, sc_counts, sc_means, sc_precs, tables)
        la = tables[sc_counts[0], ROW_LOG_G] + log_predictive_from_term(0, sc_counts, sc_logdets, tables, term_a)
        lb = tables[sc_counts[1], ROW_LOG_G] + log_predictive_from_term(1, sc_counts, sc_logdets, tables, term_b)
        # P(side a) = 1 / (1 + exp(lb - la)), with one exp; the probabilities of the sides taken are
        # multiplied (kept above 2^-900 by a power of two), their log taken once at the end
        ratio = libm.exp(-abs(la - lb))
        p_a = (1.0 if la >= lb else ratio) / (1.0 + ratio)
        if is_split:
            s = 0 if uniform(rng) < p_a else 1
        else:
            s = 0 if labels[m] == ci else 1
        p_side = p_a if s == 0 else (1.0 if lb > la else ratio) / (1.0 + ratio)
        if p_side < _TINY:  # a side of tiny probability: its log, which does not underflow
            log_q_tail += (la if s == 0 else lb) - ((la if la > lb else lb) + math.log(1.0 + ratio))
        else:
            q_product *= p_side
            if q_product < _TINY:
                q_product *= _RESCALE
                q_scales += 1
        side[t] = s
        add_point(x, s, D, sc_counts, sc_means, sc_precs, sc_logdets, tables, work, term_a if s == 0 else term_b)
    log_q = math.log(q_product) - q_scales * _LOG_RESCALE + log_q_tail

    n_frozen = n_members - n_exact
    padded = 0
    cols = np.empty((D, 0))
    live = np.empty(0)
    on_side_1 = np.empty(0)
    if n_frozen > 0:
        # The frozen score (see the docstring): each side as it stood after the exact phase, its Student-t read
        # as a Gaussian: log g(n_s) + c_s - e_s k_s (x - m_s)^T S_s^{-1} (x - m_s). Every later member is scored
        # against these alone, so the loop below has no dependence from one member to the next (vector code).
        score = np.empty((2, D, D))
        frozen_mean = np.empty((2, D))
        score_const = np.empty(2)
        for r in range(2):
            n = sc_counts[r]
            gain = tables[n, ROW_T_EXPONENT] * tables[n, ROW_T_SCALE]
            for a in range(D):
                frozen_mean[r, a] = sc_means[r, a]
                for b in range(D):
                    score[r, a, b] = gain * sc_precs[r, a, b]
            score_const[r] = tables[n, ROW_LOG_G] + tables[n, ROW_T_CONST] - 0.5 * sc_logdets[r]
        # The members' coordinates gathered first, one row per dimension (a gather inside the scoring loop keeps
        # LLVM from vectorising it on this machine's AMD cores), padded to whole vectors with weight 0 (live).
        # A split draws each member's side with a uniform; a merge re-creates the current sides: -1 seats on side
        # 0 whatever its probability, 2 on side 1.
        padded = (n_frozen + LANES - 1) // LANES * LANES
        cols = np.empty((D, padded))
        draw = np.empty(padded)
        live = np.zeros(padded)
        on_side_1 = np.empty(padded)  # 1 where the member is seated on side 1
        if is_split:
            fill_uniform(rng, draw, n_frozen)
        for t in range(n_frozen):
            m = members[n_exact + t]
            for a in range(D):
                cols[a, t] = X[m, a]
            if not is_split:
                draw[t] = -1.0 if labels[m] == ci else 2.0
            live[t] = 1.0
        for t in range(n_frozen, padded):
            for a in range(D):
                cols[a, t] = frozen_mean[0, a]
            draw[t] = -1.0
        log_p_side = np.empty(padded)  # log P(side) + log(1 + ratio)
        one_plus = np.empty(padded)  # 1 + ratio (1 for a pad)
        for t in range(padded):
            form_a = 0.0
            form_b = 0.0
            for a in range(D):
                da = cols[a, t] - frozen_mean[0, a]
                db = cols[a, t] - frozen_mean[1, a]
                ta = 0.0
                tb = 0.0
                for b in range(a):
                    ta += score[0, a, b] * (cols[b, t] - frozen_mean[0, b])
                    tb += score[1, a, b] * (cols[b, t] - frozen_mean[1, b])
                form_a += da * (2.0 * ta + score[0, a, a] * da)
                form_b += db * (2.0 * tb + score[1, a, a] * db)
            la = score_const[0] - form_a
            lb = score_const[1] - form_b
            top = max(la, lb)
            ratio = exp_in_range(-abs(la - lb))
            # side a when the uniform is below P(side a) = (1 if la >= lb else ratio) / (1 + ratio), without the
            # division (a uniform within a rounding of that boundary may fall the other way)
            s1 = 0.0 if draw[t] * (1.0 + ratio) < (1.0 if la >= lb else ratio) else 1.0
            on_side_1[t] = s1 * live[t]
            # log P(side) = l_side - log(exp(la) + exp(lb)) = l_side - top - log(1 + ratio), never log 0; the
            # logs of 1 + ratio are taken of products below, one per lane and chunk rather than one per member
            log_p_side[t] = live[t] * ((la if s1 == 0.0 else lb) - top)
            one_plus[t] = 1.0 + live[t] * ratio
        # Sums by lanes, each lane in order: vector code without reassociating a float sum (fastmath would)
        lane_log_q = np.zeros(LANES)
        lane_side_1 = np.zeros(LANES)
        lane_product = np.ones(LANES)  # of 1 + ratio, at most 2 ** _PRODUCT_VECTORS before its log is taken
        for c in range(0, padded, LANES):
            for lane in range(LANES):
                lane_log_q[lane] += log_p_side[c + lane]
                lane_side_1[lane] += on_side_1[c + lane]
                lane_product[lane] *= one_plus[c + lane]
            if (c // LANES) % _PRODUCT_VECTORS == _PRODUCT_VECTORS - 1 or c + LANES == padded:
                for lane in range(LANES):
                    lane_log_q[lane] -= math.log(lane_product[lane])
                    lane_product[lane] = 1.0
        n_side_1 = 0
        for lane in range(LANES):
            log_q += lane_log_q[lane]
            n_side_1 += np.int64(lane_side_1[lane])
        sc_counts[0] += n_frozen - n_side_1
        sc_counts[1] += n_side_1

    if is_split:
        # The two sides' exact statistics from their points, about a shift (each side's first point, i or j: no
        # digits lost to a far-away origin): the sums of x - shift and of its outer products, then each side's
        # scatter about its mean, then its slot (O(d^3)). The frozen members' sums by lanes, as above.
        shift = np.empty((2, D))
        for a in range(D):
            shift[0, a] = X[i, a]
            shift[1, a] = X[j, a]
        first = np.zeros((2, D))
        second = np.zeros((2, D, D))
        for t in range(n_exact):
            s = side[t]
            m = members[t]
            for a in range(D):
                ea = X[m, a] - shift[s, a]
                first[s, a] += ea
                for b in range(a + 1):
                    second[s, a, b] += ea * (X[m, b] - shift[s, b])
        if n_frozen > 0 and D > _LANE_SUMS_MAX_D:  # each member into its side's sums (lanes would cost more)
            for t in range(n_frozen):
                s = np.int64(on_side_1[t])
                for a in range(D):
                    ea = cols[a, t] - shift[s, a]
                    first[s, a] += ea
                    for b in range(a + 1):
                        second[s, a, b] += ea * (cols[b, t] - shift[s, b])
        elif n_frozen > 0:
            lane_first = np.zeros((2, D, LANES))
            lane_second = np.zeros((2, D, D, LANES))
            for c in range(0, padded, LANES):
                for lane in range(LANES):
                    t = c + lane
                    w1 = on_side_1[t]
                    w0 = live[t] - w1
                    for a in range(D):
                        e0 = cols[a, t] - shift[0, a]
                        e1 = cols[a, t] - shift[1, a]
                        lane_first[0, a, lane] += w0 * e0
                        lane_first[1, a, lane] += w1 * e1
                        for b in range(a + 1):
                            lane_second[0, a, b, lane] += w0 * e0 * (cols[b, t] - shift[0, b])
                            lane_second[1, a, b, lane] += w1 * e1 * (cols[b, t] - shift[1, b])
            for r in range(2):
                for a in range(D):
                    for lane in range(LANES):
                        first[r, a] += lane_first[r, a, lane]
                    for b in range(a + 1):
                        for lane in range(LANES):
                            second[r, a, b] += lane_second[r, a, b, lane]
        total = np.empty(D)
        scatter = np.empty((D, D))
        for r in range(2):
            n = sc_counts[r]
            for a in range(D):
                total[a] = n * shift[r, a] + first[r, a]
            for a in range(D):
                for b in range(a + 1):
                    scatter[a, b] = second[r, a, b] - first[r, a] * first[r, b] / n
                    scatter[b, a] = scatter[a, b]
            finish_slot(r, n, total, scatter, m0, S0, kappa0, sc_counts, sc_means, sc_precs, sc_logdets)
        log_split_target = (  # relative to the merged state's V(K): W(1) V(K + 1) / V(K) = exp(log_new[K])
            log_new[K]
            + tables[sc_counts[0], ROW_LOG_G_PROD]
            + tables[sc_counts[1], ROW_LOG_G_PROD]
            + log_marginal(0, sc_counts, sc_logdets, tables)
            + log_marginal(1, sc_counts, sc_logdets, tables)
        )
        log_merged_target = tables[counts[ci], ROW_LOG_G_PROD] + log_marginal(ci, counts, logdets, tables)
        log_ratio = log_split_target - log_merged_target - log_q
        sm_stats[0] += 1
        if math.log(uniform(rng)) < log_ratio:
            sm_stats[1] += 1
            # ci's stretch of the member index: side 0 (i first), then side 1 (j first), the new slot K
            start = starts[ci]
            order[start] = i
            front = start + 1
            back = start + sc_counts[0]
            order[back] = j
            labels[j] = K
            back += 1
            for t in range(n_members):  # (the frozen members' sides are in on_side_1)
                m = members[t]
                if (side[t] if t < n_exact else on_side_1[t - n_exact]) == 0:
                    order[front] = m
                    front += 1
                else:
                    order[back] = m
                    back += 1
                    labels[m] = K
            starts[K] = start + sc_counts[0]
            copy_slot(0, ci, D, sc_counts, sc_means, sc_precs, sc_logdets, counts, means, precs, logdets)
            copy_slot(1, K, D, sc_counts, sc_means, sc_precs, sc_logdets, counts, means, precs, logdets)
            set_consts(ci, counts, logdets, tables, consts)
            set_consts(K, counts, logdets, tables, consts)
            K += 1
    elif log_u < log_merge_gain + log_q:
        sm_stats[3] += 1
        n_merged = counts[ci] + counts[cj]
        if tail[0] + n_merged > order.shape[0]:  # no room after the used part: regroup (one pass)
            tail[0] = build_member_index(labels, K, counts, order, starts)
        # the merged members at the end of the index
        position = tail[0]
        for c in (ci, cj):
            for t in range(starts[c], starts[c] + counts[c]):
                m = order[t]
                order[position] = m
                labels[m] = ci
                position += 1
        starts[ci] = tail[0]
        tail[0] = position
        copy_slot(2, ci, D, sc_counts, sc_means, sc_precs, sc_logdets, counts, means, precs, logdets)
        set_consts(ci, counts, logdets, tables, consts)
        counts[cj] = 0
        last = K - 1  # slot K - 1 moves into cj (its members relabelled from the index)
        if cj != last:
            move_slot(last, cj, D, counts, means, precs, logdets, consts)
            starts[cj] = starts[last]
            for t in range(starts[cj], starts[cj] + counts[cj]):
                labels[order[t]] = cj
        K = last
    return K

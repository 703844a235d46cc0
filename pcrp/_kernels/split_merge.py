"""Dahl's sequentially-allocated merge-split move, at the cost of the two clusters it touches.

The points of a cluster are read from its member list (:mod:`pcrp._kernels.slots`), so a move costs
the sizes of the two clusters involved, never N. State layout and constants: :mod:`pcrp._kernels.slots`;
the prior enters through the tables of :mod:`pcrp._kernels.gibbs`.
"""

import math

from numba import njit

from .niw import ROW_ADD_STEP, ROW_LOG_G, ROW_LOG_G_PROD, ROW_T_SCALE
from .rng import randint, shuffle, uniform
from .slots import (
    add_point,
    copy_slot,
    delete_slot,
    link,
    log_marginal,
    log_predictive_from_term,
    log_term,
    relabel_list,
    reset_slot,
    set_consts,
    unlink,
)


@njit(cache=True, nogil=True, error_model="numpy")
def split_merge(
    D, X, labels, K, counts, means, precs, logdets, consts, heads, nxt, prv,
    m0, P0, logdet0, log_new, tables, rng,
    members, side, sc_counts, sc_means, sc_precs, sc_logdets, x, work, sm_stats,
):
    """One sequentially-allocated merge-split move (Dahl 2003); returns the new K.

    Two distinct points i, j are drawn uniformly. If they share a cluster, a
    split is proposed by seating the cluster's other points one by one (random
    order) next to i or j with probability proportional to g(size) times the
    predictive; otherwise the merge of their clusters is proposed and the
    probability of re-creating the current split in that way enters the ratio.
    Target ratios use only the partition posterior of DESIGN.md section 2: a split of a
    block of n into n1 + n2 multiplies the prior by [V(K + 1) / V(K)] W(n1) W(n2) / W(n),
    i.e. by exp(log_new[K] + G(n1) + G(n2) - G(n)) with G = ROW_LOG_G_PROD.
    A merge is rejected before the allocation when the uniform already fails
    against the target ratio alone (the allocation's log probability is <= 0).
    Scratch slots (sc_*: counts (3,), means (3, d), precs (3, d, d), logdets (3,)): 0 = side of i,
    1 = side of j, 2 = merged cluster. The caller guarantees a free slot (K < capacity).
    members, side: (N,) int64 scratch.
    """
    N = X.shape[0]
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
        # merged statistics: cluster ci plus every point of cluster cj
        copy_slot(ci, 2, D, counts, means, precs, logdets, sc_counts, sc_means, sc_precs, sc_logdets)
        m = heads[cj]
        while m >= 0:
            for a in range(D):
                x[a] = X[m, a]
            add_point(x, 2, D, sc_counts, sc_means, sc_precs, sc_logdets, tables, work,
                      log_term(x, 2, D, sc_counts, sc_means, sc_precs, tables))
            m = nxt[m]
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
    m = heads[ci]
    while m >= 0:
        if m != i and m != j:
            members[n_members] = m
            n_members += 1
        m = nxt[m]
    if not is_split:
        m = heads[cj]
        while m >= 0:
            if m != j:
                members[n_members] = m
                n_members += 1
            m = nxt[m]
    shuffle(rng, members[:n_members])

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
    log_q = 0.0  # log probability of the split produced / re-created below
    for t in range(n_members):
        m = members[t]
        for a in range(D):
            x[a] = X[m, a]
        term_a = log_term(x, 0, D, sc_counts, sc_means, sc_precs, tables)
        term_b = log_term(x, 1, D, sc_counts, sc_means, sc_precs, tables)
        la = tables[sc_counts[0], ROW_LOG_G] + log_predictive_from_term(0, sc_counts, sc_logdets, tables, term_a)
        lb = tables[sc_counts[1], ROW_LOG_G] + log_predictive_from_term(1, sc_counts, sc_logdets, tables, term_b)
        # P(side a) = 1 / (1 + exp(lb - la)), with one exp and one log
        ratio = math.exp(-abs(la - lb))
        log_norm = (la if la > lb else lb) + math.log(1.0 + ratio)
        if is_split:
            p_a = (1.0 if la >= lb else ratio) / (1.0 + ratio)
            s = 0 if uniform(rng) < p_a else 1
        else:
            s = 0 if labels[m] == ci else 1
        log_q += (la if s == 0 else lb) - log_norm
        side[t] = s
        # slots.add_point written out: a call per member that writes into the scratch arrays costs more
        n = sc_counts[s]
        weight = tables[n, ROW_T_SCALE]
        q = 0.0
        for a in range(D):
            tt = 0.0
            for b in range(D):
                tt += sc_precs[s, a, b] * (x[b] - sc_means[s, b])
            work[a] = tt
            q += tt * (x[a] - sc_means[s, a])
        coef = weight / (1.0 + weight * q)
        for a in range(D):
            ca = coef * work[a]
            for b in range(D):
                sc_precs[s, a, b] -= ca * work[b]
        sc_logdets[s] += term_a if s == 0 else term_b
        step = tables[n, ROW_ADD_STEP]
        for a in range(D):
            sc_means[s, a] += (x[a] - sc_means[s, a]) * step
        sc_counts[s] = n + 1

    if is_split:
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
            copy_slot(0, ci, D, sc_counts, sc_means, sc_precs, sc_logdets, counts, means, precs, logdets)
            copy_slot(1, K, D, sc_counts, sc_means, sc_precs, sc_logdets, counts, means, precs, logdets)
            heads[K] = -1
            unlink(j, ci, heads, nxt, prv)
            link(j, K, heads, nxt, prv)
            labels[j] = K
            for t in range(n_members):
                if side[t] == 1:
                    m = members[t]
                    unlink(m, ci, heads, nxt, prv)
                    link(m, K, heads, nxt, prv)
                    labels[m] = K
            set_consts(ci, counts, logdets, tables, consts)
            set_consts(K, counts, logdets, tables, consts)
            K += 1
    elif log_u < log_merge_gain + log_q:
        sm_stats[3] += 1
        copy_slot(2, ci, D, sc_counts, sc_means, sc_precs, sc_logdets, counts, means, precs, logdets)
        set_consts(ci, counts, logdets, tables, consts)
        relabel_list(cj, ci, labels, heads, nxt)
        # splice cj's list in front of ci's
        last = heads[cj]
        while nxt[last] >= 0:
            last = nxt[last]
        first_ci = heads[ci]
        nxt[last] = first_ci
        if first_ci >= 0:
            prv[first_ci] = last
        heads[ci] = heads[cj]
        heads[cj] = -1
        counts[cj] = 0
        K = delete_slot(cj, K, D, labels, counts, means, precs, logdets, consts, heads, nxt)
    return K

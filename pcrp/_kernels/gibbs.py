"""The collapsed Gibbs sweep (Algorithm 1 of Lu, Li & Dunson) and split-merge moves.

Everything here is prior-agnostic: the seating prior enters only through the
rows ``ROW_LOG_G`` / ``ROW_LOG_G_PROD`` of ``tables`` and through ``log_alpha``.
Clusters occupy slots ``0 .. K-1`` (compact); a cluster that empties is removed
by moving the last slot into its place. When every slot is in use the sweep
kernel returns early with its position saved, the caller enlarges the slot
arrays and calls again: growing inside the hot loop would make numba reassign
(and reference-count) the arrays on every point, which costs about 30%.
"""

import math

import numpy as np
from numba import njit

from .niw import (
    ROW_LOG_G,
    ROW_LOG_G_PROD,
    add_point,
    copy_slot,
    log_marginal,
    log_predictive,
    rebuild_slot,
    remove_point,
    reset_slot,
)
from .rng import randint, shuffle, uniform


@njit(cache=True, nogil=True)
def _delete_slot(k, K, labels, counts, means, precs, logdets):
    """Remove empty slot ``k`` by moving slot K-1 into it; returns the new K."""
    last = K - 1
    if k != last:
        copy_slot(last, k, counts, means, precs, logdets, counts, means, precs, logdets)
        for i in range(labels.shape[0]):
            if labels[i] == last:
                labels[i] = k
    return last


@njit(cache=True, nogil=True)
def log_joint(K, counts, logdets, log_alpha, tables):
    """Unnormalised log p(z, X) = K log alpha + sum_k [log G(N_k) + log m(X_k)]."""
    total = K * log_alpha
    for k in range(K):
        total += tables[counts[k], ROW_LOG_G_PROD] + log_marginal(k, counts, logdets, tables)
    return total


@njit(cache=True, nogil=True)
def rebuild_all(X, labels, K, m0, S0, kappa0, counts, means, precs, logdets):
    """Recompute every slot's statistics from the labels (removes rounding drift)."""
    for k in range(K):
        rebuild_slot(X, labels, k, k, m0, S0, kappa0, counts, means, precs, logdets)


@njit(cache=True, nogil=True)
def _split_merge(
    X, labels, K, counts, means, precs, logdets,
    m0, P0, logdet0, kappa0, log_alpha, tables, rng,
    members, side, sc_counts, sc_means, sc_precs, sc_logdets, work, sm_stats,
):
    """One sequentially-allocated merge-split move (Dahl 2003).

    Two distinct points i, j are drawn uniformly. If they share a cluster, a
    split is proposed by seating the cluster's other points one by one (random
    order) next to i or j with probability proportional to g(size) times the
    predictive; otherwise the merge of their clusters is proposed and the
    probability of re-creating the current split in that way enters the ratio.
    Target ratios use only the partition posterior of DESIGN.md section 2.
    Scratch slots: 0 = side of i, 1 = side of j, 2 = merged cluster. The caller
    guarantees a free slot (K < capacity). Returns the new K.
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

    n_members = 0
    for m in range(N):
        if m != i and m != j and (labels[m] == ci or labels[m] == cj):
            members[n_members] = m
            n_members += 1
    shuffle(rng, members[:n_members])

    for s in range(3):
        reset_slot(s, m0, P0, logdet0, sc_counts, sc_means, sc_precs, sc_logdets)
    add_point(X[i], 0, kappa0, sc_counts, sc_means, sc_precs, sc_logdets, work)
    add_point(X[j], 1, kappa0, sc_counts, sc_means, sc_precs, sc_logdets, work)
    log_q = 0.0  # log probability of the split produced / re-created below
    for t in range(n_members):
        m = members[t]
        x = X[m]
        la = tables[sc_counts[0], ROW_LOG_G] + log_predictive(
            x, 0, sc_counts, sc_means, sc_precs, sc_logdets, tables, work)
        lb = tables[sc_counts[1], ROW_LOG_G] + log_predictive(
            x, 1, sc_counts, sc_means, sc_precs, sc_logdets, tables, work)
        # log P(side a) and log P(side b), computed stably
        top = la if la > lb else lb
        log_norm = top + math.log(math.exp(la - top) + math.exp(lb - top))
        if is_split:
            s = 0 if uniform(rng) < math.exp(la - log_norm) else 1
        else:
            s = 0 if labels[m] == ci else 1
        log_q += (la if s == 0 else lb) - log_norm
        side[t] = s
        add_point(x, s, kappa0, sc_counts, sc_means, sc_precs, sc_logdets, work)

    log_split_target = (
        2.0 * log_alpha
        + tables[sc_counts[0], ROW_LOG_G_PROD]
        + tables[sc_counts[1], ROW_LOG_G_PROD]
        + log_marginal(0, sc_counts, sc_logdets, tables)
        + log_marginal(1, sc_counts, sc_logdets, tables)
    )
    if is_split:
        log_merged_target = (
            log_alpha + tables[counts[ci], ROW_LOG_G_PROD] + log_marginal(ci, counts, logdets, tables)
        )
        log_ratio = log_split_target - log_merged_target - log_q
        sm_stats[0] += 1
        if math.log(uniform(rng)) < log_ratio:
            sm_stats[1] += 1
            copy_slot(0, ci, sc_counts, sc_means, sc_precs, sc_logdets, counts, means, precs, logdets)
            copy_slot(1, K, sc_counts, sc_means, sc_precs, sc_logdets, counts, means, precs, logdets)
            labels[j] = K
            for t in range(n_members):
                if side[t] == 1:
                    labels[members[t]] = K
            K += 1
    else:
        # merged statistics: cluster ci plus every point of cluster cj
        copy_slot(ci, 2, counts, means, precs, logdets, sc_counts, sc_means, sc_precs, sc_logdets)
        for m in range(N):
            if labels[m] == cj:
                add_point(X[m], 2, kappa0, sc_counts, sc_means, sc_precs, sc_logdets, work)
        log_merged_target = (
            log_alpha + tables[sc_counts[2], ROW_LOG_G_PROD]
            + log_marginal(2, sc_counts, sc_logdets, tables)
        )
        log_ratio = log_merged_target - log_split_target + log_q
        sm_stats[2] += 1
        if math.log(uniform(rng)) < log_ratio:
            sm_stats[3] += 1
            copy_slot(2, ci, sc_counts, sc_means, sc_precs, sc_logdets, counts, means, precs, logdets)
            for m in range(N):
                if labels[m] == cj:
                    labels[m] = ci
            counts[cj] = 0
            K = _delete_slot(cj, K, labels, counts, means, precs, logdets)
    return K


# Positions in the ``progress`` array that lets gibbs_sweeps stop and resume.
PROGRESS_SWEEPS = 0  # sweeps completed in this call
PROGRESS_POINT = 1  # next position in ``perm`` within the current sweep (N = all done)
PROGRESS_MOVES = 2  # split-merge moves done after the current sweep
PROGRESS_FRESH = 3  # 1 when the current sweep still needs its permutation drawn


@njit(cache=True, nogil=True)
def gibbs_sweeps(
    X, labels, K, counts, means, precs, logdets,
    m0, S0, P0, logdet0, kappa0, log_alpha, tables, log_pred_new,
    rng, perm, progress, n_sweeps, n_split_merge, K_out, log_joint_out, sm_stats,
):
    """Run sweeps of Algorithm 1, each followed by ``n_split_merge`` split-merge moves.

    Shapes: X (N, d); labels (N,) int64 in 0..K-1; slot arrays (counts (C,),
    means (C, d), precs (C, d, d), logdets (C,)) with capacity C >= K; tables
    (N + 2, N_TABLE_ROWS); log_pred_new (N,) = log prior predictive of each
    point; rng uint64[4]; perm (N,) int64, the current sweep order; progress
    int64[4] (see PROGRESS_*; zeros and FRESH = 1 for a new call). After sweep s,
    K_out[s] receives K and log_joint_out[s] the unnormalised log p(z, X);
    sm_stats (4,) accumulates [splits proposed, accepted, merges proposed,
    accepted].

    Returns K. The call is finished when progress[PROGRESS_SWEEPS] == n_sweeps;
    otherwise every slot was in use: enlarge the slot arrays and call again
    with the same perm and progress.
    """
    N, d = X.shape
    capacity = counts.shape[0]
    logw = np.empty(N + 1)
    work = np.empty(d)
    members = np.empty(N, dtype=np.int64)
    side = np.empty(N, dtype=np.int64)
    sc_counts = np.zeros(3, dtype=np.int64)
    sc_means = np.zeros((3, d))
    sc_precs = np.zeros((3, d, d))
    sc_logdets = np.zeros(3)
    while progress[PROGRESS_SWEEPS] < n_sweeps:
        if progress[PROGRESS_FRESH] == 1:
            for t in range(N):
                perm[t] = t
            shuffle(rng, perm)
            progress[PROGRESS_FRESH] = 0
            progress[PROGRESS_POINT] = 0
            progress[PROGRESS_MOVES] = 0
        for t in range(progress[PROGRESS_POINT], N):
            if K == capacity:
                progress[PROGRESS_POINT] = t
                return K
            i = perm[t]
            x = X[i]
            k = labels[i]
            ok = remove_point(x, k, kappa0, counts, means, precs, logdets, work)
            if counts[k] == 0:
                K = _delete_slot(k, K, labels, counts, means, precs, logdets)
            elif not ok:
                labels[i] = -1
                rebuild_slot(X, labels, k, k, m0, S0, kappa0, counts, means, precs, logdets)

            # Algorithm 1: log prior weight + log predictive, for each cluster and a new one
            top = log_alpha + log_pred_new[i]
            logw[K] = top
            for c in range(K):
                lw = tables[counts[c], ROW_LOG_G] + log_predictive(
                    x, c, counts, means, precs, logdets, tables, work
                )
                logw[c] = lw
                if lw > top:
                    top = lw
            total = 0.0
            for c in range(K + 1):
                logw[c] = math.exp(logw[c] - top)
                total += logw[c]
            u = uniform(rng) * total
            chosen = K
            acc = 0.0
            for c in range(K):
                acc += logw[c]
                if u < acc:
                    chosen = c
                    break
            if chosen == K:
                reset_slot(K, m0, P0, logdet0, counts, means, precs, logdets)
                K += 1
            add_point(x, chosen, kappa0, counts, means, precs, logdets, work)
            labels[i] = chosen
        progress[PROGRESS_POINT] = N

        while progress[PROGRESS_MOVES] < n_split_merge:
            if K == capacity:
                return K
            K = _split_merge(
                X, labels, K, counts, means, precs, logdets,
                m0, P0, logdet0, kappa0, log_alpha, tables, rng,
                members, side, sc_counts, sc_means, sc_precs, sc_logdets, work, sm_stats,
            )
            progress[PROGRESS_MOVES] += 1
        sweep = progress[PROGRESS_SWEEPS]
        K_out[sweep] = K
        log_joint_out[sweep] = log_joint(K, counts, logdets, log_alpha, tables)
        progress[PROGRESS_SWEEPS] = sweep + 1
        progress[PROGRESS_FRESH] = 1
    return K


@njit(cache=True, nogil=True)
def log_predictive_all(X, counts, means, precs, logdets, tables, K):
    """(N, K) matrix of log p(x_i | cluster k) for the first K slots."""
    N, d = X.shape
    out = np.empty((N, K))
    work = np.empty(d)
    for i in range(N):
        for k in range(K):
            out[i, k] = log_predictive(X[i], k, counts, means, precs, logdets, tables, work)
    return out

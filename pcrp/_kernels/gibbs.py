"""The collapsed Gibbs sweep (Algorithm 1 of Lu, Li & Dunson) and split-merge moves.

Everything here is prior-agnostic. A Gibbs-type prior, p(partition) = V_N(K) prod_k W(n_k)
(DESIGN.md section 2), enters only through tables: per block size the rows ``ROW_LOG_G``
(log W(n + 1) / W(n)) and ``ROW_LOG_G_PROD`` (log W(n) - log W(1)) of ``tables``, and per number
of blocks K the arrays ``log_new`` (log W(1) V_N(K + 1) / V_N(K), the new-block weight) and
``log_v`` (log V_N(K) + K log W(1)), both from :func:`pcrp.model.prior_tables`.
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
    ROW_ADD_STEP,
    ROW_LOG_G,
    ROW_LOG_G_PROD,
    ROW_REMOVE_STEP,
    ROW_REMOVE_WEIGHT,
    ROW_T_SCALE,
    add_point,
    copy_slot,
    log_marginal,
    log_predictive,
    log_predictive_from_term,
    log_term,
    rebuild_slot,
    reset_slot,
)
from .rng import randint, shuffle, uniform


@njit(cache=True, nogil=True, error_model="numpy")
def _delete_slot(k, K, labels, counts, means, precs, logdets):
    """Remove empty slot ``k`` by moving slot K-1 into it; returns the new K."""
    last = K - 1
    if k != last:
        copy_slot(last, k, counts, means, precs, logdets, counts, means, precs, logdets)
        for i in range(labels.shape[0]):
            if labels[i] == last:
                labels[i] = k
    return last


@njit(cache=True, nogil=True, error_model="numpy")
def log_joint(K, counts, logdets, log_v, tables):
    """log p(z, X) = log V_N(K) + sum_k [log W(N_k) + log m(X_k)]; normalised when V_N is (not the pCRP)."""
    total = log_v[K]
    for k in range(K):
        total += tables[counts[k], ROW_LOG_G_PROD] + log_marginal(k, counts, logdets, tables)
    return total


@njit(cache=True, nogil=True, error_model="numpy")
def rebuild_all(X, labels, K, m0, S0, kappa0, counts, means, precs, logdets):
    """Recompute every slot's statistics from the labels (removes rounding drift)."""
    for k in range(K):
        rebuild_slot(X, labels, k, k, m0, S0, kappa0, counts, means, precs, logdets)


@njit(cache=True, nogil=True, error_model="numpy")
def _split_merge(
    X, labels, K, counts, means, precs, logdets,
    m0, P0, logdet0, log_new, tables, rng,
    members, side, sc_counts, sc_means, sc_precs, sc_logdets, x, work, sm_stats,
):
    """One sequentially-allocated merge-split move (Dahl 2003).

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

    log_u = 0.0
    log_merge_gain = 0.0  # log target(merged) - log target(current split), merge proposals only
    if not is_split:
        # merged statistics: cluster ci plus every point of cluster cj
        copy_slot(ci, 2, counts, means, precs, logdets, sc_counts, sc_means, sc_precs, sc_logdets)
        for m in range(N):
            if labels[m] == cj:
                add_point(X[m], 2, sc_counts, sc_means, sc_precs, sc_logdets, tables, work,
                          log_term(X[m], 2, sc_counts, sc_means, sc_precs, tables, work))
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
        # allocation below would give, so skip it (the same decision, far less work for
        # merges of real clusters).
        if log_u >= log_merge_gain:
            return K

    n_members = 0
    for m in range(N):
        if m != i and m != j and (labels[m] == ci or labels[m] == cj):
            members[n_members] = m
            n_members += 1
    shuffle(rng, members[:n_members])

    for s in range(2):  # slot 2 holds the merged cluster of a merge proposal
        reset_slot(s, m0, P0, logdet0, sc_counts, sc_means, sc_precs, sc_logdets)
    add_point(X[i], 0, sc_counts, sc_means, sc_precs, sc_logdets, tables, work,
              log_term(X[i], 0, sc_counts, sc_means, sc_precs, tables, work))
    add_point(X[j], 1, sc_counts, sc_means, sc_precs, sc_logdets, tables, work,
              log_term(X[j], 1, sc_counts, sc_means, sc_precs, tables, work))
    log_q = 0.0  # log probability of the split produced / re-created below
    d = X.shape[1]
    for t in range(n_members):
        m = members[t]
        for a in range(d):
            x[a] = X[m, a]
        term_a = log_term(x, 0, sc_counts, sc_means, sc_precs, tables, work)
        term_b = log_term(x, 1, sc_counts, sc_means, sc_precs, tables, work)
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
        # niw.add_point written out (see the note in niw.py)
        n = sc_counts[s]
        weight = tables[n, ROW_T_SCALE]
        q = 0.0
        for a in range(d):
            tt = 0.0
            for b in range(d):
                tt += sc_precs[s, a, b] * (x[b] - sc_means[s, b])
            work[a] = tt
            q += tt * (x[a] - sc_means[s, a])
        coef = weight / (1.0 + weight * q)
        for a in range(d):
            ca = coef * work[a]
            for b in range(d):
                sc_precs[s, a, b] -= ca * work[b]
        sc_logdets[s] += term_a if s == 0 else term_b
        step = tables[n, ROW_ADD_STEP]
        for a in range(d):
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
            copy_slot(0, ci, sc_counts, sc_means, sc_precs, sc_logdets, counts, means, precs, logdets)
            copy_slot(1, K, sc_counts, sc_means, sc_precs, sc_logdets, counts, means, precs, logdets)
            labels[j] = K
            for t in range(n_members):
                if side[t] == 1:
                    labels[members[t]] = K
            K += 1
    elif log_u < log_merge_gain + log_q:
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


@njit(cache=True, nogil=True, error_model="numpy")
def gibbs_sweeps(
    X, labels, K, counts, means, precs, logdets,
    m0, S0, P0, logdet0, kappa0, log_new, log_v, tables, log_pred_new,
    rng, perm, progress, n_sweeps, n_split_merge, K_out, log_joint_out, sm_stats,
    keep_rows, keep_labels, keep_sm,
):
    """Run sweeps of Algorithm 1, each followed by ``n_split_merge`` split-merge moves.

    Shapes: X (N, d); labels (N,) int64 in 0..K-1; slot arrays (counts (C,),
    means (C, d), precs (C, d, d), logdets (C,)) with capacity C >= K; tables
    (N + 2, N_TABLE_ROWS); log_new, log_v (N + 2,) the prior's per-K tables
    (:func:`pcrp.model.prior_tables`); log_pred_new (N,) = log prior predictive of each
    point; rng uint64[4]; perm (N,) int64, the current sweep order; progress
    int64[4] (see PROGRESS_*; zeros and FRESH = 1 for a new call). After sweep s,
    K_out[s] receives K and log_joint_out[s] log p(z, X) (:func:`log_joint`);
    sm_stats (4,) accumulates [splits proposed, accepted, merges proposed,
    accepted]. keep_rows (n_sweeps,) int64: after sweep s with keep_rows[s] = j >= 0,
    the labels are copied into keep_labels[j] (R, N) and sm_stats into keep_sm[j]
    (R, 4), so kept draws need no return to Python at every kept sweep.

    Returns K. The call is finished when progress[PROGRESS_SWEEPS] == n_sweeps;
    otherwise every slot was in use: enlarge the slot arrays and call again
    with the same perm and progress.
    """
    N, d = X.shape
    capacity = counts.shape[0]
    logw = np.empty(N + 1)
    terms = np.empty(N + 1)  # log-determinant change if the point joins cluster c
    work = np.empty(d)
    x = np.empty(d)
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
            for j in range(d):  # a copy, not a view X[i]: views cost reference counting
                x[j] = X[i, j]
            # remove x from its cluster: the downdate S_{n-1} = S_n - w (x - m_n)(x - m_n)^T,
            # w = kappa_n / kappa_{n-1}; written out for speed (see the note in niw.py)
            k = labels[i]
            n = counts[k]
            ok = True  # False: rounding broke positive definiteness, rebuild the slot
            if n > 1:
                weight = tables[n, ROW_REMOVE_WEIGHT]
                q = 0.0
                for a in range(d):
                    tt = 0.0
                    for b in range(d):
                        tt += precs[k, a, b] * (x[b] - means[k, b])
                    work[a] = tt
                    q += tt * (x[a] - means[k, a])
                denom = 1.0 - weight * q
                if denom > 0.0:
                    coef = -weight / denom
                    for a in range(d):
                        ca = coef * work[a]
                        for b in range(d):
                            precs[k, a, b] -= ca * work[b]
                    logdets[k] += math.log(denom)
                else:
                    ok = False
            step = tables[n, ROW_REMOVE_STEP]
            for j in range(d):
                means[k, j] += (means[k, j] - x[j]) * step
            counts[k] = n - 1
            if counts[k] == 0:
                K = _delete_slot(k, K, labels, counts, means, precs, logdets)
            elif not ok:
                labels[i] = -1
                rebuild_slot(X, labels, k, k, m0, S0, kappa0, counts, means, precs, logdets)

            # Algorithm 1: log prior weight + log predictive, for each cluster and a new one
            # (K counted without point i; log_new[K] is -inf where K + 1 blocks are impossible)
            top = log_new[K] + log_pred_new[i]
            logw[K] = top
            for c in range(K):
                term = log_term(x, c, counts, means, precs, tables, work)
                terms[c] = term
                lw = tables[counts[c], ROW_LOG_G] + log_predictive_from_term(c, counts, logdets, tables, term)
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
                terms[chosen] = log_term(x, chosen, counts, means, precs, tables, work)
            # add x to the chosen cluster: niw.add_point written out (see the note in niw.py)
            k = chosen
            n = counts[k]
            weight = tables[n, ROW_T_SCALE]
            q = 0.0
            for a in range(d):
                tt = 0.0
                for b in range(d):
                    tt += precs[k, a, b] * (x[b] - means[k, b])
                work[a] = tt
                q += tt * (x[a] - means[k, a])
            denom = 1.0 + weight * q
            coef = weight / denom
            for a in range(d):
                ca = coef * work[a]
                for b in range(d):
                    precs[k, a, b] -= ca * work[b]
            logdets[k] += terms[k]
            step = tables[n, ROW_ADD_STEP]
            for j in range(d):
                means[k, j] += (x[j] - means[k, j]) * step
            counts[k] = n + 1
            labels[i] = chosen
        progress[PROGRESS_POINT] = N

        while progress[PROGRESS_MOVES] < n_split_merge:
            if K == capacity:
                return K
            K = _split_merge(
                X, labels, K, counts, means, precs, logdets,
                m0, P0, logdet0, log_new, tables, rng,
                members, side, sc_counts, sc_means, sc_precs, sc_logdets, x, work, sm_stats,
            )
            progress[PROGRESS_MOVES] += 1
        sweep = progress[PROGRESS_SWEEPS]
        K_out[sweep] = K
        log_joint_out[sweep] = log_joint(K, counts, logdets, log_v, tables)
        row = keep_rows[sweep]
        if row >= 0:
            for t in range(N):
                keep_labels[row, t] = labels[t]
            for t in range(4):
                keep_sm[row, t] = sm_stats[t]
        progress[PROGRESS_SWEEPS] = sweep + 1
        progress[PROGRESS_FRESH] = 1
    return K


@njit(cache=True, nogil=True, error_model="numpy")
def log_predictive_all(X, counts, means, precs, logdets, tables, K):
    """(N, K) matrix of log p(x_i | cluster k) for the first K slots."""
    N, d = X.shape
    out = np.empty((N, K))
    work = np.empty(d)
    for i in range(N):
        for k in range(K):
            out[i, k] = log_predictive(X[i], k, counts, means, precs, logdets, tables, work)
    return out

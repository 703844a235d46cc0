"""The collapsed Gibbs sweep (Algorithm 1 of Lu, Li & Dunson), followed by the moves of
:mod:`pcrp._kernels.moves`.

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

from .moves import N_SCRATCH_SLOTS, gibbs_split_merge, reallocate, regroup, split_merge
from .niw import (
    ROW_ADD_STEP,
    ROW_LOG_G,
    ROW_LOG_G_PROD,
    ROW_REMOVE_STEP,
    ROW_REMOVE_WEIGHT,
    ROW_T_SCALE,
    delete_slot,
    log_marginal,
    log_predictive,
    log_predictive_from_term,
    log_term,
    rebuild_slot,
    reset_slot,
)
from .rng import shuffle, uniform


@njit(cache=True, nogil=True, error_model="numpy")
def log_joint(K, counts, logdets, log_alpha, tables):
    """Unnormalised log p(z, X) = K log alpha + sum_k [log G(N_k) + log m(X_k)]."""
    total = K * log_alpha
    for k in range(K):
        total += tables[counts[k], ROW_LOG_G_PROD] + log_marginal(k, counts, logdets, tables)
    return total


@njit(cache=True, nogil=True, error_model="numpy")
def rebuild_all(X, labels, K, m0, S0, kappa0, counts, means, precs, logdets):
    """Recompute every slot's statistics from the labels (removes rounding drift)."""
    for k in range(K):
        rebuild_slot(X, labels, k, k, m0, S0, kappa0, counts, means, precs, logdets)


# Positions in the ``move_counts`` / ``move_periods`` arrays: move_counts[kind] moves of that
# kind follow every move_periods[kind]-th sweep (counted from the start of the chain).
MOVE_SPLIT_MERGE = 0  # moves.split_merge (Dahl)
MOVE_GIBBS_SPLIT_MERGE = 1  # moves.gibbs_split_merge (Jain & Neal)
MOVE_REALLOCATE = 2  # moves.reallocate
MOVE_REGROUP = 3  # moves.regroup
N_MOVE_KINDS = 4

# Positions in the ``progress`` array that lets gibbs_sweeps stop and resume.
PROGRESS_SWEEPS = 0  # sweeps completed in this call
PROGRESS_POINT = 1  # next position in ``perm`` within the current sweep (N = all done)
PROGRESS_MOVES = 2  # moves done after the current sweep (in the order of MOVE_*)
PROGRESS_FRESH = 3  # 1 when the current sweep still needs its permutation drawn


@njit(cache=True, nogil=True, error_model="numpy")
def gibbs_sweeps(
    X, labels, K, counts, means, precs, logdets,
    m0, S0, P0, logdet0, kappa0, log_alpha, tables, log_pred_new,
    rng, perm, progress, n_sweeps, first_sweep, move_counts, move_periods, n_scans,
    K_out, log_joint_out, move_stats,
):
    """Run sweeps of Algorithm 1, each followed by the moves of :mod:`pcrp._kernels.moves`:
    ``move_counts[MOVE_*]`` of each kind (in that order) after every ``move_periods[MOVE_*]``-th
    sweep of the chain, ``first_sweep`` being the number of sweeps done before this call.
    Restricted Gibbs moves use ``n_scans`` intermediate scans for their launch states.

    Shapes: X (N, d); labels (N,) int64 in 0..K-1; slot arrays (counts (C,),
    means (C, d), precs (C, d, d), logdets (C,)) with capacity C >= K; tables
    (N + 2, N_TABLE_ROWS); log_pred_new (N,) = log prior predictive of each
    point; rng uint64[4]; perm (N,) int64, the current sweep order; progress
    int64[4] (see PROGRESS_*; zeros and FRESH = 1 for a new call). After sweep s,
    K_out[s] receives K and log_joint_out[s] the unnormalised log p(z, X);
    move_stats (moves.N_MOVE_STATS,) accumulates proposals and acceptances
    (positions moves.STAT_*).

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
    # scratch of the moves
    anchors = np.empty(3, dtype=np.int64)
    clusters = np.empty(3, dtype=np.int64)
    members = np.empty(N, dtype=np.int64)
    side = np.empty(N, dtype=np.int64)
    target = np.empty(N, dtype=np.int64)
    side_lw = np.empty(3)
    side_terms = np.empty(3)
    sc_counts = np.zeros(N_SCRATCH_SLOTS, dtype=np.int64)
    sc_means = np.zeros((N_SCRATCH_SLOTS, d))
    sc_precs = np.zeros((N_SCRATCH_SLOTS, d, d))
    sc_logdets = np.zeros(N_SCRATCH_SLOTS)
    due = np.zeros(N_MOVE_KINDS, dtype=np.int64)
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
                K = delete_slot(k, K, labels, counts, means, precs, logdets)
            elif not ok:
                labels[i] = -1
                rebuild_slot(X, labels, k, k, m0, S0, kappa0, counts, means, precs, logdets)

            # Algorithm 1: log prior weight + log predictive, for each cluster and a new one
            top = log_alpha + log_pred_new[i]
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

        n_moves = 0
        for kind in range(N_MOVE_KINDS):
            due[kind] = move_counts[kind] if (first_sweep + progress[PROGRESS_SWEEPS] + 1) % move_periods[kind] == 0 else 0
            n_moves += due[kind]
        while progress[PROGRESS_MOVES] < n_moves:
            if K == capacity:  # a move may open one cluster: it needs a free slot
                return K
            position = progress[PROGRESS_MOVES]
            kind = 0
            while position >= due[kind]:
                position -= due[kind]
                kind += 1
            if kind == MOVE_SPLIT_MERGE:
                K = split_merge(
                    X, labels, K, counts, means, precs, logdets, m0, P0, logdet0, log_alpha, tables, rng,
                    anchors, clusters, members, side, sc_counts, sc_means, sc_precs, sc_logdets,
                    x, work, side_lw, side_terms, move_stats,
                )
            elif kind == MOVE_GIBBS_SPLIT_MERGE:
                K = gibbs_split_merge(
                    X, labels, K, counts, means, precs, logdets, m0, P0, logdet0, log_alpha, tables, rng,
                    n_scans, anchors, clusters, members, side, target, sc_counts, sc_means, sc_precs,
                    sc_logdets, x, work, side_lw, side_terms, move_stats,
                )
            elif kind == MOVE_REALLOCATE:
                reallocate(
                    X, labels, K, counts, means, precs, logdets, m0, P0, logdet0, tables, rng, n_scans,
                    anchors, clusters, members, side, target, sc_counts, sc_means, sc_precs, sc_logdets,
                    x, work, side_lw, side_terms, move_stats,
                )
            else:
                K = regroup(
                    X, labels, K, counts, means, precs, logdets, m0, P0, logdet0, log_alpha, tables, rng,
                    n_scans, anchors, clusters, members, side, target, sc_counts, sc_means, sc_precs,
                    sc_logdets, x, work, side_lw, side_terms, move_stats,
                )
            progress[PROGRESS_MOVES] += 1
        sweep = progress[PROGRESS_SWEEPS]
        K_out[sweep] = K
        log_joint_out[sweep] = log_joint(K, counts, logdets, log_alpha, tables)
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

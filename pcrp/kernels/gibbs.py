"""The collapsed Gibbs sweep (Algorithm 1 of Lu, Li & Dunson), followed by split-merge moves
(:mod:`pcrp.kernels.split_merge`), over the cluster state of :mod:`pcrp.kernels.slots`.

Everything here is prior-agnostic. A Gibbs-type prior, p(partition) = V_N(K) prod_k W(n_k)
(docs/design.md section 1.1), enters only through tables: per block size the rows ``ROW_LOG_G``
(log W(n + 1) / W(n)) and ``ROW_LOG_G_PROD`` (log W(n) - log W(1)) of ``tables``, and per number
of blocks K the arrays ``log_new`` (log W(1) V_N(K + 1) / V_N(K), the new-block weight) and
``log_v`` (log V_N(K) + K log W(1)), both from :func:`pcrp.model.prior_tables`.
Between sweeps clusters occupy slots ``0 .. K-1`` (compact); within a sweep a cluster that empties leaves a
hole that the next new cluster fills, and the slots are compacted at the sweep's end. When every slot is in use the sweep
kernel returns early with its position saved, the caller enlarges the slot
arrays and calls again: growing inside the hot loop would make numba reassign
(and reference-count) the arrays on every point, which costs about 30%.
"""

import numpy as np
from numba import njit

from . import libm
from .niw import (
    ROW_LOG_G,
    ROW_LOG_G_PROD,
    ROW_REMOVE_STEP,
    ROW_REMOVE_WEIGHT,
    ROW_T_CONST,
    ROW_T_EXPONENT,
    ROW_T_SCALE,
    rebuild_slot as rebuild_slot_aos,
)
from .rng import randint, shuffle, uniform
from .slots import (
    CONST_EXPONENT,
    CONST_LOG_WEIGHT,
    CONST_SCALE,
    add_point,
    build_member_index,
    log_marginal,
    log_predictive,
    log_term,
    move_slot,
    scaled_form,
    reset_slot,
    set_consts,
)
from .split_merge import split_merge
from .vecmath import EXP_CEILING, LANES, exp_in_range, log_positive


@njit(cache=True, nogil=True, error_model="numpy")
def log_joint(K, counts, logdets, log_v, tables):
    """log p(z, X) = log V_N(K) + sum_k [log W(N_k) + log m(X_k)]; normalised when V_N is (not the pCRP)."""
    total = log_v[K]
    for k in range(K):
        total += tables[counts[k], ROW_LOG_G_PROD] + log_marginal(k, counts, logdets, tables)
    return total


@njit(cache=True, nogil=True, error_model="numpy")
def rebuild_all(X, labels, K, m0, S0, kappa0, counts, means, precs, logdets):
    """Statistics of clusters 0..K-1 from the labels, in the layout of :mod:`pcrp.kernels.niw` (counts (K,),
    means (K, d), precs (K, d, d), logdets (K,)): for readers of a partition (pcrp.analyses.density). The sampler's own
    state is :mod:`pcrp.kernels.slots`."""
    for k in range(K):
        rebuild_slot_aos(X, labels, k, k, m0, S0, kappa0, counts, means, precs, logdets)


# Positions in the ``progress`` array that lets gibbs_sweeps stop and resume.
PROGRESS_SWEEPS = 0  # sweeps completed in this call
PROGRESS_POINT = 1  # next position in ``perm`` within the current sweep (N = all done)
PROGRESS_MOVES = 2  # split-merge moves done after the current sweep
PROGRESS_FRESH = 3  # 1 when the current sweep still needs its order drawn
PROGRESS_OFFSET = 4  # a memory-order sweep's first point ...
PROGRESS_STEP = 5  # ... and its direction (+1 or -1)
N_PROGRESS = 6

# The sweep's order (the ``scan`` argument of gibbs_sweeps); either is a valid Gibbs sweep, as every update
# leaves the posterior invariant whatever the order, as long as the order does not depend on the state.
SCAN_RANDOM = 0  # a fresh random permutation each sweep, X, labels and log_pred_new gathered into it
SCAN_MEMORY = 1  # memory order from a random first point in a random direction: no gather or scatter

# Up to this d the quadratic form is written without a difference vector (registers only, once unrolled).
SMALL_D = 3
VECTOR_FROM = 6  # from this many slots the logs and exps run as vectorised passes (pcrp.kernels.vecmath)
# A slot whose weight is below e^-NEGLIGIBLE (4e-18) of the largest gets weight 0 on the few-slots path, its log
# and exp not computed: its probability is then below the 2^-53 (1.1e-16) resolution of the uniform that picks
# the slot, and its share of the total below the rounding of a double.
NEGLIGIBLE = 40.0


# fastmath={"contract"} and no other flag: a multiply and an add may fuse into one FMA (one rounding instead of
# two); NaN, infinity and the order of every sum are kept. The bound measured is in docs/design.md section 2.
@njit(cache=True, nogil=True, error_model="numpy", fastmath={"contract"})
def gibbs_sweeps(
    dims, X, labels, K, counts, means, precs, logdets, consts,
    m0, S0, P0, logdet0, kappa0, log_new, log_v, tables, log_pred_new,
    rng, scan, perm, X_order, labels_order, log_pred_order, progress, n_sweeps, n_split_merge, K_out, log_joint_out, sm_stats,
    keep_rows, keep_labels, keep_sm, exact_members, vector_from,
):
    """Run sweeps of Algorithm 1, each followed by ``n_split_merge`` split-merge moves.

    dims: a tuple of d zeros, which makes d a compile-time constant (numba compiles, and caches, one
    kernel per d: the small loops are unrolled), or the empty tuple for the general kernel (d read
    from X). Shapes: X (N, d); labels (N,) int64 in 0..K-1; slot arrays in the layout of
    :mod:`pcrp.kernels.slots` with capacity C >= K (counts (C,), means (C, d), precs (C, d, d),
    logdets (C,), consts (N_CONSTS, C)); tables
    (N + 2, N_TABLE_ROWS); log_new, log_v (N + 2,) the prior's per-K tables
    (:func:`pcrp.model.prior_tables`); log_pred_new (N,) = log prior predictive of each
    point; rng uint64[4]; scan: SCAN_RANDOM or SCAN_MEMORY, the sweep's order. For SCAN_RANDOM: perm (N,)
    int32, the current sweep order; X_order (N, d), labels_order (N,) int64 and log_pred_order (N,): X,
    labels and log_pred_new in that order, gathered once at the start of a sweep so that the sweep reads them
    sequentially, the labels scattered back at its end (unused by SCAN_MEMORY, which reads X, labels and
    log_pred_new in place); progress int64[N_PROGRESS] (see PROGRESS_*; zeros and FRESH = 1 for a new call). After sweep s,
    K_out[s] receives K and log_joint_out[s] log p(z, X) (:func:`log_joint`);
    sm_stats (4,) accumulates [splits proposed, accepted, merges proposed,
    accepted]. keep_rows (n_sweeps,) int64: after sweep s with keep_rows[s] = j >= 0,
    the labels are copied into keep_labels[j] (R, N) and sm_stats into keep_sm[j]
    (R, 4), so kept draws need no return to Python at every kept sweep. exact_members: members a split-merge
    move seats with the exact predictives before its frozen score (:func:`pcrp.kernels.split_merge.split_merge`).
    vector_from: from this many slots in use the logs and exps run as vector passes (VECTOR_FROM; the tests lower
    it so that enumeration reaches those passes).

    Returns K. The call is finished when progress[PROGRESS_SWEEPS] == n_sweeps;
    otherwise every slot was in use: enlarge the slot arrays and call again
    with the same perm and progress, passing the returned value (then the slots in use, holes of clusters
    emptied in this sweep included) as K.
    """
    N = X.shape[0]
    D = X.shape[1] if len(dims) == 0 else len(dims)
    capacity = counts.shape[0]
    weights = np.empty(capacity + LANES)  # log weight, then weight, of each slot and a new cluster (padded)
    ys = np.empty(capacity + LANES)  # 1 + scaled quadratic form of x for each slot, then its log
    qs = np.empty(capacity)  # the quadratic form of x for each slot
    free = np.empty(capacity, dtype=np.int64)  # slots emptied in this sweep, reused first
    remap = np.empty(capacity, dtype=np.int64)  # slot -> compact slot at the end of a sweep
    work = np.empty(D)
    x = np.empty(D)
    members = np.empty(N, dtype=np.int64)
    order = np.empty(2 * N if n_split_merge > 0 else 0, dtype=np.int64)  # the member index of the moves
    starts = np.empty(capacity, dtype=np.int64)
    tail = np.zeros(1, dtype=np.int64)
    side = np.empty(N, dtype=np.int64)
    sc_counts = np.zeros(3, dtype=np.int64)
    sc_means = np.zeros((3, D))
    sc_precs = np.zeros((3, D, D))
    sc_logdets = np.zeros(3)
    while progress[PROGRESS_SWEEPS] < n_sweeps:
        if progress[PROGRESS_FRESH] == 1:
            if scan == SCAN_MEMORY:
                progress[PROGRESS_OFFSET] = randint(rng, N)
                progress[PROGRESS_STEP] = 1 if uniform(rng) < 0.5 else -1
            else:
                for t in range(N):
                    perm[t] = t
                shuffle(rng, perm)
                for t in range(N):
                    i = perm[t]
                    for a in range(D):
                        X_order[t, a] = X[i, a]
                    labels_order[t] = labels[i]
                    log_pred_order[t] = log_pred_new[i]
                progress[PROGRESS_OFFSET] = 0
                progress[PROGRESS_STEP] = 1
            progress[PROGRESS_FRESH] = 0
            progress[PROGRESS_POINT] = 0
            progress[PROGRESS_MOVES] = 0
        # Within the sweep a cluster that empties leaves a hole (count 0, log weight -inf: never chosen) instead of
        # moving the last slot into its place, which would relabel that slot's points (a pass over N); new clusters
        # fill holes first, and the slots are compacted once at the end of the sweep. ``used`` slots, K clusters.
        used = K
        K = 0
        n_free = 0
        for c in range(used):
            if counts[c] == 0:
                free[n_free] = c
                n_free += 1
            else:
                K += 1
        # the arrays the sweep reads: its position t is their row offset + direction * t (mod N)
        X_scan = X if scan == SCAN_MEMORY else X_order
        labels_scan = labels if scan == SCAN_MEMORY else labels_order
        log_pred_scan = log_pred_new if scan == SCAN_MEMORY else log_pred_order
        offset = progress[PROGRESS_OFFSET]
        direction = progress[PROGRESS_STEP]
        for t in range(progress[PROGRESS_POINT], N):
            if n_free == 0 and used == capacity:
                progress[PROGRESS_POINT] = t
                return used
            row = offset + direction * t
            if row >= N:
                row -= N
            elif row < 0:
                row += N
            for a in range(D):  # a copy, not a view X[row]: views cost reference counting
                x[a] = X_scan[row, a]
            k = labels_scan[row]
            n = counts[k]
            # Pass 1, slot by slot: the quadratic form of x and 1 + its scaled value (d a constant: the loops
            # unrolled). Slot k still holds x: its weight without x comes from the same form below.
            for c in range(used):
                q = 0.0
                if D <= SMALL_D:
                    for a in range(D):
                        da = x[a] - means[c, a]
                        tt = 0.0
                        for b in range(a):
                            tt += precs[c, a, b] * (x[b] - means[c, b])
                        q += da * (2.0 * tt + precs[c, a, a] * da)
                else:  # rows of the lower triangle, contiguous: vectorised along b
                    for a in range(D):
                        work[a] = x[a] - means[c, a]
                    for a in range(D):
                        tt = 0.0
                        for b in range(a):
                            tt += precs[c, a, b] * work[b]
                        q += work[a] * (2.0 * tt + precs[c, a, a] * work[a])
                qs[c] = q
                ys[c] = 1.0 + q * consts[CONST_SCALE, c]
            # Slot k without x, never formed unless x leaves: with q = (x - m_n)^T S_n^{-1} (x - m_n) and
            # w = kappa_n / kappa_{n-1}, S_{n-1} = S_n - w (x - m_n)(x - m_n)^T, so log|S_{n-1}| = log|S_n| + L with
            # L = log(1 - w q), and x's predictive term under slot n-1 is log(1 + scale_{n-1} q_{n-1}) = -L. Its log
            # weight log g(n-1) + T_const(n-1) - log|S_n| / 2 + (exponent(n-1) - 1/2) L has the form of every other
            # slot's (a constant minus an exponent times a log), so slot k's constants are swapped for these during
            # the passes below and put back after: no branch in the loops, one log per slot.
            removed = False  # True: x already taken out of slot k (the rounding fallback below)
            denom = 1.0
            kept_log_weight = consts[CONST_LOG_WEIGHT, k]
            kept_exponent = consts[CONST_EXPONENT, k]
            if n == 1:
                consts[CONST_LOG_WEIGHT, k] = -np.inf  # k was x alone
            else:
                denom = 1.0 - tables[n, ROW_REMOVE_WEIGHT] * qs[k]
                if denom > 0.0:
                    ys[k] = denom
                    consts[CONST_LOG_WEIGHT, k] = (tables[n - 1, ROW_LOG_G] + tables[n - 1, ROW_T_CONST]
                                                   - 0.5 * logdets[k])
                    consts[CONST_EXPONENT, k] = 0.5 - tables[n - 1, ROW_T_EXPONENT]
                else:  # rounding broke positive definiteness: take x out and rebuild the slot from its points
                    removed = True
                    labels_scan[row] = -1
                    rebuild_slot_aos(X_scan, labels_scan, k, k, m0, S0, kappa0, counts, means, precs, logdets)
                    set_consts(k, counts, logdets, tables, consts)
                    ys[k] = scaled_form(x, k, D, counts, means, precs, tables)
            # Algorithm 1: log prior weight + log predictive, for each cluster and a new one
            # (K counted without point i; log_new[K] is -inf where K + 1 blocks are impossible).
            K_without = K - 1 if n == 1 else K
            weights[used] = log_new[K_without] + log_pred_scan[row]
            top = weights[used]
            total = 0.0
            if used < vector_from:
                # A few slots: libm's log and exp, one slot at a time (from 4-5 slots the padded vector pass below
                # measured 1.04-1.09x slower per sweep on Old Faithful; from 6 it is as quick or quicker).
                # Slot k first (x's own cluster, most often the likeliest); a slot whose log weight is bounded
                # below it by more than NEGLIGIBLE (log y >= 1 - 1/y, its exponent > 0) gets weight 0 without its
                # log, and a weight that far below the largest gets 0 without its exp.
                best = used
                ys[k] = libm.log(ys[k])
                floor = max(top, consts[CONST_LOG_WEIGHT, k] - consts[CONST_EXPONENT, k] * ys[k]) - NEGLIGIBLE
                for c in range(used):
                    if c != k:
                        y = ys[c]
                        if consts[CONST_LOG_WEIGHT, c] - consts[CONST_EXPONENT, c] * (1.0 - 1.0 / y) < floor:
                            weights[c] = -np.inf
                            continue
                        ys[c] = libm.log(y)
                    lw = consts[CONST_LOG_WEIGHT, c] - consts[CONST_EXPONENT, c] * ys[c]
                    weights[c] = lw
                    if lw > top:
                        top = lw
                        best = c
                floor = top - NEGLIGIBLE
                for c in range(used + 1):
                    lw = weights[c]
                    w = 1.0 if c == best else (0.0 if lw < floor else libm.exp(lw - top))  # exp(0) = 1
                    weights[c] = w
                    total += w
            else:
                # A vectorised pass over the slots, its length padded to a multiple of LANES (the pads: log 1 = 0),
                # so that no slot is left to a scalar remainder loop.
                padded = min((used + LANES - 1) // LANES * LANES, capacity)
                for c in range(used, padded):
                    ys[c] = 1.0
                # pass 2, in one: the logs (kept: a moved point's log-determinant changes), the log weights and
                # the weights relative to the new cluster's (no max to wait for); slots more than EXP_CEILING above
                # it, or a new cluster that is impossible (-inf), are counted and the weights remade below
                reference = weights[used]
                ceiling = reference + EXP_CEILING
                beyond = 0
                for c in range(padded):
                    term = log_positive(ys[c])
                    ys[c] = term
                    lw = consts[CONST_LOG_WEIGHT, c] - consts[CONST_EXPONENT, c] * term
                    beyond += 1 if (lw > ceiling and c < used) else 0
                    weights[c] = exp_in_range(lw - reference)
                weights[used] = 1.0
                if beyond > 0:  # rare: relative to the largest log weight instead
                    for c in range(used):
                        top = max(top, consts[CONST_LOG_WEIGHT, c] - consts[CONST_EXPONENT, c] * ys[c])
                    for c in range(used):
                        weights[c] = exp_in_range(consts[CONST_LOG_WEIGHT, c] - consts[CONST_EXPONENT, c] * ys[c] - top)
                    weights[used] = exp_in_range(reference - top)
                for c in range(used + 1):
                    total += weights[c]
            if not removed:
                consts[CONST_LOG_WEIGHT, k] = kept_log_weight
                consts[CONST_EXPONENT, k] = kept_exponent
            u = uniform(rng) * total
            chosen = used
            acc = 0.0
            for c in range(used):
                acc += weights[c]
                if u < acc:
                    chosen = c
                    break
            if chosen == used and n == 1:
                chosen = k  # x alone again: a new cluster of x is the state it left
            if chosen == k and not removed:
                continue  # x stays: nothing changes

            if not removed:
                # remove x from slot k: the downdate S_{n-1} = S_n - w (x - m_n)(x - m_n)^T (see the note in niw.py)
                if n > 1:
                    weight = tables[n, ROW_REMOVE_WEIGHT]
                    for a in range(D):
                        tt = 0.0
                        for b in range(D):
                            tt += precs[k, a, b] * (x[b] - means[k, b])
                        work[a] = tt
                    coef = -weight / denom
                    for a in range(D):
                        ca = coef * work[a]
                        for b in range(D):
                            precs[k, a, b] -= ca * work[b]
                    logdets[k] += ys[k]  # L
                    step = tables[n, ROW_REMOVE_STEP]
                    for a in range(D):
                        means[k, a] += (means[k, a] - x[a]) * step
                    counts[k] = n - 1
                    n = n - 1  # slots.set_consts written out
                    consts[CONST_LOG_WEIGHT, k] = tables[n, ROW_LOG_G] + tables[n, ROW_T_CONST] - 0.5 * logdets[k]
                    consts[CONST_SCALE, k] = tables[n, ROW_T_SCALE]
                    consts[CONST_EXPONENT, k] = tables[n, ROW_T_EXPONENT]
                else:  # the slot becomes a hole
                    counts[k] = 0
                    consts[CONST_LOG_WEIGHT, k] = -np.inf
                    free[n_free] = k
                    n_free += 1
                    K -= 1
            if chosen == used:  # a new cluster: a hole if there is one, else the next slot
                if n_free > 0:
                    n_free -= 1
                    chosen = free[n_free]
                else:
                    used += 1
                reset_slot(chosen, D, m0, P0, logdet0, counts, means, precs, logdets)
                K += 1
                ys[chosen] = log_term(x, chosen, D, counts, means, precs, tables)
            k = chosen
            add_point(x, k, D, counts, means, precs, logdets, tables, work, ys[k])
            n = counts[k]
            consts[CONST_LOG_WEIGHT, k] = tables[n, ROW_LOG_G] + tables[n, ROW_T_CONST] - 0.5 * logdets[k]
            consts[CONST_SCALE, k] = tables[n, ROW_T_SCALE]
            consts[CONST_EXPONENT, k] = tables[n, ROW_T_EXPONENT]
            labels_scan[row] = k
        if progress[PROGRESS_POINT] < N:
            # compact the slots (holes out, order kept), then scatter the labels back (in memory order, only when a
            # slot moved: most sweeps of a stable K leave no hole)
            nxt = 0
            for c in range(used):
                if counts[c] > 0:
                    remap[c] = nxt
                    if c != nxt:
                        move_slot(c, nxt, D, counts, means, precs, logdets, consts)
                    nxt += 1
            if scan == SCAN_MEMORY:
                if nxt < used:
                    for t in range(N):
                        labels[t] = remap[labels[t]]
            else:
                for t in range(N):
                    labels[perm[t]] = remap[labels_order[t]]
        progress[PROGRESS_POINT] = N

        if progress[PROGRESS_MOVES] < n_split_merge:
            tail[0] = build_member_index(labels, K, counts, order, starts)
        while progress[PROGRESS_MOVES] < n_split_merge:
            if K == capacity:
                return K
            K = split_merge(
                dims, X, labels, K, counts, means, precs, logdets, consts, order, starts, tail,
                m0, S0, P0, logdet0, kappa0, log_new, tables, rng,
                members, side, sc_counts, sc_means, sc_precs, sc_logdets, x, work, sm_stats, exact_members,
            )
            progress[PROGRESS_MOVES] += 1
        sweep = progress[PROGRESS_SWEEPS]
        K_out[sweep] = K
        log_joint_out[sweep] = log_joint(K, counts, logdets, log_v, tables)
        kept = keep_rows[sweep]
        if kept >= 0:
            for t in range(N):
                keep_labels[kept, t] = labels[t]
            for t in range(4):
                keep_sm[kept, t] = sm_stats[t]
        progress[PROGRESS_SWEEPS] = sweep + 1
        progress[PROGRESS_FRESH] = 1
    return K


@njit(cache=True, nogil=True, error_model="numpy")
def log_predictive_all(X, counts, means, precs, logdets, tables, K):
    """(N, K) matrix of log p(x_i | cluster k) for the first K slots."""
    N, d = X.shape
    out = np.empty((N, K))
    for i in range(N):
        for k in range(K):
            out[i, k] = log_predictive(X[i], k, d, counts, means, precs, logdets, tables)
    return out

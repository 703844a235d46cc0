"""The collapsed Gibbs sweep (Algorithm 1 of Lu, Li & Dunson), each followed by split-merge moves
(:mod:`pcrp.kernels.split_merge`), over the cluster statistics of :mod:`pcrp.kernels.clusters`.

Everything here is prior-agnostic: a Gibbs-type prior p(z) = V_N(K) prod_k W(n_k) enters only through
:class:`pcrp.kernels.state.Tables` (docs/design.md section 1.1), and one kernel serves every d. The covariance
type enters through the rank of the stored scales (:mod:`pcrp.kernels.scales`): :func:`seat_points` takes them as
an argument and calls each type's inlined operations in branches on that rank, which numba resolves when it
compiles, so each type in use gets a sweep with its own code only.

Between sweeps the clusters occupy slots 0 .. K-1. Within a sweep a cluster that empties leaves a hole (an empty
slot) that the next new cluster fills, instead of moving the last slot into its place (which would relabel that
slot's points, a pass over N); the slots are compacted at the sweep's end. When every slot is in use the kernel
returns early with its position saved in the scan buffers, the caller enlarges the slots and calls again: growing
inside the loop over points would make numba reload (and reference-count) the arrays on every point.
"""

import math

import numpy as np
from numba import njit

from .clusters import copy_slot, empty_slot, log_joint, move_mean, padded, rebuild
from .scales import (DIAG_CHUNK, diagonal_factor, diagonal_log_term, diagonal_scale_change, full_form, full_scale_change,
                     logdet_step, spherical_form)
from .rng import randint, shuffle, uniform
from .split_merge import build_member_index, move_scratch, split_merge
from .state import (ADD_STEP, DIAG_RANK, EXPONENT, FULL_RANK, LOG_G, LOG_WEIGHT, REMOVE_STEP, REMOVE_WEIGHT, SCALE,
                    SPHERICAL_RANK, T_CONST, T_EXPONENT, T_SCALE, SweepScratch)
from .vecmath import EXP_CEILING, exp_in_range, log_positive

# The sweep's order (Settings.scan). Either is a valid Gibbs sweep: every update leaves the posterior invariant,
# whatever the order, as long as the order does not depend on the state.
SCAN_RANDOM = 0  # a fresh random permutation each sweep, X, labels and log_pred_new gathered into it
SCAN_MEMORY = 1  # memory order from a random first point in a random direction: no gather or scatter

# Positions in ScanBuffers.progress, which lets run_sweeps stop when the slots are full and resume
PROGRESS_SWEEPS = 0  # sweeps completed in this call
PROGRESS_POINT = 1  # the next position in the sweep's order (N: all seated)
PROGRESS_MOVES = 2  # split-merge moves done after the current sweep
PROGRESS_FRESH = 3  # 1 when the current sweep still needs its order drawn
PROGRESS_OFFSET = 4  # the sweep's first row ...
PROGRESS_STEP = 5  # ... and its direction (+1 or -1)
N_PROGRESS = 6


# On the few-slots path a slot whose log weight is bounded below the largest by more than NEGLIGIBLE gets weight 0
# without its log and exp: e^-40 (4e-18) is below the 2^-53 (1.1e-16) resolution of the uniform that picks the slot,
# and its share of the total below the rounding of a double.
NEGLIGIBLE = 40.0
# From this many slots in use a point's weights are computed in one vector pass (Settings.vector_from): with fewer,
# the scalar path below, which skips negligible slots, measured quicker (docs/records/sweep_ab.md).
VECTOR_FROM = 6
# From this many columns the diagonal type's pass 1 leaves each slot's log term (pcrp.kernels.scales.diagonal_log_term,
# whose product is kept within bounds) instead of its product y (Settings.logs_from): up to DIAG_CHUNK columns the
# product cannot overflow and its log joins the other slots' in the vector pass (at d = 2 the logs one by one cost
# about 30% of a sweep).
LOGS_FROM = DIAG_CHUNK + 1


@njit(cache=True, nogil=True, error_model="numpy", fastmath={"contract"})
def forms_again(x, means, precs, consts, used, qs, ys, logged):
    """Pass 1 of :func:`seat_points` once more, after the rare rebuild of its rounding fallback: the form of x (d,)
    against slots 0 .. used - 1 in pass 1's convention (qs[c] = q and ys[c] = 1 + t_scale q; the diagonal type:
    ys[c] = the product of its factors, or its log when ``logged``). A call: pass 1 written into the sweep's loop a
    second time, or as an inlined function with branches of its own, made the full type's sweep 1.5 times slower
    (numba's reference-count pruning)."""
    for c in range(used):
        if precs.ndim == DIAG_RANK:
            if logged:
                ys[c] = diagonal_log_term(x, means, precs, consts[SCALE, c], c)
            else:
                ys[c] = diagonal_factor(x, means, precs, consts[SCALE, c], c)
        else:
            q = full_form(x, means, precs, c) if precs.ndim == FULL_RANK else spherical_form(x, means, precs, c)
            qs[c] = q
            ys[c] = 1.0 + q * consts[SCALE, c]


@njit(cache=True, nogil=True, error_model="numpy", fastmath={"contract"})
def seat_points(data, X, labels, log_pred_new, offset, direction, first, used, slots, precs, settings, scratch, rng):
    """Algorithm 1 for positions ``first`` .. N - 1 of a sweep, position t reading row offset + direction t (mod N)
    of X (N, d), labels (N,) and log_pred_new (N,): take the point out, weigh every cluster by its seating weight
    times the point's predictive and a new cluster by the prior's new-block weight times the prior predictive,
    draw, put the point back. ``used`` slots are in use (holes included). Returns (used, t): t = N when every
    point was seated, else the position at which every slot was in use (enlarge the slots and call again).

    ``precs`` is slots.precs again, as an argument: numba reads the rank of an argument when it compiles and keeps
    only that covariance type's branches below (pcrp.kernels.scales), so the full type's loop is as it was."""
    N, D = X.shape
    tables, base = data.tables, data.base
    # every array the loop reads, out of its structure once: in the loop each field read would cost two atomic
    # reference counts
    counts, means, _, logdets, consts = slots
    per_count, log_new = tables.per_count, tables.log_new
    vector_from = settings.vector_from
    logged = precs.ndim == DIAG_RANK and D >= settings.logs_from  # pass 1 leaves each slot's log term, not y
    det_step = logdet_step(precs, D)  # log|S_n| changes by det_step log y (spherical: log|beta I| = d log beta)
    capacity = counts.shape[0]
    x, work, qs, ys, weights, free = scratch.x, scratch.work, scratch.qs, scratch.ys, scratch.weights, scratch.free
    K = 0
    n_free = 0
    for c in range(used):
        if counts[c] == 0:
            free[n_free] = c
            n_free += 1
        else:
            K += 1
    for t in range(first, N):
        if n_free == 0 and used == capacity:
            return used, t
        row = offset + direction * t
        if row >= N:
            row -= N
        elif row < 0:
            row += N
        for a in range(D):  # a copy, not a view X[row]: a view costs reference counting
            x[a] = X[row, a]
        k = labels[row]
        n = counts[k]
        # Pass 1: the form of x against every slot in use, q and y = 1 + t_scale q (the diagonal type: the product of
        # its columns' factors, or its log from logs_from columns), one branch per covariance type; the full type's
        # written out for d = 1 and 2, the common cases of the app's data, where the general loop costs 6-8% of a
        # sweep
        if precs.ndim == DIAG_RANK:
            if logged:
                for c in range(used):
                    ys[c] = diagonal_log_term(x, means, precs, consts[SCALE, c], c)
            else:
                for c in range(used):
                    ys[c] = diagonal_factor(x, means, precs, consts[SCALE, c], c)
        elif precs.ndim == SPHERICAL_RANK:
            for c in range(used):
                q = spherical_form(x, means, precs, c)
                qs[c] = q
                ys[c] = 1.0 + q * consts[SCALE, c]
        elif D == 1:
            x0 = x[0]
            for c in range(used):
                d0 = x0 - means[c, 0]
                q = precs[c, 0, 0] * d0 * d0
                qs[c] = q
                ys[c] = 1.0 + q * consts[SCALE, c]
        elif D == 2:
            x0 = x[0]
            x1 = x[1]
            for c in range(used):
                d0 = x0 - means[c, 0]
                d1 = x1 - means[c, 1]
                q = precs[c, 0, 0] * d0 * d0 + d1 * (2.0 * precs[c, 1, 0] * d0 + precs[c, 1, 1] * d1)
                qs[c] = q
                ys[c] = 1.0 + q * consts[SCALE, c]
        else:
            for c in range(used):
                q = full_form(x, means, precs, c)
                qs[c] = q
                ys[c] = 1.0 + q * consts[SCALE, c]
        # Slot k still holds x. Its weight without x comes from the same form: with q = (x - m_n)^T S_n^{-1}
        # (x - m_n), S_{n-1} = S_n - w (x - m_n)(x - m_n)^T for w = remove_weight(n), so log|S_{n-1}| = log|S_n| + L
        # with L = log(1 - w q), and x's predictive term under the n - 1 others is log(1 + scale_{n-1} q_{n-1}) = -L.
        # Its log weight log g(n-1) + t_const(n-1) - log|S_n| / 2 + (t_exponent(n-1) - step / 2) L has the form of
        # every other slot's, so slot k's constants are swapped for these while the weights are made and put back
        # after (step = det_step; the diagonal type's L is the sum of its columns' logs, already in ys[k]).
        removed = False  # True: x already taken out of slot k (the rounding fallback below)
        shrink = 1.0
        kept_log_weight = consts[LOG_WEIGHT, k]
        kept_exponent = consts[EXPONENT, k]
        if n == 1:
            consts[LOG_WEIGHT, k] = -np.inf  # k was x alone
        else:
            if logged:
                ys[k] = diagonal_log_term(x, means, precs, -per_count[n, REMOVE_WEIGHT], k)
                shrink = 1.0 if ys[k] == ys[k] else 0.0  # NaN: some column's factor was not positive
            elif precs.ndim == DIAG_RANK:
                shrink = diagonal_factor(x, means, precs, -per_count[n, REMOVE_WEIGHT], k)  # NaN: not positive
                ys[k] = shrink
            else:
                shrink = 1.0 - per_count[n, REMOVE_WEIGHT] * qs[k]
                ys[k] = shrink
            if shrink > 0.0:
                consts[LOG_WEIGHT, k] = per_count[n - 1, LOG_G] + per_count[n - 1, T_CONST] - 0.5 * logdets[k]
                consts[EXPONENT, k] = 0.5 * det_step - per_count[n - 1, T_EXPONENT]
            else:  # rounding broke positive definiteness: take x out and rebuild the slots from their points
                removed = True
                labels[row] = -1
                rebuild(X, labels, used, slots, base, tables)
                forms_again(x, means, precs, consts, used, qs, ys, logged)
        # The weights (Algorithm 1: log prior weight + log predictive) of every slot and, at index ``used``, a new
        # cluster: log_new[K] counts the K clusters without x and is -inf where K + 1 blocks are impossible. Each
        # slot's log term log y is kept in ys: it is the log-determinant's change if x joins.
        K_without = K - 1 if n == 1 else K
        reference = log_new[K_without] + log_pred_new[row]
        new = used
        total = 0.0
        if used < vector_from:
            # A few slots: scalar logs and exps, slot k first (x's own cluster, most often the likeliest); a slot
            # whose log weight is bounded below it by more than NEGLIGIBLE (log y >= 1 - 1/y, its exponent > 0)
            # gets weight 0 without its log, and a weight that far below the largest gets 0 without its exp.
            best = new
            top = reference
            if not logged:
                ys[k] = math.log(ys[k])
            floor = max(top, consts[LOG_WEIGHT, k] - consts[EXPONENT, k] * ys[k]) - NEGLIGIBLE
            for c in range(used):
                if c != k:
                    y = ys[c]
                    if consts[LOG_WEIGHT, c] - consts[EXPONENT, c] * (y if logged else 1.0 - 1.0 / y) < floor:
                        weights[c] = -np.inf
                        continue
                    if not logged:
                        ys[c] = math.log(y)
                lw = consts[LOG_WEIGHT, c] - consts[EXPONENT, c] * ys[c]
                weights[c] = lw
                if lw > top:
                    top = lw
                    best = c
            weights[new] = reference
            floor = top - NEGLIGIBLE
            for c in range(used + 1):
                lw = weights[c]
                w = 1.0 if c == best else (0.0 if lw < floor else math.exp(lw - top))
                weights[c] = w
                total += w
        else:
            # One vector pass over the slots, padded to whole vectors (the pads: log 1 = 0, weight 0): each slot's
            # log term, log weight and weight relative to the new cluster's, with no maximum to wait for. A slot more
            # than EXP_CEILING above the new cluster, or an impossible new cluster, has the weights remade relative
            # to the largest.
            lanes = padded(used)
            for c in range(used, lanes):
                ys[c] = 0.0 if logged else 1.0
            ceiling = reference + EXP_CEILING
            beyond = 0
            for c in range(lanes):
                term = ys[c] if logged else log_positive(ys[c])
                ys[c] = term
                lw = consts[LOG_WEIGHT, c] - consts[EXPONENT, c] * term
                beyond += 1 if lw > ceiling else 0
                weights[c] = exp_in_range(lw - reference)
            weights[new] = 1.0
            if beyond > 0:
                top = reference
                for c in range(used):
                    top = max(top, consts[LOG_WEIGHT, c] - consts[EXPONENT, c] * ys[c])
                for c in range(used):
                    weights[c] = exp_in_range(consts[LOG_WEIGHT, c] - consts[EXPONENT, c] * ys[c] - top)
                weights[new] = exp_in_range(reference - top)
            for c in range(used + 1):
                total += weights[c]
        if not removed:
            consts[LOG_WEIGHT, k] = kept_log_weight
            consts[EXPONENT, k] = kept_exponent
        u = uniform(rng) * total
        chosen = new
        acc = 0.0
        for c in range(used):
            acc += weights[c]
            if u < acc:
                chosen = c
                break
        if chosen == new and n == 1:
            chosen = k  # x alone again: a new cluster of x is the state it left
        if chosen == k and not removed:
            continue  # x stays: nothing changes
        if not removed:
            if n > 1:  # x leaves slot k: its scale by x's factor shrink (ys[k] its log), then its mean, count, constants
                if precs.ndim == FULL_RANK:
                    full_scale_change(x, means, precs, k, per_count[n, REMOVE_WEIGHT] / shrink, work)
                elif precs.ndim == DIAG_RANK:
                    diagonal_scale_change(x, means, precs, k, -per_count[n, REMOVE_WEIGHT])
                else:
                    precs[k] /= shrink
                move_mean(x, slots, k, n, det_step * ys[k], -per_count[n, REMOVE_STEP], -1, tables)
            else:  # the slot becomes a hole
                empty_slot(slots, k, base, tables)
                free[n_free] = k
                n_free += 1
                K -= 1
        if chosen == new:  # a new cluster: a hole if there is one, else the next slot (both hold the prior)
            if n_free > 0:
                n_free -= 1
                chosen = free[n_free]
            else:
                used += 1
            K += 1
            # the form against the prior, which an empty slot holds
            if precs.ndim == DIAG_RANK:
                ys[chosen] = diagonal_log_term(x, means, precs, consts[SCALE, chosen], chosen)
            else:
                q = full_form(x, means, precs, chosen) if precs.ndim == FULL_RANK else spherical_form(x, means, precs, chosen)
                qs[chosen] = q
                ys[chosen] = math.log(1.0 + q * consts[SCALE, chosen])
        # x joins slot ``chosen``: its scale by x's factor y (ys[chosen] its log), then its mean, count, constants
        n_chosen = counts[chosen]
        weight = per_count[n_chosen, T_SCALE]
        if precs.ndim == FULL_RANK:
            full_scale_change(x, means, precs, chosen, -(weight / (1.0 + weight * qs[chosen])), work)
        elif precs.ndim == DIAG_RANK:
            diagonal_scale_change(x, means, precs, chosen, weight)
        else:
            precs[chosen] /= 1.0 + weight * qs[chosen]
        move_mean(x, slots, chosen, n_chosen, det_step * ys[chosen], per_count[n_chosen, ADD_STEP], 1, tables)
        labels[row] = chosen
    return used, N


@njit(cache=True, nogil=True, error_model="numpy")
def compact(used, slots, remap, data):
    """Move the clusters of slots 0 .. used - 1 to slots 0 .. K - 1 (holes out, order kept), empty the rest, and
    fill remap[slot] with each cluster's new slot; returns K."""
    K = np.int64(0)  # not a Python 0: copy_slot(..., K) would compile a second time for the literal (section 8)
    for c in range(used):
        if slots.counts[c] > 0:
            remap[c] = K
            if c != K:
                copy_slot(slots, c, slots, K)
            K += 1
    for c in range(K, used):
        empty_slot(slots, c, data.base, data.tables)
    return K


@njit(cache=True, nogil=True, error_model="numpy")
def start_sweep(scan_kind, X, labels, log_pred_new, scan, rng):
    """Draw a sweep's order: a random first row and direction (SCAN_MEMORY), or a random permutation with X, the
    labels and log_pred_new gathered into it (SCAN_RANDOM)."""
    N, D = X.shape
    progress = scan.progress
    if scan_kind == SCAN_MEMORY:
        progress[PROGRESS_OFFSET] = randint(rng, N)
        progress[PROGRESS_STEP] = 1 if uniform(rng) < 0.5 else -1
    else:
        perm = scan.perm
        for t in range(N):
            perm[t] = t
        shuffle(rng, perm)
        for t in range(N):
            i = perm[t]
            for a in range(D):
                scan.X_order[t, a] = X[i, a]
            scan.labels_order[t] = labels[i]
            scan.log_pred_order[t] = log_pred_new[i]
        progress[PROGRESS_OFFSET] = 0
        progress[PROGRESS_STEP] = 1
    progress[PROGRESS_FRESH] = 0
    progress[PROGRESS_POINT] = 0
    progress[PROGRESS_MOVES] = 0


@njit(cache=True, nogil=True, error_model="numpy")
def run_sweeps(data, labels, K, slots, settings, scan, record, n_sweeps, rng):
    """Run ``n_sweeps`` sweeps of Algorithm 1, each followed by ``settings.split_merge`` split-merge moves.

    data: :class:`pcrp.kernels.state.Data`; labels (N,) int64 in 0 .. K-1; slots: :class:`Slots` with capacity
    C > K, slots K .. C-1 empty; settings: :class:`Settings`; scan: :class:`ScanBuffers` (progress zeros with
    PROGRESS_FRESH = 1 for a new call); record: :class:`Record` of n_sweeps rows (after sweep s: K, the log joint,
    and the labels when record.keep_rows[s] >= 0); rng: uint64[4].

    Returns K. The call is finished when scan.progress[PROGRESS_SWEEPS] == n_sweeps; otherwise every slot was in
    use: enlarge the slots and call again with the same scan buffers, passing the returned value (the slots in use,
    holes of clusters emptied in this sweep included) as K.
    """
    X = data.X
    N, D = X.shape
    capacity = slots.counts.shape[0]
    progress = scan.progress
    scratch = SweepScratch(np.empty(D), np.empty(D), np.empty(capacity), np.empty(capacity), np.empty(capacity + 1),
                           np.empty(capacity, dtype=np.int64))
    remap = np.empty(capacity, dtype=np.int64)
    moves = move_scratch(N if settings.split_merge > 0 else 0, D, capacity, slots.precs)
    while progress[PROGRESS_SWEEPS] < n_sweeps:
        if progress[PROGRESS_FRESH] == 1:
            start_sweep(settings.scan, X, labels, data.log_pred_new, scan, rng)
        random_order = settings.scan == SCAN_RANDOM
        if progress[PROGRESS_POINT] < N:
            used, stopped = seat_points(
                data, scan.X_order if random_order else X, scan.labels_order if random_order else labels,
                scan.log_pred_order if random_order else data.log_pred_new, progress[PROGRESS_OFFSET],
                progress[PROGRESS_STEP], progress[PROGRESS_POINT], K, slots, slots.precs, settings, scratch, rng)
            if stopped < N:
                progress[PROGRESS_POINT] = stopped
                return used
            K = compact(used, slots, remap, data)
            # the labels back, relabelled (in memory order only when a slot moved: most sweeps of a stable K leave
            # no hole)
            if random_order:
                for t in range(N):
                    labels[scan.perm[t]] = remap[scan.labels_order[t]]
            elif K < used:
                for t in range(N):
                    labels[t] = remap[labels[t]]
            progress[PROGRESS_POINT] = N
        if progress[PROGRESS_MOVES] < settings.split_merge:
            moves.tail[0] = build_member_index(labels, K, slots.counts, moves.order, moves.starts)
        while progress[PROGRESS_MOVES] < settings.split_merge:
            if K == capacity:
                return K
            K = split_merge(data, labels, K, slots, moves, settings.exact_members, record.move_totals, rng)
            progress[PROGRESS_MOVES] += 1
        sweep = progress[PROGRESS_SWEEPS]
        record.K[sweep] = K
        record.log_joint[sweep] = log_joint(K, slots, data.tables)
        kept = record.keep_rows[sweep]
        if kept >= 0:
            for t in range(N):
                record.kept_labels[kept, t] = labels[t]
            for t in range(4):
                record.kept_moves[kept, t] = record.move_totals[t]
        progress[PROGRESS_SWEEPS] = sweep + 1
        progress[PROGRESS_FRESH] = 1
    return K

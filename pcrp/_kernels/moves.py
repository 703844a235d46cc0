"""Metropolis-Hastings moves that relabel many points at once.

Every move draws its anchor points (two or three distinct points) uniformly: a choice
that does not look at the labels, so it cancels in the acceptance ratio. The other
points of the anchors' clusters are gathered in a random order, also drawn without
looking at how they are split, and the same order serves a proposal and its reverse.
Targets use only the partition posterior of DESIGN.md section 2; the prior enters only
through the ``tables`` rows and ``log_alpha``, so every move is valid for every prior
of the g-CRP family.

Two ways to propose a split of a set S of points with one anchor per side:

- sequential allocation (Dahl 2003): seat the points one by one beside the anchors
  with probability proportional to g(size) x predictive given the points seated so far;
- restricted Gibbs (Jain & Neal 2004): from a *launch* split L, one scan in which each
  point leaves its side and is re-seated given all the others. The launch is a
  sequential allocation followed by a few such scans, drawn without looking at the
  current split; the probability K(L -> z) of a scan's outcome is a product of Gibbs
  conditionals, so it is about as spread out as the posterior itself. That is what lets
  these moves reach, and return from, splits whose boundary is fuzzy (many points with
  conditional probabilities far from 0 and 1), which a sequential allocation alone
  re-creates with a tiny probability.

The moves:

- :func:`split_merge` (Dahl): i, j together -> split their cluster; apart -> merge.
- :func:`gibbs_split_merge` (Jain & Neal): the same pair logic with restricted Gibbs
  proposals; the merge's reverse probability is K(L -> current split).
- :func:`reallocate`: i, j apart -> their two clusters are re-split (K unchanged). Two
  launches L1, L2 are drawn; the proposal is one scan from L2, the reverse probability
  one scan from L1 to the current split. With (L1, L2) as auxiliary variables that swap
  roles the acceptance min(1, p(z') K(L1 -> z) / (p(z) K(L2 -> z'))) keeps the posterior,
  and for well-formed launches it is about the ratio of the posterior masses of the two
  splits' modes: the move jumps between modes, which one launch (Jain & Neal) cannot.
- :func:`regroup`: three anchors i, j, k. In three clusters -> their union is re-split in
  two (i and j apart); i, j apart with k beside one of them -> the union of the two
  clusters is re-split in three (K changes by one). Launches as in :func:`reallocate`.
  This rearranges three clusters at once, e.g. {tip of an arm}, {rest of the arm and a
  centre}, {another arm} <-> {arm and half the centre}, {other half and other arm}.

Scratch slots (arrays ``sc_*``): 0, 1, 2 = the sides of a proposal or launch; 3 = the
merged cluster of a merge proposal.
"""

import math

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
    delete_slot,
    log_marginal,
    log_predictive_from_term,
    log_term,
    reset_slot,
)
from .rng import randint, shuffle, uniform

# Positions in the ``move_stats`` array the moves count into (proposed, accepted).
STAT_SPLITS = 0
STAT_MERGES = 2
STAT_REALLOCATIONS = 4
STAT_REGROUPS_2_TO_3 = 6
STAT_REGROUPS_3_TO_2 = 8
N_MOVE_STATS = 10

N_SCRATCH_SLOTS = 4
MERGED_SLOT = 3


@njit(cache=True, nogil=True, error_model="numpy")
def _distinct_points(rng, N, anchors, n):
    """Draw ``n`` (2 or 3) distinct points uniformly into anchors[:n]."""
    for a in range(n):
        while True:
            p = randint(rng, N)
            fresh = True
            for b in range(a):
                if anchors[b] == p:
                    fresh = False
            if fresh:
                break
        anchors[a] = p


@njit(cache=True, nogil=True, error_model="numpy")
def _gather(labels, clusters, n_clusters, anchors, n_anchors, members, start, rng):
    """Write the points of ``clusters[:n_clusters]`` other than the anchors into
    ``members[start:]`` in a random order; returns the end position."""
    stop = start
    for m in range(labels.shape[0]):
        inside = False
        for c in range(n_clusters):
            if labels[m] == clusters[c]:
                inside = True
        if inside:
            for a in range(n_anchors):
                if anchors[a] == m:
                    inside = False
        if inside:
            members[stop] = m
            stop += 1
    shuffle(rng, members[start:stop])
    return stop


@njit(cache=True, nogil=True, error_model="numpy")
def _start_sides(X, anchors, n_sides, m0, P0, logdet0, sc_counts, sc_means, sc_precs, sc_logdets,
                 tables, work):
    """Scratch slot s = {anchors[s]} for s < n_sides."""
    for s in range(n_sides):
        reset_slot(s, m0, P0, logdet0, sc_counts, sc_means, sc_precs, sc_logdets)
        a = anchors[s]
        add_point(X[a], s, sc_counts, sc_means, sc_precs, sc_logdets, tables, work,
                  log_term(X[a], s, sc_counts, sc_means, sc_precs, tables, work))


@njit(cache=True, nogil=True, error_model="numpy")
def _rebuild_side(X, members, start, stop, side, s, anchor, m0, P0, logdet0,
                  sc_counts, sc_means, sc_precs, sc_logdets, tables, work):
    """Recompute scratch slot ``s`` from its anchor and the members with side[t] == s."""
    reset_slot(s, m0, P0, logdet0, sc_counts, sc_means, sc_precs, sc_logdets)
    add_point(X[anchor], s, sc_counts, sc_means, sc_precs, sc_logdets, tables, work,
              log_term(X[anchor], s, sc_counts, sc_means, sc_precs, tables, work))
    for t in range(start, stop):
        if side[t] == s:
            m = members[t]
            add_point(X[m], s, sc_counts, sc_means, sc_precs, sc_logdets, tables, work,
                      log_term(X[m], s, sc_counts, sc_means, sc_precs, tables, work))


@njit(cache=True, nogil=True, error_model="numpy")
def _choose(lw, n_sides, draw, given, rng):
    """Pick a side with probability proportional to exp(lw[s]) (or take ``given``); returns
    (side, its log probability)."""
    top = lw[0]
    for s in range(1, n_sides):
        if lw[s] > top:
            top = lw[s]
    total = 0.0
    for s in range(n_sides):
        total += math.exp(lw[s] - top)
    chosen = given
    if draw:
        u = uniform(rng) * total
        chosen = n_sides - 1
        acc = 0.0
        for s in range(n_sides - 1):
            acc += math.exp(lw[s] - top)
            if u < acc:
                chosen = s
                break
    return chosen, lw[chosen] - top - math.log(total)


@njit(cache=True, nogil=True, error_model="numpy")
def sequential_allocation(X, members, start, stop, side, draw, n_sides,
                          sc_counts, sc_means, sc_precs, sc_logdets, tables, rng, x, work, lw, terms):
    """Seat ``members[start:stop]`` in order in scratch slots 0 .. n_sides-1, each with
    probability proportional to g(size) x predictive given the points seated so far.

    draw: True = draw each side into ``side[t]``; False = ``side[t]`` is given and only its
    probability is computed. ``lw``, ``terms``: (n_sides,) scratch. Returns the log
    probability of the sides.
    """
    d = X.shape[1]
    log_q = 0.0
    for t in range(start, stop):
        m = members[t]
        for a in range(d):
            x[a] = X[m, a]
        for s in range(n_sides):
            terms[s] = log_term(x, s, sc_counts, sc_means, sc_precs, tables, work)
            lw[s] = tables[sc_counts[s], ROW_LOG_G] + log_predictive_from_term(
                s, sc_counts, sc_logdets, tables, terms[s])
        s, log_p = _choose(lw, n_sides, draw, side[t], rng)
        side[t] = s
        log_q += log_p
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
        sc_logdets[s] += terms[s]
        step = tables[n, ROW_ADD_STEP]
        for a in range(d):
            sc_means[s, a] += (x[a] - sc_means[s, a]) * step
        sc_counts[s] = n + 1
    return log_q


@njit(cache=True, nogil=True, error_model="numpy")
def restricted_scan(X, members, start, stop, side, target, draw, anchors, n_sides, m0, P0, logdet0,
                    sc_counts, sc_means, sc_precs, sc_logdets, tables, rng, x, work, lw, terms):
    """One restricted Gibbs scan over ``members[start:stop]`` in order: each point leaves
    its side ``side[t]`` (scratch slot side[t], whose anchor is anchors[side[t]]) and is
    re-seated with probability proportional to g(size) x predictive given all the others.

    draw: True = draw the new side; False = take it from ``target[t]`` and only compute
    its probability. ``side`` is updated in place. Returns the log probability of the
    outcome (the product of the conditionals used).
    """
    d = X.shape[1]
    log_k = 0.0
    for t in range(start, stop):
        m = members[t]
        for a in range(d):
            x[a] = X[m, a]
        s = side[t]
        # remove x from slot s: the downdate of the sweep, written out (see the note in niw.py)
        n = sc_counts[s]
        weight = tables[n, ROW_REMOVE_WEIGHT]
        q = 0.0
        for a in range(d):
            tt = 0.0
            for b in range(d):
                tt += sc_precs[s, a, b] * (x[b] - sc_means[s, b])
            work[a] = tt
            q += tt * (x[a] - sc_means[s, a])
        denom = 1.0 - weight * q
        if denom > 0.0:
            coef = -weight / denom
            for a in range(d):
                ca = coef * work[a]
                for b in range(d):
                    sc_precs[s, a, b] -= ca * work[b]
            sc_logdets[s] += math.log(denom)
            step = tables[n, ROW_REMOVE_STEP]
            for a in range(d):
                sc_means[s, a] += (sc_means[s, a] - x[a]) * step
            sc_counts[s] = n - 1
        else:  # rounding broke positive definiteness: recompute the side without x
            side[t] = -1
            _rebuild_side(X, members, start, stop, side, s, anchors[s], m0, P0, logdet0,
                          sc_counts, sc_means, sc_precs, sc_logdets, tables, work)
        for s in range(n_sides):
            terms[s] = log_term(x, s, sc_counts, sc_means, sc_precs, tables, work)
            lw[s] = tables[sc_counts[s], ROW_LOG_G] + log_predictive_from_term(
                s, sc_counts, sc_logdets, tables, terms[s])
        s, log_p = _choose(lw, n_sides, draw, target[t], rng)
        side[t] = s
        log_k += log_p
        # niw.add_point written out
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
        sc_logdets[s] += terms[s]
        step = tables[n, ROW_ADD_STEP]
        for a in range(d):
            sc_means[s, a] += (x[a] - sc_means[s, a]) * step
        sc_counts[s] = n + 1
    return log_k


@njit(cache=True, nogil=True, error_model="numpy")
def _launch(X, anchors, n_sides, members, start, stop, side, n_scans, m0, P0, logdet0,
            sc_counts, sc_means, sc_precs, sc_logdets, tables, rng, x, work, lw, terms):
    """A launch split of the anchors and ``members[start:stop]`` into n_sides sides, drawn
    without looking at the labels: a sequential allocation, then ``n_scans`` restricted scans."""
    _start_sides(X, anchors, n_sides, m0, P0, logdet0, sc_counts, sc_means, sc_precs, sc_logdets, tables, work)
    sequential_allocation(X, members, start, stop, side, True, n_sides,
                          sc_counts, sc_means, sc_precs, sc_logdets, tables, rng, x, work, lw, terms)
    for _ in range(n_scans):
        restricted_scan(X, members, start, stop, side, side, True, anchors, n_sides, m0, P0, logdet0,
                        sc_counts, sc_means, sc_precs, sc_logdets, tables, rng, x, work, lw, terms)


@njit(cache=True, nogil=True, error_model="numpy")
def _current_sides(labels, members, start, stop, clusters, n_clusters, target):
    """target[t] = position in ``clusters`` of the cluster of members[t]."""
    for t in range(start, stop):
        for c in range(n_clusters):
            if labels[members[t]] == clusters[c]:
                target[t] = c


@njit(cache=True, nogil=True, error_model="numpy")
def _log_target(slots, n, counts, logdets, tables):
    """sum over the given slots of log G(n_k) + log m(X_k) (the log joint without alpha^K)."""
    total = 0.0
    for s in range(n):
        k = slots[s]
        total += tables[counts[k], ROW_LOG_G_PROD] + log_marginal(k, counts, logdets, tables)
    return total


@njit(cache=True, nogil=True, error_model="numpy")
def _scratch_target(n_sides, sc_counts, sc_logdets, tables):
    """sum over scratch slots 0 .. n_sides-1 of log G(n_s) + log m(X_s)."""
    total = 0.0
    for s in range(n_sides):
        total += tables[sc_counts[s], ROW_LOG_G_PROD] + log_marginal(s, sc_counts, sc_logdets, tables)
    return total


@njit(cache=True, nogil=True, error_model="numpy")
def _write_back(n_sides, clusters, K, members, start, stop, side, anchors, labels,
                sc_counts, sc_means, sc_precs, sc_logdets, counts, means, precs, logdets):
    """Accept a proposal held in scratch slots 0 .. n_sides-1: side s becomes cluster
    clusters[s] (a new slot K when clusters[s] < 0, then K grows). Returns the new K."""
    for s in range(n_sides):
        k = clusters[s]
        if k < 0:
            k = K
            K += 1
            clusters[s] = k
        copy_slot(s, k, sc_counts, sc_means, sc_precs, sc_logdets, counts, means, precs, logdets)
        labels[anchors[s]] = k
    for t in range(start, stop):
        labels[members[t]] = clusters[side[t]]
    return K


@njit(cache=True, nogil=True, error_model="numpy")
def _merge_into_scratch(X, labels, ci, cj, counts, means, precs, logdets,
                        sc_counts, sc_means, sc_precs, sc_logdets, tables, work):
    """Scratch slot MERGED_SLOT = cluster ci plus every point of cluster cj."""
    copy_slot(ci, MERGED_SLOT, counts, means, precs, logdets, sc_counts, sc_means, sc_precs, sc_logdets)
    for m in range(labels.shape[0]):
        if labels[m] == cj:
            add_point(X[m], MERGED_SLOT, sc_counts, sc_means, sc_precs, sc_logdets, tables, work,
                      log_term(X[m], MERGED_SLOT, sc_counts, sc_means, sc_precs, tables, work))


@njit(cache=True, nogil=True, error_model="numpy")
def _accept_merge(ci, cj, K, labels, sc_counts, sc_means, sc_precs, sc_logdets, counts, means, precs, logdets):
    copy_slot(MERGED_SLOT, ci, sc_counts, sc_means, sc_precs, sc_logdets, counts, means, precs, logdets)
    for m in range(labels.shape[0]):
        if labels[m] == cj:
            labels[m] = ci
    counts[cj] = 0
    return delete_slot(cj, K, labels, counts, means, precs, logdets)


@njit(cache=True, nogil=True, error_model="numpy")
def split_merge(
    X, labels, K, counts, means, precs, logdets, m0, P0, logdet0, log_alpha, tables, rng,
    anchors, clusters, members, side, sc_counts, sc_means, sc_precs, sc_logdets, x, work, lw, terms,
    move_stats,
):
    """One sequentially-allocated merge-split move (Dahl 2003); returns the new K.

    i, j together: propose the split drawn by a sequential allocation. Apart: propose
    merging their clusters; the probability of re-creating the current split in the same
    order enters the ratio. A merge is rejected before the allocation when the uniform
    already fails against the target ratio alone (the allocation's log probability is
    <= 0). The caller guarantees a free slot (K < capacity).
    """
    N = X.shape[0]
    if N < 2:
        return K
    _distinct_points(rng, N, anchors, 2)
    ci = labels[anchors[0]]
    cj = labels[anchors[1]]
    clusters[0] = ci
    clusters[1] = cj
    if ci == cj:
        stop = _gather(labels, clusters, 1, anchors, 2, members, 0, rng)
        _start_sides(X, anchors, 2, m0, P0, logdet0, sc_counts, sc_means, sc_precs, sc_logdets, tables, work)
        log_q = sequential_allocation(X, members, 0, stop, side, True, 2,
                                      sc_counts, sc_means, sc_precs, sc_logdets, tables, rng, x, work, lw, terms)
        move_stats[STAT_SPLITS] += 1
        log_ratio = (log_alpha + _scratch_target(2, sc_counts, sc_logdets, tables)
                     - _log_target(clusters, 1, counts, logdets, tables) - log_q)
        if math.log(uniform(rng)) < log_ratio:
            move_stats[STAT_SPLITS + 1] += 1
            clusters[1] = -1
            K = _write_back(2, clusters, K, members, 0, stop, side, anchors, labels,
                            sc_counts, sc_means, sc_precs, sc_logdets, counts, means, precs, logdets)
        return K
    # merge proposal
    _merge_into_scratch(X, labels, ci, cj, counts, means, precs, logdets,
                        sc_counts, sc_means, sc_precs, sc_logdets, tables, work)
    log_merge_gain = (
        tables[sc_counts[MERGED_SLOT], ROW_LOG_G_PROD] + log_marginal(MERGED_SLOT, sc_counts, sc_logdets, tables)
        - log_alpha - _log_target(clusters, 2, counts, logdets, tables)
    )
    move_stats[STAT_MERGES] += 1
    log_u = math.log(uniform(rng))
    # the ratio is log_merge_gain + log q(re-creating the split), log q <= 0: when u fails
    # against log_merge_gain alone the move is rejected whatever the allocation gives
    if log_u >= log_merge_gain:
        return K
    stop = _gather(labels, clusters, 2, anchors, 2, members, 0, rng)
    _current_sides(labels, members, 0, stop, clusters, 2, side)
    _start_sides(X, anchors, 2, m0, P0, logdet0, sc_counts, sc_means, sc_precs, sc_logdets, tables, work)
    log_q = sequential_allocation(X, members, 0, stop, side, False, 2,
                                  sc_counts, sc_means, sc_precs, sc_logdets, tables, rng, x, work, lw, terms)
    if log_u < log_merge_gain + log_q:
        move_stats[STAT_MERGES + 1] += 1
        K = _accept_merge(ci, cj, K, labels, sc_counts, sc_means, sc_precs, sc_logdets, counts, means, precs, logdets)
    return K


@njit(cache=True, nogil=True, error_model="numpy")
def gibbs_split_merge(
    X, labels, K, counts, means, precs, logdets, m0, P0, logdet0, log_alpha, tables, rng, n_scans,
    anchors, clusters, members, side, target, sc_counts, sc_means, sc_precs, sc_logdets, x, work, lw, terms,
    move_stats,
):
    """Jain & Neal (2004) restricted Gibbs split-merge with ``n_scans`` intermediate scans;
    returns the new K. The caller guarantees a free slot (K < capacity)."""
    N = X.shape[0]
    if N < 2:
        return K
    _distinct_points(rng, N, anchors, 2)
    ci = labels[anchors[0]]
    cj = labels[anchors[1]]
    clusters[0] = ci
    clusters[1] = cj
    if ci == cj:
        stop = _gather(labels, clusters, 1, anchors, 2, members, 0, rng)
        _launch(X, anchors, 2, members, 0, stop, side, n_scans, m0, P0, logdet0,
                sc_counts, sc_means, sc_precs, sc_logdets, tables, rng, x, work, lw, terms)
        log_k = restricted_scan(X, members, 0, stop, side, side, True, anchors, 2, m0, P0, logdet0,
                                sc_counts, sc_means, sc_precs, sc_logdets, tables, rng, x, work, lw, terms)
        move_stats[STAT_SPLITS] += 1
        log_ratio = (log_alpha + _scratch_target(2, sc_counts, sc_logdets, tables)
                     - _log_target(clusters, 1, counts, logdets, tables) - log_k)
        if math.log(uniform(rng)) < log_ratio:
            move_stats[STAT_SPLITS + 1] += 1
            clusters[1] = -1
            K = _write_back(2, clusters, K, members, 0, stop, side, anchors, labels,
                            sc_counts, sc_means, sc_precs, sc_logdets, counts, means, precs, logdets)
        return K
    _merge_into_scratch(X, labels, ci, cj, counts, means, precs, logdets,
                        sc_counts, sc_means, sc_precs, sc_logdets, tables, work)
    log_merge_gain = (
        tables[sc_counts[MERGED_SLOT], ROW_LOG_G_PROD] + log_marginal(MERGED_SLOT, sc_counts, sc_logdets, tables)
        - log_alpha - _log_target(clusters, 2, counts, logdets, tables)
    )
    move_stats[STAT_MERGES] += 1
    log_u = math.log(uniform(rng))
    if log_u >= log_merge_gain:  # log K(L -> current split) <= 0: rejected whatever the launch
        return K
    stop = _gather(labels, clusters, 2, anchors, 2, members, 0, rng)
    _current_sides(labels, members, 0, stop, clusters, 2, target)
    _launch(X, anchors, 2, members, 0, stop, side, n_scans, m0, P0, logdet0,
            sc_counts, sc_means, sc_precs, sc_logdets, tables, rng, x, work, lw, terms)
    log_k = restricted_scan(X, members, 0, stop, side, target, False, anchors, 2, m0, P0, logdet0,
                            sc_counts, sc_means, sc_precs, sc_logdets, tables, rng, x, work, lw, terms)
    if log_u < log_merge_gain + log_k:
        move_stats[STAT_MERGES + 1] += 1
        K = _accept_merge(ci, cj, K, labels, sc_counts, sc_means, sc_precs, sc_logdets, counts, means, precs, logdets)
    return K


@njit(cache=True, nogil=True, error_model="numpy")
def _two_launch_move(
    X, labels, K, counts, means, precs, logdets, m0, P0, logdet0, tables, rng, n_scans,
    anchors, n_from, n_to, clusters, n_clusters, members, start_from, start_to, stop,
    side, target, sc_counts, sc_means, sc_precs, sc_logdets, x, work, lw, terms, log_alpha_change,
):
    """Re-split the union of ``clusters[:n_clusters]`` (the current split, ``n_from`` sides
    whose anchors are anchors[:n_from]) into ``n_to`` sides (anchors[:n_to]).

    Members of the current split are members[start_from:stop], of the proposal
    members[start_to:stop] (an anchor of one side count is a member of the other).
    Reverse: launch L1 with n_from sides, log K(L1 -> current). Proposal: launch L2 with
    n_to sides, one scan. Returns True when accepted; the proposal is then in scratch
    slots 0 .. n_to-1 with sides in ``side``.
    """
    _current_sides(labels, members, start_from, stop, clusters, n_clusters, target)
    _launch(X, anchors, n_from, members, start_from, stop, side, n_scans, m0, P0, logdet0,
            sc_counts, sc_means, sc_precs, sc_logdets, tables, rng, x, work, lw, terms)
    log_k_current = restricted_scan(X, members, start_from, stop, side, target, False, anchors, n_from,
                                    m0, P0, logdet0, sc_counts, sc_means, sc_precs, sc_logdets,
                                    tables, rng, x, work, lw, terms)
    _launch(X, anchors, n_to, members, start_to, stop, side, n_scans, m0, P0, logdet0,
            sc_counts, sc_means, sc_precs, sc_logdets, tables, rng, x, work, lw, terms)
    log_k_new = restricted_scan(X, members, start_to, stop, side, side, True, anchors, n_to,
                                m0, P0, logdet0, sc_counts, sc_means, sc_precs, sc_logdets,
                                tables, rng, x, work, lw, terms)
    log_ratio = (log_alpha_change + _scratch_target(n_to, sc_counts, sc_logdets, tables)
                 - _log_target(clusters, n_clusters, counts, logdets, tables)
                 + log_k_current - log_k_new)
    return math.log(uniform(rng)) < log_ratio


@njit(cache=True, nogil=True, error_model="numpy")
def reallocate(
    X, labels, K, counts, means, precs, logdets, m0, P0, logdet0, tables, rng, n_scans,
    anchors, clusters, members, side, target, sc_counts, sc_means, sc_precs, sc_logdets, x, work, lw, terms,
    move_stats,
):
    """Two-launch restricted Gibbs re-split of two clusters (K unchanged); see the module notes.
    Nothing happens when the two anchors share a cluster."""
    N = X.shape[0]
    if N < 2:
        return
    _distinct_points(rng, N, anchors, 2)
    clusters[0] = labels[anchors[0]]
    clusters[1] = labels[anchors[1]]
    if clusters[0] == clusters[1]:
        return
    move_stats[STAT_REALLOCATIONS] += 1
    stop = _gather(labels, clusters, 2, anchors, 2, members, 0, rng)
    if _two_launch_move(X, labels, K, counts, means, precs, logdets, m0, P0, logdet0, tables, rng, n_scans,
                        anchors, 2, 2, clusters, 2, members, 0, 0, stop,
                        side, target, sc_counts, sc_means, sc_precs, sc_logdets, x, work, lw, terms, 0.0):
        move_stats[STAT_REALLOCATIONS + 1] += 1
        _write_back(2, clusters, K, members, 0, stop, side, anchors, labels,
                    sc_counts, sc_means, sc_precs, sc_logdets, counts, means, precs, logdets)


@njit(cache=True, nogil=True, error_model="numpy")
def regroup(
    X, labels, K, counts, means, precs, logdets, m0, P0, logdet0, log_alpha, tables, rng, n_scans,
    anchors, clusters, members, side, target, sc_counts, sc_means, sc_precs, sc_logdets, x, work, lw, terms,
    move_stats,
):
    """Three anchors i, j, k: three clusters -> two, or two -> three (see the module notes);
    returns the new K. The caller guarantees a free slot (K < capacity)."""
    N = X.shape[0]
    if N < 3:
        return K
    _distinct_points(rng, N, anchors, 3)
    ci = labels[anchors[0]]
    cj = labels[anchors[1]]
    ck = labels[anchors[2]]
    if ci == cj:
        return K
    clusters[0] = ci
    clusters[1] = cj
    # members[0] = k (a member when two sides, an anchor when three); the others from 1 on
    members[0] = anchors[2]
    if ck != ci and ck != cj:  # three clusters -> two
        clusters[2] = ck
        stop = _gather(labels, clusters, 3, anchors, 3, members, 1, rng)
        move_stats[STAT_REGROUPS_3_TO_2] += 1
        if _two_launch_move(X, labels, K, counts, means, precs, logdets, m0, P0, logdet0, tables, rng, n_scans,
                            anchors, 3, 2, clusters, 3, members, 1, 0, stop,
                            side, target, sc_counts, sc_means, sc_precs, sc_logdets, x, work, lw, terms,
                            -log_alpha):
            move_stats[STAT_REGROUPS_3_TO_2 + 1] += 1
            _write_back(2, clusters, K, members, 0, stop, side, anchors, labels,
                        sc_counts, sc_means, sc_precs, sc_logdets, counts, means, precs, logdets)
            counts[ck] = 0
            K = delete_slot(ck, K, labels, counts, means, precs, logdets)
        return K
    # two clusters (k beside i or j) -> three
    stop = _gather(labels, clusters, 2, anchors, 3, members, 1, rng)
    move_stats[STAT_REGROUPS_2_TO_3] += 1
    if _two_launch_move(X, labels, K, counts, means, precs, logdets, m0, P0, logdet0, tables, rng, n_scans,
                        anchors, 2, 3, clusters, 2, members, 0, 1, stop,
                        side, target, sc_counts, sc_means, sc_precs, sc_logdets, x, work, lw, terms,
                        log_alpha):
        move_stats[STAT_REGROUPS_2_TO_3 + 1] += 1
        clusters[2] = -1
        K = _write_back(3, clusters, K, members, 1, stop, side, anchors, labels,
                        sc_counts, sc_means, sc_precs, sc_logdets, counts, means, precs, logdets)
    return K

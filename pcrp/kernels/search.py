"""numba kernels of the point-estimate search from the draws (salso's approach; pcrp.summaries.partition).

The expected loss of a candidate partition c (cluster sizes n_k) over S weighted draws z_s (cluster sizes m_sl)
needs only the contingency tables n_skl = #{i : c_i = k, z_s(i) = l}:

    N * E[VI]            = sum_k F(n_k) + sum_s w_s sum_l F(m_sl) - 2 sum_s w_s sum_{k,l} F(n_skl),  F(x) = x log2 x
    E[disagreeing pairs] = same with F(x) = x (x - 1) / 2 (Binder's loss before dividing by N (N - 1) / 2).

The tables are held as table[k, s * L + l] (L = the draws' largest K), so item i touches the S cells
cell[i, s] = s * L + z_s(i): moving one item costs O(S) per cluster, and memory is O(N S + K_cap S L) -- never
N x N. ``dF[x] = F(x + 1) - F(x)`` is the change of F when a count grows from x to x + 1.
"""

from typing import NamedTuple

import numpy as np
from numba import njit

from .rng import randint, shuffle


class DrawCells(NamedTuple):
    """What a search reads of the draws, fixed for the search (built by pcrp.summaries.partition.DrawTables)."""

    cell: np.ndarray  # (N, S) int32: item i's cell s * L + z_s(i) in each draw s (L: the draws' largest K)
    w: np.ndarray  # (S,) the draws' weights, summing to 1
    dF: np.ndarray  # (N + 1,) dF[x] = F(x + 1) - F(x)
    n_table: int  # S * L, the cells of one cluster's row of the tables
    item_type: np.ndarray  # (N,) int64: items of one type have equal cells and share their cached costs; -1: none
    n_types: int  # the types (0: no cost cache)


class SearchSettings(NamedTuple):
    """How one randomised greedy run searches."""

    cap: int  # the most clusters
    max_scans: int  # reallocation scans (each item moved to its best cluster), until none moves
    zealous_attempts: int  # clusters dissolved and reallocated item by item, kept only if the loss drops


# The helpers below are inlined by numba (inline="always") and index table[k, c] rather than take a view
# table[k]. Each call of a kernel that is not inlined, each view and each tuple of arrays chosen at run time cost
# two atomic reference counts; together they made the scans 3-4x slower at a million items, and even a layer of
# inlined calls between the scan and its cache kept them 1.9x slower (docs/records/million_points.md).


@njit(cache=True, nogil=True, inline="always")
def _cost(i, k, own, table, sizes, cell, w, dF):
    """Change of the numerator above if item i joins cluster k, whose counts hold i ``own`` times: 0 (i is
    elsewhere, or unassigned) or 1 (i is in k: the cost of staying, from the counts as they are, each less one,
    without writing them -- the float :func:`_remove` would give negated, from the same operations in order)."""
    total = 0.0
    for s in range(cell.shape[1]):
        total += w[s] * dF[table[k, cell[i, s]] - own]
    return dF[sizes[k] - own] - 2.0 * total


@njit(cache=True, nogil=True, inline="always")
def _put(i, k, table, sizes, cell):
    """Put item i into cluster k without the cost (:func:`_best_move` has just computed it: the same float)."""
    sizes[k] += 1
    for s in range(cell.shape[1]):
        table[k, cell[i, s]] += 1


@njit(cache=True, nogil=True, inline="always")
def _add(i, k, table, sizes, cell, w, dF):
    """Put item i into cluster k; returns the change of the numerator."""
    delta = _cost(i, k, 0, table, sizes, cell, w, dF)
    _put(i, k, table, sizes, cell)
    return delta


@njit(cache=True, nogil=True, inline="always")
def _remove(i, k, table, sizes, cell, w, dF):
    """Take item i out of cluster k; returns the change of the numerator."""
    sizes[k] -= 1
    for s in range(cell.shape[1]):
        table[k, cell[i, s]] -= 1
    return -_cost(i, k, 0, table, sizes, cell, w, dF)


@njit(cache=True, nogil=True, inline="always")
def _move(i, old, k, table, sizes, cell):
    """Move item i from cluster ``old`` to cluster ``k`` in the tables."""
    sizes[old] -= 1
    sizes[k] += 1
    for s in range(cell.shape[1]):
        c = cell[i, s]
        table[old, c] -= 1
        table[k, c] += 1


# The cost cache (:func:`greedy_search`). Items with the same cells (the same cluster in every draw: at large N
# most of them) have the same cost of joining, or of staying in, a cluster in the same state of the tables, to the
# bit: the same operations on the same numbers. So a cost is computed once per (item type, cluster) and read back
# by every item of that type until the cluster's counts change; each change stamps the cluster with a new value of
# a clock. The search's decisions, labels and value are those of the search without the cache, bit for bit.
# The cache is three arrays, passed on as they are (not a tuple: see the note above): costs (2, T, cap) float64,
# a type's cost of joining ([JOIN]) or staying in ([STAY]) cluster k; at (2, T, cap) int64, the stamp each was
# computed at (-1: never); stamp (cap + 1,) int64, each cluster's last change, and the clock in stamp[cap].
JOIN = 0
STAY = 1


@njit(cache=True, nogil=True)
def _new_cache(n_types, cap):
    """(costs, at, stamp) of an empty cache for ``n_types`` item types and ``cap`` clusters."""
    costs = np.empty((2, n_types, cap))
    at = np.full((2, n_types, cap), -1, dtype=np.int64)
    stamp = np.zeros(cap + 1, dtype=np.int64)
    return costs, at, stamp


@njit(cache=True, nogil=True, inline="always")
def _changed(k, stamp):
    """Cluster k's counts changed: the costs cached for it are stale."""
    clock = stamp.shape[0] - 1
    stamp[clock] += 1
    stamp[k] = stamp[clock]


@njit(cache=True, nogil=True, inline="always")
def _best_move(i, old, table, sizes, cell, w, dF, item_type, costs, at, stamp):
    """(cluster, cost, cost of staying) for item i of cluster ``old`` (-1: unassigned) as if i had left ``old``
    (which then counts as empty when i is its only item), without touching the tables: the cheapest occupied
    cluster, or the first empty slot (cost 0, since F(1) - F(0) = 0 for both losses and the item's overlaps would
    all be 0) when it is cheaper. Each cost is read from the cache when i's type has it for the cluster's present
    counts, else computed (:func:`_cost`) and cached."""
    t = item_type[i]
    best_k, best = -1, np.inf
    empty = -1
    stay = 0.0
    for k in range(sizes.shape[0]):
        staying = k == old
        if sizes[k] == (1 if staying else 0):  # empty, or i alone
            if empty < 0:
                empty = k
            continue
        kind = STAY if staying else JOIN
        if t >= 0 and at[kind, t, k] == stamp[k]:
            c = costs[kind, t, k]
        else:
            c = _cost(i, k, 1 if staying else 0, table, sizes, cell, w, dF)
            if t >= 0:
                costs[kind, t, k] = c
                at[kind, t, k] = stamp[k]
        if staying:
            stay = c
        if c < best:
            best_k, best = k, c
    if empty >= 0 and (best_k < 0 or 0.0 < best):
        return empty, 0.0, stay
    return best_k, best, stay


@njit(cache=True, nogil=True)
def greedy_search(draws, settings, start, state):
    """One randomised greedy run: (labels (N,), numerator of the expected loss without the draws' constant).

    draws: :class:`DrawCells`; settings: :class:`SearchSettings`; start: (N,) int64 labels to start from, or all -1
    to allocate the items one by one in random order; state: the xoshiro state (uint64[4], advanced in place). With
    item types (draws.n_types > 0) the costs are cached per type (see above); the result is the same without them
    (item_type all -1, n_types 0), bit for bit.
    """
    # every array out of its structure once: the scans below read them per item (docs/design.md section 2)
    cell, w, dF, item_type = draws.cell, draws.w, draws.dF, draws.item_type
    cap, max_scans, zealous_attempts = settings.cap, settings.max_scans, settings.zealous_attempts
    N = cell.shape[0]
    table = np.zeros((cap, draws.n_table), dtype=np.int32)
    sizes = np.zeros(cap, dtype=np.int64)
    labels = np.empty(N, dtype=np.int64)
    costs, at, stamp = _new_cache(draws.n_types, cap)
    value = 0.0
    order = np.arange(N)
    if start[0] >= 0:
        for i in range(N):
            labels[i] = start[i]
            value += _add(i, start[i], table, sizes, cell, w, dF)
    else:
        shuffle(state, order)
        for j in range(N):
            i = order[j]
            k, cost, _ = _best_move(i, -1, table, sizes, cell, w, dF, item_type, costs, at, stamp)
            labels[i] = k
            value += cost
            _put(i, k, table, sizes, cell)
            _changed(k, stamp)
    for _ in range(max_scans):
        shuffle(state, order)
        moved = False
        for j in range(N):  # an item that stays leaves the tables untouched: O(K S) reads, no writes
            i = order[j]
            old = labels[i]
            k, cost, stay = _best_move(i, old, table, sizes, cell, w, dF, item_type, costs, at, stamp)
            if sizes[old] == 1:
                stay = 0.0  # (its own cluster empties: the cost of an empty slot)
            value += -stay
            value += cost
            if k != old:
                _move(i, old, k, table, sizes, cell)
                _changed(old, stamp)
                _changed(k, stamp)
                labels[i] = k
                moved = True
        if not moved:
            break
    members = np.empty(N, dtype=np.int64)
    # the tables as they were before an attempt: a rejected attempt restores them whole (K x S L integers)
    # rather than moving its items back one by one, O(|cluster| S) -- the same state and labels either way
    saved_table = np.empty((cap, draws.n_table), dtype=np.int32)
    saved_sizes = np.empty(cap, dtype=np.int64)
    saved_stamp = np.empty(cap, dtype=np.int64)
    for _ in range(zealous_attempts):
        n_occupied = 0
        for k in range(cap):
            if sizes[k] > 0:
                n_occupied += 1
        if n_occupied < 2:
            break
        pick = randint(state, n_occupied)
        target = -1
        for k in range(cap):
            if sizes[k] > 0:
                if pick == 0:
                    target = k
                    break
                pick -= 1
        m = 0
        for i in range(N):
            if labels[i] == target:
                members[m] = i
                m += 1
        chosen = members[:m].copy()
        shuffle(state, chosen)
        before = value
        _copy_state(table, sizes, stamp, saved_table, saved_sizes, saved_stamp)
        for j in range(m):
            value += _remove(chosen[j], target, table, sizes, cell, w, dF)
        _changed(target, stamp)
        new_labels = np.empty(m, dtype=np.int64)
        for j in range(m):
            i = chosen[j]
            k, cost, _ = _best_move(i, -1, table, sizes, cell, w, dF, item_type, costs, at, stamp)
            new_labels[j] = k
            value += cost
            _put(i, k, table, sizes, cell)
            _changed(k, stamp)
        if value < before - 1e-9:
            for j in range(m):
                labels[chosen[j]] = new_labels[j]
        else:  # rejected: back to the tables, and the value, from before the attempt
            # each cluster's counts as they were at its stamp, so its cached costs hold; the clock (stamp[cap]) runs
            # on, so no later change reuses a stamp given during the attempt
            _copy_state(saved_table, saved_sizes, saved_stamp, table, sizes, stamp)
            value = before
    return labels, value


@njit(cache=True, nogil=True)
def _copy_state(table, sizes, stamp, to_table, to_sizes, to_stamp):
    """The tables, the sizes and each cluster's stamp into the other three (the clock, stamp[cap], is not copied):
    element by element, since ``a[:] = b`` makes numba compile broadcasting and its error messages."""
    for k in range(table.shape[0]):
        for c in range(table.shape[1]):
            to_table[k, c] = table[k, c]
        to_sizes[k] = sizes[k]
        to_stamp[k] = stamp[k]


@njit(cache=True, nogil=True)
def _row_hashes(cell):
    """A 64-bit hash of each row of ``cell`` (N, S)."""
    N, S = cell.shape
    out = np.empty(N, dtype=np.uint64)
    for i in range(N):
        h = np.uint64(0x9E3779B97F4A7C15)
        for s in range(S):
            h = (h ^ np.uint64(cell[i, s])) * np.uint64(0x100000001B3)
            h ^= h >> np.uint64(29)
        out[i] = h
    return out


@njit(cache=True, nogil=True)
def equal_rows(cell):
    """(group (N,) int64, number of groups): items in one group have equal rows of ``cell`` (N, S). Rows are
    grouped by a hash and each compared with its group's first row, so two rows share a group only when equal (a
    hash collision leaves a row in a group of its own). O(N S) and a sort of N hashes."""
    N, S = cell.shape
    hashes = _row_hashes(cell)
    order = np.argsort(hashes)
    group = np.empty(N, dtype=np.int64)
    n_groups = 0
    j = 0
    while j < N:
        first = order[j]
        group[first] = n_groups
        lead = n_groups
        n_groups += 1
        j += 1
        while j < N and hashes[order[j]] == hashes[first]:
            i = order[j]
            same = True
            for s in range(S):
                if cell[i, s] != cell[first, s]:
                    same = False
                    break
            if same:
                group[i] = lead
            else:
                group[i] = n_groups
                n_groups += 1
            j += 1
    return group, n_groups


@njit(cache=True, nogil=True)
def loss_numerator(labels, draws, cap):
    """The numerator of the expected loss of ``labels`` (N,) (clusters 0..cap-1) under ``draws`` (:class:`DrawCells`),
    without the draws' constant."""
    cell, w, dF = draws.cell, draws.w, draws.dF
    table = np.zeros((cap, draws.n_table), dtype=np.int32)
    sizes = np.zeros(cap, dtype=np.int64)
    value = 0.0
    for i in range(labels.shape[0]):
        value += _add(i, labels[i], table, sizes, cell, w, dF)
    return value


@njit(cache=True, nogil=True)
def relabel_row(row, code, out):
    """Relabel ``row`` (N,) to 0..K - 1 in order of first appearance into ``out`` (N,); returns K. ``code`` is
    scratch indexed by label value (all -1 on entry and again on return)."""
    k = 0
    for i in range(row.shape[0]):
        z = row[i]
        if code[z] < 0:
            code[z] = k
            k += 1
        out[i] = code[z]
    for i in range(row.shape[0]):
        code[row[i]] = -1
    return k


@njit(cache=True, nogil=True)
def compact_rows(draws, out):
    """Relabel each row of ``draws`` (S, N) to 0..K_s - 1 in order of first appearance into ``out``; returns K (S,).
    Labels must lie in 0..N - 1."""
    S, N = draws.shape
    K = np.empty(S, dtype=np.int64)
    code = np.full(N, -1, dtype=np.int64)
    for s in range(S):
        K[s] = relabel_row(draws[s], code, out[s])
    return K

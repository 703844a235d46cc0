"""numba kernels of the point-estimate search from the draws (salso's approach; pcrp.partition).

The expected loss of a candidate partition c (cluster sizes n_k) over S weighted draws z_s (cluster sizes m_sl)
needs only the contingency tables n_skl = #{i : c_i = k, z_s(i) = l}:

    N * E[VI]            = sum_k F(n_k) + sum_s w_s sum_l F(m_sl) - 2 sum_s w_s sum_{k,l} F(n_skl),  F(x) = x log2 x
    E[disagreeing pairs] = same with F(x) = x (x - 1) / 2 (Binder's loss before dividing by N (N - 1) / 2).

The tables are held as table[k, s * L + l] (L = the draws' largest K), so item i touches the S cells
cell[i, s] = s * L + z_s(i): moving one item costs O(S) per cluster, and memory is O(N S + K_cap S L) -- never
N x N. ``dF[x] = F(x + 1) - F(x)`` is the change of F when a count grows from x to x + 1.
"""

import numpy as np
from numba import njit

from .rng import randint, shuffle


@njit(cache=True, nogil=True)
def _join_cost(i, k, table, sizes, cell, w, dF):
    """Change of the numerator above if (unassigned) item i joins cluster k."""
    total = 0.0
    row = table[k]
    for s in range(cell.shape[1]):
        total += w[s] * dF[row[cell[i, s]]]
    return dF[sizes[k]] - 2.0 * total


@njit(cache=True, nogil=True)
def _put(i, k, table, sizes, cell):
    """Put item i into cluster k without the cost (:func:`_best` has just computed it: the same float)."""
    sizes[k] += 1
    row = table[k]
    for s in range(cell.shape[1]):
        row[cell[i, s]] += 1


@njit(cache=True, nogil=True)
def _add(i, k, table, sizes, cell, w, dF):
    """Put item i into cluster k; returns the change of the numerator."""
    delta = _join_cost(i, k, table, sizes, cell, w, dF)
    _put(i, k, table, sizes, cell)
    return delta


@njit(cache=True, nogil=True)
def _remove(i, k, table, sizes, cell, w, dF):
    """Take item i out of cluster k; returns the change of the numerator."""
    sizes[k] -= 1
    row = table[k]
    for s in range(cell.shape[1]):
        row[cell[i, s]] -= 1
    return -_join_cost(i, k, table, sizes, cell, w, dF)


@njit(cache=True, nogil=True)
def _best(i, table, sizes, cell, w, dF):
    """(cluster, cost) that (unassigned) item i should join: the cheapest occupied cluster, or the first empty slot
    (cost 0, since F(1) - F(0) = 0 for both losses and the item's overlaps would all be 0) when it is cheaper."""
    k, cost, _ = _best_move(i, -1, table, sizes, cell, w, dF)
    return k, cost


@njit(cache=True, nogil=True)
def _leave_cost(i, old, table, sizes, cell, w, dF):
    """Change of the numerator if item i (in cluster ``old``) rejoined ``old`` after leaving it: the
    :func:`_join_cost` that :func:`_remove` would return negated, computed from the counts as they are (each less
    one) without writing them -- the same operations in the same order, so the same float."""
    total = 0.0
    row = table[old]
    for s in range(cell.shape[1]):
        total += w[s] * dF[row[cell[i, s]] - 1]
    return dF[sizes[old] - 1] - 2.0 * total


@njit(cache=True, nogil=True)
def _best_move(i, old, table, sizes, cell, w, dF):
    """(cluster, cost, cost of staying) for item i of cluster ``old`` (-1: unassigned) as if i had left ``old``
    (which then counts as empty when i is its only item), without touching the tables: the cheapest occupied
    cluster, or the first empty slot (cost 0, since F(1) - F(0) = 0 for both losses and the item's overlaps would
    all be 0) when it is cheaper."""
    best_k, best = -1, np.inf
    empty = -1
    stay = 0.0
    for k in range(sizes.shape[0]):
        if k == old:
            if sizes[k] == 1:
                if empty < 0:
                    empty = k
                continue
            stay = _leave_cost(i, old, table, sizes, cell, w, dF)
            c = stay
        else:
            if sizes[k] == 0:
                if empty < 0:
                    empty = k
                continue
            c = _join_cost(i, k, table, sizes, cell, w, dF)
        if c < best:
            best_k, best = k, c
    if empty >= 0 and (best_k < 0 or 0.0 < best):
        return empty, 0.0, stay
    return best_k, best, stay


@njit(cache=True, nogil=True)
def _move(i, old, k, table, sizes, cell):
    """Move item i from cluster ``old`` to cluster ``k`` in the tables."""
    sizes[old] -= 1
    sizes[k] += 1
    row_old, row_new = table[old], table[k]
    for s in range(cell.shape[1]):
        row_old[cell[i, s]] -= 1
        row_new[cell[i, s]] += 1


@njit(cache=True, nogil=True)
def greedy_search(cell, w, dF, cap, start, n_table, state, max_scans, zealous_attempts):
    """One randomised greedy run: (labels (N,), numerator of the expected loss without the draws' constant).

    cell: (N, S) int cells; w: (S,) weights summing to 1; dF: (N + 1,) increments of F; cap: most clusters;
    start: (N,) labels to start from, or all -1 to allocate the items one by one in random order;
    n_table: S * L; state: the xoshiro state (uint64[4], advanced in place); max_scans: reallocation scans
    (each item moved to its best cluster, until none moves); zealous_attempts: clusters dissolved and
    reallocated item by item, kept only if the loss drops.
    """
    N = cell.shape[0]
    table = np.zeros((cap, n_table), dtype=np.int32)
    sizes = np.zeros(cap, dtype=np.int64)
    labels = np.empty(N, dtype=np.int64)
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
            k, cost = _best(i, table, sizes, cell, w, dF)
            labels[i] = k
            value += cost
            _put(i, k, table, sizes, cell)
    for _ in range(max_scans):
        shuffle(state, order)
        moved = False
        for j in range(N):  # an item that stays leaves the tables untouched: O(K S) reads, no writes
            i = order[j]
            old = labels[i]
            k, cost, stay = _best_move(i, old, table, sizes, cell, w, dF)
            if sizes[old] == 1:
                stay = 0.0  # (its own cluster empties: the cost of an empty slot)
            value += -stay
            value += cost
            if k != old:
                _move(i, old, k, table, sizes, cell)
                labels[i] = k
                moved = True
        if not moved:
            break
    members = np.empty(N, dtype=np.int64)
    # the tables as they were before an attempt: a rejected attempt restores them whole (K x S L integers)
    # rather than moving its items back one by one, O(|cluster| S) -- the same state and labels either way
    saved_table = np.empty_like(table)
    saved_sizes = np.empty_like(sizes)
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
        saved_table[:] = table
        saved_sizes[:] = sizes
        for j in range(m):
            value += _remove(chosen[j], target, table, sizes, cell, w, dF)
        new_labels = np.empty(m, dtype=np.int64)
        for j in range(m):
            i = chosen[j]
            k, cost = _best(i, table, sizes, cell, w, dF)
            new_labels[j] = k
            value += cost
            _put(i, k, table, sizes, cell)
        if value < before - 1e-9:
            for j in range(m):
                labels[chosen[j]] = new_labels[j]
        else:  # rejected: back to the tables, and the value, from before the attempt
            table[:] = saved_table
            sizes[:] = saved_sizes
            value = before
    return labels, value


@njit(cache=True, nogil=True)
def loss_numerator(labels, cell, w, dF, cap, n_table):
    """The numerator of the expected loss of ``labels`` (N,) (clusters 0..cap-1), without the draws' constant."""
    table = np.zeros((cap, n_table), dtype=np.int32)
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

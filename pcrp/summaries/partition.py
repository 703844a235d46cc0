"""Partition summaries of label draws: the posterior similarity matrix and a point estimate.

- **Similarity matrix** (co-clustering probabilities): psm[i, j] = P(z_i = z_j | X), estimated by
  the (weighted) share of draws in which i and j share a cluster.
- **Point estimate**: the partition c minimising the posterior expected loss E[L(c, Z) | X],
  found by a SALSO-style randomised greedy search (Dahl, Johnson & Mueller 2022, JCGS 31(4)):
  several runs (in threads), each starting from a sequential allocation in random order or from a random draw,
  improved by reallocation scans (each item moved to its best cluster until nothing changes) and
  "zealous" updates (a whole cluster dissolved and its items reallocated one by one; kept only if
  the loss drops); the best run wins. The number of clusters is capped at the largest K among the
  draws, as salso does. The search works from the draws, never from the N x N similarity matrix: both
  losses' expectations are sums over per-draw contingency tables of the candidate against each draw
  (:class:`DrawTables`, :mod:`pcrp.kernels.search`), O(N x draws) memory, each item move O(draws) per
  cluster. Identical draws are merged first with their summed weights (exactly), so while the draws hold few
distinct partitions the search minimises the expected loss over all of them; beyond its budget
(:func:`search_draws`) it reads that many draws, evenly spaced.

Losses (both 0 when c equals the truth):
- ``"vi"``: variation of information in bits (as :func:`pcrp.summaries.summary.vi`), mean_s VI(c, z_s) (the exact
  expectation, not the psm-based "VI lower bound", which is a different criterion).
- ``"binder"``: Binder's loss with equal costs, as the share of the N (N - 1) / 2 pairs on which c
  and Z disagree; its expectation is linear in the similarity matrix,
  sum_{i<j} [c_ij (1 - p_ij) + (1 - c_ij) p_ij] / (N (N - 1) / 2), and equals the same contingency-table
  sum as VI with x (x - 1) / 2 in place of x log2 x.

The similarity matrix is an explicit request (:func:`similarity_matrix`: 4 N^2 bytes).
"""

from dataclasses import dataclass

import numpy as np

LOSSES = ("vi", "binder")
DEFAULT_LOSS = LOSSES[0]  # variation of information

# Default working-memory budget of similarity_matrix (beyond its N x N result and the draws).
CHUNK_BYTES = 64 * 2**20
# The one integer width in which label draws reach the kernels (runs store them in 16 or 32 bits, users and the
# ranks below give 64): numba compiles a kernel once per width it is called with, so draws of another width are
# converted, a chunk of at most DISTINCT_CHUNK_CELLS labels at a time.
DRAW_DTYPE = np.int32


def _kernels():
    """The point estimate's kernels (pcrp.kernels.search), once a compile of them in a separate process for this one
    has finished (pcrp.kernels.apart: a run compiles them beside its sampling)."""
    from ..kernels import apart, search

    apart.wait_for("search")
    return search


def _in_draw_width(draws):
    """``draws`` (labels 0 .. 2^31 - 1) as C-contiguous DRAW_DTYPE, copied only when not already."""
    return np.ascontiguousarray(draws, dtype=DRAW_DTYPE)


def _as_draws(draws):
    """(S, N) int64 draws from (S, N) or (C, S, N) labels."""
    draws = np.asarray(draws)
    if draws.ndim == 3:
        draws = draws.reshape(-1, draws.shape[-1])
    if draws.ndim != 2 or draws.shape[0] < 1 or draws.shape[1] < 1:
        raise ValueError("label draws must be an (n_draws, N) or (n_chains, n_draws, N) array "
                         f"(got shape {draws.shape}).")
    if draws.dtype.kind not in "iu":
        raise ValueError(f"label draws must be integers (got dtype {draws.dtype}).")
    return draws


def _as_weights(weights, n_draws):
    if weights is None:
        return np.full(n_draws, 1.0 / n_draws)
    weights = np.asarray(weights, dtype=float)
    if weights.shape != (n_draws,) or not np.all(np.isfinite(weights)) or np.any(weights < 0) or weights.sum() <= 0:
        raise ValueError(f"weights must be {n_draws} finite non-negative numbers with a positive sum.")
    return weights / weights.sum()


def _ranks_by_row(draws):
    """(S, N) draws with each row's label values replaced by their ranks within that row (0..N - 1, DRAW_DTYPE), for
    the kernels that index by label value (:func:`pcrp.kernels.search.compact_rows` needs labels below N)."""
    draws = np.asarray(draws)
    order = np.argsort(draws, axis=1, kind="stable")
    ordered = np.take_along_axis(draws, order, axis=1)
    new = np.ones(ordered.shape, dtype=DRAW_DTYPE)
    new[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    out = np.empty(draws.shape, dtype=DRAW_DTYPE)
    np.put_along_axis(out, order, np.cumsum(new, axis=1) - 1, axis=1)
    return out


def compact_labels(draws):
    """Relabel each row of (S, N) draws to 0..K_s - 1 in order of first appearance; returns (int32 labels, K (S,)).
    O(S N) time (a numba pass), whatever the label values."""
    compact_rows = _kernels().compact_rows
    draws = _as_draws(draws)
    S, N = draws.shape
    out = np.empty((S, N), dtype=np.int32)
    n_clusters = np.empty(S, dtype=np.int64)
    rows = max(1, DISTINCT_CHUNK_CELLS // N)
    for start in range(0, S, rows):  # a chunk of rows at a time in the kernels' width
        part = draws[start:start + rows]
        if part.min() < 0 or part.max() >= N:  # the kernel indexes by label: map arbitrary values to 0..N-1 first
            part = _ranks_by_row(part)
        n_clusters[start:start + rows] = compact_rows(_in_draw_width(part), out[start:start + rows])
    return out, n_clusters


def unique_draws(draws, weights=None):
    """Identical partitions merged: (distinct compact draws (U, N) int32 in order of first appearance, summed
    weights (U,))."""
    draws = _as_draws(draws)
    weights = _as_weights(weights, draws.shape[0])
    _, summed, compact = _distinct([draws], weights, keep=True)
    return compact, summed


def _compact_row(row):
    """One draw relabelled to 0..K - 1 in order of first appearance (int32)."""
    relabel_row = _kernels().relabel_row
    row = np.asarray(row)
    if row.min() < 0 or row.max() >= row.shape[0]:  # the kernel indexes by label value
        row = _ranks_by_row(row[None])[0]
    out = np.empty(row.shape[0], dtype=np.int32)
    relabel_row(_in_draw_width(row), np.full(row.shape[0], -1, dtype=np.int64), out)
    return out


# Draws compacted per chunk while merging identical ones: at most this many labels at a time.
DISTINCT_CHUNK_CELLS = 4_000_000


def _distinct(blocks, weights, limit=None, keep=False):
    """Identical partitions among the draws of ``blocks`` (a list of (S_b, N) integer arrays, read in place) merged
    exactly: (global indices of the first draw of each distinct partition, in order of first appearance; their summed
    ``weights``), or None as soon as there are more than ``limit`` distinct ones. Each draw is relabelled in order of first appearance and keyed by its bytes (by a 16-byte BLAKE2
    digest above 64 labels, a match then confirmed label by label), a chunk of draws at a time: O(N x draws) time and
    O(N x chunk) memory beyond the draws, whatever their number. keep: a third item, the distinct draws so relabelled
    ((U, N) int32, as :func:`_compact_row` gives them), so that the caller need not relabel them again."""
    import hashlib

    compact_rows = _kernels().compact_rows
    N = blocks[0].shape[1]
    by_key, first, summed, kept = {}, [], [], []
    chunk_rows = max(1, DISTINCT_CHUNK_CELLS // max(N, 1))
    offset = 0
    for block in blocks:
        for start in range(0, block.shape[0], chunk_rows):
            part = block[start:start + chunk_rows]
            if part.min() < 0 or part.max() >= N:
                part = _ranks_by_row(part)
            compact = np.empty(part.shape, dtype=np.int32)
            compact_rows(_in_draw_width(part), compact)
            for j in range(compact.shape[0]):
                s = offset + start + j
                row = compact[j]
                key = row.tobytes() if N <= 64 else hashlib.blake2b(row.tobytes(), digest_size=16).digest()
                u = by_key.get(key)
                if u is not None and N > 64 and not np.array_equal(row, _compact_row(_draw(blocks, first[u]))):
                    u = None  # a digest collision (never seen): keep the draw apart under its own key
                    key = row.tobytes()
                    u = by_key.get(key)
                if u is None:
                    if limit is not None and len(first) >= limit:
                        return None
                    by_key[key] = len(first)
                    first.append(s)
                    summed.append(weights[s])
                    if keep:
                        kept.append(row.copy())
                else:
                    summed[u] += weights[s]
        offset += block.shape[0]
    found = np.array(first, dtype=np.int64), np.array(summed)
    return found + (np.stack(kept),) if keep else found


def _draw(blocks, s):
    """Draw number ``s`` counted over the blocks in order."""
    for block in blocks:
        if s < block.shape[0]:
            return block[s]
        s -= block.shape[0]
    raise IndexError(s)


def similarity_matrix(draws, weights=None, chunk_bytes=CHUNK_BYTES):
    """Posterior similarity matrix (N, N) float32: the (weighted) share of draws in which i and j share a cluster.

    draws: (S, N) or (C, S, N) integer labels; weights: optional (S,) draw weights (default equal).
    Each chunk of draws becomes a 0/1 membership matrix M (N, clusters in the chunk) and M M^T is added
    into the result in place by BLAS (syrk, one triangle, or gemm with weights): no N x N temporary.
    Chunks keep M under ``chunk_bytes``, so the working memory beyond the result is about
    max(chunk_bytes, 4 N K_max) bytes (twice that with weights) plus an int32 copy of the draws.
    Unweighted counts are summed exactly (float32 holds integers up to 2**24 draws).
    """
    from scipy.linalg.blas import sgemm, ssyrk  # here: a run that needs no similarity matrix never loads SciPy

    draws = _as_draws(draws)
    S, N = draws.shape
    compact, n_clusters = compact_labels(draws)
    w = None if weights is None else _as_weights(weights, S).astype(np.float32)
    counts = np.zeros((N, N), dtype=np.float32)
    # counts.T is a Fortran-ordered view, the layout BLAS updates in place; syrk fills the upper triangle
    # of counts.T, which is the lower triangle of counts
    target = counts.T
    budget = max(1, int(chunk_bytes) // (4 * N))  # membership columns per chunk
    rows = np.arange(N)
    start = 0
    while start < S:
        stop, columns = start, 0
        while stop < S and (stop == start or columns + n_clusters[stop] <= budget):
            columns += n_clusters[stop]
            stop += 1
        offsets = np.concatenate(([0], np.cumsum(n_clusters[start:stop])[:-1]))
        member = np.zeros((N, columns), dtype=np.float32, order="F")
        for j, s in enumerate(range(start, stop)):
            member[rows, offsets[j] + compact[s]] = 1.0 if w is None else w[s]
        if w is None:
            result = ssyrk(1.0, member, beta=1.0, c=target, overwrite_c=True)
        else:
            ones = np.asfortranarray(member != 0, dtype=np.float32)
            result = sgemm(1.0, member, ones, beta=1.0, c=target, trans_b=True, overwrite_c=True)
        if not np.shares_memory(result, counts):  # a BLAS that could not work in place returned a copy
            target[...] = result
        del member, result  # freed before the next chunk is allocated
        start = stop
    if w is None:
        _mirror_lower(counts, 256)
        counts /= np.float32(S)
    np.fill_diagonal(counts, 1.0)
    return counts


def _mirror_lower(a, rows_per_block):
    """Copy the lower triangle of the square array ``a`` onto its upper triangle, in place, by row blocks
    (temporaries of rows_per_block x N at most)."""
    N = a.shape[0]
    for r0 in range(0, N, rows_per_block):
        r1 = min(N, r0 + rows_per_block)
        a[r0:r1, r1:] = a[r1:, r0:r1].T
        block = a[r0:r1, r0:r1]
        block[...] = np.tril(block) + np.tril(block, -1).T


def _loss_table(loss, n_max):
    """F(x) for x = 0 .. n_max: x log2 x for 'vi' (0 at x = 0), x (x - 1) / 2 for 'binder'."""
    x = np.arange(n_max + 1, dtype=float)
    if loss == "vi":
        return np.where(x > 0, x * np.log2(np.maximum(x, 1)), 0.0)
    return x * (x - 1) / 2





# Points per block while DrawTables writes its (N, S) cells from (S, N) draws.
CELL_BLOCK = 4096
# Memory of one greedy run's cost cache at most (4 arrays of (types, clusters) 8-byte numbers): 16 MiB.
CACHE_BYTES = 16 * 2**20


class DrawTables:
    """What the expected loss of any candidate needs from the draws, in O(N S) memory (never N x N).

    draws: (S, N) compact labels (:func:`compact_labels`), weights (S,) summing to 1. Holds the cells
    cell[i, s] = s * L + z_s(i) (int32, N x S), the increments dF of F, and the draws' own term
    sum_s w_s sum_l F(m_sl). The expected loss of c is (kernel numerator + that constant) / N for 'vi' (bits)
    and / (N (N - 1) / 2) for 'binder' (share of pairs); see :mod:`pcrp.kernels.search`.
    """

    def __init__(self, draws, weights, loss):
        S, N = draws.shape
        self.N, self.loss = N, loss
        self.L = int(draws.max()) + 1
        self.w = np.ascontiguousarray(weights, dtype=np.float64)
        F = _loss_table(loss, N + 1)
        self.dF = np.diff(F)
        self.cell = np.empty((N, S), dtype=np.int32)
        offsets = (np.arange(S, dtype=np.int32) * self.L)[None, :]
        for start in range(0, N, CELL_BLOCK):  # a block of points at a time: the transpose stays in cache
            np.add(draws[:, start:start + CELL_BLOCK].T, offsets, out=self.cell[start:start + CELL_BLOCK])
        m = np.stack([np.bincount(draws[s], minlength=self.L) for s in range(S)])
        self.constant = float(self.w @ F[m].sum(axis=1))
        self.n_table = S * self.L

    def item_types(self, cap):
        """(item_type (N,) int64, T) for :func:`pcrp.kernels.search.greedy_search`: the points that have
        the same cluster in every draw (equal rows of ``cell``) form a type, whose costs a run computes once per
        state of a cluster instead of once per point. Only types of two or more points are cached, the largest
        first, and at most what fits CACHE_BYTES for ``cap`` clusters; every other point is of type -1."""
        group, n_groups = _kernels().equal_rows(self.cell)
        counts = np.bincount(group, minlength=n_groups)
        shared = np.flatnonzero(counts >= 2)
        shared = shared[np.argsort(-counts[shared], kind="stable")][:max(0, CACHE_BYTES // (32 * max(cap, 1)))]
        type_of_group = np.full(n_groups, -1, dtype=np.int64)
        type_of_group[shared] = np.arange(shared.size)
        return type_of_group[group], int(shared.size)

    def cells(self, cap=None):
        """The draws as a search reads them (:class:`pcrp.kernels.search.DrawCells`): with ``cap`` clusters, its
        item types (:meth:`item_types`) for the cost cache; without, none."""
        item_type, n_types = self.item_types(cap) if cap is not None else (np.full(self.N, -1, dtype=np.int64), 0)
        return _kernels().DrawCells(self.cell, self.w, self.dF, int(self.n_table), item_type, int(n_types))

    @property
    def denominator(self):
        return float(self.N) if self.loss == "vi" else max(self.N * (self.N - 1) / 2, 1.0)

    def loss_of(self, numerator):
        return max((numerator + self.constant) / self.denominator, 0.0)

    def expected_loss(self, labels):
        """Posterior expected loss of ``labels`` (N,) under the draws."""
        from .summary import sorted_codes

        codes, _ = sorted_codes(labels)
        return self.loss_of(_kernels().loss_numerator(codes, self.cells(), int(codes.max()) + 1))


def expected_vi(labels, draws, weights=None):
    """Posterior expected VI (bits) of ``labels`` (N,): the weighted mean of VI(labels, z_s) over the draws, one
    draw at a time (:func:`pcrp.summaries.summary.vi`; the reference for :func:`expected_loss`)."""
    from .summary import vi

    draws = _as_draws(draws)
    w = _as_weights(weights, draws.shape[0])
    return float(sum(ws * vi(labels, z) for ws, z in zip(w, draws) if ws > 0))


def expected_binder(labels, psm):
    """Posterior expected Binder loss of ``labels`` (N,) given the similarity matrix psm (N, N):
    the expected share of pairs i < j on which the partition and Z disagree (0 for N = 1). The reference for
    :func:`expected_loss`, which needs no N x N matrix."""
    labels = np.asarray(labels)
    psm = np.asarray(psm, dtype=float)
    N = labels.shape[0]
    if N < 2:
        return 0.0
    same = labels[:, None] == labels[None, :]
    disagree = np.where(same, 1.0 - psm, psm)
    upper = np.triu_indices(N, k=1)
    return float(disagree[upper].sum() / upper[0].size)


def expected_loss(labels, draws, loss=DEFAULT_LOSS, weights=None, psm=None):
    """Posterior expected ``loss`` ('vi' or 'binder') of ``labels`` (N,) under the (weighted) draws (S, N) or
    (C, S, N), one draw's contingency table at a time (:mod:`pcrp.kernels.expected_loss`: O(N S) time, O(N + K L)
    memory, the draws read in place). ``psm`` is accepted for older callers and not needed."""
    _check_loss(loss)
    draws = _as_draws(draws)
    return _streamed_loss(labels, [draws], _as_weights(weights, draws.shape[0]), loss)


def _streamed_loss(labels, blocks, weights, loss):
    """Expected loss of ``labels`` (N,) over the draws of ``blocks`` (a list of (S_b, N) integer arrays, read in
    place) with ``weights`` (sum of S_b,) summing to 1."""
    from .summary import sorted_codes

    _kernels()  # the same group as the search's
    from ..kernels.expected_loss import expected_numerator

    codes, _ = sorted_codes(labels)
    N = codes.shape[0]
    F = _loss_table(loss, N)
    numerator, start = 0.0, 0
    rows = max(1, DISTINCT_CHUNK_CELLS // N)
    for block in blocks:
        if block.min() < 0:
            raise ValueError("label draws must be integers >= 0.")
        for first in range(0, block.shape[0], rows):  # a chunk of draws at a time in the kernels' width
            part = block[first:first + rows]
            if part.max() >= 4 * N:  # the kernel holds a table indexed by label value: map far-off values first
                part = np.unique(part, return_inverse=True)[1].reshape(part.shape)
            numerator += expected_numerator(codes, int(codes.max()) + 1, _in_draw_width(part),
                                            weights[start + first:start + first + part.shape[0]], F)
        start += block.shape[0]
    denominator = float(N) if loss == "vi" else max(N * (N - 1) / 2, 1.0)
    return max(numerator / denominator, 0.0)


def _check_loss(loss):
    if loss not in LOSSES:
        raise ValueError(f"loss must be one of {', '.join(LOSSES)} (got {loss!r}).")


@dataclass
class PointEstimate:
    """A point-estimate partition and how it was found.

    labels: (N,) int64 clusters 0..K-1, numbered by size (0 = largest).
    expected_loss: its posterior expected loss (bits for 'vi', share of pairs for 'binder') under all the draws.
    loss: 'vi' or 'binder'; n_runs: greedy runs tried; n_draws: kept draws the search read (all of them, through
        the distinct ones, or evenly spaced over them when they held more distinct partitions than its budget);
        n_draws_total: kept draws given; n_distinct: distinct partitions among the draws the search read.
    """

    labels: np.ndarray
    expected_loss: float
    loss: str
    n_runs: int
    n_draws: int = 0
    n_draws_total: int = 0
    n_distinct: int = 0

    @property
    def n_clusters(self):
        return int(self.labels.max()) + 1


def _by_size(labels):
    """Labels renumbered 0..K-1 by cluster size, largest first, ties by first appearance: one partition, one
    labelling, whichever ids the search happened to give its clusters."""
    ids, first, counts = np.unique(labels, return_index=True, return_counts=True)
    order = ids[np.lexsort((first, -counts))]
    rank = np.empty(int(labels.max()) + 1, dtype=np.int64)
    rank[order] = np.arange(order.size)
    return rank[labels]


# The search's budget. Identical draws are merged first (every draw given, exactly: pcrp.summaries.partition._distinct), so
# a posterior that visits few partitions (small N, long chains) is searched with the exact weight of each. The
# search then reads at most search_draws(N, distinct) draws: every distinct draw while there are at most
# max(MAX_SEARCH_DRAWS, SEARCH_WORK_CELLS // N) of them (N = 2,000: 800, the default run's kept draws; N <= 9, the
# exact cases: every partition there is), and never more than SEARCH_CELLS // N (but at least MIN_SEARCH_DRAWS),
# so that its cells (N x draws, int32) take at most 4 * SEARCH_CELLS = 64 MB (N = 20,000: 200 draws; 100,000: 160;
# 1,000,000: 50). Beyond that budget it reads that many draws evenly spaced over all of them, merged the same way.
# One reallocation scan costs about N x draws x K table reads; `python bench/point_estimate_budget.py` times it.
# The expected loss it reports is over every draw given (one O(N x draws) pass when the search read fewer).
# Runs: 16 (salso's default) while N x draws <= SMALL_SEARCH, else 8. Zealous attempts per run: ZEALOUS_ATTEMPTS
# (salso's default) up to ZEALOUS_MAX_N points, none above (docs/design.md section 1.8: at that size each attempt
# costs about a scan of its cluster and none was kept on any large problem measured; tests/test_partition.py).
SEARCH_CELLS = 16_000_000
SEARCH_WORK_CELLS = 1_600_000
MAX_SEARCH_DRAWS = 200
MIN_SEARCH_DRAWS = 50
SMALL_SEARCH = 1_000_000
ZEALOUS_ATTEMPTS = 10
ZEALOUS_MAX_N = 20_000


def search_draws(n_points, n_draws, max_draws=None):
    """Draws the point-estimate search reads for ``n_draws`` (distinct) draws of ``n_points`` points (see above)."""
    if max_draws is None:
        n_points = max(n_points, 1)
        memory = max(MIN_SEARCH_DRAWS, SEARCH_CELLS // n_points)
        limit = min(memory, max(MAX_SEARCH_DRAWS, SEARCH_WORK_CELLS // n_points))
    else:
        limit = int(max_draws)
    return min(n_draws, max(1, limit))


def point_estimate(draws, loss=DEFAULT_LOSS, *, weights=None, psm=None, n_runs=None, max_scans=50, zealous_attempts=None,
                   max_clusters=None, seed=0, max_draws=None, n_jobs=-1, chains=None):
    """Partition minimising the posterior expected ``loss`` by SALSO-style randomised greedy search from the draws.

    draws: (S, N) or (C, S, N) integer labels (identical draws are merged first); weights: optional
        (S,) draw weights, e.g. exact posterior probabilities.
    loss: 'vi' (default) or 'binder'. Both are computed from per-draw contingency tables (salso's approach,
        :mod:`pcrp.kernels.search`): O(N S) memory, no similarity matrix (``psm`` is accepted for older callers
        and not used).
    n_runs: independent greedy runs (default 16, or 8 when N x draws used > SMALL_SEARCH); half start from a
        sequential allocation of the items in random order, half from a randomly chosen draw. max_scans: reallocation scans per run;
        zealous_attempts: cluster dissolutions tried per run (default ZEALOUS_ATTEMPTS, or none above ZEALOUS_MAX_N
        points: see the budget above). max_clusters: cap on K (default: the
        largest K among the draws). seed: the search's random seed (the result does not depend on n_jobs).
    max_draws: distinct draws the search may read (default :func:`search_draws` for unweighted draws, all of
        them with ``weights``, which describe a distribution rather than a chain). Identical draws are merged first,
        with their summed weights, so while the draws hold at most that many distinct partitions the search
        minimises the expected loss over every draw given, exactly; beyond it, it reads that many draws evenly
        spaced. The expected loss reported is over all the draws given. n_jobs: threads for the runs (-1 = all cores; the kernels release the GIL).
    chains: with (C, S, N) draws, the chains to use (default all); their draws are read in place, never copied
        whole (only the draws the search uses are), so a mode's point estimate needs no copy of its chains.
    """
    import os
    from concurrent.futures import ThreadPoolExecutor

    from ..kernels.rng import seed_state

    search = _kernels()
    _check_loss(loss)
    if chains is not None:
        draws = np.asarray(draws)
        if draws.ndim != 3:
            raise ValueError(f"chains= needs (n_chains, n_draws, N) draws (got shape {draws.shape}).")
        blocks = [_as_draws(draws[c]) for c in chains]
    else:
        blocks = [_as_draws(draws)]
    total, N = sum(b.shape[0] for b in blocks), blocks[0].shape[1]
    w_given = _as_weights(weights, total)
    # weights describe a distribution (e.g. exact probabilities): all of it; else the budget
    limit = None if weights is not None and max_draws is None else search_draws(N, total, max_draws)
    found = _distinct(blocks, w_given, limit, keep=True)  # identical draws merged with their summed weights
    if found is not None:
        _, w, draws = found
        used = total  # the search reads every draw given, through the distinct ones
    else:  # more distinct draws than the budget: that many evenly spaced over the draws as given, then merged
        picks = np.unique(np.linspace(0, total - 1, limit).round().astype(int))
        used = picks.size
        _, w, draws = _distinct([_draw(blocks, p)[None] for p in picks], w_given[picks] / w_given[picks].sum(),
                                keep=True)  # (each pick a view: no copy of the picked draws)
    if n_runs is None:
        n_runs = 16 if N * draws.shape[0] <= SMALL_SEARCH else 8
    if zealous_attempts is None:
        zealous_attempts = ZEALOUS_ATTEMPTS if N <= ZEALOUS_MAX_N else 0
    S = draws.shape[0]
    cap = int(draws.max()) + 1 if max_clusters is None else int(max_clusters)
    if cap < 1:
        raise ValueError(f"max_clusters must be >= 1 (got {max_clusters}).")
    tables = DrawTables(draws, w, loss)
    cells = tables.cells(cap)
    settings = search.SearchSettings(cap, int(max_scans), int(zealous_attempts))
    rng = np.random.default_rng(seed)
    n_runs = max(1, int(n_runs))
    starts = []
    for run in range(n_runs):
        start = draws[rng.choice(S, p=w)].astype(np.int64) if run % 2 == 1 else None
        if start is None or int(start.max()) >= cap:
            start = np.full(N, -1, dtype=np.int64)
        starts.append((start, seed_state(int(rng.integers(2**63)))))

    def one(job):
        start, state = job
        return search.greedy_search(cells, settings, start, state)

    threads = (os.cpu_count() or 1) if n_jobs is None or n_jobs < 0 else int(n_jobs)
    if threads > 1 and n_runs > 1:
        with ThreadPoolExecutor(min(threads, n_runs)) as pool:
            results = list(pool.map(one, starts))
    else:
        results = [one(job) for job in starts]
    best_labels, best_value = None, np.inf
    for labels, value in results:  # in run order: the same winner whatever the threads
        if value < best_value - 1e-9:
            best_labels, best_value = labels, value
    # the loss over every draw given, not only those the search used, one draw at a time (no copy of the draws)
    value = tables.expected_loss(best_labels) if used == total else _streamed_loss(best_labels, blocks, w_given, loss)
    return PointEstimate(labels=_by_size(best_labels), expected_loss=value, loss=loss,
                         n_runs=n_runs, n_draws=int(used), n_draws_total=int(total),
                         n_distinct=int(S))


def similarity_order(psm, labels):
    """Order of the points for a similarity heatmap: clusters of ``labels`` largest first, and within a
    cluster by decreasing mean similarity to the cluster's members (its core first)."""
    labels = np.asarray(labels)
    psm = np.asarray(psm)
    ranked = _by_size(labels)
    within = np.zeros(labels.shape[0])
    for k in np.unique(ranked):
        members = np.flatnonzero(ranked == k)
        within[members] = psm[np.ix_(members, members)].mean(axis=1)
    return np.lexsort((-within, ranked))


def cluster_confidence_from_draws(draws, labels):
    """:func:`cluster_confidence` without the similarity matrix, from per-draw contingency tables: for point i in
    cluster C, the mean over draws of (#{j in C : z_s(j) = z_s(i)} - 1) / (|C| - 1) (1 for a singleton).
    draws (S, N) or (C, S, N); labels (N,). O(N S) time, O(N) memory beyond the draws."""
    draws = _as_draws(draws)
    _, labels = np.unique(np.asarray(labels), return_inverse=True)
    labels = labels.reshape(-1)
    sizes = np.bincount(labels)
    K = sizes.size
    total = np.zeros(labels.shape[0])
    for z in draws:
        _, z = np.unique(z, return_inverse=True)
        cell = labels * (int(z.max()) + 1) + z.reshape(-1)
        total += np.bincount(cell, minlength=K * (int(z.max()) + 1))[cell] - 1
    denominator = np.maximum(sizes[labels] - 1, 1) * draws.shape[0]
    return np.where(sizes[labels] > 1, total / denominator, 1.0)


def cluster_confidence(psm, labels):
    """(N,) mean co-clustering probability of each point with the other members of its cluster in
    ``labels`` (1 for a singleton): near 1 the posterior agrees with the point estimate about that point."""
    labels = np.asarray(labels)
    psm = np.asarray(psm, dtype=float)
    out = np.ones(labels.shape[0])
    for k in np.unique(labels):
        members = np.flatnonzero(labels == k)
        if members.size > 1:
            block = psm[np.ix_(members, members)]
            out[members] = (block.sum(axis=1) - np.diag(block)) / (members.size - 1)
    return out

"""Partition summaries of label draws: the posterior similarity matrix and a point estimate.

- **Similarity matrix** (co-clustering probabilities): psm[i, j] = P(z_i = z_j | X), estimated by
  the (weighted) share of draws in which i and j share a cluster.
- **Point estimate**: the partition c minimising the posterior expected loss E[L(c, Z) | X],
  found by a SALSO-style randomised greedy search (Dahl, Johnson & Mueller 2022, JCGS 31(4)):
  several runs, each starting from a sequential allocation in random order or from a random draw,
  improved by reallocation scans (each item moved to its best cluster until nothing changes) and
  "zealous" updates (a whole cluster dissolved and its items reallocated one by one; kept only if
  the loss drops); the best run wins. The number of clusters is capped at the largest K among the
  draws, as salso does.

Losses (both 0 when c equals the truth):
- ``"vi"``: variation of information in bits (as :func:`pcrp.summary.vi`). Its expectation is
  computed from the draws exactly, mean_s VI(c, z_s), not from the similarity matrix (the psm-based
  "VI lower bound" is a different criterion).
- ``"binder"``: Binder's loss with equal costs, as the share of the N (N - 1) / 2 pairs on which c
  and Z disagree; its expectation is linear in the similarity matrix,
  sum_{i<j} [c_ij (1 - p_ij) + (1 - c_ij) p_ij] / (N (N - 1) / 2).
"""

from dataclasses import dataclass

import numpy as np
from scipy.linalg.blas import sgemm, ssyrk

LOSSES = ("vi", "binder")

# Default working-memory budget of similarity_matrix (beyond its N x N result and the draws).
CHUNK_BYTES = 64 * 2**20


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


def compact_labels(draws):
    """Relabel each row of (S, N) draws to 0..K_s - 1 in order of first appearance; returns (int32 labels, K (S,))."""
    draws = _as_draws(draws)
    S, N = draws.shape
    out = np.empty((S, N), dtype=np.int32)
    n_clusters = np.empty(S, dtype=np.int64)
    for s in range(S):
        _, first, inverse = np.unique(draws[s], return_index=True, return_inverse=True)
        rank = np.empty(first.size, dtype=np.int32)
        rank[np.argsort(first)] = np.arange(first.size)
        out[s] = rank[inverse]
        n_clusters[s] = first.size
    return out, n_clusters


def unique_draws(draws, weights=None):
    """Identical partitions merged: (distinct compact draws (U, N), summed weights (U,))."""
    compact, _ = compact_labels(draws)
    weights = _as_weights(weights, compact.shape[0])
    distinct, inverse = np.unique(compact, axis=0, return_inverse=True)
    return distinct, np.bincount(inverse.reshape(-1), weights=weights, minlength=distinct.shape[0])


def similarity_matrix(draws, weights=None, chunk_bytes=CHUNK_BYTES):
    """Posterior similarity matrix (N, N) float32: the (weighted) share of draws in which i and j share a cluster.

    draws: (S, N) or (C, S, N) integer labels; weights: optional (S,) draw weights (default equal).
    Each chunk of draws becomes a 0/1 membership matrix M (N, clusters in the chunk) and M M^T is added
    into the result in place by BLAS (syrk, one triangle, or gemm with weights): no N x N temporary.
    Chunks keep M under ``chunk_bytes``, so the working memory beyond the result is about
    max(chunk_bytes, 4 N K_max) bytes (twice that with weights) plus an int32 copy of the draws.
    Unweighted counts are summed exactly (float32 holds integers up to 2**24 draws).
    """
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


def _xlog2x(n_max):
    """Table of x log2 x for x = 0 .. n_max (0 at x = 0)."""
    x = np.arange(n_max + 1, dtype=float)
    return np.where(x > 0, x * np.log2(np.maximum(x, 1)), 0.0)


def expected_vi(labels, draws, weights=None):
    """Posterior expected VI (bits) of ``labels`` (N,): the weighted mean of VI(labels, z_s) over the draws."""
    from .summary import vi

    draws = _as_draws(draws)
    w = _as_weights(weights, draws.shape[0])
    return float(sum(ws * vi(labels, z) for ws, z in zip(w, draws) if ws > 0))


def expected_binder(labels, psm):
    """Posterior expected Binder loss of ``labels`` (N,) given the similarity matrix psm (N, N):
    the expected share of pairs i < j on which the partition and Z disagree (0 for N = 1)."""
    labels = np.asarray(labels)
    psm = np.asarray(psm, dtype=float)
    N = labels.shape[0]
    if N < 2:
        return 0.0
    same = labels[:, None] == labels[None, :]
    disagree = np.where(same, 1.0 - psm, psm)
    upper = np.triu_indices(N, k=1)
    return float(disagree[upper].sum() / upper[0].size)


def expected_loss(labels, draws, loss="vi", weights=None, psm=None):
    """Posterior expected ``loss`` ('vi' or 'binder') of ``labels`` (N,) under the (weighted) draws."""
    _check_loss(loss)
    if loss == "vi":
        return expected_vi(labels, draws, weights)
    return expected_binder(labels, similarity_matrix(draws, weights) if psm is None else psm)


def _check_loss(loss):
    if loss not in LOSSES:
        raise ValueError(f"loss must be one of {', '.join(LOSSES)} (got {loss!r}).")


class _VIState:
    """Greedy-search bookkeeping for the expected VI: cluster sizes and, per draw, the contingency table.

    N * E[VI] = sum_k F(n_k) + sum_s w_s sum_l F(m_sl) - 2 sum_s w_s sum_{k,l} F(n_skl), F(x) = x log2 x,
    where n_k are the candidate's cluster sizes, m_sl the draw's and n_skl their overlaps. The overlaps
    are stored as table[k, s * L + l], so that item i touches the entries cell[i] = s * L + z_s(i).
    """

    def __init__(self, draws, weights, cap):
        S, self.N = draws.shape
        L = int(draws.max()) + 1
        self.w = weights
        self.cap = cap
        self.F = _xlog2x(self.N + 1)
        self.dF = np.diff(self.F)  # dF[x] = F(x + 1) - F(x)
        self.cell = np.ascontiguousarray((np.arange(S)[:, None] * L + draws).T)  # (N, S)
        self.sizes = np.zeros(cap, dtype=np.int64)
        self.table = np.zeros((cap, S * L), dtype=np.intp)  # intp: used as an index without a cast
        m = np.bincount(self.cell.reshape(-1), minlength=S * L).reshape(S, L)
        self.value = float(self.w @ self.F[m].sum(axis=1))  # N * E[VI], updated by add / remove

    def add_costs(self, i):
        """(cap,) change of N * E[VI] if item i joins each cluster (i currently unassigned)."""
        overlap = np.take(self.table, self.cell[i], axis=1)  # (cap, S)
        return self.dF[self.sizes] - 2.0 * (self.dF[overlap] @ self.w)

    def add(self, i, k):
        row, cell = self.table[k], self.cell[i]
        overlap = row[cell]
        self.value += self.dF[self.sizes[k]] - 2.0 * (self.dF[overlap] @ self.w)
        self.sizes[k] += 1
        row[cell] = overlap + 1

    def remove(self, i, k):
        row, cell = self.table[k], self.cell[i]
        overlap = row[cell] - 1
        self.sizes[k] -= 1
        row[cell] = overlap
        self.value -= self.dF[self.sizes[k]] - 2.0 * (self.dF[overlap] @ self.w)

    def total(self):
        """E[VI] in bits of the current (complete) allocation."""
        return float(self.value / self.N)


class _BinderState:
    """Greedy-search bookkeeping for the expected Binder loss from the similarity matrix."""

    def __init__(self, psm, cap):
        self.N = psm.shape[0]
        self.cost = 1.0 - 2.0 * np.asarray(psm, dtype=float)  # adding j next to i costs 1 - 2 p_ij
        np.fill_diagonal(self.cost, 0.0)
        self.cap = cap
        self.sizes = np.zeros(cap, dtype=np.int64)
        self.labels = np.full(self.N, cap, dtype=np.int64)  # cap = unassigned
        self.value = float(np.triu(np.asarray(psm, dtype=float), k=1).sum())  # E[disagreeing pairs]
        self.pairs = max(self.N * (self.N - 1) / 2, 1.0)

    def add_costs(self, i):
        """(cap,) change of the sum over same-cluster pairs of (1 - 2 p_ij) if item i joins each cluster."""
        return np.bincount(self.labels, weights=self.cost[i], minlength=self.cap + 1)[: self.cap]

    def add(self, i, k):
        self.value += self.cost[i, self.labels == k].sum()
        self.sizes[k] += 1
        self.labels[i] = k

    def remove(self, i, k):
        self.sizes[k] -= 1
        self.labels[i] = self.cap
        self.value -= self.cost[i, self.labels == k].sum()

    def total(self):
        """Expected Binder loss (share of pairs) of the current (complete) allocation."""
        return float(self.value / self.pairs)


def _best_cluster(state, i):
    """The cluster (existing, or the first empty slot when under the cap) that item i should join."""
    costs = state.add_costs(i)
    occupied = state.sizes > 0
    empty = np.flatnonzero(~occupied)
    candidates = np.flatnonzero(occupied)
    if empty.size:
        candidates = np.append(candidates, empty[0])  # all empty clusters cost the same
    return int(candidates[np.argmin(costs[candidates])])


def _allocate(state, labels, items):
    for i in items:
        k = _best_cluster(state, i)
        state.add(i, k)
        labels[i] = k


def _scan(state, labels, rng, max_scans):
    """Reallocation scans until no item moves (or max_scans)."""
    for _ in range(max_scans):
        moved = False
        for i in rng.permutation(state.N):
            state.remove(i, labels[i])
            k = _best_cluster(state, i)
            state.add(i, k)
            if k != labels[i]:
                labels[i] = k
                moved = True
        if not moved:
            return


def _zealous(state, labels, rng, attempts):
    """Dissolve whole clusters and reallocate their items one by one; keep a change only if the loss drops."""
    loss = state.total()
    for _ in range(attempts):
        clusters = np.flatnonzero(state.sizes > 0)
        if clusters.size < 2:
            return loss
        k = rng.choice(clusters)
        items = rng.permutation(np.flatnonzero(labels == k))
        before = labels.copy()
        for i in items:
            state.remove(i, k)
        _allocate(state, labels, items)
        new_loss = state.total()
        if new_loss < loss - 1e-12:
            loss = new_loss
        else:
            for i in items:
                state.remove(i, labels[i])
                state.add(i, before[i])
            labels[:] = before
    return loss


@dataclass
class PointEstimate:
    """A point-estimate partition and how it was found.

    labels: (N,) int64 clusters 0..K-1, numbered by size (0 = largest).
    expected_loss: its posterior expected loss (bits for 'vi', share of pairs for 'binder').
    loss: 'vi' or 'binder'; n_runs: greedy runs tried.
    """

    labels: np.ndarray
    expected_loss: float
    loss: str
    n_runs: int

    @property
    def n_clusters(self):
        return int(self.labels.max()) + 1


def _by_size(labels):
    ids, counts = np.unique(labels, return_counts=True)
    order = ids[np.argsort(-counts, kind="stable")]
    rank = np.empty(int(labels.max()) + 1, dtype=np.int64)
    rank[order] = np.arange(order.size)
    return rank[labels]


def point_estimate(draws, loss="vi", *, weights=None, psm=None, n_runs=16, max_scans=50, zealous_attempts=10,
                   max_clusters=None, seed=0):
    """Partition minimising the posterior expected ``loss`` by SALSO-style randomised greedy search.

    draws: (S, N) or (C, S, N) integer labels (identical draws are merged first); weights: optional
        (S,) draw weights, e.g. exact posterior probabilities.
    loss: 'vi' (default) or 'binder'; psm: the similarity matrix if already computed (Binder uses it).
    n_runs: independent greedy runs; half start from a sequential allocation of the items in random
        order, half from a randomly chosen draw. max_scans: reallocation scans per run;
        zealous_attempts: cluster dissolutions tried per run. max_clusters: cap on K (default: the
        largest K among the draws). seed: the search's random seed.
    """
    _check_loss(loss)
    draws, w = unique_draws(draws, weights)
    S, N = draws.shape
    cap = int(draws.max()) + 1 if max_clusters is None else int(max_clusters)
    if cap < 1:
        raise ValueError(f"max_clusters must be >= 1 (got {max_clusters}).")
    if loss == "binder" and psm is None:
        psm = similarity_matrix(draws, w)
    rng = np.random.default_rng(seed)
    best_labels, best_loss = None, np.inf
    for run in range(max(1, int(n_runs))):
        state = _VIState(draws, w, cap) if loss == "vi" else _BinderState(psm, cap)
        labels = np.full(N, -1, dtype=np.int64)
        start = draws[rng.choice(S, p=w)] if run % 2 == 1 else None
        if start is not None and int(start.max()) < cap:
            for i in range(N):
                state.add(i, start[i])
            labels[:] = start
        else:
            _allocate(state, labels, rng.permutation(N))
        _scan(state, labels, rng, max_scans)
        value = _zealous(state, labels, rng, zealous_attempts) if zealous_attempts else state.total()
        if value < best_loss - 1e-12:
            best_loss, best_labels = value, labels.copy()
    return PointEstimate(labels=_by_size(best_labels), expected_loss=float(best_loss), loss=loss, n_runs=int(n_runs))


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

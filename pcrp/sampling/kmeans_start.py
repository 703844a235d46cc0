"""The 'kmeans:K' start of a chain in NumPy: k-means++ seeding, then every point to its nearest seed.

k-means++ (Arthur & Vassilvitskii 2007) in its greedy form, as scikit-learn's ``kmeans_plusplus``: the first seed
is a point drawn uniformly; each further seed is the best of ``2 + floor(ln K)`` candidates drawn with
probability proportional to their squared distance to the nearest seed so far, "best" meaning the one that leaves
the smallest total squared distance. Then each point goes to its nearest seed. Both passes read the data in
chunks of rows whose (rows, seeds) distance block fits a working-memory budget, so the cost is O(N K d ln K)
time, linear in N for a fixed K, and the memory beyond the data is three (N,) float64 arrays plus that budget:
never an N x N matrix. Draws come from the generator passed in, so a chain's start follows its seed.

This replaces scikit-learn's ``kmeans_plusplus`` and ``pairwise_distances_argmin``, whose import (about half a
second) every ``pcrp run`` paid.
"""

import math

import numpy as np


def local_trials(k):
    """Candidates drawn for each seed after the first: 2 + floor(ln k) (scikit-learn's choice)."""
    return 2 + int(math.log(k))


def _rows_per_chunk(columns, working_bytes):
    """Rows of a chunk whose (rows, columns) float64 distance block and its matrix product fit ``working_bytes``."""
    return max(1, int(working_bytes) // (16 * max(int(columns), 1)))


def _squared_distances(X, sq_norms, centres, start, stop):
    """(stop - start, m) squared Euclidean distances of rows start..stop-1 of X (N, d) to ``centres`` (m, d), by
    |x|^2 - 2 x.c + |c|^2 (one matrix product), clipped at 0 against rounding."""
    block = X[start:stop] @ centres.T
    block *= -2.0
    block += sq_norms[start:stop, None]
    block += np.einsum("ij,ij->i", centres, centres)[None, :]
    return np.maximum(block, 0.0, out=block)


def kmeans_plusplus(X, k, rng, working_bytes):
    """(k, d) seeds chosen from the rows of X (N, d) float64 by greedy k-means++ with the generator ``rng``
    (:class:`numpy.random.Generator`), reading the data in chunks whose distance blocks fit ``working_bytes``.
    k must be between 1 and N. Data with fewer than k distinct rows give repeated seeds (a seed that adds
    nothing is drawn where every point already sits on a seed)."""
    N = X.shape[0]
    sq_norms = np.einsum("ij,ij->i", X, X)
    trials = local_trials(k)
    rows = _rows_per_chunk(trials, working_bytes)
    seeds = np.empty((k, X.shape[1]))
    seeds[0] = X[rng.integers(N)]
    nearest = np.empty(N)  # squared distance of each point to its nearest seed so far
    for start in range(0, N, rows):
        nearest[start:start + rows] = _squared_distances(X, sq_norms, seeds[:1], start, start + rows)[:, 0]
    for j in range(1, k):
        cumulative = np.cumsum(nearest)
        targets = rng.random(trials) * cumulative[-1]
        candidates = np.minimum(np.searchsorted(cumulative, targets), N - 1)
        totals = np.zeros(trials)  # the summed nearest distance with each candidate added
        for start in range(0, N, rows):
            block = _squared_distances(X, sq_norms, X[candidates], start, start + rows)
            np.minimum(block, nearest[start:start + rows, None], out=block)
            totals += block.sum(axis=0)
        best = candidates[int(np.argmin(totals))]
        seeds[j] = X[best]
        for start in range(0, N, rows):
            chunk = _squared_distances(X, sq_norms, seeds[j:j + 1], start, start + rows)[:, 0]
            np.minimum(nearest[start:start + rows], chunk, out=nearest[start:start + rows])
    return seeds


def nearest_seed(X, seeds, working_bytes):
    """(N,) int64 index of the nearest of ``seeds`` (m, d) for each row of X (N, d) (the first on a tie), a chunk
    of rows at a time whose (rows, m) distance block fits ``working_bytes``."""
    N, m = X.shape[0], seeds.shape[0]
    rows = _rows_per_chunk(m, working_bytes)
    seed_norms = np.einsum("ij,ij->i", seeds, seeds)
    out = np.empty(N, dtype=np.int64)
    for start in range(0, N, rows):
        # |x|^2 is the same for every seed of a row, so the nearest minimises |c|^2 - 2 x.c
        block = X[start:start + rows] @ seeds.T
        block *= -2.0
        block += seed_norms[None, :]
        out[start:start + rows] = np.argmin(block, axis=1)
    return out


def kmeans_start(X, k, rng, working_bytes):
    """(N,) int64 labels of the 'kmeans:k' start: each row of X (N, d) with its nearest k-means++ seed
    (:func:`kmeans_plusplus`, :func:`nearest_seed`); labels may skip values where seeds repeat."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    return nearest_seed(X, kmeans_plusplus(X, k, rng, working_bytes), working_bytes)

"""What the live comparison shows, computed from chain snapshots: pure functions, no plotting.

Traces are downsampled for display (a min/max envelope and the mean per pixel column; the full
trace stays in the downloads), the posterior of K is a running histogram that is never empty
(during burn-in it shows the burn-in sweeps, marked as such), and clusters are ranked by size so
the largest is always the first colour.
"""

from dataclasses import dataclass

import numpy as np

DISPLAY_COLUMNS = 300  # trace points drawn: about one per two pixel columns of a projector-wide chart
DISPLAY_POINTS = 2000  # points drawn in a cluster view; larger data sets show a fixed random subset


@dataclass(frozen=True)
class TraceEnvelope:
    """A trace of K reduced to at most DISPLAY_COLUMNS bins of consecutive sweeps.

    sweep: (B,) 1-based sweep at the centre of each bin; low, high: (B,) min and max of K in the
    bin; mean: (B,) mean of K in the bin. With fewer sweeps than bins every sweep is its own bin.
    """

    sweep: np.ndarray
    low: np.ndarray
    high: np.ndarray
    mean: np.ndarray


def trace_envelope(K, n_bins=DISPLAY_COLUMNS):
    """Min / max / mean of the trace ``K`` (T,) over at most ``n_bins`` equal runs of sweeps."""
    K = np.asarray(K, dtype=float)
    T = K.size
    if T == 0:
        empty = np.zeros(0)
        return TraceEnvelope(empty, empty, empty, empty)
    if T <= n_bins:
        sweep = np.arange(1, T + 1, dtype=float)
        return TraceEnvelope(sweep, K, K, K)
    edges = np.linspace(0, T, n_bins + 1).astype(np.int64)
    starts = edges[:-1]
    low = np.minimum.reduceat(K, starts)
    high = np.maximum.reduceat(K, starts)
    mean = np.add.reduceat(K, starts) / np.diff(edges)
    sweep = (edges[:-1] + edges[1:] + 1) / 2.0
    return TraceEnvelope(sweep, low, high, mean)


@dataclass(frozen=True)
class KHistogram:
    """Share of sweeps with each number of clusters. burn_in_only: True while no sweep after burn-in
    exists yet (then the shares are over the burn-in sweeps, which are not posterior draws)."""

    k: np.ndarray
    share: np.ndarray
    n_sweeps: int
    burn_in_only: bool


def running_k_histogram(K, burn_in):
    """Histogram of K after burn-in, or of the burn-in sweeps while there are none after it. K: one
    trace (T,) or a list of traces (one per chain, pooled)."""
    traces = [np.asarray(k) for k in K] if isinstance(K, (list, tuple)) else [np.asarray(K)]
    after = np.concatenate([k[burn_in:] for k in traces])
    used, burn_in_only = (after, False) if after.size else (np.concatenate(traces), True)
    if used.size == 0:
        return KHistogram(np.zeros(0, dtype=int), np.zeros(0), 0, True)
    values, counts = np.unique(used, return_counts=True)
    return KHistogram(values, counts / counts.sum(), int(used.size), burn_in_only)


def cluster_ranks(labels):
    """(N,) rank of each point's cluster by size (0 = largest; ties by label), for stable colours."""
    labels = np.asarray(labels)
    ids, inverse, counts = np.unique(labels, return_inverse=True, return_counts=True)
    order = np.argsort(-counts, kind="stable")
    rank_of_id = np.empty(ids.size, dtype=np.int64)
    rank_of_id[order] = np.arange(ids.size)
    return rank_of_id[inverse]


def display_subset(n_points, seed=0, limit=DISPLAY_POINTS):
    """Indices (sorted) of the points a cluster view draws: all of them, or a fixed random subset."""
    if n_points <= limit:
        return np.arange(n_points)
    return np.sort(np.random.default_rng(seed).choice(n_points, size=limit, replace=False))


def summary_line(K, burn_in):
    """(mean K, max K) after burn-in, or (None, None) while still in burn-in."""
    after = np.asarray(K)[burn_in:]
    if after.size == 0:
        return None, None
    return float(after.mean()), int(after.max())

"""Label dtypes and byte counts of a run's arrays, and the check that they fit in memory: a leaf module (the memory
plan, the sampler and the live runs all count bytes with these)."""

import numpy as np

from .errors import SamplerError


def record_bytes(n_points, iters, kept):
    """Bytes of a chain's record: K and the log joint per sweep (``iters``), and ``kept`` label draws."""
    return 16 * iters + kept * n_points * label_dtype(n_points).itemsize


def label_dtype(n_points):
    """The smallest integer dtype for labels 0..n_points-1: kept draws are stored in it (int16 up to
    32,767 points, a quarter of int64's memory); the kernels work on int64."""
    return np.dtype(np.int16) if n_points <= np.iinfo(np.int16).max else np.dtype(np.int32)


def available_memory():
    """Bytes of memory available to new allocations now, without swapping (psutil's estimate)."""
    import psutil

    return int(psutil.virtual_memory().available)


def _gib(n_bytes):
    return f"{n_bytes / 2**30:,.1f} GiB" if n_bytes >= 2**30 else f"{n_bytes / 2**20:,.0f} MiB"


def check_memory(n_bytes, what, advice, detail=""):
    """Raise SamplerError when ``n_bytes`` exceed the memory available now; ``what`` needs them (``detail``, e.g.
    the parts of a plan, is said after the amount)."""
    available = available_memory()
    if n_bytes > available:
        raise SamplerError(f"{what} would need about {_gib(n_bytes)} of memory{detail}, more than the {_gib(available)} "
                           f"available now. {advice}")


# Working memory of each chunk of the k-means start's nearest-seed search (pcrp.sampling.kmeans_start).
KMEANS_WORKING_MIB = 64


def state_bytes(n_points, dim, k_start):
    """Bytes a Sampler holds for N = ``n_points`` points in ``dim`` columns starting from ``k_start``
    clusters: data, labels and per-point buffers, the per-count tables, cluster slots for
    max(16, 2 k_start) clusters (each with a d x d precision matrix) and the k-means start's work."""
    per_point = 8 * (dim + 8)  # X, labels, permutation, prior predictive, kernel buffers
    tables = 8 * 10 * (n_points + 2)
    slots = 8 * max(16, 2 * k_start) * (dim * dim + dim + 2)
    kmeans = 8 * k_start * dim + 8 * 16 * n_points + KMEANS_WORKING_MIB * 2**20
    return n_points * per_point + tables + slots + kmeans



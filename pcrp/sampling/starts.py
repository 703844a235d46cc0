"""Where a chain starts, and the checks of the settings every sampler takes: the seed, the moves per sweep and
the start ('one', 'random:K', 'kmeans:K' or labels)."""

import numpy as np

from ..basics.dtypes import KMEANS_WORKING_MIB
from ..basics.errors import SamplerError


def check_seed(seed, name="seed"):
    """A seed must be None, a whole number >= 0 or a non-empty sequence of them (what numpy's SeedSequence
    accepts); returns it unchanged."""
    if seed is None:
        return None
    items = list(seed) if isinstance(seed, (list, tuple, np.ndarray)) else [seed]
    if not items or any(isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)) or v < 0
                        for v in items):
        raise SamplerError(f"{name} must be a whole number >= 0 (got {seed!r}).")
    return seed


def moves_per_sweep(name, value):
    """Validate a whole number >= 0 (or True/False, meaning 1/0) of moves per sweep; returns it as an int."""
    if isinstance(value, (bool, np.bool_)):
        return int(value)
    if not isinstance(value, (int, np.integer)) or value < 0:
        raise SamplerError(f"{name} must be a whole number >= 0 (moves per sweep) or True/False (got {value!r}).")
    return int(value)


def parse_init(init):
    """Parse 'one' | 'random:K' | 'kmeans:K' into (kind, K)."""
    if isinstance(init, np.ndarray):
        return "labels", None
    text = str(init).strip().lower()
    if text == "one":
        return "one", 1
    kind, _, number = text.partition(":")
    if kind in ("random", "kmeans"):
        try:
            k = int(number)
        except ValueError:
            k = 0
        if k >= 1:
            return kind, k
    raise SamplerError(
        f"init must be 'one', 'random:K' or 'kmeans:K' with K >= 1, or an array of labels (got {init!r})."
    )


def initial_labels(X, init, rng):
    """Starting labels (N,) int64 in 0..K-1 with no empty cluster.

    init: 'one' (all together), 'random:K' (uniform at random), 'kmeans:K'
    (k-means++ seeding with ``rng``, then each point to its nearest seed: :mod:`pcrp.sampling.kmeans_start`), or an int
    array.
    K is capped at N (:func:`start_clusters`).
    """
    N = X.shape[0]
    kind, k = parse_init(init)
    if kind == "labels":
        labels = np.asarray(init)
        if labels.shape != (N,):
            raise SamplerError(f"initial labels must have one entry per row ({N}), got shape {labels.shape}.")
        _, labels = np.unique(labels, return_inverse=True)
        return labels.astype(np.int64)
    k = start_clusters(init, N)
    if kind == "one":
        labels = np.zeros(N, dtype=np.int64)
    elif kind == "kmeans" and k == N:  # every point is a seed: skip k-means++'s O(N^2 d) search
        labels = np.arange(N)
    elif kind == "random":
        labels = rng.integers(0, k, size=N)
    else:
        from .kmeans_start import kmeans_start

        labels = kmeans_start(X, k, rng, working_bytes=KMEANS_WORKING_MIB * 2**20)
    _, labels = np.unique(labels, return_inverse=True)
    return labels.astype(np.int64)


def start_clusters(init, n_points):
    """Clusters an ``init`` starts from for ``n_points`` points: K of 'random:K' / 'kmeans:K' capped at N
    (N clusters is every point alone), 1 for 'one', the distinct labels of an array."""
    kind, k = parse_init(init)
    if kind == "labels":
        return int(np.unique(np.asarray(init)).size)
    return min(k, n_points)


def cap_init(init, prior, n_points):
    """``init`` for a prior that allows at most ``prior.max_blocks`` clusters (None: any number): 'random:K' and
    'kmeans:K' with K above it become 'random:max' / 'kmeans:max'; labels with more clusters are a
    SamplerError (their probability is 0)."""
    limit = getattr(prior, "max_blocks", None)
    if limit is None:
        return init
    kind, k = parse_init(init)
    if kind in ("random", "kmeans") and k > limit:
        return f"{kind}:{limit}"
    if kind == "labels" and start_clusters(init, n_points) > limit:
        raise SamplerError(f"The initial labels form {start_clusters(init, n_points)} clusters, but {prior.label()} "
                           f"allows at most {limit}; start from at most {limit} clusters (e.g. init='kmeans:{limit}').")
    return init

"""Compiling the kernels: numba compiles them on the first run of an installation (about COMPILE_SECONDS), and
loads them from its cache afterwards. The first run says so once (:func:`compile_kernels`)."""

import time

import numpy as np

from ._kernels import gibbs
from .dtypes import label_dtype
from .sampler import warm_up_sweeps


# Seconds the first run spends compiling the kernels (numba, cold cache) on a 2-core machine, as
# docs/figures/compile_time.md records (`python bench/compile_time.py`: the sweep kernels, then a whole first run).
# Compiling in a background thread at import saved nothing there: numba holds the GIL while it compiles.
COMPILE_SECONDS = 15


def kernels_need_compiling():
    """Whether the first sweep of this process will compile the sweep kernel rather than load it from numba's
    cache (best effort: True when the cache cannot be read)."""
    if gibbs.gibbs_sweeps.signatures:
        return False
    try:
        return not gibbs.gibbs_sweeps._cache._cache_file._load_index()  # {} when missing or stale
    except Exception:
        return True


def compile_kernels(stream=None):
    """Compile the kernels now if this is the first run (numba's cache is empty or stale), saying so on
    ``stream`` (default stderr) before and after: about COMPILE_SECONDS once per installation, nothing later."""
    import sys

    if not kernels_need_compiling():
        return
    stream = stream or sys.stderr
    print(f"compiling the sampler's kernels (first run only, about {COMPILE_SECONDS} s on a 2-core machine) ...",
          file=stream, flush=True)
    started = time.perf_counter()
    warm_up(summaries=True)
    print(f"compiled in {time.perf_counter() - started:.0f} s; later runs load them from numba's cache.",
          file=stream, flush=True)


def warm_up(summaries=False):
    """Compile (or load from cache) the kernels on a tiny problem; about 0.3 s when cached. ``summaries``: the
    point estimate's search kernels too (the first run compiles both)."""
    warm_up_sweeps()
    if summaries:
        from .partition import point_estimate

        point_estimate(np.array([[0, 0, 1, 1, 2, 2], [0, 0, 0, 1, 1, 1]], dtype=label_dtype(6)), seed=0)

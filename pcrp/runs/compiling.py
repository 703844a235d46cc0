"""Compiling the kernels: numba compiles them on the first run of an installation (about COMPILE_SECONDS), and
loads them from its cache afterwards. The first run says so once (:func:`compile_kernels`)."""

import time

import numpy as np

from ..kernels import gibbs
from ..basics.dtypes import label_dtype
from ..sampling.sampler import sampler_dims, warm_dims, warm_up_sweeps


# Seconds the first run spends compiling the kernels (numba, cold cache) on a 2-core machine, as
# docs/figures/compile_time.md records (`python bench/compile_time.py`: the sweep kernels, then a whole first run).
# Compiling in a background thread at import saved nothing there: numba holds the GIL while it compiles.
COMPILE_SECONDS = 15


def kernels_need_compiling(dim=2):
    """Whether the first sweep on data of ``dim`` columns will compile its sweep kernel (each d up to
    pcrp.sampling.sampler.SPECIALISED_UP_TO has its own, the general one serves larger d) rather than load it from numba's
    cache (best effort: True when the cache cannot be read)."""
    dims = sampler_dims(dim)
    if dims in warm_dims:
        return False
    try:
        index = gibbs.gibbs_sweeps._cache._cache_file._load_index()  # {} when missing or stale
    except Exception:
        return True
    wanted = f"UniTuple(int64, {len(dims)})" if dims else "Tuple()"
    return not any(wanted in str(key[0]) for key in index)


def compile_kernels(stream=None, dim=2):
    """Compile the kernels for data of ``dim`` columns now if this installation has not yet (numba's cache holds no
    kernel for that d), saying so on ``stream`` (default stderr) before and after: about COMPILE_SECONDS once per
    installation and d, nothing later."""
    import sys

    if not kernels_need_compiling(dim):
        return
    stream = stream or sys.stderr
    print(f"compiling the sampler's kernels for d = {dim} (once per installation and d, about {COMPILE_SECONDS} s "
          "on a 2-core machine) ...", file=stream, flush=True)
    started = time.perf_counter()
    warm_up(summaries=True, dim=dim)
    print(f"compiled in {time.perf_counter() - started:.0f} s; later runs load them from numba's cache.",
          file=stream, flush=True)


def warm_up(summaries=False, dim=2):
    """Compile (or load from cache) the sweep kernel for data of ``dim`` columns on a tiny problem; about 0.3 s when
    cached. ``summaries``: the point estimate's search kernels too (the first run compiles both)."""
    warm_up_sweeps(dim)
    if summaries:
        from ..summaries.partition import point_estimate

        point_estimate(np.array([[0, 0, 1, 1, 2, 2], [0, 0, 0, 1, 1, 1]], dtype=label_dtype(6)), seed=0)

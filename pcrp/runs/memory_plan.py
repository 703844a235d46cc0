"""Memory plans: the bytes a batch run and its summaries add to the process, checked before anything starts.

A run holds the data and every chain's kept draws throughout; on top of them it needs, at different times,
the samplers' state (one per chain running at once, while sampling) or the summaries' working memory (the
point estimate's search and, when asked for, the similarity matrix). The plan is the data, the draws and the
larger of the two. What every process pays whatever N is (the interpreter, NumPy, the compiled kernels,
and, in the app or the estimator, scikit-learn: up to about 400 MiB) is not in it. ``python bench/run_memory.py`` measures a `pcrp run`'s
peak against its plan at N = 100,000 and 1,000,000.
"""

import os
from dataclasses import dataclass, field

from ..basics.dtypes import label_dtype, record_bytes, state_bytes
from ..sampling.starts import start_clusters
@dataclass
class MemoryPlan:
    """parts: bytes by what needs them (data, draws, samplers, summaries); total: the peak in bytes (the data
    and the draws, plus the larger of the samplers and the summaries)."""

    parts: dict = field(default_factory=dict)
    total: int = 0


def search_bytes(n_points, n_draws_total):
    """Working bytes of the point estimate of ``n_draws_total`` draws of ``n_points`` labels (pcrp.summaries.partition):
    the draws it searches over as given, relabelled and deduplicated, their (N, draws) cells, each greedy
    run's start and labels, the cost cache's grouping of points with equal cells (a hash, its sort order and a
    group per point: 24 bytes, with 16 more for the sort's temporary), and the chunk of relabelled draws that
    merging identical draws reads at a time."""
    from ..summaries.partition import DISTINCT_CHUNK_CELLS, SMALL_SEARCH, search_draws

    used = search_draws(n_points, n_draws_total)
    n_runs = 16 if n_points * used <= SMALL_SEARCH else 8
    merging = 4 * min(n_points * n_draws_total, max(DISTINCT_CHUNK_CELLS, n_points))
    grouping = 40 * n_points
    return (n_points * used * (label_dtype(n_points).itemsize + 12) + 3 * n_runs * 8 * n_points + grouping
            + merging)


def run_memory_plan(n_points, dim, *, n_chains, iters, kept, inits=("kmeans:10",), n_jobs=-1, similarity=False):
    """The :class:`MemoryPlan` of ``n_chains`` chains (:func:`pcrp.runs.chains.run_chains`) and the summaries of
    `pcrp run` (point estimate, modes, diagnostics, metrics) on ``n_points`` x ``dim`` data; computed once per run,
    by :class:`pcrp.runs.run_spec.RunSpec`.

    iters: the most sweeps a chain runs (K and the log joint are recorded every sweep); kept: the most label draws
    kept per chain; inits: the chains' starts (cycled); n_jobs: threads (-1: all cores); similarity: whether the
    N x N similarity matrix (4 N^2 bytes) is made (`pcrp run --psm`).
    """
    cores = os.cpu_count() or 1
    threads = min(n_chains, cores if n_jobs is None or n_jobs < 0 else n_jobs)
    starts = [inits[c % len(inits)] for c in range(n_chains)]
    per_state = sorted((state_bytes(n_points, dim, start_clusters(i, n_points)) for i in starts), reverse=True)
    parts = {
        "data": n_points * (16 * dim + 16),  # the data as read and as the sampler sees it, and true labels
        "draws": n_chains * record_bytes(n_points, iters, kept),
        "samplers": sum(per_state[:threads]),
        "summaries": search_bytes(n_points, n_chains * kept) + (4 * n_points ** 2 if similarity else 0),
    }
    total = parts["data"] + parts["draws"] + max(parts["samplers"], parts["summaries"])
    return MemoryPlan(parts=parts, total=int(total))


ADVICE = ("Keep fewer draws (a larger thinning, or fewer sweeps), run fewer chains at once (fewer threads), or use "
          "fewer points.")


def check_run_memory(plan, what, advice=ADVICE):
    """Raise SamplerError when ``plan`` exceeds the memory available now; the message names what needs it
    (``what``), the plan's parts and what to do (``advice``, in the caller's terms)."""
    from ..basics.dtypes import _gib, check_memory

    parts = ", ".join(f"{name} {_gib(value)}" for name, value in plan.parts.items())
    check_memory(plan.total, what, advice, detail=f" ({parts})")

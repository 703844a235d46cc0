"""The sampled posterior of K for each r of a grid (one pCRP chain per r on all the data): read beside the exact
merge path (:mod:`pcrp.analyses.path`), which compares single partitions where this counts what the sampler holds."""

from dataclasses import dataclass, field

import numpy as np

from .path import FIT_INIT, PATH_PARAMS, TUNED, PathError, check_tuned_values, tuned_prior
from ..runs.run_spec import RUN_PARAMS, check_schedule, check_setting
from ..summaries.summary import k_posterior


@dataclass
class KOverR:
    """The sampled posterior of K for each r of a grid.

    r_grid (G,); k_values (M,) the K values seen; p_k (G, M) P(K = k_values[m]) after burn-in;
    mean_k (G,); settings: every resolved setting.
    """

    r_grid: np.ndarray
    k_values: np.ndarray
    p_k: np.ndarray
    mean_k: np.ndarray
    settings: dict = field(default_factory=dict)

    def table(self):
        """Rows {r, mean_k, P(K=k) ...} for CSV / display."""
        return [{"r": float(r), "mean_k": float(self.mean_k[g]),
                 **{f"P(K={int(k)})": float(self.p_k[g, m]) for m, k in enumerate(self.k_values)}}
                for g, r in enumerate(self.r_grid)]


def _fit_k(X, r, alpha, niw, iters, burn_in, seed, split_merge, init, work=None):
    from ..runs.chains import run_chains
    from ..runs.run_spec import make_run_spec

    spec = make_run_spec(X, prior=tuned_prior(alpha, r), niw=niw, n_chains=1, init=init, iters=iters, burn_in=burn_in,
                         thin=iters - burn_in, seed=seed, split_merge=split_merge, n_jobs=1)
    return run_chains(X, spec, work=work).K_after_burn_in[0]


def k_over_r(X, niw, r_grid, *, alpha=None, iters=None, burn_in=None, seed=None, split_merge=None, init=None,
             n_jobs=None, progress=None, work=None):
    """Posterior of K on the whole of X (N, d) for each r of ``r_grid``, one chain per r of the tuned prior (the
    pCRP), started from ``init`` (None: :data:`FIT_INIT`). None takes the declared default (:data:`PATH_PARAMS`;
    split_merge and n_jobs: the run's).

    Chains run in threads with joblib (the kernels release the GIL) and share ``seed``
    (common random numbers, so the curve is not blurred by chain-to-chain noise more than
    needed). ``progress(done, total)`` is called as chains finish. ``work``: a
    :class:`pcrp.sampling.compute.WorkTicket` (budget, compute slots, cancellation; see :func:`pcrp.runs.chains.run_chains`).
    """
    import joblib

    if np.ndim(r_grid) != 1 or np.size(r_grid) < 1:
        raise PathError("Give one or more positive values of r.")
    r_grid = check_tuned_values(r_grid, PathError, f"Give positive values of r that the {TUNED.label} allows")
    s = PATH_PARAMS.resolve(alpha=alpha, iters=iters, burn_in=burn_in, seed=seed)
    alpha, seed = s["alpha"], s["seed"]
    iters, burn_in, _ = check_schedule(s["iters"], s["burn_in"], 1)
    n_jobs = check_setting("n_jobs", RUN_PARAMS["n_jobs"].default if n_jobs is None else n_jobs)
    split_merge = RUN_PARAMS["split_merge"].default if split_merge is None else split_merge
    init = FIT_INIT if init is None else init
    X = np.ascontiguousarray(X, dtype=float)
    if work is not None:
        from ..sampling.compute import work_cost

        work.reserve(work_cost(X.shape[0], X.shape[1], iters, chains=r_grid.size),
                     f"The clusters for each r ({r_grid.size} chains of {iters:,} sweeps)")
    tasks = [joblib.delayed(_fit_k)(X, float(r), float(alpha), niw, iters, burn_in, seed, split_merge, init, work)
             for r in r_grid]
    traces = []
    for done, K in enumerate(joblib.Parallel(n_jobs=n_jobs, prefer="threads", return_as="generator")(tasks),
                             start=1):
        traces.append(K)
        if progress is not None:
            progress(done, len(tasks))
    k_values = np.unique(np.concatenate(traces))
    p_k = np.zeros((r_grid.size, k_values.size))
    for g, K in enumerate(traces):
        values, probs = k_posterior(K)
        p_k[g, np.searchsorted(k_values, values)] = probs
    mean_k = np.array([K.mean() for K in traces])
    settings = dict(r_grid=r_grid.tolist(), alpha=float(alpha), iters=iters, burn_in=burn_in, seed=seed,
                    split_merge=bool(split_merge), init=init, **niw.as_dict())
    return KOverR(r_grid, k_values, p_k, mean_k, settings)

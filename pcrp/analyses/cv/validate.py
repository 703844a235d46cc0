"""Cross-validating the pCRP power r on a grid (paper Sec. 2.3): every (split, r) fit, the curves and the proposal.

Nothing about a held-out point reaches its split's fits: the standardisation (when asked for) and every
data-dependent NIW default (m0 = column means, S0 from the column variances) are computed on the training part of
each split alone, and applied to its held-out part as fixed maps (:func:`pcrp.analyses.cv.scoring.prepare_split`).

Every split uses one seed for all r (common random numbers), so differences along the curve are not blurred by
chain-to-chain noise more than necessary. Standard errors are over splits (std / sqrt(n_splits)); folds share
training points, so they understate the uncertainty somewhat.
"""

from dataclasses import dataclass, field

import numpy as np

from ...model import NIW
from ...runs.run_spec import RUN_PARAMS, check_schedule, check_setting
from .blow_up import BlowUp, find_blow_up, robust_blow_up
from .scoring import fit_and_score, make_splits, prepare_split
from .settings import CV_PARAMS, DEFAULT_GRID, CVError, check_folds_fit, check_grid, check_rule


@dataclass
class CVResult:
    """Cross-validation curves of r and the proposed value.

    loss, log_pred, mean_k: (n_splits, G) per split and grid point.
    blow_up: the change point of the chosen rule (settings["rule"]), which gives ``chosen_r``.
    mean_blow_up: the mean-curve rule's change point (:func:`find_blow_up`), kept for comparison.
    """

    r_grid: np.ndarray
    loss: np.ndarray
    log_pred: np.ndarray
    mean_k: np.ndarray
    blow_up: BlowUp
    settings: dict = field(default_factory=dict)
    mean_blow_up: BlowUp | None = None

    @property
    def chosen_r(self):
        return float(self.r_grid[self.blow_up.chosen_index])

    def curve(self, name):
        """(mean (G,), standard error (G,)) over splits of 'loss', 'log_pred' or 'mean_k'."""
        values = getattr(self, name)
        n = values.shape[0]
        se = values.std(axis=0, ddof=1) / np.sqrt(n) if n > 1 else np.full(values.shape[1], np.nan)
        return values.mean(axis=0), se

    def table(self):
        """Rows (r, loss, loss SE, log_pred, log_pred SE, mean K) for CSV output."""
        (lm, ls), (pm, ps), (km, _) = self.curve("loss"), self.curve("log_pred"), self.curve("mean_k")
        return [dict(r=float(r), loss=float(lm[g]), loss_se=float(ls[g]), log_pred=float(pm[g]),
                     log_pred_se=float(ps[g]), mean_k=float(km[g])) for g, r in enumerate(self.r_grid)]


def cv_work(n_points, dims, n_r, folds, repeats, iters):
    """Estimated core-seconds of :func:`cross_validate` (:func:`pcrp.sampling.compute.work_cost`): each of the
    n_r x folds x repeats fits sweeps its training part, N less one fold, ``iters`` times."""
    from ...sampling.compute import work_cost

    train = int(n_points) - int(n_points) // int(folds)
    return work_cost(train, dims, iters, chains=int(n_r) * int(folds) * int(repeats))


def cross_validate(X, niw=None, *, standardize=False, r_grid=None, alpha=None, folds=None, repeats=None, iters=None,
                   burn_in=None, thin=None, seed=None, split_merge=None, n_jobs=None, scheduler=None, progress=None,
                   work=None, rule=None):
    """Cross-validate the pCRP power r on data X (N, d).

    Every setting left None takes its declared default: r_grid the registry's grid (:data:`DEFAULT_GRID`), alpha,
    folds, repeats, iters, burn_in, thin and seed :data:`CV_PARAMS`', split_merge and n_jobs the run's
    (:data:`pcrp.runs.run_spec.RUN_PARAMS`), rule CV_RULES[0].

    rule: "robust" (default, :func:`robust_blow_up`: the smallest repeat's proposal and the splits' lower
    quartile; give ``repeats`` = 3 or more for it to see independent re-partitions) or "mean" (the change point
    of the loss averaged over all splits, :func:`find_blow_up`; the rule before December 2026).

    ``niw`` and ``standardize`` are resolved on each training part (see :func:`pcrp.analyses.cv.scoring.prepare_split`):
    None means the documented NIW defaults of that part; a dict fixes some settings. Loss and
    log predictive are in the units the fits see (the training part's z-scores when standardising).

    Runs len(r_grid) x folds x repeats chains in parallel with joblib (threads:
    the kernels release the GIL) or, with ``scheduler`` = a Dask scheduler
    address such as "tcp://10.0.0.5:8786", on that Dask cluster through
    joblib's dask backend. ``progress(done, total)`` is called as fits finish.
    Reproducible per ``seed`` whatever n_jobs or the scheduler.

    work: a :class:`pcrp.sampling.compute.WorkTicket` (the app's): the fits' estimated cost (:func:`cv_work`) is
    counted against its budget before any starts (WorkOverBudget), local fits take its compute slots, and once
    it is cancelled running fits stop within about 0.1 s and queued ones do not start (WorkCancelled). Fits on
    a Dask cluster use the cluster's cores; a cancellation stops waiting for them.
    """
    import joblib

    X = np.ascontiguousarray(X, dtype=float)
    r_grid = check_grid(DEFAULT_GRID if r_grid is None else r_grid)
    s = CV_PARAMS.resolve(alpha=alpha, folds=folds, repeats=repeats, iters=iters, burn_in=burn_in, thin=thin,
                          seed=seed)
    alpha, folds, repeats, seed = s["alpha"], s["folds"], s["repeats"], s["seed"]
    check_folds_fit(X.shape[0], folds)
    iters, burn_in, thin = check_schedule(s["iters"], s["burn_in"], s["thin"])  # and that draws are kept to score
    n_jobs = check_setting("n_jobs", RUN_PARAMS["n_jobs"].default if n_jobs is None else n_jobs)
    split_merge = RUN_PARAMS["split_merge"].default if split_merge is None else split_merge
    rule = check_rule(rule)
    if not (niw is None or isinstance(niw, NIW) or (isinstance(niw, dict) and set(niw) <= set(NIW_SETTINGS))):
        raise CVError(f"niw must be None, an NIW, or a dict with some of {', '.join(NIW_SETTINGS)} (got {niw!r}).")
    if work is not None:
        work.reserve(cv_work(X.shape[0], X.shape[1], r_grid.size, folds, repeats, iters),
                     f"Cross validation ({r_grid.size} values of r x {folds} folds x {repeats} repeats x {iters:,} "
                     "sweeps)")
    splits = make_splits(X.shape[0], folds, repeats, seed)
    parts = [prepare_split(X, train, test, niw, standardize) for train, test in splits]
    chain_seeds = np.random.SeedSequence(seed).generate_state(len(splits), dtype=np.uint32)
    tasks = [
        joblib.delayed(fit_and_score)(part, s, g, float(r), float(alpha), iters, burn_in, thin,
                                      int(chain_seeds[s]), split_merge, None if scheduler else work)
        for s, part in enumerate(parts) for g, r in enumerate(r_grid)
    ]
    shape = (len(splits), r_grid.size)
    loss, log_pred, mean_k = np.empty(shape), np.empty(shape), np.empty(shape)

    def store(res):
        loss[res.split, res.r_index] = res.loss
        log_pred[res.split, res.r_index] = res.log_pred
        mean_k[res.split, res.r_index] = res.mean_k

    from ...runs.dask_cluster import collect_results

    collect_results(tasks, store, n_jobs=n_jobs, scheduler=scheduler, progress=progress,
                    check=None if work is None else work.check, error=CVError)

    mean_loss = loss.mean(axis=0)
    se_loss = loss.std(axis=0, ddof=1) / np.sqrt(len(splits)) if len(splits) > 1 else None
    settings = dict(r_grid=[float(r) for r in r_grid], alpha=float(alpha), folds=folds, repeats=repeats,
                    iters=iters, burn_in=burn_in, thin=thin, seed=seed, split_merge=bool(split_merge),
                    scheduler=scheduler, n=int(X.shape[0]), d=int(X.shape[1]), standardize=bool(standardize),
                    niw_fixed=_fixed_niw_settings(niw), niw_per_split=[part.niw.as_dict() for part in parts],
                    rule=rule)
    mean_rule = find_blow_up(mean_loss, se_loss, r_grid=r_grid)
    chosen = mean_rule if rule == "mean" else robust_blow_up(loss, folds, r_grid=r_grid)
    return CVResult(r_grid, loss, log_pred, mean_k, chosen, settings, mean_rule)


NIW_SETTINGS = ("m0", "kappa0", "nu0", "S0", "covariance_type")


def _fixed_niw_settings(niw):
    """The NIW settings fixed by the caller, JSON-ready ({} when all come from the training parts)."""
    if isinstance(niw, NIW):
        return niw.as_dict()
    return {k: np.asarray(v).tolist() for k, v in (niw or {}).items()}

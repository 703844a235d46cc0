"""Choosing r for a fit: `pcrp run --r cv` and `pcrp compare` (:func:`choose_r`: cross validation on a sample, then
the check on all the data), and the Choose r page's work (:func:`choose_r_work`).
"""

import numpy as np

from ...model import NIW, resolve_niw
from ..path import PATH_PARAMS
from .check import check_with_chains, check_work, cv_kept_clusters
from .settings import BUILTIN_R_SETTINGS, CV_PARAMS
from .validate import cross_validate, cv_work

# The CRP chains of the Choose r page's merge-path start (pcrp.analyses.path.crp_start): the path's declared default.
CHOOSE_R_START_CHAINS = PATH_PARAMS["n_chains"].default

CHOOSE_CV_POINTS = 500


def choose_r(X, *, standardize=False, niw=None, alpha=None, seed=None, n_jobs=None, max_cv_points=None,
             split_merge=None, progress=None):
    """The r to fit X (N, d) with: cross validation (:func:`cross_validate`, BUILTIN_R_SETTINGS, the robust rule) on
    at most ``max_cv_points`` of the points, then :func:`check_with_chains` on all of them, against a CRP fit on
    them and the clusters the cross-validation fits keep. ``niw``: None or a dict of fixed NIW settings (the CV
    fits resolve the rest on their training parts; the check uses :func:`pcrp.model.resolve_niw` of X with them).

    Returns (r, details): details is JSON-ready {cv_r, cv_points, cv_reason, cv_settings, curve, check, text}, text
    one paragraph saying where r came from. ``progress(stage, done, total)``: stage "cross validation" or "check".
    None takes the declared default: alpha and seed :data:`CV_PARAMS`', max_cv_points CHOOSE_CV_POINTS, n_jobs and
    split_merge the run's.
    """
    s = CV_PARAMS.resolve(alpha=alpha, seed=seed)
    alpha, seed = s["alpha"], s["seed"]
    max_cv_points = CHOOSE_CV_POINTS if max_cv_points is None else max_cv_points
    X = np.ascontiguousarray(X, dtype=float)
    rows = X.shape[0]
    cv_X = X
    if rows > max_cv_points:
        cv_X = X[np.sort(np.random.default_rng(seed).choice(rows, size=max_cv_points, replace=False))]
    settings = {k: v for k, v in BUILTIN_R_SETTINGS.items() if k != "seed"}
    result = cross_validate(cv_X, None if isinstance(niw, NIW) else niw, standardize=standardize, alpha=alpha,
                            seed=seed, n_jobs=n_jobs, split_merge=split_merge,
                            progress=None if progress is None else lambda d, t: progress("cross validation", d, t),
                            **settings)
    niw_all = niw if isinstance(niw, NIW) else resolve_niw(X, **(niw or {}))
    r, check = check_with_chains(X, result.chosen_r, result.r_grid, niw_all, alpha=alpha, seed=seed, n_jobs=n_jobs,
                                 cv_mean_k=cv_kept_clusters(result, result.chosen_r), split_merge=split_merge,
                                 progress=None if progress is None else lambda d, t: progress("check", d, t))
    where = "the data" if rows == cv_X.shape[0] else f"a random {cv_X.shape[0]:,} of the {rows:,} points"
    text = (f"cross validation on {where} ({settings['folds']} folds x {settings['repeats']} repeats, "
            f"{settings['iters']:,} sweeps per fit, seed {seed}) proposed r = {result.chosen_r:g} ({result.blow_up.reason}). "
            + check["text"])
    details = {"cv_r": result.chosen_r, "cv_points": int(cv_X.shape[0]), "cv_reason": result.blow_up.reason,
               "cv_settings": {k: v for k, v in result.settings.items() if k != "niw_per_split"},
               "curve": result.table(), "check": check, "text": text}
    return r, details


def choose_r_work(n_points, dims, n_r, folds, repeats, iters, n_types=1):
    """Estimated core-seconds of one run of the Choose r page: cross validation (:func:`cv_work`), one chain per
    r on all the data (:func:`pcrp.analyses.k_over_r.k_over_r`), the merge path's CRP chains (:func:`pcrp.analyses.path.crp_start`) and the
    check of the proposal on all the data (:func:`check_work`; its reference is that CRP fit). With ``n_types`` > 1
    (the covariance types compared: :func:`pcrp.analyses.cv.compare_covariance_types`) each type's cross validation
    and check, the latter with its own CRP fit, and the chosen type's chains per r and merge path."""
    from ...sampling.compute import work_cost

    chains_and_path = work_cost(n_points, dims, iters, chains=int(n_r) + CHOOSE_R_START_CHAINS)
    if int(n_types) > 1:
        return (int(n_types) * (cv_work(n_points, dims, n_r, folds, repeats, iters)
                                + check_work(n_points, dims, n_r, iters, crp=True)) + chains_and_path)
    return (cv_work(n_points, dims, n_r, folds, repeats, iters) + chains_and_path
            + check_work(n_points, dims, n_r, iters, crp=False))

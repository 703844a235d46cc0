"""Choosing the pCRP power r by cross validation (paper Sec. 2.3, eq. 5).

For every split of the data (K folds, optionally repeated) and every r on a grid, a pCRP chain is fitted on the
training part, and each kept draw of the training partition is scored on the held-out part by the loss of eq. (5)
and the held-out log predictive density (:mod:`pcrp.analyses.cv.scoring`). The loss is flat while r only removes spurious
small clusters and "blows up" when r is large enough to merge real ones; the proposed r is the grid value just
before that change point (:mod:`pcrp.analyses.cv.blow_up`). :func:`cross_validate` runs the fits (:mod:`pcrp.analyses.cv.validate`);
:func:`check_with_chains` checks the proposal on the data that will be fitted, with a margin
(:mod:`pcrp.analyses.cv.check`); :func:`choose_r` does both for a fit (:mod:`pcrp.analyses.cv.choose`); :mod:`pcrp.analyses.cv.builtin` holds
the shipped r of the built-in data sets, per data settings and covariance type; :func:`compare_covariance_types`
asks which covariance type the data support (:mod:`pcrp.analyses.cv.covariance`). Every setting is declared once in :data:`CV_PARAMS`, with its presets
(:mod:`pcrp.analyses.cv.settings`).
"""

from .blow_up import SPLIT_QUANTILE, BlowUp, find_blow_up, robust_blow_up
from .builtin import (BUILTIN_R_COMMAND, BUILTIN_R_DATA, BUILTIN_R_FILE, BUILTIN_R_VARIANTS, ShippedR, builtin_r,
                      builtin_r_entries, builtin_r_table, check_builtin_r, compute_builtin_r, shipped_r, split_scores,
                      types_for, write_builtin_r)
from .check import (CHECK_CHAINS, CHECK_ITERS, CHECK_RHAT, CHECK_TRIES, MARGIN_STEPS,
                    REFERENCE_POINTS, check_text, check_with_chains, check_work, cv_kept_clusters)
from .covariance import (SIMPLEST_FIRST, CovarianceChoice, TypeScore, choose_covariance, compare_covariance_types,
                         covariance_work, shipped_covariance_choice)
from .choose import CHOOSE_CV_POINTS, CHOOSE_R_START_CHAINS, choose_r, choose_r_work
from .scoring import (PreparedSplit, SplitScore, fit_and_score, make_splits, prepare_split, score_held_out,
                      within_cluster_loss)
from .settings import (BUILTIN_R_SETTINGS, CHOOSE_R_BUDGET, CHOOSE_R_PAGE, CV_PARAMS, CV_RULES, DEFAULT_GRID, CVError,
                       check_cv_settings, check_rule)
from .validate import NIW_SETTINGS, CVResult, cross_validate, cv_work

__all__ = [
    "BUILTIN_R_COMMAND", "BUILTIN_R_DATA", "BUILTIN_R_FILE", "BUILTIN_R_SETTINGS", "BUILTIN_R_VARIANTS", "ShippedR",
    "builtin_r_entries", "shipped_r", "split_scores", "types_for", "CHECK_CHAINS", "CHECK_ITERS",
    "CHECK_RHAT", "CHECK_TRIES", "CHOOSE_CV_POINTS", "CHOOSE_R_BUDGET", "CHOOSE_R_PAGE", "CHOOSE_R_START_CHAINS",
    "CV_PARAMS", "CV_RULES", "SIMPLEST_FIRST", "CovarianceChoice", "TypeScore", "choose_covariance",
    "compare_covariance_types", "covariance_work", "shipped_covariance_choice", "DEFAULT_GRID", "MARGIN_STEPS", "NIW_SETTINGS", "REFERENCE_POINTS",
    "SPLIT_QUANTILE", "BlowUp", "CVError", "CVResult", "PreparedSplit", "SplitScore", "builtin_r", "builtin_r_table",
    "check_builtin_r", "check_cv_settings", "check_rule", "check_text", "check_with_chains", "check_work", "choose_r",
    "choose_r_work", "compute_builtin_r", "cross_validate", "cv_kept_clusters", "cv_work",
    "find_blow_up", "fit_and_score", "make_splits", "prepare_split", "robust_blow_up", "score_held_out",
    "within_cluster_loss", "write_builtin_r",
]

"""Cross validation's settings, declared once: :data:`CV_PARAMS` (name, default, bounds, meaning), the change-point
rules :data:`CV_RULES`, the presets (the shipped r's :data:`BUILTIN_R_SETTINGS`, the Choose r page's
:data:`CHOOSE_R_PAGE`) and :class:`CVError`.

The command line's flags, the Choose r page's widgets and :func:`pcrp.analyses.cv.cross_validate` read their defaults and
bounds from here; the run's declarations (:data:`pcrp.runs.run_spec.RUN_PARAMS`) give the sweeps' and the seed's bounds
and the registry (:data:`pcrp.model.PRIORS`) gives alpha's and the grid of r.
"""

from dataclasses import replace
from numbers import Real

import numpy as np

from ...data import MAX_ROWS
from ...basics.errors import SettingError
from ...basics.params import Declarations, Param
from ..path import TUNED, check_tuned_values
from ...runs.run_spec import RUN_PARAMS


class CVError(SettingError):
    """A bad cross-validation setting; the message names it and what to do."""


# The grid of the tuned parameter (the pCRP's r) that cross validation scans: the registry's tune_grid
# (pcrp.model.R_GRID: r = 1 + eps first, as in the paper, then 1.05 .. 2.0).
DEFAULT_GRID = TUNED.tune_grid
_GRID_STEP = round(DEFAULT_GRID[2] - DEFAULT_GRID[1], 6)

# The most folds: N / 2 for the most rows pcrp reads (each fold holds out two points or more). The most repeats: a
# bound on the count only; the memory check before the splits are made (8 bytes a point per split) refuses far fewer.
MAX_FOLDS = MAX_ROWS // 2
MAX_REPEATS = 10**12

CV_PARAMS = Declarations(
    "cross validation",
    TUNED.param("alpha"),
    Param("r_start", "first r (1 + eps)", DEFAULT_GRID[0], 0.05, 5.0, True, True,
          "The grid's first r; the paper's grid starts at 1 + eps."),
    Param("r_stop", "last r", DEFAULT_GRID[-1], 0.1, 6.0, True, True, "The grid's last r (included)."),
    Param("r_step", "step", _GRID_STEP, 0.01, 1.0, True, True, "The grid's step: r on its multiples after the first."),
    Param("folds", "folds", 5, 2, MAX_FOLDS, True, True,
          "Each point is held out once per repeat; more folds train on more of the data.", integer=True,
          constraint="folds <= N / 2", why_high=f"each fold holds out two points or more, and pcrp reads at most "
                                                  f"{MAX_ROWS:,} rows."),
    Param("repeats", "repeats of the folds", 1, 1, MAX_REPEATS, True, True,
          "New shuffles of the folds; the robust rule compares the repeats (give 3 or more).", integer=True,
          why_high="a few repeats already show how the proposal moves with the folds; 3 is the usual choice."),
    replace(RUN_PARAMS["iters"], label="sweeps per fit", default=2000,
            help="Gibbs sweeps of each fit (one pCRP chain per split and r)."),
    replace(RUN_PARAMS["burn_in"], label="burn-in per fit", default=1000),
    replace(RUN_PARAMS["thin"], default=10,
            help="Score every thin-th kept draw of each fit's training partition."),
    replace(RUN_PARAMS["seed"], default=0,
            help="Seed of the folds and of the fits (one seed per split for all r: common random numbers)."),
    error=CVError,
)

# The change-point rules (pcrp.analyses.cv.blow_up), the default first: "robust" (robust_blow_up) or "mean" (find_blow_up on
# the mean curve, the rule before December 2026). A choice, not a number, so declared beside CV_PARAMS.
CV_RULES = ("robust", "mean")


def check_rule(rule):
    """``rule`` (None: the default, CV_RULES[0]) if it is one of :data:`CV_RULES`, else CVError."""
    rule = CV_RULES[0] if rule is None else rule
    if rule not in CV_RULES:
        raise CVError(f"rule must be one of {', '.join(CV_RULES)} (got {rule!r}).")
    return rule


def check_grid(r_grid):
    """The grid of r (G,) as floats: two or more increasing values, each a power the tuned prior allows."""
    if np.ndim(r_grid) != 1 or np.size(r_grid) < 2:
        raise CVError("Give at least two values of r to compare.")
    r_grid = check_tuned_values(r_grid, CVError, f"Every r on the grid must be a positive power the {TUNED.label} "
                                                 "allows")
    if np.any(np.diff(r_grid) <= 0):
        raise CVError("The r grid must be increasing (the change point is read from left to right).")
    return r_grid


def check_folds_fit(n, folds):
    """``folds`` against the N points it splits (the declaration's constraint folds <= N / 2), checked before its
    bounds so that a count above them is told the limit of these data."""
    if isinstance(folds, Real) and not isinstance(folds, bool) and folds > n // 2:
        raise CVError(f"folds must be a whole number from 2 to N/2 = {n // 2} (got {folds}).")


def check_cv_settings(n, r_grid, folds, repeats, alpha):
    """The grid (G,) as floats, checked, with ``folds``, ``repeats`` and ``alpha`` checked against
    :data:`CV_PARAMS` and ``folds`` against the N = ``n`` points (before any fit: the command line's check)."""
    r_grid = check_grid(r_grid)
    check_folds_fit(n, folds)
    CV_PARAMS.resolve(folds=folds, repeats=repeats, alpha=alpha)
    return r_grid


# ----------------------------------------------------------------------------- presets

# The settings the shipped r of the built-in data sets were made with (pcrp/datasets/cv_r.json; the defaults of
# `pcrp cv`): five folds repeated three times for the robust rule, 2,000 sweeps per fit.
BUILTIN_R_SETTINGS = dict(CV_PARAMS.preset(folds=5, repeats=3, iters=2000, burn_in=1000, thin=10, seed=0),
                          rule=check_rule("robust"))
# The Choose r page's defaults: one repeat of 1,000 sweeps per fit, so that the page's default run on 2,000 points
# in 10-D fits its work budget (CHOOSE_R_BUDGET).
CHOOSE_R_PAGE = CV_PARAMS.preset(iters=1000, burn_in=500, repeats=1)
# The Choose r page's work per press of Run, in estimated core-seconds (pcrp.sampling.compute.work_cost): at most
# CHOOSE_R_BUDGET, 5 minutes of one core (about 2.5 on two). The page's defaults need about 7 core-seconds on Old
# Faithful, about 64 on 2,000 points in 2-D, about 190 in 10-D and 3,200 in 50-D (refused unless the grid, folds or
# sweeps are cut).
CHOOSE_R_BUDGET = 300.0

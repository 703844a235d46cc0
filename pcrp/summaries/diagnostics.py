"""MCMC convergence diagnostics of one quantity's (chain, draw) values, by ArviZ's own code.

Rank-normalised split R-hat, bulk and tail effective sample sizes and the Monte Carlo standard error of the mean
(Vehtari, Gelman, Simpson, Carpenter & Buerkner 2021, "Rank-normalization, folding, and localization: an improved
R-hat", Bayesian Analysis 16(2)) come from arviz-stats' array functions, ``arviz_stats.base.array_stats``
(``rhat(method="rank")``, ``ess(method="bulk" | "tail")``, ``mcse(method="mean")``: ArviZ's documented interface on
NumPy arrays, the same code as ArviZ 0.x's; tests/test_chains.py checks the figures a run prints against
``az.summary`` of its export).
This module only fixes pcrp's conventions around them:

- values are (C, D) or (D,), one chain; each function returns a float;
- nan where the figure is undefined: fewer than MIN_DRAWS draws per chain, fewer than 2 chains for R-hat, a NaN
  among the values (arviz-stats 0.3 to 0.8 give the same nan; the wrapper states the rule itself, and needs
  no import for it);
- no NumPy warning for constant values (R-hat 0/0 is nan; MCSE 0; ESS the number of draws).

Importing arviz-stats takes about 0.75 s on top of what a run already loads (scipy.signal, scipy.stats and
scipy.optimize for its array functions; xarray with pandas, which its package ``__init__`` imports whenever xarray is
installed, and ArviZ 0.x installs it), so it is imported when the first defined figure is asked for, not with this
module: ``import pcrp``, ``pcrp --help`` and the live view's first frames do not pay it; a run pays it once, at the
budget's first judgement (docs/speed.md, Start-up).
"""

import numpy as np

MIN_DRAWS = 4  # fewer draws per chain than this: no diagnostic (too few to estimate an autocorrelation)
TAIL_PROBS = (0.05, 0.95)  # the tail ESS is the smaller ESS of these two quantiles' indicators (ArviZ's default)


def _as_chains(values):
    values = np.asarray(values, dtype=float)
    return values[None] if values.ndim == 1 else values


def _undefined(values, min_chains=1):
    return (values.ndim != 2 or values.shape[0] < min_chains or values.shape[1] < MIN_DRAWS
            or bool(np.isnan(values).any()))


def _figure(name, values, min_chains=1, **kwargs):
    values = _as_chains(values)
    if _undefined(values, min_chains):
        return float("nan")
    from arviz_stats.base import array_stats

    with np.errstate(divide="ignore", invalid="ignore"):
        return float(getattr(array_stats, name)(values, chain_axis=0, draw_axis=1, **kwargs))


def rhat_rank(values):
    """Rank-normalised split R-hat: the larger of the bulk R-hat (rank-normalised split chains) and the tail
    R-hat (the same of the split chains' distances to their median). nan with fewer than 2 chains."""
    return _figure("rhat", values, min_chains=2, method="rank")


def ess_bulk(values):
    """Bulk effective sample size, in draws: the ESS of the rank-normalised split chains."""
    return _figure("ess", values, method="bulk")


def ess_tail(values):
    """Tail effective sample size, in draws: the smaller ESS of the split-chain indicators of being at most the
    5% and the 95% quantile."""
    return _figure("ess", values, method="tail", prob=TAIL_PROBS)


def mcse_mean(values):
    """Monte Carlo standard error of the mean: the pooled standard deviation over sqrt(ESS of the split chains).
    0 for constant values."""
    return _figure("mcse", values, method="mean")

"""MCMC convergence diagnostics of one quantity's (chain, draw) values, by ArviZ's own code.

Rank-normalised split R-hat, bulk and tail effective sample sizes and the Monte Carlo standard error of the mean
(Vehtari, Gelman, Simpson, Carpenter & Buerkner 2021, "Rank-normalization, folding, and localization: an improved
R-hat", Bayesian Analysis 16(2)) come from arviz-stats' array functions, ``arviz_stats.base.array_stats``
(``rhat(method="rank")``, ``ess(method="bulk" | "tail")``, ``mcse(method="mean")``: ArviZ's documented interface on
NumPy arrays, the same code as ArviZ 0.x's; tests/test_cli.py checks a run's printed figures against ``az.summary``).
This module only fixes pcrp's conventions around them:

- values are (C, D) or (D,), one chain; each function returns a float;
- nan where the figure is undefined: fewer than MIN_DRAWS draws per chain, fewer than 2 chains for R-hat, a NaN
  among the values (arviz-stats does the same; the wrapper keeps it so whatever its version);
- no NumPy warning for constant values (R-hat 0/0 is nan; MCSE 0; ESS the number of draws).

Importing arviz-stats takes about 0.7 s on top of what a run already loads (SciPy's stats, signal and optimize, and
xarray with pandas when xarray is installed: its package ``__init__`` imports them), so nothing imports it before a
figure is asked for, and :func:`import_in_background` lets a run start that import while it loads its kernels and
samples (docs/speed.md, Start-up).
"""

import threading

import numpy as np

MIN_DRAWS = 4  # fewer draws per chain than this: no diagnostic (too few to estimate an autocorrelation)
TAIL_PROBS = (0.05, 0.95)  # the tail ESS is the smaller ESS of these two quantiles' indicators (ArviZ's default)

_background = []  # the thread of import_in_background, once started


def import_in_background():
    """Start importing arviz-stats in a daemon thread (once per process) so that the first figure need not wait
    for all of it. A failed import there is left for the first figure to raise."""
    if _background or "arviz_stats.base" in __import__("sys").modules:
        return

    def load():
        try:
            import arviz_stats.base  # noqa: F401
        except Exception:
            pass

    thread = threading.Thread(target=load, name="pcrp-import-arviz-stats", daemon=True)
    _background.append(thread)
    thread.start()


def _array_stats():
    if _background:
        _background[0].join()  # the main thread's import waits here, not on a module lock half-way through
    from arviz_stats.base import array_stats

    return array_stats


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
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(getattr(_array_stats(), name)(values, chain_axis=0, draw_axis=1, **kwargs))


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

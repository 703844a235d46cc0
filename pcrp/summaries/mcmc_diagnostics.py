"""MCMC convergence diagnostics of one quantity's (chain, draw) values, in NumPy alone.

Rank-normalised split R-hat, bulk and tail effective sample sizes and the Monte Carlo standard error of the mean,
as defined by Vehtari, Gelman, Simpson, Carpenter & Buerkner (2021, "Rank-normalization, folding, and localization:
an improved R-hat", Bayesian Analysis 16(2)) and as ArviZ computes them: ``rhat(method="rank")``,
``ess(method="bulk" | "tail")`` and ``mcse(method="mean")``. tests/test_mcmc_diagnostics.py checks every function
against ArviZ on random chains with ties, short and odd lengths, a constant chain and NaN.

Why not call ArviZ here (docs/design.md section 2, the analyses): importing it takes 1.3-1.5 s of one core (xarray,
matplotlib, scipy.stats), longer than a whole short ``pcrp run``; these four figures need only a sort, an FFT and
the normal quantile. ArviZ stays the reference in the tests and the export (``ChainSet.to_inference_data``).

Every function takes values (C, D) or (D,) (one chain) and returns a float: nan where the figure is undefined
(fewer than 4 draws per chain, fewer than 2 chains for R-hat, a NaN among the values).
"""

import numpy as np

from ..model.special_functions import normal_quantile

MIN_DRAWS = 4  # fewer draws per chain than this: no diagnostic (too few to estimate an autocorrelation)
TAIL_PROBS = (0.05, 0.95)  # the tail ESS is the smaller of the ESS of these two quantiles' indicators
_RANK_OFFSET = 3 / 8  # Blom's offset for ranks before the normal quantile


def _as_chains(values):
    values = np.asarray(values, dtype=float)
    return values[None] if values.ndim == 1 else values


def _undefined(values, min_chains=1):
    """Whether no diagnostic is defined for (C, D) values: a NaN, fewer than ``min_chains`` chains or fewer than
    MIN_DRAWS draws."""
    return (values.ndim != 2 or values.shape[0] < min_chains or values.shape[1] < MIN_DRAWS
            or bool(np.isnan(values).any()))


def split_chains(values):
    """(2C, D // 2): each chain's first and last halves as chains of their own (the middle draw of an odd D is
    dropped)."""
    half = values.shape[1] // 2
    return np.vstack((values[:, :half], values[:, values.shape[1] - half:]))


def rank_normalise(values):
    """Values (any shape) replaced by the normal quantiles of their pooled ranks: ties get their average rank,
    rank r of S values maps to Phi^-1((r - 3/8) / (S + 1/4))."""
    flat = values.reshape(-1)
    order = np.argsort(flat, kind="mergesort")
    ordered = flat[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])  # the first position of each distinct value
    ends = np.r_[starts[1:], flat.size]
    average_rank = (starts + 1 + ends) / 2.0  # 1-based ranks starts+1 .. ends, averaged
    size = flat.size
    z_of_group = normal_quantile((average_rank - _RANK_OFFSET) / (size - 2 * _RANK_OFFSET + 1))
    z = np.empty(size)
    z[order] = np.repeat(z_of_group, ends - starts)
    return z.reshape(values.shape)


def _next_regular(n):
    """The smallest integer >= n with no prime factor above 5 (a length the FFT handles fast)."""
    best = 1 << max(int(n - 1).bit_length(), 0)
    power5 = 1
    while power5 < best:
        power35 = power5
        while power35 < best:
            length = power35
            while length < n:
                length *= 2
            best = min(best, length)
            power35 *= 3
        power5 *= 5
    return best


def _autocovariance(values):
    """(C, D) autocovariances of each chain at lags 0..D-1 (biased: divided by D), by FFT."""
    n_draws = values.shape[1]
    centred = values - values.mean(axis=1, keepdims=True)
    length = _next_regular(2 * n_draws)
    spectrum = np.fft.rfft(centred, n=length, axis=1)
    spectrum *= np.conjugate(spectrum)
    return np.fft.irfft(spectrum, n=length, axis=1)[:, :n_draws] / n_draws


def _ess(values):
    """Effective sample size of (C, D) values: Geyer's initial monotone sequence on the chains' pooled
    autocorrelations; C x D when the values are constant."""
    if bool(np.isnan(values).any()):
        return float("nan")
    if values.max() - values.min() < np.finfo(float).resolution:
        return float(values.size)
    n_chains, n_draws = values.shape
    acov = _autocovariance(values)
    mean_var = np.mean(acov[:, 0]) * n_draws / (n_draws - 1.0)
    var_plus = mean_var * (n_draws - 1.0) / n_draws
    if n_chains > 1:
        var_plus += np.var(values.mean(axis=1), ddof=1)
    rho = np.zeros(n_draws)
    rho_even, rho_odd = 1.0, 1.0 - (mean_var - np.mean(acov[:, 1])) / var_plus
    rho[0], rho[1] = rho_even, rho_odd
    t = 1
    while t < n_draws - 3 and rho_even + rho_odd > 0.0:  # Geyer's initial positive sequence
        rho_even = 1.0 - (mean_var - np.mean(acov[:, t + 1])) / var_plus
        rho_odd = 1.0 - (mean_var - np.mean(acov[:, t + 2])) / var_plus
        if rho_even + rho_odd >= 0:
            rho[t + 1], rho[t + 2] = rho_even, rho_odd
        t += 2
    last = t - 2
    if rho_even > 0:
        rho[last + 1] = rho_even
    t = 1
    while t <= last - 2:  # made monotone
        if rho[t + 1] + rho[t + 2] > rho[t - 1] + rho[t]:
            rho[t + 1] = rho[t + 2] = (rho[t - 1] + rho[t]) / 2.0
        t += 2
    total = n_chains * n_draws
    tau = -1.0 + 2.0 * np.sum(rho[:last + 1]) + np.sum(rho[last + 1:last + 2])
    tau = max(tau, 1 / np.log10(total))
    return float("nan") if np.isnan(rho).any() else float(total / tau)


def _rhat(values):
    """Potential scale reduction of (C, D) values: sqrt of (between-chain / within-chain variance + D - 1) / D."""
    n_draws = values.shape[1]
    between = n_draws * np.var(values.mean(axis=1), ddof=1)
    within = np.mean(np.var(values, axis=1, ddof=1))
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(np.sqrt((between / within + n_draws - 1) / n_draws))


def rhat_rank(values):
    """Rank-normalised split R-hat: the larger of the bulk R-hat (rank-normalised split chains) and the tail
    R-hat (the same of the split chains' distances to their median). nan with fewer than 2 chains."""
    values = _as_chains(values)
    if _undefined(values, min_chains=2):
        return float("nan")
    split = split_chains(values)
    bulk = _rhat(rank_normalise(split))
    tail = _rhat(rank_normalise(np.abs(split - np.median(split))))
    return max(bulk, tail)


def ess_bulk(values):
    """Bulk effective sample size, in draws: the ESS of the rank-normalised split chains."""
    values = _as_chains(values)
    if _undefined(values):
        return float("nan")
    return _ess(rank_normalise(split_chains(values)))


def _quantile(values, prob):
    """The ``prob`` quantile of all values, interpolated between order statistics as R's type 7 does."""
    ordered = np.sort(values.reshape(-1))
    n = ordered.size
    position = n * prob + 1 - prob
    k = int(np.floor(min(max(position, 1), n - 1)))
    gamma = min(max(position - k, 0.0), 1.0)
    return (1.0 - gamma) * ordered[k - 1] + gamma * ordered[k]


def ess_tail(values):
    """Tail effective sample size, in draws: the smaller ESS of the split-chain indicators of being at most the
    5% and the 95% quantile."""
    values = _as_chains(values)
    if _undefined(values):
        return float("nan")
    return min(_ess(split_chains((values <= _quantile(values, prob)).astype(float))) for prob in TAIL_PROBS)


def mcse_mean(values):
    """Monte Carlo standard error of the mean: the pooled standard deviation over sqrt(ESS of the split chains).
    0 for constant values."""
    values = _as_chains(values)
    if _undefined(values):
        return float("nan")
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(np.std(values, ddof=1) / np.sqrt(_ess(split_chains(values))))

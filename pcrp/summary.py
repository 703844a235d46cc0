"""Summaries of chains: clustering metrics, posterior of K, MCMC diagnostics.

Metric conventions (stated in the app next to every number):
- NMI = I(U; V) / sqrt(H(U) H(V)) ("geometric" normalisation, the authors' choice and
  scikit-learn's ``average_method="geometric"``); 1 for identical partitions.
- VI = H(U | V) + H(V | U) in bits (log base 2, the authors' choice); 0 for identical partitions.

Diagnostics and standard errors are ArviZ's (0.23), computed here by the same NumPy steps as ArviZ's NumPy path (the
import of ArviZ, with pandas, xarray and matplotlib, costs 1.5-2 s of every run's start; tests/test_summaries_fast.py
checks the numbers against ArviZ's own to 1e-9), on (chain, draw) arrays:
- R-hat: rank-normalised split R-hat (Vehtari et al. 2021), ``az.rhat(method="rank")``: :func:`rank_rhat`.
- ESS: bulk and tail effective sample sizes, in draws, ``az.ess(method="bulk" | "tail")``: :func:`ess_bulk`,
  :func:`ess_tail`.
- MCSE: Monte Carlo standard error of the mean, sd / sqrt(ESS of the mean), ``az.mcse(method="mean")``:
  :func:`mcse_mean`.
  Standard errors in tables and metrics are MCSEs: they account for autocorrelation, where
  std / sqrt(n) would treat correlated draws as independent.
The posterior density lives in :mod:`pcrp.density`, partition summaries in :mod:`pcrp.partition`.
"""

import math

import numpy as np


def nmi(true, pred):
    """Normalised mutual information, geometric normalisation (1 when both are one cluster).

    scikit-learn's ``normalized_mutual_info_score(average_method="geometric")``; true, pred (N,) labels.
    """
    from sklearn.metrics import normalized_mutual_info_score

    return float(normalized_mutual_info_score(true, pred, average_method="geometric"))


def vi(true, pred, base=2.0):
    """Variation of information H(U|V) + H(V|U) = H(U) + H(V) - 2 I(U; V), in bits by default.

    true, pred (N,) labels. The mutual information is scikit-learn's (from a sparse contingency table,
    so a draw with thousands of clusters needs no dense K x K table).
    """
    from scipy import stats
    from sklearn.metrics import mutual_info_score

    _, counts_u = np.unique(true, return_counts=True)
    _, counts_v = np.unique(pred, return_counts=True)
    nats = stats.entropy(counts_u) + stats.entropy(counts_v) - 2.0 * mutual_info_score(true, pred)
    return float(max(nats, 0.0) / np.log(base))


def nmi_vi(true, pred):
    """(NMI, VI in bits) of two (N,) labelings from one contingency table (bincount, O(N)): the same numbers as
    :func:`nmi` and :func:`vi` to rounding, at a fraction of their cost for many draws."""
    _, u = np.unique(true, return_inverse=True)
    _, v = np.unique(pred, return_inverse=True)
    u, v = u.reshape(-1), v.reshape(-1)
    N = u.size
    nu, nv = int(u.max()) + 1, int(v.max()) + 1
    joint = np.bincount(u * nv + v, minlength=nu * nv)
    joint = joint[joint > 0] / N
    pu, pv = np.bincount(u) / N, np.bincount(v) / N
    hu, hv = -np.sum(pu * np.log(pu)), -np.sum(pv * np.log(pv))
    h_joint = -np.sum(joint * np.log(joint))
    mi = max(hu + hv - h_joint, 0.0)
    if hu == 0.0 and hv == 0.0:
        score = 1.0  # both one cluster (scikit-learn's convention)
    elif hu == 0.0 or hv == 0.0:
        score = 0.0
    else:
        score = min(mi / np.sqrt(hu * hv), 1.0)
    return float(score), float(max(hu + hv - 2.0 * mi, 0.0) / np.log(2.0))


def metric_summary(true, label_draws):
    """Mean and MCSE of NMI and VI against ``true`` (N,) over label draws.

    label_draws: (n_draws, N) for one chain or (n_chains, n_draws, N) for several.
    Returns {"NMI": (mean, MCSE), "VI": (mean, MCSE)}; the MCSE is nan below 4 draws per chain.
    """
    draws = np.asarray(label_draws)
    if draws.ndim == 2:
        draws = draws[None]
    values = np.array([[nmi_vi(true, z) for z in chain] for chain in draws])  # (C, S, 2)
    return {"NMI": mean_and_mcse(values[..., 0]), "VI": mean_and_mcse(values[..., 1])}


def k_posterior(K):
    """(values, probabilities) of the number of clusters over the given sweeps."""
    values, counts = np.unique(np.asarray(K), return_counts=True)
    return values, counts / counts.sum()


def oracle_alpha(k_true, n):
    """CRP-Oracle concentration: alpha = K_true / ln N, so that alpha ln N matches K_true."""
    return float(k_true) / float(np.log(n))


# R-hat above this means the chains disagree (Vehtari et al. 2021 recommend 1.01).
RHAT_THRESHOLD = 1.01
MIN_DRAWS = 4  # ArviZ's minimum draws per chain for ESS and MCSE


def _chain_draw(values):
    values = np.asarray(values, dtype=float)
    if values.ndim == 1:
        values = values[None]
    if values.ndim != 2:
        raise ValueError(f"expected a (chain, draw) array, got shape {values.shape}.")
    return values


def _min_draws_or_nan(values, min_chains=1):
    """Whether ArviZ would call these (chain, draw) values invalid (a NaN, too few chains or draws): nan then."""
    return bool(np.isnan(values).any()) or values.shape[0] < min_chains or values.shape[1] < MIN_DRAWS


def _split_chains(values):
    """Each chain's first and last halves as two chains (chain, draw) -> (2 chain, draw // 2)."""
    half = values.shape[1] // 2
    return np.vstack([values[:, :half], values[:, -half:]])


def _z_scale(values):
    """Rank-normalised values: average ranks over all draws, back-transformed (Blom, c = 3/8) to normal scores."""
    from scipy.special import ndtri

    flat = values.reshape(-1)
    order = np.argsort(flat, kind="mergesort")
    ordered = flat[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])  # first index of each run of ties
    ends = np.r_[starts[1:], flat.size]
    ranks = np.empty(flat.size)
    ranks[order] = np.repeat((starts + ends + 1) / 2.0, ends - starts)  # ranks from 1, ties get their average
    c = 3.0 / 8.0
    return ndtri((ranks - c) / (flat.size - 2 * c + 1)).reshape(values.shape)


def _autocov(values):
    """Autocovariance of each chain at every lag (chain, draw), by FFT."""
    from scipy.fft import next_fast_len

    n = values.shape[1]
    centred = values - values.mean(axis=1, keepdims=True)
    spectrum = np.fft.rfft(centred, n=next_fast_len(2 * n), axis=1)
    spectrum *= np.conjugate(spectrum)
    return np.fft.irfft(spectrum, n=next_fast_len(2 * n), axis=1)[:, :n] / n


def _ess(values):
    """Effective sample size of (chain, draw) values: Geyer's initial monotone sequence on the chains' pooled
    autocorrelation (ArviZ's ``_ess``)."""
    values = np.asarray(values, dtype=float)
    if np.isnan(values).any():
        return float("nan")
    if values.max() - values.min() < np.finfo(float).resolution:
        return float(values.size)
    n_chain, n_draw = values.shape
    acov = _autocov(values)
    mean_var = np.mean(acov[:, 0]) * n_draw / (n_draw - 1.0)
    var_plus = mean_var * (n_draw - 1.0) / n_draw
    if n_chain > 1:
        var_plus += np.var(values.mean(axis=1), ddof=1)
    rho = np.zeros(n_draw)
    rho_even, rho_odd = 1.0, 1.0 - (mean_var - np.mean(acov[:, 1])) / var_plus
    rho[0], rho[1] = rho_even, rho_odd
    t = 1
    while t < n_draw - 3 and rho_even + rho_odd > 0.0:  # Geyer's initial positive sequence
        rho_even = 1.0 - (mean_var - np.mean(acov[:, t + 1])) / var_plus
        rho_odd = 1.0 - (mean_var - np.mean(acov[:, t + 2])) / var_plus
        if rho_even + rho_odd >= 0:
            rho[t + 1], rho[t + 2] = rho_even, rho_odd
        t += 2
    max_t = t - 2
    if rho_even > 0:
        rho[max_t + 1] = rho_even
    t = 1
    while t <= max_t - 2:  # Geyer's initial monotone sequence
        if rho[t + 1] + rho[t + 2] > rho[t - 1] + rho[t]:
            rho[t + 1] = rho[t + 2] = (rho[t - 1] + rho[t]) / 2.0
        t += 2
    size = n_chain * n_draw
    tau = -1.0 + 2.0 * np.sum(rho[:max_t + 1]) + np.sum(rho[max_t + 1:max_t + 2])
    tau = max(tau, 1 / np.log10(size))
    return float("nan") if np.isnan(rho).any() else float(size / tau)


def _rhat(values):
    """Plain R-hat of (chain, draw) values (between- and within-chain variances)."""
    n = values.shape[1]
    between = n * np.var(values.mean(axis=1), ddof=1)
    within = np.mean(np.var(values, axis=1, ddof=1))
    return float(np.sqrt((between / within + n - 1) / n))


def rank_rhat(values):
    """Rank-normalised split R-hat of (chain, draw) values, the larger of the bulk's and the folded tail's
    (``az.rhat(method="rank")``); nan with fewer than 2 chains or MIN_DRAWS draws."""
    values = _chain_draw(values)
    if _min_draws_or_nan(values, min_chains=2):
        return float("nan")
    with np.errstate(divide="ignore", invalid="ignore"):
        split = _split_chains(values)
        folded = np.abs(split - np.median(split))
        return max(_rhat(_z_scale(split)), _rhat(_z_scale(folded)))


def ess_bulk(values):
    """Bulk ESS of (chain, draw) values, in draws (``az.ess(method="bulk")``); nan below MIN_DRAWS draws."""
    values = _chain_draw(values)
    if _min_draws_or_nan(values):
        return float("nan")
    with np.errstate(divide="ignore", invalid="ignore"):
        return _ess(_z_scale(_split_chains(values)))


def ess_tail(values):
    """Tail ESS of (chain, draw) values: the smaller ESS of the indicators of the 5% and 95% quantiles
    (``az.ess(method="tail")``); nan below MIN_DRAWS draws."""
    values = _chain_draw(values)
    if _min_draws_or_nan(values):
        return float("nan")
    with np.errstate(divide="ignore", invalid="ignore"):
        return min(_ess(_split_chains(values <= np.quantile(values, prob))) for prob in (0.05, 0.95))


def mcse_mean(values):
    """Monte Carlo standard error of the mean of (chain, draw) values, sd / sqrt(ESS of the mean)
    (``az.mcse(method="mean")``); nan below MIN_DRAWS draws."""
    values = _chain_draw(values)
    if _min_draws_or_nan(values):
        return float("nan")
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(np.std(values, ddof=1) / np.sqrt(_ess(_split_chains(values))))


def mean_and_mcse(values):
    """(mean, MCSE of the mean) of (chain, draw) or (draw,) values, pooling the chains.

    The MCSE is ArviZ's ``mcse(method="mean")``: 0 for constant values, nan with fewer than
    4 draws per chain (too few to estimate the autocorrelation).
    """
    values = _chain_draw(values)
    mean = float(values.mean()) if values.size else float("nan")
    if values.shape[1] < MIN_DRAWS:
        return mean, float("nan")
    return mean, mcse_mean(values)


# A quantity is "settled" in a chain when at least this share of the chain's draws equal its most common value (a
# K that almost never moves, a chain that stays on one partition). Rank-normalised R-hat and ESS rank such ties
# and say nothing useful there: one stray draw in one chain reads as R-hat 1.1, and chains that hold different
# constant values can read as nan. Settled quantities are judged by their values instead (:func:`chains_agree`).
SETTLED_SHARE = 0.99


def _settled_value(chain):
    """(share of draws at the chain's most common value, that value) of one chain's draws (D,)."""
    values, counts = np.unique(chain, return_counts=True)
    top = int(np.argmax(counts))
    return counts[top] / chain.size, float(values[top])


def chain_diagnostics(values):
    """MCMC diagnostics of one quantity from (chain, draw) values, pooled and per chain.

    Returns {"mean", "mcse", "rhat", "ess_bulk", "ess_tail", "settled", "agree", "per_chain": [{...}, ...]}.
    Pooled R-hat compares the chains (rank-normalised split R-hat; nan with one chain or
    constant values). A chain's own R-hat compares its two halves as if they were two chains
    (ArviZ splits each half again, so four quarters are compared): it flags a chain that is
    still drifting. ESS is in draws; MCSE is the Monte Carlo standard error of the mean.
    settled: every chain holds one value in at least :data:`SETTLED_SHARE` of its draws (R-hat and ESS are then
    not informative); agree: :func:`chains_agree` of this result.
    """
    values = _chain_draw(values)
    n_chains, n_draws = values.shape

    def stats(v, rhat):
        mean, mcse = mean_and_mcse(v)
        enough = v.shape[1] >= MIN_DRAWS
        return {
            "mean": mean,
            "mcse": mcse,
            "rhat": rhat,
            "ess_bulk": ess_bulk(v) if enough else float("nan"),
            "ess_tail": ess_tail(v) if enough else float("nan"),
        }

    pooled_rhat = rank_rhat(values) if n_chains >= 2 and n_draws >= MIN_DRAWS else float("nan")
    out = stats(values, pooled_rhat)
    half = n_draws // 2
    out["per_chain"] = [
        stats(chain[None], rank_rhat(np.vstack([chain[:half], chain[half:2 * half]]))
              if half >= MIN_DRAWS else float("nan"))
        for chain in values
    ]
    settled = [_settled_value(chain) for chain in values] if n_draws else []
    out["settled"] = bool(settled) and all(share >= SETTLED_SHARE for share, _ in settled)
    for entry, (share, value) in zip(out["per_chain"], settled):
        entry["settled_share"], entry["settled_value"] = float(share), value
    out["agree"] = chains_agree(out)
    return out


def chains_agree(diag, threshold=RHAT_THRESHOLD):
    """Whether the chains of one :func:`chain_diagnostics` result agree on that quantity.

    Settled quantities (every chain at one value in at least SETTLED_SHARE of its draws) agree when every chain's
    most common value is the same, whatever R-hat reads (ties make it meaningless: a K of 3.00 in every chain can
    read as 1.1, and chains stuck at K = 1 and K = 3 as nan). Otherwise the chains agree when the pooled R-hat is
    at most ``threshold`` (or undefined: a single chain, too few draws).
    """
    if diag.get("settled"):
        return len({c["settled_value"] for c in diag.get("per_chain", [])}) <= 1
    rhat = diag.get("rhat", float("nan"))
    return rhat is None or math.isnan(rhat) or rhat <= threshold


def _short(x):
    return f"{x:.1f}" if abs(x) >= 100 else f"{x:.3g}"


def rhat_warnings(diagnostics, threshold=RHAT_THRESHOLD):
    """Warning lines for every quantity on which the chains disagree (:func:`chains_agree`).

    diagnostics: {quantity name: :func:`chain_diagnostics` result}. Returns a list of strings
    (empty when the chains agree), each naming the figure and what to do.
    """
    lines = []
    for name, diag in diagnostics.items():
        if chains_agree(diag, threshold):
            continue
        if diag.get("settled"):
            held = ", ".join(_short(c["settled_value"]) for c in diag.get("per_chain", []))
            lines.append(
                f"the chains hold {name} at different values (chain by chain: {held}) and never move between "
                "them, so the results depend on where each chain started. Run more split-merge moves per sweep, "
                "or more chains from unlike starts, and check again.")
            continue
        means = ", ".join(_short(c["mean"]) for c in diag.get("per_chain", []))
        lines.append(
            f"R-hat on {name} is {diag['rhat']:.4f} (> {threshold}): the chains disagree (chain means {means}), so the "
            "results still depend on where each chain started. Run more sweeps, or more split-merge moves per "
            "sweep, and check again."
        )
    return lines

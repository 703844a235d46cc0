"""Summaries of chains: clustering metrics, posterior of K, MCMC diagnostics.

Metric conventions (stated in the app next to every number):
- NMI = I(U; V) / sqrt(H(U) H(V)) ("geometric" normalisation, the authors' choice and
  scikit-learn's ``average_method="geometric"``); 1 for identical partitions.
- VI = H(U | V) + H(V | U) in bits (log base 2, the authors' choice); 0 for identical partitions.

Diagnostics and standard errors are ArviZ's, computed on (chain, draw) arrays by its own code (arviz-stats' array
functions, through :mod:`pcrp.summaries.diagnostics`, which imports them on first use):
- R-hat: rank-normalised split R-hat (Vehtari et al. 2021), ArviZ's ``rhat(method="rank")``.
- ESS: bulk and tail effective sample sizes, in draws, ``ess(method="bulk" | "tail")``.
- MCSE: Monte Carlo standard error of the mean, sd / sqrt(ESS of the mean), ``mcse(method="mean")``.
  Standard errors in tables and metrics are MCSEs: they account for autocorrelation, where
  std / sqrt(n) would treat correlated draws as independent.
The posterior density lives in :mod:`pcrp.analyses.density`, partition summaries in :mod:`pcrp.summaries.partition`.
"""

import math

import numpy as np

from . import diagnostics
from .diagnostics import MIN_DRAWS


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


def sorted_codes(labels):
    """(codes (N,) int64, n): each label replaced by its rank among the n distinct values, as
    ``np.unique(labels, return_inverse=True)`` numbers them. Non-negative integer labels below 4 N + 1024 are
    ranked by a bincount (O(N), no sort); others by np.unique."""
    labels = np.asarray(labels).reshape(-1)
    if labels.dtype.kind in "iu" and labels.size and labels.min() >= 0 and labels.max() < 4 * labels.size + 1024:
        present = np.bincount(labels) > 0
        return (np.cumsum(present) - 1)[labels], int(np.count_nonzero(present))
    _, codes = np.unique(labels, return_inverse=True)
    codes = codes.reshape(-1)
    return codes, int(codes.max()) + 1 if codes.size else 0


def _entropy(p):
    return -np.sum(p * np.log(p))


def nmi_vi(true, pred):
    """(NMI, VI in bits) of two (N,) labelings from one contingency table (bincount, O(N)): the same numbers as
    :func:`nmi` and :func:`vi` to rounding, at a fraction of their cost for many draws."""
    u, nu = sorted_codes(true)
    return _nmi_vi_codes(u, nu, _entropy(np.bincount(u) / u.size), *sorted_codes(pred))


def _nmi_vi_codes(u, nu, hu, v, nv):
    """:func:`nmi_vi` of labelings already coded 0..nu-1 and 0..nv-1 (:func:`sorted_codes`), ``hu`` the entropy of
    u (nats): the true labels are coded once for all the draws."""
    N = u.size
    joint = np.bincount(u * nv + v, minlength=nu * nv)
    joint = joint[joint > 0] / N
    hv = _entropy(np.bincount(v) / N)
    h_joint = _entropy(joint)
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
    u, nu = sorted_codes(true)
    hu = _entropy(np.bincount(u) / u.size)
    values = np.array([[_nmi_vi_codes(u, nu, hu, *sorted_codes(z)) for z in chain] for chain in draws])  # (C, S, 2)
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


def _chain_draw(values):
    values = np.asarray(values, dtype=float)
    if values.ndim == 1:
        values = values[None]
    if values.ndim != 2:
        raise ValueError(f"expected a (chain, draw) array, got shape {values.shape}.")
    return values


def mean_and_mcse(values):
    """(mean, MCSE of the mean) of (chain, draw) or (draw,) values, pooling the chains.

    The MCSE is ArviZ's ``mcse(method="mean")`` (:func:`pcrp.summaries.diagnostics.mcse_mean`): 0 for constant values,
    nan with fewer than 4 draws per chain (too few to estimate the autocorrelation).
    """
    values = _chain_draw(values)
    mean = float(values.mean()) if values.size else float("nan")
    return mean, diagnostics.mcse_mean(values)


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
    n_draws = values.shape[1]

    def stats(v, rhat):
        mean, mcse = mean_and_mcse(v)
        return {"mean": mean, "mcse": mcse, "rhat": rhat,
                "ess_bulk": diagnostics.ess_bulk(v), "ess_tail": diagnostics.ess_tail(v)}

    agreed = agreement(values)
    out = stats(values, agreed["rhat"])
    half = n_draws // 2
    halves = [np.vstack([chain[:half], chain[half:2 * half]]) for chain in values]
    out["per_chain"] = [{**stats(chain[None], diagnostics.rhat_rank(two)), **settled}
                        for chain, two, settled in zip(values, halves, agreed["per_chain"] or [{}] * len(values))]
    out["settled"], out["agree"] = agreed["settled"], agreed["agree"]
    return out


def agreement(values):
    """Whether the chains agree on one quantity, from its (chain, draw) values, without the ESS and MCSE of
    :func:`chain_diagnostics`, which take most of its time (6 ms against 210 ms for 2 chains of 10,000 draws, one
    timing on a loaded 2-core machine): the live view's R-hat badge recomputes it as the chains run.

    Returns {"rhat", "settled", "agree", "per_chain": [{"settled_share", "settled_value"}, ...]} (per_chain empty
    when there are no draws), the keys :func:`chains_agree` reads.
    """
    values = _chain_draw(values)
    settled = [_settled_value(chain) for chain in values] if values.shape[1] else []
    out = {"rhat": diagnostics.rhat_rank(values),
           "settled": bool(settled) and all(share >= SETTLED_SHARE for share, _ in settled),
           "per_chain": [{"settled_share": float(share), "settled_value": value} for share, value in settled]}
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

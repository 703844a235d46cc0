"""Is a pCRP fit collapsed? One pure function decides it, for every table, summary and page that reports one.

A pCRP fit at too large an r merges real clusters, and its chains show it in one of two ways (docs/reproduce/
cv_robustness.md): all chains settle on fewer clusters than the data hold, or some do (the chains started from one
cluster, or from many random ones, stay merged while the chains started from k-means keep the clusters: at r above the
weakest real merge's critical power the merged state is a local mode the sampler does not leave, because a new table's
weight alpha / (sum_k N_k^r + alpha) is tiny at large N). So a fit is **flagged** when

- **collapsed**: some chain's mean K over its kept draws is below ``reference - FALL`` (FALL = 0.5), where the
  reference is the number of clusters a reference fit keeps on the same data (:func:`kept_clusters`: clusters of
  at least MIN_SHARE of the points in the CRP's point estimate, capped by the clusters the cross-validation fits
  keep where those are known); or
- **the chains disagree** on K or on the log joint (:func:`pcrp.summaries.summary.chains_agree`: R-hat above the threshold,
  or settled chains holding different values; a quantity with (near) zero variance within chains that every chain
  holds at the same value is agreement, whatever R-hat reads).

:func:`judge` takes numbers (a chain's mean K, whether the chains agree, the reference) and returns a
:class:`Verdict` with the words to print next to the figure; :func:`judge_chains` reads them from a ChainSet.
Nothing here samples.
"""

from dataclasses import dataclass, field

import numpy as np

# A cluster of a reference partition counts as kept when it holds at least this share of the points (and at least
# MIN_POINTS of them): the CRP's extra clusters are mostly a few points each, real clusters far more.
MIN_SHARE = 0.02
MIN_POINTS = 2
# The live reference (:func:`live_reference`) reads at most this many points of each draw.
LIVE_REFERENCE_POINTS = 2000
# A chain has fallen below the reference when its mean K is below reference - FALL.
FALL = 0.5


def kept_clusters(labels, min_share=MIN_SHARE, min_points=MIN_POINTS):
    """The clusters a partition keeps: those holding at least max(min_points, min_share x N) of the N points of
    ``labels`` (N,) (at least 1). For the CRP's point estimate on Sim 2 (three clusters of 30-40% and the CRP's
    extra clusters of a few points) this is 3."""
    labels = np.asarray(labels).reshape(-1)
    if labels.size == 0:
        return 0
    _, sizes = np.unique(labels, return_counts=True)
    return max(1, int(np.sum(sizes >= max(min_points, min_share * labels.size))))


def live_reference(draws, max_points=LIVE_REFERENCE_POINTS, seed=0):
    """The clusters a running reference chain keeps, before any summary exists: :func:`kept_clusters` of the point
    estimate (:func:`pcrp.summaries.partition.point_estimate`, VI loss) of its recent draws ``draws`` (S, N), on at most
    ``max_points`` of the N points (a fixed random subset; shares of 2% are then known to about 0.3%), so that a
    redraw of the live page stays cheap at N = 100,000 (about 0.05 s at 2,000 points and 50 draws).

    The reference is the point estimate's, as everywhere else, not one draw's nor the typical draw's: on Old
    Faithful (N = 272) most CRP draws hold a third cluster of a few bridge points above the 2% line, different
    points from draw to draw, which the point estimate does not keep.
    """
    from ..summaries.partition import point_estimate

    draws = np.asarray(draws)
    if draws.ndim != 2 or draws.shape[0] == 0 or draws.shape[1] == 0:
        raise ValueError(f"draws must be a non-empty (S, N) array of labels (got shape {draws.shape}).")
    if draws.shape[1] > max_points:
        keep = np.sort(np.random.default_rng(seed).choice(draws.shape[1], size=max_points, replace=False))
        draws = draws[:, keep]
    return kept_clusters(point_estimate(draws, seed=seed, n_jobs=1).labels)  # one thread: it runs in a page redraw


def reference_clusters(crp_labels=None, cv_mean_k=None):
    """The reference for :func:`judge`: :func:`kept_clusters` of the CRP's point estimate ``crp_labels`` on the same
    data, capped by the clusters the cross-validation fits keep at the chosen r (``cv_mean_k``: their mean K,
    rounded) when given; None when neither is known."""
    refs = []
    if crp_labels is not None:
        refs.append(kept_clusters(crp_labels))
    if cv_mean_k is not None and np.isfinite(cv_mean_k):
        refs.append(max(1, int(np.floor(float(cv_mean_k) + 0.5))))
    return min(refs) if refs else None


@dataclass(frozen=True)
class Verdict:
    """Whether a fit is collapsed, and the words that say so.

    collapsed: some chain's mean K is below reference - FALL; disagree: the chains disagree on K or the log joint;
    reference: the clusters the reference fit keeps (None: not known, so only disagreement is judged);
    chain_mean_k: each chain's mean K; below: the chains (0-based) under the reference; text: one sentence, empty
    for a healthy fit; short: a few words for a table cell ('' when healthy).
    """

    collapsed: bool
    disagree: bool
    reference: int | None
    chain_mean_k: tuple = field(default_factory=tuple)
    below: tuple = field(default_factory=tuple)
    text: str = ""
    short: str = ""

    @property
    def flagged(self):
        return self.collapsed or self.disagree


def _remedy(prior):
    """What to do about a collapse under ``prior`` (a PRIORS key): step its tuned parameter down where it has one
    (the pCRP's r), else try another prior or its parameters."""
    from ..model import PRIORS

    tuned = PRIORS[prior].tuned if prior in PRIORS else None
    if tuned:
        return f"real clusters are merged at this {tuned}; use a smaller {tuned}."
    return ("real clusters are merged under this prior's settings; compare its K with the CRP's and try "
            "another prior or its parameters (pcrp run --help lists them).")


def _k(value):
    return f"{value:.2f}"


def mean_k_per_chain(means):
    """"mean K per chain 3.30, 3.40, ...": each chain's mean K in words, as every verdict and check prints it."""
    return "mean K per chain " + ", ".join(_k(float(k)) for k in np.atleast_1d(means))


def disagreement(diagnostics, chain_mean_k, threshold=None):
    """What the chains disagree on, in words for :func:`judge`, or None when they agree.

    diagnostics: {"K": ..., "log_joint": ...} (:meth:`pcrp.runs.chains.ChainSet.diagnostics`); chain_mean_k: each chain's
    mean K; threshold: the R-hat above which chains disagree (default :data:`pcrp.summaries.summary.RHAT_THRESHOLD`). Chains that
    disagree only on the log joint are named so, with its mean per chain: their mean K can read the same in every
    chain (the SFM at its k_max), and a list of equal K values would not show what differs.
    """
    from ..summaries.summary import RHAT_THRESHOLD, chains_agree

    threshold = RHAT_THRESHOLD if threshold is None else threshold
    if not chains_agree(diagnostics["K"], threshold):
        return f"({mean_k_per_chain(chain_mean_k)})"
    if not chains_agree(diagnostics["log_joint"], threshold):
        per_chain = ", ".join(f"{c['mean']:.1f}" for c in diagnostics["log_joint"]["per_chain"])
        return f"on the log joint (mean per chain {per_chain} nats; {mean_k_per_chain(chain_mean_k)})"
    return None


def judge(chain_mean_k, *, agree=True, reference=None, what="this fit", reference_name="the CRP",
          inits=None, prior=None, disagreement_text=None):
    """The :class:`Verdict` of one fit.

    chain_mean_k: each chain's mean K over its kept draws (one value for one chain); agree: whether its chains agree
    on K and on the log joint (:func:`pcrp.summaries.summary.chains_agree` of both); reference: the clusters the reference fit
    keeps on the same data (:func:`reference_clusters`), or None; what: the fit's name in the text; reference_name:
    the reference's; inits: the chains' starts, named in the text when given; prior: the fit's prior name (a
    ``PRIORS`` key; None: :data:`pcrp.model.DEFAULT_PRIOR`), which picks the advice: only a prior with a tuned
    parameter (the pCRP's r) has one to step down; disagreement_text: what the chains
    disagree on (:func:`disagreement`; default: their mean K).
    """
    from ..model import DEFAULT_PRIOR

    prior = DEFAULT_PRIOR if prior is None else prior
    means = tuple(float(k) for k in np.atleast_1d(np.asarray(chain_mean_k, dtype=float)))
    if not means or not all(np.isfinite(means)):
        raise ValueError(f"chain_mean_k must be one finite mean K per chain (got {chain_mean_k!r}).")
    if reference is not None and (isinstance(reference, bool) or int(reference) != reference or reference < 1):
        raise ValueError(f"reference must be a whole number of clusters >= 1, or None (got {reference!r}).")
    below = tuple(c for c, k in enumerate(means) if reference is not None and k < reference - FALL)
    collapsed = bool(below)
    disagree = not bool(agree)
    parts, short = [], []
    if collapsed:
        def name(c):
            return f"chain {c + 1}" + (f" ({inits[c]})" if inits is not None and c < len(inits) else "")

        chains = ", ".join(f"{name(c)} {_k(means[c])}" for c in below)
        every = len(below) == len(means)
        parts.append(f"COLLAPSED: {'every chain' if every else f'{len(below)} of {len(means)} chains'} of {what} "
                     f"fell below the {reference} clusters {reference_name} keeps on the same data (mean K {chains}): "
                     f"{_remedy(prior)}")
        short.append(f"COLLAPSED ({len(below)} of {len(means)} chains below {reference_name}'s {reference} clusters)")
    if disagree:
        on = disagreement_text or f"({mean_k_per_chain(means)})"
        parts.append(f"The chains of {what} disagree {on}: its "
                     "figures depend on where the chains started.")
        short.append("chains disagree")
    return Verdict(collapsed, disagree, None if reference is None else int(reference), means, below,
                   " ".join(parts), "; ".join(short))


def judge_chains(chains, reference=None, diagnostics=None, what="this fit", reference_name="the CRP"):
    """:func:`judge` of a :class:`pcrp.runs.chains.ChainSet`: its chains' mean K after burn-in (every sweep, as its
    diagnostics) and whether they agree on K and the log joint (from ``diagnostics``, :meth:`ChainSet.diagnostics`,
    computed when not given)."""
    diagnostics = diagnostics if diagnostics is not None else chains.diagnostics()
    K = getattr(chains, "K_after_burn_in", None)
    mean_k = (chains.kept_K if K is None else K).mean(axis=1)
    text = disagreement(diagnostics, mean_k)
    return judge(mean_k, agree=text is None, reference=reference, what=what, reference_name=reference_name,
                 inits=list(getattr(chains, "inits", []) or []) or None, prior=chains.config["prior"],
                 disagreement_text=text)

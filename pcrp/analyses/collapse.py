"""Is a pCRP fit collapsed? One pure function decides it, for every table, summary and page that reports one.

A pCRP fit at too large an r merges real clusters, and its chains show it in one of two ways (docs/reproduce/
cv_robustness.md): all chains settle on fewer clusters than the data hold, or some do (the chains started from one
cluster, or from many random ones, stay merged while the chains started from k-means keep the clusters: at r above the
weakest real merge's critical power the merged state is a local mode the sampler does not leave, because a new table's
weight alpha / (sum_k N_k^r + alpha) is tiny at large N). So a fit is **flagged** when

- **collapsed**: some chain's mean K over its kept draws is below ``reference - FALL`` (FALL = 0.5), where the
  reference counts clusters that something shows to be real (a :class:`Reference`, :func:`make_reference`): the
  true classes where the data have labels, or the clusters cross validation of r keeps where the covariance type the
  data support is known; each capped by the clusters of at least MIN_SHARE of the points in the point estimate of a
  CRP fit on the same data with the same covariance type (:func:`kept_clusters`), counted after the joins a CRP of
  the supported type would make (:func:`joined_clusters`: pieces of a tilted cluster, points between two); or
- **the chains disagree** on K or on the log joint (:func:`pcrp.summaries.summary.chains_agree`: R-hat above the threshold,
  or settled chains holding different values; a quantity with (near) zero variance within chains that every chain
  holds at the same value is agreement, whatever R-hat reads).

A fit below the CRP's count alone keeps **fewer** clusters than the CRP: said as that comparison, with what would
tell, and not flagged. The CRP's count is not evidence of real clusters: it includes clusters that r is there to
remove and, with a covariance type that cannot draw the clusters' shape, pieces of them (Old Faithful with diagonal
covariances: a third cluster of 7 points between the two tilted eruption types, which the pCRP rightly leaves out).
A bare number as the reference is one the caller vouches for (the check of r), judged as a collapse in words that
claim no more than the fall below it.

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
# The clusters' covariance types (pcrp.model.COVARIANCE_TYPES) in words.
COVARIANCE_WORDS = {"full": "full", "diag": "diagonal", "spherical": "spherical"}


def covariance_words(covariance_type):
    """"full covariances", "diagonal covariances", "spherical covariances": a covariance type in words."""
    return f"{COVARIANCE_WORDS[covariance_type]} covariances"


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
    """The reference for :func:`judge` as a number: :func:`kept_clusters` of the CRP's point estimate ``crp_labels``
    on the same data, capped by the clusters the cross-validation fits keep at the chosen r (``cv_mean_k``: their
    mean K, rounded) when given; None when neither is known. :func:`make_reference` gives it with its words."""
    refs = []
    if crp_labels is not None:
        refs.append(kept_clusters(crp_labels))
    if cv_mean_k is not None and np.isfinite(cv_mean_k):
        refs.append(_rounded(cv_mean_k))
    return min(refs) if refs else None


def _rounded(mean_k):
    return max(1, int(np.floor(float(mean_k) + 0.5)))


@dataclass(frozen=True)
class Reference:
    """The clusters a fit is judged against (:func:`judge`), what the number counts and what backs it.

    clusters: the number judged against, the least of those known below; crp: the clusters of at least MIN_SHARE of
    the points in the point estimate of a fit of the reference prior (the CRP) on the same data with the same
    covariance type; crp_from: that fit in words ("the CRP row", "a CRP fit of 2 chains x 800 sweeps on these
    data"); covariance_type: the clusters' covariance type of both fits (None: not said); supported: the covariance
    type the data support (cross validation of the types: :mod:`pcrp.analyses.cv.covariance`), when known;
    crp_joined: where ``supported`` differs from ``covariance_type``, the CRP's kept clusters once the pieces that a
    CRP with the supported type would join are joined (:func:`joined_clusters`); cv: the clusters cross validation of
    r for ``covariance_type`` keeps on these data (its fits' mean K at the r it proposed, rounded), cv_from its words;
    truth: the true classes holding at least MIN_SHARE of the points, when the data come with labels.

    ``shown``: whether the count is backed by the truth, or by cross validation of r where the type the data support
    is known (the fit's own, or another whose joins the CRP's count has had), so that a fit below it has merged
    clusters that are real by that evidence. The CRP's count alone is no
    such evidence: the CRP keeps clusters that r exists to remove, and with a type that cannot draw the clusters'
    shape it keeps pieces of them (on Old Faithful with diagonal covariances a third cluster of 7 points between the
    two tilted eruption types); cross validation of such a type counts the pieces too (the loss of eq. (5) rewards
    cutting an elongated cluster along its length). A fit below a count nothing backs is said to keep fewer clusters
    than the CRP, with what would tell, never to have collapsed.
    """

    clusters: int
    crp: int | None = None
    crp_from: str = "the CRP"
    covariance_type: str | None = None
    cv: int | None = None
    cv_from: str = ""
    truth: int | None = None
    supported: str | None = None
    crp_joined: int | None = None

    @property
    def shown(self):
        return self.truth is not None or (
            self.cv is not None and self.supported is not None
            and (self.supported == self.covariance_type or self.crp_joined is not None))

    def _type(self):
        return f" with {covariance_words(self.covariance_type)}" if self.covariance_type else ""

    def crp_words(self):
        """"the point estimate of the CRP row with diagonal covariances keeps 3 clusters of at least 2% of the
        points" (and, where the supported type joins some, how many are left)."""
        out = (f"the point estimate of {self.crp_from}{self._type()} keeps {self.crp} cluster"
               f"{'s' if self.crp != 1 else ''} of at least {MIN_SHARE:.0%} of the points")
        if self.crp_joined is not None and self.crp_joined != self.crp:
            out += (f", {self.crp_joined} once the pieces that a CRP with {covariance_words(self.supported)} (the type "
                    "these data support) would join are joined")
        return out

    def _crp_count(self):
        return self.crp if self.crp_joined is None else self.crp_joined

    def words(self):
        """What the number counts, in words: "the 3 true classes ...", "the 2 clusters kept by cross validation of r
        ...", or "the 3 clusters of at least 2% of the points in the point estimate of the CRP row"."""
        crp = f"; {self.crp_words()}" if self.crp is not None else ""
        if self.truth is not None and self.clusters == self.truth:
            return (f"the {self.truth} true class{'es' if self.truth != 1 else ''} (each at least {MIN_SHARE:.0%} of "
                    f"the points){crp}")
        if self.cv is not None and self.clusters == self.cv:
            return f"the {self.cv} cluster{'s' if self.cv != 1 else ''} kept by {self.cv_from}{crp}"
        if self.crp is not None and self.clusters == self._crp_count():
            if self.crp_joined is not None and self.crp_joined != self.crp:
                return f"the {self.crp_joined} clusters left when {self.crp_words()}"
            return (f"the {self.crp} cluster{'s' if self.crp != 1 else ''} of at least {MIN_SHARE:.0%} of the points "
                    f"in the point estimate of {self.crp_from}{self._type()}")
        return f"the {self.clusters} clusters of the reference"

    def short(self):
        """A few words for a table cell or a heading: "the 3 true classes", "the 2 clusters cross validation keeps
        (diagonal covariances)", "the 3 clusters of 2%+ of the points in the CRP row's point estimate"."""
        kind = f" ({covariance_words(self.covariance_type)})" if self.covariance_type else ""
        if self.truth is not None and self.clusters == self.truth:
            return f"the {self.truth} true classes"
        if self.cv is not None and self.clusters == self.cv:
            return f"the {self.cv} clusters cross validation keeps{kind}"
        return (f"the {self.clusters} clusters of {MIN_SHARE:.0%}+ of the points in {self.crp_from}'s point "
                f"estimate{kind}")


def joined_clusters(X, labels, covariance_type, alpha=None):
    """:func:`kept_clusters` of the partition ``labels`` (N,) of X (N, d) once the clusters that a CRP (r = 1) with
    clusters of ``covariance_type`` would join are joined: the state at r = 1 of the exact merge path under that
    type's NIW (its data-driven defaults on X: :func:`pcrp.analyses.path.merge_path`, docs/design.md section 1.4).

    With diagonal or spherical covariances a CRP cuts a tilted or elongated cluster into pieces, and keeps points
    between two clusters as one of their own; a CRP with the covariance type the data support (full, on Old
    Faithful) joins them back: Old Faithful's 3 clusters with diagonal covariances are 2 under full ones. Joining
    is done only with the type the data support, never a richer one by default: on four 20-D blobs of 100 points
    the full type joins real blobs (it is the worse model there)."""
    from ..model import resolve_niw
    from .path import merge_path

    labels = np.asarray(labels).reshape(-1)
    path = merge_path(np.asarray(X, dtype=float), labels, resolve_niw(X, covariance_type=covariance_type), alpha)
    return kept_clusters(path.partition_at(1.0))


# The shapes a cluster of each covariance type cannot fit, for which the CRP opens clusters of its own.
UNFIT_SHAPES = {"full": "a skewed or curved cluster", "diag": "a tilted cluster, or points between two",
                "spherical": "an elongated or tilted cluster, or points between two"}


def make_reference(crp_labels=None, *, crp_kept=None, crp_from="the CRP", covariance_type=None, X=None,
                   supported=None, crp_joined=None, cv_mean_k=None, cv_from="cross validation of r on these data",
                   true_labels=None):
    """The :class:`Reference` a pCRP fit on some data is judged against, or None when nothing is known.

    crp_labels: the point estimate of a CRP fit on the same data with the same ``covariance_type`` (or ``crp_kept``,
    its :func:`kept_clusters`, already counted), named by ``crp_from``; supported: the covariance type the data
    support, when known; with X (the data as the sampler sees them) and crp_labels, where it differs from
    ``covariance_type`` the CRP's clusters are counted after the joins its CRP would make (:func:`joined_clusters`;
    or ``crp_joined``, already counted); cv_mean_k: the mean K of cross validation's fits of r for
    ``covariance_type`` on these data at the r it proposed (``cv_from``: its words); true_labels: the data's true
    classes, when known. The number judged against is the least of the CRP's count (joined), the CV fits' (rounded)
    and the true classes of at least MIN_SHARE of the points, of those given."""
    crp = kept_clusters(crp_labels) if crp_labels is not None else crp_kept
    if (crp_joined is None and crp_labels is not None and X is not None and supported is not None
            and covariance_type is not None and supported != covariance_type and np.shape(X)[1] > 1):
        crp_joined = joined_clusters(X, crp_labels, supported)
    cv = _rounded(cv_mean_k) if cv_mean_k is not None and np.isfinite(cv_mean_k) else None
    truth = kept_clusters(true_labels) if true_labels is not None else None
    crp_count = crp if crp_joined is None else min(crp, crp_joined) if crp is not None else crp_joined
    known = [k for k in (crp_count, cv, truth) if k is not None]
    if not known:
        return None
    return Reference(int(min(known)), None if crp is None else int(crp), crp_from, covariance_type, cv,
                     cv_from if cv is not None else "", truth, supported,
                     None if crp_joined is None else int(crp_joined))


@dataclass(frozen=True)
class Verdict:
    """Whether a fit is collapsed, and the words that say so.

    collapsed: some chain's mean K is below reference - FALL, where the reference counts clusters that are real by
    the truth or by cross validation (a :class:`Reference` that is ``shown``, or a number the caller vouches for);
    fewer: the same fall below a reference that is the CRP's count alone, which shows fewer clusters than the CRP,
    not a collapse; disagree: the chains disagree on K or the log joint; reference: the number judged against (None:
    not known, so only disagreement is judged); chain_mean_k: each chain's mean K; below: the chains (0-based) under
    the reference; text: the sentences, empty for a fit that keeps the reference's clusters with agreeing chains;
    short: a few words for a table cell or a heading ('' then).
    """

    collapsed: bool
    disagree: bool
    reference: int | None
    chain_mean_k: tuple = field(default_factory=tuple)
    below: tuple = field(default_factory=tuple)
    text: str = ""
    short: str = ""
    fewer: bool = False

    @property
    def flagged(self):
        return self.collapsed or self.disagree


def _remedy(prior, what_merged=None):
    """What to do about a collapse under ``prior`` (a PRIORS key): step its tuned parameter down where it has one
    (the pCRP's r), else try another prior or its parameters. ``what_merged``: what the evidence shows merged ("real
    clusters", "true classes"), said only where it does; None for a number the caller vouches for, whose words say
    no more than the fall below it."""
    from ..model import PRIORS

    tuned = PRIORS[prior].tuned if prior in PRIORS else None
    merged = f"{what_merged} are merged " if what_merged else ""
    if tuned:
        return (f"{merged}at this {tuned}; use a smaller {tuned}." if merged
                else f"use a smaller {tuned} to keep them.")
    return (f"{merged or 'they are merged '}under this prior's settings; compare its K with the CRP's and try "
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
    on K and on the log joint (:func:`pcrp.summaries.summary.chains_agree` of both); reference: a :class:`Reference`
    (:func:`make_reference`: what it counts and what backs it, said in the text), a whole number of clusters the
    caller vouches are real (:func:`reference_clusters`, named "the N clusters {reference_name} keeps on the same
    data"), or None; what: the fit's name in the text (with its r and covariance type where they matter); inits:
    the chains' starts, named in the text when given; prior: the fit's prior name (a ``PRIORS`` key; None:
    :data:`pcrp.model.DEFAULT_PRIOR`), which picks the advice: only a prior with a tuned parameter (the pCRP's r)
    has one to step down; disagreement_text: what the chains disagree on (:func:`disagreement`; default: their mean
    K).

    A chain below a :class:`Reference` that is ``shown`` (the truth or cross validation back its count), or below a
    vouched number, makes the fit **collapsed**; below a Reference that is the CRP's count alone, it keeps **fewer**
    clusters than the CRP, which the text says with what would tell whether real clusters are merged, and the fit
    is not flagged for it.
    """
    from ..model import DEFAULT_PRIOR, PRIORS

    prior = DEFAULT_PRIOR if prior is None else prior
    means = tuple(float(k) for k in np.atleast_1d(np.asarray(chain_mean_k, dtype=float)))
    if not means or not all(np.isfinite(means)):
        raise ValueError(f"chain_mean_k must be one finite mean K per chain (got {chain_mean_k!r}).")
    ref = reference
    if ref is not None and not isinstance(ref, Reference):
        if isinstance(ref, bool) or not isinstance(ref, (int, np.integer, float)) or int(ref) != ref or ref < 1:
            raise ValueError(f"reference must be a whole number of clusters >= 1, a Reference, or None (got "
                             f"{reference!r}).")
    count = None if ref is None else int(ref.clusters if isinstance(ref, Reference) else ref)
    below = tuple(c for c, k in enumerate(means) if count is not None and k < count - FALL)
    real = not isinstance(ref, Reference) or ref.shown
    collapsed, fewer = bool(below) and real, bool(below) and not real
    disagree = not bool(agree)
    parts, short = [], []
    if below:
        def name(c):
            return f"chain {c + 1}" + (f" ({inits[c]})" if inits is not None and c < len(inits) else "")

        chains = ", ".join(f"{name(c)} {_k(means[c])}" for c in below)
        who = "every chain" if len(below) == len(means) else f"{len(below)} of {len(means)} chains"
        if not isinstance(ref, Reference):
            parts.append(f"COLLAPSED: {who} of {what} fell below the {count} clusters {reference_name} keeps on the "
                         f"same data (mean K {chains}): {_remedy(prior)}")
            short.append(f"COLLAPSED ({len(below)} of {len(means)} chains below {reference_name}'s {count} clusters)")
        elif collapsed:
            kind = f" for {covariance_words(ref.covariance_type)}" if ref.covariance_type else ""
            merged = ("true classes" if ref.truth is not None and count == ref.truth
                      else f"clusters that cross validation of r{kind} keeps apart")
            parts.append(f"COLLAPSED: {who} of {what} (mean K {chains}) fell below {ref.words()}: "
                         f"{_remedy(prior, merged)}")
            short.append(f"COLLAPSED below {ref.short()}")
        else:
            tuned = PRIORS[prior].tuned if prior in PRIORS else None
            kind = covariance_words(ref.covariance_type) if ref.covariance_type else "the clusters' covariances"
            shape = UNFIT_SHAPES.get(ref.covariance_type, "a cluster that is not Gaussian")
            removes = "that r is there to remove" if tuned else "that other priors do not"
            tells = (f"Cross validation of {tuned} and of the covariance type on these data tells which (the Choose "
                     f"r page's Compare all three; pcrp cv --covariance-type full,diag,spherical)." if tuned
                     else "True labels, where the data have them, tell which.")
            parts.append(
                f"Fewer clusters than the CRP: {who} of {what} (mean K {chains}) keep"
                f"{'s' if who == 'every chain' else ''} fewer than {ref.words()}. That alone does not show real "
                f"clusters merged: the CRP keeps clusters {removes}, and a cluster of its may be one that {kind} "
                f"need to fit a shape they cannot ({shape}). {tells}")
            short.append(f"fewer clusters than {ref.short()}")
    if disagree:
        on = disagreement_text or f"({mean_k_per_chain(means)})"
        parts.append(f"The chains of {what} disagree {on}: its "
                     "figures depend on where the chains started.")
        short.append("chains disagree")
    return Verdict(collapsed, disagree, count, means, below, " ".join(parts), "; ".join(short), fewer)


def judge_chains(chains, reference=None, diagnostics=None, what="this fit", reference_name="the CRP"):
    """:func:`judge` of a :class:`pcrp.runs.chains.ChainSet`: its chains' mean K after burn-in (every sweep, as its
    diagnostics) and whether they agree on K and the log joint (from ``diagnostics``, :meth:`ChainSet.diagnostics`,
    computed when not given). ``reference``: as :func:`judge` takes it."""
    diagnostics = diagnostics if diagnostics is not None else chains.diagnostics()
    K = getattr(chains, "K_after_burn_in", None)
    mean_k = (chains.kept_K if K is None else K).mean(axis=1)
    text = disagreement(diagnostics, mean_k)
    return judge(mean_k, agree=text is None, reference=reference, what=what, reference_name=reference_name,
                 inits=list(getattr(chains, "inits", []) or []) or None, prior=chains.config["prior"],
                 disagreement_text=text)

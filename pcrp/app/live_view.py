"""What the live comparison shows, computed from chain snapshots: pure functions, no plotting.

Traces are downsampled for display (a min/max envelope and the mean per pixel column; the full
trace stays in the downloads), the posterior of K is a running histogram that is never empty
(during burn-in it shows the burn-in sweeps, marked as such).

Colours mean the same cluster in both rows: each row's clusters are matched to one shared reference
colouring (the true classes when the data have them, else the top row's previous colours) by maximal
overlap (:func:`matched_colours`); clusters under ``TINY_SHARE`` of the points are "tiny": drawn grey
and counted apart (:func:`cluster_counts`), because they are what over-clustering adds.
"""

import re
from dataclasses import dataclass

import numpy as np

from ..plots.palette import MARKDOWN_TEXT_COLOURS, rank_by_size
from ..summaries.summary import sorted_codes

DISPLAY_COLUMNS = 300  # trace points drawn: about one per two pixel columns of a projector-wide chart
DISPLAY_POINTS = 2000  # points drawn in a cluster view; larger data sets show a fixed random subset


@dataclass(frozen=True)
class TraceEnvelope:
    """A trace of K reduced to at most DISPLAY_COLUMNS bins of consecutive sweeps.

    sweep: (B,) 1-based sweep at the centre of each bin; low, high: (B,) min and max of K in the
    bin; mean: (B,) mean of K in the bin. With fewer sweeps than bins every sweep is its own bin.
    """

    sweep: np.ndarray
    low: np.ndarray
    high: np.ndarray
    mean: np.ndarray


def trace_envelope(K, n_bins=DISPLAY_COLUMNS):
    """Min / max / mean of the trace ``K`` (T,) over at most ``n_bins`` equal runs of sweeps."""
    K = np.asarray(K, dtype=float)
    T = K.size
    if T == 0:
        empty = np.zeros(0)
        return TraceEnvelope(empty, empty, empty, empty)
    if T <= n_bins:
        sweep = np.arange(1, T + 1, dtype=float)
        return TraceEnvelope(sweep, K, K, K)
    edges = np.linspace(0, T, n_bins + 1).astype(np.int64)
    starts = edges[:-1]
    low = np.minimum.reduceat(K, starts)
    high = np.maximum.reduceat(K, starts)
    mean = np.add.reduceat(K, starts) / np.diff(edges)
    sweep = (edges[:-1] + edges[1:] + 1) / 2.0
    return TraceEnvelope(sweep, low, high, mean)


@dataclass(frozen=True)
class KHistogram:
    """Share of sweeps with each number of clusters. burn_in_only: True while no sweep after burn-in
    exists yet (then the shares are over the burn-in sweeps, which are not posterior draws)."""

    k: np.ndarray
    share: np.ndarray
    n_sweeps: int
    burn_in_only: bool


def running_k_histogram(K, burn_in):
    """Histogram of K after burn-in, or of the burn-in sweeps while there are none after it. K: one
    trace (T,) or a list of traces (one per chain, pooled)."""
    traces = [np.asarray(k) for k in K] if isinstance(K, (list, tuple)) else [np.asarray(K)]
    after = np.concatenate([k[burn_in:] for k in traces])
    used, burn_in_only = (after, False) if after.size else (np.concatenate(traces), True)
    if used.size == 0:
        return KHistogram(np.zeros(0, dtype=int), np.zeros(0), 0, True)
    values, counts = np.unique(used, return_counts=True)
    return KHistogram(values, counts / counts.sum(), int(used.size), burn_in_only)


MCSE_Z = 2.0  # chain means within this many of their combined Monte Carlo standard errors of each other agree
# Above this R-hat chains are said to disagree whatever their means: the older rule of thumb for chains that have not
# mixed (Gelman et al. 2013); between pcrp.summaries.summary.RHAT_THRESHOLD (Vehtari et al. 2021's 1.01) and this,
# chains whose means agree within MCSE are "unsettled", not "disagreeing" (chain_verdict).
UNSETTLED_MAX_RHAT = 1.1
MCSE_MAX_DRAWS = 10_000  # draws per chain an MCSE is estimated from (evenly spaced; ArviZ's takes seconds at 100,000)


def means_within_mcse(means, mcses, z=MCSE_Z):
    """Whether every two chains' means lie within ``z`` of their combined MCSEs of each other,
    |m_i - m_j| <= z sqrt(s_i^2 + s_j^2); False when an MCSE is not known (nan: too few draws)."""
    means, mcses = np.asarray(means, dtype=float), np.asarray(mcses, dtype=float)
    if means.size < 2 or not (np.all(np.isfinite(means)) and np.all(np.isfinite(mcses))):
        return False
    gap = np.abs(means[:, None] - means[None, :])
    return bool(np.all(gap <= z * np.sqrt(mcses[:, None] ** 2 + mcses[None, :] ** 2) + 1e-12))


def chain_means_and_mcse(values, max_draws=MCSE_MAX_DRAWS):
    """[(mean, MCSE of the mean)] per chain of (chain, draw) ``values``, each MCSE from at most ``max_draws`` evenly
    spaced draws of its chain (pcrp.summaries.summary.mean_and_mcse)."""
    from ..summaries.summary import mean_and_mcse

    values = np.asarray(values, dtype=float)
    step = max(1, int(np.ceil(values.shape[1] / max_draws)))
    return [(float(chain.mean()), mean_and_mcse(chain[::step])[1]) for chain in values]


@dataclass(frozen=True)
class ChainVerdict:
    """What the page says about a prior's chains on one quantity (K, the log joint).

    state: "agree" (pcrp.summaries.summary.chains_agree), "unsettled" (R-hat above the threshold but at most
    UNSETTLED_MAX_RHAT, and the chains' means lie within MCSE_Z combined MCSEs of each other: nothing says that they
    settled in different places; more sweeps would bring R-hat down) or "disagree" (R-hat higher, means further
    apart, or settled chains holding different values);
    rhat: the pooled R-hat (nan: undefined); means, mcses: per chain."""

    state: str
    rhat: float
    means: tuple = ()
    mcses: tuple = ()


def chain_verdict(diag, means_and_mcse=None):
    """The :class:`ChainVerdict` of one quantity. diag: {"rhat", "settled", "agree", ...} (pcrp.summaries.summary's
    agreement or chain_diagnostics result); means_and_mcse: [(mean, MCSE)] per chain (default: from diag's
    "per_chain" "mean" and "mcse"). Never "agree" where the library's verdict is not: "unsettled" only softens the
    words of a disagreement that the chains' means do not show."""
    rhat = diag.get("rhat")
    rhat = float("nan") if rhat is None else float(rhat)
    if means_and_mcse is None:
        means_and_mcse = [(c.get("mean", float("nan")), c.get("mcse", float("nan"))) for c in diag.get("per_chain", [])]
    means = tuple(float(m) for m, _ in means_and_mcse)
    mcses = tuple(float(e) for _, e in means_and_mcse)
    if diag.get("agree"):
        return ChainVerdict("agree", rhat, means, mcses)
    if not diag.get("settled") and rhat <= UNSETTLED_MAX_RHAT and means_within_mcse(means, mcses):
        return ChainVerdict("unsettled", rhat, means, mcses)
    return ChainVerdict("disagree", rhat, means, mcses)


HISTOGRAM_LEAST_TOP = 4  # the posterior of K's axis reaches at least K = 4


def k_histogram_top(rows, burn_in, may_show_burn_in, least=HISTOGRAM_LEAST_TOP):
    """The top of the posterior of K's axis that rows share: the largest K any row's histogram may show, plus one
    (at least ``least``). It leaves out the burn-in's K values once they are no longer shown (a k-means start of 10
    clusters would otherwise squeeze the kept K values into a third of the axis, their labels thinned to every other K).

    rows: {row: [(T,) K trace per chain]}; may_show_burn_in: {row: whether its histogram may still show its burn-in
    sweeps} (:func:`running_k_histogram` shows them while no sweep after burn-in exists; a live page plays each frame
    back until the next one, so it may show them until a frame after the first kept sweep)."""
    top = 0
    for row, traces in rows.items():
        traces = [np.asarray(k) for k in traces]
        shown = [k[burn_in:] for k in traces if k.size > burn_in]
        if may_show_burn_in.get(row, True) or not shown:
            shown += [k[:burn_in] for k in traces]
        top = max([top] + [int(v.max()) for v in shown if v.size])
    return max(int(least), top + 1)


TINY_SHARE = 0.02  # a cluster with fewer than this share of the points is "tiny" (grey, counted apart)
TINY = -1  # the colour index of a tiny cluster's points


def tiny_limit(n_points, share=TINY_SHARE):
    """Clusters with fewer points than this are tiny: ``share`` of ``n_points``, at least 1 (a cluster of
    one point is tiny whenever the data have more than 1 / share points)."""
    return max(1.0, share * n_points)


def cluster_counts(labels, share=TINY_SHARE):
    """(clusters with at least ``share`` of the points, tiny clusters) of a partition ``labels`` (N,)."""
    counts = np.bincount(sorted_codes(labels)[0])
    tiny = int(np.sum(counts < tiny_limit(counts.sum(), share)))
    return int(counts.size - tiny), tiny


def counts_text(labels, share=TINY_SHARE):
    """"3 clusters + 2 tiny" (or "3 clusters"): what a row heading says of a partition."""
    big, tiny = cluster_counts(labels, share)
    text = f"{big} cluster{'s' if big != 1 else ''}"
    return text + (f" + {tiny} tiny" if tiny else "")


def reference_colours(labels):
    """(N,) colour index per point of a reference partition: its clusters ranked by size (0 = largest)."""
    return rank_by_size(labels)


def matched_colours(labels, reference, share=TINY_SHARE):
    """(N,) colour index per point: each non-tiny cluster of ``labels`` (N,) takes the colour of the
    reference cluster it shares most points with (one cluster per reference colour: a maximum-overlap
    assignment), a cluster left without one takes the smallest colour index not used in the row or by the
    reference; points of tiny clusters get TINY. reference: (N,) colour indices (>= 0; TINY ignored)."""
    from scipy.optimize import linear_sum_assignment

    labels = np.asarray(labels)
    reference = np.asarray(reference)
    inverse, n_ids = sorted_codes(labels)  # (bincounts, not sorts: this runs at every live frame)
    counts = np.bincount(inverse, minlength=n_ids)
    big = np.flatnonzero(counts >= tiny_limit(labels.size, share))
    out = np.full(labels.size, TINY, dtype=np.int64)
    if big.size == 0:
        return out
    valid = reference >= 0
    ref_codes, n_refs = sorted_codes(reference[valid])
    ref_ids = np.zeros(n_refs, dtype=np.int64)
    ref_ids[ref_codes] = reference[valid]  # the colour of each code
    colour_of = {}
    if ref_ids.size:
        row_of = np.full(n_ids, -1)
        row_of[big] = np.arange(big.size)
        rows = row_of[inverse[valid]]
        keep = rows >= 0
        overlap = np.bincount(rows[keep] * n_refs + ref_codes[keep], minlength=big.size * n_refs).reshape(
            big.size, n_refs).astype(float)
        for i, j in zip(*linear_sum_assignment(-overlap)):
            if overlap[i, j] > 0:
                colour_of[big[i]] = int(ref_ids[j])
    used = set(colour_of.values()) | set(int(c) for c in ref_ids)
    free = (c for c in range(labels.size + ref_ids.size + 1) if c not in used)
    for cluster in big[np.argsort(-counts[big], kind="stable")]:
        if cluster not in colour_of:
            colour_of[cluster] = next(free)
    lookup = np.full(n_ids, TINY, dtype=np.int64)
    for cluster, colour in colour_of.items():
        lookup[cluster] = colour
    return lookup[inverse]


def merged_true_clusters(true_labels, labels, share=TINY_SHARE):
    """The true classes that share one non-tiny cluster of ``labels`` with another class: [(class a,
    class b, ...), ...], one tuple per cluster holding the majority of two or more classes (a class belongs
    to the cluster that holds most of its points). Empty when every class has a cluster of its own."""
    true_labels, labels = np.asarray(true_labels), np.asarray(labels)
    (t, n_classes), (z, n_clusters) = sorted_codes(true_labels), sorted_codes(labels)
    classes = np.empty(n_classes, dtype=true_labels.dtype)
    classes[t] = true_labels
    table = np.bincount(t * n_clusters + z, minlength=n_classes * n_clusters).reshape(n_classes, n_clusters)
    home = {c: int(np.argmax(row)) for c, row in zip(classes.tolist(), table)}  # (the smallest cluster of a tie)
    groups = {}
    for c, cluster in home.items():
        groups.setdefault(cluster, []).append(c)
    return [tuple(g) for g in groups.values() if len(g) > 1]


def display_subset(n_points, seed=0, limit=DISPLAY_POINTS):
    """Indices (sorted) of the points a cluster view draws: all of them, or a fixed random subset."""
    if n_points <= limit:
        return np.arange(n_points)
    return np.sort(np.random.default_rng(seed).choice(n_points, size=limit, replace=False))


_HEADING_TOKENS = re.compile(r"(\*\*|:[a-z]+\[|\])")


def heading_runs(markdown):
    """A row heading's markdown, as the Explorer writes it (``**bold**`` and ``:colour[...]`` spans around the app's
    own words: prior names, figures, colour names), as runs [text, bold, CSS colour or ""] for the live canvas row to
    set as text. A ``]`` outside a colour span and an unknown colour name's text are kept as they are."""
    runs, bold, colours = [], False, []
    for token in _HEADING_TOKENS.split(markdown):
        if token == "**":
            bold = not bold
        elif token.startswith(":") and token.endswith("["):
            colours.append(MARKDOWN_TEXT_COLOURS.get(token[1:-1], ""))
        elif token == "]" and colours:
            colours.pop()
        elif token:
            style = [bold, colours[-1] if colours else ""]
            if runs and runs[-1][1:] == style:
                runs[-1][0] += token
            else:
                runs.append([token, *style])
    return runs

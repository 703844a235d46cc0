"""What the pCRP power r does to a partition, exactly: critical powers and the merge path.

The path is the pCRP's alone: it needs a prior whose log joint is linear in one parameter (r), which the CRP
with fixed alpha, Pitman-Yor, the MFM and the sparse finite mixture (:data:`pcrp.model.PRIORS`) are not.
The critical powers compare **single partitions** (the path's states), not posterior mass: at r just above a
merge's r* the merged partition has the higher joint, yet the sampler may keep the clusters apart for most of
its draws (the many partitions near the unmerged one can outweigh it), and the reverse. Where a run of the
sampler exists, :func:`merge_probabilities` says how often its draws hold each merge's two clusters together.

For a fixed partition the pCRP log joint (docs/design.md section 1.4)

    log p(z, X) = K log alpha + r * sum_k lgamma(N_k) + sum_k log m(X_k) + const

is linear in r. Merging blocks A and B changes it by L + r G with

    L = log m(A u B) - log m(A) - log m(B) - log alpha   (likelihood gain of the merge, one table fewer)
    G = lgamma(nA + nB) - lgamma(nA) - lgamma(nB)        (> 0 unless both are single points)

so the pCRP prefers the pair merged exactly when r > r* = -L / G, the pair's *critical power*.
L and G both grow about linearly with the number of points, so r* does not fade as N grows:
a fixed r above a data set's threshold merges real clusters at every N.

:func:`merge_path` starts from a partition and repeatedly merges the pair with the smallest r*
(recomputed after each merge) until one cluster is left: a dendrogram whose heights are powers r.
At a power r the pCRP prefers, of the path's states, the one of highest joint
(:meth:`MergePath.steps_at`); where a merge makes the next one easier (a lower r* after a higher one)
the two are made together, at the power where they pay off (:meth:`MergePath.effective_r`).
:func:`pcrp.analyses.k_over_r.k_over_r` runs the sampler over a grid of r, so the exact path and the sampled posterior
of K can be read together.
"""

from dataclasses import dataclass, field, replace

import numpy as np

from ..basics.errors import SettingError
from ..model import PRIORS, make_prior
from ..model.niw_math import log_marginal_of
from ..basics.params import Declarations
from ..runs.run_spec import RUN_PARAMS
from scipy.special import gammaln


# Stated in the JSON of pcrp path, its table and describe_r.
CAVEAT = ("r* compares single partitions (the path's states), not posterior mass: at a given r the sampler may "
          "keep apart clusters the path merges, or merge clusters it keeps; the path is the pCRP's alone.")


class PathError(SettingError):
    """A bad merge-path setting or starting partition; the message says which and what to do."""


# What differs between priors is a registry field (pcrp.model.PriorSpec), never a name: the path and cross
# validation tune the prior whose ``tuned`` parameter is set (the pCRP's r), against the over-clustering reference.
TUNED = next(spec for spec in PRIORS.values() if spec.tuned is not None)
REFERENCE = next(spec for spec in PRIORS.values() if spec.reference)


def tuned_prior(alpha, value):
    """The tuned prior (:data:`TUNED`, the pCRP) at concentration ``alpha`` and tuned parameter ``value`` (its r)."""
    return make_prior(TUNED.name, alpha=alpha, **{TUNED.tuned: value})


def check_tuned_values(values, error, problem):
    """(G,) float array of ``values`` of the tuned parameter, each checked against its declaration in the
    registry; a bad one is ``error`` starting with ``problem`` (what the caller asks for) and the declared bounds."""
    param = TUNED.tuned_param
    values = np.asarray(values, dtype=float).reshape(-1)
    for value in values:
        try:
            param.check(value, f"the {TUNED.label}", error)
        except error as err:
            raise error(f"{problem}: {err}") from None
    return values


# The r path's settings (its CRP start, pcrp path, the Choose r page): the run's declarations (pcrp.runs.run_spec) with
# the path's own defaults, and the reference prior's alpha (the registry's).
PATH_PARAMS = Declarations(
    "the merge path's CRP start",
    REFERENCE.param("alpha"),
    RUN_PARAMS["n_chains"],
    replace(RUN_PARAMS["iters"], default=2000),
    replace(RUN_PARAMS["burn_in"], default=1000),
    replace(RUN_PARAMS["thin"], default=10),
    replace(RUN_PARAMS["seed"], default=0),
    error=PathError,
)
# The start of every chain that scores or counts a value of r (cross validation's fits, k_over_r): k-means with 10
# clusters, which a power r then merges or keeps.
FIT_INIT = "kmeans:10"


# ----------------------------------------------------------------------------- blocks

@dataclass(frozen=True)
class Block:
    """Sufficient statistics of one block of points: n, mean (d,) and scatter (d, d) about the mean."""

    n: int
    mean: np.ndarray
    scatter: np.ndarray

    @classmethod
    def of(cls, X):
        X = np.atleast_2d(np.asarray(X, dtype=float))
        mean = X.mean(axis=0)
        centred = X - mean
        return cls(X.shape[0], mean, centred.T @ centred)

    def union(self, other):
        """The block A u B, by the parallel-axis rule (no pass over the points)."""
        n = self.n + other.n
        diff = other.mean - self.mean
        mean = self.mean + diff * (other.n / n)
        scatter = self.scatter + other.scatter + (self.n * other.n / n) * np.outer(diff, diff)
        return Block(n, mean, scatter)


def log_marginal(block, niw):
    """log m(X_block) under the NIW of its covariance type, from the block's statistics
    (:func:`pcrp.model.niw_math.log_marginal_of`)."""
    diff = block.mean - niw.m0
    S_n = niw.S0 + block.scatter + (niw.kappa0 * block.n / (niw.kappa0 + block.n)) * np.outer(diff, diff)
    return log_marginal_of(block.n, S_n, niw.kappa0, niw.nu0, niw.S0, niw.covariance_type)


def merge_terms(a, b, niw, alpha, log_m=None):
    """(L, G) of merging blocks ``a`` and ``b`` (see the module docstring).

    ``log_m``: optional (log m(a), log m(b)) already computed.
    """
    lm_a, lm_b = log_m if log_m is not None else (log_marginal(a, niw), log_marginal(b, niw))
    L = log_marginal(a.union(b), niw) - lm_a - lm_b - np.log(alpha)
    G = float(gammaln(a.n + b.n) - gammaln(a.n) - gammaln(b.n))
    return float(L), G


def critical_r(L, G):
    """r* = -L / G: the pCRP prefers the pair merged for r > r*, apart for r < r*.

    With G = 0 (two single points) r has no effect on the pair: r* = -inf when the merge
    already raises the joint (L > 0, merged at every r), +inf otherwise.
    """
    if G > 0:
        return -L / G
    return -np.inf if L > 0 else np.inf


# ----------------------------------------------------------------------------- the starting partition

@dataclass
class Start:
    """A starting partition for the path: labels (N,) 0..K-1 and how they were found (JSON-ready)."""

    labels: np.ndarray
    config: dict


def crp_start(X, niw, *, alpha=None, n_chains=None, iters=None, burn_in=None, thin=None, seed=None,
              split_merge=None, loss=None, n_jobs=None, work=None):
    """The point estimate (posterior expected ``loss``, SALSO-style search; None: pcrp.summaries.partition's default) of
    ``n_chains`` chains of the reference prior (:data:`REFERENCE`, the CRP) on X (N, d) from different starts: the
    default start of the merge path. Clusters are numbered by size, largest first. None takes the declared default
    (:data:`PATH_PARAMS`; split_merge and n_jobs: the run's). ``work``: a :class:`pcrp.sampling.compute.WorkTicket` (see
    :func:`pcrp.runs.chains.run_chains`)."""
    from ..runs.chains import run_chains
    from ..summaries.partition import DEFAULT_LOSS, point_estimate
    from ..runs.run_spec import make_run_spec

    s = PATH_PARAMS.resolve(alpha=alpha, n_chains=n_chains, iters=iters, burn_in=burn_in, thin=thin, seed=seed)
    loss = DEFAULT_LOSS if loss is None else loss
    spec = make_run_spec(X, prior=make_prior(REFERENCE.name, alpha=s["alpha"]), niw=niw, n_chains=s["n_chains"],
                         iters=s["iters"], burn_in=s["burn_in"], thin=s["thin"], seed=s["seed"], n_jobs=n_jobs,
                         split_merge=split_merge)
    chains = run_chains(X, spec, work=work)
    estimate = point_estimate(chains.labels, loss=loss, seed=s["seed"])
    rhat = chains.diagnostics()["K"]["rhat"]
    config = {"start": f"point estimate (expected {loss.upper()} loss) of {s['n_chains']} {REFERENCE.label} chains",
              "start_expected_loss": estimate.expected_loss, "start_rhat_K": rhat, "crp_run": chains.config}
    return Start(estimate.labels, config)


def _crossing(dL, dG):
    """The power r above which dL + r dG > 0 (dG >= 0): -dL/dG, or -inf / +inf when dG = 0."""
    if dG > 0:
        return -dL / dG
    return -np.inf if dL > 0 else np.inf


# ----------------------------------------------------------------------------- the path

@dataclass(frozen=True)
class Merge:
    """One merge of the path.

    r: the critical power r* of the pair when it was merged (may be +-inf, see :func:`critical_r`).
    clusters: (a, b) the ids merged, a < b; starting clusters are 0..K-1 and the j-th merge
        (j = 0, 1, ...) creates cluster K + j, as in scipy's linkage matrices.
    sizes: (nA, nB) their numbers of points.
    L, G: the merge's change of the log joint is L + r G.
    """

    r: float
    clusters: tuple
    sizes: tuple
    L: float
    G: float

    def as_dict(self):
        return {"r": self.r if np.isfinite(self.r) else None, "clusters": list(self.clusters),
                "sizes": list(self.sizes), "L": self.L, "G": self.G}


@dataclass
class MergePath:
    """A starting partition and the K - 1 merges of the greedy path, in the order performed.

    partition: (N,) int starting labels 0..K-1 (cluster ids of :class:`Merge`).
    config: every resolved setting (JSON-serialisable).
    """

    partition: np.ndarray
    merges: list
    config: dict = field(default_factory=dict)

    @property
    def n_start(self):
        return int(self.partition.max()) + 1

    def _cumulative(self):
        """(K,) sums of L and of G over the first s merges, s = 0..K-1: the log joint of the path's
        state after s merges is L_s + r G_s above that of the start."""
        L = np.r_[0.0, np.cumsum([m.L for m in self.merges])]
        G = np.r_[0.0, np.cumsum([m.G for m in self.merges])]
        return L, G

    def steps_at(self, r):
        """How many of the path's merges the pCRP makes at power r: the state of highest log joint at r
        among the path's states (0, 1, ..., K - 1 merges; ties go to more merges).

        A merge can make the next one more attractive (its r* is then below the previous one's): the
        two are made together, at the power where the pair pays off, so the state at r is not always
        "stop at the first r* > r". The count only grows with r (the joint gains G_s - G_t > 0 per
        unit of r for every extra merge).
        """
        L, G = self._cumulative()
        joint = L + r * G
        return int(np.flatnonzero(joint == joint.max())[-1])

    def n_clusters_at(self, r):
        return self.n_start - self.steps_at(r)

    def effective_r(self):
        """(K - 1,) the power at which the pCRP makes each merge of the path, non-decreasing: merge j is
        made for r >= min over s > j of max over t <= j of the r where j's state s beats state t."""
        L, G = self._cumulative()
        n = len(self.merges)
        out = np.empty(n)
        for j in range(n):
            out[j] = min(max(_crossing(L[s] - L[t], G[s] - G[t]) for t in range(j + 1)) for s in range(j + 1, n + 1))
        return out

    def partition_at(self, r):
        """(N,) labels of the path's partition at power r, numbered 0..K_r - 1 by first appearance."""
        ids = self.clusters_at(r)
        return relabel(self.members_map(self.steps_at(r)), self.partition, ids)

    def clusters_at(self, r):
        """Sorted ids of the clusters alive at power r."""
        return sorted(self.members_map(self.steps_at(r)))

    def members_map(self, steps):
        """{cluster id: starting ids it contains} after ``steps`` merges."""
        members = {k: [k] for k in range(self.n_start)}
        for j, m in enumerate(self.merges[:steps]):
            a, b = m.clusters
            members[self.n_start + j] = members.pop(a) + members.pop(b)
        return members

    def sizes_of(self, cluster_id):
        """Number of points in cluster ``cluster_id`` (a starting or merged id)."""
        if cluster_id < self.n_start:
            return int(np.sum(self.partition == cluster_id))
        return int(sum(self.merges[cluster_id - self.n_start].sizes))

    def as_dict(self, sampler=None):
        """The JSON contract of ``pcrp path``: partition, merges in order, config, and the caveat that r* compares
        single partitions.

        sampler: optional :class:`MergeProbabilities` of a run; each merge then also carries
        ``sampler_p_merged`` (P(its two clusters together) in the run's draws, at the run's r) and the payload a
        ``sampler`` entry {r, draws, definition}.
        """
        merges = [m.as_dict() for m in self.merges]
        out = {"partition": self.partition.tolist(), "merges": merges, "config": self.config, "caveat": CAVEAT}
        if sampler is not None:
            for merge, p in zip(merges, sampler.p_merged):
                merge["sampler_p_merged"] = float(p)
            out["sampler"] = {"r": sampler.r, "draws": sampler.draws, "definition": MergeProbabilities.DEFINITION}
        return out


def relabel(members, partition, ids):
    """Labels (N,) for clusters ``ids`` given {id: starting ids}, numbered by first appearance."""
    start_to_new = np.empty(partition.max() + 1, dtype=np.int64)
    for new, cid in enumerate(ids):
        start_to_new[members[cid]] = new
    labels = start_to_new[partition]
    _, first = np.unique(labels, return_index=True)
    order = np.argsort(np.argsort(first))
    return order[labels]


def check_partition(labels, n):
    """Labels (N,) any integer codes -> 0..K-1 in order of value; raises PathError for a bad shape."""
    labels = np.asarray(labels)
    if labels.ndim != 1 or labels.shape[0] != n:
        raise PathError(f"The starting partition needs one label per data row ({n}); got shape {labels.shape}.")
    if labels.dtype.kind == "f":
        if not np.all(np.isfinite(labels)) or not np.all(labels == np.round(labels)):
            raise PathError("Starting labels must be whole numbers (one cluster code per row).")
    elif labels.dtype.kind not in "iu":
        raise PathError(f"Starting labels must be integers (got {labels.dtype}).")
    _, labels = np.unique(labels, return_inverse=True)
    return labels.astype(np.int64)


def merge_path(X, labels, niw, alpha=None, config=None):
    """The greedy merge path from the partition ``labels`` of the rows of ``X`` (N, d).

    Repeatedly merges the pair of clusters with the smallest critical power r* (ties: the
    smallest ids), recomputing r* for the merged cluster, until one cluster is left.
    Costs O(K^2) NIW marginals from block statistics (never a pass over the points after
    the first). alpha: the concentration (None: :data:`PATH_PARAMS`' default). Returns a :class:`MergePath` with
    K - 1 merges.
    """
    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or X.shape[1] != niw.dim:
        raise PathError(f"X must be (N, {niw.dim}) to match the NIW prior (got shape {X.shape}).")
    alpha = PATH_PARAMS.resolve(alpha=alpha)["alpha"]
    partition = check_partition(labels, X.shape[0])
    K = int(partition.max()) + 1
    blocks = {k: Block.of(X[partition == k]) for k in range(K)}
    log_m = {k: log_marginal(b, niw) for k, b in blocks.items()}
    pairs = {}  # (a, b) with a < b -> (r*, L, G)

    def add_pairs(new):
        for other in blocks:
            if other != new:
                a, b = min(other, new), max(other, new)
                L, G = merge_terms(blocks[a], blocks[b], niw, alpha, (log_m[a], log_m[b]))
                pairs[a, b] = (critical_r(L, G), L, G)

    for k in range(K):
        for other in range(k + 1, K):
            L, G = merge_terms(blocks[k], blocks[other], niw, alpha, (log_m[k], log_m[other]))
            pairs[k, other] = (critical_r(L, G), L, G)
    merges = []
    next_id = K
    while len(blocks) > 1:
        (a, b), (r_star, L, G) = min(pairs.items(), key=lambda item: (item[1][0], item[0]))
        merges.append(Merge(float(r_star), (a, b), (blocks[a].n, blocks[b].n), L, G))
        merged = blocks.pop(a).union(blocks.pop(b))
        del log_m[a], log_m[b]
        pairs = {key: v for key, v in pairs.items() if a not in key and b not in key}
        blocks[next_id] = merged
        log_m[next_id] = log_marginal(merged, niw)
        add_pairs(next_id)
        next_id += 1
    config = {"alpha": float(alpha), **niw.as_dict(), **(config or {})}
    return MergePath(partition, merges, config)


# Bytes a text file of N labels may hold: LABEL_TEXT_BYTES per label (18 digits, a sign, separators, spaces) and
# LABEL_TEXT_SLACK more (a header line, trailing blank lines); a larger file is refused before it is read.
LABEL_TEXT_BYTES = 32
LABEL_TEXT_SLACK = 4096

# Digits a label may have: any code of up to 18 digits fits int64 (a longer one overflows it).
LABEL_DIGITS = 18


def read_labels(filename, n):
    """Starting labels (N,) from a file: N integers as text (one per line, or separated by commas or
    spaces), or a RESULT.npz of ``pcrp run`` (its ``point_labels``). Raises PathError with what is wrong.

    Reads regular files only (a named pipe blocks, /dev/zero never ends) and a bounded size: a text file of
    at most ``LABEL_TEXT_BYTES * n + LABEL_TEXT_SLACK`` bytes; from an .npz only ``point_labels``, after its
    header says it is (N,) numbers (:mod:`pcrp.basics.files`). Labels must be whole numbers of at most LABEL_DIGITS digits.
    """
    import re

    from ..basics.files import FileRefused, npz_header, open_npz, open_regular, read_bounded, read_npz_array

    name = str(filename)
    what = "a RESULT.npz of pcrp run"
    try:
        with open_regular(name, "a file of labels") as f:
            if name.endswith(".npz"):
                with open_npz(f, name, what) as zf:
                    header = npz_header(zf, "point_labels", name, what)
                    if header is None:
                        held = ", ".join(m.removesuffix(".npy") for m in zf.namelist()) or "nothing"
                        raise PathError(f"{name} has no point_labels array (it holds {held}); "
                                        "give a RESULT.npz of pcrp run or a text file of labels.")
                    shape, dtype = header
                    if shape != (n,):
                        raise PathError(f"{name} holds {int(np.prod(shape))} labels (point_labels of shape {shape}) "
                                        f"but the data have {n} rows: give one label per row.")
                    if dtype.kind not in "iuf":
                        raise PathError(f"{name}: point_labels must be whole numbers (it holds {dtype}).")
                    return read_npz_array(zf, "point_labels", name, what)
            limit = LABEL_TEXT_BYTES * n + LABEL_TEXT_SLACK
            raw = read_bounded(f, limit, name, f"the most a text file of {n} labels may take ({LABEL_TEXT_BYTES} "
                                               f"bytes a label and {LABEL_TEXT_SLACK:,} more): give one label per "
                                               "data row")
    except PathError:
        raise
    except FileRefused as err:
        raise PathError(f"{err}.") from None
    except OSError as err:
        raise PathError(f"cannot read labels from {name}: {err.strerror or err}.") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise PathError(f"{name} is not a text file of labels (it is not UTF-8 text): give {n} whole numbers as "
                        "text, or a RESULT.npz of pcrp run.") from None
    tokens = text.replace(",", " ").split()
    bad = next((t for t in tokens if not re.fullmatch(r"[+-]?[0-9]+", t)), None)
    if bad is not None:
        raise PathError(f"{name}: every label must be a whole number (found {bad[:20]!r}).")
    big = next((t for t in tokens if len(t.lstrip("+-").lstrip("0")) > LABEL_DIGITS), None)
    if big is not None:
        raise PathError(f"{name}: the label {big[:24]}{'...' if len(big) > 24 else ''} is too large: labels are "
                        f"cluster codes of at most {LABEL_DIGITS} digits.")
    labels = np.array([int(t) for t in tokens], dtype=np.int64)
    if labels.shape != (n,):
        raise PathError(f"{name} holds {labels.size} labels but the data have {n} rows: give one label per row.")
    return labels


def path_table(path, sampler=None):
    """The path as readable text: the start, one line per merge, the clusters kept per range of r, and the caveat
    that r* compares single partitions. sampler: optional :class:`MergeProbabilities`, shown as a column
    "P merged" (the run's share of draws holding each merge's two clusters together, at the run's r)."""
    sizes = [path.sizes_of(k) for k in range(path.n_start)]
    extra = f" {'P merged':>8s}" if sampler is not None else ""
    lines = [f"starting partition: {path.n_start} clusters (sizes {', '.join(map(str, sizes))}); "
             f"{path.config.get('start', '')}",
             f"{'step':>4s} {'r*':>8s}  {'merge':<20s} {'sizes':<14s} {'L':>10s} {'G':>10s} {'K after':>7s}{extra}"]
    for j, m in enumerate(path.merges):
        a, b = m.clusters
        r_text = f"{m.r:8.3f}" if np.isfinite(m.r) else f"{m.r:>8}"
        p_text = f" {sampler.p_merged[j]:8.3f}" if sampler is not None else ""
        lines.append(f"{j + 1:4d} {r_text}  {f'#{a} + #{b} -> #{path.n_start + j}':<20s} "
                     f"{f'{m.sizes[0]} + {m.sizes[1]}':<14s} {m.L:10.2f} {m.G:10.2f} {path.n_start - j - 1:7d}"
                     f"{p_text}")
    lines.append("clusters the pCRP keeps along the path: " + "; ".join(kept_by_range(path)))
    if sampler is not None:
        lines.append(f"P merged: {MergeProbabilities.DEFINITION}, in {sampler.draws} draws of a pCRP run at "
                     f"r = {sampler.r:g}.")
    lines.append(f"note: {CAVEAT}")
    return "\n".join(lines)


@dataclass
class MergeProbabilities:
    """How often a sampler run's draws hold each merge's two clusters together.

    p_merged: (K - 1,) one share per merge of the path, in [0, 1]; r: the run's power (1.0 for a CRP run);
    draws: the number of kept draws (all chains).
    """

    DEFINITION = ("the share of the run's kept draws in which the label holding most points of the merge's first "
                  "cluster also holds most points of its second")

    p_merged: np.ndarray
    r: float
    draws: int


def merge_probabilities(path, chains):
    """The sampler's P(those clusters merged) for each merge of ``path``, from a run on the same data.

    path: a :class:`MergePath` (N points); chains: a :class:`pcrp.runs.chains.ChainSet` on the same N points (labels
    (C, S, N)), or label draws (S, N) / (C, S, N) with ``r`` taken as nan. A merge of clusters A and B counts
    as together in a draw when the label holding most of A's points also holds most of B's
    (:attr:`MergeProbabilities.DEFINITION`). The share is at the run's r, which is usually not the merge's r*:
    compare it with the merge only when the run was made near that power.
    """
    labels = getattr(chains, "labels", chains)
    draws = np.asarray(labels)
    if draws.ndim == 3:
        draws = draws.reshape(-1, draws.shape[-1])
    if draws.ndim != 2 or draws.shape[1] != path.partition.shape[0]:
        raise PathError(f"The run has draws of shape {np.shape(labels)}, but the path has "
                        f"{path.partition.shape[0]} points: give a run on the same data.")
    config = getattr(chains, "config", {}) or {}
    # the run's power: the pCRP's r, 1 for the CRP (the pCRP at r = 1), none for the other priors
    spec = PRIORS.get(config.get("prior"))
    # the tuned prior's r; the reference (the CRP) is the pCRP at r = 1; the other priors have none
    r = 1.0 if spec is not None and spec.reference else config.get(TUNED.tuned)
    r = np.nan if r is None else float(r)
    draws = draws.astype(np.int64, copy=False)
    draws = draws - draws.min(axis=1, keepdims=True)
    width = int(draws.max()) + 1
    rows = np.arange(draws.shape[0])[:, None]

    def majority(points):
        """(S,) the label holding most of ``points`` in each draw (ties: the smallest label)."""
        flat = (rows * width + draws[:, points]).ravel()
        counts = np.bincount(flat, minlength=draws.shape[0] * width).reshape(draws.shape[0], width)
        return counts.argmax(axis=1)

    out = np.empty(len(path.merges))
    for j, m in enumerate(path.merges):
        a, b = m.clusters
        members = path.members_map(j)
        points_a = np.flatnonzero(np.isin(path.partition, members[a]))
        points_b = np.flatnonzero(np.isin(path.partition, members[b]))
        out[j] = float(np.mean(majority(points_a) == majority(points_b)))
    return MergeProbabilities(out, r, int(draws.shape[0]))


def kept_by_range(path):
    """["r < 0.233: 4 clusters", "0.233 to 0.556: 3 clusters", ...]: the path's K over ranges of r > 0
    (merges with r* <= 0 are made at every power)."""
    cuts = [float(t) for t in np.unique(path.effective_r()) if np.isfinite(t) and t > 0]
    bounds = [0.0] + cuts + [np.inf]
    out = []
    for low, high in zip(bounds[:-1], bounds[1:]):
        # read K inside the range, not on its edge, where two states' joints tie up to rounding
        k = path.n_clusters_at(0.5 * (low + high) if np.isfinite(high) else low + 1.0)
        if low == 0.0:
            where = f"r < {high:.3g}" if np.isfinite(high) else "every r"
        else:
            where = f"{low:.3g} to {high:.3g}" if np.isfinite(high) else f"r > {low:.3g}"
        out.append(f"{where}: {k} cluster{'s' if k != 1 else ''}")
    return out


def describe_r(path, r):
    """One plain sentence: what the path keeps and merges at power r, and where the next merge is."""
    steps = path.steps_at(r)
    alive = path.clusters_at(r)
    sizes = sorted((path.sizes_of(c) for c in alive), reverse=True)
    kept = (f"keeps {len(alive)} clusters (sizes {', '.join(map(str, sizes))})" if len(alive) > 1
            else "keeps all points in one cluster")
    merged = ""
    if steps:
        joined = [m.sizes for m in path.merges[:steps]]
        merged = (f", having merged {steps} pair{'s' if steps > 1 else ''} of the starting "
                  f"{path.n_start} clusters ({'; '.join(f'{a} + {b} points' for a, b in joined)})")
    if steps < len(path.merges):
        a, b = path.merges[steps].sizes
        edges = path.effective_r()
        at = edges[steps]
        where = f"r = {at:.2f}" if np.isfinite(at) else "no finite r (two single points)"
        tail = f"; the next merge, of clusters of {a} and {b} points, happens at {where}"
        together = int(np.sum(edges[steps:] == at)) - 1
        if together:
            left = len(alive) - together - 1
            tail += (f", together with {together} more merge{'s' if together > 1 else ''} that it makes "
                     f"worthwhile (leaving {left} cluster{'s' if left != 1 else ''})")
    else:
        tail = ""
    return (f"At r = {r:g} the exact merge path {kept}{merged}{tail}. These compare single partitions, not "
            "posterior mass: the sampler at this r may hold more or fewer clusters.")

"""Python API over the numba kernels: a stateful sampler and a batch driver.

>>> sampler = Sampler(X, PowerCRP(alpha=1, r=1.2), resolve_niw(X), seed=0)
>>> info = sampler.step(100)           # 100 sweeps; info.K, info.log_joint are (100,)
>>> # whole runs (chains, budget, kept draws): pcrp.runs.run_spec.make_run_spec + pcrp.runs.chains.run_chains

Stepping is cheap (one kernel call per chunk), so the app can stream a chain by
calling :meth:`Sampler.step` a few sweeps at a time from a background thread;
the kernels release the GIL.
"""

import time
from dataclasses import dataclass, field

import numpy as np

from . import compute
from ..kernels import gibbs, slots, split_merge
from ..kernels.rng import seed_state
from ..kernels.vecmath import LANES
from ..model import check_niw_for_data, log_weight_table, prior_tables
from ..basics.dtypes import KMEANS_WORKING_MIB, check_memory, label_dtype, state_bytes
from ..basics.errors import SamplerError
from ..model.niw_math import kernel_tables

# Statistics are recomputed from the labels every REFRESH_EVERY sweeps (counted
# from the start of the chain, so results do not depend on how sweeps are split
# into calls). This bounds the rounding drift of the rank-one downdates.
REFRESH_EVERY = 1000
LOG_JOINT_DECIMALS = 6  # the recorded log joint, in nats (see Sampler.step)
# Data of up to this many columns get a sweep kernel compiled for their d (loops unrolled, about 15 s once
# per d, then cached); wider data use the general kernel.
SPECIALISED_UP_TO = 16


def check_seed(seed, name="seed"):
    """A seed must be None, a whole number >= 0 or a non-empty sequence of them (what numpy's SeedSequence
    accepts); returns it unchanged."""
    if seed is None:
        return None
    items = list(seed) if isinstance(seed, (list, tuple, np.ndarray)) else [seed]
    if not items or any(isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)) or v < 0
                        for v in items):
        raise SamplerError(f"{name} must be a whole number >= 0 (got {seed!r}).")
    return seed


def moves_per_sweep(name, value):
    """Validate a whole number >= 0 (or True/False, meaning 1/0) of moves per sweep; returns it as an int."""
    if isinstance(value, (bool, np.bool_)):
        return int(value)
    if not isinstance(value, (int, np.integer)) or value < 0:
        raise SamplerError(f"{name} must be a whole number >= 0 (moves per sweep) or True/False (got {value!r}).")
    return int(value)


@dataclass
class StepInfo:
    """What one call to :meth:`Sampler.step` did.

    K: (n_sweeps,) number of clusters after each sweep.
    log_joint: (n_sweeps,) unnormalised log p(z, X) after each sweep.
    seconds: wall-clock seconds spent in the kernel.
    """

    K: np.ndarray
    log_joint: np.ndarray
    seconds: float
    kept_labels: np.ndarray = None
    kept_sm: np.ndarray = None


def parse_init(init):
    """Parse 'one' | 'random:K' | 'kmeans:K' into (kind, K)."""
    if isinstance(init, np.ndarray):
        return "labels", None
    text = str(init).strip().lower()
    if text == "one":
        return "one", 1
    kind, _, number = text.partition(":")
    if kind in ("random", "kmeans"):
        try:
            k = int(number)
        except ValueError:
            k = 0
        if k >= 1:
            return kind, k
    raise SamplerError(
        f"init must be 'one', 'random:K' or 'kmeans:K' with K >= 1, or an array of labels (got {init!r})."
    )


def initial_labels(X, init, rng):
    """Starting labels (N,) int64 in 0..K-1 with no empty cluster.

    init: 'one' (all together), 'random:K' (uniform at random), 'kmeans:K'
    (k-means++ seeding with ``rng``, then each point to its nearest seed: :mod:`pcrp.sampling.kmeans_start`), or an int
    array.
    K is capped at N (:func:`start_clusters`).
    """
    N = X.shape[0]
    kind, k = parse_init(init)
    if kind == "labels":
        labels = np.asarray(init)
        if labels.shape != (N,):
            raise SamplerError(f"initial labels must have one entry per row ({N}), got shape {labels.shape}.")
        _, labels = np.unique(labels, return_inverse=True)
        return labels.astype(np.int64)
    k = start_clusters(init, N)
    if kind == "one":
        labels = np.zeros(N, dtype=np.int64)
    elif kind == "kmeans" and k == N:  # every point is a seed: skip k-means++'s O(N^2 d) search
        labels = np.arange(N)
    elif kind == "random":
        labels = rng.integers(0, k, size=N)
    else:
        from .kmeans_start import kmeans_start

        labels = kmeans_start(X, k, rng, working_bytes=KMEANS_WORKING_MIB * 2**20)
    _, labels = np.unique(labels, return_inverse=True)
    return labels.astype(np.int64)


def start_clusters(init, n_points):
    """Clusters an ``init`` starts from for ``n_points`` points: K of 'random:K' / 'kmeans:K' capped at N
    (N clusters is every point alone), 1 for 'one', the distinct labels of an array."""
    kind, k = parse_init(init)
    if kind == "labels":
        return int(np.unique(np.asarray(init)).size)
    return min(k, n_points)


def cap_init(init, prior, n_points):
    """``init`` for a prior that allows at most ``prior.max_blocks`` clusters (None: any number): 'random:K' and
    'kmeans:K' with K above it become 'random:max' / 'kmeans:max'; labels with more clusters are a
    SamplerError (their probability is 0)."""
    limit = getattr(prior, "max_blocks", None)
    if limit is None:
        return init
    kind, k = parse_init(init)
    if kind in ("random", "kmeans") and k > limit:
        return f"{kind}:{limit}"
    if kind == "labels" and start_clusters(init, n_points) > limit:
        raise SamplerError(f"The initial labels form {start_clusters(init, n_points)} clusters, but {prior.label()} "
                           f"allows at most {limit}; start from at most {limit} clusters (e.g. init='kmeans:{limit}').")
    return init


class Sampler:
    """Collapsed Gibbs sampler (Algorithm 1) with optional split-merge moves.

    X: (N, d) float data, used exactly as given.
    prior: a partition prior from ``pcrp.model.PRIORS`` (``CRP``, ``PowerCRP``, ``PitmanYor``, ``MFM``,
        ``SparseFiniteMixture``; ``make_prior``). It reaches the kernels as tables only.
    init: with a prior that allows at most ``prior.max_blocks`` clusters (the sparse finite mixture's
        k_max), 'random:K' and 'kmeans:K' start from at most that many (as K is capped at N); labels
        with more clusters are refused.
    niw: ``pcrp.model.NIW`` hyperparameters of dimension d.
    split_merge: number of sequentially-allocated merge-split moves after each
        sweep (0 or False = the paper's plain Gibbs; True = 1).
    init: 'one', 'random:K', 'kmeans:K' or an (N,) array of labels.
    seed: int or None; the same seed gives the same chain.
    """

    def __init__(self, X, prior, niw, *, split_merge=True, init="kmeans:10", seed=None):
        X = np.ascontiguousarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[0] < 1 or X.shape[1] < 1:
            raise SamplerError(f"X must be an (N, d) array with N, d >= 1 (got shape {X.shape}).")
        if not np.all(np.isfinite(X)):
            raise SamplerError("X contains NaN or infinite values; remove or impute them first.")
        if niw.dim != X.shape[1]:
            raise SamplerError(f"NIW prior has dimension {niw.dim} but X has {X.shape[1]} columns.")
        n_moves = moves_per_sweep("split_merge", split_merge)
        check_seed(seed)
        check_niw_for_data(niw, X)
        check_memory(state_bytes(X.shape[0], X.shape[1], start_clusters(init, X.shape[0])),
                     f"The sampler's state for {X.shape[0]:,} points in {X.shape[1]} columns",
                     "Start from fewer clusters (init) or use fewer points or columns.")
        self.X = X
        self.prior = prior
        self.niw = niw
        self.n_split_merge = n_moves
        self.seed = seed
        N, d = X.shape
        init = cap_init(init, prior, N)
        init_rng = np.random.default_rng(np.random.SeedSequence(seed).spawn(1)[0])
        self.labels = initial_labels(X, init, init_rng)
        self.rng_state = seed_state(seed)
        self.tables = kernel_tables(N, d, niw.kappa0, niw.nu0, niw.S0, log_weight_table(prior, N))
        # per number of blocks K: the new-block weight and log V_N(K) + K log W(1) (pcrp.model.prior_tables)
        self.log_new, self.log_v = prior_tables(prior, N)
        self.m0 = np.ascontiguousarray(niw.m0)
        self.S0 = np.ascontiguousarray(niw.S0)
        self.P0 = np.ascontiguousarray(np.linalg.inv(niw.S0))
        self.logdet0 = float(np.linalg.slogdet(niw.S0)[1])
        self.kappa0 = float(niw.kappa0)
        self.K = int(self.labels.max()) + 1
        # the kernel specialised to d (compiled and cached once per d), the general one above SPECIALISED_UP_TO
        self._dims = sampler_dims(d)
        capacity = -(-max(16, 2 * self.K) // LANES) * LANES  # whole vectors for the kernel's passes
        self.counts = np.zeros(capacity, dtype=np.int64)
        self.means = np.zeros((capacity, d))
        self.precs = np.zeros((capacity, d, d))
        self.logdets = np.zeros(capacity)
        self._consts = np.zeros((slots.N_CONSTS, capacity))
        self.refresh()
        # log prior predictive of every point: the empty-cluster Student-t, fixed for the run
        empty = np.zeros(1, dtype=np.int64)
        self.log_pred_new = gibbs.log_predictive_all(
            X, empty, self.m0[None], self.P0[None], np.array([self.logdet0]), self.tables, 1
        )[:, 0].copy()
        self.sweeps_done = 0
        self._perm = np.arange(N, dtype=np.int32)
        # the sweep's own copies of X, the labels and log_pred_new in its order (gibbs.gibbs_sweeps)
        self._X_order = np.empty_like(X)
        self._labels_order = np.empty(N, dtype=np.int64)
        self._log_pred_order = np.empty(N)
        self.sm_stats = np.zeros(4, dtype=np.int64)

    def refresh(self):
        """Recompute all cluster statistics from the labels."""
        slots.rebuild_all(
            self.X, self.labels, self.K, self.m0, self.S0, self.kappa0, self.counts, self.means, self.precs,
            self.logdets, self._consts, self.tables,
        )

    def log_joint(self):
        """log p(z, X) of the current labels: log V_N(K) + sum_k [log W(N_k) + log m(X_k)], normalised for
        every prior but the pCRP (whose V_N is known only up to a constant)."""
        return float(gibbs.log_joint(self.K, self.counts, self.logdets, self.log_v, self.tables))

    _warm_up = False  # True for warm_up()'s own sampler
    scan = gibbs.SCAN_MEMORY  # the sweep's order (gibbs.SCAN_*; docs/records/sweep_ab.md compares them)
    exact_members = split_merge.EXACT_MEMBERS  # a split-merge move's members seated by the exact predictives
    vector_from = gibbs.VECTOR_FROM  # from this many slots in use the sweep's logs and exps run as vector passes

    def step(self, n_sweeps=1, keep=None):
        """Run ``n_sweeps`` sweeps; returns a :class:`StepInfo` (its seconds exclude numba compilation).

        keep: optional (n_sweeps,) bool mask of the sweeps whose labels to keep; their labels come back
        in ``StepInfo.kept_labels`` (n_kept, N) and the split-merge totals after them in
        ``StepInfo.kept_sm`` (n_kept, 4). The kernel copies them, so keeping every few sweeps costs no
        return to Python.
        """
        n_sweeps = int(n_sweeps)
        if self._dims not in warm_dims and not self._warm_up:
            warm_up_sweeps(self.X.shape[1])  # compile, or load from the cache, outside the timed calls
        K_out = np.zeros(n_sweeps, dtype=np.int64)
        lj_out = np.zeros(n_sweeps)
        keep_rows = np.full(n_sweeps, -1, dtype=np.int64)
        if keep is not None:
            keep = np.asarray(keep, dtype=bool)
            if keep.shape != (n_sweeps,):
                raise SamplerError(f"keep must be a mask of the {n_sweeps} sweeps (got shape {keep.shape}).")
            keep_rows[keep] = np.arange(int(keep.sum()))
        n_keep = int((keep_rows >= 0).sum())
        kept_labels = np.empty((n_keep, self.X.shape[0]), dtype=np.int64)
        kept_sm = np.empty((n_keep, 4), dtype=np.int64)
        start = time.perf_counter()
        done = 0
        while done < n_sweeps:
            to_refresh = REFRESH_EVERY - self.sweeps_done % REFRESH_EVERY
            chunk = min(n_sweeps - done, to_refresh)
            progress = np.zeros(gibbs.N_PROGRESS, dtype=np.int64)
            progress[gibbs.PROGRESS_FRESH] = 1
            while True:
                self.K = gibbs.gibbs_sweeps(
                    self._dims, self.X, self.labels, self.K, self.counts, self.means, self.precs, self.logdets,
                    self._consts, self.m0, self.S0, self.P0, self.logdet0, self.kappa0, self.log_new, self.log_v,
                    self.tables, self.log_pred_new, self.rng_state, self.scan, self._perm, self._X_order, self._labels_order,
                    self._log_pred_order, progress, chunk, self.n_split_merge,
                    K_out[done:done + chunk], lj_out[done:done + chunk], self.sm_stats,
                    keep_rows[done:done + chunk], kept_labels, kept_sm, self.exact_members, self.vector_from,
                )
                if progress[gibbs.PROGRESS_SWEEPS] == chunk:
                    break
                self._grow()
            done += chunk
            self.sweeps_done += chunk
            if self.sweeps_done % REFRESH_EVERY == 0:
                self.refresh()
        # The kernel's log joint comes from cached log-determinants that the rank-one updates move in their last
        # bits, so one partition's value drifts by ~1e-10 between refreshes; R-hat and ESS rank the values, and
        # would read that drift as movement. Rounded here, once, every reader sees one number per partition.
        np.round(lj_out, LOG_JOINT_DECIMALS, out=lj_out)
        return StepInfo(K=K_out, log_joint=lj_out, seconds=time.perf_counter() - start, kept_labels=kept_labels,
                        kept_sm=kept_sm)

    def _grow(self):
        """Double the number of cluster slots (the kernel ran out of free ones)."""
        capacity = self.counts.shape[0]

        def bigger(a):  # slots along the last axis of consts, the first of the others
            if a is self._consts:
                out = np.zeros((a.shape[0], 2 * capacity))
                out[:, :capacity] = a
                return out
            out = np.zeros((2 * capacity,) + a.shape[1:], dtype=a.dtype)
            out[:capacity] = a
            return out

        self.counts, self.means, self.precs = bigger(self.counts), bigger(self.means), bigger(self.precs)
        self.logdets, self._consts = bigger(self.logdets), bigger(self._consts)

    def cluster_sizes(self):
        """(K,) sizes of the current clusters."""
        return self.counts[: self.K].copy()


@dataclass
class Chain:
    """The record of one run.

    K: (iters,) int, clusters after each sweep.
    log_joint: (iters,) float, unnormalised log p(z, X) after each sweep.
    labels: (n_kept, N) int (:func:`label_dtype`), the kept label draws (after burn-in, every thin-th sweep).
    kept_sweeps: (n_kept,) int, 1-based sweep number of each kept draw.
    seconds_per_sweep: mean wall-clock seconds of kernel time per sweep.
    config: every resolved setting (JSON-serialisable dict).
    split_merge_stats: [splits proposed, accepted, merges proposed, accepted].
    split_merge_at_kept: (n_kept, 4) the same totals just after each kept draw.
    """

    K: np.ndarray
    log_joint: np.ndarray
    labels: np.ndarray
    kept_sweeps: np.ndarray
    seconds_per_sweep: float
    config: dict = field(default_factory=dict)
    split_merge_stats: np.ndarray = field(default_factory=lambda: np.zeros(4, dtype=np.int64))
    split_merge_at_kept: np.ndarray = field(default_factory=lambda: np.zeros((0, 4), dtype=np.int64))


def keep_schedule(iters, burn_in, thin):
    """1-based sweep numbers whose labels are kept: burn_in + thin, burn_in + 2 thin, ... <= iters.

    The one definition of which draws a chain keeps (batch runs and live chains alike).
    """
    return np.arange(burn_in + thin, iters + 1, thin, dtype=np.int64)


CALL_SWEEPS = 500  # the most sweeps per kernel call of a batch run
BATCH_CALL_SECONDS = 0.5  # ... and about the longest call: progress, Ctrl-C and a stop are seen this often


class ChainStopped(Exception):
    """A chain was asked to stop between kernel calls (another chain failed, or Ctrl-C)."""


class ChainRecorder:
    """One chain as it runs: its :class:`Sampler`, K and the log joint after every sweep, and the label draws it
    is asked to keep. The one driver of batch chains (:func:`run`, :func:`pcrp.runs.chains.run_chains`).

    capacity: the most sweeps the chain will run (the traces are allocated once).
    K: (capacity,) int64 and log_joint: (capacity,) float64, filled up to ``done``.
    """

    def __init__(self, sampler, capacity):
        self.sampler = sampler
        self.K = np.empty(capacity, dtype=np.int64)
        self.log_joint = np.empty(capacity)
        self.done = 0
        self.kernel_seconds = 0.0

    def advance(self, until, keep, labels_out, sm_out, *, work=None, callback=None, stop=None):
        """Run sweeps done + 1 .. ``until``.

        keep: (until - done,) bool, the sweeps whose labels to keep; they go, in order, into the rows of
        ``labels_out`` (n_keep, N) and their split-merge totals into ``sm_out`` (n_keep, 4).
        work: a :class:`pcrp.sampling.compute.WorkTicket` (the app's): each kernel call then holds a compute slot and lasts
        about ``pcrp.sampling.compute.CALL_SECONDS``, and a cancelled ticket ends the chain with WorkCancelled. Otherwise
        calls last about BATCH_CALL_SECONDS (at most CALL_SWEEPS sweeps).
        callback(done): after each kernel call. stop: a threading.Event; once set the chain raises ChainStopped
        before its next call.
        """
        seconds_per_call = BATCH_CALL_SECONDS if work is None else compute.CALL_SECONDS
        chunk, n_kept = 1, 0
        start = self.done
        while self.done < until:
            if stop is not None and stop.is_set():
                raise ChainStopped()
            target = min(until, self.done + chunk)
            mask = keep[self.done - start:target - start]
            if work is None:
                info = self.sampler.step(target - self.done, keep=mask)
            else:
                with work.slot():
                    info = self.sampler.step(target - self.done, keep=mask)
            self.K[self.done:target] = info.K
            self.log_joint[self.done:target] = info.log_joint
            new = len(info.kept_labels)
            labels_out[n_kept:n_kept + new] = info.kept_labels
            sm_out[n_kept:n_kept + new] = info.kept_sm
            n_kept += new
            self.kernel_seconds += info.seconds
            chunk = int(min(CALL_SWEEPS, max(1, seconds_per_call * (target - self.done) / max(info.seconds, 1e-9))))
            self.done = target
            if callback is not None:
                callback(self.done)
        return n_kept


warm_dims = set()  # the kernels' dims arguments compiled (or loaded) in this process


def sampler_dims(d):
    """The kernels' ``dims`` argument for data of d columns: a tuple of d zeros selects the kernel specialised to d
    (compiled and cached once per d), the empty tuple the general kernel used above SPECIALISED_UP_TO."""
    return (0,) * d if d <= SPECIALISED_UP_TO else ()


def warm_up_sweeps(d=2):
    """Compile (or load from numba's cache) the sweep kernel for data of ``d`` columns on a tiny problem;
    about 0.3 s when cached."""
    from ..model import CRP, resolve_niw

    X = np.random.default_rng(0).normal(size=(6, d))
    sampler = Sampler(X, CRP(1.0), resolve_niw(X), seed=0, init="random:2")
    sampler._warm_up = True
    sampler.step(2)
    warm_dims.add(sampler._dims)

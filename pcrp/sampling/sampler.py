"""The sampler: one chain of the collapsed Gibbs sampler (Algorithm 1) with split-merge moves, over the numba kernels
of :mod:`pcrp.kernels`.

>>> sampler = Sampler(X, PowerCRP(alpha=1, r=1.2), resolve_niw(X), seed=0)
>>> info = sampler.step(100)           # 100 sweeps; info.K, info.log_joint are (100,)
>>> # whole runs (chains, budget, kept draws): pcrp.runs.run_spec.make_run_spec + pcrp.runs.chains.run_chains

Stepping is cheap (one kernel call per chunk), so the app can stream a chain by calling :meth:`Sampler.step` a few
sweeps at a time from a background thread; the kernels release the GIL. One kernel serves every d.
"""

import time
from dataclasses import dataclass

import numpy as np

from ..basics.dtypes import check_memory, state_bytes
from ..basics.errors import SamplerError
from ..kernels import clusters, split_merge, sweep
from ..kernels.rng import seed_state
from ..kernels.split_merge import EXACT_MEMBERS
from ..kernels.state import BaseMeasure, Data, Record, ScanBuffers, Settings, SweepScratch, empty_slots, enlarged
from ..kernels.vecmath import LANES
from ..model import check_niw_for_data, log_weight_table, prior_tables
from ..model.niw_math import implied_logdet, kernel_tables
from .starts import cap_init, check_seed, initial_labels, moves_per_sweep, start_clusters

# Statistics are recomputed from the labels every REFRESH_EVERY sweeps (counted from the start of the chain, so
# results do not depend on how sweeps are split into calls). This bounds the rounding drift of the rank-one
# downdates.
REFRESH_EVERY = 1000
LOG_JOINT_DECIMALS = 6  # the recorded log joint, in nats (see Sampler.step)
_warm = set()  # (covariance type, part) of the sweep kernels this process has (compiled, or loaded from numba's cache)


@dataclass
class StepInfo:
    """What one call to :meth:`Sampler.step` did.

    K: (n_sweeps,) number of clusters after each sweep.
    log_joint: (n_sweeps,) unnormalised log p(z, X) after each sweep.
    seconds: wall-clock seconds spent in the kernel.
    kept_labels: (n_kept, N) the labels of the sweeps asked to be kept; kept_moves: (n_kept, 4) the split-merge
    totals just after each.
    """

    K: np.ndarray
    log_joint: np.ndarray
    seconds: float
    kept_labels: np.ndarray = None
    kept_moves: np.ndarray = None


def base_measure(niw):
    """The NIW as the kernels read it (:class:`pcrp.kernels.state.BaseMeasure`), its scale in the covariance type's
    shape: S0 (full), its diagonal (diag), its one number as a (1,) array (spherical)."""
    S0 = np.asarray(niw.S0, dtype=np.float64)
    if niw.covariance_type == "full":
        stored, inverse = S0, np.linalg.inv(S0)
    else:
        stored = np.diag(S0).copy() if niw.covariance_type == "diag" else S0[0, :1].copy()
        inverse = 1.0 / stored
    return BaseMeasure(np.ascontiguousarray(niw.m0, dtype=np.float64), np.ascontiguousarray(stored),
                       np.ascontiguousarray(inverse), implied_logdet(S0, S0, niw.covariance_type), float(niw.kappa0))


def prior_slots(d, capacity, base, tables, covariance):
    """:class:`pcrp.kernels.state.Slots` of ``capacity`` empty clusters of the covariance type, each holding the
    prior's statistics."""
    slots = empty_slots(d, capacity, covariance)
    for k in range(capacity):
        clusters.empty_slot(slots, k, base, tables)
    return slots


def slots_for(X, labels, n_slots, base, tables, covariance, capacity=None):
    """:class:`pcrp.kernels.state.Slots` of the clusters 0 .. n_slots - 1 that ``labels`` (N,), values in
    0 .. n_slots - 1, give the rows of X, the rest empty; covariance: the type ``base`` was made for ("full",
    "diag", "spherical"); capacity: at least whole vectors of n_slots + 1."""
    slots = prior_slots(X.shape[1], capacity or -(-(n_slots + 1) // LANES) * LANES, base, tables, covariance)
    clusters.rebuild(X, labels, n_slots, slots, base, tables)
    return slots


class Sampler:
    """Collapsed Gibbs sampler (Algorithm 1) with optional split-merge moves.

    X: (N, d) float data, used exactly as given.
    prior: a partition prior from ``pcrp.model.PRIORS`` (``CRP``, ``PowerCRP``, ``PitmanYor``, ``MFM``,
        ``SparseFiniteMixture``; ``make_prior``). It reaches the kernels as tables only.
    niw: ``pcrp.model.NIW`` hyperparameters of dimension d.
    split_merge: number of sequentially-allocated merge-split moves after each sweep (0 or False = the paper's
        plain Gibbs; True = 1).
    init: 'one', 'random:K', 'kmeans:K' or an (N,) array of labels. With a prior that allows at most
        ``prior.max_blocks`` clusters (the sparse finite mixture's k_max), 'random:K' and 'kmeans:K' start from at
        most that many (as K is capped at N); labels with more clusters are refused.
    seed: int or None; the same seed gives the same chain.

    The code paths, which the exact-enumeration tests reach by changing them: ``scan`` (the sweep's order,
    sweep.SCAN_MEMORY or SCAN_RANDOM), ``vector_from`` (from this many slots in use a point's weights are one vector
    pass), ``exact_members`` (a split-merge move's members seated by the exact predictives before the frozen
    score) and ``logs_from`` (from this many columns the diagonal type's forms are sums of logs).
    """

    scan = sweep.SCAN_MEMORY
    vector_from = sweep.VECTOR_FROM
    exact_members = EXACT_MEMBERS
    logs_from = sweep.LOGS_FROM

    def __init__(self, X, prior, niw, *, split_merge=True, init="kmeans:10", seed=None):
        X = np.ascontiguousarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[0] < 1 or X.shape[1] < 1:
            raise SamplerError(f"X must be an (N, d) array with N, d >= 1 (got shape {X.shape}).")
        if not np.all(np.isfinite(X)):
            raise SamplerError("X contains NaN or infinite values; remove or impute them first.")
        if niw.dim != X.shape[1]:
            raise SamplerError(f"NIW prior has dimension {niw.dim} but X has {X.shape[1]} columns.")
        self.n_split_merge = moves_per_sweep("split_merge", split_merge)
        check_seed(seed)
        check_niw_for_data(niw, X)
        N, d = X.shape
        check_memory(state_bytes(N, d, start_clusters(init, N)),
                     f"The sampler's state for {N:,} points in {d} columns",
                     "Start from fewer clusters (init) or use fewer points or columns.")
        self.X = X
        self.prior = prior
        self.niw = niw
        self.seed = seed
        init = cap_init(init, prior, N)
        init_rng = np.random.default_rng(np.random.SeedSequence(seed).spawn(1)[0])
        self.labels = initial_labels(X, init, init_rng)
        self.K = int(self.labels.max()) + 1
        self.rng_state = seed_state(seed)
        log_new, log_v = prior_tables(prior, N)  # per number of blocks K
        tables = kernel_tables(N, d, niw.kappa0, niw.nu0, niw.S0, log_weight_table(prior, N), log_new, log_v,
                               niw.covariance_type)
        base = base_measure(niw)
        # the prior predictive of every point, a new cluster's Student-t, fixed for the run
        covariance = niw.covariance_type
        log_pred_new = clusters.log_predictive(X, prior_slots(d, LANES, base, tables, covariance), 1,
                                               tables)[:, 0].copy()
        self.data = Data(X, log_pred_new, base, tables)
        self.slots = slots_for(X, self.labels, self.K, base, tables, covariance,
                               -(-max(16, 2 * self.K) // LANES) * LANES)
        self.sweeps_done = 0
        self.move_totals = np.zeros(4, dtype=np.int64)  # [splits proposed, accepted, merges proposed, accepted]
        # the sweep's own copies of X, the labels and log_pred_new in its order (SCAN_RANDOM)
        self._scan = ScanBuffers(np.arange(N, dtype=np.int64), np.empty_like(X), np.empty(N, dtype=np.int64),
                                 np.empty(N), np.zeros(sweep.N_PROGRESS, dtype=np.int64))

    def refresh(self):
        """Recompute all cluster statistics from the labels."""
        clusters.rebuild(self.X, self.labels, self.K, self.slots, self.data.base, self.data.tables)

    def log_joint(self):
        """log p(z, X) of the current labels: log V_N(K) + sum_k [log W(N_k) + log m(X_k)], normalised for every
        prior but the pCRP (whose V_N is known only up to a constant)."""
        return float(clusters.log_joint(self.K, self.slots, self.data.tables))

    def cluster_statistics(self):
        """(counts (K,), means (K, d), precisions (K, d, d), log-determinants (K,)) of the current clusters: the NIW
        posterior m_n, S_n^{-1} and log|S_n| the kernels hold, cluster by cluster."""
        K, s = self.K, self.slots
        return s.counts[:K].copy(), s.means[:K].copy(), s.precs[:K].copy(), s.logdets[:K].copy()

    def cluster_sizes(self):
        """(K,) sizes of the current clusters."""
        return self.slots.counts[: self.K].copy()

    def step(self, n_sweeps=1, keep=None):
        """Run ``n_sweeps`` sweeps; returns a :class:`StepInfo`.

        keep: optional (n_sweeps,) bool mask of the sweeps whose labels to keep; their labels come back in
        ``StepInfo.kept_labels`` (n_kept, N) and the split-merge totals after them in ``StepInfo.kept_moves``
        (n_kept, 4). The kernel copies them, so keeping every few sweeps costs no return to Python.
        """
        n_sweeps = int(n_sweeps)
        if (self.niw.covariance_type, SWEEP) not in _warm:
            warm_up_sweeps(self.niw.covariance_type)  # compile, or load from the cache, outside the timed calls
        keep_rows = np.full(n_sweeps, -1, dtype=np.int64)
        if keep is not None:
            keep = np.asarray(keep, dtype=bool)
            if keep.shape != (n_sweeps,):
                raise SamplerError(f"keep must be a mask of the {n_sweeps} sweeps (got shape {keep.shape}).")
            keep_rows[keep] = np.arange(int(keep.sum()))
        n_keep = int((keep_rows >= 0).sum())
        record = Record(np.zeros(n_sweeps, dtype=np.int64), np.zeros(n_sweeps), keep_rows,
                        np.empty((n_keep, self.X.shape[0]), dtype=np.int64), np.empty((n_keep, 4), dtype=np.int64),
                        self.move_totals)
        settings = self.settings()
        progress = self._scan.progress
        start = time.perf_counter()
        done = 0
        while done < n_sweeps:
            chunk = min(n_sweeps - done, REFRESH_EVERY - self.sweeps_done % REFRESH_EVERY)
            rows = slice(done, done + chunk)
            part = record._replace(K=record.K[rows], log_joint=record.log_joint[rows], keep_rows=keep_rows[rows])
            progress[:] = 0
            progress[sweep.PROGRESS_FRESH] = 1
            while True:
                self.K = sweep.run_sweeps(self.data, self.labels, self.K, self.slots, settings, self._scan, part,
                                          chunk, self.rng_state)
                if progress[sweep.PROGRESS_SWEEPS] == chunk:
                    break
                self._grow()
            done += chunk
            self.sweeps_done += chunk
            if self.sweeps_done % REFRESH_EVERY == 0:
                self.refresh()
        # The kernel's log joint comes from cached log-determinants that the rank-one updates move in their last
        # bits, so one partition's value drifts by ~1e-10 between refreshes; R-hat and ESS rank the values, and
        # would read that drift as movement. Rounded here, once, every reader sees one number per partition.
        np.round(record.log_joint, LOG_JOINT_DECIMALS, out=record.log_joint)
        return StepInfo(K=record.K, log_joint=record.log_joint, seconds=time.perf_counter() - start,
                        kept_labels=record.kept_labels, kept_moves=record.kept_moves)

    def settings(self):
        """The sweeps' :class:`pcrp.kernels.state.Settings` (the moves and the code paths of this sampler)."""
        return Settings(int(self.scan), self.n_split_merge, int(self.vector_from), int(self.exact_members),
                        int(self.logs_from))

    def _grow(self):
        """Twice the slots (the kernel ran out of free ones), the new ones empty."""
        capacity = self.slots.counts.shape[0]
        self.slots = enlarged(self.slots, 2 * capacity)
        for k in range(capacity, 2 * capacity):
            clusters.empty_slot(self.slots, k, self.data.base, self.data.tables)


# The parts of a covariance type's sweep, which pcrp.runs.compiling compiles in two processes at once when the cache is
# cold (numba compiles one function at a time per process), each part loading from the cache what an earlier part
# compiled: SEATING, every kernel a sweep calls but the split-merge move (Algorithm 1's seating, compacting the slots,
# the sweep's order, the log joint, and the statistics a Sampler starts from); MOVES, the split-merge move and what it
# calls (pcrp.kernels.split_merge); SWEEP, the driver of sweeps and moves (pcrp.kernels.sweep.run_sweeps), which
# links the other two in and compiles whatever of them is not compiled yet.
SEATING, MOVES, SWEEP = "seating", "moves", "sweep"
SWEEP_PARTS = (SEATING, MOVES, SWEEP)


def _compile_for(kernel, *args):
    """Compile, or load from the cache, ``kernel`` for the numba types of ``args`` without running it."""
    import numba

    kernel.compile(tuple(numba.typeof(arg) for arg in args))


def _tiny_sampler(covariance_type):
    from ..model import CRP, resolve_niw

    X = np.random.default_rng(0).normal(size=(6, 2))
    return Sampler(X, CRP(1.0), resolve_niw(X, covariance_type=covariance_type), seed=0, init="random:2")


def warm_up_sweeps(covariance_type="full", part=SWEEP):
    """Compile, or load from numba's cache, a part (SWEEP_PARTS) of the sweep of a covariance type, on a tiny
    problem: one kernel for every d, once per type (:mod:`pcrp.kernels.scales`); the SWEEP part (the default) is the
    whole sweep, about 0.3 s when cached. SEATING runs its kernels, MOVES compiles the move without running it, both
    with the types run_sweeps passes them (tests/test_compiling.py checks that SWEEP then compiles run_sweeps alone).
    The kernels' compiling as a whole, and saying so: :mod:`pcrp.runs.compiling`."""
    if part not in SWEEP_PARTS:
        raise ValueError(f"part must be one of {', '.join(SWEEP_PARTS)} (got {part!r}).")
    if (covariance_type, part) in _warm or (covariance_type, SWEEP) in _warm:
        return
    _warm.add((covariance_type, part))  # before a step, which would come back here otherwise
    try:
        _warm_up(covariance_type, part)
    except BaseException:  # not warm after all (pcrp.runs.compiling.from_cache stops a part at its first compile)
        _warm.discard((covariance_type, part))
        raise


def _warm_up(covariance_type, part):
    sampler = _tiny_sampler(covariance_type)  # the statistics a sampler starts from: every part needs them
    if part == SWEEP:
        sampler.step(2)
        return
    data, slots, settings, labels, rng = sampler.data, sampler.slots, sampler.settings(), sampler.labels, \
        sampler.rng_state
    N, d = sampler.X.shape
    capacity = slots.counts.shape[0]
    if part == SEATING:
        sweep.start_sweep(settings.scan, sampler.X, labels, data.log_pred_new, sampler._scan, rng)
        scratch = SweepScratch(np.empty(d), np.empty(d), np.empty(capacity), np.empty(capacity),
                               np.empty(capacity + 1), np.empty(capacity, dtype=np.int64))
        used, _ = sweep.seat_points(data, sampler.X, labels, data.log_pred_new, 0, 1, 0, sampler.K, slots, slots.precs,
                                    settings, scratch, rng)
        K = sweep.compact(used, slots, np.empty(capacity, dtype=np.int64), data)
        clusters.log_joint(K, slots, data.tables)
        return
    # the move, for the types run_sweeps passes it (compiled, not run: no state to make valid)
    moves = split_merge.move_scratch(N, d, capacity, slots.precs)
    _compile_for(split_merge.build_member_index, labels, sampler.K, slots.counts, moves.order, moves.starts)
    _compile_for(split_merge.split_merge, data, labels, sampler.K, slots, moves, settings.exact_members,
                 np.zeros(4, dtype=np.int64), rng)

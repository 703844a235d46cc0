"""Chains that run in background threads and can be watched: the live app's engine.

Nothing here knows about Streamlit. A :class:`LiveRun` is one press of Start: a CRP and a pCRP
chain (or any named priors) on the same data, each a :class:`LiveChain` in its own thread. The
threads only call :meth:`pcrp.sampler.Sampler.step` (numba kernels release the GIL) and write
into preallocated arrays under a lock; readers take :meth:`LiveChain.snapshot`, whose arrays are
views of the parts already written (never copies of the whole history).

Lifetime. A run belongs to the sessions that :meth:`LiveRun.adopt` it (the app adopts it on
every script run of the browser session that started or reloaded it). When the last owner
releases it (the session disconnected: tab closed, reload, network lost), its chains stop
after ``ORPHAN_GRACE_SECONDS`` unless an owner adopts it again first (a reconnect, or the
reloaded page); paused chains too. A finished run that no session has owned for ``RELOAD_SECONDS``
is forgotten by the :class:`RunRegistry` and its buffers freed. Nothing depends on how often the page
redraws. Kernel calls of all chains share ``COMPUTE_SLOTS``, one per core.

Memory. :func:`plan_storage` fixes, before a run starts, every buffer it will hold: traces of K
and of the log joint, the kept label draws (stored as :func:`pcrp.sampler.label_dtype`) and up
to ``REPLAY_FRAMES`` states for replay (fewer when they would take more than half the budget). If the kept
draws would exceed the budget (``SESSION_BUDGET_BYTES`` for all chains of a run), thinning is raised and the
plan says so.
:class:`RunRegistry` keeps runs for reload within a server-wide budget and limits how many
chains run at once.
"""

import logging
import math
import secrets
import threading
import time
from collections import OrderedDict, deque
from dataclasses import dataclass, field

import numpy as np

from ..compute import COMPUTE_SLOTS, describe_seconds, describe_work, lower_thread_priority, usable_cpus, work_cost
from ..run_spec import check_schedule
from ..sampler import SamplerError, Sampler, keep_schedule, label_dtype

LOG = logging.getLogger(__name__)

SESSION_BUDGET_BYTES = 200 * 2**20  # every buffer of one run (all its chains)
REPLAY_FRAMES = 200  # states kept for replay, spread evenly over the run
TARGET_CALL_SECONDS = 0.1  # kernel call length at full speed: pause/stop act within about this
# (each call needs the GIL a few times, and a busy server holds it: longer calls lose less; see bench/live_browser.py)
ORPHAN_GRACE_SECONDS = 5.0  # a run with no session stops this long after its last session left
RELOAD_SECONDS = 60.0  # ... and is forgotten this long after (a reloaded page finds it until then)
RATE_WINDOW_SECONDS = 3.0  # sweeps/s and time left come from wall-clock progress over this window
SETTLE_SECONDS = 2.0  # Pause and Stop wait at most this long for a kernel call in flight to end


# Kernel calls of all live chains of the process (and of every visitor's cross-validation fits) share
# pcrp.compute.COMPUTE_SLOTS, one per usable core. Chains beyond that wait their turn between 0.1 s calls
# instead of all being runnable at once: with 16 chains on 2 cores, the operating system otherwise preempted
# threads while they held the GIL and the web server's event loop answered after seconds
# (bench/load_test.py). The cores bound the chains' total speed either way; the slots only decide which
# chains use them.

# Chain states
READY, RUNNING, PAUSED, FINISHED, STOPPED, FAILED = "ready", "running", "paused", "finished", "stopped", "failed"
LIVE_STATES = (READY, RUNNING, PAUSED)


@dataclass(frozen=True)
class StoragePlan:
    """What one run stores, fixed before it starts.

    iters, burn_in: sweeps in all and before keeping draws; thin: the thinning used (at least the
    requested one, raised to fit the budget); kept_sweeps (n_kept,) and replay_sweeps (n_frames,):
    1-based sweeps whose labels are stored; bytes: the memory of every buffer of all chains.
    """

    iters: int
    burn_in: int
    thin: int
    requested_thin: int
    n_points: int
    n_chains: int
    kept_sweeps: np.ndarray
    replay_sweeps: np.ndarray
    bytes: int
    budget: int

    @property
    def thin_raised(self):
        return self.thin > self.requested_thin

    def describe(self):
        """One sentence for the page: what is stored and, if thin was raised, why."""
        mib = self.bytes / 2**20
        text = (f"{self.kept_sweeps.size:,} draws kept per chain (every {self.thin} sweeps after burn-in), "
                f"{mib:.1f} MiB for this run (budget {self.budget / 2**20:.0f} MiB).")
        if self.thin_raised:
            text = (f"Thinning raised from {self.requested_thin} to {self.thin} so that the kept draws fit this "
                    f"session's memory budget of {self.budget / 2**20:.0f} MiB: " + text)
        return text


def _trace_bytes(iters):
    return iters * (np.dtype(np.int32).itemsize + np.dtype(np.float64).itemsize)


def plan_storage(n_points, iters, burn_in, thin, n_chains=2, budget=SESSION_BUDGET_BYTES):
    """The :class:`StoragePlan` of a run of ``n_chains`` chains on ``n_points`` points.

    Raises SamplerError for a bad schedule, or when even one kept draw per chain does not fit.
    """
    iters, burn_in, thin = check_schedule(iters, burn_in, thin)
    requested = thin
    per_draw = n_points * label_dtype(n_points).itemsize
    # replay frames take at most half the budget (200 frames of 100,000 labels in 4 chains would take 320 MB):
    # fewer frames for large data, at least 2
    frames = int(min(REPLAY_FRAMES, iters, max(2, (budget // 2) // (n_chains * per_draw))))
    replay_sweeps = np.unique(np.linspace(1, iters, frames).round().astype(np.int64))
    fixed = n_chains * (_trace_bytes(iters) + replay_sweeps.size * per_draw + 2 * per_draw)
    room = budget - fixed
    wanted = keep_schedule(iters, burn_in, thin).size
    per_kept = per_draw + 4 * 8  # the labels and the split-merge counts at that sweep
    fits = room // (n_chains * per_kept) if room > 0 else 0
    if fits < 1:
        raise SamplerError(
            f"A run of {iters:,} sweeps on {n_points:,} points needs more than this session's memory budget of "
            f"{budget / 2**20:.0f} MiB just for its traces: use fewer sweeps.")
    if wanted > fits:
        thin = max(thin, math.ceil((iters - burn_in) / fits))
        while keep_schedule(iters, burn_in, thin).size > fits:
            thin += 1
    kept = keep_schedule(iters, burn_in, thin)
    if kept.size == 0:
        raise SamplerError(f"thin ({thin}) leaves no draws to keep: it must be at most sweeps - burn-in "
                           f"({iters - burn_in}).")
    total = fixed + n_chains * kept.size * per_kept
    return StoragePlan(iters, burn_in, thin, requested, n_points, n_chains, kept,
                       replay_sweeps, int(total), int(budget))


@dataclass
class Snapshot:
    """What a watcher sees of one chain. Arrays are read-only views of what is already written.

    K, log_joint: (sweeps_done,) traces; labels: (N,) current labels (a copy); kept: (n_kept_so_far, N)
    kept draws and kept_sweeps their 1-based sweeps; replay: (n_frames_so_far, N) states at
    replay_sweeps. sweeps_per_second and seconds_left come from wall-clock progress while running.
    """

    sweeps_done: int
    total_sweeps: int
    K: np.ndarray
    log_joint: np.ndarray
    labels: np.ndarray
    kept: np.ndarray
    kept_sweeps: np.ndarray
    replay: np.ndarray
    replay_sweeps: np.ndarray
    state: str
    sweeps_per_second: float
    seconds_left: float
    stop_reason: str = ""
    error: str = ""

    @property
    def live(self):
        return self.state in LIVE_STATES


def _read_only(a):
    view = a.view()
    view.flags.writeable = False
    return view


class LiveChain:
    """One sampler in a thread. States: ready -> running <-> paused -> finished | stopped | failed.

    Pause is a freeze: the state turns to paused only once no kernel call is in flight (at once when
    the thread is between calls, else when the call in flight has been recorded), so a paused chain's
    sweep count never moves again except by :meth:`step_once`, which adds exactly one sweep.
    :meth:`wait_settled` waits for that moment.

    pace: target sweeps per second (None = as fast as possible); it can change while running.
    should_stop: a callable returning a reason (str) when the chain must stop (its run was orphaned).
    """

    def __init__(self, X, prior, niw, plan, *, seed, init="kmeans:10", should_stop=None, **sampler_options):
        self.sampler = Sampler(X, prior, niw, init=init, seed=seed, **sampler_options)
        self.prior = prior
        self.plan = plan
        n = X.shape[0]
        dtype = label_dtype(n)
        self.K = np.zeros(plan.iters, dtype=np.int32)
        self.log_joint = np.zeros(plan.iters)
        self.kept = np.zeros((plan.kept_sweeps.size, n), dtype=dtype)
        self.replay = np.zeros((plan.replay_sweeps.size, n), dtype=dtype)
        self.done = 0
        self.n_kept = 0
        self.n_replay = 0
        self.pace = None
        self.state = READY
        self.stop_reason = ""
        self.error = ""
        self._should_stop = should_stop or (lambda: None)
        self._lock = threading.Lock()
        self._wake = threading.Event()  # set to cut short any wait of the thread
        self._stop_requested = False
        self._paused = False
        self._steps_requested = 0
        self._in_call = False  # a kernel call is in flight (holding a compute slot; its sweeps not yet recorded)
        self._settled = threading.Condition(self._lock)  # notified when a call's sweeps are recorded
        self._thread = None
        self._progress = deque()  # (monotonic time, sweeps done) while running
        self._sweep_seconds = 1e-3
        self.kernel_seconds = 0.0
        self.sm_at_kept = np.zeros((plan.kept_sweeps.size, 4), dtype=np.int64)  # split-merge totals per kept draw
        self._labels = self.sampler.labels.astype(dtype)
        # per sweep (0-based): its row in kept / replay, or -1; and whether the kernel must copy it
        self._kept_row = np.full(plan.iters, -1, dtype=np.int64)
        self._kept_row[plan.kept_sweeps - 1] = np.arange(plan.kept_sweeps.size)
        self._replay_row = np.full(plan.iters, -1, dtype=np.int64)
        self._replay_row[plan.replay_sweeps - 1] = np.arange(plan.replay_sweeps.size)
        self._stored = (self._kept_row >= 0) | (self._replay_row >= 0)

    def discard(self):
        """Free every buffer of a chain that has ended (its run was forgotten by the registry while no
        session owned it); nothing may read the chain afterwards."""
        with self._lock:
            if self.state in LIVE_STATES:
                raise RuntimeError("a live chain cannot be discarded; stop it first")
            self.sampler = self.K = self.log_joint = self.kept = self.replay = self.sm_at_kept = None
            self._labels = self._kept_row = self._replay_row = self._stored = None

    # ------------------------------------------------------------------ control (any thread)
    def start(self, paused=False):
        with self._lock:
            if self._thread is not None:
                return
            self._paused = paused
            self.state = PAUSED if paused else RUNNING
            self._thread = threading.Thread(target=self._loop, daemon=True, name="pcrp-live-chain")
        self._thread.start()

    def pause(self):
        """Ask the chain to pause: paused at once between kernel calls, else when the call in flight has been
        recorded (its sweeps count; none after it). See :meth:`wait_settled`."""
        with self._lock:
            if self.state == RUNNING:
                self._paused = True
                self._progress.clear()
                if not self._in_call:
                    self.state = PAUSED
        self._wake.set()  # cut short a wait for the pace

    def wait_settled(self, timeout=SETTLE_SECONDS):
        """Wait until no kernel call is in flight and no requested step is owed (a pause has taken effect, a
        step is recorded, a stopped chain records nothing more); True when so within ``timeout`` seconds."""
        with self._lock:
            return self._settled.wait_for(
                lambda: not self._in_call and (self._steps_requested == 0 or self._stop_requested), timeout)

    def resume(self):
        """Resume a paused chain, or cancel a pause still waiting for the call in flight (otherwise that pause
        would take effect after the Resume, and the chain would stay paused although Resume was pressed)."""
        with self._lock:
            if self.state == PAUSED or (self.state == RUNNING and self._paused):
                self._paused = False
                self.state = RUNNING
        self._wake.set()

    def step_once(self):
        """Advance exactly one sweep while paused; returns False when the chain is not paused."""
        with self._lock:
            if self.state != PAUSED or self.done >= self.plan.iters:
                return False
            self._steps_requested += 1
        self._wake.set()
        return True

    def stop(self, reason="stopped"):
        with self._lock:
            self._stop_requested = True
            if self.state in LIVE_STATES:
                self.state = STOPPED
                self.stop_reason = reason
        self._wake.set()

    def join(self, timeout=None):
        if self._thread is not None:
            self._thread.join(timeout)

    @property
    def alive(self):
        return self._thread is not None and self._thread.is_alive()

    # ------------------------------------------------------------------ the thread
    def _chunk(self):
        if self._steps_requested:
            return 1
        if self.pace:
            return max(1, int(self.pace * TARGET_CALL_SECONDS))
        return max(1, int(TARGET_CALL_SECONDS / max(self._sweep_seconds, 1e-7)))

    def _keep_mask(self, n):
        """Which of the next ``n`` sweeps are kept draws or replay frames (the kernel copies those): a view."""
        return self._stored[self.done:self.done + n]

    def _loop(self):
        lower_thread_priority()
        try:
            while True:
                reason = self._should_stop()
                if reason:
                    self.stop(reason)
                with self._lock:
                    if self._stop_requested or self.done >= self.plan.iters:
                        break
                    stepping = self._steps_requested > 0
                    if self._paused and not stepping:
                        if self.state == RUNNING:
                            self.state = PAUSED
                        self._wake.clear()
                        waiting = True
                    else:
                        waiting = False
                        n = min(self._chunk(), self.plan.iters - self.done)
                if waiting:
                    self._wake.wait(0.25)  # wakes on resume / step / stop; checks the owner regularly
                    continue
                started = time.perf_counter()
                if not COMPUTE_SLOTS.acquire(timeout=0.1):
                    continue  # a stop, pause or the owner's absence is seen while waiting for a slot
                with self._lock:  # a pause or stop that came while waiting for the slot: no call
                    go = not self._stop_requested and (stepping or not self._paused)
                    if go:
                        self._in_call = True
                    elif self._paused and self.state == RUNNING:
                        self.state = PAUSED
                if not go:
                    COMPUTE_SLOTS.release()
                    continue
                try:
                    info = self.sampler.step(n, keep=self._keep_mask(n))
                except BaseException:
                    with self._lock:
                        self._call_ended()
                    raise
                finally:
                    COMPUTE_SLOTS.release()
                elapsed = time.perf_counter() - started
                self._record(n, info, stepping)
                self.kernel_seconds += info.seconds
                self._sweep_seconds = max(info.seconds / n, 1e-7)
                pace = self.pace
                if pace and not stepping:
                    self._wake.clear()
                    self._wake.wait(max(0.0, n / pace - elapsed))
            with self._lock:
                if self.done >= self.plan.iters and self.state in LIVE_STATES:
                    self.state = FINISHED
        except Exception as err:  # shown to the page as one line; details in the server log
            LOG.exception("live chain failed")
            with self._lock:
                self.state = FAILED
                self.error = f"{type(err).__name__}: {err}"

    def _record(self, n, info, stepped=False):
        labels = self.sampler.labels
        span = slice(self.done, self.done + n)
        stored = np.flatnonzero(self._stored[span])  # rows of info.kept_labels, in sweep order
        kept_rows, replay_rows = self._kept_row[span][stored], self._replay_row[span][stored]
        with self._lock:
            self.K[span] = info.K
            self.log_joint[span] = info.log_joint
            is_kept, is_replay = kept_rows >= 0, replay_rows >= 0
            self.kept[kept_rows[is_kept]] = info.kept_labels[is_kept]
            self.sm_at_kept[kept_rows[is_kept]] = info.kept_sm[is_kept]
            self.replay[replay_rows[is_replay]] = info.kept_labels[is_replay]
            self.n_kept += int(is_kept.sum())
            self.n_replay += int(is_replay.sum())
            self.done += n
            if stepped:  # the requested step is done (counted down only now: wait_settled waits for it)
                self._steps_requested -= 1
            self._labels = labels.astype(self._labels.dtype)
            self._call_ended()
            now = time.monotonic()
            self._progress.append((now, self.done))
            while len(self._progress) > 2 and now - self._progress[0][0] > RATE_WINDOW_SECONDS:
                self._progress.popleft()

    def _call_ended(self):
        """(Lock held.) No call is in flight any more: a requested pause takes effect now."""
        self._in_call = False
        if self._paused and self.state == RUNNING:
            self.state = PAUSED
        self._settled.notify_all()

    # ------------------------------------------------------------------ reading (any thread)
    def progress(self):
        """(sweeps done, state, wall-clock sweeps per second while running or 0.0): cheap (no copy)."""
        with self._lock:
            rate = 0.0
            if self.state == RUNNING and len(self._progress) >= 2:
                (t0, d0), (t1, d1) = self._progress[0], self._progress[-1]
                if t1 > t0:
                    rate = (d1 - d0) / (t1 - t0)
            return self.done, self.state, rate

    def snapshot(self):
        with self._lock:
            done, n_kept, n_replay, state = self.done, self.n_kept, self.n_replay, self.state
            labels = self._labels.copy()
            rate = 0.0
            if state == RUNNING and len(self._progress) >= 2:
                (t0, d0), (t1, d1) = self._progress[0], self._progress[-1]
                if t1 > t0:
                    rate = (d1 - d0) / (t1 - t0)
            reason, error = self.stop_reason, self.error
        left = (self.plan.iters - done) / rate if rate > 0 else float("nan")
        return Snapshot(
            sweeps_done=done, total_sweeps=self.plan.iters, K=_read_only(self.K[:done]),
            log_joint=_read_only(self.log_joint[:done]), labels=labels, kept=_read_only(self.kept[:n_kept]),
            kept_sweeps=self.plan.kept_sweeps[:n_kept], replay=_read_only(self.replay[:n_replay]),
            replay_sweeps=self.plan.replay_sweeps[:n_replay], state=state, sweeps_per_second=rate,
            seconds_left=left, stop_reason=reason, error=error,
        )


@dataclass
class LiveRun:
    """One press of Start: named chains on the same data, settings and seed.

    dataset: the pcrp.data.Dataset the chains run on; config: every resolved setting (JSON-ready);
    token: an unguessable id, the run's name inside this server (never shown, never in an address);
    browser: the key of the browser that started it (see :meth:`RunRegistry.latest_for`), or None;
    address: the network address it came from, as :func:`visitor_address` groups it, or None;
    cost: its estimated core-seconds of sampling (:func:`pcrp.compute.work_cost`), counted in its visitor's share.
    A run that none of its owner's sessions has drawn for RECLAIM_SECONDS is reclaimed by the registry: paused,
    its chains no longer count in the server's pool, and only its owner's Resume (:meth:`RunRegistry.readmit`)
    brings it back.
    """

    chains: dict
    dataset: object
    niw: object
    config: dict
    plan: StoragePlan
    groups: dict = field(default_factory=dict)  # prior name -> names of its chains (first: the one animated)
    token: str = field(default_factory=lambda: secrets.token_urlsafe(12))
    browser: str = None
    created: float = field(default_factory=time.time)
    grace: float = ORPHAN_GRACE_SECONDS
    discarded: bool = False  # its buffers were freed (forgotten by the registry): nothing to show
    address: str = None
    cost: float = 0.0
    reclaimed: bool = False  # paused by the registry because nobody watched it; its chains are back in the pool
    _watched: float = field(default_factory=time.monotonic)
    _owners: set = field(default_factory=set)
    _orphaned_since: float = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    # -------------------------------------------------------------- ownership
    def adopt(self, owner_id):
        with self._lock:
            self._owners.add(owner_id)
            self._orphaned_since = None

    def release(self, owner_id):
        with self._lock:
            self._owners.discard(owner_id)
            if not self._owners and self._orphaned_since is None:
                self._orphaned_since = time.monotonic()

    def orphaned_for(self):
        """Seconds since the last owner released the run, or None while some session owns it."""
        with self._lock:
            since = self._orphaned_since
        return None if since is None else time.monotonic() - since

    def orphan_reason(self):
        """Why the chains must stop (no session has owned the run for ``self.grace`` s), or None."""
        with self._lock:
            since = self._orphaned_since
        if since is not None and time.monotonic() - since > self.grace:
            return "the page was closed or reloaded, so nobody could watch it any more"
        return None

    # -------------------------------------------------------------- watching (see RunRegistry.sweep)
    def watch(self):
        """A session of its owner has just drawn the run (the live view calls this on every redraw)."""
        with self._lock:
            self._watched = time.monotonic()

    def unwatched_for(self):
        """Seconds since a session of its owner last drew the run."""
        with self._lock:
            return time.monotonic() - self._watched

    # -------------------------------------------------------------- what it holds, and for how long
    def live_chains(self):
        """Chains that are ready, running or paused."""
        return sum(chain.state in LIVE_STATES for chain in self.chains.values())

    def remaining_cost(self):
        """Estimated core-seconds still to run: the run's cost times the share of its live chains' sweeps not done."""
        if not self.chains or not self.plan.iters:
            return 0.0
        left = sum(self.plan.iters - done for done, state, _ in (c.progress() for c in self.chains.values())
                   if state in LIVE_STATES)
        return self.cost * left / (len(self.chains) * self.plan.iters)

    def seconds_to_end(self):
        """Wall seconds until every live chain has finished at its present speed (its measured rate, else its
        pace, else the remaining cost spread over the cores); inf while a chain is paused or reclaimed."""
        if self.reclaimed:
            return math.inf
        worst = 0.0
        for chain in self.chains.values():
            done, state, rate = chain.progress()
            if state not in LIVE_STATES:
                continue
            if state == PAUSED:
                return math.inf
            rate = rate or chain.pace or 0.0
            left = self.plan.iters - done
            if rate > 0:
                worst = max(worst, left / rate)
            else:
                worst = max(worst, self.remaining_cost() / max(1, usable_cpus()))
        return worst

    # -------------------------------------------------------------- control
    def start(self, paused=False):
        for chain in self.chains.values():
            chain.start(paused=paused)

    def pause(self, wait=SETTLE_SECONDS):
        """Pause every chain and wait (at most ``wait`` s) until each has recorded its call in flight, so
        that what the page shows next is the sweep at which the chains stopped."""
        for chain in self.chains.values():
            chain.pause()
        self.wait_settled(wait)

    def resume(self):
        for chain in self.chains.values():
            chain.resume()

    def step_once(self, wait=SETTLE_SECONDS):
        """One sweep of every paused chain; waits (at most ``wait`` s) until each has recorded it. Returns,
        per chain, whether it took the step (False: not paused, or finished)."""
        taken = [chain.step_once() for chain in self.chains.values()]
        if wait and any(taken):
            self.wait_settled(wait)
        return taken

    def stop(self, reason, wait=SETTLE_SECONDS):
        """Stop every chain; wait (at most ``wait`` s; 0 = not at all) until none has a call in flight."""
        for chain in self.chains.values():
            chain.stop(reason)
        if wait:
            self.wait_settled(wait)

    def wait_settled(self, timeout=SETTLE_SECONDS):
        """Wait until no chain has a kernel call in flight, at most ``timeout`` s in all; True if none has."""
        deadline = time.monotonic() + timeout
        return all([chain.wait_settled(max(0.0, deadline - time.monotonic())) for chain in self.chains.values()])

    def set_pace(self, pace):
        for chain in self.chains.values():
            chain.pace = pace

    def join(self, timeout=None):
        for chain in self.chains.values():
            chain.join(timeout)

    def discard(self):
        """Free the buffers of every chain (the run has ended). A session that still refers to the run
        sees ``discarded`` and must let it go: Streamlit keeps a closed tab's session, and with it this
        object, for a while after the registry has forgotten the run."""
        with self._lock:
            if self._owners:  # a session came back in the meantime: it keeps the run
                return
            self.discarded = True
        for chain in self.chains.values():
            chain.discard()

    # -------------------------------------------------------------- reading
    @property
    def states(self):
        return {name: chain.state for name, chain in self.chains.items()}

    @property
    def live(self):
        return any(state in LIVE_STATES for state in self.states.values())

    @property
    def running(self):
        return any(state == RUNNING for state in self.states.values())

    def snapshots(self):
        return {name: chain.snapshot() for name, chain in self.chains.items()}

    def chain_set(self, group):
        """The chains of one prior as a :class:`pcrp.chains.ChainSet`, cut to the sweeps and kept draws
        that every one of them has (chains stopped or paused at different sweeps), or None before any
        draw is kept. Copies: safe to keep after the run goes on."""
        from ..chains import ChainSet

        chains = [self.chains[name] for name in self.groups[group]]
        snaps = [chain.snapshot() for chain in chains]
        done = min(s.sweeps_done for s in snaps)
        kept = min(len(s.kept) for s in snaps)
        if kept == 0:
            return None
        counts = np.stack([chain.sm_at_kept[:kept] for chain in chains])
        history = np.diff(counts, axis=1, prepend=0)
        return ChainSet(
            K=np.stack([s.K[:done] for s in snaps]).astype(np.int64),
            log_joint=np.stack([s.log_joint[:done] for s in snaps]),
            labels=np.stack([s.kept[:kept] for s in snaps]),
            kept_sweeps=self.plan.kept_sweeps[:kept].copy(),
            seconds_per_sweep=np.array([c.kernel_seconds / max(c.done, 1) for c in chains]),
            split_merge_stats=counts[:, -1].copy(),
            split_merge_history=history,
            config=dict(self.config["runs"][group]),
        )


CONTRASTING_STARTS = ("one", "random:20", "kmeans:10")


def contrasting_starts(first, n_chains):
    """Starts for ``n_chains`` chains of a prior: ``first`` for the chain that is animated, then starts
    unlike it (one cluster, many random clusters, k-means), so that start dependence shows."""
    others = [s for s in CONTRASTING_STARTS if s != first]
    return [first] + [others[i % len(others)] for i in range(n_chains - 1)]


def chain_name(group, index):
    """The name of chain ``index`` (0-based) of a prior: 'CRP', 'CRP · chain 2', ..."""
    return group if index == 0 else f"{group} · chain {index + 1}"


def live_specs(dataset, priors, niw, *, iters, burn_in, thin, seed, inits=("kmeans:10",), split_merge=True):
    """{name: :class:`pcrp.run_spec.RunSpec`} of a live run: one spec per prior {name: prior} on ``dataset.X``, all
    with the same NIW, fixed budget (``iters`` sweeps, ``burn_in``), thinning, starts (one chain per start) and
    seed. Raises SamplerError (or ModelError) naming a bad setting."""
    from ..run_spec import data_description, make_run_spec

    return {name: make_run_spec(dataset.X, prior=prior, niw=niw, n_chains=len(inits), init=list(inits), iters=iters,
                                burn_in=burn_in, thin=thin, seed=seed, split_merge=split_merge,
                                standardize=dataset.standardized, data=data_description(dataset))
            for name, prior in priors.items()}


def new_run(dataset, specs, *, config=None, budget=SESSION_BUDGET_BYTES):
    """A :class:`LiveRun` of the :class:`pcrp.run_spec.RunSpec` of each prior {name: spec}, all on ``dataset.X``
    with a fixed budget, the same NIW, starts and seed (chain c of every prior has the same start and seed), so the
    priors differ only in the seating rule. Each group's config is its spec with the schedule actually stored (the
    thinning may be raised to fit ``budget``). Not started yet. Raises SamplerError on bad settings."""
    first = next(iter(specs.values()))  # every spec has the same schedule, starts and seed (the page builds them)
    iters = first.budget.iters
    if iters is None:
        raise SamplerError("A live run needs a fixed number of sweeps (iters).")
    burn_in = first.budget.burn_in_at(iters)
    plan = plan_storage(dataset.n, iters, burn_in, first.thin, n_chains=sum(s.n_chains for s in specs.values()),
                        budget=budget)
    run = LiveRun(chains={}, dataset=dataset, niw=first.niw, config=dict(config or {}), plan=plan)
    run.config["runs"] = {}
    for group, spec in specs.items():
        run.groups[group] = []
        for c, (init, chain_seed) in enumerate(zip(spec.inits, spec.chain_seeds)):
            name = chain_name(group, c)
            run.groups[group].append(name)
            run.chains[name] = LiveChain(dataset.X, spec.prior, spec.niw, plan, seed=chain_seed, init=init,
                                         should_stop=run.orphan_reason, split_merge=spec.split_merge)
        run.config["runs"][group] = {**spec.as_dict(), "iters": plan.iters, "burn_in": plan.burn_in,
                                     "thin": plan.thin}
    run.config.update(thin=plan.thin, requested_thin=plan.requested_thin)
    run.cost = work_cost(dataset.n, dataset.X.shape[1], plan.iters, chains=len(run.chains))
    return run


# Chains that may be live at once on the server: 8 visitors running the Explorer's default comparison (CRP and
# pCRP, 2 chains each). They share COMPUTE_SLOTS, so more chains only slow each other; paced chains (the default
# 100 sweeps/s) use a small part of a core each.
MAX_LIVE_CHAINS = 8 * 2 * 2


@dataclass(frozen=True)
class Share:
    """How much of the server's live runs one visitor may hold at once: chains (ready, running or paused,
    reclaimed ones included) and estimated core-seconds still to run (:meth:`LiveRun.remaining_cost`)."""

    chains: int
    core_seconds: float


# One browser (its key) may hold the largest run the Explorer offers (2 priors x 4 chains), or two runs at the
# defaults; one network address half the pool, so that a visitor opening many windows without the cookie (each a
# new browser) leaves the other half to everybody else. Work: 30 core-minutes per browser (the Explorer's defaults
# on Old Faithful need about half a core-second), an hour per address.
SHARE_PER_BROWSER = Share(chains=8, core_seconds=1800.0)
SHARE_PER_ADDRESS = Share(chains=MAX_LIVE_CHAINS // 2, core_seconds=3600.0)
# A live run that none of its owner's sessions has drawn for this long (the page redraws it twice a second, and a
# browser's hidden tab still about once a minute) is reclaimed: paused, and its chains go back to the pool.
RECLAIM_SECONDS = 120.0


def visitor_address(ip):
    """The network address a visitor is counted under: an IPv4 address as it is, an IPv6 address by its /64
    network (one household or device gets a whole /64, so single IPv6 addresses cost nothing to change), and
    "local" when there is none (a direct connection from this machine, which Streamlit reports as no address,
    or a test harness)."""
    import ipaddress

    if not ip:
        return "local"
    try:
        address = ipaddress.ip_address(str(ip).strip())
    except ValueError:
        return str(ip)[:64]
    if address.version == 4:
        return str(address)
    if address.ipv4_mapped is not None:
        return str(address.ipv4_mapped)
    return str(ipaddress.ip_network(f"{address}/64", strict=False))


def share_settings(environ):
    """(RunRegistry keyword arguments, problems) from the server's environment: PCRP_MAX_CHAINS (the pool),
    PCRP_CHAINS_PER_BROWSER and PCRP_CHAINS_PER_ADDRESS, each a whole number >= 1; a bad value is ignored and
    named in ``problems`` (a list of sentences for the server's log)."""
    names = {"PCRP_MAX_CHAINS": "max_live_chains", "PCRP_CHAINS_PER_BROWSER": "per_browser",
             "PCRP_CHAINS_PER_ADDRESS": "per_address"}
    kwargs, problems = {}, []
    for name, key in names.items():
        text = environ.get(name)
        if text is None:
            continue
        try:
            value = int(text)
            if value < 1:
                raise ValueError
        except ValueError:
            problems.append(f"{name}={text!r} is not a whole number >= 1: ignored")
            continue
        if key == "max_live_chains":
            kwargs[key] = value
        else:
            default = SHARE_PER_BROWSER if key == "per_browser" else SHARE_PER_ADDRESS
            kwargs[key] = Share(chains=value, core_seconds=default.core_seconds)
    return kwargs, problems


def describe_wait(seconds):
    """A wait in words: 'about 40 s', 'about 12 min', 'about 3.5 h'."""
    if seconds < 90:
        return f"about {max(seconds, 5):,.0f} s"
    if seconds < 2 * 3600:
        return f"about {seconds / 60:,.0f} min"
    return f"about {seconds / 3600:,.1f} h"


class ServerBusy(RuntimeError):
    """A run that would exceed the server's pool of chains or its visitor's share, refused before it starts; the
    message says which limit, why it exists and when to try again. reason: "pool", "browser", "address" or
    "work"; retry_after: seconds until enough chains end at their present speed (inf: not by ending alone), or
    None when waiting does not help."""

    def __init__(self, message, reason="pool", retry_after=None):
        super().__init__(message)
        self.reason = reason
        self.retry_after = retry_after


class RunRegistry:
    """Every run of this server process, by token: for reloads, to share the live pool fairly, and to bound work
    and memory.

    max_live_chains: chains that may run (or wait paused) at once, over all sessions (reclaimed runs do not
    count); per_browser, per_address: each visitor's :class:`Share`, by browser key and by network address
    (:func:`visitor_address`); reclaim_seconds: a live run that none of its owner's sessions has drawn for this
    long is reclaimed (paused, its chains back in the pool, resumable by its owner through :meth:`readmit`), and
    stopped when still unwatched after ttl_seconds;
    budget_bytes: memory of the runs kept for reload; finished runs beyond it, or older than
    ttl_seconds, are forgotten (oldest first); so is a finished run that no session has owned for
    reload_seconds (a reload comes back within seconds; the session itself, should its browser
    reconnect, still holds its run). A background thread forgets and reclaims them even when nobody visits; it
    ends when no run is left. Thread-safe.
    """

    def __init__(self, max_live_chains=MAX_LIVE_CHAINS, budget_bytes=1024 * 2**20, ttl_seconds=2 * 3600,
                 reload_seconds=RELOAD_SECONDS, per_browser=SHARE_PER_BROWSER, per_address=SHARE_PER_ADDRESS,
                 reclaim_seconds=RECLAIM_SECONDS):
        self.max_live_chains = max_live_chains
        self.budget_bytes = budget_bytes
        self.ttl_seconds = ttl_seconds
        self.reload_seconds = reload_seconds
        self.per_browser = per_browser
        self.per_address = per_address
        self.reclaim_seconds = reclaim_seconds
        self._runs = OrderedDict()
        self._lock = threading.Lock()
        self._janitor = None

    # -------------------------------------------------------------- counting (lock held)
    def _pooled(self, skip=()):
        """Runs whose live chains count in the pool: live and not reclaimed."""
        return [r for r in self._runs.values() if r.token not in skip and not r.reclaimed and r.live]

    def _held(self, field_name, value, skip=()):
        """Live runs (reclaimed ones included) of one visitor, by browser key or by address."""
        return [r for r in self._runs.values() if r.token not in skip and r.live and getattr(r, field_name) == value]

    def live_chains(self):
        """Chains counted in the pool now."""
        with self._lock:
            return sum(r.live_chains() for r in self._pooled())

    @staticmethod
    def _when_free(runs, in_use, limit, needed):
        """Seconds until ``needed`` more chains fit under ``limit`` as ``runs`` (holding ``in_use``) end at their
        present speed; inf when ending alone never frees enough (paused runs)."""
        free = limit - in_use
        for seconds, chains in sorted((r.seconds_to_end(), r.live_chains()) for r in runs):
            if free >= needed:
                break
            free += chains
            if free >= needed:
                return seconds
        return 0.0 if free >= needed else math.inf

    def _when_text(self, seconds, what):
        if math.isinf(seconds):
            return (f"None of {what} is due to end soon (some are paused): try again in a few minutes. A run that "
                    f"nobody watches for {self.reclaim_seconds / 60:g} minutes gives its chains back.")
        return f"At their present speed enough of {what} end in {describe_wait(seconds)}: try again then."

    def _check_share(self, run, skip):
        """Raise ServerBusy when ``run`` would exceed its browser's or its address's share (lock held)."""
        needed = len(run.chains)
        for field_name, share, who in (("browser", self.per_browser, "browser"),
                                       ("address", self.per_address, "address")):
            value = getattr(run, field_name)
            if share is None or value is None:
                continue
            held = self._held(field_name, value, skip)
            chains = sum(r.live_chains() for r in held)
            cost = sum(r.remaining_cost() for r in held)
            if who == "browser":
                mine = "This browser's other tabs already run"
                why = "one browser may hold at most"
                stop = " Or stop a run in another tab of this browser."
                nat = ""
            else:
                mine = "Visitors from your network address already run"
                why = "one network address may hold at most"
                stop = ""
                nat = (" (If many of you share one address, as a classroom behind one router may, whoever runs this "
                       "server can raise this limit.)")
            if run.cost > share.core_seconds:
                raise ServerBusy(
                    f"This run needs about {describe_seconds(run.cost)} of sampling "
                    f"({describe_work(run.dataset.n, run.dataset.X.shape[1], run.plan.iters, needed)}), more than "
                    f"the {describe_seconds(share.core_seconds)} of live runs {why} at once on this server. Use "
                    "fewer sweeps, chains or points, or run it with the command line (`pcrp run`), which has no "
                    "such limit.", reason="work")
            if cost + run.cost > share.core_seconds:
                wait = self._when_free_cost(held, cost, share.core_seconds, run.cost)
                raise ServerBusy(
                    f"{mine} about {describe_seconds(cost)} of sampling, and {why} "
                    f"{describe_seconds(share.core_seconds)} at once on this server; this run needs about "
                    f"{describe_seconds(run.cost)}. " + self._when_text(wait, "those runs") + stop + nat,
                    reason=who, retry_after=wait)
            if chains + needed > share.chains:
                wait = self._when_free(held, chains, share.chains, needed)
                raise ServerBusy(
                    f"{mine} {chains} chains, and {why} {share.chains} of this server's {self.max_live_chains} at "
                    f"once, so that other visitors can start too; this run needs {needed}. "
                    + self._when_text(wait, "those runs") + stop + nat, reason=who, retry_after=wait)

    @staticmethod
    def _when_free_cost(runs, held, limit, needed):
        """Like _when_free, for estimated core-seconds."""
        free = limit - held
        for seconds, cost in sorted((r.seconds_to_end(), r.remaining_cost()) for r in runs):
            free += cost
            if free >= needed:
                return seconds
        return math.inf

    def _check_pool(self, needed, skip=()):
        """Raise ServerBusy when ``needed`` more chains do not fit in the pool (lock held)."""
        pooled = self._pooled(skip)
        live = sum(r.live_chains() for r in pooled)
        if live + needed > self.max_live_chains:
            visitors = len({r.browser or r.token for r in pooled})
            wait = self._when_free(pooled, live, self.max_live_chains, needed)
            fewer = (" A run with fewer chains (Chains per prior) may fit now."
                     if 0 < self.max_live_chains - live < needed else "")
            raise ServerBusy(
                f"This server is already running {live} chains for {visitors} visitor(s), and it runs at most "
                f"{self.max_live_chains} at once; this run needs {needed}. " + self._when_text(wait, "them") + fewer,
                reason="pool", retry_after=wait)

    # -------------------------------------------------------------- admitting runs
    def add(self, run, replacing=None):
        """Register a new run; raises ServerBusy (reserving nothing) when it would exceed its browser's or its
        address's share or the pool. ``replacing``: the run this one replaces (the page stops it once this one is
        added): it is not counted."""
        skip = {replacing.token} if replacing is not None else set()
        with self._lock:
            self._check_share(run, skip)
            self._check_pool(len(run.chains), skip)
            run.watch()
            self._runs[run.token] = run
            self._evict()
            self._start_janitor()

    def readmit(self, run):
        """Give a reclaimed run its chains back and resume it (its owner pressed Resume); raises ServerBusy when
        the pool has no room for them now. The run already counts in its visitor's share."""
        with self._lock:
            if run.reclaimed:
                self._check_pool(run.live_chains(), skip={run.token})
                run.reclaimed = False
            run.watch()
        run.resume()

    def _start_janitor(self):
        if self._janitor is None:
            self._janitor = threading.Thread(target=self._sweep, daemon=True, name="pcrp-run-janitor")
            self._janitor.start()

    def _sweep(self):
        while True:
            time.sleep(min(10.0, self.reload_seconds / 4, self.reclaim_seconds / 4))
            if not self.sweep():  # nothing left to forget: the next add starts a new sweep
                return

    def sweep(self):
        """Forget what is due (see :meth:`_evict`), reclaim runs nobody has watched for reclaim_seconds and stop
        reclaimed runs still unwatched after ttl_seconds; returns whether any run is left. The janitor thread
        calls this every few seconds."""
        with self._lock:
            self._evict()
            for run in list(self._runs.values()):
                if not run.live:
                    continue
                unwatched = run.unwatched_for()
                if run.reclaimed and unwatched > self.ttl_seconds:
                    run.stop(f"nobody watched it for {self.ttl_seconds / 3600:g} hours", wait=0)
                elif not run.reclaimed and unwatched > self.reclaim_seconds:
                    run.reclaimed = True
                    run.pause(wait=0)
                    LOG.info("reclaimed a run nobody watched for %.0f s", unwatched)
            if not self._runs:
                self._janitor = None
                return False
            return True

    def get(self, token):
        with self._lock:
            run = self._runs.get(str(token))
            if run is not None:
                self._runs.move_to_end(run.token)
            return run

    def latest_for(self, browser):
        """The newest run that the browser with key ``browser`` started and this server still keeps, or
        None: how that browser's reload finds its run again. The key is a per-browser secret, issued and
        signed by this server (pcrp.app.browser_keys), that never appears in an address, so a projected or
        bookmarked address grants nothing."""
        if not browser:
            return None
        with self._lock:
            runs = [run for run in self._runs.values() if run.browser == browser and not run.discarded]
            return max(runs, key=lambda run: run.created, default=None)

    def _evict(self):
        now = time.time()
        total = sum(r.plan.bytes for r in self._runs.values())
        for token in list(self._runs):
            run = self._runs[token]
            if run.live:
                continue
            orphaned = run.orphaned_for()
            if total > self.budget_bytes or now - run.created > self.ttl_seconds or \
                    (orphaned is not None and orphaned > self.reload_seconds):
                total -= run.plan.bytes
                del self._runs[token]
                if orphaned is not None:  # no page shows it: free its memory now
                    run.discard()

    def __len__(self):
        with self._lock:
            return len(self._runs)


class SessionOwner:
    """One browser session's claim on runs: the app adopts its run through this on every script
    run, and :meth:`release_all` (called when the session disconnects) lets the runs' chains stop
    after the grace period unless the session comes back."""

    def __init__(self):
        self.id = secrets.token_hex(8)
        self._runs = {}
        self._lock = threading.Lock()

    def adopt(self, run):
        run.adopt(self.id)
        with self._lock:
            self._runs[run.token] = run

    def release_all(self):
        with self._lock:
            runs = list(self._runs.values())
            self._runs.clear()
        for run in runs:
            run.release(self.id)

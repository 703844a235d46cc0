"""One chain in a background thread that can be watched, paused, stepped and stopped: the live app's engine.

Nothing here knows about Streamlit. A :class:`LiveChain` runs chain ``c`` of a :class:`pcrp.runs.run_spec.RunSpec` (its
prior, NIW, start, seed and moves) in its own thread. The thread only calls :meth:`pcrp.sampling.sampler.Sampler.step` (numba
kernels release the GIL) and writes into the buffers its :class:`pcrp.app.live_storage.StoragePlan` fixed, under a
lock; readers take :meth:`LiveChain.snapshot`, whose arrays are views of the parts already written (never copies of
the whole history). Kernel calls of all chains share ``COMPUTE_SLOTS``, one per core.
"""

import functools
import logging
import threading
import time
from collections import deque
from dataclasses import dataclass

import numpy as np

from ..sampling.compute import COMPUTE_SLOTS, lower_thread_priority
from ..basics.dtypes import label_dtype
from ..sampling.sampler import Sampler
from .live_storage import SPLIT_MERGE_COUNTS

LOG = logging.getLogger(__name__)

TARGET_CALL_SECONDS = 0.05  # kernel call length at full speed: pause/stop act within about this
# (each call needs the GIL a few times, and a busy server holds it: longer calls lose less; but the live view shows
# new sweeps only when a call ends, and at 0.1 s with more chains than cores its status line changed less than
# 10 times a second: docs/records/live_canvas.md)
# At a pace, a call takes this long's worth of sweeps (a few ms of computing at the Explorer's defaults): the page shows
# a chain's sweeps once a frame (FRAME_SECONDS apart) and counts them up in between, so calls closer together show
# nothing more, while each costs the server's Python a few hundred microseconds of bookkeeping. At 0.05 s, 160 chains
# at 100 sweeps/s made 3,200 calls a second, whose bookkeeping took most of the interpreter's time from the pages
# (bench/load_client.py, 60 visitors). Pause, Stop and One sweep do not wait for the pace: they wake the chain.
PACED_CALL_SECONDS = 0.25
RATE_WINDOW_SECONDS = 3.0  # sweeps/s and time left come from wall-clock progress over this window
SETTLE_SECONDS = 2.0  # Pause and Stop wait at most this long for a kernel call in flight to end


# Kernel calls of all live chains of the process (and of every visitor's cross-validation fits) share
# pcrp.sampling.compute.COMPUTE_SLOTS, one per usable core. Chains beyond that wait their turn (first come, first served)
# between calls instead of all being runnable at once: with 16 chains on 2 cores, the operating system otherwise
# preempted threads while they held the GIL and the web server's event loop answered after seconds
# (bench/load_test.py). The cores bound the chains' total speed either way; the slots only decide which
# chains use them.

# Chain states
READY, RUNNING, PAUSED, FINISHED, STOPPED, FAILED = "ready", "running", "paused", "finished", "stopped", "failed"
LIVE_STATES = (READY, RUNNING, PAUSED)

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

    def __init__(self, X, spec, chain, plan, *, should_stop=None):
        """Chain ``chain`` (0-based) of ``spec`` (a :class:`pcrp.runs.run_spec.RunSpec`) on X (N, d), storing what
        ``plan`` (its :class:`pcrp.app.live_storage.StoragePlan`) fixes."""
        self.sampler = Sampler(X, spec.prior, spec.niw, split_merge=spec.split_merge, init=spec.inits[chain],
                               seed=spec.chain_seeds[chain])
        self.prior = spec.prior
        self.plan = plan
        n = X.shape[0]
        dtype = label_dtype(n)
        self.K = np.zeros(plan.iters, dtype=np.int64)  # as a batch chain's record
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
        # unknown until the first call: that call is one sweep (a guess of 1 ms made the first call at N = 100,000
        # 100 sweeps, seconds long, and Stop waited SETTLE_SECONDS for it: docs/records/live_canvas.md)
        self._sweep_seconds = float("inf")
        self.kernel_seconds = 0.0
        self.sm_at_kept = np.zeros((plan.kept_sweeps.size, SPLIT_MERGE_COUNTS), dtype=np.int64)  # split-merge totals per kept draw
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
    def started(self):
        return self._thread is not None

    @property
    def alive(self):
        return self._thread is not None and self._thread.is_alive()

    # ------------------------------------------------------------------ the thread
    def _chunk(self):
        if self._steps_requested:
            return 1
        if self.pace:
            return max(1, int(self.pace * PACED_CALL_SECONDS))
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
                # a step that a visitor's press waits for (One sweep) goes before the chains that wait their turn
                if not COMPUTE_SLOTS.acquire(give_up=functools.partial(self._slot_not_needed, stepping),
                                             first=stepping):
                    continue  # a stop, pause or the owner's absence came while waiting for a slot
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

    def _slot_not_needed(self, stepping):
        """(Asked while waiting for a compute slot.) True when the chain must not sample now: a stop or a pause
        (unless a step is owed) came, or the run's owner has gone."""
        return self._stop_requested or (self._paused and not stepping) or bool(self._should_stop())

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
            self.sm_at_kept[kept_rows[is_kept]] = info.kept_moves[is_kept]
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


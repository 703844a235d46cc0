"""A chain that runs in a background thread and can be watched: for the live app.

The thread only calls :meth:`Sampler.step` (numba kernels release the GIL) and
stores results under a lock; readers take :meth:`LiveChain.snapshot`. Nothing
here knows about Streamlit. A chain whose watcher stops calling
:meth:`touch` (a closed browser tab) stops itself after ``orphan_seconds``.
"""

import threading
import time
from dataclasses import dataclass

import numpy as np

from .sampler import Sampler

# Sweeps per kernel call when running flat out: small enough that pause and
# stop act within a fraction of a second, large enough that call overhead is
# negligible (see bench/streaming_overhead.py).
TARGET_CALL_SECONDS = 0.05


@dataclass
class Snapshot:
    """What a watcher sees: copies, safe to use while the chain runs on.

    K, log_joint: (sweeps_done,) traces; labels: (N,) current labels;
    kept: (n_kept, N) label draws after burn-in (every thin-th sweep).
    """

    sweeps_done: int
    total_sweeps: int
    K: np.ndarray
    log_joint: np.ndarray
    labels: np.ndarray
    kept: np.ndarray
    state: str
    sweeps_per_second: float
    error: str = ""

    @property
    def seconds_left(self):
        if self.sweeps_per_second <= 0:
            return float("nan")
        return (self.total_sweeps - self.sweeps_done) / self.sweeps_per_second


class LiveChain:
    """One sampler in a thread. States: ready -> running <-> paused -> finished | stopped.

    delay: seconds to wait between calls (a teacher's slow motion); with a delay each call is one sweep.
    """

    def __init__(self, X, prior, niw, *, iters, burn_in, thin, seed, split_merge=True, init="kmeans:10",
                 orphan_seconds=60.0):
        self.sampler = Sampler(X, prior, niw, split_merge=split_merge, init=init, seed=seed)
        self.iters, self.burn_in, self.thin = int(iters), int(burn_in), int(thin)
        self.K = np.zeros(self.iters, dtype=np.int64)
        self.log_joint = np.zeros(self.iters)
        self.kept = []
        self.done = 0
        self.delay = 0.0
        self.state = "ready"
        self.error = ""
        self.orphan_seconds = orphan_seconds
        self._lock = threading.Lock()
        self._resume = threading.Event()
        self._stop = threading.Event()
        self._thread = None
        self._last_touch = time.monotonic()
        self._rate = 0.0
        self._sweep_seconds = 1e-3
        self._labels = self.sampler.labels.copy()
        self.started_at = self.ended_at = None  # perf_counter() at thread start / end

    def start(self):
        if self._thread is None:
            self.state = "running"
            self._resume.set()
            self._thread = threading.Thread(target=self._loop, daemon=True, name="pcrp-chain")
            self._thread.start()

    def pause(self):
        if self.state == "running":
            self._resume.clear()
            self.state = "paused"

    def resume(self):
        if self.state == "paused":
            self.state = "running"
            self._resume.set()

    def stop(self):
        self._stop.set()
        self._resume.set()
        if self.state in ("running", "paused", "ready"):
            self.state = "stopped"

    def join(self, timeout=None):
        if self._thread is not None:
            self._thread.join(timeout)

    def touch(self):
        """Called by the watcher on every redraw; a chain nobody watches stops itself."""
        self._last_touch = time.monotonic()

    @property
    def alive(self):
        return self._thread is not None and self._thread.is_alive()

    def _loop(self):
        self.started_at = time.perf_counter()
        try:
            while self.done < self.iters and not self._stop.is_set():
                self._resume.wait()
                if self._stop.is_set():
                    break
                if time.monotonic() - self._last_touch > self.orphan_seconds:
                    self.state = "stopped"
                    self.error = "stopped: nobody was watching"
                    break
                if self.delay > 0:
                    n = 1
                else:
                    n = max(1, int(TARGET_CALL_SECONDS / max(self._sweep_seconds, 1e-7)))
                next_keep = self._next_keep()
                if next_keep is not None:
                    n = min(n, next_keep - self.done)
                n = min(n, self.iters - self.done)
                start = time.perf_counter()
                info = self.sampler.step(n)
                elapsed = time.perf_counter() - start
                self._sweep_seconds = max(info.seconds / n, 1e-7)
                with self._lock:
                    self.K[self.done:self.done + n] = info.K
                    self.log_joint[self.done:self.done + n] = info.log_joint
                    self.done += n
                    if next_keep is not None and self.done == next_keep:
                        self.kept.append(self.sampler.labels.copy())
                    self._labels = self.sampler.labels.copy()
                    self._rate = n / elapsed if elapsed > 0 else 0.0
                if self.delay > 0:
                    self._stop.wait(self.delay)
            if self.done >= self.iters:
                self.state = "finished"
            self.ended_at = time.perf_counter()
        except Exception as err:  # surfaced to the page, never a traceback there
            self.state = "failed"
            self.error = f"{type(err).__name__}: {err}"

    def _next_keep(self):
        first = self.burn_in + self.thin
        if self.done < first:
            return first
        k = (self.done - self.burn_in) // self.thin + 1
        nxt = self.burn_in + k * self.thin
        return nxt if nxt <= self.iters else None

    def snapshot(self):
        with self._lock:
            labels = self._labels
            kept = np.array(self.kept) if self.kept else np.zeros((0, labels.size), dtype=np.int64)
            rate = self._rate if self.state == "running" else 0.0
            return Snapshot(
                sweeps_done=self.done, total_sweeps=self.iters, K=self.K[:self.done].copy(),
                log_joint=self.log_joint[:self.done].copy(), labels=labels, kept=kept, state=self.state,
                sweeps_per_second=rate, error=self.error,
            )

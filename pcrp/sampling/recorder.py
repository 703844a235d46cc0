"""One chain's record: :class:`Chain` (what a run keeps of a chain) and :class:`ChainRecorder` (the driver of a
batch chain: its sampler, its traces and the label draws it is asked to keep)."""

from dataclasses import dataclass, field

import numpy as np

from . import compute


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
            sm_out[n_kept:n_kept + new] = info.kept_moves
            n_kept += new
            self.kernel_seconds += info.seconds
            chunk = int(min(CALL_SWEEPS, max(1, seconds_per_call * (target - self.done) / max(info.seconds, 1e-9))))
            self.done = target
            if callback is not None:
                callback(self.done)
        return n_kept

"""What a live run stores, fixed before it starts, from its :class:`pcrp.runs.run_spec.RunSpec` and that spec's one memory
plan (:func:`pcrp.runs.memory_plan.run_memory_plan`).

A live run of C chains holds, per chain, the record a batch run holds (K and the log joint at every sweep and the
kept label draws: ``spec.memory.parts["draws"]``), and what only a live view needs: up to ``REPLAY_FRAMES`` states for
replay (fewer when they would take more than half the budget), the split-merge counts at each kept draw and two
copies of the current labels. All chains of a run (every prior's) share ``SESSION_BUDGET_BYTES``; when the kept draws
would exceed it, the thinning is raised (the spec is rebuilt with it, so a run's config is its spec) and the plan
says so.
"""

import math
from dataclasses import dataclass

import numpy as np

from ..basics.dtypes import record_bytes
from ..basics.errors import SamplerError
from ..sampling.recorder import keep_schedule
SESSION_BUDGET_BYTES = 200 * 2**20  # every buffer of one run (all its chains)
REPLAY_FRAMES = 200  # states kept for replay, spread evenly over the run
SPLIT_MERGE_COUNTS = 4  # int64 split-merge totals stored with each kept draw (proposed and accepted splits, merges)


@dataclass(frozen=True)
class StoragePlan:
    """What one run stores, fixed before it starts.

    spec: the :class:`pcrp.runs.run_spec.RunSpec` of one prior's chains with the thinning stored (at least the requested
    one, raised to fit the budget); iters, burn_in, thin: its schedule; n_chains: chains of the whole run (every
    prior's); kept_sweeps (n_kept,) and replay_sweeps (n_frames,): 1-based sweeps whose labels are stored; bytes: the
    memory of every buffer of all chains; budget: the bytes allowed.
    """

    spec: object
    requested_thin: int
    n_chains: int
    kept_sweeps: np.ndarray
    replay_sweeps: np.ndarray
    bytes: int
    budget: int

    @property
    def iters(self):
        return self.spec.budget.iters

    @property
    def burn_in(self):
        return self.spec.budget.burn_in_at(self.iters)

    @property
    def thin(self):
        return self.spec.thin

    @property
    def n_points(self):
        return self.spec.n_points

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


def _live_extras(n_points, n_frames, n_kept):
    """Bytes one live chain holds beyond a batch chain's record: replay frames, the split-merge counts of each kept
    draw and two copies of the current labels."""
    per_draw = record_bytes(n_points, 0, 1)
    return (n_frames + 2) * per_draw + n_kept * SPLIT_MERGE_COUNTS * 8


def plan_storage(spec, n_chains=None, budget=SESSION_BUDGET_BYTES):
    """The :class:`StoragePlan` of a live run whose chains follow ``spec`` (a RunSpec with a fixed budget):
    ``n_chains`` chains in all (default the spec's; a run of two priors has twice as many), within ``budget`` bytes.

    Raises SamplerError for an automatic budget, or when even one kept draw per chain does not fit.
    """
    if spec.budget.auto:
        raise SamplerError("A live run needs a fixed number of sweeps (iters).")
    n_chains = spec.n_chains if n_chains is None else int(n_chains)
    n, iters = spec.n_points, spec.budget.iters
    burn_in = spec.budget.burn_in_at(iters)
    per_draw = record_bytes(n, 0, 1)
    # replay frames take at most half the budget (200 frames of 100,000 labels in 4 chains would take 320 MB):
    # fewer frames for large data, at least 2
    frames = int(min(REPLAY_FRAMES, iters, max(2, (budget // 2) // (n_chains * per_draw))))
    replay_sweeps = np.unique(np.linspace(1, iters, frames).round().astype(np.int64))
    room = budget - n_chains * (record_bytes(n, iters, 0) + _live_extras(n, replay_sweeps.size, 0))
    per_kept = record_bytes(n, 0, 1) + _live_extras(n, 0, 1) - _live_extras(n, 0, 0)
    fits = room // (n_chains * per_kept) if room > 0 else 0
    if fits < 1:
        raise SamplerError(
            f"A run of {iters:,} sweeps on {n:,} points needs more than this session's memory budget of "
            f"{budget / 2**20:.0f} MiB just for its traces: use fewer sweeps.")
    thin = spec.thin
    if keep_schedule(iters, burn_in, thin).size > fits:
        thin = max(thin, math.ceil((iters - burn_in) / fits))
        while keep_schedule(iters, burn_in, thin).size > fits:
            thin += 1
    stored = spec if thin == spec.thin else spec.replace(thin=thin)
    kept = keep_schedule(iters, burn_in, thin)
    # the spec's own memory plan counts each chain's record (traces and kept draws); the live extras are added
    draws = stored.memory.parts["draws"] * n_chains // stored.n_chains
    total = draws + n_chains * _live_extras(n, replay_sweeps.size, kept.size)
    return StoragePlan(stored, spec.thin, n_chains, kept, replay_sweeps, int(total), int(budget))

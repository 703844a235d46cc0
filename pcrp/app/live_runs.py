"""A live run: one press of Start, the chains of each row's prior on the same data, settings and seed.

Nothing here knows about Streamlit. A :class:`LiveRun` holds one :class:`pcrp.app.live_chain.LiveChain` per chain of
each prior's :class:`pcrp.runs.run_spec.RunSpec` (:func:`live_specs` builds them; the specs are the run's description and
its config), and one :class:`pcrp.app.live_storage.StoragePlan` fixed from them before it starts.

Lifetime. A run belongs to the sessions that :meth:`LiveRun.adopt` it (the app adopts it on every script run of the
browser session that started or reloaded it). When the last owner releases it (the session disconnected: tab closed,
reload, network lost), its chains stop after ``ORPHAN_GRACE_SECONDS`` unless an owner adopts it again first (a
reconnect, or the reloaded page); paused chains too. A finished run that no session has owned for ``RELOAD_SECONDS``
is forgotten by the :class:`pcrp.app.fair_share.RunRegistry` and its buffers freed. Nothing depends on how often the
page redraws.
"""

import math
import secrets
import threading
import time
from dataclasses import dataclass, field

import numpy as np

from ..sampling.compute import usable_cpus, work_cost
from ..basics.errors import SamplerError
from .live_chain import LIVE_STATES, PAUSED, RUNNING, SETTLE_SECONDS, LiveChain
from .live_storage import SESSION_BUDGET_BYTES, StoragePlan, plan_storage

ORPHAN_GRACE_SECONDS = 5.0  # a run with no session stops this long after its last session left
# ... and is forgotten (its buffers freed) this long after: a reloaded page finds it until then. A reload comes back
# within seconds; a closed tab's memory is free within about half a minute (bench/load_client.py measures it).
RELOAD_SECONDS = 20.0


@dataclass
class LiveRun:
    """One press of Start: named chains on the same data, settings and seed.

    dataset: the pcrp.data.Dataset the chains run on; config: every resolved setting (JSON-ready);
    token: an unguessable id, the run's name inside this server (never shown, never in an address);
    browser: the key of the browser that started it (see :meth:`RunRegistry.latest_for`), or None;
    address: the network address it came from, as :func:`visitor_address` groups it, or None;
    cost: its estimated core-seconds of sampling (:func:`pcrp.sampling.compute.work_cost`), counted in its browser's share.
    The registry (:class:`pcrp.app.fair_share.RunRegistry`) starts it when the server has a place for it, else it
    waits ``queued`` and starts by itself. A run that none of its owner's sessions has drawn for RECLAIM_SECONDS is
    reclaimed by the registry: paused, its place given to the queue, and only its owner's Resume
    (:meth:`RunRegistry.readmit`) brings it back.
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
    reclaimed: bool = False  # paused by the registry because nobody watched it; its place went to the queue
    queued: bool = False  # waiting in the registry's queue for a place (not started, or reclaimed and resumed)
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
        """A session of its owner has just drawn the run (the live view calls this on every redraw, and the
        registry when it admits or queues the run)."""
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

    @property
    def started(self):
        """Whether its chains' threads were started (a queued run's are not, until it gets a place)."""
        return any(chain.started for chain in self.chains.values())

    def snapshots(self):
        return {name: chain.snapshot() for name, chain in self.chains.items()}

    def chain_set(self, group):
        """The chains of one prior as a :class:`pcrp.runs.chains.ChainSet`, cut to the sweeps and kept draws
        that every one of them has (chains stopped or paused at different sweeps), or None before any
        draw is kept. Copies: safe to keep after the run goes on."""
        from ..runs.chains import ChainSet

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
    """{name: :class:`pcrp.runs.run_spec.RunSpec`} of a live run: one spec per prior {name: prior} on ``dataset.X``, all
    with the same NIW, fixed budget (``iters`` sweeps, ``burn_in``), thinning, starts (one chain per start) and
    seed. Raises SamplerError (or ModelError) naming a bad setting."""
    from ..runs.run_spec import data_description, make_run_spec

    return {name: make_run_spec(dataset.X, prior=prior, niw=niw, n_chains=len(inits), init=list(inits), iters=iters,
                                burn_in=burn_in, thin=thin, seed=seed, split_merge=split_merge,
                                standardize=dataset.standardized, data=data_description(dataset))
            for name, prior in priors.items()}


def new_run(dataset, specs, *, config=None, budget=SESSION_BUDGET_BYTES):
    """A :class:`LiveRun` of the :class:`pcrp.runs.run_spec.RunSpec` of each prior {name: spec}, all on ``dataset.X`` with
    the same fixed schedule, NIW, starts and seed (chain c of every prior has the same start and seed), so the priors
    differ only in the seating rule. Its storage plan comes from the specs (:func:`plan_storage`); each group's config
    is its spec as stored (with the thinning raised when the kept draws would exceed ``budget``). Not started yet.
    Raises SamplerError on bad settings."""
    first = next(iter(specs.values()))
    schedules = {(s.budget.iters, s.budget.burn_in_at(s.budget.iters) if s.budget.iters else None, s.thin)
                 for s in specs.values()}
    if len(schedules) > 1:
        raise SamplerError("The priors of a live run share one schedule (sweeps, burn-in and thinning); "
                           f"got {sorted(schedules)}.")
    plan = plan_storage(first, n_chains=sum(s.n_chains for s in specs.values()), budget=budget)
    run = LiveRun(chains={}, dataset=dataset, niw=first.niw, config=dict(config or {}), plan=plan)
    run.config["runs"] = {}
    for group, spec in specs.items():
        spec = spec if spec.thin == plan.thin else spec.replace(thin=plan.thin)
        run.groups[group] = [chain_name(group, c) for c in range(spec.n_chains)]
        for c, name in enumerate(run.groups[group]):
            run.chains[name] = LiveChain(dataset.X, spec, c, plan, should_stop=run.orphan_reason)
        run.config["runs"][group] = spec.as_dict()
    run.config.update(thin=plan.thin, requested_thin=plan.requested_thin)
    run.cost = work_cost(dataset.n, dataset.X.shape[1], plan.iters, chains=len(run.chains))
    return run

"""The live engine (pcrp.app.live_runs): what a run stores, that it records exactly the batch chain, and
that its threads end when they should (Stop, Reset, a closed tab) and never for redraw timing."""

import os
import threading
import time

import numpy as np
import pytest

from pcrp.app import live_chain, live_runs as live, live_storage
from pcrp.app.fair_share import RunRegistry, SessionOwner
from pcrp.app.live_chain import FAILED, FINISHED, PAUSED, RUNNING, STOPPED, LiveChain
from pcrp.app.live_runs import live_specs, new_run
from pcrp.app.live_storage import REPLAY_FRAMES, SESSION_BUDGET_BYTES, plan_storage
from pcrp.runs.budget import Budget
from pcrp.sampling.compute import BACKGROUND_NICE, FairSlots
from pcrp.data import simulation
from pcrp.model import CRP, NIW, PowerCRP, make_prior, resolve_niw
from pcrp.runs.chains import run_chain as run
from pcrp.runs.run_spec import RunSpec, make_run_spec
from pcrp.basics.errors import SamplerError
from pcrp.basics.dtypes import label_dtype
def wait_until(condition, seconds=30.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return False


@pytest.fixture
def ds():
    return simulation("sim2", n=120, seed=3)


def spec_of(n_points, iters, burn_in, thin):
    """The RunSpec of one chain of a live run's schedule on ``n_points`` points (what a storage plan reads)."""
    return RunSpec(prior=make_prior("crp"), niw=NIW(m0=[0.0], kappa0=0.25, nu0=4.0, S0=1.0), n_points=n_points,
                   dim=1, n_chains=1, inits=("kmeans:10",), budget=Budget(iters=iters, burn_in=burn_in), thin=thin,
                   seed=0)


def small_run(ds, iters=200, burn_in=50, thin=5, inits=("kmeans:10",), **kwargs):
    priors = {"CRP": CRP(1.0), "pCRP": PowerCRP(1.0, 1.3)}
    specs = live_specs(ds, priors, resolve_niw(ds.X), iters=iters, burn_in=burn_in, thin=thin, seed=4, inits=inits)
    return new_run(ds, specs, **kwargs)


# ----------------------------------------------------------------------------- memory plan
def test_plan_keeps_the_requested_thin_when_it_fits():
    plan = plan_storage(spec_of(272, 2000, 500, 5), n_chains=2)
    assert plan.thin == 5 and not plan.thin_raised
    assert plan.kept_sweeps.tolist() == list(range(505, 2001, 5))
    assert plan.bytes < 2**20


def test_plan_raises_thin_to_stay_within_the_budget():
    """The issue's case: N = 10,000, thin 1, 100,000 sweeps would keep 100,000 draws of 10,000 labels
    per chain (2 GB as int16, 8 GB as int64); the plan keeps what fits in the session budget."""
    plan = plan_storage(spec_of(10_000, 100_000, 0, 1), n_chains=2)
    assert plan.thin_raised and plan.bytes <= SESSION_BUDGET_BYTES
    per_draw = 10_000 * label_dtype(10_000).itemsize
    assert plan.kept_sweeps.size * per_draw * 2 <= SESSION_BUDGET_BYTES
    # and not wastefully: one step less thinning would not fit
    looser = np.arange(plan.thin - 1, 100_001, plan.thin - 1).size
    assert plan.bytes + 2 * (looser - plan.kept_sweeps.size) * per_draw > SESSION_BUDGET_BYTES
    assert "Thinning raised from 1 to" in plan.describe()


def test_a_runs_config_is_its_spec_with_the_thinning_it_stored(ds):
    """A live run is described by its RunSpecs: when the budget raises the thinning, each prior's config is the spec
    rebuilt with it (budget, schedule and memory plan agree), and RunSpec.from_dict rebuilds that spec."""
    r = small_run(ds, iters=20_000, burn_in=0, thin=1, budget=2 * 2**20)
    assert r.plan.thin_raised
    for config in r.config["runs"].values():
        assert config["thin"] == config["budget"]["thin"] == r.plan.thin
        assert RunSpec.from_dict(config).thin == r.plan.thin
    spec = r.plan.spec
    assert spec.thin == r.plan.thin  # the memory plan of the spec as stored counts every chain's record:
    assert r.plan.bytes >= r.plan.n_chains * spec.memory.parts["draws"] // spec.n_chains


def test_plan_refuses_a_run_whose_traces_alone_do_not_fit():
    with pytest.raises(SamplerError, match="memory budget"):
        plan_storage(spec_of(100, 10_000_000, 0, 1), n_chains=2, budget=10 * 2**20)


def test_chain_buffers_are_allocated_once_with_compact_labels(ds):
    r = small_run(ds, iters=100_000, burn_in=0, thin=1)
    chain = r.chains["CRP"]
    assert chain.kept.dtype == np.int16 and chain.kept.shape == (r.plan.kept_sweeps.size, ds.n)
    total = sum(c.K.nbytes + c.log_joint.nbytes + c.kept.nbytes + c.replay.nbytes for c in r.chains.values())
    assert total <= r.plan.bytes <= SESSION_BUDGET_BYTES


# ----------------------------------------------------------------------------- what a live chain records
def test_live_chain_records_exactly_the_batch_chain(ds):
    """Same seed, same chain, however the live thread chunks its sweeps; kept draws are the states at
    the kept sweeps (the one keep schedule of pcrp.sampling.sampler)."""
    niw = resolve_niw(ds.X)
    prior = PowerCRP(1.0, 1.3)
    batch = run(ds.X, prior, niw, iters=300, burn_in=100, thin=7, seed=11)
    spec = make_run_spec(ds.X, prior=prior, niw=niw, n_chains=1, init="kmeans:10", iters=300, burn_in=100, thin=7,
                         seed=11)
    chain = LiveChain(ds.X, spec, 0, plan_storage(spec))  # the batch run's one chain
    chain.start()
    assert wait_until(lambda: chain.state == FINISHED)
    snap = chain.snapshot()
    np.testing.assert_array_equal(snap.K, batch.K)
    np.testing.assert_allclose(snap.log_joint, batch.log_joint)
    np.testing.assert_array_equal(snap.kept_sweeps, batch.kept_sweeps)
    np.testing.assert_array_equal(snap.kept, batch.labels)


def test_snapshots_share_memory_instead_of_copying(ds):
    r = small_run(ds)
    r.start()
    assert wait_until(lambda: not r.live)
    chain = r.chains["CRP"]
    snap = chain.snapshot()
    assert np.shares_memory(snap.kept, chain.kept) and np.shares_memory(snap.K, chain.K)
    with pytest.raises(ValueError):
        snap.kept[0, 0] = 99  # read-only views: a reader cannot corrupt the record


def test_replay_frames_are_states_at_their_sweeps(ds):
    r = small_run(ds, iters=300, burn_in=0, thin=1)
    r.start()
    assert wait_until(lambda: not r.live)
    snap = r.chains["CRP"].snapshot()
    assert len(snap.replay) == len(snap.replay_sweeps) == 200
    kept_at = {int(s): z for s, z in zip(snap.kept_sweeps, snap.kept)}  # thin 1: every sweep kept
    for sweep, frame in zip(snap.replay_sweeps, snap.replay):
        np.testing.assert_array_equal(frame, kept_at[int(sweep)])


# ----------------------------------------------------------------------------- control
def test_pause_holds_step_advances_one_sweep_resume_and_stop(ds):
    r = small_run(ds, iters=50_000, burn_in=100, thin=50)
    r.start(paused=True)
    time.sleep(0.3)
    assert [c.done for c in r.chains.values()] == [0, 0]
    assert all(r.step_once())
    assert wait_until(lambda: all(c.done == 1 for c in r.chains.values()))
    time.sleep(0.3)
    assert [c.done for c in r.chains.values()] == [1, 1]  # still paused after the step
    r.resume()
    assert wait_until(lambda: all(c.done > 100 for c in r.chains.values()))
    r.pause()
    time.sleep(0.2)  # the kernel call in flight (at most TARGET_CALL_SECONDS of sweeps) completes
    done = [c.done for c in r.chains.values()]
    time.sleep(0.3)
    assert [c.done for c in r.chains.values()] == done
    r.stop("you pressed Stop")
    r.join(5)
    assert all(not c.alive for c in r.chains.values())
    assert all(s.stop_reason == "you pressed Stop" for s in r.snapshots().values())


def test_pace_is_wall_clock_and_the_rate_is_reported_from_it(ds):
    """At a pace of 20 sweeps/s the reported rate is the chain's real progress, not the kernel's
    speed (the old page showed thousands of sweeps/s at one sweep per 0.2 s). Generous bounds: the
    point is the order of magnitude on a shared machine."""
    r = small_run(ds, iters=10_000, burn_in=0, thin=10)
    r.set_pace(20)
    r.start()
    time.sleep(2.0)
    snap = r.chains["CRP"].snapshot()
    r.stop("test over")
    assert 5 <= snap.sweeps_done <= 60
    assert 5 <= snap.sweeps_per_second <= 40
    assert snap.seconds_left == pytest.approx((10_000 - snap.sweeps_done) / snap.sweeps_per_second)


def test_a_failing_chain_reports_one_line(ds, monkeypatch):
    r = small_run(ds)
    chain = r.chains["CRP"]

    def broken(n, keep=None):
        raise FloatingPointError("overflow in the kernel")

    monkeypatch.setattr(chain.sampler, "step", broken)
    chain.start()
    assert wait_until(lambda: chain.state == FAILED)
    assert chain.snapshot().error == "FloatingPointError: overflow in the kernel"


# ----------------------------------------------------------------------------- lifetime
@pytest.mark.parametrize("paused", [False, True])
def test_an_orphaned_run_stops_within_its_grace_even_when_paused(ds, paused):
    """The session that owns a run disconnects (tab closed / reload): its chains stop after the
    grace period, paused ones too (they used to wait for ever)."""
    r = small_run(ds, iters=1_000_000, burn_in=0, thin=10_000)
    r.grace = 0.3
    owner = SessionOwner()
    owner.adopt(r)
    r.start(paused=paused)
    time.sleep(0.6)
    assert r.live  # owned: keeps going (or stays paused) however long nobody redraws
    owner.release_all()
    assert wait_until(lambda: not any(c.alive for c in r.chains.values()), seconds=5)
    assert all("closed or reloaded" in s.stop_reason for s in r.snapshots().values())


def test_a_session_that_comes_back_within_the_grace_keeps_its_run(ds):
    r = small_run(ds, iters=1_000_000, burn_in=0, thin=10_000)
    r.grace = 0.5
    first, second = SessionOwner(), SessionOwner()
    first.adopt(r)
    r.start()
    first.release_all()
    second.adopt(r)  # the reloaded page finds the run by its token and adopts it
    time.sleep(1.0)
    assert r.running
    r.stop("test over")


# ----------------------------------------------------------------------------- the server's registry
def test_registry_queues_runs_past_its_capacity_starts_them_when_a_place_frees_and_finds_runs_by_token(ds):
    reg = RunRegistry(max_live_runs=2)
    a, b, c = (small_run(ds, iters=100_000, burn_in=0, thin=10_000) for _ in range(3))
    for r in (a, b, c):
        r.set_pace(10)  # (still live when c is added)
    assert reg.add(a) and reg.add(b)  # started by the registry
    assert a.started and b.started
    assert not reg.add(c)  # no place: it waits, not started, not refused
    assert c.queued and not c.started and c.live
    assert reg.get(a.token) is a and reg.get("no-such-token") is None
    a.stop("done")
    reg.sweep()  # (the janitor's tick) a's place goes to c
    assert not c.queued and c.started
    for r in (b, c):
        r.stop("done")
    for r in (a, b, c):
        r.join(5)


def test_registry_forgets_the_oldest_finished_runs_beyond_its_budget(ds):
    first = small_run(ds)
    reg = RunRegistry(budget_bytes=int(2.5 * first.plan.bytes))
    runs = [first] + [small_run(ds) for _ in range(3)]
    for r in runs:
        r.stop("finished")
        reg.add(r)
    assert len(reg) == 2
    assert reg.get(runs[0].token) is None and reg.get(runs[-1].token) is runs[-1]


def test_registry_forgets_a_finished_run_once_its_sessions_have_been_gone_for_reload_seconds(ds, monkeypatch):
    """Runs kept for a reload are dropped after reload_seconds without any new visit (before, they
    stayed up to 2 hours and held the server's memory after every tab had closed), and the registry then asks for
    the freed memory to go back to the system (pcrp.app.memory), once for that sweep."""
    from pcrp.app import fair_share

    asked = []
    monkeypatch.setattr(fair_share, "release_soon", lambda: asked.append(time.monotonic()))
    reg = RunRegistry(reload_seconds=0.4)
    kept, left = small_run(ds), small_run(ds)
    owner, gone = SessionOwner(), SessionOwner()
    owner.adopt(kept)
    gone.adopt(left)
    for r in (kept, left):
        r.stop("finished")
        reg.add(r)
    gone.release_all()
    assert reg.get(left.token) is left  # a reload within the time finds it
    assert not asked  # nothing forgotten yet
    assert wait_until(lambda: len(reg) == 1, seconds=5)  # the background sweep, no visit needed
    assert len(asked) == 1
    assert reg.get(kept.token) is kept and reg.get(left.token) is None
    # its memory is freed even though the closed tab's session (kept a while by Streamlit) refers to it
    assert left.discarded and all(c.kept is None and c.sampler is None for c in left.chains.values())
    assert not kept.discarded and all(c.kept is not None for c in kept.chains.values())
    owner.release_all()
    assert wait_until(lambda: len(reg) == 0 and reg._janitor is None, seconds=5)  # no thread left behind


def test_compute_slots_go_to_the_longest_waiter_and_a_waiter_can_give_up():
    """A released slot goes to the first thread that waited, even when the releasing thread asks again at once
    (a semaphore lets it barge in: with five chains on two slots one chain then ran at 0.95 of its share and
    another at 0.71); a waiter leaves the queue when its give_up says so or its timeout passes."""
    slots = FairSlots(1)
    assert slots.acquire()
    order = []

    def waiter(name):
        assert slots.acquire()
        order.append(name)
        slots.release()

    threads = []
    for name in ("first", "second"):
        threads.append(threading.Thread(target=waiter, args=(name,)))
        threads[-1].start()
        assert wait_until(lambda: len(slots._waiters) == len(threads), seconds=5)
    slots.release()
    assert slots.acquire()  # the releasing thread asks again at once: it waits behind both
    assert order == ["first", "second"]
    for t in threads:
        t.join(5)
    gave_up = threading.Event()
    started = time.monotonic()
    threading.Timer(0.3, gave_up.set).start()
    assert not slots.acquire(give_up=gave_up.is_set, poll=0.05)
    assert 0.25 < time.monotonic() - started < 5.0 and not slots._waiters
    assert not slots.acquire(timeout=0.1) and not slots._waiters
    slots.release()
    with pytest.raises(ValueError, match="released more times"):
        slots.release()


def test_a_step_that_a_press_waits_for_goes_before_the_chains_that_wait_their_turn():
    """One sweep's chains ask for a slot with first=True: with thirty pages' chains queued for two cores, a press of
    One sweep otherwise waited behind every one of them (bench/load_client.py)."""
    slots = FairSlots(1)
    assert slots.acquire()
    order = []

    def waiter(name, first):
        assert slots.acquire(first=first)
        order.append(name)
        slots.release()

    threads = []
    for name, first in (("queued 1", False), ("queued 2", False), ("step", True)):
        threads.append(threading.Thread(target=waiter, args=(name, first)))
        threads[-1].start()
        assert wait_until(lambda: len(slots._waiters) == len(threads), seconds=5)
    slots.release()
    for t in threads:
        t.join(5)
    assert order == ["step", "queued 1", "queued 2"]


def test_chains_beyond_the_cores_wait_for_a_compute_slot_and_all_finish(ds, monkeypatch):
    """With one compute slot, the run's four chains never sample at the same moment, and all finish."""
    slots = FairSlots(1)
    monkeypatch.setattr(live_chain, "COMPUTE_SLOTS", slots)
    inside, overlaps = set(), [0]
    real_step = live_chain.Sampler.step

    def step(self, *args, **kwargs):
        if getattr(self, "_warm_up", False):  # the tiny compile check, outside any run
            return real_step(self, *args, **kwargs)
        inside.add(id(self))
        overlaps[0] = max(overlaps[0], len(inside))
        try:
            return real_step(self, *args, **kwargs)
        finally:
            inside.discard(id(self))

    monkeypatch.setattr(live_chain.Sampler, "step", step)
    r = small_run(ds, iters=3000, burn_in=100, thin=10, inits=("kmeans:10", "one"))
    r.start()
    assert wait_until(lambda: not r.live, seconds=60)
    assert overlaps[0] == 1
    assert all(s.sweeps_done == 3000 for s in r.snapshots().values())


NO_PLAN = type("Plan", (), {"bytes": 0, "iters": 2000})()  # runs whose chains are stand-ins: nothing stored


class StandIn:
    """A chain stand-in for the registry: a state, sweeps done and a pace (sweeps per second), nothing computed.
    It answers everything the registry's janitor may call (pause, resume, wait_settled), since a registry made
    here can outlive its test in the janitor thread."""

    def __init__(self, state=RUNNING, done=0, pace=100):
        self.state, self.done, self.pace = state, done, pace
        self.started = False

    def start(self, paused=False):
        self.started = True

    def progress(self):
        return self.done, self.state, 0.0

    def pause(self):
        self.state = PAUSED

    def resume(self):
        self.state = RUNNING

    def stop(self, reason="stopped"):
        self.state = STOPPED

    def wait_settled(self, timeout=0):
        return True

    def discard(self):
        pass


def test_a_class_of_thirty_behind_one_address_goes_live_on_a_two_core_server_at_the_explorers_defaults():
    """Thirty browsers from one address pressing Start at the Explorer's defaults (CRP + pCRP, `chains` each): every
    one is admitted (none refused, none queued) by a registry of a 2-core server before it has measured its pages
    (its first guess of a frame's cost, FRAME_COST_GUESS); the 31st to 33rd too, and then runs queue."""
    from pcrp.app.explorer_settings import defaults
    from pcrp.app.fair_share import DRAW_SHARE, FRAME_COST_GUESS, FRAME_SECONDS

    chains = defaults()["chains"]
    registry = RunRegistry(cores=2)
    capacity = int(DRAW_SHARE / (FRAME_COST_GUESS / FRAME_SECONDS))
    assert capacity >= 30 and registry.capacity() == capacity
    runs = [live.LiveRun(chains={f"{p}{c}": StandIn() for p in ("crp", "pcrp") for c in range(chains)},
                         dataset=None, niw=None, config={}, plan=NO_PLAN, browser=f"key{visitor}",
                         address="203.0.113.5") for visitor in range(capacity + 1)]
    assert all(registry.add(run) for run in runs[:capacity])
    assert not registry.add(runs[-1]) and runs[-1].queued


def test_a_run_is_found_again_only_by_the_browser_that_started_it():
    registry = RunRegistry()
    done = type("C", (), {"state": FINISHED})
    mine = live.LiveRun(chains={"a": done()}, dataset=None, niw=None, config={}, plan=NO_PLAN, browser="k" * 43)
    registry.add(mine)
    assert registry.latest_for("k" * 43) is mine
    assert registry.latest_for("j" * 43) is None and registry.latest_for(None) is None
    assert registry.latest_for("") is None
    newer = live.LiveRun(chains={"a": done()}, dataset=None, niw=None, config={}, plan=NO_PLAN, browser="k" * 43)
    registry.add(newer)
    assert registry.latest_for("k" * 43) is newer


def test_pause_is_a_freeze_and_one_sweep_moves_every_chain_by_exactly_one(ds):
    """At full speed a kernel call holds about TARGET_CALL_SECONDS of sweeps (hundreds here): Pause returns
    only once every chain has recorded its call in flight, and from then on the counters do not move; each
    One sweep then adds exactly one sweep to every chain, visible as soon as step_once returns."""
    r = small_run(ds, iters=200_000, burn_in=100, thin=100)
    r.start()
    assert wait_until(lambda: all(c.done > 300 for c in r.chains.values()))
    for _ in range(3):
        r.pause()
        assert set(r.states.values()) == {PAUSED}
        frozen = [s.sweeps_done for s in r.snapshots().values()]
        time.sleep(0.4)
        assert [s.sweeps_done for s in r.snapshots().values()] == frozen
        for k in range(1, 4):
            assert all(r.step_once())
            assert [s.sweeps_done for s in r.snapshots().values()] == [d + k for d in frozen]
        time.sleep(0.3)
        assert [s.sweeps_done for s in r.snapshots().values()] == [d + 3 for d in frozen]
        r.resume()
        assert wait_until(lambda: all(c.done > d + 50 for c, d in zip(r.chains.values(), frozen)))
    r.stop("you pressed Stop")
    stopped = [s.sweeps_done for s in r.snapshots().values()]
    time.sleep(0.3)
    assert [s.sweeps_done for s in r.snapshots().values()] == stopped  # Stop returns once nothing is in flight
    r.join(5)


def test_a_run_at_the_apps_row_limit_fits_the_session_budget_with_fewer_replay_frames():
    """100,000 points (pcrp.data.APP_MAX_ROWS) in 4 chains: 200 replay frames alone would take 320 MB, more than
    the 200 MiB budget; the plan keeps fewer frames (half the budget at most) and still keeps draws."""
    from pcrp.data import APP_MAX_ROWS

    plan = plan_storage(spec_of(APP_MAX_ROWS, 2000, 500, 5), n_chains=4)
    per_draw = APP_MAX_ROWS * 4
    assert 2 <= plan.replay_sweeps.size < REPLAY_FRAMES
    assert 4 * plan.replay_sweeps.size * per_draw <= SESSION_BUDGET_BYTES // 2
    assert plan.kept_sweeps.size >= 10 and plan.bytes <= SESSION_BUDGET_BYTES
    assert plan_storage(spec_of(272, 2000, 500, 5), n_chains=4).replay_sweeps.size == REPLAY_FRAMES  # small data: all


def test_resume_pressed_before_a_pause_takes_effect_cancels_the_pause(ds):
    """Pause while a kernel call is in flight is only requested (the call's sweeps still count); a Resume before
    that call ends must cancel it. Before the fix the pause took effect after the Resume and the chain stayed
    paused (seen in the browser at 100,000 points, where calls are long)."""
    niw = resolve_niw(ds.X)
    spec = make_run_spec(ds.X, prior=PowerCRP(1.0, 1.3), niw=niw, n_chains=1, iters=300, burn_in=100, thin=7, seed=11)
    chain = LiveChain(ds.X, spec, 0, plan_storage(spec))
    with chain._lock:
        chain.state, chain._in_call = RUNNING, True  # as the worker is during a kernel call
    chain.pause()
    assert chain.state == RUNNING and chain._paused  # requested, not yet in effect
    chain.resume()
    with chain._lock:
        chain._call_ended()  # the call in flight is recorded
    assert chain.state == RUNNING and not chain._paused
    chain.pause()
    with chain._lock:
        chain._call_ended()
    assert chain.state == PAUSED  # without a Resume the pause takes effect when the call ends


@pytest.mark.skipif(not hasattr(os, "getpriority"), reason="threads have their own priority on Linux only")
def test_chain_threads_run_below_the_pages_priority(ds):
    """The web server and the page's script runs must get a core before the chains (Pause answers within a
    fraction of a second on a machine whose cores the chains fill): each chain thread lowers its own priority."""
    r = small_run(ds, iters=50_000, burn_in=100, thin=50)
    r.start(paused=True)
    try:
        assert wait_until(lambda: all(c._thread.native_id for c in r.chains.values()))
        time.sleep(0.3)  # the threads have entered their loops
        for chain in r.chains.values():
            assert os.getpriority(os.PRIO_PROCESS, chain._thread.native_id) >= BACKGROUND_NICE
    finally:
        r.stop("test over")
        r.join(5)

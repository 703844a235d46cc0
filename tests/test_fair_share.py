"""How runs share the server (pcrp.app.fair_share.RunRegistry): every run goes live while the server has a place, past
its capacity runs wait in a queue that says where they stand and start by themselves, the queue serves the address
that holds the fewest runs first, each browser holds a bounded share, work has a budget, unwatched runs give their
place back, and the capacity follows what a page is measured to cost."""

import math
import time
from types import SimpleNamespace

import numpy as np
import pytest

from pcrp.app import live_runs as live
from pcrp.app.fair_share import (DRAW_SHARE, FRAME_COST_GUESS, MIN_CAPACITY, LoadMeter, RunRegistry, ServerBusy,
                                 SessionOwner, Share, ordinal, share_settings, visitor_address)
from pcrp.app.live_chain import PAUSED, RUNNING
from pcrp.app.live_runs import live_specs, new_run
from pcrp.sampling.compute import work_cost
from pcrp.data import simulation
from pcrp.model import CRP, PowerCRP, resolve_niw
from test_live import StandIn, wait_until


class Rated(StandIn):
    """A stand-in chain that reports a measured speed (sweeps per second) while it runs."""

    def __init__(self, rate=0.0, **kwargs):
        super().__init__(**kwargs)
        self.rate = rate

    def progress(self):
        return self.done, self.state, self.rate if self.state == RUNNING else 0.0


def stand_in_run(browser, address, chains=4, sweeps=100_000, pace=2, cost=1.0, rate=0.0, plan_bytes=0):
    """A run as the Explorer's defaults start it (CRP + pCRP, 2 chains each) at a pace, on stand-in chains."""
    plan = SimpleNamespace(bytes=plan_bytes, iters=sweeps)
    run = live.LiveRun(chains={f"c{i}": Rated(pace=pace, rate=rate) for i in range(chains)}, dataset=None, niw=None,
                       config={}, plan=plan, browser=browser, address=address)
    run.cost = cost
    return run


def stop(run):
    for chain in run.chains.values():
        chain.stop()


def test_twenty_windows_from_one_address_queue_behind_a_visitor_from_another():
    """The attack of issue 32, with a visitor counted by its browser key: windows without the cookie (each a new key)
    from one address take every place and queue the rest; a visitor from another address who comes later is next in
    the queue (its address holds no run), and gets the first place that frees."""
    registry = RunRegistry(max_live_runs=4)
    windows = [stand_in_run(f"window-{w}", "203.0.113.5") for w in range(20)]
    admitted = [registry.add(run) for run in windows]
    assert admitted == [True] * 4 + [False] * 16
    assert all(run.started for run in windows[:4]) and not any(run.started for run in windows[4:])
    teacher = stand_in_run("teacher", "198.51.100.9", sweeps=2000, pace=100)
    assert not registry.add(teacher) and teacher.queued
    place, waiting, _ = registry.queue_place(teacher)
    assert (place, waiting) == (1, 17)  # ahead of the 16 windows queued before it
    assert registry.queue_place(windows[4])[0] == 2
    stop(windows[0])
    registry.sweep()
    assert teacher.started and not teacher.queued and not windows[4].started
    stop(windows[1])
    registry.sweep()
    assert windows[4].started  # then first come, first served
    assert registry.stats()["live_runs"] == 4 and registry.stats()["queued"] == 15


def test_a_class_behind_one_address_is_many_visitors_each_within_its_browsers_share():
    registry = RunRegistry(max_live_runs=40)
    assert all(registry.add(stand_in_run(f"student-{s}", "203.0.113.5")) for s in range(30))
    assert registry.live_chains() == 120


def test_a_browser_holds_at_most_its_share_over_its_tabs_and_a_new_start_replaces_the_tabs_own_run():
    registry = RunRegistry()
    tab1, tab2 = stand_in_run("browser-a", "192.0.2.1"), stand_in_run("browser-a", "192.0.2.1")
    registry.add(tab1)
    registry.add(tab2)
    with pytest.raises(ServerBusy, match="This browser's other tabs already run 8 chains") as refused:
        registry.add(stand_in_run("browser-a", "192.0.2.1"))
    assert refused.value.reason == "browser" and "Stop a run in another tab" in str(refused.value)
    registry.add(stand_in_run("browser-a", "192.0.2.1"), replacing=tab2)  # tab 2's Start replaces tab 2's run


def test_a_queued_run_knows_its_place_and_when_a_place_frees_at_the_live_runs_speed():
    registry = RunRegistry(max_live_runs=2)
    for visitor, done in enumerate((1000, 1500)):  # at 100 sweeps/s, 1,000 and 500 sweeps left: 10 s and 5 s
        run = stand_in_run(f"v{visitor}", f"192.0.2.{visitor}", sweeps=2000, pace=100)
        for chain in run.chains.values():
            chain.done = done
        registry.add(run)
    first, second = stand_in_run("late-1", "192.0.2.8"), stand_in_run("late-2", "192.0.2.9")
    assert not registry.add(first) and not registry.add(second)
    assert registry.queue_place(first) == (1, 2, pytest.approx(5.0))
    assert registry.queue_place(second) == (2, 2, pytest.approx(10.0))
    text = registry.queue_text(first)
    assert text.startswith("This server has 2 runs live, as many as its administrator allows at once, so yours "
                           "waits in the queue: 1st of 2; it starts by itself, in about 5 s")
    assert "starts by itself" in text
    for run in list(registry._runs.values())[:2]:  # paused runs do not end by themselves
        for chain in run.chains.values():
            chain.state = PAUSED
    assert math.isinf(registry.queue_place(first)[2])
    assert "as soon as one of them ends or is stopped" in registry.queue_text(first)
    assert registry.queue_place(stand_in_run("x", "192.0.2.7")) is None  # not queued here
    assert [ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 22, 101)] == \
        ["1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "101st"]


def test_a_queued_run_whose_page_has_gone_leaves_the_queue():
    registry = RunRegistry(max_live_runs=1)
    registry.add(stand_in_run("a", "192.0.2.1"))
    queued = stand_in_run("b", "192.0.2.2")
    queued.grace = 0.0
    owner = SessionOwner()
    owner.adopt(queued)
    registry.add(queued)
    owner.release_all()  # the tab closed while it waited
    time.sleep(0.01)
    registry.sweep()
    assert not queued.live and registry.stats()["queued"] == 0 and not queued.started


def test_runs_queue_when_their_buffers_would_exceed_the_live_memory_budget():
    registry = RunRegistry(max_live_runs=10, live_budget_bytes=100)
    assert registry.add(stand_in_run("a", "192.0.2.1", plan_bytes=60))
    assert not registry.add(stand_in_run("b", "192.0.2.2", plan_bytes=60))
    assert registry.add(stand_in_run("c", "192.0.2.3", plan_bytes=60)) is False  # behind b, first come first
    lone = RunRegistry(max_live_runs=10, live_budget_bytes=100)
    assert lone.add(stand_in_run("big", "192.0.2.1", plan_bytes=500))  # one run alone always fits


def test_the_page_says_how_many_runs_share_the_server_and_the_pace_this_one_gets():
    registry = RunRegistry(max_live_runs=10, cores=2)
    alone = stand_in_run("a", "192.0.2.1", pace=100, rate=100.0)
    registry.add(alone)
    assert registry.share_text(alone) == ""  # one visitor alone: the live view as it was
    slow = stand_in_run("b", "192.0.2.2", pace=100, rate=60.0)
    registry.add(slow)
    registry.add(stand_in_run("c", "192.0.2.3", pace=100, rate=99.0))
    assert registry.share_text(slow) == ("3 runs share this server's 2 cores now; this one gets about 60 of the 100 "
                                         "sweeps/s it asks for, as every run slows alike while the cores are full.")
    assert registry.share_text(alone) == ("3 runs share this server's 2 cores now; each still runs at the pace it "
                                          "asks for (100 sweeps/s).")
    fast = stand_in_run("d", "192.0.2.4", pace=None, rate=2300.0)
    registry.add(fast)
    assert "4 runs share" in registry.share_text(fast) and "2,300 sweeps/s" in registry.share_text(fast)
    full = RunRegistry(max_live_runs=1)
    full.add(stand_in_run("e", "192.0.2.5"))
    queued = stand_in_run("f", "192.0.2.6")
    assert not full.add(queued)
    assert full.share_text(queued) == ""


@pytest.mark.parametrize("dims, accepted", [(2, True), (10, True), (50, False)])
def test_a_visitors_work_is_counted_in_points_dimensions_clusters_and_sweeps(dims, accepted):
    """The Explorer's largest run (2 priors x 4 chains) of 20,000 sweeps on 5,000 points: within a browser's 30
    core-minutes at d = 2 and 10, far over it at d = 50. Counting points x sweeps only (as before issue 32) made
    the three equal."""
    n, sweeps, chains = 5000, 20_000, 8
    registry = RunRegistry()
    run = stand_in_run("b", "192.0.2.1", chains=chains, sweeps=sweeps)
    run.dataset = SimpleNamespace(n=n, X=np.zeros((1, dims)))
    run.cost = work_cost(n, dims, sweeps, chains=chains)
    if accepted:
        registry.add(run)
        return
    with pytest.raises(ServerBusy) as refused:
        registry.add(run)
    text = str(refused.value)
    assert refused.value.reason == "work" and refused.value.retry_after is None
    assert f"about {run.cost / 3600:.1f} core-hours of sampling" in text and "30 core-minutes" in text
    assert "8 chains x 20,000 sweeps x 5,000 points" in text and "at d = 50" in text


def test_work_already_held_counts_against_the_share_as_it_shrinks():
    registry = RunRegistry(per_browser=Share(8, 100.0))
    first = stand_in_run("b", "192.0.2.1", chains=2, sweeps=1000, pace=100, cost=80.0)
    registry.add(first)
    with pytest.raises(ServerBusy, match=r"other tabs already run about 80 core-seconds") as refused:
        registry.add(stand_in_run("b", "192.0.2.1", chains=2, cost=30.0))
    assert refused.value.retry_after == pytest.approx(10.0)  # 1,000 sweeps at 100/s
    for chain in first.chains.values():  # three quarters done: 20 core-seconds left
        chain.done = 750
    registry.add(stand_in_run("b", "192.0.2.1", chains=2, cost=30.0))


@pytest.fixture
def ds():
    return simulation("sim2", n=120, seed=3)


def real_run(ds, browser, address, pace=50):
    run = new_run(ds, live_specs(ds, {"CRP": CRP(1.0), "pCRP": PowerCRP(1.0, 1.3)}, resolve_niw(ds.X), iters=100_000,
                                 burn_in=50, thin=50, seed=4, inits=("kmeans:10", "one")))
    run.browser, run.address = browser, address
    run.set_pace(pace)
    return run


def test_a_run_nobody_watches_gives_its_place_back_and_its_owners_resume_waits_in_the_queue(ds):
    registry = RunRegistry(max_live_runs=1, reclaim_seconds=60)
    mine = real_run(ds, "mine", "192.0.2.1")
    assert registry.add(mine) and mine.started
    registry.sweep()
    assert not mine.reclaimed  # watched when it was added
    mine._watched -= 61  # its page has not drawn it for 61 s (a frozen tab, a script that holds the connection)
    registry.sweep()
    assert mine.reclaimed and wait_until(lambda: set(mine.states.values()) == {PAUSED})
    assert registry.stats()["live_runs"] == 0
    other = real_run(ds, "other", "192.0.2.2")
    assert registry.add(other)  # the place is free again
    assert not registry.readmit(mine)  # the owner presses Resume while the place is taken: it waits
    assert mine.queued and set(mine.states.values()) == {PAUSED}
    assert registry.queue_place(mine)[:2] == (1, 1)
    registry.sweep()
    assert not other.reclaimed  # (watched)
    other.stop("done")
    done_before = {name: chain.done for name, chain in mine.chains.items()}
    registry.sweep()
    assert not mine.reclaimed and not mine.queued and registry.live_chains() == 4
    assert wait_until(lambda: all(c.done > done_before[n] for n, c in mine.chains.items()))
    mine.stop("test over")
    mine.join(5)
    other.join(5)


def test_a_reclaimed_run_still_counts_in_its_browsers_share(ds):
    """Otherwise a visitor could leave runs unwatched and start new ones without end (memory)."""
    registry = RunRegistry(per_browser=Share(4, 1800.0))
    mine = real_run(ds, "mine", "192.0.2.1")
    registry.add(mine)
    mine._watched -= registry.reclaim_seconds + 1
    registry.sweep()
    assert mine.reclaimed
    with pytest.raises(ServerBusy, match="other tabs already run 4 chains"):
        registry.add(real_run(ds, "mine", "192.0.2.1"))
    mine.stop("test over")


def test_addresses_are_grouped_as_a_visitor_controls_them():
    assert visitor_address("198.51.100.7") == "198.51.100.7"
    # one IPv6 /64 is one household or device: every address in it is one visitor
    assert visitor_address("2001:db8:1:2:aaaa::1") == visitor_address("2001:db8:1:2:ffff::9") == "2001:db8:1:2::/64"
    assert visitor_address("2001:db8:1:3::1") != visitor_address("2001:db8:1:2::1")
    assert visitor_address("::ffff:198.51.100.7") == "198.51.100.7"
    assert visitor_address(None) == visitor_address("") == "local"


def test_the_administrator_fixes_the_capacity_and_the_browsers_share_in_the_environment():
    kwargs, problems = share_settings({"PCRP_MAX_LIVE_RUNS": "12", "PCRP_CHAINS_PER_BROWSER": "zero",
                                       "PCRP_MAX_CHAINS": "64"})
    assert kwargs == {"max_live_runs": 12}
    assert problems == ["PCRP_CHAINS_PER_BROWSER='zero' is not a whole number >= 1: ignored",
                        "PCRP_MAX_CHAINS is no longer used: the server admits runs by its measured capacity now "
                        "(PCRP_MAX_LIVE_RUNS fixes it)"]
    assert RunRegistry(**kwargs).capacity() == 12
    kwargs, problems = share_settings({"PCRP_CHAINS_PER_BROWSER": "16", "PCRP_MAX_LIVE_RUNS": "0"})
    assert kwargs["per_browser"].chains == 16 and "max_live_runs" not in kwargs and len(problems) == 1


def test_the_load_meter_takes_the_median_frame_and_the_event_loops_share_and_the_capacity_follows_it():
    loop = {"cpu": 0.0}
    meter = LoadMeter(guess=0.02, loop=lambda: loop["cpu"])
    registry = RunRegistry(cores=2, meter=meter)
    assert registry.capacity() == int(DRAW_SHARE / 0.02)  # before any measurement: the guess
    for _ in range(4):  # too few frames to tell: the guess stays
        meter.frame(0.008)
    meter.update()
    assert meter.frame_cost == 0.02 and not meter.measured
    for _ in range(95):  # 100 frames, one of them a page's first full run; the event loop's 0.2 s for their messages
        meter.frame(0.008)
    meter.frame(0.4)
    loop["cpu"] = 0.2
    meter.update()
    assert meter.frame_cost == pytest.approx(0.008 + 0.002) and meter.measured  # the median, not the mean (0.0119)
    assert registry.capacity() == int(DRAW_SHARE / 0.01) == 60
    assert RunRegistry(cores=16, meter=meter).capacity() == 60  # pages draw on one core however many there are
    for _ in range(100):  # 30 ms a frame now: smoothed, not jumped to
        meter.frame(0.03)
    meter.update()
    assert meter.frame_cost == pytest.approx(0.01 + LoadMeter.SMOOTHING * 0.02)
    assert registry.capacity() == int(DRAW_SHARE / meter.frame_cost)
    assert RunRegistry(cores=2, meter=LoadMeter(guess=10.0, loop=lambda: 0.0)).capacity() == MIN_CAPACITY
    assert LoadMeter(loop=lambda: 1 / 0).frame_cost == FRAME_COST_GUESS  # no per-thread times: frames alone

"""A fair share of the live pool (pcrp.app.fair_share.RunRegistry): limits per browser and per network address, a
cap on each visitor's work, runs nobody watches given back to the pool, and refusals that say why and when."""

import math
from types import SimpleNamespace

import numpy as np
import pytest

from pcrp.app import live_runs as live
from pcrp.app.fair_share import RunRegistry, ServerBusy, Share, share_settings, visitor_address
from pcrp.app.live_chain import PAUSED
from pcrp.app.live_runs import live_specs, new_run
from pcrp.sampling.compute import work_cost
from pcrp.data import simulation
from pcrp.model import CRP, PowerCRP, resolve_niw
from test_live import StandIn, wait_until


def stand_in_run(browser, address, chains=4, sweeps=100_000, pace=2, cost=1.0):
    """A run as the Explorer's defaults start it (CRP + pCRP, 2 chains each) at a pace, on stand-in chains."""
    plan = SimpleNamespace(bytes=0, iters=sweeps)
    run = live.LiveRun(chains={f"c{i}": StandIn(pace=pace) for i in range(chains)}, dataset=None, niw=None,
                       config={}, plan=plan, browser=browser, address=address)
    run.cost = cost
    return run


def test_twenty_windows_from_one_address_leave_room_for_a_visitor_from_another():
    """The attack of issue 32: windows without the cookie (each a new browser key) from one address start runs at
    the slowest pace. Without a per-address limit they took all 32 chains for about 14 hours."""
    registry = RunRegistry()
    admitted, refused = [], []
    for window in range(20):
        run = stand_in_run(f"window-{window}", "203.0.113.5")
        try:
            registry.add(run)
            admitted.append(run)
        except ServerBusy as err:
            refused.append(err)
    assert len(admitted) == 4 and len(refused) == 16  # 16 chains: half the pool
    err = refused[0]
    assert err.reason == "address"
    text = str(err)
    assert "your network address already run 16 chains" in text and "at most 16 of this server's 32" in text
    # when to try again: 100,000 sweeps at 2 sweeps/s is 50,000 s, about 13.9 hours
    assert math.isclose(err.retry_after, 50_000, rel_tol=0.01) and "about 13.9 h" in text
    # a visitor from another address starts a run at the defaults
    registry.add(stand_in_run("teacher", "198.51.100.9", sweeps=2000, pace=100))
    assert registry.live_chains() == 20


def test_a_browser_holds_at_most_its_share_over_its_tabs_and_a_new_start_replaces_the_tabs_own_run():
    registry = RunRegistry()
    tab1, tab2 = stand_in_run("browser-a", "192.0.2.1"), stand_in_run("browser-a", "192.0.2.1")
    registry.add(tab1)
    registry.add(tab2)
    with pytest.raises(ServerBusy, match="This browser's other tabs already run 8 chains") as refused:
        registry.add(stand_in_run("browser-a", "192.0.2.1"))
    assert refused.value.reason == "browser" and "stop a run in another tab" in str(refused.value)
    registry.add(stand_in_run("browser-a", "192.0.2.1"), replacing=tab2)  # tab 2's Start replaces tab 2's run


def test_a_full_pool_says_how_many_chains_run_and_when_enough_end():
    registry = RunRegistry(max_live_chains=8, per_address=Share(8, 3600.0))
    for visitor, done in enumerate((1000, 1500)):  # at 100 sweeps/s, 1,000 and 500 sweeps left: 10 s and 5 s
        run = stand_in_run(f"v{visitor}", f"192.0.2.{visitor}", sweeps=2000, pace=100)
        for chain in run.chains.values():
            chain.done = done
        registry.add(run)
    with pytest.raises(ServerBusy) as refused:
        registry.add(stand_in_run("late", "192.0.2.9", chains=4))
    assert refused.value.reason == "pool" and refused.value.retry_after == pytest.approx(5.0)
    assert "already running 8 chains for 2 visitor(s)" in str(refused.value)
    assert "runs at most 8 at once; this run needs 4" in str(refused.value)
    assert "end in about 5 s" in str(refused.value)
    with pytest.raises(ServerBusy) as refused:  # 6 chains need both runs to end: the later one, 10 s
        registry.add(stand_in_run("late", "192.0.2.9", chains=6))
    assert refused.value.retry_after == pytest.approx(10.0)
    for chain in next(iter(registry._runs.values())).chains.values():  # paused runs do not end by themselves
        chain.state = PAUSED
    with pytest.raises(ServerBusy, match="None of them is due to end soon") as refused:
        registry.add(stand_in_run("late", "192.0.2.9", chains=6))
    assert math.isinf(refused.value.retry_after)


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


def test_a_run_nobody_watches_gives_its_chains_back_and_its_owner_resumes_it_when_there_is_room(ds):
    registry = RunRegistry(max_live_chains=4, reclaim_seconds=60)
    mine = real_run(ds, "mine", "192.0.2.1")
    registry.add(mine)
    mine.start()
    registry.sweep()
    assert not mine.reclaimed  # watched when it was added
    mine._watched -= 61  # its page has not drawn it for 61 s (a frozen tab, a script that holds the connection)
    registry.sweep()
    assert mine.reclaimed and wait_until(lambda: set(mine.states.values()) == {PAUSED})
    assert registry.live_chains() == 0
    other = real_run(ds, "other", "192.0.2.2")
    registry.add(other)  # the pool has room again
    other.start()
    with pytest.raises(ServerBusy, match="already running 4 chains") as refused:
        registry.readmit(mine)  # the owner presses Resume while the pool is full
    assert refused.value.reason == "pool" and mine.reclaimed
    assert set(mine.states.values()) == {PAUSED}
    # the other run's visitor watches it, so it is not reclaimed; once it stops, the owner's Resume works
    registry.sweep()
    assert not other.reclaimed
    other.stop("done")
    done_before = {name: chain.done for name, chain in mine.chains.items()}
    registry.readmit(mine)
    assert not mine.reclaimed and registry.live_chains() == 4
    assert wait_until(lambda: all(c.done > done_before[n] for n, c in mine.chains.items()))
    mine.stop("test over")
    mine.join(5)
    other.join(5)


def test_a_reclaimed_run_still_counts_in_its_visitors_share(ds):
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


def test_the_administrator_sets_the_pool_and_shares_in_the_environment():
    kwargs, problems = share_settings({"PCRP_MAX_CHAINS": "64", "PCRP_CHAINS_PER_ADDRESS": "64",
                                       "PCRP_CHAINS_PER_BROWSER": "zero"})
    assert kwargs["max_live_chains"] == 64 and kwargs["per_address"].chains == 64
    assert "per_browser" not in kwargs and problems == ["PCRP_CHAINS_PER_BROWSER='zero' is not a whole number >= 1: "
                                                        "ignored"]
    registry = RunRegistry(**kwargs)
    for window in range(16):  # a classroom behind one address, at the defaults
        registry.add(stand_in_run(f"student-{window}", "203.0.113.5"))

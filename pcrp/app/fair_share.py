"""The server's runs and how they share it: every run goes live and slows alike when the cores are full, past a
capacity the server measures for itself new runs wait in a queue and start by themselves, each browser holds a
bounded share, work has a budget, unwatched runs give their place back and ended ones are forgotten within a memory
budget.

Nothing here knows about Streamlit. :class:`RunRegistry` keeps every :class:`pcrp.app.live_runs.LiveRun` of the
server process by token (a browser's reload finds its own run again). A run is *admitted* (started at once) while
fewer runs are live than the server's capacity (:meth:`RunRegistry.capacity`) and their buffers fit the live memory
budget; otherwise it is *queued*: :meth:`RunRegistry.queue_place` gives its place and an estimated wait, and it
starts by itself when a place frees (a run ends, stops or is reclaimed), the next place going to the queued run whose
network address holds the fewest runs, then to the one queued first. Only what can never fit (a run over its browser's
work budget) or what the visitor's own browser already holds (its :class:`Share`) is refused (:class:`ServerBusy`).

Capacity by pace. Live runs share the cores through the compute slots (:class:`pcrp.sampling.compute.FairSlots`, first
come first served), so when the cores are full every run's chains slow alike; :meth:`RunRegistry.share_text` says so
on the page. What bounds how many runs can be live is what their pages cost: each live page is redrawn every
``frame_seconds`` (the status line and the canvases' frames), and that drawing is Python, run one thread at a time at
a higher priority than the chains. :class:`LoadMeter` measures it (each frame's CPU time as the page reports it, and
the event loop's that sends the pages' messages), and the capacity is the number of pages whose frames take
``DRAW_SHARE`` of one core, at least ``MIN_CAPACITY``; the administrator can fix it instead (``PCRP_MAX_LIVE_RUNS``,
:func:`share_settings`).

A visitor is its browser key (pcrp.app.browser_keys, signed by the server): a classroom behind one router is thirty
visitors, not one. Against one person opening many windows without the cookie, the server issues at most a limited
number of new keys per network address per minute (:class:`pcrp.app.browser_keys.KeyRate`), and the queue serves the
address that holds the fewest runs first.

:class:`SessionOwner` is one browser session's claim on its runs.
"""

import logging
import math
import secrets
import threading
import time
from collections import OrderedDict, deque
from dataclasses import dataclass

from ..sampling.compute import describe_seconds, describe_work, usable_cpus
from .live_chain import RUNNING
from .live_runs import RELOAD_SECONDS
from .memory import release_soon

LOG = logging.getLogger(__name__)


@dataclass(frozen=True)
class Share:
    """How much of the server's live runs one browser may hold at once: chains (ready, running or paused, queued and
    reclaimed ones included) and estimated core-seconds still to run (:meth:`LiveRun.remaining_cost`)."""

    chains: int
    core_seconds: float


# One browser (its key) may hold the largest run the Explorer offers (2 priors x 4 chains), or two runs at the
# defaults, over all its tabs; and 30 core-minutes of sampling still to run (the Explorer's defaults on Old Faithful
# need about half a core-second).
SHARE_PER_BROWSER = Share(chains=8, core_seconds=1800.0)
# A live run that none of its owner's sessions has drawn for this long (the page redraws it every second, and a
# browser's hidden tab still about once a minute) is reclaimed: paused, and its place goes to the queue.
RECLAIM_SECONDS = 120.0
# Each live page is redrawn this often while its run is live (the live fragment's run_every): what a live run costs
# the server's drawing is one frame per FRAME_SECONDS.
FRAME_SECONDS = 1.0
# The share of one core that the live pages' frames may take before new runs wait in the queue. Drawing is Python:
# one thread at a time runs it (the interpreter's lock; the pages' frames also take turns in app_pages.shared's
# drawing slot), so however many cores the server has, its pages draw on about one; the rest of that core is the
# event loop's, page loads' and the Lesson's. The chains use every core, and slow alike once they are full.
DRAW_SHARE = 0.6
# Live runs admitted whatever the measurement says: the fixed pool before the capacity was measured (8 visitors at the
# Explorer's defaults); their pages then slow each other rather than wait.
MIN_CAPACITY = 8
# Core-seconds of one frame before the server has measured its own: about what a frame of the Explorer's defaults
# cost on a 2-core server (bench/load_client.py: a script run's CPU and the event loop's share), rounded up.
FRAME_COST_GUESS = 0.02
LIVE_BUDGET_BYTES = 2 * 2**30  # buffers of all admitted live runs (each at most SESSION_BUDGET_BYTES): more wait
TICK_SECONDS = 1.0  # the janitor's pace: queued runs start, the load is measured, ended runs are forgotten


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


RETIRED_SETTINGS = {  # environment variables of earlier versions, named in the log when set
    "PCRP_MAX_CHAINS": "the server admits runs by its measured capacity now (PCRP_MAX_LIVE_RUNS fixes it)",
    "PCRP_CHAINS_PER_ADDRESS": "a visitor is its browser key now (PCRP_NEW_KEYS_PER_MINUTE limits new keys per "
                               "address)",
}


def _whole_number(environ, name, problems):
    text = environ.get(name)
    if text is None:
        return None
    try:
        value = int(text)
        if value < 1:
            raise ValueError
    except ValueError:
        problems.append(f"{name}={text!r} is not a whole number >= 1: ignored")
        return None
    return value


def share_settings(environ):
    """(RunRegistry keyword arguments, problems) from the server's environment: PCRP_MAX_LIVE_RUNS (a fixed capacity
    instead of the measured one) and PCRP_CHAINS_PER_BROWSER, each a whole number >= 1; a bad value is ignored and
    named in ``problems`` (a list of sentences for the server's log), as is a retired setting."""
    kwargs, problems = {}, []
    capacity = _whole_number(environ, "PCRP_MAX_LIVE_RUNS", problems)
    if capacity is not None:
        kwargs["max_live_runs"] = capacity
    chains = _whole_number(environ, "PCRP_CHAINS_PER_BROWSER", problems)
    if chains is not None:
        kwargs["per_browser"] = Share(chains=chains, core_seconds=SHARE_PER_BROWSER.core_seconds)
    for name, why in RETIRED_SETTINGS.items():
        if name in environ:
            problems.append(f"{name} is no longer used: {why}")
    return kwargs, problems


def describe_wait(seconds):
    """A wait in words: 'about 40 s', 'about 12 min', 'about 3.5 h'."""
    if seconds < 90:
        return f"about {max(seconds, 5):,.0f} s"
    if seconds < 2 * 3600:
        return f"about {seconds / 60:,.0f} min"
    return f"about {seconds / 3600:,.1f} h"


def ordinal(n):
    """1st, 2nd, 3rd, 4th, 11th, 21st, ..."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


class ServerBusy(RuntimeError):
    """A run refused before it starts, because it can never fit ("work": more sampling than one browser may hold)
    or because its own browser's other tabs hold their share ("browser"); the message says which, why and what to
    do. retry_after: seconds until enough of those runs end at their present speed (inf: not by ending alone), or
    None when waiting does not help."""

    def __init__(self, message, reason="browser", retry_after=None):
        super().__init__(message)
        self.reason = reason
        self.retry_after = retry_after


class LoadMeter:
    """What a live page costs this server, measured as it runs: the CPU time of each frame that a page drew, as the
    page reports it (:meth:`frame`: its script run's thread CPU time, the run's own bookkeeping included), the median
    over the frames between two ticks (a page's first full run, drawn with its first frame, is rare and large: the
    median leaves it out), plus the server's event loop's CPU time (serialising and sending every page's messages)
    spread over those frames; smoothed over the last ticks. Until at least MIN_FRAMES frames have been drawn between two
    ticks it keeps its previous figure (first: ``guess``).

    loop: a function returning the event loop thread's CPU seconds so far (default: this process's main thread's,
    where Streamlit runs its server), or None when unknown (tests give their own)."""

    MIN_FRAMES = 5
    SMOOTHING = 0.2  # weight of the newest measurement

    def __init__(self, guess=FRAME_COST_GUESS, loop=None):
        self.frame_cost = float(guess)
        self.measured = False
        self._loop = loop if loop is not None else _main_thread_cpu
        self._lock = threading.Lock()
        self._costs = []  # frames' CPU seconds since the last measurement
        self._last_loop = self._loop_cpu()

    def _loop_cpu(self):
        try:
            return float(self._loop() or 0.0)
        except Exception:  # (no per-thread times here: the frames alone)
            return 0.0

    def frame(self, cpu_seconds):
        """A page drew a frame of a live run, taking ``cpu_seconds`` of its thread's CPU time."""
        with self._lock:
            self._costs.append(float(cpu_seconds))

    def update(self):
        """Take a measurement (the registry's janitor calls this every tick)."""
        with self._lock:
            if len(self._costs) < self.MIN_FRAMES:
                return
            costs, self._costs = sorted(self._costs), []
        loop = self._loop_cpu()
        spent, self._last_loop = max(0.0, loop - self._last_loop), loop
        middle = len(costs) // 2
        median = costs[middle] if len(costs) % 2 else (costs[middle - 1] + costs[middle]) / 2
        cost = median + spent / len(costs)
        if self.measured:
            self.frame_cost += self.SMOOTHING * (cost - self.frame_cost)
        else:
            self.frame_cost, self.measured = cost, True


def _main_thread_cpu():
    """CPU seconds of this process's main thread so far (psutil's per-thread times; Linux and macOS)."""
    import psutil

    main = threading.main_thread().native_id
    return next((t.user_time + t.system_time for t in psutil.Process().threads() if t.id == main), 0.0)


class RunRegistry:
    """Every run of this server process, by token: for reloads, to admit runs within the server's capacity (and
    queue the rest), to share it fairly, and to bound work and memory.

    max_live_runs: a fixed capacity (None: measured, see :meth:`capacity`); per_browser: each browser key's
    :class:`Share`; cores: the cores the capacity is measured for (default: this process's); frame_seconds: how
    often a live page is redrawn; meter: the :class:`LoadMeter`; live_budget_bytes: the buffers of all admitted live
    runs (more runs wait); reclaim_seconds: a live run that none of its owner's sessions has drawn for this long is
    reclaimed (paused, its place given to the queue, resumable by its owner through :meth:`readmit`), and stopped
    when still unwatched after ttl_seconds; budget_bytes: memory of the runs kept for reload; finished runs beyond
    it, or older than ttl_seconds, are forgotten (oldest first); so is a finished run that no session has owned for
    reload_seconds (a reload comes back within seconds; the session itself, should its browser reconnect, still
    holds its run). A background thread starts queued runs, measures the load, and forgets and reclaims runs even when
    nobody visits; it ends when no run is left. Thread-safe.
    """

    def __init__(self, max_live_runs=None, budget_bytes=1024 * 2**20, ttl_seconds=2 * 3600,
                 reload_seconds=RELOAD_SECONDS, per_browser=SHARE_PER_BROWSER, reclaim_seconds=RECLAIM_SECONDS,
                 cores=None, frame_seconds=FRAME_SECONDS, meter=None, live_budget_bytes=LIVE_BUDGET_BYTES):
        self.max_live_runs = max_live_runs
        self.budget_bytes = budget_bytes
        self.ttl_seconds = ttl_seconds
        self.reload_seconds = reload_seconds
        self.per_browser = per_browser
        self.reclaim_seconds = reclaim_seconds
        self.cores = cores if cores is not None else usable_cpus()
        self.frame_seconds = frame_seconds
        self.meter = meter if meter is not None else LoadMeter()
        self.live_budget_bytes = live_budget_bytes
        self._runs = OrderedDict()
        self._queue = deque()  # queued runs, first come first
        self._lock = threading.Lock()
        self._janitor = None

    # -------------------------------------------------------------- counting (lock held)
    def _admitted(self, skip=()):
        """Runs that hold a place: live, not queued, not reclaimed."""
        return [r for r in self._runs.values()
                if r.token not in skip and r.live and not r.queued and not r.reclaimed]

    def _held(self, browser, skip=()):
        """Live runs (queued and reclaimed ones included) of one browser key."""
        return [r for r in self._runs.values() if r.token not in skip and r.live and r.browser == browser]

    def capacity(self):
        """How many runs may be live at once: the administrator's max_live_runs, else the number of live pages whose
        frames take DRAW_SHARE of one core at the measured cost of a frame (at least MIN_CAPACITY)."""
        if self.max_live_runs is not None:
            return int(self.max_live_runs)
        per_page = self.meter.frame_cost / self.frame_seconds  # of a core, one live page's frames
        return max(MIN_CAPACITY, int(DRAW_SHARE / max(per_page, 1e-6)))

    def live_chains(self):
        """Chains of admitted runs now."""
        with self._lock:
            return sum(r.live_chains() for r in self._admitted())

    def stats(self):
        """{"runs": kept, "live_runs": admitted and live, "live_chains", "queued", "capacity", "frame_cost":
        measured core-seconds per frame}: for the page's words and the server's benchmarks."""
        with self._lock:
            admitted = self._admitted()
            return {"runs": len(self._runs), "live_runs": len(admitted),
                    "live_chains": sum(r.live_chains() for r in admitted),
                    "queued": sum(1 for r in self._queue if r.live), "capacity": self.capacity(),
                    "frame_cost": self.meter.frame_cost}

    @staticmethod
    def _when_free_cost(runs, held, limit, needed):
        """Seconds until ``needed`` core-seconds fit under ``limit`` as ``runs`` (holding ``held``) end at their
        present speed; inf when ending alone never frees enough (paused runs)."""
        free = limit - held
        for seconds, cost in sorted((r.seconds_to_end(), r.remaining_cost()) for r in runs):
            free += cost
            if free >= needed:
                return seconds
        return math.inf

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

    def _when_text(self, seconds):
        if math.isinf(seconds):
            return (f"None of them is due to end soon (some are paused): stop one, or wait: a run that nobody "
                    f"watches for {self.reclaim_seconds / 60:g} minutes gives its place back.")
        return f"At their present speed enough of them end in {describe_wait(seconds)}: try again then."

    def _check_share(self, run, skip):
        """Raise ServerBusy when ``run`` would exceed its browser's share (lock held)."""
        share = self.per_browser
        if share is None or run.browser is None:
            return
        needed = len(run.chains)
        held = self._held(run.browser, skip)
        chains = sum(r.live_chains() for r in held)
        cost = sum(r.remaining_cost() for r in held)
        if run.cost > share.core_seconds:
            raise ServerBusy(
                f"This run needs about {describe_seconds(run.cost)} of sampling "
                f"({describe_work(run.dataset.n, run.dataset.X.shape[1], run.plan.iters, needed)}), more than "
                f"the {describe_seconds(share.core_seconds)} of live runs one browser may hold at once on this "
                "server. Use fewer sweeps, chains or points, or run it with the command line (`pcrp run`), which has "
                "no such limit.", reason="work")
        if cost + run.cost > share.core_seconds:
            wait = self._when_free_cost(held, cost, share.core_seconds, run.cost)
            raise ServerBusy(
                f"This browser's other tabs already run about {describe_seconds(cost)} of sampling, and one browser "
                f"may hold at most {describe_seconds(share.core_seconds)} at once on this server; this run needs "
                f"about {describe_seconds(run.cost)}. Stop a run in another tab of this browser. "
                + self._when_text(wait), reason="browser", retry_after=wait)
        if chains + needed > share.chains:
            wait = self._when_free(held, chains, share.chains, needed)
            raise ServerBusy(
                f"This browser's other tabs already run {chains} chains, and one browser may hold at most "
                f"{share.chains} at once on this server; this run needs {needed}. Stop a run in another tab of this "
                "browser. " + self._when_text(wait), reason="browser", retry_after=wait)

    def _has_room(self, run, admitted):
        """Whether ``run`` fits beside the ``admitted`` runs now: a place, and room in the live memory budget."""
        if len(admitted) >= self.capacity():
            return False
        return not admitted or sum(r.plan.bytes for r in admitted) + run.plan.bytes <= self.live_budget_bytes

    def _admit(self, run):
        """(Lock held.) Give ``run`` a place: start it, or resume it when it was reclaimed or queued after a start."""
        run.queued = False
        run.watch()
        if not run.live:  # (ended meanwhile, or added ended: kept for its page, nothing to start)
            return
        if run.reclaimed:
            run.reclaimed = False
            run.resume()
        elif not run.started:
            run.start()
        else:
            run.resume()

    def _next_in_queue(self, admitted):
        """(Lock held.) The queued run that the next place goes to: the one whose address holds the fewest admitted
        runs, then the one queued first; None when the queue is empty."""
        held = {}
        for r in admitted:
            held[r.address] = held.get(r.address, 0) + 1
        waiting = [r for r in self._queue if r.live]
        return min(waiting, key=lambda r: held.get(r.address, 0), default=None)

    def _promote(self):
        """(Lock held.) Start queued runs while there is room; drop from the queue what is no longer waiting."""
        for run in [r for r in self._queue if not r.live]:
            self._queue.remove(run)
        while self._queue:
            admitted = self._admitted()
            run = self._next_in_queue(admitted)
            if run is None or not self._has_room(run, admitted):
                return
            self._queue.remove(run)
            self._admit(run)

    # -------------------------------------------------------------- admitting runs
    def add(self, run, replacing=None):
        """Register a new run (not started yet, its pace set): it starts at once when the server has room, else it
        waits in the queue (``run.queued``) and starts by itself. Raises ServerBusy (registering nothing) when it
        would exceed its browser's share. ``replacing``: the run this one replaces (the page stops it once this one
        is added): it is not counted."""
        skip = {replacing.token} if replacing is not None else set()
        with self._lock:
            self._check_share(run, skip)
            run.queued = True  # (not counted as admitted while the queue goes first)
            self._runs[run.token] = run
            self._promote()
            admitted = self._admitted(skip)
            if not self._queue and self._has_room(run, admitted):
                self._admit(run)
            else:
                run.watch()
                self._queue.append(run)
            self._evict()
            self._start_janitor()
        return not run.queued

    def readmit(self, run):
        """Resume a reclaimed run (its owner pressed Resume): at once when the server has room, else it waits in the
        queue and resumes by itself. Returns whether it resumed now."""
        with self._lock:
            if not run.reclaimed or run.queued:
                run.watch()
                if not run.queued:
                    run.resume()
                return not run.queued
            admitted = self._admitted(skip={run.token})
            if not self._queue and self._has_room(run, admitted):
                self._admit(run)
                return True
            run.queued = True
            run.watch()
            self._queue.append(run)
            return False

    def queue_place(self, run):
        """(place, of, seconds) of a queued run: its place in the order in which the queue would start runs now
        (1 = next), the runs waiting, and the estimated seconds until a place is free for it (the place-th soonest
        end among the live runs at their present speed; inf when not that many are due to end); None when the run
        is not queued."""
        with self._lock:
            if not run.queued or run not in self._queue:
                return None
            admitted = self._admitted()
            order, waiting = [], [r for r in self._queue if r.live]
            held = {}
            for r in admitted:
                held[r.address] = held.get(r.address, 0) + 1
            while waiting:
                nxt = min(waiting, key=lambda r: held.get(r.address, 0))
                order.append(nxt)
                waiting.remove(nxt)
                held[nxt.address] = held.get(nxt.address, 0) + 1
            place = order.index(run) + 1 if run in order else len(order)
            free = max(0, self.capacity() - len(admitted))
            ends = sorted(r.seconds_to_end() for r in admitted)
            need = place - free
            seconds = 0.0 if need <= 0 else (ends[need - 1] if need <= len(ends) else math.inf)
            return place, len(order), seconds

    def queue_text(self, run):
        """The queued run's place and wait, in plain words (empty when it is not queued)."""
        where = self.queue_place(run)
        if where is None:
            return ""
        place, waiting, seconds = where
        live = self.stats()["live_runs"]
        why = ("as many as its administrator allows at once" if self.max_live_runs is not None else
               "as many as it can keep drawing smoothly")
        wait = ("it starts by itself as soon as one of them ends or is stopped" if math.isinf(seconds) else
                f"it starts by itself, in {describe_wait(seconds)} at their present speed")
        return (f"This server has {live} runs live, {why}, so yours waits in the queue: {ordinal(place)} of "
                f"{waiting}; {wait}. Keep this page open (Reset leaves the queue).")

    def share_text(self, run):
        """How the admitted ``run`` shares the server, in plain words: how many runs share it now and the pace this
        one gets against the pace it asks for; empty while it is the only live run (or not admitted)."""
        with self._lock:
            live = len(self._admitted())
        if run.queued or run.reclaimed or live < 2:
            return ""
        rates, asked = [], set()
        for chain in run.chains.values():
            done, state, rate = chain.progress()
            if state == RUNNING and rate > 0:
                rates.append(rate)
                asked.add(chain.pace)
        head = f"{live} runs share this server's {self.cores} cores now"
        if not rates:
            return head + "."
        rate = min(rates)
        pace = max(asked, key=lambda p: math.inf if p is None else p)
        if pace is None:
            return (f"{head}; this one runs as fast as its share of them allows, {rate:,.0f} sweeps/s, and every run "
                    "slows alike as more start.")
        if rate >= 0.9 * pace:
            return f"{head}; each still runs at the pace it asks for ({pace:,.0f} sweeps/s)."
        return (f"{head}; this one gets about {rate:,.0f} of the {pace:,.0f} sweeps/s it asks for, as every run slows "
                "alike while the cores are full.")

    # -------------------------------------------------------------- the janitor
    def _start_janitor(self):
        if self._janitor is None:
            self._janitor = threading.Thread(target=self._sweep, daemon=True, name="pcrp-run-janitor")
            self._janitor.start()

    def _sweep(self):
        while True:
            time.sleep(min(TICK_SECONDS, self.reload_seconds / 4, self.reclaim_seconds / 4))
            if not self.sweep():  # nothing left to forget: the next add starts a new sweep
                return

    def sweep(self):
        """Measure the load, forget what is due (see :meth:`_evict`), drop queued runs whose pages have gone,
        reclaim runs nobody has watched for reclaim_seconds, stop reclaimed runs still unwatched after ttl_seconds,
        and start queued runs where there is room; returns whether any run is left. The janitor thread calls this
        every TICK_SECONDS."""
        self.meter.update()
        with self._lock:
            if self._evict():
                release_soon()  # the forgotten runs' buffers: give them back to the system (pcrp.app.memory)
            for run in list(self._runs.values()):
                if not run.live:
                    continue
                if run.queued:
                    reason = run.orphan_reason()  # (its chains have no thread to notice)
                    if reason:
                        run.stop(reason, wait=0)
                    continue
                unwatched = run.unwatched_for()
                if run.reclaimed and unwatched > self.ttl_seconds:
                    run.stop(f"nobody watched it for {self.ttl_seconds / 3600:g} hours", wait=0)
                elif not run.reclaimed and unwatched > self.reclaim_seconds:
                    run.reclaimed = True
                    run.pause(wait=0)
                    LOG.info("reclaimed a run nobody watched for %.0f s", unwatched)
            self._promote()
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
        """Forget the ended runs that are due (over the memory budget, past ttl_seconds, or orphaned for
        reload_seconds); returns whether any was forgotten."""
        now = time.time()
        forgot = False
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
                forgot = True
                if orphaned is not None:  # no page shows it: free its memory now
                    run.discard()
        return forgot

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

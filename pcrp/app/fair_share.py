"""The server's runs and the fair share of its live pool: limits per browser and per network address, work
budgets, reclaiming unwatched runs, and forgetting ended ones within a memory budget.

Nothing here knows about Streamlit. :class:`RunRegistry` keeps every :class:`pcrp.app.live_runs.LiveRun` of the
server process by token (a browser's reload finds its own run again), admits a run only within its visitor's
:class:`Share` and the pool (:class:`ServerBusy` says which limit and when to try again), and frees what has ended.
:class:`SessionOwner` is one browser session's claim on its runs.
"""

import logging
import math
import secrets
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass

from ..sampling.compute import describe_seconds, describe_work
from .live_runs import RELOAD_SECONDS

LOG = logging.getLogger(__name__)


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
# A live run that none of its owner's sessions has drawn for this long (the page redraws it every second, and a
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


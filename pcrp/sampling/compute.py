"""The server's compute slots, and work that a visitor starts and that can be cancelled.

Every kernel call made for a visitor (a live chain's 0.1 s step, a cross-validation fit's chunk) holds one of
``COMPUTE_SLOTS``, one per usable core, so a server's chains and fits together never crowd its cores (with 16
runnable threads on 2 cores the operating system suspends threads that hold Python's lock and the web server
stalls). A :class:`WorkTicket` is one visitor action's claim: it takes a slot around each kernel call, carries
a budget of estimated core-seconds that the action may use (:func:`work_cost`, the one estimate of what sampling
costs), and is cancelled when the visitor goes away (the page's session ends), after which its next slot request
raises :class:`WorkCancelled`. Nothing here knows Streamlit.
"""

import math
import os
import threading
import time
from collections import deque
from contextlib import contextmanager


def usable_cpus():
    """Cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


SLOT_WAIT_SECONDS = 0.1  # a thread waiting for a compute slot looks at whether to give up this often


class FairSlots:
    """``n`` slots handed out first come, first served: a released slot goes to the thread that has waited longest.

    A semaphore lets the thread that releases a slot take it again before a waiting thread wakes, so with more
    chains than cores some chains ran for 0.95 of their share and others for 0.71 (five rows on two cores,
    docs/records/live_canvas.md). Here each waiter keeps its place in the queue while it looks at ``give_up``
    every ``poll`` seconds, and a release hands the slot to the first waiter directly. Thread-safe.
    """

    def __init__(self, n):
        if n < 1:
            raise ValueError(f"slots must be at least 1, not {n}")
        self.n = n
        self._free = n
        self._waiters = deque()  # threading.Event per waiting thread, first come first
        self._lock = threading.Lock()

    def acquire(self, timeout=None, give_up=None, poll=SLOT_WAIT_SECONDS, first=False):
        """Take a slot: True once taken; False when ``timeout`` seconds passed (None: no limit) or the callable
        ``give_up`` returned true (asked every ``poll`` seconds while waiting) before a slot came. first: go before
        every waiting thread (a visitor's press that waits for one call: One sweep), not after them."""
        with self._lock:
            if self._free and not self._waiters:
                self._free -= 1
                return True
            handed = threading.Event()
            if first:
                self._waiters.appendleft(handed)
            else:
                self._waiters.append(handed)
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            wait = poll if deadline is None else max(0.0, min(poll, deadline - time.monotonic()))
            if handed.wait(wait):
                return True
            if (give_up is not None and give_up()) or (deadline is not None and time.monotonic() >= deadline):
                with self._lock:
                    if handed.is_set():  # handed over meanwhile: it is ours
                        return True
                    self._waiters.remove(handed)
                    return False

    def release(self):
        with self._lock:
            if self._waiters:
                self._waiters.popleft().set()
            elif self._free < self.n:
                self._free += 1
            else:
                raise ValueError("a slot released more times than taken")


COMPUTE_SLOTS = FairSlots(usable_cpus())
BACKGROUND_NICE = 10  # niceness of a visitor's compute threads: the page's own work goes first


def describe_machine():
    """"2 cores (Intel(R) Xeon(R) Processor), 24 GiB, Linux, Python 3.11.7": what a figure was measured on."""
    import platform

    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            model = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), model)
    except OSError:
        pass
    try:
        import psutil

        memory = f", {psutil.virtual_memory().total / 2**30:.0f} GiB"
    except ImportError:
        memory = ""
    return f"{usable_cpus()} cores ({model}){memory}, {platform.system()}, Python {platform.python_version()}"


def lower_thread_priority(nice=BACKGROUND_NICE):
    """Give the calling thread a lower CPU priority (Linux: a thread has its own niceness). The web server
    and the script runs that draw the pages then take a core first when they need one, so Pause, Stop and the
    redraws answer within a fraction of a second although the chains keep every core busy; the chains lose
    only the time those take. A no-op where threads have no priority of their own (not Linux) or the
    priority is already lower."""
    if not hasattr(os, "setpriority") or not hasattr(threading, "get_native_id"):
        return
    try:
        tid = threading.get_native_id()
        if os.getpriority(os.PRIO_PROCESS, tid) < nice:
            os.setpriority(os.PRIO_PROCESS, tid, nice)
    except OSError:
        pass


# ----------------------------------------------------------------------------- what sampling costs
# The one estimate of what sampling costs, used by every work budget (Choose r, Reproduce, the Explorer's live
# runs, the per-visitor share of the live pool). A sweep evaluates every point against every cluster and a new one:
# points x (clusters + 1) evaluations, each a Student-t density and, when the point moves, rank-one updates of a
# d x d Cholesky factor, so its time grows with d and, beyond d of about 7, like d^2. Measured by
# `python bench/work_cost.py` (whole chains with the default k-means start and split-merge moves, one core; 2026-12-04,
# load average 1-4): per evaluation at the chain's own mean K, 25-33 ns at d = 1-2, about 100 at d = 10, 220 at
# d = 20, 1,600-1,900 at d = 50 (1.5-2 times that at load average 7-8). A and B are fitted to those, rounded up.
EVALUATION_SECONDS = (30e-9, 0.65e-9)  # seconds per point-cluster evaluation: A + B d^2


def expected_clusters(n_points):
    """The number of clusters a chain is expected to hold: the CRP's (alpha = 1) prior mean E[K_N] =
    sum_{i=1}^{N} 1 / i, about ln N + 0.58 (6.2 at N = 272, 8.2 at 2,000, 12.1 at 100,000). Chains on real data
    hold about that many or fewer once past the start (bench/work_cost.py prints both)."""
    n = max(int(n_points), 1)
    if n <= 1000:
        return float(sum(1.0 / i for i in range(1, n + 1)))
    return float(math.log(n) + 0.5772156649015329 + 1 / (2 * n) - 1 / (12 * n * n))


def evaluation_seconds(dims):
    """Core-seconds of one point-cluster evaluation at ``dims`` dimensions (see EVALUATION_SECONDS)."""
    a, b = EVALUATION_SECONDS
    return a + b * float(dims) ** 2


def work_cost(n_points, dims, sweeps, *, chains=1, clusters=None):
    """Estimated core-seconds of ``chains`` chains of ``sweeps`` sweeps on ``n_points`` points in ``dims``
    dimensions: points x (expected clusters + 1) x sweeps x chains evaluations at :func:`evaluation_seconds`
    (dims) each. clusters: the clusters a chain holds (default :func:`expected_clusters` (n_points)). The one
    formula of every work budget; callers never count work another way."""
    k = expected_clusters(n_points) if clusters is None else float(clusters)
    return float(n_points) * (k + 1.0) * float(sweeps) * float(chains) * evaluation_seconds(dims)


def describe_seconds(seconds):
    """Core-seconds in words: '40 core-seconds', '12 core-minutes', '3.5 core-hours'."""
    if seconds < 120:
        return f"{seconds:,.0f} core-second{'s' if round(seconds) != 1 else ''}"
    if seconds < 2 * 3600:
        return f"{seconds / 60:,.0f} core-minutes"
    return f"{seconds / 3600:,.1f} core-hours"


def describe_work(n_points, dims, sweeps, chains=1):
    """What :func:`work_cost` counted, in words, for a message."""
    return (f"{chains:,} chain{'s' if chains != 1 else ''} x {int(sweeps):,} sweeps x {int(n_points):,} points x "
            f"({expected_clusters(n_points):.1f} expected clusters + 1) at d = {int(dims)}")


CALL_SECONDS = 0.1  # kernel call length of ticketed work: cancellation is seen within about this


class WorkCancelled(Exception):
    """The work's ticket was cancelled (its visitor left, or started other work); the message says why."""


class WorkOverBudget(ValueError):
    """Work larger than its ticket's budget, refused before it starts; the message names the budget."""


class WorkTicket:
    """One visitor action's work: kernel calls under a compute slot, a budget, cancellation.

    budget: estimated core-seconds (:func:`work_cost`, summed over every chain) the action may use, or None for no
    limit; slots: the :class:`FairSlots` to take one of around each kernel call. Thread-safe.
    """

    def __init__(self, budget=None, slots=COMPUTE_SLOTS):
        self.budget = budget
        self.reserved = 0.0
        self.reason = ""
        self._slots = slots
        self._cancelled = threading.Event()
        self._lock = threading.Lock()

    def cancel(self, reason="cancelled"):
        with self._lock:
            if not self._cancelled.is_set():
                self.reason = reason
                self._cancelled.set()

    @property
    def cancelled(self):
        return self._cancelled.is_set()

    def check(self):
        """Raise WorkCancelled if the ticket has been cancelled."""
        if self._cancelled.is_set():
            raise WorkCancelled(f"stopped: {self.reason}")

    def reserve(self, seconds, what):
        """Count ``seconds`` (estimated core-seconds, from :func:`work_cost`) of ``what`` (a phrase for the message)
        against the budget before they run; raises WorkOverBudget, reserving nothing, when the total would exceed
        it. The message gives the estimate and the limit."""
        with self._lock:
            total = self.reserved + float(seconds)
            if self.budget is not None and total > self.budget:
                raise WorkOverBudget(
                    f"{what} needs about {describe_seconds(seconds)} of sampling, more than the "
                    f"{describe_seconds(self.budget - self.reserved)} left of this action's budget of "
                    f"{describe_seconds(self.budget)}")
            self.reserved = total

    @contextmanager
    def slot(self):
        """Hold one compute slot for a kernel call; raises WorkCancelled while waiting or before starting."""
        if not self._slots.acquire(give_up=lambda: self.cancelled):
            self.check()
        try:
            self.check()
            yield
        finally:
            self._slots.release()


class SessionWork:
    """The tickets of the work one browser session has started outside live runs (the Choose r page's fits).

    :meth:`start` cancels the session's earlier tickets (one action at a time per session); :meth:`cancel_all`
    is called when the session ends (the app releases it when the tab closes or reloads), so that its fits
    stop instead of running on for nobody.
    """

    def __init__(self):
        self._tickets = set()
        self._lock = threading.Lock()

    def start(self, ticket, reason="other work was started in this tab"):
        with self._lock:
            earlier, self._tickets = self._tickets, {ticket}
        for old in earlier:
            old.cancel(reason)
        return ticket

    def finish(self, ticket):
        with self._lock:
            self._tickets.discard(ticket)

    def cancel_all(self, reason="the page was closed"):
        with self._lock:
            tickets, self._tickets = self._tickets, set()
        for ticket in tickets:
            ticket.cancel(reason)

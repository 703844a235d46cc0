"""The server's compute slots, and work that a visitor starts and that can be cancelled.

Every kernel call made for a visitor (a live chain's 0.1 s step, a cross-validation fit's chunk) holds one of
``COMPUTE_SLOTS``, one per usable core, so a server's chains and fits together never crowd its cores (with 16
runnable threads on 2 cores the operating system suspends threads that hold Python's lock and the web server
stalls). A :class:`WorkTicket` is one visitor action's claim: it takes a slot around each kernel call, carries
a budget of point-sweeps that the action may use, and is cancelled when the visitor goes away (the page's
session ends), after which its next slot request raises :class:`WorkCancelled`. Nothing here knows Streamlit.
"""

import os
import threading
from contextlib import contextmanager


def usable_cpus():
    """Cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


COMPUTE_SLOTS = threading.BoundedSemaphore(usable_cpus())
BACKGROUND_NICE = 10  # niceness of a visitor's compute threads: the page's own work goes first


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
SLOT_WAIT_SECONDS = 0.1  # a waiting ticket looks at its cancellation this often
CALL_SECONDS = 0.1  # kernel call length of ticketed work: cancellation is seen within about this


class WorkCancelled(Exception):
    """The work's ticket was cancelled (its visitor left, or started other work); the message says why."""


class WorkOverBudget(ValueError):
    """Work larger than its ticket's budget, refused before it starts; the message names the budget."""


class WorkTicket:
    """One visitor action's work: kernel calls under a compute slot, a point-sweep budget, cancellation.

    budget: point-sweeps (points x sweeps, summed over every chain) the action may use, or None for no limit;
    slots: the semaphore to take around each kernel call. Thread-safe.
    """

    def __init__(self, budget=None, slots=COMPUTE_SLOTS):
        self.budget = budget
        self.reserved = 0
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

    def reserve(self, point_sweeps, what):
        """Count ``point_sweeps`` of ``what`` (a phrase for the message) against the budget before they run;
        raises WorkOverBudget, reserving nothing, when the total would exceed it."""
        with self._lock:
            total = self.reserved + int(point_sweeps)
            if self.budget is not None and total > self.budget:
                raise WorkOverBudget(
                    f"{what} needs {int(point_sweeps):,} point-sweeps (points x sweeps over every chain), more than "
                    f"the {self.budget - self.reserved:,} left of this action's budget of {self.budget:,}")
            self.reserved = total

    @contextmanager
    def slot(self):
        """Hold one compute slot for a kernel call; raises WorkCancelled while waiting or before starting."""
        while not self._slots.acquire(timeout=SLOT_WAIT_SECONDS):
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

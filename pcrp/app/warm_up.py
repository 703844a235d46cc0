"""The kernels compiled out of the server's process, once per installation, while the first visitors arrive.

numba holds the GIL while it compiles (half a minute for every kernel on a 2-core machine), so a compile inside the
server would stop every visitor's page for as long. When the server starts, :func:`start` runs ``pcrp compile`` in
a separate process at a lower priority; it fills numba's cache (a second start finds it filled, and is done in about
a second). A reader thread follows its progress lines, and once it has finished, loads the kernels from the cache
into the server (about half a second). Until then :func:`state` says what it is compiling and for how long, and a
page that needs the sampler waits for it with :func:`wait_until_ready`, showing that progress.

Nothing here imports Streamlit; the pages show :func:`WarmUp.describe`.
"""

import logging
import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass

LOG = logging.getLogger("pcrp.app")
NICE = 10  # the compile's priority, as the chains' threads: the server's own thread keeps a core
TAIL_LINES = 20  # the last lines of the compile's output kept for a failure's message


@dataclass(frozen=True)
class WarmUp:
    """Where the kernels' compile stands. ``group``: what is compiling now ("" before the first line and once done);
    ``apart``: what compiles at the same time in a second process (""); ``groups_done`` of ``n_groups``; ``seconds``
    since it started; ``error``: why it failed, or ""."""

    started: bool
    ready: bool
    group: str
    apart: str
    groups_done: int
    n_groups: int
    seconds: float
    error: str

    def describe(self):
        """One line for a page: what the sampler waits for, with measured figures only."""
        if self.error:
            return f"The sampler could not be prepared: {self.error}"
        if self.ready:
            return "The sampler is ready."
        doing = f"compiling {self.group}" if self.group else "checking numba's cache"
        where = "a separate process"
        if self.apart and self.group:
            doing, where = f"{doing}, and {self.apart} beside it", "separate processes"
        return (f"Preparing the sampler, once per installation, in {where}: {doing} "
                f"({self.groups_done} of {self.n_groups} parts done), {self.seconds:.0f} s so far.")


class _Compile:
    """The one compile of this server process: its child process, the thread reading it and what it said."""

    def __init__(self):
        self.lock = threading.Lock()
        self.started_at = None
        self.finished = threading.Event()
        self.group = ""
        self.apart = ""
        self.groups_done = 0
        self.error = ""
        self.tail = []

    def start(self, command):
        with self.lock:
            if self.started_at is not None:
                return
            self.started_at = time.monotonic()
        threading.Thread(target=self._run, args=(command,), name="pcrp-compile", daemon=True).start()

    def _run(self, command):
        try:
            child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                     preexec_fn=_lower_priority if os.name == "posix" else None)
            for line in child.stdout:
                self._read(line.rstrip("\n"))
            if child.wait() != 0:
                self.error = ("the compile exited with status "
                              f"{child.returncode}: {' | '.join(self.tail[-3:]) or 'no output'}")
            else:
                self._load()
        except Exception as err:  # the page shows it; the server goes on
            self.error = f"{type(err).__name__}: {err}"
        finally:
            if self.error:
                LOG.error("pcrp: the kernels' compile failed: %s", self.error)
            self.finished.set()

    def _read(self, line):
        self.tail = (self.tail + [line])[-TAIL_LINES:]
        if line.startswith("compiling "):
            name = line[len("compiling "):].split(" (once", 1)[0]
            if line.endswith("in a separate process meanwhile ..."):
                self.apart = name
            else:
                self.group = name
        elif line.lstrip().startswith("compiled in "):
            self.groups_done += 1
            self.group = ""

    def _load(self):
        """Load every kernel from the cache the child filled; a compile here would stall the server, so one is
        logged as an error (it means the child's cache is not this process's)."""
        from ..runs.compiling import compile_kernels, watching_compiles

        with watching_compiles() as compiled:
            compile_kernels(None)
        if compiled:
            LOG.error("pcrp: the server compiled %d kernels itself after the separate compile (is numba's cache "
                      "writable and shared? NUMBA_CACHE_DIR): %s", len(compiled), ", ".join(compiled[:5]))

    def state(self):
        from ..runs.compiling import KERNEL_GROUPS

        started = self.started_at is not None
        done = self.finished.is_set()
        return WarmUp(started=started, ready=done and not self.error, group="" if done else self.group,
                      apart="" if done else self.apart, groups_done=self.groups_done, n_groups=len(KERNEL_GROUPS),
                      seconds=time.monotonic() - self.started_at if started else 0.0, error=self.error)


def _lower_priority():
    os.nice(NICE)


_COMPILE = _Compile()


def start(command=None):
    """Start the kernels' compile in a separate process, once per server process (later calls do nothing).
    command: the argv to run (default: this Python running ``pcrp compile``)."""
    _COMPILE.start(command or [sys.executable, "-m", "pcrp.cli", "compile"])


def state():
    """Where the compile stands (:class:`WarmUp`)."""
    return _COMPILE.state()


def wait_until_ready(on_progress=None, poll=0.5, timeout=None):
    """Block the calling thread (sleeping: other sessions run) until the kernels are ready or the compile failed,
    starting it if nobody has; ``on_progress(state)`` after every ``poll`` seconds. Returns the final state (its
    ``error`` says why when it failed, and so does a timeout)."""
    start()
    deadline = None if timeout is None else time.monotonic() + timeout
    while not _COMPILE.finished.wait(poll):
        if on_progress is not None:
            on_progress(state())
        if deadline is not None and time.monotonic() > deadline:
            return WarmUp(**{**state().__dict__, "error": f"not ready after {timeout:.0f} s"})
    return state()

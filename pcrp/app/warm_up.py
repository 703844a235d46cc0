"""The kernels compiled out of the server's process, once per installation, while the first visitors arrive.

numba holds the GIL while it compiles (tens of seconds for every kernel on a 2-core machine), so a compile inside the
server would stop every visitor's page for as long. When the server starts, :func:`start` runs the compile of every
group (:func:`pcrp.runs.compiling.compile_kernels`) in a separate process at a lower priority, through its entry
point in the runs layer (:mod:`pcrp.runs.compile_worker`, which imports the server's own pcrp). It fills numba's
cache (a second start finds it filled, and is done in about a second) and compiles the full covariance type's
sweep first, the one the Explorer starts with. A reader thread follows its progress, JSON lines it reads as data,
and loads each group into the server from the cache as soon as it is ready (about half a second each), so a Start
waits only for the group it needs. Until then :func:`state` says what is compiling and for how long, and a page that
needs the sampler waits for it with :func:`wait_until_ready`, showing that progress.

Nothing here imports Streamlit; the pages show :func:`WarmUp.describe`.
"""

import json
import logging
import os
import subprocess
import threading
import time
from dataclasses import dataclass

LOG = logging.getLogger("pcrp.app")
NICE = 10  # the compile's priority, as the chains' threads: the server's own thread keeps a core
TAIL_LINES = 20  # the last lines of the compile's stderr kept for a failure's message


@dataclass(frozen=True)
class WarmUp:
    """Where the kernels' compile stands, for what a page needs (``need``: a covariance type's sweep, or every group
    when None). ``ready``: what it needs is loaded in the server; ``compiling``: what compiles now, in words (""
    before the first report and once done); ``groups_done`` of ``n_groups``; ``seconds`` since it started;
    ``error``: why it failed, or ""."""

    started: bool
    ready: bool
    compiling: str
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
        doing = f"compiling {self.compiling}" if self.compiling else "checking numba's cache"
        return (f"Preparing the sampler, once per installation, in separate processes: {doing} "
                f"({self.groups_done} of {self.n_groups} parts done), {self.seconds:.0f} s so far.")


class _Compile:
    """The one compile of this server process: its child process, the thread reading it and what it reported."""

    def __init__(self):
        self.lock = threading.Lock()
        self.started_at = None
        self.finished = threading.Event()
        self.changed = threading.Condition(self.lock)
        self.compiling = []  # groups reported compiling and not yet ready, in order
        self.loaded = set()  # groups loaded into this process
        self.error = ""
        self.tail = []
        self.reader = None  # the thread that follows the child and loads each group

    def start(self, command):
        with self.lock:
            if self.started_at is not None:
                return
            self.started_at = time.monotonic()
        from ..kernels import apart
        from ..runs.compiling import SEARCH

        apart.expect(SEARCH, _wait_for_search)
        self.reader = threading.Thread(target=self._run, args=(command,), name="pcrp-compile", daemon=True)
        self.reader.start()

    def _run(self, command):
        try:
            child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                                     text=True, preexec_fn=_lower_priority if os.name == "posix" else None)
            threading.Thread(target=self._read_stderr, args=(child,), name="pcrp-compile-stderr", daemon=True).start()
            for line in child.stdout:
                try:
                    event = json.loads(line)
                except ValueError:
                    continue  # not one of its events
                self._read(event)
            if child.wait() != 0 and not self.error:
                self.error = (f"the compile exited with status {child.returncode}: "
                              f"{' | '.join(line for line in self.tail[-3:] if line) or 'no output'}")
            missing = [group for group in _groups() if group not in self.loaded]
            if missing and not self.error:
                self.error = f"the compile ended without {', '.join(missing)}"
        except Exception as err:  # the page shows it; the server goes on
            self.error = f"{type(err).__name__}: {err}"
        finally:
            if self.error:
                LOG.error("pcrp: the kernels' compile failed: %s", self.error)
            with self.lock:
                self.finished.set()
                self.changed.notify_all()

    def _read_stderr(self, child):
        for line in child.stderr:
            self.tail = (self.tail + [line.rstrip("\n")])[-TAIL_LINES:]

    def _read(self, event):
        kind, group = event.get("event"), event.get("group")
        if kind == "compiling" and group:
            with self.lock:
                if group not in self.compiling:
                    self.compiling.append(group)
        elif kind == "ready" and group:
            self._load(group)
            with self.lock:
                self.loaded.add(group)
                if group in self.compiling:
                    self.compiling.remove(group)
                self.changed.notify_all()
        elif kind == "failed" and event.get("error"):
            LOG.warning("pcrp: the kernels' compile: %s (%s)", event["error"], group or "a part")

    def _load(self, group):
        """Load a group from the cache the child filled; a compile here would stall the server, so one is logged as
        an error (it means the child's cache is not this process's)."""
        from ..runs.compiling import run_part, watching_compiles

        with watching_compiles() as compiled:
            run_part(group)
        if compiled:
            LOG.error("pcrp: the server compiled %d kernels itself after the separate compile (is numba's cache "
                      "writable and shared? NUMBA_CACHE_DIR): %s", len(compiled), ", ".join(compiled[:5]))

    def state(self, need):
        from ..runs.compiling import GROUPS

        groups = _groups()
        with self.lock:
            started = self.started_at is not None
            done = self.finished.is_set()
            loaded = set(self.loaded)
            compiling = [GROUPS[group] for group in self.compiling]
        ready = all(group in loaded for group in _needed(need))
        return WarmUp(started=started, ready=ready, compiling="" if done else ", ".join(compiling),
                      groups_done=len(loaded & set(groups)),
                      n_groups=len(groups), seconds=time.monotonic() - self.started_at if started else 0.0,
                      error="" if ready else self.error)


def _groups():
    from ..runs.compiling import GROUPS

    return list(GROUPS)


def _needed(need):
    """The groups a page needs: one covariance type's sweep ("full"), one group by its name ("search"), or all of
    them (None)."""
    from ..runs.compiling import COVARIANCE_TYPES, sweep_group

    if need is None:
        return _groups()
    return [sweep_group(need) if need in COVARIANCE_TYPES else need]


def _wait_for_search():
    """Before the point estimate's search is first used here (pcrp.kernels.apart): a summary that needs it before
    the separate compile has reached it waits for it, sleeping, rather than compiling it in the server's process and
    holding the GIL from every visitor meanwhile. The reader thread's own load of the search passes."""
    from ..runs.compiling import SEARCH

    if threading.current_thread() is not _COMPILE.reader:
        wait_until_ready(need=SEARCH)


def _lower_priority():
    os.nice(NICE)


_COMPILE = _Compile()


def start(command=None):
    """Start the kernels' compile in a separate process, once per server process (later calls do nothing).
    command: the argv to run (default: the runs layer's entry point compiling every group,
    :func:`pcrp.runs.compiling.worker_command`)."""
    if command is None:
        from ..runs.compiling import worker_command

        command = worker_command(everything=True)
    _COMPILE.start(command)


def state(need=None):
    """Where the compile stands (:class:`WarmUp`) for what a page needs: the sweep of a covariance type ("full",
    "diag", "spherical"), one group by its name (``pcrp.runs.compiling.GROUPS``), or every group (None)."""
    return _COMPILE.state(need)


def wait_until_ready(on_progress=None, poll=0.5, timeout=None, need=None):
    """Block the calling thread (sleeping: other sessions run) until what the page needs (see :func:`state`) is ready
    or the compile failed, starting it if nobody has; ``on_progress(state)`` after every ``poll`` seconds. Returns the
    final state (its ``error`` says why when it failed, and so does a timeout)."""
    start()
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        now = state(need)
        if now.ready or _COMPILE.finished.is_set():
            return state(need)
        with _COMPILE.lock:
            _COMPILE.changed.wait(poll)
        if on_progress is not None:
            on_progress(state(need))
        if deadline is not None and time.monotonic() > deadline:
            return WarmUp(**{**state(need).__dict__, "error": f"not ready after {timeout:.0f} s"})

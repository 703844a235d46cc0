"""Compiling the kernels: what the work at hand uses, when it needs it, on both cores, and saying so (docs/design.md
section 8).

numba compiles a kernel the first time an installation uses it and loads it from its cache afterwards (next to the
kernels' source, or in NUMBA_CACHE_DIR). The kernels come in groups (:data:`GROUPS`): each covariance type's sweep
with its split-merge moves (numba compiles the sweep once per type in use), and the point estimate's search.
:func:`compile_kernels` compiles, or loads, what its caller needs:

- a run or a fit (``covariance_type`` given): the sweep of its type here, and the point estimate's search in a
  separate process beside the sampling. The summaries wait for that process just before they first need the search
  (:mod:`pcrp.kernels.apart`), by which time it has usually finished;
- ``pcrp compile`` and the app's warm-up (``covariance_type=None``): every group.

numba compiles one function at a time per process, so a cold cache is compiled by two processes at once (the parts
of a sweep: :mod:`pcrp.sampling.sampler`): while this process compiles the seating of points (SEATING), the separate
one compiles the split-merge move (MOVES), then the search; this process then compiles the sweep (SWEEP), which links
both in, loading the move from the cache once the separate process has finished it. Every group: each covariance
type the same way, one type at a time. Two processes never compile different signatures of one kernel at the same
time (numba writes a kernel's cache index without a lock, and two new entries saved at once could lose one or swap
their data): the separate process compiles a part of the covariance type this process compiles meanwhile (a type's
move after the first waits for a line on its stdin that this process has finished the sweep before), or the search,
which shares no kernel with the sweeps but xoshiro's shuffle, of the same signature.

The separate process (:mod:`pcrp.runs.compile_worker`) imports this process's pcrp, never the working directory's
copy; it reports each part it finished as a JSON line on its stdout, and its failures are read (its exit status and
the end of its stderr): the caller says what failed and compiles that part itself. A process whose kernels all come
from the cache starts no separate process and says nothing: numba's event API (``numba.core.event``, the
"numba:compile" event, which a load from the cache does not send) tells when a compile starts, and every figure said
is measured, none typed.
"""

import atexit
import json
import os
import subprocess
import sys
import threading
import time
from contextlib import contextmanager

import numpy as np

from ..kernels import apart
from ..kernels.state import DIAG, FULL, SPHERICAL
from ..sampling.sampler import MOVES, SEATING, SWEEP, warm_up_sweeps

# Replaces the working directory at the head of sys.path with the parent's folder, then runs the worker's main();
# argv: that folder, then main's arguments (worker_command)
BOOTSTRAP = ("import sys; sys.path[0] = sys.argv.pop(1); "
             "from pcrp.runs.compile_worker import main; sys.exit(main(sys.argv[1:]))")
SEARCH = "search"
COVARIANCE_TYPES = (FULL, DIAG, SPHERICAL)
TAIL_LINES = 20  # the end of a separate process's stderr kept for the message of its failure


def sweep_group(covariance_type):
    """The group of a covariance type's sweep and its moves ("sweep:full")."""
    return f"{SWEEP}:{covariance_type}"


# Every group, in the order `pcrp compile` compiles them, and what a person reads about each
GROUPS = {
    sweep_group(FULL): "the sweep and its split-merge moves",
    SEARCH: "the point estimate's search",
    sweep_group(DIAG): "the diagonal covariance type's sweep and its moves",
    sweep_group(SPHERICAL): "the spherical covariance type's sweep and its moves",
}


def group_of(part):
    """The group a part belongs to: "search", or the sweep group of a part "seating:diag", "moves:full", ..."""
    return SEARCH if part == SEARCH else sweep_group(part.split(":", 1)[1])


def _point_estimate():
    """The point estimate's search and the expected loss of a partition: every kernel the summaries call, with the
    types they pass (draws reach the kernels in one integer width, pcrp.summaries.partition.DRAW_DTYPE)."""
    from ..summaries.partition import compact_labels, expected_loss, point_estimate

    draws = np.array([[0, 0, 1, 1, 2, 2], [0, 0, 0, 1, 1, 1]], dtype=np.int16)
    point_estimate(draws, seed=0)
    expected_loss(draws[0], draws)
    compact_labels(draws)


def run_part(part):
    """Compile, or load from numba's cache, one part: "search", or "<sweep part>:<covariance type>" (a sweep part of
    pcrp.sampling.sampler: "seating:full", "moves:diag", "sweep:spherical")."""
    if part == SEARCH:
        _point_estimate()
        return
    piece, covariance_type = part.split(":", 1)
    if covariance_type not in COVARIANCE_TYPES:
        raise ValueError(f"not a covariance type: {covariance_type!r}")
    warm_up_sweeps(covariance_type, piece)


def plan(covariance_type=None):
    """(parts compiled here, in order; parts compiled in the separate process, in order; those of them that wait for
    this process's word first) for the sweep of one covariance type and the search (a run or a fit), or for every
    group (None): each type's sweep split between the two processes, the full type first, the search in the
    separate process after the full type's move. Every group: the separate process's move of each type after the
    first waits until this process has finished the sweep before (a line on its stdin for each sweep done), so that
    the two processes always compile parts of one type (see the module's docstring)."""
    kinds = COVARIANCE_TYPES if covariance_type is None else (covariance_type,)
    here = [f"{piece}:{kind}" for kind in kinds for piece in (SEATING, SWEEP)]
    away = [f"{MOVES}:{kinds[0]}", SEARCH] + [f"{MOVES}:{kind}" for kind in kinds[1:]]
    return here, away, away[2:]


# A part compiled here after a part of the separate process (it then loads that part from the cache): the sweep links
# the move in
AFTER = {SWEEP: MOVES}


class Compiles(list):
    """The names (module.qualname) of the kernels numba compiled while :func:`watching_compiles` was open, in the
    order they started, and ``cpu[name]``: the seconds of CPU spent compiling each, its own share (without the
    kernels it compiled in turn), summed over its signatures."""

    def __init__(self):
        super().__init__()
        self.cpu = {}


@contextmanager
def watching_compiles(on_first=None):
    """A :class:`Compiles` that receives every kernel numba compiles (a load from its cache is no compile) while the
    context is open, in any thread; ``on_first()`` is called when the first compile starts. The CPU of a compile is
    its thread's (time.thread_time), so chains sampling in other threads meanwhile do not count."""
    from numba.core import event

    compiled = Compiles()
    stacks = threading.local()

    class Watch(event.Listener):
        def on_start(self, ev):
            if not compiled and on_first is not None:
                on_first()
            func = ev.data["dispatcher"].py_func
            name = f"{func.__module__}.{func.__qualname__}"
            compiled.append(name)
            if not hasattr(stacks, "open"):
                stacks.open = []
            stacks.open.append([name, time.thread_time(), 0.0])

        def on_end(self, ev):
            if not getattr(stacks, "open", None):
                return
            name, started, inner = stacks.open.pop()
            spent = time.thread_time() - started
            compiled.cpu[name] = compiled.cpu.get(name, 0.0) + spent - inner
            if stacks.open:
                stacks.open[-1][2] += spent

    watch = Watch()
    event.register("numba:compile", watch)
    try:
        yield compiled
    finally:
        event.unregister("numba:compile", watch)


class _Cold(Exception):
    """Raised at a part's first compile by :func:`from_cache`."""


def from_cache(part):
    """Load a part if every kernel it needs is in numba's cache, and return True; stop at its first compile instead
    (a load sends no "numba:compile" event, a compile sends one before it starts) and return False."""
    def stop():
        raise _Cold

    try:
        with watching_compiles(stop):
            run_part(part)
    except _Cold:
        return False
    return True


def timed_part(part, on_first=None):
    """Run :func:`run_part` watching its compiles: a dict of what it took, as a part's event reports it (seconds of
    wall time, CPU seconds of the process (the search compiles in its threads; nothing else runs while a part
    compiles), kernels compiled, and each kernel's own compile CPU)."""
    started, cpu = time.perf_counter(), time.process_time()
    with watching_compiles(on_first) as compiled:
        run_part(part)
    return {"part": part, "seconds": round(time.perf_counter() - started, 3),
            "cpu": round(time.process_time() - cpu, 3), "functions": len(compiled),
            "kernels": {name: round(seconds, 3) for name, seconds in compiled.cpu.items()}}


def package_file():
    """The __init__.py of the pcrp this process imported."""
    import pcrp

    return os.path.abspath(pcrp.__file__)


def worker_command(parts=None, everything=False, waits=()):
    """The argv of a compile in a separate process (:mod:`pcrp.runs.compile_worker`) of ``parts`` (names of
    :func:`run_part`; ``waits``: those that wait for a line on its stdin first), or of every group with
    ``everything``, importing this process's pcrp."""
    package = package_file()
    argv = [sys.executable, "-c", BOOTSTRAP, os.path.dirname(os.path.dirname(package)), "--package", package]
    if everything:
        return argv + ["--all"]
    return argv + ["--parts", ",".join(parts)] + (["--wait-before", ",".join(waits)] if waits else [])


_READY = set()  # the groups this process has compiled or loaded (through compile_kernels)


def compile_kernels(stream=None, covariance_type=None, *, separate=True, on_event=None):
    """Compile, or load from numba's cache, the kernels of one covariance type's run, or every group (None).

    stream: where to say, in sentences, what compiles ("compiling the sweep and its split-merge moves (once per
    installation) ..." when its first kernel starts, then "compiled in 6.1 s"); None says nothing, and so do groups
    that load from the cache. on_event(dict): the same as data, for a program (pcrp.runs.compile_worker): {"event":
    "compiling" | "ready" | "failed" | "part", "group": ..., "apart": whether in the separate process, ...}.
    separate: compile in a second process at the same time when the cache is cold (see the module's docstring).

    With a covariance type, returns once its sweep is ready; the search is made ready when the summaries first need
    it (:mod:`pcrp.kernels.apart`). With None, returns once every group is ready. Returns the :class:`Session`.
    """
    here, away, waits = plan(covariance_type)
    session = Session(stream, on_event, away if separate else [], waits)
    for part in here:
        session.run_here(part)
    if covariance_type is None:
        session.finish(SEARCH)
    else:
        apart.expect(SEARCH, lambda: session.finish(SEARCH))
    return session


class Session:
    """One call of :func:`compile_kernels`: the parts it compiles here, the separate process (started when the first
    kernel compiles here, so that a process whose kernels come from the cache starts none) and what each said."""

    def __init__(self, stream, on_event, away, waits=()):
        self.stream, self.on_event, self.away, self.waits = stream, on_event, list(away), list(waits)
        self.sweeps_done = 0  # sweep groups made ready here: the separate process's waiting parts may start
        self.lock = threading.RLock()
        self.apart = None  # the separate process, once started
        self.announced = set()  # (group, apart) said to be compiling
        self.started = {}  # group -> perf_counter when its first part started here
        self.finishing = set()  # groups being made ready by finish()

    def say(self, text):
        if self.stream is not None:
            print(text, file=self.stream, flush=True)

    def emit(self, **event):
        if self.on_event is not None:
            self.on_event(event)

    def announce(self, group, in_apart):
        with self.lock:
            if (group, in_apart) in self.announced:
                return
            self.announced.add((group, in_apart))
        self.emit(event="compiling", group=group, apart=in_apart)
        if not in_apart:
            self.say(f"compiling {GROUPS[group]} (once per installation) ...")

    def start_apart(self, group):
        """Start the separate process for the parts to compile apart, once (called when the first kernel compiles
        here, in ``group``)."""
        with self.lock:
            away = [part for part in self.away if group_of(part) not in _READY]
            if self.apart is not None or not away:
                return
            self.apart = Apart(away, self.on_apart_event, [part for part in self.waits if part in away])
            for _ in range(self.sweeps_done):  # the sweeps made ready before it started
                self.apart.go()
        self.say(f"  {_apart_words(away, group)} in a separate process meanwhile")

    def on_apart_event(self, event):
        """A JSON line of the separate process (pcrp.runs.compile_worker), relayed to on_event."""
        if event.get("event") == "compiling":
            self.announce(group_of(event["part"]), True)
        elif event.get("event") == "done":
            self.emit(**{**event, "event": "part", "group": group_of(event["part"]), "apart": True})
        elif event.get("event") == "failed":
            self.emit(event="failed", group=group_of(event["part"]) if event.get("part") else None, apart=True,
                      error=event.get("error", ""))

    def run_here(self, part):
        """Compile (or load) a part in this process, first waiting for the part of the separate process it calls
        (AFTER), when that process compiles it, so that this one loads it from the cache; a sweep's last part (SWEEP)
        makes the group ready. A sweep whose kernels are all in the cache loads at its first part, in one go (loading
        the parts one by one would load their kernels twice: each is linked into the sweep's)."""
        group = group_of(part)
        if group in _READY:
            return
        piece, _, covariance_type = part.partition(":")
        last = piece == SWEEP
        if group not in self.started and from_cache(f"{SWEEP}:{covariance_type}"):
            _READY.add(group)
            self.emit(event="ready", group=group, seconds=0.0)
            self.sweep_done()
            return
        if piece in AFTER and self.apart is not None:
            self.apart.wait_part(f"{AFTER[piece]}:{covariance_type}")
        self.started.setdefault(group, time.perf_counter())

        def first():
            self.announce(group, False)
            self.start_apart(group)

        report = timed_part(part, first)
        self.emit(**{**report, "event": "part", "group": group, "apart": False})
        if last:
            self.ready(group)
            self.sweep_done()

    def sweep_done(self):
        """A sweep group is ready here: the separate process may start its next waiting part (the next type's)."""
        with self.lock:
            self.sweeps_done += 1
            if self.apart is not None:
                self.apart.go()

    def ready(self, group):
        seconds = time.perf_counter() - self.started.get(group, time.perf_counter())
        _READY.add(group)
        self.emit(event="ready", group=group, seconds=round(seconds, 3))
        if (group, False) in self.announced:
            self.say(f"  compiled in {seconds:.1f} s; later runs load it from numba's cache")

    def finish(self, group):
        """Make ready here a group that the separate process compiles: wait for that process, then load the group
        from the cache it filled, or compile it here when the process failed (saying what failed)."""
        with self.lock:  # re-entrant: the group's own calls come back here (pcrp.kernels.apart), and return
            if group in _READY or group in self.finishing:
                return
            self.finishing.add(group)
            if self.apart is not None:
                done = self.apart.wait_part(group)
                failure = self.apart.failure()
                if not done:
                    self.say(f"the separate compile failed ({failure or 'it ended early'}); compiling "
                             f"{GROUPS[group]} here")
                    self.emit(event="failed", group=group, apart=True, error=failure or "it ended early")
                elif done.get("functions"):
                    self.say(f"  {GROUPS[group]}: compiled in the separate process in {done['seconds']:.1f} s")
            self.started.setdefault(group, time.perf_counter())
            report = timed_part(group, lambda: self.announce(group, False))
            self.emit(**{**report, "event": "part", "group": group, "apart": False})
            self.ready(group)
            if self.apart is not None:
                self.apart.close()


def _apart_words(away, group):
    """What the separate process compiles, in words, while this one compiles ``group``: "part of it and the point
    estimate's search"."""
    words = []
    for part in away:
        other = group_of(part)
        word = ("part of it" if other == group else GROUPS[other] if other == SEARCH
                else "part of the other covariance types' sweeps" if other in GROUPS else part)
        if word not in words:
            words.append(word)
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


class Apart:
    """The separate compile process (:mod:`pcrp.runs.compile_worker`) of a list of parts: its JSON lines are read
    by one thread, its stderr by another (so that neither pipe fills), and its exit status when it ends."""

    def __init__(self, parts, on_event=None, waits=()):
        self.parts, self.on_event = list(parts), on_event
        self.done = {}  # part -> its "done" event
        self.errors = []
        self.tail = []
        self.ended = False  # its stdout closed and its exit status read
        self.changed = threading.Condition()
        self.process = subprocess.Popen(worker_command(parts=self.parts, waits=waits), stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, stdin=subprocess.PIPE, text=True)
        _RUNNING.add(self.process)
        threading.Thread(target=self._read_events, name="pcrp-compile-events", daemon=True).start()
        threading.Thread(target=self._read_stderr, name="pcrp-compile-stderr", daemon=True).start()

    def _read_events(self):
        try:
            for line in self.process.stdout:
                try:
                    event = json.loads(line)
                except ValueError:
                    continue  # not one of its events (a library printing): ignored
                with self.changed:
                    if event.get("event") == "done":
                        self.done[event["part"]] = event
                    elif event.get("event") == "failed":
                        self.errors.append(event.get("error", ""))
                    self.changed.notify_all()
                if self.on_event is not None:
                    self.on_event(event)
        finally:
            self.process.wait()
            _RUNNING.discard(self.process)
            with self.changed:
                self.ended = True
                self.changed.notify_all()

    def _read_stderr(self):
        for line in self.process.stderr:
            self.tail = (self.tail + [line.rstrip("\n")])[-TAIL_LINES:]

    def go(self):
        """Tell the separate process it may start its next waiting part (a line on its stdin)."""
        try:
            self.process.stdin.write("go\n")
            self.process.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):  # it has ended: nothing waits
            pass

    def wait_part(self, part):
        """Wait until the separate process has finished ``part`` or has ended; returns the part's "done" event, or
        None when it ended without it."""
        with self.changed:
            while part not in self.done and not self.ended:
                self.changed.wait()
            return self.done.get(part)

    def failure(self):
        """Why the separate process failed ("exit status 1: TypingError: ..."), or "" while it has not."""
        code = self.process.poll()
        if code in (None, 0) and not self.errors:
            return ""
        why = self.errors[-1] if self.errors else (" | ".join(line for line in self.tail[-3:] if line) or "no output")
        return f"exit status {code}: {why}" if code not in (None, 0) else why

    def close(self):
        """Wait for the process to end (it has reported its last part)."""
        try:
            self.process.stdin.close()  # a part still waiting for its word ends the process instead
        except OSError:
            pass
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.terminate()


_RUNNING = set()  # separate compile processes still running: ended with this process (a run that stops early)


@atexit.register
def _end_running():
    for process in list(_RUNNING):
        if process.poll() is None:
            process.terminate()

"""Compiling the kernels, and saying so.

numba compiles a kernel the first time an installation uses it and loads it from its cache afterwards (next to the
kernels' source, or in NUMBA_CACHE_DIR). :func:`compile_kernels` compiles, or loads, every kernel a run, its
summaries and the app use, group by group on tiny problems. A group that compiles says so when its first kernel
starts compiling, then gives the seconds it took: numba's event API (``numba.core.event``, the "numba:compile"
event, which a load from the cache does not send) tells when a compile starts, so a process whose kernels all come
from the cache prints nothing, and every figure printed is measured, none typed.

Who calls it: ``pcrp compile`` (the command a deployment runs once), the first ``pcrp run`` and estimator fit of an
installation, and the app's server, which runs ``pcrp compile`` in a separate process at start so that no visitor's
page waits on a compile (:mod:`pcrp.app.warm_up`).
"""

import time
from contextlib import contextmanager

import numpy as np

from ..basics.dtypes import label_dtype
from ..sampling.sampler import warm_up_sweeps


def _point_estimate():
    """The point estimate's search, with and without zealous attempts, and the expected loss of a partition, for
    label draws of each integer width they come in (16 and 32 bits as runs store them, 64 as users and the ranks
    give them): the kernels that relabel draws compile once per width."""
    from ..summaries.partition import expected_loss, point_estimate

    draws = np.array([[0, 0, 1, 1, 2, 2], [0, 0, 0, 1, 1, 1]], dtype=label_dtype(6))
    for dtype in (np.int16, np.int32, np.int64):
        point_estimate(draws.astype(dtype), seed=0)
        point_estimate(draws.astype(dtype), seed=0, zealous_attempts=0)
        expected_loss(draws[0].astype(dtype), draws.astype(dtype))


# (what the group is, the call that compiles or loads it), in the order a run needs them
KERNEL_GROUPS = (
    ("the sweep and its split-merge moves", warm_up_sweeps),
    ("the point estimate's search", _point_estimate),
)


@contextmanager
def watching_compiles(on_first=None):
    """A list that receives the name of every kernel numba compiles (a load from its cache is no compile) while the
    context is open, in any thread; ``on_first()`` is called when the first compile starts."""
    from numba.core import event

    compiled = []

    class Watch(event.Listener):
        def on_start(self, ev):
            if not compiled and on_first is not None:
                on_first()
            compiled.append(ev.data["dispatcher"].py_func.__qualname__)

        def on_end(self, ev):
            pass

    watch = Watch()
    event.register("numba:compile", watch)
    try:
        yield compiled
    finally:
        event.unregister("numba:compile", watch)


def compile_kernels(stream=None, groups=None, separate=True):
    """Compile, or load from numba's cache, every group of kernels; returns [(group, seconds, kernels compiled)].

    stream: where to say what compiles ("compiling the sweep and its split-merge moves (once per installation) ..."
    when its first kernel starts, then "compiled in 6.1 s"); None prints nothing. Groups that load from the cache
    print nothing. groups: [(name, call)], default KERNEL_GROUPS.

    separate: when the first group compiles (the cache is cold), the later groups compile at the same time in a
    separate process (``pcrp compile --groups``), on the other core: numba compiles one function at a time in a
    process, so this is what two cores buy. The later groups then load from the cache it filled (or compile here,
    if it failed).
    """
    groups = list(groups or KERNEL_GROUPS)
    out = []
    helper = []  # (process, its start) of the later groups' separate compile

    for index, (name, call) in enumerate(groups):
        def say(name=name, index=index):
            if stream is not None:
                print(f"compiling {name} (once per installation) ...", file=stream, flush=True)
            later = [i for i in range(index + 1, len(groups)) if groups[i] in KERNEL_GROUPS]
            if separate and later and not helper:
                helper.append((_compile_apart(KERNEL_GROUPS.index(groups[i]) + 1 for i in later), time.perf_counter()))
                if stream is not None:
                    print(f"compiling {_and(groups[i][0] for i in later)} (once per installation) in a separate "
                          "process meanwhile ...", file=stream, flush=True)

        if helper and index > 0 and helper[0][0].returncode is None:  # collect the separate compile, once
            process, _ = helper[0]
            said, _ = process.communicate()
            if stream is not None:
                for line in said.splitlines():
                    if line.lstrip().startswith("compiled in "):
                        print(line.replace("compiled in", "compiled in the separate process in", 1), file=stream,
                              flush=True)
        started = time.perf_counter()
        with watching_compiles(say) as compiled:
            call()
        seconds = time.perf_counter() - started
        if compiled and stream is not None:
            print(f"  compiled in {seconds:.1f} s; later runs load it from numba's cache", file=stream, flush=True)
        out.append((name, seconds, len(compiled)))
    return out


def _compile_apart(numbers):
    """``pcrp compile --groups N,..`` (1-based numbers of KERNEL_GROUPS) in a separate process (its output read
    when it is collected)."""
    import subprocess
    import sys

    return subprocess.Popen([sys.executable, "-m", "pcrp.cli", "compile", "--groups", ",".join(map(str, numbers))],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)


def _and(names):
    names = list(names)
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]

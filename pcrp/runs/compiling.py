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


def _other_covariance_types():
    """The sweep of the diagonal and spherical covariance types: numba compiles the sweep once per type."""
    warm_up_sweeps("diag")
    warm_up_sweeps("spherical")


# (what the group is, the call that compiles or loads it), in the order a run needs them
KERNEL_GROUPS = (
    ("the sweep and its split-merge moves", warm_up_sweeps),
    ("the point estimate's search", _point_estimate),
    ("the sweeps of the diagonal and spherical covariance types", _other_covariance_types),
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
    when its first kernel starts, then "compiled in 6.1 s"); None prints nothing, and so do groups that load from the
    cache. groups: [(name, call)], default KERNEL_GROUPS. separate: when the first group compiles (the cache is cold),
    the later groups compile at the same time in a separate process (``pcrp compile --groups``) on the other core, and
    load here from the cache it filled (numba compiles one function at a time per process).
    """
    groups = list(groups or KERNEL_GROUPS)
    out, apart = [], []  # apart: the separate process compiling the later groups, once started

    def say(text):
        if stream is not None:
            print(text, file=stream, flush=True)

    for index, (name, call) in enumerate(groups):
        later = [KERNEL_GROUPS.index(group) + 1 for group in groups[index + 1:] if group in KERNEL_GROUPS]

        def first_compile(name=name, later=later):
            say(f"compiling {name} (once per installation) ...")
            if separate and later and not apart:
                apart.append(_compile_apart(later))
                say(f"compiling {' and '.join(KERNEL_GROUPS[n - 1][0] for n in later)} (once per installation) in a "
                    "separate process meanwhile ...")

        if apart and index > 0 and apart[0].returncode is None:  # wait for the separate compile, then load
            for line in apart[0].communicate()[0].splitlines():
                if line.lstrip().startswith("compiled in "):
                    say(line.replace("compiled in", "compiled in the separate process in", 1))
        started = time.perf_counter()
        with watching_compiles(first_compile) as compiled:
            call()
        seconds = time.perf_counter() - started
        if compiled:
            say(f"  compiled in {seconds:.1f} s; later runs load it from numba's cache")
        out.append((name, seconds, len(compiled)))
    return out


def _compile_apart(numbers):
    """``pcrp compile --groups N,..`` (1-based numbers of KERNEL_GROUPS) in a separate process, read when done."""
    import subprocess
    import sys

    return subprocess.Popen([sys.executable, "-m", "pcrp.cli", "compile", "--groups", ",".join(map(str, numbers))],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)

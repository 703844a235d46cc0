"""Kernels that another process is compiling for this one, and the wait before their first use here.

A run compiles its sweep in its own process and the point estimate's search in a separate process beside the
sampling (:mod:`pcrp.runs.compiling`, which registers the wait here). The summaries call :func:`wait_for` before
they first use the search's kernels: it returns at once when nothing is pending, and otherwise waits for that
compile (or, when it failed, compiles here), so that the kernels then load from numba's cache instead of compiling
a second time in this process. Plain Python, no numba: a layer below the summaries that the runs layer can reach.
"""

import threading

_LOCK = threading.Lock()
_PENDING = {}  # group -> the call that makes it ready here (idempotent, thread-safe)


def expect(group, ready):
    """Before the kernels of ``group`` are first used in this process, ``ready()`` is to be called (once it has
    returned, later calls of wait_for return at once)."""
    with _LOCK:
        _PENDING[group] = ready


def wait_for(group):
    """Wait until the kernels of ``group`` are ready to load here, if another process is compiling them for this one
    (see the module's docstring); nothing otherwise. Safe from several threads: each waits for the same compile."""
    with _LOCK:
        ready = _PENDING.get(group)
    if ready is None:
        return
    ready()
    with _LOCK:
        if _PENDING.get(group) is ready:
            del _PENDING[group]

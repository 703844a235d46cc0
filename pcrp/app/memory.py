"""Giving a server's freed memory back to the operating system.

When a class leaves, the runs' buffers and the sessions' state are freed, but the C allocator (glibc's malloc, with
an arena per thread that allocated: every chain thread and script thread has one) keeps the freed pages for reuse,
so the process's resident memory stays near its peak. :func:`return_freed_memory` asks glibc to release them
(``malloc_trim(0)``, which walks every arena). :func:`release_soon` asks for that a moment later, so that the
requests of a class leaving at once make one trim: the run registry asks when it has forgotten runs
(pcrp.app.fair_share.RunRegistry) and a page session when it has closed (app_pages/shared.py). Elsewhere than
glibc (macOS, musl) it does nothing. docs/records/class_load.md measures what it returns.
"""

import ctypes
import threading
import time

MIN_INTERVAL_SECONDS = 5.0  # at most one trim per this many seconds: a trim walks every arena under its lock
RELEASE_DELAY_SECONDS = 2.0  # release_soon's wait: the requests within it make one trim

_LOCK = threading.Lock()
_LAST = {"at": -float("inf")}
_PENDING = {"timer": None}


def _malloc_trim():
    try:
        return ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return None


_TRIM = _malloc_trim()


def return_freed_memory(force=False):
    """Release the pages the C allocator holds free back to the operating system (glibc's malloc_trim(0)); at most
    once per MIN_INTERVAL_SECONDS unless ``force``. Returns whether a trim ran."""
    if _TRIM is None:
        return False
    with _LOCK:
        now = time.monotonic()
        if not force and now - _LAST["at"] < MIN_INTERVAL_SECONDS:
            return False
        _LAST["at"] = now
    _TRIM(0)
    return True


def release_soon():
    """Return freed memory (:func:`return_freed_memory`, forced) RELEASE_DELAY_SECONDS from now, in a short-lived
    thread; requests made before then join that one."""
    if _TRIM is None:
        return
    with _LOCK:
        if _PENDING["timer"] is not None:
            return
        timer = _PENDING["timer"] = threading.Timer(RELEASE_DELAY_SECONDS, _release_now)
        timer.daemon = True
        timer.name = "pcrp-return-memory"
    timer.start()


def _release_now():
    with _LOCK:
        _PENDING["timer"] = None
    return_freed_memory(force=True)

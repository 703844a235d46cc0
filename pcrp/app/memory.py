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

RELEASE_DELAY_SECONDS = 2.0  # release_soon's wait: the requests within it make one trim

_LOCK = threading.Lock()
_PENDING = {"timer": None}


def _malloc_trim():
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return trim


_TRIM = _malloc_trim()


def return_freed_memory():
    """Release the pages the C allocator holds free back to the operating system now (glibc's malloc_trim(0), with
    Python's lock released; it holds each arena's lock while it walks it: 10 to 36 ms by bench/memory_trim.py).
    Returns whether a trim ran."""
    if _TRIM is None:
        return False
    _TRIM(0)
    return True


def release_soon():
    """Return freed memory (:func:`return_freed_memory`) RELEASE_DELAY_SECONDS from now, in a short-lived thread;
    requests made before then join that one."""
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
    return_freed_memory()

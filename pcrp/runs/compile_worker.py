"""The entry point of a compile in a separate process (:mod:`pcrp.runs.compiling`, :mod:`pcrp.app.warm_up`).

:func:`pcrp.runs.compiling.worker_command` starts this Python with ``-c`` and puts the folder of the *parent's* pcrp
first on sys.path in place of the working directory (which ``python -c`` and ``python -m`` put first, so that a
folder holding another copy of pcrp/ would be imported instead); :func:`main` checks that it imported that same
package and fails otherwise. It writes one JSON object a line on stdout, its progress as data:

- ``{"event": "started", "package": ...}``, then for each part ``{"event": "compiling", "part": ...}`` when its first
  kernel starts compiling (none when the part loads from numba's cache) and ``{"event": "done", "part": ...,
  "seconds": ..., "cpu": ..., "functions": ..., "kernels": {name: CPU seconds}}``;
- a part named in ``--wait-before`` first waits for a line on stdin (the caller's word that it has finished the
  sweep of the covariance type before, so that the two processes compile parts of one type at a time);
- with ``--all`` (the app's warm-up): :func:`pcrp.runs.compiling.compile_kernels` of every group, its events as
  it reports them (``"compiling"``, ``"part"``, ``"ready"``, ``"failed"``, per group);
- ``{"event": "failed", "part": ..., "error": "TypingError: ..."}`` and the traceback on stderr when a part fails
  (exit status 1), and ``{"event": "finished", "seconds": ...}`` at the end (exit status 0).
"""

import json
import os
import sys
import threading
import time
import traceback

PARENT_POLL_SECONDS = 0.5


def _end_with_parent():
    """End this process when the one that started it has ended (a server stopped during its warm-up, a run
    interrupted): a compile nobody waits for would go on writing numba's cache into a tree being removed."""
    parent = os.getppid()

    def watch():
        while True:
            time.sleep(PARENT_POLL_SECONDS)
            if os.getppid() != parent:
                os._exit(3)

    threading.Thread(target=watch, name="pcrp-compile-parent", daemon=True).start()


def _emit(event):
    print(json.dumps(event), flush=True)


def main(argv=None):
    """Compile what argv asks (``--package FILE`` and ``--parts a,b`` or ``--all``), reporting JSON lines."""
    import argparse

    parser = argparse.ArgumentParser(prog="pcrp.runs.compile_worker", description=__doc__.splitlines()[0])
    parser.add_argument("--package", required=True, help="the __init__.py of the pcrp to import")
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--parts", help="parts to compile one after another (pcrp.runs.compiling.run_part)")
    what.add_argument("--all", action="store_true", help="every group, as pcrp compile")
    parser.add_argument("--wait-before", default="", help="parts that first wait for a line on stdin (the caller's "
                                                          "word that it has finished the sweep before)")
    args = parser.parse_args(argv)
    _end_with_parent()
    waits = set(filter(None, args.wait_before.split(",")))
    from .compiling import compile_kernels, package_file, timed_part

    started = time.perf_counter()
    found = package_file()
    if os.path.realpath(found) != os.path.realpath(args.package):
        _emit({"event": "failed", "part": None, "error": f"imported pcrp from {found}, not {args.package}"})
        return 2
    _emit({"event": "started", "package": found, "pid": os.getpid()})
    part = None
    try:
        if args.all:
            compile_kernels(None, None, on_event=_emit)
        else:
            for part in args.parts.split(","):
                if part in waits and not sys.stdin.readline():  # the caller ended before its word: nothing to do
                    break
                _emit({**timed_part(part, lambda part=part: _emit({"event": "compiling", "part": part})),
                       "event": "done"})
    except Exception as err:  # reported as data, the traceback on stderr; the caller compiles the part itself
        traceback.print_exc()
        _emit({"event": "failed", "part": part, "error": f"{type(err).__name__}: {err}".splitlines()[0]})
        return 1
    _emit({"event": "finished", "seconds": round(time.perf_counter() - started, 3)})
    return 0

"""``pcrp compile``: compile every kernel now, once per installation, so that no run or visitor waits on it."""

import argparse


def add_parser(sub, help_line):
    p = sub.add_parser(
        "compile", help=help_line,
        description=("Compile (or load from numba's cache) every numba kernel that runs, their summaries and the app "
                     "use, saying what compiles and how long it took. numba caches the result next to the kernels "
                     "(or in NUMBA_CACHE_DIR), so this is paid once per installation: a deployment runs it once "
                     "after installing, and the app runs it in a separate process when its server starts. A "
                     "second call loads everything from the cache and compiles nothing."),
    )
    p.add_argument("--groups", default="", help=argparse.SUPPRESS)  # 1-based KERNEL_GROUPS, for a separate compile


def command(args, argv=None):
    """Compile every kernel group, with progress on stdout, then a table of what each took."""
    import sys
    import time

    from ..runs.compiling import KERNEL_GROUPS, compile_kernels

    started = time.perf_counter()
    groups = [KERNEL_GROUPS[int(n) - 1] for n in args.groups.split(",")] if args.groups else KERNEL_GROUPS
    rows = compile_kernels(sys.stdout, groups=groups, separate=not args.groups)
    for name, seconds, compiled in rows:
        done = f"compiled ({compiled} functions)" if compiled else "ready (from numba's cache)"
        print(f"{name}: {done} in {seconds:.1f} s")
    print(f"every kernel is ready: {time.perf_counter() - started:.1f} s in all")

"""``pcrp compile``: compile every kernel now, once per installation, so that no run or visitor waits on it."""


def add_parser(sub, help_line):
    sub.add_parser(
        "compile", help=help_line,
        description=("Compile (or load from numba's cache) every numba kernel that runs, their summaries and the app "
                     "use, saying what compiles and how long it took, on two cores when the cache is cold. numba "
                     "caches the result next to the kernels (or in NUMBA_CACHE_DIR), so this is paid once per "
                     "installation: a deployment runs it once after installing, and the app does the same in a "
                     "separate process when its server starts. A run compiles only what it uses (its covariance "
                     "type's sweep, and the point estimate's search beside the sampling). A second call loads "
                     "everything from the cache and compiles nothing."),
    )


def command(args, argv=None):
    """Compile every kernel group, with progress on stdout, then a line for each group: compiled (how many functions,
    in which process, how long) or ready from the cache."""
    import sys
    import time

    from ..runs.compiling import GROUPS, compile_kernels

    started = time.perf_counter()
    parts = {}  # group -> [functions compiled, here or apart]

    def count(event):
        if event.get("event") == "part":
            seen = parts.setdefault(event["group"], [0, set()])
            seen[0] += event.get("functions", 0)
            if event.get("functions"):
                seen[1].add("a separate process" if event.get("apart") else "this process")
        elif event.get("event") == "ready":
            parts.setdefault(event["group"], [0, set()]).append(time.perf_counter() - started)

    compile_kernels(sys.stdout, None, on_event=count)
    for group, name in GROUPS.items():
        functions, where, *seconds = parts.get(group, [0, set(), 0.0])
        done = (f"compiled ({functions} functions, in {' and '.join(sorted(where))})" if functions
                else "ready (from numba's cache)")
        print(f"{name}: {done}; ready {seconds[-1] if seconds else 0.0:.1f} s after the start")
    print(f"every kernel is ready: {time.perf_counter() - started:.1f} s in all")

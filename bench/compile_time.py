"""What compiling the numba kernels costs a fresh installation, from an empty kernel cache, and where it goes.

    python bench/compile_time.py [--tree /path/to/an/earlier/checkout] [--top 12] [--skip profile,decoy,...]

Copies the package (this checkout's and, with --tree, an earlier one's) to a temporary folder each and gives every
measurement an empty NUMBA_CACHE_DIR of its own, then times in fresh processes, the trees alternating row by row so
that load on a shared machine hits both alike:

- ``run``: the first `pcrp run old-faithful` at its defaults (what a newcomer types first), then the same run again
  (every later run);
- ``fit``: the first ``PCRPMixture().fit`` of Old Faithful;
- ``decoy``: the first `pcrp run old-faithful` started from a folder that holds another copy of pcrp/ (a clone beside
  an installed package): a separate compile that imported the folder's copy compiled into other cache entries;
- ``compile``: `pcrp compile` (every group, what a deployment runs once), then again;
- ``import``: Python's start and `import pcrp, pcrp.cli`;
- ``profile``: every group compiled in one process, one after the other, with the compile CPU of each function
  (its own share, without the functions it compiled in turn) from numba's event API (``numba.core.event``,
  "numba:compile"); the groups' totals and each tree's largest functions.

Each command runs as the `pcrp` console script does: the package from PYTHONPATH, the working directory not on
sys.path. Wall time is the command's; CPU is user + sys of the command and every process it started and waited for
(resource.getrusage(RUSAGE_CHILDREN)); "compiled here" counts numba's compiles in the command's own process. The
machine is shared: compare the trees within one run, and rerun on a quiet machine for the absolute figures.
"""

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from provenance import header, load_now  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# As the console script: the working directory off sys.path (python -c puts it first), numba's compiles in this
# process counted, reported on stderr at exit.
PRELUDE = """
import atexit, sys
sys.path[:] = [p for p in sys.path if p not in ("", ".")]
from numba.core import event
compiled = []
class Count(event.Listener):
    def on_start(self, ev): compiled.append(ev.data["dispatcher"].py_func.__qualname__)
    def on_end(self, ev): pass
event.register("numba:compile", Count())
atexit.register(lambda: print(f"COMPILED {len(compiled)}", file=sys.stderr))
"""
FIT = "from pcrp.data import old_faithful\nfrom pcrp.estimator import PCRPMixture\nPCRPMixture().fit(old_faithful().X)\n"

# Every group compiled one after the other in one process: each group's CPU (the process's: the search compiles in
# its threads) and each function's own compile CPU (its thread's, without the functions it compiled in turn). The calls exist in both layouts: warm_up_sweeps(covariance_type) and
# pcrp.runs.compiling._point_estimate (which compiled the search for three label widths before issue 56).
PROFILE = PRELUDE + """
import json, threading, time
from numba.core import event
cpu, stack, group = {}, [], [None]
class Own(event.Listener):
    def on_start(self, ev):
        f = ev.data["dispatcher"].py_func
        stack.append([f"{f.__module__}.{f.__qualname__}", time.thread_time(), 0.0])
    def on_end(self, ev):
        name, started, inner = stack.pop()
        spent = time.thread_time() - started
        key = (group[0], name)
        cpu[key] = cpu.get(key, 0.0) + spent - inner
        if stack:
            stack[-1][2] += spent
event.register("numba:compile", Own())
from pcrp.sampling.sampler import warm_up_sweeps
from pcrp.runs import compiling
totals = {}
for name, call in (("the full sweep and its moves", lambda: warm_up_sweeps("full")),
                   ("the point estimate's search", compiling._point_estimate),
                   ("the diagonal sweep and its moves", lambda: warm_up_sweeps("diag")),
                   ("the spherical sweep and its moves", lambda: warm_up_sweeps("spherical"))):
    group[0] = name
    begun, wall = time.process_time(), time.perf_counter()
    call()
    totals[name] = [time.process_time() - begun, time.perf_counter() - wall]
print("PROFILE " + json.dumps({"totals": totals, "functions": [[g, n, s] for (g, n), s in cpu.items()]}))
"""


def timed(code, tree, cache, cwd):
    """(wall seconds, CPU seconds of it and its children, numba compiles in its own process, exit status, stdout) of
    ``python -c PRELUDE + code`` importing the copy ``tree`` with the numba cache ``cache``."""
    env = {**os.environ, "PYTHONPATH": tree, "NUMBA_CACHE_DIR": cache}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", PRELUDE + code], cwd=cwd, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    compiled = [int(line.split()[1]) for line in done.stderr.splitlines() if line.startswith("COMPILED ")]
    if done.returncode != 0:
        print(f"  (exit status {done.returncode}: {done.stderr.strip().splitlines()[-1:]})", file=sys.stderr)
    return seconds, cpu, (compiled[0] if compiled else None), done.returncode, done.stdout


def cli(argv):
    return f"import pcrp.cli\nsys.exit(pcrp.cli.main({argv!r}))"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", default=None, help="an earlier checkout to measure beside this one ('before')")
    parser.add_argument("--top", type=int, default=12, help="the largest functions shown per tree")
    parser.add_argument("--skip", default="", help="rows to leave out: run, fit, decoy, compile, import, profile")
    args = parser.parse_args()
    skip = set(filter(None, args.skip.split(",")))
    trees = ([("before", args.tree)] if args.tree else []) + [("after" if args.tree else "this tree", ROOT)]
    command = "python bench/compile_time.py" + (f" --tree {args.tree}" if args.tree else "")
    lines = [header(command), ""]
    rows, profiles = [], {}
    with tempfile.TemporaryDirectory() as work:
        copies = {}
        for label, source in trees:
            copies[label] = os.path.join(work, label.replace(" ", "_"), "tree")
            shutil.copytree(os.path.join(source, "pcrp"), os.path.join(copies[label], "pcrp"),
                            ignore=shutil.ignore_patterns("__pycache__"))
        plain = os.path.join(work, "cwd")  # a folder without pcrp/
        os.makedirs(plain)
        out = os.path.join(work, "r.npz")
        run = cli(["run", "old-faithful", "--seed", "0", "--out", out])

        def row(what, code, cache_name, cwd=plain):
            for label, tree in copies.items():
                cache = os.path.join(work, label.replace(" ", "_"), cache_name)
                rows.append((what, label, *timed(code, tree, cache, cwd)[:4]))
                print(f"  {what} ({label}): {rows[-1][2]:.1f} s", file=sys.stderr, flush=True)

        if "run" not in skip:
            row("first `pcrp run old-faithful`, empty cache", run, "cache-run")
            row("the same run again, cache filled", run, "cache-run")
        if "fit" not in skip:
            row("first `PCRPMixture().fit` of Old Faithful, empty cache", FIT, "cache-fit")
        if "decoy" not in skip:
            for label, tree in copies.items():  # the folder holds another copy of the same package
                decoy = os.path.join(work, label.replace(" ", "_"), "clone")
                shutil.copytree(os.path.join(tree, "pcrp"), os.path.join(decoy, "pcrp"))
            for label, tree in copies.items():
                decoy = os.path.join(work, label.replace(" ", "_"), "clone")
                cache = os.path.join(work, label.replace(" ", "_"), "cache-decoy")
                rows.append(("first `pcrp run old-faithful` from a folder holding another pcrp/, empty cache", label,
                             *timed(run, tree, cache, decoy)[:4]))
                print(f"  decoy ({label}): {rows[-1][2]:.1f} s", file=sys.stderr, flush=True)
        if "compile" not in skip:
            row("`pcrp compile`, empty cache", cli(["compile"]), "cache-compile")
            row("`pcrp compile` again", cli(["compile"]), "cache-compile")
        if "import" not in skip:
            row("python start-up and `import pcrp, pcrp.cli`", "import pcrp, pcrp.cli", "cache-import")
        if "profile" not in skip:
            for label, tree in copies.items():
                cache = os.path.join(work, label.replace(" ", "_"), "cache-profile")
                stdout = timed(PROFILE, tree, cache, plain)[4]
                found = [line for line in stdout.splitlines() if line.startswith("PROFILE ")]
                profiles[label] = json.loads(found[0][len("PROFILE "):]) if found else None
    lines += ["| what | tree | wall s | CPU s (with its children) | compiled here | exit status |",
              "|---|---|---|---|---|---|"]
    lines += [f"| {what} | {label} | {wall:.1f} | {cpu:.1f} | {'-' if n is None else n} | {rc} |"
              for what, label, wall, cpu, n, rc in rows]
    for label, profile in profiles.items():
        if profile is None:
            lines += ["", f"Compile profile ({label}): failed."]
            continue
        lines += ["", f"Compile CPU per group ({label}; one process, one group after the other):", "",
                  "| group | CPU s | wall s | functions compiled |", "|---|---|---|---|"]
        for group, (cpu, wall) in profile["totals"].items():
            n = sum(1 for g, _, _ in profile["functions"] if g == group)
            lines.append(f"| {group} | {cpu:.1f} | {wall:.1f} | {n} |")
        lines += ["", f"Largest compile CPU per function ({label}; its own share, summed over its signatures):", "",
                  "| function | group | CPU s |", "|---|---|---|"]
        for group, name, seconds in sorted(profile["functions"], key=lambda f: -f[2])[:args.top]:
            lines.append(f"| `{name}` | {group} | {seconds:.2f} |")
    lines += ["", f"Load average at the end: {load_now():.2f}."]
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())

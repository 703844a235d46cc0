"""What compiling the numba kernels costs a fresh installation, in one run: from an empty kernel cache.

    python bench/compile_time.py [--tree /path/to/an/earlier/checkout]

Copies the package (this checkout's, or --tree's) to a temporary folder and gives every process an empty
NUMBA_CACHE_DIR of its own, then times in fresh processes: (1) the first `pcrp run old-faithful` at its defaults
(what a newcomer types first; it compiles what it needs and says so), (2) the same run again (every later run),
(3) `pcrp compile` on an empty cache (the command a deployment runs once; an earlier tree without it: skipped) and
(4) `import pcrp` plus the sampler's module alone. It counts the kernels each compile made from numba's
"numba:compile" events, so the number of compiled functions and their total are measured, not typed.
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from provenance import header, load_now  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Counts numba's compiles (a load from the cache sends no event) while the command runs, then reports on stderr.
COUNTING = """
import atexit, sys
from numba.core import event
compiled = []
class Count(event.Listener):
    def on_start(self, ev): compiled.append(ev.data["dispatcher"].py_func.__qualname__)
    def on_end(self, ev): pass
event.register("numba:compile", Count())
atexit.register(lambda: print(f"COMPILED {len(compiled)}", file=sys.stderr))
"""


def timed(argv, tree, cache):
    """(wall seconds, functions numba compiled in the process itself, exit status) of ``python -c`` running the
    ``pcrp`` command line with ``argv`` on the copy ``tree`` and the numba cache ``cache``."""
    env = {**os.environ, "PYTHONPATH": tree, "NUMBA_CACHE_DIR": cache}
    code = COUNTING + f"import pcrp.cli\nsys.exit(pcrp.cli.main({argv!r}))"
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code], cwd=tree, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    compiled = [int(line.split()[1]) for line in done.stderr.splitlines() if line.startswith("COMPILED ")]
    return seconds, (compiled[0] if compiled else None), done.returncode


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", default=ROOT, help="the checkout whose pcrp/ is timed (default: this one)")
    args = parser.parse_args()
    lines = [header("python bench/compile_time.py" + (f" --tree {args.tree}" if args.tree != ROOT else "")), ""]
    rows = []
    with tempfile.TemporaryDirectory() as work:
        tree = os.path.join(work, "tree")
        shutil.copytree(os.path.join(args.tree, "pcrp"), os.path.join(tree, "pcrp"),
                        ignore=shutil.ignore_patterns("__pycache__"))
        run = ["run", "old-faithful", "--seed", "0", "--out", os.path.join(work, "r.npz")]
        cold = os.path.join(work, "cache-run")
        rows.append(("first `pcrp run old-faithful`, empty cache", *timed(run, tree, cold)))
        rows.append(("the same run again, cache filled", *timed(run, tree, cold)))
        if os.path.exists(os.path.join(tree, "pcrp", "cli", "compile.py")):
            deploy = os.path.join(work, "cache-compile")
            rows.append(("`pcrp compile`, empty cache", *timed(["compile"], tree, deploy)))
            rows.append(("`pcrp compile` again", *timed(["compile"], tree, deploy)))
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import pcrp, pcrp.cli"], cwd=tree, check=True,
                       env={**os.environ, "PYTHONPATH": tree})
        rows.append(("python start-up and `import pcrp, pcrp.cli`", time.perf_counter() - t0, None, 0))
    lines += ["| what | seconds | functions compiled in the process | exit status |", "|---|---|---|---|"]
    lines += [f"| {what} | {s:.1f} | {'-' if n is None else n} | {rc} |" for what, s, n, rc in rows]
    lines += ["", "(`pcrp compile` compiles its second kernel group in a separate process at the same time: its "
              "functions are not counted in the first process's column.)", "", f"Load average at the end: {load_now():.2f}."]
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""How long the first run spends compiling the numba kernels, from a cold cache, in one run.

    python bench/compile_time.py

Copies the package to a temporary folder (no __pycache__, so numba's cache is empty) and times, in fresh
processes: (1) ``warm_up()`` cold (the sweep kernels: what `pcrp run` announces), (2) the whole first
`pcrp run old-faithful --iters 300` cold (the search kernels of the point estimate compile too), (3) the same
again with the cache filled (what every later run pays), and (4) ``import pcrp.sampling.sampler`` followed at once by a
background compile in a thread while the main thread loads data for 2 s, to see whether compiling behind the
user's back would hide the wait. pcrp.runs.compiling.COMPILE_SECONDS is the figure the command line announces.
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


def timed(code, cwd):
    """Wall seconds of ``python -c code`` in a fresh process whose pcrp is the copy in ``cwd``."""
    env = {**os.environ, "PYTHONPATH": cwd, "NUMBA_CACHE_DIR": os.path.join(cwd, "numba-cache")}
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, check=True, capture_output=True)
    return time.perf_counter() - t0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.parse_args()
    lines = [header("python bench/compile_time.py"), ""]
    warm = "from pcrp.runs.compiling import warm_up; warm_up()"
    first_run = "from pcrp.cli import main; main(['run', 'old-faithful', '--iters', '300', '--seed', '0', '--out', 'r.npz'])"
    background = ("import threading, time; t0 = time.perf_counter(); from pcrp.runs.compiling import warm_up; "
                  "th = threading.Thread(target=warm_up); th.start(); "
                  "import numpy as np; x = 0.0\n"
                  "while time.perf_counter() - t0 < 2: x += float(np.sum(np.random.default_rng(0).normal(size=1000)))\n"
                  "print(time.perf_counter() - t0); th.join()")
    rows = []
    with tempfile.TemporaryDirectory() as work:
        def fresh_copy():
            target = os.path.join(work, f"copy{len(rows)}")
            shutil.copytree(os.path.join(ROOT, "pcrp"), os.path.join(target, "pcrp"),
                            ignore=shutil.ignore_patterns("__pycache__"))
            return target

        rows.append(("warm_up() from a cold cache (the sweep kernels)", timed(warm, fresh_copy())))
        cold = fresh_copy()
        rows.append(("first `pcrp run old-faithful --iters 300`, cold cache (all kernels)", timed(first_run, cold)))
        rows.append(("the same run again, cache filled", timed(first_run, cold)))
        rows.append(("import + warm_up in a background thread while the main thread works 2 s, cold",
                     timed(background, fresh_copy())))
        rows.append(("python start-up and `import pcrp.sampling.sampler` alone, cache filled",
                     timed("import pcrp.sampling.sampler", cold)))
    lines += ["| what | seconds |", "|---|---|"] + [f"| {what} | {s:.1f} |" for what, s in rows]
    lines += ["", f"Load average at the end: {load_now():.2f}."]
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""A million points at defaults: `pcrp run` on four 2-D Gaussians, the working tree beside an earlier commit.

    python bench/million_points.py [--n 1000000] [--base-tree /work/wt/base] [--only new|base]

Writes the data to a CSV (four Gaussians, unit spread, centres 6 apart, a label column the run reports
against), runs `python -m pcrp.cli run DATA --label-column label --out ...` at its defaults (automatic
budget) with each tree on PYTHONPATH, one after the other, and prints the wall time and the run's own
"time: sampling X s, summaries Y s" line for each, and the ratio. The kernels are compiled (or loaded from
numba's cache) by a small run first, so neither figure counts compiling.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def write_data(path, n, seed=0):
    rng = np.random.default_rng(seed)
    centres = np.array([[0.0, 0.0], [6.0, 0.0], [0.0, 6.0], [6.0, 6.0]])
    labels = rng.integers(0, 4, n)
    X = centres[labels] + rng.normal(size=(n, 2))
    with open(path, "w") as f:
        f.write("x,y,label\n")
        np.savetxt(f, np.column_stack([X, labels]), delimiter=",", fmt=["%.6f", "%.6f", "%d"])


def run(tree, data, out):
    env = dict(os.environ, PYTHONPATH=str(tree))
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "pcrp.cli", "run", str(data), "--label-column", "label",
                           "--out", str(out)], env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{tree}: pcrp run failed\n{done.stderr[-3000:]}")
    found = re.search(r"time: sampling ([\d.]+) s, summaries ([\d.]+) s", done.stdout)
    sampling, summaries = (float(found[1]), float(found[2])) if found else (float("nan"), float("nan"))
    k_line = next((line for line in done.stdout.splitlines() if "K" in line and "mean" in line.lower()), "")
    return wall, sampling, summaries, k_line.strip()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--base-tree", default="/work/wt/base")
    parser.add_argument("--only", choices=["new", "base"])
    args = parser.parse_args()
    trees = {"base": Path(args.base_tree), "new": ROOT}
    if args.only:
        trees = {args.only: trees[args.only]}
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        data, small = folder / "four_gaussians.csv", folder / "small.csv"
        write_data(data, args.n)
        write_data(small, 200)
        print(f"{args.n:,} points, four 2-D Gaussians; load average {Path('/proc/loadavg').read_text().split()[:3]}")
        results = {}
        for name, tree in trees.items():
            run(tree, small, folder / f"warm_{name}.npz")  # compile or load the kernels outside the figure
            results[name] = run(tree, data, folder / f"run_{name}.npz")
            wall, sampling, summaries, k_line = results[name]
            print(f"{name:4s} ({tree}): wall {wall:6.1f} s  sampling {sampling:6.1f} s  summaries {summaries:5.1f} s"
                  f"  {k_line}", flush=True)
        if len(results) == 2:
            print(f"new / base: wall {results['new'][0] / results['base'][0]:.2f}, "
                  f"sampling {results['new'][1] / results['base'][1]:.2f}")
        print(f"load average at the end {Path('/proc/loadavg').read_text().split()[:3]}")


if __name__ == "__main__":
    main()

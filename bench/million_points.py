"""A million points at defaults: `pcrp run` on four 2-D Gaussians, the working tree beside an earlier commit.

    python bench/million_points.py [--n 1000000] [--base-tree /work/wt/base] [--only new|base]
    python bench/million_points.py --sampler     # the sweeps alone: Sampler.step, 20 sweeps in each tree
    python bench/million_points.py --sampler --scans  # ... the working tree's sweep orders (gibbs.SCAN_*), in turn

Writes the data to a CSV (four Gaussians, unit spread, centres 6 apart, a label column the run reports
against), runs `python -m pcrp.cli run DATA --label-column label --seed 1 --out ...` at its defaults (automatic
budget; the seed fixed so that both trees run the same chains' seeds) with each tree on PYTHONPATH, one after the other, and prints the wall time and the run's own
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


def make_data(n, seed=0):
    """(X (n, 2), labels (n,)): four unit Gaussians with centres 6 apart."""
    rng = np.random.default_rng(seed)
    centres = np.array([[0.0, 0.0], [6.0, 0.0], [0.0, 6.0], [6.0, 6.0]])
    labels = rng.integers(0, 4, n)
    return centres[labels] + rng.normal(size=(n, 2)), labels


def write_data(path, n, seed=0):
    X, labels = make_data(n, seed)
    with open(path, "w") as f:
        f.write("x,y,label\n")
        np.savetxt(f, np.column_stack([X, labels]), delimiter=",", fmt=["%.6f", "%.6f", "%d"])


def run(tree, data, out):
    env = dict(os.environ, PYTHONPATH=str(tree))
    start = time.perf_counter()
    command = [sys.executable, "-m", "pcrp.cli", "run", str(data), "--label-column", "label", "--seed", "1",
               "--out", str(out)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, cwd=out.parent)
    # (cwd away from either tree: `python -m` puts the working folder first on sys.path)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{tree}: pcrp run failed\n{done.stderr[-3000:]}")
    found = re.search(r"time: sampling ([\d.]+) s, summaries ([\d.]+) s", done.stdout)
    sampling, summaries = (float(found[1]), float(found[2])) if found else (float("nan"), float("nan"))
    k_line = next((line for line in done.stdout.splitlines() if "K" in line and "mean" in line.lower()), "")
    return wall, sampling, summaries, k_line.strip()


SAMPLER_LOOP = """
import sys, time
import numpy as np
sys.path.insert(0, {bench!r})
from million_points import make_data
from pcrp.model import PowerCRP, resolve_niw
from pcrp.sampler import Sampler
X, _ = make_data({n})
X = (X - X.mean(0)) / X.std(0)
s = Sampler(X, PowerCRP(1.0, 1.2), resolve_niw(X), seed=1, split_merge=1, init="kmeans:10")
{scan}
times, Ks = [], []
for chunk in range(4):
    start = time.thread_time()
    info = s.step(5)
    times.append((time.thread_time() - start) / 5 * 1e3)
    Ks.append(int(info.K[-1]))
import pcrp
print(pcrp.__file__, {scan!r}.split("#")[-1].strip(), ", ".join(f"{{t:.0f}}" for t in times), "ms per sweep (sweeps 1-5, 6-10, 11-15, 16-20); K after each:", Ks)
"""


def sampler_speed(trees, n, scans=("",)):
    """Thread CPU time per sweep of Sampler.step on the same data and seed in each tree (no budget, no summaries);
    scans: statements run after the sampler is made (each a run of its own)."""
    for name, tree in trees.items():
        for scan in scans:
            code = SAMPLER_LOOP.format(bench=str(ROOT / "bench"), n=n, scan=scan)
            done = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, PYTHONPATH=str(tree)),
                                  capture_output=True, text=True, cwd=tempfile.gettempdir())
            print(f"{name:4s}: {done.stdout.strip() or done.stderr[-2000:]}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--base-tree", default="/work/wt/base")
    parser.add_argument("--only", choices=["new", "base"])
    parser.add_argument("--sampler", action="store_true", help="time the sweeps alone (Sampler.step)")
    parser.add_argument("--scans", action="store_true",
                        help="with --sampler: the working tree alone, each sweep order twice, alternating")
    args = parser.parse_args()
    trees = {"base": Path(args.base_tree), "new": ROOT}
    if args.only:
        trees = {args.only: trees[args.only]}
    if args.sampler and args.scans:
        print(f"load average {Path('/proc/loadavg').read_text().split()[:3]}")
        orders = ["s.scan = 0  # SCAN_RANDOM", "s.scan = 1  # SCAN_MEMORY"]
        sampler_speed({"new": ROOT}, args.n, orders * 2)
        print(f"load average at the end {Path('/proc/loadavg').read_text().split()[:3]}")
        return
    if args.sampler:
        sampler_speed(trees, args.n)
        return
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

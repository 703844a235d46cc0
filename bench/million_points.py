"""A million points at defaults: `pcrp run` on four 2-D Gaussians, the working tree beside an earlier commit.

    python bench/million_points.py [--n 1000000] [--base-tree /work/wt/base] [--only new|base]
    python bench/million_points.py --only new    # this tree alone: the figure million_points (the base
                                                 # comparison is docs/records/million_points.md)
    python bench/million_points.py --sampler     # the sweeps alone: Sampler.step, 20 sweeps in each tree
    python bench/million_points.py --search [--rounds 3] # the point-estimate search alone, its phases
    python bench/million_points.py --outside-sampling [--chains RESULT.npz] [--rounds 3] [--base-tree /work/main]
        # everything but the sampling, A/B: each tree's `pcrp run` replaying the same saved chains
    python bench/million_points.py --sampler --scans  # ... the working tree's sweep orders (gibbs.SCAN_*), in turn

Writes the data to a CSV (four Gaussians, unit spread, centres 6 apart, a label column the run reports
against), runs `python -m pcrp.cli run DATA --label-column label --seed 1 --out ...` at its defaults (automatic
budget; the seed fixed so that both trees run the same chains' seeds) with each tree on PYTHONPATH, one after the other, and prints the wall time and the run's own
"time: sampling X s, summaries Y s" line for each, and the ratio. The kernels are compiled (or loaded from
numba's cache) by a small run first, so neither figure counts compiling.
"""

import argparse
import json
import os
import re
import resource
import statistics
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
    start, cpu = time.perf_counter(), children_cpu()
    command = [sys.executable, "-m", "pcrp.cli", "run", str(data), "--label-column", "label", "--seed", "1",
               "--out", str(out)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, cwd=out.parent)
    # (cwd away from either tree: `python -m` puts the working folder first on sys.path)
    wall = time.perf_counter() - start
    run.cpu = children_cpu() - cpu  # CPU seconds of that process, all its threads
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
from pcrp.sampling.sampler import Sampler
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


# One greedy run of the point-estimate search of each kind on 50 synthetic draws (the four clusters, 0.2% of the
# labels redrawn per draw), split into the start, the reallocation scans and the zealous attempts by running it
# with max_scans / zealous_attempts at 0; thread CPU seconds, so that the other processes' load counts less. A tree
# with the cost cache (greedy_search_by_type, then greedy_search on DrawCells) runs with it, its item types counted
# once before. (The zealous
# attempts are timed in both trees: pcrp.summaries.partition.point_estimate makes none at this size since the cache's tree.)
SEARCH_LOOP = """
import time
import numpy as np
from pcrp.kernels import search
from pcrp.kernels.rng import seed_state
from pcrp.summaries.partition import DrawTables, compact_labels
rng = np.random.default_rng(0)
N, S = {n}, 50
truth = rng.integers(0, 4, N)
draws = compact_labels(np.stack([np.where(rng.random(N) < 0.002, rng.integers(0, 6, N), truth) for _ in range(S)]))[0]
t = DrawTables(draws, np.full(S, 1 / S), "vi")
cap = int(draws.max()) + 1
if hasattr(search, "DrawCells"):  # the search's kernels on their named state, with the cost cache
    begun = time.thread_time()
    cells = t.cells(cap)
    print(f"item types: {{cells.n_types}} cached, {{time.thread_time() - begun:.2f}} s")
    def run(n, start, state, scans, zealous):
        part = cells._replace(cell=cells.cell[:n], item_type=cells.item_type[:n])
        return search.greedy_search(part, search.SearchSettings(cap, scans, zealous), start, state)
elif hasattr(search, "greedy_search_by_type"):  # the cost cache (points with equal cells share their costs)
    begun = time.thread_time()
    types = t.item_types(cap)
    print(f"item types: {{types[1]}} cached, {{time.thread_time() - begun:.2f}} s")
    def run(n, start, state, scans, zealous):
        return search.greedy_search_by_type(t.cell[:n], t.w, t.dF, cap, start, t.n_table, state, scans, zealous,
                                            types[0][:n], types[1])
else:
    def run(n, start, state, scans, zealous):
        return search.greedy_search(t.cell[:n], t.w, t.dF, cap, start, t.n_table, state, scans, zealous)
run(10, np.full(10, -1, np.int64), seed_state(1), 2, 2)  # compile
for kind, start in (("sequential", np.full(N, -1, np.int64)), ("from a draw", draws[7].astype(np.int64))):
    times = []
    for scans, zealous in ((0, 0), (50, 0), (50, 10)):
        begun = time.thread_time()
        labels, value = run(N, start, seed_state(3), scans, zealous)
        times.append(time.thread_time() - begun)
    print(f"{{kind}}: {{times[2]:.2f}} s = start {{times[0]:.2f}} + scans {{times[1] - times[0]:.2f}} + zealous "
          f"{{times[2] - times[1]:.2f}}; K {{len(np.unique(labels))}}, labels checksum {{int((labels * np.arange(N)).sum())}}, "
          f"value {{value:.6f}}", flush=True)
"""


def search_speed(trees, n, rounds):
    """SEARCH_LOOP in each tree, alternating, ``rounds`` times (fresh processes)."""
    for r in range(rounds):
        for name, tree in trees.items():
            done = subprocess.run([sys.executable, "-c", SEARCH_LOOP.format(n=n)], capture_output=True, text=True,
                                  env=dict(os.environ, PYTHONPATH=str(tree)), cwd=tempfile.gettempdir())
            for line in (done.stdout.strip() or done.stderr[-2000:]).splitlines():
                print(f"round {r + 1} {name:4s} {line}; load {Path('/proc/loadavg').read_text().split()[0]}",
                      flush=True)


# `pcrp run` with its main chains replayed from a saved file instead of sampled (the reference fit still samples):
# its wall time less reading that file and ArviZ's import (which a real run does beside the chains) is everything a
# run does outside sampling -- imports, reading the CSV, loading the kernels, the summaries, writing the result.
REPLAY = """
import json, sys, time
started = time.perf_counter()
import arviz
import pcrp.runs.chains
arviz_s = time.perf_counter() - started
begun = time.perf_counter()
saved = pcrp.runs.chains.ChainSet.load({chains!r})
read_s = time.perf_counter() - begun
plain, calls = pcrp.runs.chains.run_chains, []
def replay(X, spec, **kwargs):
    calls.append(1)
    return saved if len(calls) == 1 else plain(X, spec, **kwargs)
pcrp.runs.chains.run_chains = replay
from pcrp.analyses.run_summary import summarise_run as plain_summaries
import pcrp.analyses.run_summary
summaries = []
def timed(*args, **kwargs):
    begun = time.perf_counter()
    out = plain_summaries(*args, **kwargs)
    summaries.append(time.perf_counter() - begun)
    return out
pcrp.analyses.run_summary.summarise_run = timed
from pcrp.cli import main
rc = main(['run', {data!r}, '--label-column', 'label', '--seed', '1', '--out', {out!r}])
print(json.dumps({{'rc': rc, 'outside': time.perf_counter() - started - arviz_s - read_s, 'summaries': summaries[0]}}),
      file=sys.stderr)
"""


def children_cpu():
    """CPU seconds (user + system) of the finished child processes so far: on a shared machine a run's CPU time
    moves less with the other processes' load than its wall time."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def outside_sampling(trees, data, chains, folder, rounds):
    """Alternate rounds of REPLAY in each tree (fresh processes); print each round and the medians."""
    results = {name: [] for name in trees}
    for r in range(rounds):
        for name, tree in trees.items():
            code = REPLAY.format(chains=str(chains), data=str(data), out=str(folder / f"replay_{name}.npz"))
            cpu = children_cpu()
            done = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, PYTHONPATH=str(tree)),
                                  capture_output=True, text=True, cwd=folder)
            if done.returncode != 0:
                raise SystemExit(f"{tree}: replay failed\n{done.stderr[-3000:]}")
            report = json.loads(done.stderr.strip().splitlines()[-1])
            report["cpu"] = children_cpu() - cpu
            results[name].append(report)
            print(f"round {r + 1} {name:4s} ({tree}): outside sampling {report['outside']:6.1f} s, of which "
                  f"summaries {report['summaries']:6.1f} s; CPU of the whole process {report['cpu']:6.1f} s; "
                  f"load {Path('/proc/loadavg').read_text().split()[0]}", flush=True)
    medians = {name: statistics.median(x["outside"] for x in got) for name, got in results.items()}
    cpus = {name: statistics.median(x["cpu"] for x in got) for name, got in results.items()}
    print("medians: " + ", ".join(f"{name} {m:.1f} s (CPU {cpus[name]:.1f} s)" for name, m in medians.items()))
    if len(medians) == 2:
        print(f"new / base, outside sampling: {medians['new'] / medians['base']:.2f} wall, "
              f"{cpus['new'] / cpus['base']:.2f} CPU")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--base-tree", default="/work/wt/base")
    parser.add_argument("--only", choices=["new", "base"])
    parser.add_argument("--sampler", action="store_true", help="time the sweeps alone (Sampler.step)")
    parser.add_argument("--search", action="store_true",
                        help="the point-estimate search alone: one greedy run of each kind, its phases timed")
    parser.add_argument("--outside-sampling", action="store_true",
                        help="time everything but the sampling: each tree replays the same saved chains")
    parser.add_argument("--chains", help="with --outside-sampling: a RESULT.npz of this data (default: run once)")
    parser.add_argument("--rounds", type=int, default=3,
                        help="with --outside-sampling or --search: A/B rounds (default 3)")
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
    if args.search:
        search_speed(trees, args.n, args.rounds)
        return
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        data, small = folder / "four_gaussians.csv", folder / "small.csv"
        write_data(data, args.n)
        write_data(small, 200)
        print(f"{args.n:,} points, four 2-D Gaussians; load average {Path('/proc/loadavg').read_text().split()[:3]}")
        if args.outside_sampling:
            chains = Path(args.chains) if args.chains else folder / "chains.npz"
            for name, tree in trees.items():  # kernels compiled or loaded outside the figures, as below
                run(tree, small, folder / f"warm_{name}.npz")
            if not args.chains:
                run(ROOT, data, chains)
            outside_sampling(trees, data, chains.resolve(), folder, args.rounds)
            print(f"load average at the end {Path('/proc/loadavg').read_text().split()[:3]}")
            return
        results = {}
        for name, tree in trees.items():
            run(tree, small, folder / f"warm_{name}.npz")  # compile or load the kernels outside the figure
            results[name] = run(tree, data, folder / f"run_{name}.npz")
            wall, sampling, summaries, k_line = results[name]
            print(f"{name:4s} ({tree}): wall {wall:6.1f} s  sampling {sampling:6.1f} s  summaries {summaries:5.1f} s"
                  f"  outside sampling {wall - sampling:5.1f} s  CPU {run.cpu:6.1f} s  {k_line}", flush=True)
        if len(results) == 2:
            print(f"new / base: wall {results['new'][0] / results['base'][0]:.2f}, "
                  f"sampling {results['new'][1] / results['base'][1]:.2f}")
        print(f"load average at the end {Path('/proc/loadavg').read_text().split()[:3]}")


if __name__ == "__main__":
    main()

"""Start-up: `pcrp --help`'s wall time and the time `pcrp run old-faithful --iters 20` spends outside sampling.

    python bench/start_up.py [--runs 5] [--base-tree /work/main]

Each figure is the median (and range) of ``--runs`` fresh processes that run as the console script does
(``python -c`` calling ``pcrp.cli.console``, or ``main`` in a tree before it, with this tree first on PYTHONPATH,
from a folder outside it).
"Outside sampling" is the process's wall time minus the seconds the run's chains swept: the chains'
``wall_seconds`` (the run prints them rounded as "time: sampling X s"; read here unrounded) less the budget's
judgements inside them (R-hat, ESS and modes at its checkpoints, timed here), since the first judgement imports
arviz-stats (about 0.75 s, against 0.04 s for the 20 sweeps of 272 points). So "outside sampling" is Python's start,
imports (arviz-stats included), loading the cached kernels, the starts, the judgements, the summaries (with the
reference fit) and writing the file. One run before the figures loads the kernels into numba's cache, so no figure
counts compiling. The last columns say whether scikit-learn, ArviZ and arviz-stats were imported by the run. With
``--base-tree`` the rounds alternate between that tree and this one (A/B in one run) and the ratios are printed.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# the console script's entry (pcrp.cli.console: main, then gc.freeze before the teardown); main in trees before it
ENTRY = "import pcrp.cli\nentry = getattr(pcrp.cli, 'console', pcrp.cli.main)\n"
HELP = "import sys\n" + ENTRY + "sys.argv[1:] = ['--help']\nsys.exit(entry())"
# the main run's sweeps (the first run_chains call, less its judgements; a second call is the reference fit,
# part of the summaries)
RUN = """
import importlib, json, sys, time
try:  # the layered tree, or the flat one before it
    chains_module = importlib.import_module("pcrp.runs.chains")
except ModuleNotFoundError:
    chains_module = importlib.import_module("pcrp.chains")
sampled, judging = [], []
plain_judge = chains_module.judge
def timed_judge(*args, **kwargs):
    started = time.perf_counter()
    try:
        return plain_judge(*args, **kwargs)
    finally:
        judging.append(time.perf_counter() - started)
chains_module.judge = timed_judge
plain = chains_module.run_chains
def timed(*args, **kwargs):
    before = len(judging)
    chains = plain(*args, **kwargs)
    sampled.append(chains.wall_seconds - sum(judging[before:]))
    return chains
chains_module.run_chains = timed
""" + ENTRY + """
sys.argv[1:] = ['run', 'old-faithful', '--iters', '20', '--seed', '0', '--out', 'r.npz']
rc = entry()
loaded = {name: any(m.split('.')[0] == name for m in sys.modules) for name in ('sklearn', 'arviz', 'arviz_stats')}
print(json.dumps({'rc': rc, 'sampling': sampled[0], **loaded}), file=sys.stderr)
"""


def fresh_process(tree, code, folder):
    """(wall seconds, stderr) of ``python -c code`` with ``tree`` first on PYTHONPATH, run in ``folder``."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code], env=env, cwd=folder, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{tree}: failed ({done.returncode})\n{done.stderr[-3000:]}")
    return wall, done.stderr


def one_round(tree, folder):
    """{'help': s, 'run wall': s, 'sampling': s, 'outside': s, 'sklearn': bool, 'arviz': bool, 'arviz_stats': bool}
    of one fresh process each."""
    help_wall, _ = fresh_process(tree, HELP, folder)
    run_wall, err = fresh_process(tree, RUN, folder)
    report = json.loads(err.strip().splitlines()[-1])
    return {"help": help_wall, "run wall": run_wall, "sampling": report["sampling"],
            "outside": run_wall - report["sampling"],
            **{m: report.get(m, False) for m in ("sklearn", "arviz", "arviz_stats")}}


def spread(values):
    return f"{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})"


def load():
    return Path("/proc/loadavg").read_text().split()[0]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="fresh processes per figure (default 5)")
    parser.add_argument("--base-tree", help="another checkout to run in alternate rounds (A/B)")
    args = parser.parse_args()
    trees = {"this tree": ROOT} if not args.base_tree else {"base": Path(args.base_tree), "this tree": ROOT}
    print(f"load average at the start {load()}; median (range) of {args.runs} fresh processes each, seconds")
    with tempfile.TemporaryDirectory() as folder:  # away from every tree: `python -c` puts the folder first
        for tree in trees.values():
            one_round(tree, folder)  # the kernels into numba's cache, the files into the page cache
        rounds = {name: [] for name in trees}
        for _ in range(args.runs):
            for name, tree in trees.items():
                rounds[name].append(one_round(tree, folder))
    print(f"{'tree':10s} {'pcrp --help':>20s} {'run: wall':>20s} {'sampling':>20s} {'outside sampling':>20s}"
          "  imported")
    for name, results in rounds.items():
        column = {key: [r[key] for r in results] for key in results[0]}
        imported = ", ".join(f"{m} {'yes' if any(column[m]) else 'no'}" for m in ("sklearn", "arviz", "arviz_stats"))
        print(f"{name:10s} {spread(column['help']):>20s} {spread(column['run wall']):>20s} "
              f"{spread(column['sampling']):>20s} {spread(column['outside']):>20s}  {imported}")
    if args.base_tree:
        for key in ("help", "run wall", "outside"):
            ratio = (statistics.median(r[key] for r in rounds["this tree"])
                     / statistics.median(r[key] for r in rounds["base"]))
            print(f"this tree / base, {key}: {ratio:.2f}")
    print(f"targets: pcrp --help under 0.5 s, outside sampling under 1 s; load average at the end {load()}")


if __name__ == "__main__":
    main()

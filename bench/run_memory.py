"""Peak memory of `pcrp run` against its memory plan (pcrp.runs.memory_plan), at up to 1,000,000 points.

    python bench/run_memory.py [--cases 100000:500:250:1,1000000:40:20:1] [--n-jobs -1] [--source DIR]

Each case N:iters:burn_in:thin runs `pcrp run sim1 --n N --iters ... --chains 4` (the default prior, starts,
summaries and output file) in a child process whose resident memory is sampled every 5 ms (psutil). The fixed
cost of a run (the interpreter, NumPy, numba's kernels, scikit-learn, ArviZ, first-call buffers) is the peak of
the same command at N = 200; the plan covers what a run adds to it. Prints, per case: the measured peak, the
fixed cost, the peak above it, the plan (what `pcrp run` checks against the free memory before it starts) and
their ratio, with the plan's parts, and the run's own `time:` line. Load average before and after.
--source runs the child from another checkout of pcrp (e.g. `git worktree add /tmp/old 413c02b`), for a
before / after comparison; the plan printed is still this checkout's.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

import psutil

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from provenance import header, load_now  # noqa: E402

DEFAULT_CASES = "100000:500:250:1,1000000:40:20:1"


def measure(n, iters, burn_in, thin, n_jobs, out_dir, source=None):
    """(peak RSS bytes of the child, its `time:` line) for one `pcrp run` (of the checkout ``source``)."""
    out = os.path.join(out_dir, f"run_{n}.npz")
    command = [sys.executable, "-m", "pcrp.cli", "run", "sim1", "--n", str(n), "--iters", str(iters),
               "--burn-in", str(burn_in), "--thin", str(thin), "--chains", "4", "--n-jobs", str(n_jobs),
               "--out", out]
    env = dict(os.environ, PYTHONPATH=source) if source else None
    # run from out_dir: `python -m` puts the working directory first on sys.path, before PYTHONPATH
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                             cwd=out_dir)
    proc = psutil.Process(child.pid)
    peak = 0
    while child.poll() is None:
        try:
            peak = max(peak, proc.memory_info().rss)
        except psutil.NoSuchProcess:
            break
        time.sleep(0.005)
    text = child.stdout.read()
    if child.returncode != 0:
        raise SystemExit(f"`{' '.join(command)}` failed:\n{text}")
    line = next((ln for ln in text.splitlines() if ln.startswith("time:")), "")
    return peak, line


def main():
    import numpy as np

    from pcrp.runs.run_spec import make_run_spec

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default=DEFAULT_CASES)
    parser.add_argument("--n-jobs", type=int, default=-1)
    parser.add_argument("--source", help="run `pcrp run` from this checkout of pcrp instead")
    args = parser.parse_args()
    cases = [tuple(int(v) for v in case.split(":")) for case in args.cases.split(",")]
    mib = 2**20
    print(header("python bench/run_memory.py" + (f" --cases {args.cases}" if args.cases != DEFAULT_CASES else "")),
          flush=True)
    with tempfile.TemporaryDirectory() as out_dir:
        for n, iters, burn_in, thin in cases:
            fixed, _ = measure(200, iters, burn_in, thin, args.n_jobs, out_dir, args.source)
            peak, line = measure(n, iters, burn_in, thin, args.n_jobs, out_dir, args.source)
            # the plan `pcrp run` checks: its run specification's, for data of this shape
            plan = make_run_spec(np.zeros((n, 1)), n_chains=4, iters=iters, burn_in=burn_in, thin=thin,
                                 n_jobs=args.n_jobs).memory
            kept = 4 * ((iters - burn_in) // thin)
            above = peak - fixed
            print(f"N = {n:>9,} ({iters} sweeps, {kept} kept draws): peak {peak / mib:7.0f} MiB, fixed cost "
                  f"{fixed / mib:5.0f} MiB, above it {above / mib:7.0f} MiB; plan {plan.total / mib:7.0f} MiB "
                  f"= {plan.total / above:.2f} x the measured; {line}", flush=True)
            print("    plan: " + ", ".join(f"{name} {value / mib:.0f} MiB" for name, value in plan.parts.items()),
                  flush=True)
    print(f"load average after: {load_now():.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Summary time against sampling time for the default `pcrp run`, new code and (where affordable) the old path.

    python bench/summaries_speed.py [--n 2000,20000] [--old-max-n 2000] [--old-commit d41ca0a]

For each N: Sim 1 data (as `pcrp run sim1 --n N`: not standardised; drawn here for N above the data module's
row limit), the default prior, 4 chains of 2,000 sweeps (burn-in 1,000, thin 5: 800 kept draws) on all cores,
timed wall-clock. Then the summaries, each timed with the peak resident memory above the start of the stage
(psutil, sampled every 10 ms):
  new: point estimate from the draws (pcrp.summaries.partition.point_estimate), diagnostics (ArviZ), modes, the model's
       predictive density on the 1-D grid (density_panel with the prior, 200 draws, the band) -- what
       `pcrp run` and the app's summary compute;
  old: the similarity matrix plus the psm-based point estimate of pcrp/summaries/partition.py at --old-commit (loaded from
       git into this process), for N <= --old-max-n (at N = 20,000 its matrix alone is 1.6 GB).
Prints the load average before and after: the figures are only comparable within one run.
"""

import argparse
import importlib.util
import os
import subprocess
import sys
import threading
import time

import numpy as np
import psutil

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Peak:
    """Peak RSS above the level at entry, sampled every 10 ms in a thread."""

    def __enter__(self):
        self.proc = psutil.Process()
        self.base = self.proc.memory_info().rss
        self.peak = self.base
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._watch, daemon=True)
        self.thread.start()
        self.t0 = time.perf_counter()
        return self

    def _watch(self):
        while not self.stop.wait(0.01):
            self.peak = max(self.peak, self.proc.memory_info().rss)

    def __exit__(self, *exc):
        self.seconds = time.perf_counter() - self.t0
        self.stop.set()
        self.thread.join()
        self.peak = max(self.peak, self.proc.memory_info().rss)
        self.mib = (self.peak - self.base) / 2**20


def old_partition(commit):
    """pcrp/summaries/partition.py at ``commit`` as the module pcrp._old_partition (its relative imports resolve in pcrp)."""
    source = subprocess.run(["git", "-C", ROOT, "show", f"{commit}:pcrp/summaries/partition.py"], capture_output=True,
                            text=True, check=True).stdout
    spec = importlib.util.spec_from_loader("pcrp._old_partition", loader=None)
    module = importlib.util.module_from_spec(spec)
    module.__package__ = "pcrp"
    exec(compile(source, f"{commit}:pcrp/summaries/partition.py", "exec"), module.__dict__)
    return module


def sim1(n, seed=0):
    from pcrp.data import SIMULATIONS

    spec = SIMULATIONS["sim1"]
    rng = np.random.default_rng(seed)
    labels = rng.choice(3, size=n, p=spec["weights"])
    x = rng.normal(np.take(spec["means"], labels), np.take(spec["sds"], labels))
    return x[:, None].astype(np.float64), labels


def main():
    from pcrp.runs.chains import run_chains
    from pcrp.analyses.density import density_panel
    from pcrp.model import resolve_niw
    from pcrp.runs.run_spec import make_run_spec
    from pcrp.summaries.modes import find_modes
    from pcrp.summaries.partition import point_estimate

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", default="2000,20000")
    parser.add_argument("--old-max-n", type=int, default=2000)
    parser.add_argument("--old-commit", default="d41ca0a")
    parser.add_argument("--iters", type=int, help="a fixed number of sweeps (default: the automatic budget)")
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()}; cores: {os.cpu_count()}")
    old = old_partition(args.old_commit)
    rows = []
    for n in [int(v) for v in args.n.split(",")]:
        X, _ = sim1(n)
        niw = resolve_niw(X)
        with Peak() as sampling:
            spec = make_run_spec(X, niw=niw, iters=args.iters, seed=0)  # pcrp run's defaults
            chains = run_chains(X, spec)
        prior = spec.prior
        draws = chains.pooled_labels()
        with Peak() as point:
            estimate = point_estimate(draws, "vi", seed=0)
        with Peak() as diag:
            diagnostics = chains.diagnostics()
            find_modes(chains, seed=0, pooled=estimate, diagnostics=diagnostics)
        with Peak() as dens:
            density_panel(X, draws, estimate.labels, niw, prior=prior, max_draws=200, seed=0)
        new_total = point.seconds + diag.seconds + dens.seconds
        line = (f"N={n:>7,}: sampling {sampling.seconds:7.1f} s (+{sampling.mib:6.0f} MiB) | new summaries "
                f"{new_total:6.1f} s = point estimate {point.seconds:.1f} s (+{point.mib:.0f} MiB, "
                f"{estimate.n_clusters} clusters, search over {estimate.n_draws} of {estimate.n_draws_total} draws) "
                f"+ diagnostics & modes {diag.seconds:.1f} s + density {dens.seconds:.1f} s (+{dens.mib:.0f} MiB): "
                f"{100 * new_total / sampling.seconds:.0f}% of sampling")
        if n <= args.old_max_n:
            with Peak() as old_run:
                psm = old.similarity_matrix(draws)
                old_est = old.point_estimate(draws, "vi", psm=psm, seed=0)
            line += (f" | old psm + point estimate {old_run.seconds:.1f} s (+{old_run.mib:.0f} MiB, "
                     f"{old_est.n_clusters} clusters, expected VI {old_est.expected_loss:.4f} vs new "
                     f"{estimate.expected_loss:.4f})")
            del psm
        else:
            line += f" | old path skipped (N > {args.old_max_n}: its matrix alone is {4 * n * n / 2**30:.1f} GiB)"
        print(line, flush=True)
        rows.append(line)
        del chains, draws
    print(f"load average after: {os.getloadavg()}")

    return 0


if __name__ == "__main__":
    sys.exit(main())

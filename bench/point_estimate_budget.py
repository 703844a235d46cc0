"""What the point estimate's search costs now that it merges identical draws and reads every distinct one up to its
budget, against the search that read at most 200 evenly spaced draws (pcrp/summaries/partition.py at --old-commit).

    python bench/point_estimate_budget.py [--n 2000,100000] [--old-commit a60a431] [--exact-sweeps 50000]

For each N: Sim 1 data (as bench/summaries_speed.py), the default prior, 4 chains of the default schedule (2,000
sweeps, burn-in 1,000, thin 5: 800 kept draws) and, for N <= 2,000, the paper's (20,000 sweeps, burn-in 10,000,
thin 5: 8,000 kept draws). Then each search (seed 0, expected VI), timed with its peak resident memory above the
start: the draws it read, the distinct ones, the clusters and the expected VI over every draw. First, one of the
exact cases (N = 7, 1-D, CRP, --exact-sweeps draws kept from one chain): the expected VI of each search's answer
against the minimum over all 877 partitions (enumerated). Prints the load average before and after: the figures
are only comparable within one run.
"""

import argparse
import os
import sys
import time

import numpy as np

from summaries_speed import Peak, old_partition, sim1


def exact_case(old, sweeps):
    from pcrp.model.exact import canonical, exact_posterior
    from pcrp.model import CRP, resolve_niw
    from pcrp.summaries.partition import expected_loss, point_estimate
    from pcrp.runs.chains import run_chain as run

    X = np.random.default_rng(8).normal(size=(7, 1))
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    niw = resolve_niw(X)
    parts = exact_posterior(X, CRP(1.0), niw)[0]
    chain = run(X, CRP(1.0), niw, iters=sweeps, burn_in=0, thin=1, seed=1, init="one")
    best = min(expected_loss(np.array(p), chain.labels) for p in parts)  # over every partition, every draw
    for name, search in (("old", old.point_estimate), ("new", point_estimate)):
        t0 = time.perf_counter()
        est = search(chain.labels, "vi", seed=4)
        seconds = time.perf_counter() - t0
        gap = expected_loss(est.labels, chain.labels) - best
        print(f"exact case N=7 CRP, {sweeps:,} draws: {name} {seconds:.2f} s, read {est.n_draws} draws, expected VI "
              f"{gap:+.2e} bits above the minimum over all partitions ({canonical(est.labels)})", flush=True)


def main():
    from pcrp.runs.chains import run_chains
    from pcrp.model import DEFAULT_PRIOR, make_prior, resolve_niw
    from pcrp.summaries.partition import point_estimate
    from pcrp.runs.run_spec import make_run_spec

    DEFAULT_CHAINS, DEFAULT_ITERS, DEFAULT_BURN_IN, DEFAULT_THIN = 4, 2000, 1000, 5  # `pcrp run --iters 2000`

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", default="2000,100000")
    parser.add_argument("--old-commit", default="a60a431")
    parser.add_argument("--exact-sweeps", type=int, default=50_000)
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()}; cores: {os.cpu_count()}", flush=True)
    old = old_partition(args.old_commit)
    exact_case(old, args.exact_sweeps)
    prior = make_prior(DEFAULT_PRIOR)
    for n in [int(v) for v in args.n.split(",")]:
        X, _ = sim1(n)
        niw = resolve_niw(X)
        schedules = [("default", DEFAULT_ITERS, DEFAULT_BURN_IN, DEFAULT_THIN)]
        if n <= 2000:
            schedules.append(("paper", 20_000, 10_000, 5))
        for name, iters, burn_in, thin in schedules:
            t0 = time.perf_counter()
            chains = run_chains(X, make_run_spec(X, prior=prior, niw=niw, n_chains=DEFAULT_CHAINS, iters=iters,
                                                 burn_in=burn_in, thin=thin, seed=0, n_jobs=-1))
            sampling = time.perf_counter() - t0
            draws = chains.pooled_labels()
            line = [f"N={n:>7,} {name} schedule ({draws.shape[0]:,} draws): sampling {sampling:.1f} s"]
            for label, search in (("old", old.point_estimate), ("new", point_estimate)):
                with Peak() as peak:
                    est = search(draws, "vi", seed=0)
                distinct = getattr(est, "n_distinct", None)
                line.append(f"{label} {peak.seconds:.2f} s (+{peak.mib:.0f} MiB), read {est.n_draws} draws"
                            + (f" ({distinct} distinct)" if distinct is not None else "")
                            + f", K {est.n_clusters}, expected VI {est.expected_loss:.5f}")
            print(" | ".join(line), flush=True)
            del chains, draws
    print(f"load average after: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

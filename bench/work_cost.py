"""What sampling costs against what the work budgets estimate (pcrp.sampling.compute.work_cost), measured in one run.

    python bench/work_cost.py            # about 2 minutes on one core
    python bench/work_cost.py --quick    # fewer sweeps

Every work budget of the app (Choose r, Reproduce, the Explorer's live runs and each visitor's share of them)
counts work with one formula, pcrp.sampling.compute.work_cost: points x (expected clusters + 1) x sweeps x chains
point-cluster evaluations, each taking A + B d^2 seconds (pcrp.sampling.compute.EVALUATION_SECONDS), with the expected
clusters the CRP's prior mean at N (pcrp.sampling.compute.expected_clusters). This runs whole chains (pcrp.runs.chains.run_chain:
the default k-means start and one split-merge move per sweep, one core, no compute slot) on mixtures of 4
Gaussian clusters at several N and d and on Old Faithful, and prints per case: the chain's wall time, the
estimate, their ratio (above 1: the budget undercounts), the mean K against the expected clusters, and the
time per point-cluster evaluation at the chain's own mean K, from which A and B were fitted.
"""

import argparse
import time

import numpy as np

from pcrp import data
from pcrp.sampling.compute import EVALUATION_SECONDS, expected_clusters, work_cost
from pcrp.model import CRP, PowerCRP, resolve_niw
from pcrp.runs.chains import run_chain as run
from pcrp.runs.compiling import compile_kernels


def mixture(n, d, seed=0, k=4):
    rng = np.random.default_rng(seed)
    centres = rng.normal(0, 3, (k, d))
    X = centres[rng.integers(0, k, n)] + rng.normal(size=(n, d))
    return (X - X.mean(0)) / X.std(0)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    scale = 0.25 if args.quick else 1.0
    compile_kernels()  # every group, so that no timing below includes a compile
    run(data.old_faithful().X, CRP(1.0), resolve_niw(data.old_faithful().X), iters=50, seed=0)  # first-call costs
    cases = [("Old Faithful", data.old_faithful().X, 2000)]
    for n, d, sweeps in [(1000, 1, 2000), (1000, 2, 2000), (1000, 10, 1000), (1000, 20, 500), (1000, 50, 200),
                         (300, 50, 500), (5000, 2, 400), (5000, 10, 200)]:
        cases.append((f"4 clusters N={n} d={d}", mixture(n, d), sweeps))
    a, b = EVALUATION_SECONDS
    print(f"estimate: N x (expected clusters + 1) x sweeps x ({a * 1e9:g} + {b * 1e9:g} d^2) ns")
    print(f"{'case':28s} {'prior':10s} {'sweeps':>6s} {'wall s':>7s} {'estimate s':>10s} {'ratio':>6s} "
          f"{'mean K':>6s} {'exp. K':>6s} {'ns/eval':>8s}")
    ratios = []
    for name, X, sweeps in cases:
        sweeps = max(50, int(sweeps * scale))
        n, d = X.shape
        niw = resolve_niw(X)
        for prior in (CRP(1.0), PowerCRP(1.0, 1.5)):
            started = time.perf_counter()
            chain = run(X, prior, niw, iters=sweeps, burn_in=sweeps // 2, thin=10, seed=0)
            wall = time.perf_counter() - started
            estimate = work_cost(n, d, sweeps)
            per_eval = wall / (n * (chain.K.mean() + 1) * sweeps)
            ratios.append(wall / estimate)
            print(f"{name:28s} {prior.label():10.10s} {sweeps:6d} {wall:7.2f} {estimate:10.2f} {wall / estimate:6.2f} "
                  f"{chain.K.mean():6.1f} {expected_clusters(n):6.1f} {per_eval * 1e9:8.1f}", flush=True)
    print(f"ratio wall / estimate: median {np.median(ratios):.2f}, range {min(ratios):.2f}-{max(ratios):.2f}")


if __name__ == "__main__":
    main()

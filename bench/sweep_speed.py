"""Speed of the numba sweep against a plain NumPy sweep, measured in one run.

    python bench/sweep_speed.py            # full run (about 1-2 minutes on 2 cores)
    python bench/sweep_speed.py --quick    # fewer sweeps
    python bench/sweep_speed.py --priors crp,pcrp,py,mfm,sfm   # every prior (py, mfm, sfm at their defaults)

Prints, per data shape and prior: seconds per sweep and nanoseconds per
point-cluster evaluation (sweep time / (N x (mean K + 1))), with split-merge
moves off (the paper's plain Gibbs) and on (one move per sweep, the default),
and the speed-up over bench/numpy_reference.py (the CRP and pCRP only: the reference
takes alpha and g(n); "-" for the other priors). Then the paper's protocol (20,000 sweeps)
on Old Faithful. The CRP is CRP(1) and the pCRP PowerCRP(1, 1.2) whatever the registry's
default r, so that runs before and after a change compare.
"""

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from numpy_reference import numpy_sweep  # noqa: E402
from provenance import header, load_now  # noqa: E402

from pcrp.data import old_faithful  # noqa: E402
from pcrp.model import CRP, PRIORS, PowerCRP, make_prior, resolve_niw  # noqa: E402
from pcrp.runs.chains import run_chain as run  # noqa: E402
from pcrp.sampling.sampler import Sampler
def shapes():
    rng = np.random.default_rng(0)

    def mixture(n, d):
        centres = rng.normal(0, 3, (3, d))
        X = centres[rng.integers(0, 3, n)] + rng.normal(size=(n, d))
        return (X - X.mean(0)) / X.std(0)

    return [("Old Faithful N=272 d=2", old_faithful().X), ("N=2000 d=1", mixture(2000, 1)),
            ("N=2000 d=10", mixture(2000, 10))]


def numba_speed(X, prior, niw, split_merge, sweeps):
    s = Sampler(X, prior, niw, seed=1, split_merge=split_merge)
    s.step(max(20, sweeps // 5))  # warm up and leave the start behind
    info = s.step(sweeps)
    per_sweep = info.seconds / sweeps
    evaluations = X.shape[0] * (info.K.mean() + 1)
    return per_sweep, per_sweep / evaluations * 1e9, info.K.mean(), s.labels.copy()


def numpy_speed(X, prior, niw, labels, sweeps):
    rng = np.random.default_rng(0)
    labels = labels.copy()
    start = time.perf_counter()
    evaluations = sum(numpy_sweep(X, labels, lambda n: float(prior.log_weight(n)), prior.alpha,
                                  niw.m0, niw.kappa0, niw.nu0, niw.S0, rng) for _ in range(sweeps))
    seconds = time.perf_counter() - start
    return seconds / sweeps, seconds / evaluations * 1e9


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--priors", default="crp,pcrp", help=f"comma-separated, of {', '.join(PRIORS)}")
    args = parser.parse_args()
    fixed = {"crp": CRP(1.0), "pcrp": PowerCRP(1.0, 1.2)}
    priors = [fixed.get(name) or make_prior(name) for name in args.priors.split(",")]
    width = max(16, *(len(p.label()) for p in priors))
    numba_sweeps = 300 if args.quick else 2000
    numpy_sweeps = 1 if args.quick else 2
    print(header("python bench/sweep_speed.py" + (" --quick" if args.quick else "")
                 + (f" --priors {args.priors}" if args.priors != "crp,pcrp" else "")))
    # compile once before timing
    X0 = np.random.default_rng(0).normal(size=(20, 2))
    Sampler(X0, CRP(1.0), resolve_niw(X0), seed=0).step(2)

    print(f"{'data':24s} {'prior':{width}s} {'split-merge':>11s} {'K':>5s} {'ms/sweep':>9s} "
          f"{'ns/eval':>8s} {'numpy ms/sweep':>15s} {'numpy ns/eval':>14s} {'speed-up':>9s}")
    for name, X in shapes():
        niw = resolve_niw(X)
        for prior in priors:
            results = {sm: numba_speed(X, prior, niw, sm, numba_sweeps if X.shape[0] < 1000 else numba_sweeps // 4)
                       for sm in (0, 1)}
            has_reference = prior.name in fixed
            if has_reference:
                np_sweep, np_eval = numpy_speed(X, prior, niw, results[0][3], numpy_sweeps)
            for sm, (sec, ns, k, _) in results.items():
                reference = (f"{np_sweep * 1e3:15.1f} {np_eval:14.0f} {np_sweep / sec:8.0f}x" if has_reference
                             else f"{'-':>15s} {'-':>14s} {'-':>9s}")
                print(f"{name:24s} {prior.label():{width}s} {'on' if sm else 'off':>11s} {k:5.2f} {sec * 1e3:9.3f} "
                      f"{ns:8.1f} {reference}")

    X = old_faithful().X
    niw = resolve_niw(X)
    for prior in priors:
        for sm in (False, True):
            start = time.perf_counter()
            chain = run(X, prior, niw, iters=20_000, burn_in=10_000, thin=5, seed=0, split_merge=sm)
            wall = time.perf_counter() - start
            print(f"paper protocol, Old Faithful, {prior.label()}, split-merge {'on' if sm else 'off'}: "
                  f"20,000 sweeps in {chain.seconds_per_sweep * 20_000:.2f} s of sampling "
                  f"({wall:.2f} s wall with recording)")
    print(f"load average at the end: {load_now():.2f}")


if __name__ == "__main__":
    main()

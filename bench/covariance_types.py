"""The covariance types' speed, measured in one run: the sweep per type and d, and a fit against scikit-learn's
BayesianGaussianMixture with the same covariance_type.

    python bench/covariance_types.py                 # both parts (about 10 minutes on 2 cores)
    python bench/covariance_types.py --part sweeps   # ms per sweep per type at d = 2, 10, 50
    python bench/covariance_types.py --part bgm      # N = 20,000, d = 50 against BayesianGaussianMixture

Part 1 ("sweeps"): for d = 2, 10, 50 a mixture of 6 Gaussians, N = 2,000, standardised; per covariance type a
CRP(1) sampler with one split-merge move per sweep, warmed up 50 sweeps from a k-means start, then the median over
``--rounds`` of the time of ``--sweeps`` sweeps: milliseconds per sweep, mean K, and the ratio to the full type's
time at the same d.

Part 2 ("bgm"): N = 20,000 points in d = 50 from 8 clusters, each with its own diagonal covariance (variances
0.5 to 2 per column, means N(0, 1.5^2 I) apart), not standardised. Per covariance type, scikit-learn's
BayesianGaussianMixture (Dirichlet process, 20 components, max_iter 500, k-means start, its defaults otherwise) and
the pCRP sampler (the registry's pCRP at r = 1.2, alpha = 1, one chain from k-means:10, ``--fit-sweeps`` sweeps,
the last sweep's partition): wall seconds of the fit and NMI against the true labels; the ratio ours / BGM's time.
One chain and its last partition is the comparable unit (BGM gives one labelling); pcrp run's summaries (four
chains, the point estimate over kept draws) cost more and are measured by bench/million_points.py.
"""

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from provenance import header  # noqa: E402

from pcrp.model import CRP, PowerCRP, resolve_niw  # noqa: E402
from pcrp.sampling.sampler import Sampler, warm_up_sweeps  # noqa: E402

TYPES = ("full", "diag", "spherical")


def mixture(n, d, k, seed):
    rng = np.random.default_rng(seed)
    centres = rng.normal(0, 3, (k, d))
    X = centres[rng.integers(0, k, n)] + rng.normal(size=(n, d))
    return (X - X.mean(0)) / X.std(0)


def sweeps_part(rounds, sweeps):
    print("\n## ms per sweep, N = 2,000, CRP(1), one split-merge move per sweep\n")
    print("| d | type | ms / sweep | mean K | / full |")
    print("|---|---|---|---|---|")
    for d in (2, 10, 50):
        X = mixture(2000, d, 6, seed=d)
        full = None
        for covariance_type in TYPES:
            warm_up_sweeps(covariance_type)
            sampler = Sampler(X, CRP(1.0), resolve_niw(X, covariance_type=covariance_type), seed=1)
            sampler.step(50)
            times, ks = [], []
            for _ in range(rounds):
                info = sampler.step(sweeps)
                times.append(info.seconds / sweeps * 1e3)
                ks.append(info.K.mean())
            ms = float(np.median(times))
            full = ms if covariance_type == "full" else full
            print(f"| {d} | {covariance_type} | {ms:.3f} | {np.mean(ks):.1f} | {ms / full:.3f} |", flush=True)


def clustered_data(seed=0, n=20_000, d=50, k=8):
    rng = np.random.default_rng(seed)
    means = rng.normal(0, 1.5, (k, d))
    sds = np.sqrt(rng.uniform(0.5, 2.0, (k, d)))
    labels = rng.integers(0, k, n)
    return means[labels] + sds[labels] * rng.normal(size=(n, d)), labels


def bgm_part(fit_sweeps):
    from sklearn.metrics import normalized_mutual_info_score as nmi
    from sklearn.mixture import BayesianGaussianMixture

    X, truth = clustered_data()
    print(f"\n## N = {X.shape[0]:,}, d = {X.shape[1]}, 8 clusters: pCRP sampler (r = 1.2, one chain, {fit_sweeps} "
          "sweeps) against BayesianGaussianMixture (20 components)\n")
    print("| covariance_type | BGM s | BGM NMI | BGM K | pCRP s | pCRP NMI | pCRP K | pCRP s / BGM s |")
    print("|---|---|---|---|---|---|---|---|")
    for covariance_type in TYPES:
        started = time.perf_counter()
        bgm = BayesianGaussianMixture(n_components=20, weight_concentration_prior_type="dirichlet_process",
                                      covariance_type=covariance_type, max_iter=500, random_state=0).fit(X)
        bgm_labels = bgm.predict(X)
        bgm_seconds = time.perf_counter() - started
        warm_up_sweeps(covariance_type)  # the compile is not the fit's (pcrp compile does it once)
        started = time.perf_counter()
        sampler = Sampler(X, PowerCRP(1.0, 1.2), resolve_niw(X, covariance_type=covariance_type), seed=0,
                          init="kmeans:10")
        sampler.step(fit_sweeps)
        seconds = time.perf_counter() - started
        print(f"| {covariance_type} | {bgm_seconds:.1f} | {nmi(truth, bgm_labels):.3f} | "
              f"{np.unique(bgm_labels).size} | {seconds:.1f} | {nmi(truth, sampler.labels):.3f} | {sampler.K} | "
              f"{seconds / bgm_seconds:.2f} |", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=("sweeps", "bgm", "both"), default="both")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--sweeps", type=int, default=20)
    parser.add_argument("--fit-sweeps", type=int, default=100)
    args = parser.parse_args()
    print(header("python bench/covariance_types.py " + " ".join(sys.argv[1:])))
    if args.part in ("sweeps", "both"):
        sweeps_part(args.rounds, args.sweeps)
    if args.part in ("bgm", "both"):
        bgm_part(args.fit_sweeps)


if __name__ == "__main__":
    main()

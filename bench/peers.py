"""PCRPMixture (defaults, as `pcrp run`) against scikit-learn's BayesianGaussianMixture (Dirichlet process, 20
components), end to end on the same data, in one run.

    python bench/peers.py [--n 2000,20000] [--data sim1,mix10]

sim1: the paper's 1-D Sim 1 (3 components); mix10: 4 Gaussian clusters in 10-D (means 4 apart on random axes,
unit covariance, weights 0.4/0.3/0.2/0.1). Both fits standardise (PCRPMixture by default; BGM after
StandardScaler) and use seed 0. NMI (geometric) of each fit's labels against the truth, K found, wall seconds.
pcrp's one-time start-up (kernels from numba's cache, ArviZ's import) is timed once, apart, before the fits.
Prints the load average: the machine's other work shifts the times. bench/peers_budget.py shows what the
default sampling budget buys (ESS, R-hat) against smaller ones.
"""

import argparse
import os
import sys
import time

import numpy as np


def data(name, n, seed=0):
    rng = np.random.default_rng(seed)
    if name == "sim1":
        from pcrp.data import SIMULATIONS

        spec = SIMULATIONS["sim1"]
        y = rng.choice(3, size=n, p=spec["weights"])
        return rng.normal(np.take(spec["means"], y), np.take(spec["sds"], y))[:, None], y
    if name == "mix10":
        means = rng.normal(size=(4, 10))
        means = 4 * means / np.linalg.norm(means, axis=1, keepdims=True) * np.arange(1, 5)[:, None] ** 0.5
        y = rng.choice(4, size=n, p=[0.4, 0.3, 0.2, 0.1])
        return means[y] + rng.normal(size=(n, 10)), y
    raise SystemExit(f"unknown data set {name!r}: sim1 or mix10")


def fit_bgm(X):
    """BayesianGaussianMixture (Dirichlet process, 20 components) after StandardScaler, seed 0: its labels (N,)
    and the wall seconds of fit + predict."""
    from sklearn.mixture import BayesianGaussianMixture
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    bgm = make_pipeline(StandardScaler(), BayesianGaussianMixture(
        n_components=20, weight_concentration_prior_type="dirichlet_process", random_state=0, max_iter=1000))
    t0 = time.perf_counter()
    labels = bgm.fit(X).predict(X)
    return labels, time.perf_counter() - t0


def main():
    from pcrp.estimator import PCRPMixture
    from pcrp.summary import nmi

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", default="2000,20000")
    parser.add_argument("--data", default="sim1,mix10")
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()}; cores: {os.cpu_count()}")
    # once per process, before any fit is timed: numba's kernels loaded from their cache and ArviZ imported
    # (a script pays this once, however many fits it makes; scikit-learn's imports above are not timed either)
    t0 = time.perf_counter()
    PCRPMixture(random_state=0, n_chains=2, iters=100, burn_in=50).fit(data("sim1", 200)[0])
    print(f"pcrp start-up, once per process (a 200-point fit of 2 x 100 sweeps included): "
          f"{time.perf_counter() - t0:.1f} s")
    print(f"{'data':6s} {'N':>7s} | {'pcrp s':>7s} {'(sampling':>9s} {'summaries)':>10s} {'K':>3s} {'NMI':>6s} | "
          f"{'BGM s':>6s} {'K':>3s} {'NMI':>6s} | time ratio")
    for name in args.data.split(","):
        for n in [int(v) for v in args.n.split(",")]:
            X, y = data(name, n)
            t0 = time.perf_counter()
            model = PCRPMixture(random_state=0).fit(X)
            t_pcrp = time.perf_counter() - t0
            labels, t_bgm = fit_bgm(X)
            print(f"{name:6s} {n:7,} | {t_pcrp:7.1f} {model.timing_['sampling']:9.1f} {model.timing_['summaries']:10.1f} "
                  f"{model.n_clusters_:3d} {nmi(y, model.labels_):6.3f} | {t_bgm:6.1f} {np.unique(labels).size:3d} "
                  f"{nmi(y, labels):6.3f} | {t_pcrp / t_bgm:.1f}x", flush=True)
    print(f"load average after: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

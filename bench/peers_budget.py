"""What the default sampling budget buys, next to BayesianGaussianMixture: PCRPMixture end to end at several
budgets (chains x sweeps, burn-in half the sweeps) on bench/peers.py's data, with the figures a budget decides:
NMI of the point estimate, bulk ESS of the log joint and of K, and the worst R-hat of the two.

    python bench/peers_budget.py [--n 2000] [--data sim1,mix10] [--budgets 4x2000,4x1000,2x1000,4x500]

The first budget is pcrp's default (pcrp.chains.DEFAULT_CHAINS x DEFAULT_ITERS). Every fit runs in this one
process after a warm-up fit (numba's compiled kernels loaded, ArviZ imported), so the times compare sampling and
summaries, not start-up. Prints the load average: the machine's other work shifts the times.
"""

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peers import data, fit_bgm  # noqa: E402


def main():
    from pcrp.chains import DEFAULT_CHAINS, DEFAULT_ITERS
    from pcrp.estimator import PCRPMixture
    from pcrp.summary import nmi

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--data", default="sim1,mix10")
    parser.add_argument("--budgets", default=f"{DEFAULT_CHAINS}x{DEFAULT_ITERS},4x1000,2x1000,4x500")
    args = parser.parse_args()
    budgets = [tuple(int(v) for v in b.split("x")) for b in args.budgets.split(",")]
    print(f"load average before: {os.getloadavg()}; cores: {os.cpu_count()}")
    X, _ = data("sim1", 300)
    PCRPMixture(random_state=0, n_chains=2, iters=200, burn_in=100).fit(X)  # warm-up: kernels, ArviZ
    print(f"{'data':6s} {'N':>6s} {'budget':>8s} | {'wall s':>6s} {'/ BGM':>6s} {'K':>3s} {'NMI':>6s} "
          f"{'ESS logp':>8s} {'ESS K':>6s} {'R-hat':>6s}")
    for name in args.data.split(","):
        X, y = data(name, args.n)
        bgm_labels, t_bgm = fit_bgm(X)
        print(f"{name:6s} {args.n:6,} {'BGM':>8s} | {t_bgm:6.2f} {1:6.2f} {np.unique(bgm_labels).size:3d} "
              f"{nmi(y, bgm_labels):6.3f}", flush=True)
        for chains, iters in budgets:
            t0 = time.perf_counter()
            model = PCRPMixture(random_state=0, n_chains=chains, iters=iters, burn_in=iters // 2).fit(X)
            wall = time.perf_counter() - t0
            diag = model.chains_.diagnostics()
            ess = {k: diag[k]["ess_bulk"] for k in ("log_joint", "K")}
            rhats = [diag[k]["rhat"] for k in ("log_joint", "K")]
            worst = max((r for r in rhats if r is not None and np.isfinite(r)), default=float("nan"))
            print(f"{name:6s} {args.n:6,} {chains}x{iters:<6d} | {wall:6.2f} {wall / t_bgm:6.2f} "
                  f"{model.n_clusters_:3d} {nmi(y, model.labels_):6.3f} {ess['log_joint']:8.0f} "
                  f"{ess['K'] if ess['K'] is not None and np.isfinite(ess['K']) else float('nan'):6.0f} "
                  f"{worst:6.3f}", flush=True)
    print(f"load average after: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

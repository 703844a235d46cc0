"""PCRPMixture at its defaults (the automatic budget, as `pcrp run`) against scikit-learn's
BayesianGaussianMixture (Dirichlet process, 20 components), end to end on the same data, in one run.

    python bench/peers.py [--rows sim1:2000,mix10:2000,sim1:20000,mix10:20000] [--seeds 3]

sim1: the paper's 1-D Sim 1 (3 components); mix10: 4 Gaussian clusters in 10-D (means 4 apart on random axes,
unit covariance, weights 0.4/0.3/0.2/0.1). Both fits standardise (PCRPMixture by default; BGM after
StandardScaler). Each row fits both with seeds 0, 1, ... (--seeds; the data are the same): how many sweeps the
automatic budget needs depends on the chains' luck, so one seed says little. Per row: pcrp's median wall seconds
(the range over seeds; sampling + summaries of the median fit), the sweeps per chain the budget chose for each
seed and whether it converged, the bulk ESS of K and of the log joint and ESS per second of sampling (the smaller
of the two; median fit), K and NMI (geometric) against the truth (median fit); BGM's median seconds, K and NMI; the
ratio of the median times.
pcrp's one-time start-up (kernels from numba's cache, ArviZ's import) is timed once, apart, before the fits.
The first line says when, on what machine and under what load: the machine's other work shifts the times
(README's figures come from `python bench/figures.py peers`, which runs this).
"""

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from provenance import header, load_now  # noqa: E402

DEFAULT_ROWS = "sim1:2000,mix10:2000,sim1:20000,mix10:20000"


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


def fit_bgm(X, seed=0):
    """BayesianGaussianMixture (Dirichlet process, 20 components) after StandardScaler: its labels (N,) and the
    wall seconds of fit + predict."""
    from sklearn.mixture import BayesianGaussianMixture
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    bgm = make_pipeline(StandardScaler(), BayesianGaussianMixture(
        n_components=20, weight_concentration_prior_type="dirichlet_process", random_state=seed, max_iter=1000))
    t0 = time.perf_counter()
    labels = bgm.fit(X).predict(X)
    return labels, time.perf_counter() - t0


def fit_pcrp(X, seed, **params):
    """(fitted PCRPMixture at its defaults, wall seconds)."""
    from pcrp.estimator import PCRPMixture

    t0 = time.perf_counter()
    model = PCRPMixture(random_state=seed, **params).fit(X)
    return model, time.perf_counter() - t0


def budget_figures(model):
    """(sweeps per chain, "converged" | "cap", ESS of K, ESS of the log joint, ESS per second of sampling)."""
    diag = model.chains_.diagnostics()
    ess = {q: diag[q]["ess_bulk"] for q in ("K", "log_joint")}
    # a settled quantity (every chain at one value) has no meaningful ESS: the other one bounds the rate
    useful = [ess[q] for q in ess if not diag[q]["settled"] and np.isfinite(ess[q])]
    rate = min(useful) / model.timing_["sampling"] if useful else float("nan")
    stop = "converged" if model.chains_.stop.get("converged") else "cap"
    return model.n_iter_, stop, ess["K"], ess["log_joint"], rate


def main():
    from pcrp.summaries.summary import nmi

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default=DEFAULT_ROWS, help="data:N pairs (sim1 or mix10)")
    parser.add_argument("--seeds", type=int, default=3, help="seeds per row (default 3)")
    args = parser.parse_args()
    lines = [header("python bench/peers.py" + (f" --rows {args.rows}" if args.rows != DEFAULT_ROWS else "")), ""]
    t0 = time.perf_counter()
    fit_pcrp(data("sim1", 200)[0], 0, n_chains=2, iters=100)  # numba's kernels loaded, ArviZ imported: once
    lines.append(f"pcrp's start-up, once per process (a 200-point fit of 2 x 100 sweeps included): "
                 f"{time.perf_counter() - t0:.1f} s")
    lines += ["", "| data | N | pcrp s: median (range; sampling + summaries) | sweeps per chain, by seed | "
                  "ESS K / log joint | ESS per s | K | NMI | BGM s: median | BGM K | BGM NMI | median time pcrp / BGM |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    print("\n".join(lines), flush=True)
    for row in args.rows.split(","):
        name, n = row.split(":")
        X, y = data(name, int(n))
        fits = sorted((fit_pcrp(X, seed) for seed in range(args.seeds)), key=lambda fit: fit[1])
        model, t_pcrp = fits[len(fits) // 2]
        times = [t for _, t in fits]
        bgm = sorted((fit_bgm(X, seed) for seed in range(args.seeds)), key=lambda fit: fit[1])
        labels, t_bgm = bgm[len(bgm) // 2]
        sweeps = ", ".join(f"{m.n_iter_:,}{'' if m.chains_.stop.get('converged') else ' (cap)'}"
                           for m, _ in sorted(fits, key=lambda fit: fit[0].random_state))
        _, _, ess_k, ess_lj, rate = budget_figures(model)
        line = (f"| {name} | {int(n):,} | {t_pcrp:.2f} ({min(times):.2f}-{max(times):.2f}; "
                f"{model.timing_['sampling']:.2f} + {model.timing_['summaries']:.2f}) | {sweeps} | "
                f"{ess_k:.0f} / {ess_lj:.0f} | {rate:,.0f} | {model.n_clusters_} | {nmi(y, model.labels_):.3f} | "
                f"{t_bgm:.2f} | {np.unique(labels).size} | {nmi(y, labels):.3f} | {t_pcrp / t_bgm:.2f} |")
        print(line, flush=True)
        lines.append(line)
    lines += ["", f"Load average at the end: {load_now():.2f}."]
    print(lines[-1])
    return 0


if __name__ == "__main__":
    sys.exit(main())

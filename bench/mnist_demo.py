"""Which MNIST setting makes the Explorer's MNIST demo show the paper's point (the pCRP keeps fewer spurious clusters
than the CRP at equal or better NMI) at the defaults the Explorer offers for it? Prints one line per candidate.

Each candidate is digits 1-4, N points (seed 0, :func:`pcrp.data.mnist`), an embedding (spectral or PCA) and its
dimensions. Its r is chosen by the library's own cross validation on that very data set, exactly as the shipped r of
a built-in data set is (pcrp/datasets/cv_r.json, :func:`pcrp.analyses.cv.compute_builtin_r`): cross_validate with
BUILTIN_R_SETTINGS (5 folds x 3 repeats, 2,000 sweeps per fit, the robust rule), then check_with_chains on the whole
data set (which steps r down where the chains collapse or disagree). Then the Explorer's live run at its defaults
(pcrp.app.live_params.LIVE_DEMO: 2 chains per prior from contrasting starts, 2,000 sweeps, burn-in 500, thin 5, seed
0, split-merge on, the data set's default NIW; pcrp.app.live_runs.live_specs) of the CRP and of the pCRP at that r.

Columns, per prior, over the sweeps after burn-in of both chains: K (mean clusters), big (mean clusters with at least
pcrp.app.live_view.TINY_SHARE of the points, the coloured ones), NMI (mean over the kept draws against the true
digits, geometric normalisation), and the chains' mean K each (where they differ, the result depends on the start).
cv r: cross validation's proposal; r: after the check. s/sweep: the slower prior's kernel seconds per sweep and
chain (what bounds the pace a class watches). cv s: seconds of the cross validation and its check.

With --r 1.1,1.5 the pCRP also runs at those r (one line each, no cross validation: cv r and cv s are blank).

Usage: python bench/mnist_demo.py [--n 1000] [--settings spectral:2,pca:5 ...] [--seeds 1] [--r 1.1,1.5]
Record: docs/records/mnist_demo.md
"""

import argparse
import time

import numpy as np

from pcrp import data
from pcrp.analyses.cv import BUILTIN_R_SETTINGS, check_with_chains, cross_validate
from pcrp.app.live_params import LIVE_DEMO
from pcrp.app.live_runs import contrasting_starts, live_specs
from pcrp.app.live_view import TINY_SHARE, cluster_counts
from pcrp.model import make_prior, resolve_niw
from pcrp.runs.chains import run_chains
from pcrp.summaries.summary import nmi

DIGITS = (1, 2, 3, 4)
SETTINGS = ("spectral:2", "spectral:3", "spectral:4", "spectral:6", "pca:2", "pca:3", "pca:5", "pca:8", "pca:10")


def cv_r(ds):
    """(r after the check, cross validation's proposal, seconds): the shipped r's procedure on ``ds``."""
    started = time.perf_counter()
    res = cross_validate(ds.X, standardize=ds.standardized, **BUILTIN_R_SETTINGS)
    curve = {round(row["r"], 6): row["mean_k"] for row in res.table()}
    r, _ = check_with_chains(ds.X, res.chosen_r, [row["r"] for row in res.table()],
                             cv_mean_k=curve.get(round(res.chosen_r, 6)))
    return float(r), float(res.chosen_r), time.perf_counter() - started


def live_run(ds, prior, seed):
    """What the Explorer's run at its defaults shows of one prior: (mean K, mean big clusters, mean NMI, mean K
    per chain, kernel seconds per sweep)."""
    spec = live_specs(ds, {"p": prior}, resolve_niw(ds.X), iters=LIVE_DEMO["sweeps"], burn_in=LIVE_DEMO["burn_in"],
                      thin=LIVE_DEMO["thin"], seed=seed,
                      inits=contrasting_starts("kmeans:10", LIVE_DEMO["chains"]))["p"]
    chains = run_chains(ds.X, spec)
    K = chains.K_after_burn_in
    draws = chains.labels.reshape(-1, ds.n)
    big = np.mean([cluster_counts(z)[0] for z in draws])
    score = np.mean([nmi(ds.labels, z) for z in draws])
    return K.mean(), big, score, K.mean(axis=1), float(np.max(chains.seconds_per_sweep))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1000, help="MNIST points (digits 1-4), default 1000")
    parser.add_argument("--settings", default=",".join(SETTINGS),
                        help="embedding:dims candidates, comma-separated (default: %(default)s)")
    parser.add_argument("--seeds", type=int, default=1, help="run seeds 0..n-1 of the live run (default 1)")
    parser.add_argument("--r", default="", help="more r for the pCRP, comma-separated, each on its own line")
    args = parser.parse_args()
    print(f"MNIST digits {','.join(map(str, DIGITS))}, N = {args.n}, data seed 0; live run: {LIVE_DEMO['chains']} chains "
          f"x {LIVE_DEMO['sweeps']:,} sweeps, burn-in {LIVE_DEMO['burn_in']}, thin {LIVE_DEMO['thin']}, starts "
          f"{'/'.join(contrasting_starts('kmeans:10', LIVE_DEMO['chains']))}, run seeds 0..{args.seeds - 1}; "
          f"big = clusters of at least {TINY_SHARE:.0%} of the points")
    print(f"{'setting':12} {'cv r':>5} {'r':>5} | {'CRP K':>6} {'big':>5} {'NMI':>5} {'per chain':>11} | "
          f"{'pCRP K':>6} {'big':>5} {'NMI':>5} {'per chain':>11} | {'s/sweep':>7} {'cv s':>5}", flush=True)
    for setting in args.settings.split(","):
        embedding, dims = setting.split(":")
        ds = data.mnist(digits=DIGITS, n=args.n, embedding=embedding, dims=int(dims), seed=0)
        r, proposed, cv_seconds = cv_r(ds)
        crp = [live_run(ds, make_prior("crp"), seed) for seed in range(args.seeds)]
        lines = [(r, f"{proposed:5.2f}", f"{cv_seconds:5.0f}")]
        lines += [(float(extra), "", "") for extra in args.r.split(",") if extra]
        for r_value, proposed_text, seconds_text in lines:
            rows = {"crp": crp, "pcrp": [live_run(ds, make_prior("pcrp", r=r_value), seed)
                                         for seed in range(args.seeds)]}
            cells = []
            for name in ("crp", "pcrp"):
                k, big, score = (np.mean([row[i] for row in rows[name]]) for i in range(3))
                per_chain = "/".join(f"{v:.1f}" for row in rows[name] for v in row[3])
                cells.append(f"{k:6.2f} {big:5.2f} {score:5.3f} {per_chain:>11}")
            speed = max(row[4] for name in rows for row in rows[name])
            print(f"{setting:12} {proposed_text:>5} {r_value:5.2f} | {cells[0]} | {cells[1]} | {speed:7.4f} "
                  f"{seconds_text:>5}", flush=True)


if __name__ == "__main__":
    main()

"""Which built-in data set, r and pace make the Explorer's default demo show the CRP / pCRP difference
within its first ~20 seconds? Prints, per candidate, what the page shows of the animated chain (the first
chain of each prior, k-means start, the page's defaults otherwise) over the sweeps that fit in the time:

- mean K and mean number of "tiny" clusters (under pcrp.app.live_view.TINY_SHARE of the points), the CRP and
  the pCRP, over sweeps burn-in..S, where S = pace x seconds;
- the share of those sweeps at which the two rows' "clusters + tiny" counts differ (what the row headings
  show), at which the CRP has more non-tiny clusters than the pCRP (a difference in the pictures' colours),
  and at which the pCRP's non-tiny count is below the true K (it merged real clusters).

Seeds 0..n-1 (the page's seed setting); the run is sweep for sweep the page's (same Sampler, seed, start).
Usage: python bench/default_demo.py [--seeds 4] [--seconds 20] [--pace 100]
"""

import argparse
import time

import numpy as np

from pcrp import data
from pcrp.runs.run_spec import chain_seeds
from pcrp.analyses.cv import builtin_r
from pcrp.app.live_view import TINY_SHARE, cluster_counts
from pcrp.model import make_prior, resolve_niw
from pcrp.sampling.sampler import Sampler
# The shipped cross-validated r of each data set (what the Explorer starts from), then fixed powers.
CANDIDATES = ([(name, builtin_r(name)[0]) for name in ("old-faithful", "sim1", "sim2")]
              + [("old-faithful", 1.1), ("old-faithful", 1.3), ("sim1", 1.3), ("sim2", 1.1), ("sim2", 1.3)])


def load(name):
    return data.old_faithful() if name == "old-faithful" else data.simulation(name, n=300, seed=0)


def counts_per_sweep(ds, prior, seed, sweeps):
    sampler = Sampler(ds.X, prior, resolve_niw(ds.X), init="kmeans:10", seed=chain_seeds(seed, 1)[0])
    out = np.zeros((sweeps, 2), dtype=int)  # (non-tiny, tiny) after each sweep
    for t in range(sweeps):
        sampler.step(1)
        out[t] = cluster_counts(sampler.labels)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--pace", type=int, default=100)
    parser.add_argument("--burn-in", type=int, default=200)
    args = parser.parse_args()
    sweeps = int(args.pace * args.seconds)
    print(f"{sweeps} sweeps ({args.pace} sweeps/s x {args.seconds:g} s), summaries over sweeps {args.burn_in}.."
          f"{sweeps}, tiny = under {TINY_SHARE:.0%} of the points, seeds 0..{args.seeds - 1}")
    print(f"{'data':13} {'r':>4} | {'CRP K':>6} {'tiny':>5} | {'pCRP K':>6} {'tiny':>5} | {'counts differ':>13} |"
          f" {'CRP more big':>12} | {'pCRP merged':>11} | seconds")
    for name, r in CANDIDATES:
        ds = load(name)
        started = time.perf_counter()
        rows = []
        for seed in range(args.seeds):
            crp = counts_per_sweep(ds, make_prior("crp"), seed, sweeps)[args.burn_in:]
            pcrp = counts_per_sweep(ds, make_prior("pcrp", r=r), seed, sweeps)[args.burn_in:]
            differ = np.mean(np.any(crp != pcrp, axis=1))
            more = np.mean(crp[:, 0] > pcrp[:, 0])
            merged = np.mean(pcrp[:, 0] < ds.true_k) if ds.labels is not None else np.nan
            rows.append((crp.sum(1).mean(), crp[:, 1].mean(), pcrp.sum(1).mean(), pcrp[:, 1].mean(), differ, more,
                         merged))
        m = np.mean(rows, axis=0)
        print(f"{name:13} {r:<4g} | {m[0]:6.2f} {m[1]:5.2f} | {m[2]:6.2f} {m[3]:5.2f} | {m[4]:13.0%} | {m[5]:12.0%} | "
              f"{m[6]:11.0%} | {time.perf_counter() - started:.0f}")


if __name__ == "__main__":
    main()

"""Do chains from different starts agree? R-hat, ESS and ESS per second, measured in one run.

    nice -n 10 python bench/mixing.py                  # the full table (about 10 minutes on 2 cores)
    python bench/mixing.py --sweeps 4000 --cases of1.5  # a quick look at one case
    python bench/mixing.py --sets default               # choose the move sets (see MOVE_SETS)

For every case (data set and r) and move set, four chains of ``--sweeps`` sweeps start from
one / kmeans:10 / random:20 / kmeans:10 (seeds 1-4). The second half of each chain is kept
(the first half is burn-in, as in the paper's protocol) and ArviZ gives the rank-normalised
split R-hat (``az.rhat(method="rank")``) and the bulk and tail ESS of the number of clusters K
and of the log joint (lj) over the four chains.

Cost: on a shared machine the load changes over minutes, so seconds measured while the chains
run are not comparable between move sets. After the chains of a case, every move set runs
TIMING_SWEEPS sweeps from a settled state, TIMING_ROUNDS times in turn; ms/sweep is the
median, cost is its ratio to the first move set (today's default), and ESS/s divides the bulk
ESS by ms/sweep times the four chains' kept sweeps.

Restricted Gibbs moves (Jain & Neal split-merge, a two-launch reallocation of two clusters, a
regroup of two <-> three clusters) were built and measured with this script in the commit
"bench/mixing.py: four chains from one / kmeans:10 / ..." (46c9158 on the moves branch); none
paid for itself, so they are not in the library (see README, Speed and mixing).

Four chains can agree because all four fell into the same mode during burn-in, not because
the sampler moves between modes. The MNIST data have labels, so two more chains start in the
two modes the issue describes: from the true labels, and from the true labels with the 2s and
3s in one cluster. "R-hat 6" is over all six chains; "ESS/s in mode" is the bulk ESS per second
of K within each of those two chains alone (how well a move set mixes inside a mode).

The log joint is rounded to 1e-6 nats first: a chain that sits on one partition (Old
Faithful at r = 2 stays in a single cluster 99.8% of the time) records it with rounding
noise from the rank-one updates in the last digits, which rank normalisation would
otherwise read as (badly mixing) variation. Values that differ by less than 1e-6 nats are
the same partition.
"""

import argparse
import os
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
warnings.filterwarnings("ignore", category=FutureWarning)  # ArviZ announces its refactor on import
import arviz as az  # noqa: E402

from pcrp.data import mnist, old_faithful  # noqa: E402
from pcrp.model import PowerCRP, resolve_niw  # noqa: E402
from pcrp.sampling.sampler import Sampler
STARTS = [(1, "one"), (2, "kmeans:10"), (3, "random:20"), (4, "kmeans:10")]

CASES = {
    "mnist1000": ("MNIST 1-4 N=1000", lambda: mnist(n=1000), 1.4),
    "mnist2000": ("MNIST 1-4 N=2000", lambda: mnist(n=2000), 1.4),
    "of1.5": ("Old Faithful", old_faithful, 1.5),
    "of2.0": ("Old Faithful", old_faithful, 2.0),
}

MOVE_SETS = {
    "default": {"split_merge": 1},  # one split-merge move (Dahl) after each sweep
    "plain": {"split_merge": 0},  # the paper's plain Gibbs
    "sm5": {"split_merge": 5},  # five split-merge moves after each sweep
}


def mode_starts(ds):
    """Starts in the two MNIST modes: the true labels, and the 2s and 3s in one cluster."""
    if ds.labels is None or ds.name != "mnist":
        return []
    merged = np.where(ds.labels == 2, 1, ds.labels)  # digits 1, 2, 3, 4 are coded 0, 1, 2, 3
    return [(5, ds.labels.astype(np.int64)), (6, merged.astype(np.int64))]


TIMING_SWEEPS = 300
TIMING_ROUNDS = 7


def run_chain(X, prior, niw, moves, sweeps, seed, init):
    """One chain: K and log joint (sweeps,)."""
    sampler = Sampler(X, prior, niw, init=init, seed=seed, **moves)
    info = sampler.step(sweeps)
    return info.K, info.log_joint


def seconds_per_sweep(X, prior, niw, sets):
    """Median seconds per sweep of each move set, timed in turn (see the module notes)."""
    samplers = {name: Sampler(X, prior, niw, seed=0, **moves) for name, moves in sets.items()}
    for sampler in samplers.values():
        sampler.step(TIMING_SWEEPS)
    times = {name: [] for name in sets}
    for _ in range(TIMING_ROUNDS):
        for name, sampler in samplers.items():
            times[name].append(sampler.step(TIMING_SWEEPS).seconds / TIMING_SWEEPS)
    return {name: float(np.median(t)) for name, t in times.items()}


def summarise(K, log_joint, n_main):
    """Diagnostics on the kept halves; the first n_main chains are the four standard starts."""
    half = K.shape[1] // 2
    k = K[:, half:].astype(float)
    lj = np.round(log_joint[:, half:], 6)
    out = {"chain_mean_K": k.mean(axis=1)}
    for name, x in (("K", k), ("lj", lj)):
        out[f"rhat_{name}"] = float(az.rhat(x[:n_main], method="rank"))
        out[f"rhat6_{name}"] = float(az.rhat(x, method="rank")) if len(x) > n_main else float("nan")
        out[f"bulk_{name}"] = float(az.ess(x[:n_main], method="bulk"))
        out[f"tail_{name}"] = float(az.ess(x[:n_main], method="tail"))
    out["in_mode_K"] = [float(az.ess(k[c][None], method="bulk")) for c in range(n_main, len(k))]
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sweeps", type=int, default=20_000, help="sweeps per chain (default 20,000)")
    parser.add_argument("--cases", default=",".join(CASES), help=f"comma-separated, from {', '.join(CASES)}")
    parser.add_argument("--sets", default="default,plain,sm5", help=f"comma-separated, from {', '.join(MOVE_SETS)}")
    args = parser.parse_args()
    sets = {name: MOVE_SETS[name] for name in args.sets.split(",")}
    # compile (or load from cache) every kernel before timing
    X0 = np.random.default_rng(0).normal(size=(30, 2))
    Sampler(X0, PowerCRP(1.0, 1.2), resolve_niw(X0), seed=0).step(5)

    print(f"{args.sweeps:,} sweeps per chain, second halves kept. Shared 2-core machine: compare costs within "
          f"a case.")
    print(f"{'case':17s} {'r':>3s} {'moves':10s} {'ms/sweep':>8s} {'cost':>5s} {'Rhat K':>6s} {'Rhat lj':>7s} "
          f"{'bulk K':>6s} {'tail K':>6s} {'bulk lj':>7s} {'tail lj':>7s} {'ESS/s K':>7s} {'ESS/s lj':>8s} "
          f"{'Rhat6 K':>7s} {'Rhat6 lj':>8s} {'ESS/s in mode':>13s}  mean K per chain")
    for case in args.cases.split(","):
        title, load, r = CASES[case]
        ds = load()
        prior, niw = PowerCRP(1.0, r), resolve_niw(ds.X)
        starts = STARTS + mode_starts(ds)
        results = {}
        for name, moves in sets.items():
            start = time.perf_counter()
            chains = [run_chain(ds.X, prior, niw, moves, args.sweeps, seed, init) for seed, init in starts]
            results[name] = (summarise(np.array([c[0] for c in chains]), np.array([c[1] for c in chains]),
                                       len(STARTS)), time.perf_counter() - start)
        per_sweep = seconds_per_sweep(ds.X, prior, niw, sets)
        reference = per_sweep[next(iter(sets))]
        kept = len(STARTS) * (args.sweeps - args.sweeps // 2)
        for name, (d, wall) in results.items():
            seconds = per_sweep[name] * kept
            in_mode = "/".join(f"{v / (per_sweep[name] * kept / len(STARTS)):.0f}" for v in d["in_mode_K"]) or "-"
            print(f"{title:17s} {r:3.1f} {name:10s} {per_sweep[name] * 1e3:8.3f} "
                  f"{per_sweep[name] / reference:5.2f} {d['rhat_K']:6.3f} {d['rhat_lj']:7.3f} "
                  f"{d['bulk_K']:6.0f} {d['tail_K']:6.0f} {d['bulk_lj']:7.0f} {d['tail_lj']:7.0f} "
                  f"{d['bulk_K'] / seconds:7.1f} {d['bulk_lj'] / seconds:8.1f} {d['rhat6_K']:7.3f} {d['rhat6_lj']:8.3f} "
                  f"{in_mode:>13s}  {' '.join(f'{v:.2f}' for v in d['chain_mean_K'])}   ({wall:.0f} s)", flush=True)


if __name__ == "__main__":
    main()

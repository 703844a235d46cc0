"""How fast the split-merge moves leave issue 13's MNIST start, in an earlier commit and in the working tree.

    python bench/split_merge_escape.py [--base f8631dc] [--seeds 20] [--sweeps 500]

The start of tests/test_moves.py: MNIST digits 1-4, N = 2,000, pCRP r = 1.4, the true labels with the 2s and 3s in
one cluster (log joint about 15,199; every other start reaches about 15,363). For each seed, one chain per tree
runs up to ``--sweeps`` sweeps; printed: the first sweep whose log joint is above 15,300 (the escape), the
median and range over the seeds, the seeds that never escaped, and the split proposals accepted per chain. A
proposal that scores members worse escapes later or not at all (a Gaussian score for every member from the merged
cluster's scale never escaped: docs/records/sweep_ab.md).
"""

import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
ESCAPED = 15_300


def escape_sweeps(model, sampler, X, start, seeds, sweeps):
    """(first sweep above ESCAPED or None, splits accepted) for each seed."""
    niw = model.resolve_niw(X)
    out = []
    for seed in seeds:
        chain = sampler.Sampler(X, model.PowerCRP(1.0, 1.4), niw, seed=seed, init=start)
        above = np.flatnonzero(np.asarray(chain.step(sweeps).log_joint) > ESCAPED)
        totals = chain.move_totals if hasattr(chain, "move_totals") else chain.sm_stats  # (an earlier tree)
        out.append((int(above[0]) + 1 if above.size else None, int(totals[1])))
    return out


def main():
    sys.path.insert(0, str(ROOT / "bench"))
    import argparse

    from sweep_ab import import_base

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="f8631dc")
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--sweeps", type=int, default=500)
    args = parser.parse_args()

    import pcrp.model as new_model
    import pcrp.sampling.sampler as new_sampler
    from pcrp.data import mnist

    ds = mnist(n=2000)
    start = np.where(ds.labels == 2, 1, ds.labels).astype(np.int64)  # digits 1-4 are coded 0-3
    print(f"load average {Path('/proc/loadavg').read_text().split()[:3]}")
    with tempfile.TemporaryDirectory() as folder:
        trees = {"base": import_base(args.base, folder), "new": (new_model, new_sampler)}
        for name, (model, sampler) in trees.items():
            began = time.perf_counter()
            results = escape_sweeps(model, sampler, ds.X, start, range(1, args.seeds + 1), args.sweeps)
            escaped = [first for first, _ in results if first is not None]
            never = [seed for seed, (first, _) in zip(range(1, args.seeds + 1), results) if first is None]
            spread = (f"median {statistics.median(escaped):.0f}, range {min(escaped)}-{max(escaped)}" if escaped
                      else "none")
            print(f"{name:4s} ({args.base if name == 'base' else 'working tree'}): first sweep above {ESCAPED:,} "
                  f"{[first for first, _ in results]}; {spread}; never escaped: seeds {never or 'none'}; splits "
                  f"accepted per chain {[acc for _, acc in results]} ({time.perf_counter() - began:.0f} s)",
                  flush=True)


if __name__ == "__main__":
    main()

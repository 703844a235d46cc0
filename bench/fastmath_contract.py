"""The sweep and the split-merge move with fastmath={"contract"} against an earlier commit without it.

    python bench/fastmath_contract.py [--base f4a90ae] [--sweeps 300] [--seeds 5]

For each data shape of bench/sweep_speed.py, the CRP and the pCRP (r = 1.2), moves on, and each seed: one sampler
per tree from the same seed, stepped one sweep at a time until their labels first differ (or --sweeps). Prints the
sweeps with equal labels per seed, and, over the chains whose labels stayed equal to the end, the largest
difference of the slots' log-determinants, means and precision matrices over the largest entry of each (the bound
docs/design.md section 2 states). f4a90ae is the last commit without the flag.
"""

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="f4a90ae")
    parser.add_argument("--sweeps", type=int, default=300)
    parser.add_argument("--seeds", type=int, default=5)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "bench"))
    from sweep_ab import import_base
    from sweep_speed import shapes

    import pcrp.model as new_model
    import pcrp.sampling.sampler as new_sampler

    with tempfile.TemporaryDirectory() as folder:
        base_model, base_sampler = import_base(args.base, folder)
        for name, X in shapes():
            for prior in ("crp", "pcrp"):
                equal, worst = [], {}
                for seed in range(args.seeds):
                    def make(model, sampler):
                        made = model.CRP(1.0) if prior == "crp" else model.PowerCRP(1.0, 1.2)
                        return sampler.Sampler(X, made, model.resolve_niw(X), seed=seed, split_merge=1)
                    a, b = make(base_model, base_sampler), make(new_model, new_sampler)
                    sweeps = 0
                    while sweeps < args.sweeps:
                        info = a.step(1)
                        b.step(1)
                        if not np.array_equal(a.labels, b.labels):
                            break
                        sweeps += 1
                    equal.append(sweeps)
                    if sweeps < args.sweeps:  # the states differ: their statistics are not comparable
                        continue
                    k = int(info.K[-1])
                    for field in ("logdets", "means", "precs"):
                        x, y = getattr(a, field)[:k], getattr(b, field)[:k]
                        scale = max(float(np.max(np.abs(x))), 1e-300)
                        worst[field] = max(worst.get(field, 0.0), float(np.max(np.abs(x - y))) / scale)
                shown = ", ".join(f"{field} {value:.1e}" for field, value in worst.items())
                print(f"{name:24s} {prior:5s} sweeps with equal labels per seed {equal}; chains equal to the end, "
                      f"largest difference over the largest entry: {shown or 'none'}", flush=True)


if __name__ == "__main__":
    main()

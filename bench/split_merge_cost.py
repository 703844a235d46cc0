"""What one split-merge move per sweep adds to a sweep, in an earlier commit and in the working tree, interleaved.

    python bench/split_merge_cost.py [--base 824d5f7] [--rounds 9] [--only 'N=2000 d=1']

For each data shape of bench/sweep_speed.py and prior: four samplers (earlier commit / working tree x moves
off / on) with the same seed, `rounds` rounds of one chunk of sweeps each in alternating order, thread CPU
time. Prints each one's median ms per sweep, the median per-round ratio on / off in each tree (issue 38's
target: about 1.3) and the ratio working tree / earlier commit with the moves on. The earlier package is
imported as in bench/sweep_ab.py. 824d5f7 is the last commit before the split-merge proposal's frozen score.
"""

import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def main():
    sys.path.insert(0, str(ROOT / "bench"))
    from sweep_ab import ab_arguments, import_base
    from sweep_speed import shapes

    args = ab_arguments(__doc__.splitlines()[0], "824d5f7", 9)

    import pcrp.model as new_model
    import pcrp.sampling.sampler as new_sampler

    def load():
        return Path("/proc/loadavg").read_text().split()[:3]

    with tempfile.TemporaryDirectory() as folder:
        base_model, base_sampler = import_base(args.base, folder)
        print(f"base {args.base} vs working tree; load average {load()}")
        trees = {"base": (base_model, base_sampler), "new": (new_model, new_sampler)}
        for shape, X in shapes():
            if args.only not in shape:
                continue
            for name, params in (("crp", (1.0,)), ("pcrp", (1.0, 1.2))):
                samplers = {}
                for tree, (model, sampler) in trees.items():
                    for moves in (0, 1):
                        prior = (model.CRP if name == "crp" else model.PowerCRP)(*params)
                        s = sampler.Sampler(X, prior, model.resolve_niw(X), seed=1, split_merge=moves)
                        s.step(40)  # compile and settle
                        samplers[tree, moves] = s
                sweeps = 200 if X.shape[0] < 1000 else 40
                times = {key: [] for key in samplers}
                for r in range(args.rounds):
                    for key in list(samplers) if r % 2 == 0 else list(samplers)[::-1]:
                        start = time.thread_time()
                        samplers[key].step(sweeps)
                        times[key].append((time.thread_time() - start) / sweeps)
                times = {key: np.array(value) for key, value in times.items()}
                for tree in trees:
                    off, on = times[tree, 0], times[tree, 1]
                    print(f"{shape:24s} {name:5s} {tree:4s} off {np.median(off) * 1e3:6.3f} ms  on "
                          f"{np.median(on) * 1e3:6.3f} ms  on/off {np.median(on / off):5.3f}  K {samplers[tree, 1].K}")
                print(f"{shape:24s} {name:5s} moves on, new/base {np.median(times['new', 1] / times['base', 1]):5.3f}",
                      flush=True)
        print(f"load average at end {load()}")


if __name__ == "__main__":
    main()

"""A/B sweep timing of the CRP and pCRP between an earlier commit's sampler and the working tree's, in one
process, interleaved round by round so that load on a shared machine hits both alike.

    python bench/sweep_ab.py [--base d41ca0a] [--rounds 21] [--only 'd=10'] [--same-state]

The earlier package is `git archive`d into a temporary folder and imported as ``pcrp_base`` (its imports are
relative). For each data shape of bench/sweep_speed.py x prior x split-merge off/on: two samplers with the
same seed and start, `rounds` rounds of one chunk of sweeps each; prints the median per-sweep time of each and
the median of the per-round ratios new / base (1.00 = the same speed). d41ca0a is the last commit before the
prior tables replaced the kernels' scalar alpha (issue "The prior family").

Two chains that start alike part after some sweeps (the kernels round differently), and where K wanders (the CRP)
they then sweep different numbers of clusters, so a round compares unlike work. --same-state starts both from the
same labels every round: a third chain (the working tree's, untimed) moves on a round's sweeps, and each round
builds both samplers afresh from its labels with the round's seed, so both time their sweeps from one state.
"""

import argparse
import io
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def import_base(revision, folder):
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", revision, "pcrp"], check=True,
                             capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(folder, filter="data")
    (Path(folder) / "pcrp").rename(Path(folder) / "pcrp_base")
    sys.path.insert(0, str(folder))
    import importlib

    import pcrp_base.model
    try:  # the layered tree (pcrp.sampling.sampler), or the flat one before it (pcrp.sampler)
        sampler = importlib.import_module("pcrp_base.sampling.sampler")
    except ModuleNotFoundError:
        sampler = importlib.import_module("pcrp_base.sampler")
    return pcrp_base.model, sampler


def ab_arguments(description, base, rounds):
    """The A/B scripts' command line: --base (the earlier commit), --rounds and --only."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--base", default=base, help=f"the earlier commit (default {base})")
    parser.add_argument("--rounds", type=int, default=rounds)
    parser.add_argument("--only", default="", help="run only the rows whose label contains this text, e.g. 'd=10'")
    parser.add_argument("--same-state", action="store_true",
                        help="start both samplers from the same labels every round (see the module's docstring)")
    return parser.parse_args()


def main():
    args = ab_arguments(__doc__.splitlines()[0], "d41ca0a", 21)
    sys.path.insert(0, str(ROOT / "bench"))
    from sweep_speed import shapes

    import pcrp.model as new_model
    import pcrp.sampling.sampler as new_sampler

    with tempfile.TemporaryDirectory() as folder:
        base_model, base_sampler = import_base(args.base, folder)
        print(f"base {args.base} vs working tree; load average {Path('/proc/loadavg').read_text().split()[:3]}")
        for shape, X in shapes():
            for name, params in (("crp", (1.0,)), ("pcrp", (1.0, 1.2))):
                for split_merge in (0, 1):
                    label = f"{shape:24s} {name:5s} split-merge {'on ' if split_merge else 'off'}"
                    if args.only not in label:
                        continue
                    sweeps = 200 if X.shape[0] < 1000 else 40
                    samplers = {}
                    for key, (model, sampler) in {"base": (base_model, base_sampler),
                                                  "new": (new_model, new_sampler)}.items():
                        prior = (model.CRP if name == "crp" else model.PowerCRP)(*params)
                        s = sampler.Sampler(X, prior, model.resolve_niw(X), seed=1, split_merge=split_merge)
                        s.step(max(20, sweeps // 5))  # compile and settle
                        samplers[key] = s
                    times = {"base": [], "new": []}
                    for i in range(args.rounds):
                        if args.same_state:  # both from the reference chain's labels, with the round's seed
                            start = samplers["new"].labels.copy()
                            samplers["new"].step(sweeps)  # (the reference chain moves on, untimed)
                            sides = {key: sampler.Sampler(X, (model.CRP if name == "crp" else model.PowerCRP)(*params),
                                                          model.resolve_niw(X), seed=100 + i, split_merge=split_merge,
                                                          init=start)
                                     for key, (model, sampler) in {"base": (base_model, base_sampler),
                                                                   "new": (new_model, new_sampler)}.items()}
                        else:
                            sides = samplers
                        for key in ("base", "new") if i % 2 == 0 else ("new", "base"):
                            times[key].append(sides[key].step(sweeps).seconds / sweeps)
                    ratio = np.median(np.array(times["new"]) / np.array(times["base"]))
                    print(f"{label} base {np.median(times['base']) * 1e3:7.3f} ms  new {np.median(times['new']) * 1e3:7.3f} ms"
                          f"  new/base {ratio:5.3f}", flush=True)
        print(f"load average at end {Path('/proc/loadavg').read_text().split()[:3]}")


if __name__ == "__main__":
    main()

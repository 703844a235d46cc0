"""The five priors side by side, each run by `pcrp run` exactly as a user would, on Old Faithful (N = 272) and
Sim 1 / Sim 2 (N = 2000 by default): mean K, P(K = true K), and the posterior mean NMI and VI (bits) of the
draws against the true labels, with their MCSE.

    python bench/prior_comparison.py [--n 2000] [--iters 2000] [--burn-in 1000] [--chains 4] [--out DIR]

Every run is `pcrp run DATA --prior NAME --seed 0 --out DIR/DATA-NAME.npz` with the prior's defaults: the
registry's, and for the pCRP the cross-validated r shipped for the data set (pcrp.cv.builtin_r). The prior
column shows the parameters each run recorded. Old Faithful has no true labels; its "true
K" is taken as 2 (short and long eruptions), and NMI / VI are not shown.
"""

import argparse
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from pcrp.chains import ChainSet
from pcrp.model import PRIORS
from pcrp.posterior import prior_of
from pcrp.summary import metric_summary

DATA = (("old-faithful", 2), ("sim1", None), ("sim2", None))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000, help="points for sim1 / sim2 (default 2000)")
    parser.add_argument("--iters", type=int, default=2000)
    parser.add_argument("--burn-in", type=int, default=1000)
    parser.add_argument("--chains", type=int, default=4)
    parser.add_argument("--out", default="prior-comparison", help="folder for the .npz files")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(exist_ok=True)
    print(f"load average at start: {Path('/proc/loadavg').read_text().split()[:3]}")
    print("| data | prior | mean K | P(K = true K) | NMI | VI (bits) | seconds |")
    print("|---|---|---|---|---|---|---|")
    for data, fixed_k in DATA:
        for name in PRIORS:
            path = out / f"{data}-{name}.npz"
            command = [sys.executable, "-m", "pcrp.cli", "run", data, "--prior", name, "--iters", str(args.iters),
                       "--burn-in", str(args.burn_in), "--chains", str(args.chains), "--seed", "0",
                       "--out", str(path)]
            if data != "old-faithful":
                command += ["--n", str(args.n)]
            start = time.perf_counter()
            subprocess.run(command, check=True, capture_output=True)
            seconds = time.perf_counter() - start
            with np.load(path, allow_pickle=False) as f:
                true = f["true_labels"] if "true_labels" in f.files else None
            chains = ChainSet.load(path)
            k = chains.K[:, args.burn_in:]
            true_k = fixed_k if true is None else len(np.unique(true))
            metrics = "| - | - " if true is None else "".join(
                f"| {m:.3f} ({se:.3f}) " for m, se in metric_summary(true, chains.labels).values())
            print(f"| {data}{'' if data == 'old-faithful' else f' N={args.n}'} | {prior_of(chains.config).label()} | "
                  f"{k.mean():.2f} | {(k == true_k).mean():.2f} (K={true_k}) {metrics}| {seconds:.0f} |",
                  flush=True)
    print(f"load average at end: {Path('/proc/loadavg').read_text().split()[:3]}")


if __name__ == "__main__":
    main()

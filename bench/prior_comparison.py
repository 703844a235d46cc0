"""The five priors side by side, each run by `pcrp run` exactly as a user would, on Old Faithful (N = 272) and
Sim 1 / Sim 2 (N = 2000 by default): mean K, P(K = true K), and the posterior mean NMI and VI (bits) of the
draws against the true labels, with their MCSE.

    python bench/prior_comparison.py [--n 2000] [--out DIR]

Every run is `pcrp run DATA --prior NAME --seed 0 --out DIR/DATA-NAME.npz` with the prior's defaults (the
registry's, and for the pCRP the cross-validated r shipped for the data set: pcrp.analyses.cv.builtin_r) and the automatic
budget, which stops once the chains agree and have 400 effective draws of K and the log joint: the sweeps column
shows how many each prior needed, and whether it converged or hit the cap. The prior column shows the parameters
each run recorded. Old Faithful has no true labels; its "true K" is taken as 2 (short and long eruptions), and
NMI / VI are not shown.
"""

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from provenance import header, load_now  # noqa: E402

from pcrp.runs.chains import ChainSet  # noqa: E402
from pcrp.model import PRIORS  # noqa: E402
from pcrp.model import prior_of  # noqa: E402
from pcrp.summaries.summary import metric_summary  # noqa: E402

DATA = (("old-faithful", 2), ("sim1", None), ("sim2", None))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000, help="points for sim1 / sim2 (default 2000)")
    parser.add_argument("--out", default="out/prior-comparison", help="folder for the .npz files (out/ is not tracked)")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(exist_ok=True)
    print(header("python bench/prior_comparison.py"))
    print()
    print("| data | prior | sweeps per chain | mean K | P(K = true K) | NMI | VI (bits) | seconds |")
    print("|---|---|---|---|---|---|---|---|")
    for data, fixed_k in DATA:
        for name in PRIORS:
            path = out / f"{data}-{name}.npz"
            command = [sys.executable, "-m", "pcrp.cli", "run", data, "--prior", name, "--seed", "0",
                       "--out", str(path)]
            if data != "old-faithful":
                command += ["--n", str(args.n)]
            start = time.perf_counter()
            subprocess.run(command, check=True, capture_output=True)
            seconds = time.perf_counter() - start
            with np.load(path, allow_pickle=False) as f:
                true = f["true_labels"] if "true_labels" in f.files else None
            chains = ChainSet.load(path)
            k = chains.K_after_burn_in
            sweeps = f"{chains.K.shape[1]:,}{'' if chains.stop['converged'] else ' (cap)'}"
            true_k = fixed_k if true is None else len(np.unique(true))
            metrics = "| - | - " if true is None else "".join(
                f"| {m:.3f} ({se:.3f}) " for m, se in metric_summary(true, chains.labels).values())
            print(f"| {data}{'' if data == 'old-faithful' else f' N={args.n}'} | {prior_of(chains.config).label()} | "
                  f"{sweeps} | {k.mean():.2f} | {(k == true_k).mean():.2f} (K={true_k}) {metrics}| {seconds:.0f} |",
                  flush=True)
    print(f"\nLoad average at the end: {load_now():.2f}.")


if __name__ == "__main__":
    main()

"""`pcrp run` at defaults beside `PCRPMixture().fit` on the same data, each in a fresh process (start-up included).

    python bench/run_vs_fit.py [--data sim1] [--n 2000] [--repeats 2]

Both fit the same model (the pCRP at the data set's shipped r, the data as `pcrp run` loads them, seed 1) and print
their wall time; the ratio is what issue 36 asks to keep within 1.5x (the command line adds its summaries: the point
estimate, the collapse reference, the saved file).
"""

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from provenance import header  # noqa: E402

FIT = """
from pcrp.analyses.cv import builtin_r
from pcrp.data import load
from pcrp.estimator import PCRPMixture
from pcrp.model import PowerCRP
ds = load({data!r}, n={n})
PCRPMixture(prior=PowerCRP(r=builtin_r({data!r})[0]), standardize=False, random_state=1).fit(ds.X)
"""


def timed(command):
    started = time.perf_counter()
    subprocess.run(command, cwd=ROOT, check=True, capture_output=True)
    return time.perf_counter() - started


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="sim1")
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    print(header("python bench/run_vs_fit.py"))
    with tempfile.TemporaryDirectory() as folder:
        run = [sys.executable, "-m", "pcrp.cli", "run", args.data, "--n", str(args.n), "--seed", "1",
               "--out", str(Path(folder) / "r.npz")]
        fit = [sys.executable, "-c", FIT.format(data=args.data, n=args.n)]
        runs, fits = [], []
        for _ in range(args.repeats):  # alternated, so that load hits both alike
            runs.append(timed(run))
            fits.append(timed(fit))
    r, f = statistics.median(runs), statistics.median(fits)
    print(f"pcrp run {args.data} --n {args.n} --seed 1: median {r:.1f} s wall of {args.repeats}")
    print(f"PCRPMixture(...).fit on the same data, with start-up: median {f:.1f} s wall of {args.repeats}")
    print(f"ratio {r / f:.2f} (target <= 1.5)")


if __name__ == "__main__":
    main()

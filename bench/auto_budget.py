"""What the automatic budget chooses: sweeps per chain, why it stopped, ESS and R-hat reached, modes and time, on
easy and hard data, as `pcrp run DATA --seed 0` does (4 chains from unlike starts, the pCRP at the data set's
shipped cross-validated r unless given).

    python bench/auto_budget.py [--cases old-faithful,sim1:2000,mix10:2000,mnist:1000,mnist:1000:1.4]

A case is DATA[:N[:r]]: a built-in data set (N for sim1, sim2 and mnist) or mix10 (bench/peers.py's 10-D
mixture, r 1.1). MNIST 1-4 at N = 1,000 and r = 1.4 has two modes 68 nats apart (docs/design.md section 1.5): the budget
should run to its cap there and report them, where Old Faithful converges at its first checkpoint.
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from provenance import header, load_now  # noqa: E402

DEFAULT_CASES = "old-faithful,sim1:2000,mix10:2000,mnist:1000,mnist:1000:1.4"


def load_case(case):
    """(X, label of the case, r) of DATA[:N[:r]]."""
    from pcrp import data as data_mod
    from pcrp.analyses.cv import builtin_r

    parts = case.split(":")
    name, n = parts[0], (int(parts[1]) if len(parts) > 1 else None)
    if name == "mix10":
        from peers import data

        X, _ = data("mix10", n or 2000)
        from pcrp.data import standardize

        X = standardize(X, [str(j) for j in range(X.shape[1])])[0]
        r = 1.1
    else:
        X = data_mod.load(name, **({"n": n} if n else {})).X
        r = builtin_r(name)[0]
    if len(parts) > 2:
        r = float(parts[2])
    return X, f"{name}{f' N = {n:,}' if n else ''}", r


def main():
    from pcrp.runs.chains import run_chains
    from pcrp.summaries.modes import find_modes
    from pcrp.runs.run_spec import make_run_spec

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default=DEFAULT_CASES)
    args = parser.parse_args()
    lines = [header("python bench/auto_budget.py" + (f" --cases {args.cases}" if args.cases != DEFAULT_CASES
                                                      else "")), "",
             "| data | r | sweeps per chain | stopped | R-hat K / log joint | ESS K / log joint | modes | seconds |",
             "|---|---|---|---|---|---|---|---|"]
    print("\n".join(lines), flush=True)
    for case in args.cases.split(","):
        X, label, r = load_case(case)
        spec = make_run_spec(X, prior="pcrp", prior_params={"r": r}, seed=0)
        t0 = time.perf_counter()
        chains = run_chains(X, spec)
        seconds = time.perf_counter() - t0
        diag = chains.diagnostics()
        modes, _ = find_modes(chains, diagnostics=diag, seed=0)
        mode_text = str(len(modes)) if len(modes) == 1 else (
            f"{len(modes)}: " + "; ".join(f"chains {', '.join(str(c + 1) for c in m.chains)} at mean K {m.mean_K:.2f}, "
                                          f"log joint {m.mean_log_joint:.1f}" for m in modes))
        line = (f"| {label} | {r:g} | {chains.K.shape[1]:,} | "
                f"{'converged' if chains.stop['converged'] else 'cap'} | {diag['K']['rhat']:.3f} / "
                f"{diag['log_joint']['rhat']:.3f} | {diag['K']['ess_bulk']:.0f} / {diag['log_joint']['ess_bulk']:.0f} | "
                f"{mode_text} | {seconds:.1f} |")
        print(line, flush=True)
        lines.append(line)
    lines += ["", f"Load average at the end: {load_now():.2f}."]
    print(lines[-1])
    return 0


if __name__ == "__main__":
    sys.exit(main())

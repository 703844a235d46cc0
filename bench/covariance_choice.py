"""Which covariance type the data support, on four data sets: the covariance-choice table of docs/records/
covariance_choice.md (and docs/model.md's covariance section).

    python bench/covariance_choice.py [--out docs/records/covariance_choice.md] [--n-jobs 2] [--recompute]

Each type's r is cross-validated and checked as r always is, on the same splits, and the types are compared by the
held-out log predictive density per point at their own r (pcrp.analyses.cv.compare_covariance_types, with the
shipped settings BUILTIN_R_SETTINGS: 5 folds x 3 repeats, 2,000 sweeps per fit, seed 0; the rule is
pcrp.analyses.cv.choose_covariance's). The data sets:

- Old Faithful, Sim 1 (N = 300, seed 0) and MNIST digits 1-4 (N = 1,000) in 10 dimensions of its spectral
  embedding: built-in data sets whose every covariance type is cross-validated and shipped in
  pcrp/datasets/cv_r.json (`python -m pcrp.analyses.cv --builtin-r pcrp/datasets/cv_r.json`); read from there
  (pcrp.analyses.cv.shipped_covariance_choice), or computed again with --recompute (the same numbers: cross
  validation is reproducible per seed whatever the cores);
- four 20-D blobs of 100 points (scikit-learn's make_blobs(400, centers=4, n_features=20, random_state=0),
  standardised as a CSV is): computed here. For it the script also prints what each type's model says of merging
  two true blobs: the change of the CRP's (r = 1) log joint when the true partition's pair is merged, per type
  (pcrp.analyses.path.merge_terms; positive: the model prefers them merged).

Prints the table and writes it, with this command, the date, the machine, its load and the seconds, to --out.
"""

import argparse
import itertools
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from provenance import header  # noqa: E402

from pcrp import data as data_mod  # noqa: E402
from pcrp.analyses.collapse import COVARIANCE_WORDS  # noqa: E402
from pcrp.analyses.cv import (BUILTIN_R_COMMAND, BUILTIN_R_SETTINGS, compare_covariance_types,  # noqa: E402
                              shipped_covariance_choice)

BUILTIN = (("Old Faithful", "old-faithful", {}), ("Sim 1 (N = 300)", "sim1", {}),
           ("MNIST 1-4 (N = 1,000), 10 spectral dimensions", "mnist", {"dims": 10}))
BLOBS = "four 20-D blobs of 100 points"


def blobs():
    """make_blobs(400, centers=4, n_features=20, random_state=0), z-scored per column, and its labels."""
    from sklearn.datasets import make_blobs

    X, y = make_blobs(n_samples=400, centers=4, n_features=20, random_state=0)
    return (X - X.mean(axis=0)) / X.std(axis=0), y


def merge_nats(X, y):
    """{type: [change of the CRP's log joint when each pair of true clusters is merged]} (nats)."""
    from pcrp.analyses.path import Block, merge_terms
    from pcrp.model import COVARIANCE_TYPES, resolve_niw

    out = {}
    for t in COVARIANCE_TYPES:
        niw = resolve_niw(X, covariance_type=t)
        blocks = {k: Block.of(X[y == k]) for k in np.unique(y)}
        out[t] = [sum(merge_terms(blocks[a], blocks[b], niw, 1.0)) for a, b in itertools.combinations(blocks, 2)]
    return out


def rows_of(name, choice):
    out = []
    for row in choice.table():
        out.append(f"| {name} | {COVARIANCE_WORDS[row['covariance_type']]} | {row['r']:g} | "
                   f"{row['log_pred']:.4f} ({row['log_pred_se']:.4f}) | "
                   + ("best" if row["best"] else f"{row['behind_best']:.4f} ({row['behind_best_se']:.4f})")
                   + f" | {row['loss']:.3f} ({row['loss_se']:.3f}) | {row['mean_k']:.2f} | "
                   + ("**chosen**" if row["chosen"] else "") + " |")
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="docs/records/covariance_choice.md")
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--recompute", action="store_true",
                        help="cross-validate the built-in data sets here too instead of reading cv_r.json")
    args = parser.parse_args(argv)
    command = "python bench/covariance_choice.py" + (" --recompute" if args.recompute else "")
    lines = [header(command), ""]
    print(lines[0], flush=True)
    table = ["| data | covariance | r | held-out log predictive per point (SE) | behind the best (SE) | "
             "loss of eq. (5) (SE) | mean K | |", "|---|---|---|---|---|---|---|---|"]
    texts, seconds = [], {}
    for label, name, settings in BUILTIN:
        start = time.perf_counter()
        if args.recompute:
            ds = data_mod.load(name, **settings)
            choice, _ = compare_covariance_types(ds.X, standardize=ds.standardized, n_jobs=args.n_jobs,
                                                 **{k: v for k, v in BUILTIN_R_SETTINGS.items()})
        else:
            choice = shipped_covariance_choice(name, settings)
        seconds[label] = time.perf_counter() - start
        table += rows_of(label, choice)
        texts.append(f"- {label}: {choice.text()}")
        print(f"{label}: {choice.text()}", flush=True)
    X, y = blobs()
    start = time.perf_counter()
    cpu = time.process_time()
    choice, runs = compare_covariance_types(X, standardize=True, n_jobs=args.n_jobs, **BUILTIN_R_SETTINGS)
    seconds[BLOBS] = time.perf_counter() - start
    cpu = time.process_time() - cpu
    table += rows_of(BLOBS, choice)
    texts.append(f"- {BLOBS}: {choice.text()}")
    print(f"{BLOBS}: {choice.text()} ({seconds[BLOBS]:.0f} s wall, {cpu:.0f} s CPU)", flush=True)
    checks = [f"- {BLOBS}, {COVARIANCE_WORDS[t]}: {check['text']}" for t, (_, check) in runs.items()]
    nats = merge_nats(X, y)
    merges = [f"- {COVARIANCE_WORDS[t]}: " + ", ".join(f"{v:+.1f}" for v in values) + " nats"
              for t, values in nats.items()]
    print("\n".join(table + [""] + merges), flush=True)
    source = ("read from pcrp/datasets/cv_r.json, made by `" + BUILTIN_R_COMMAND + "`" if not args.recompute
              else "computed here")
    lines += [
        "Which covariance type the data support (docs/design.md section 1.9): each type's r cross-validated (5 "
        "folds x 3 repeats, 2,000 sweeps per fit, seed 0, the robust change-point rule) and checked with chains "
        "on all the data, on the same splits; the types compared by the held-out log predictive density per point "
        "at their own r, split by split. **Chosen**: the simplest type (spherical, then diagonal, then full) within "
        "2 standard errors of the split-by-split difference from the best. The loss of eq. (5) (the one r is "
        "chosen by) is shown beside it and does not decide. Mean K: the cross-validation fits' at that r (on 80% "
        "of the points).", "",
        *table, "",
        *texts, "",
        f"The built-in data sets' rows are {source}. The blobs are scikit-learn's make_blobs(400, centers=4, "
        "n_features=20, random_state=0), z-scored per column as a CSV is; their comparison took "
        f"{seconds[BLOBS]:.0f} s wall ({cpu:.0f} s CPU of this process's threads) with --n-jobs {args.n_jobs}.", "",
        "Each blob type's check on all 400 points:", "", *checks, "",
        "What each model says of merging two of the four true blobs (the change of the CRP's log joint at r = 1, "
        "per pair; positive: that model prefers the two merged), which is why the full type keeps fewer clusters "
        "than there are blobs: its 210 covariance parameters per cluster are poorly determined by 100 points.", "",
        *merges, "",
    ]
    with open(args.out, "w", encoding="utf-8") as f:
        f.write("# Which covariance the data support\n\n" + "\n".join(lines))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()

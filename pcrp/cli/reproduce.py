"""``pcrp reproduce``: run the paper's experiments and write tables and figures.

Its settings are the protocols of :mod:`pcrp.experiments.reproduce` (``FULL``, ``QUICK``: presets over its declarations,
``REPRODUCE_PARAMS``)."""

import sys

from .arguments import CliError, add_declared_options, add_parallel_options, check_parallel, help_text, whole
from .output import output_folder, write_report
from .progress import progress_bar

OUT_DEFAULT = "reproduce-output"  # the output folder, relative to where the command runs


def add_parser(sub, help_line):
    from ..experiments.reproduce import EXPERIMENTS, FULL, N_CHAINS, QUICK, REPRODUCE_PARAMS

    p = sub.add_parser(
        "reproduce", help=help_line,
        description=(
            "Run the paper's experiments (Sim 1 and Sim 2 at N = 300 and 2000, MNIST digits 1-4 at N = 1000 "
            f"and 3000, Old Faithful) with CRP-Oracle, CRP and pCRP (r by cross validation), {N_CHAINS} chains each from "
            "different starts (R-hat flags rows whose chains disagree), under the paper's "
            f"protocol ({FULL.iters:,} sweeps, burn-in {FULL.burn_in:,}, thin {FULL.thin}, alpha = "
            f"{FULL.alpha:g}), on several simulated data sets "
            "(mean, spread between data sets and within-run MCSE), and write tables.md / tables.csv "
            "next to the paper's numbers, the CV curves and the figures (HTML) into --out."
        ),
    )
    p.add_argument("--quick", action="store_true",
                   help=f"{QUICK.iters:,} sweeps (burn-in {QUICK.burn_in:,}) and a {QUICK.cv_folds}-fold CV of "
                        f"{QUICK.cv_iters:,} sweeps: a few minutes for all experiments")
    p.add_argument("--experiments", default=",".join(EXPERIMENTS),
                   help=f"comma-separated subset of: {', '.join(EXPERIMENTS)} (default all)")
    p.add_argument("--out", default=OUT_DEFAULT, help="output folder (default %(default)s)")
    add_declared_options(p, REPRODUCE_PARAMS, ("seed",))
    p.add_argument("--data-sets", type=whole,
                   help=help_text(REPRODUCE_PARAMS["n_seeds"], f"{QUICK.n_seeds} with --quick, {FULL.n_seeds} "
                                                               "without; Old Faithful and MNIST are one data set"))
    p.add_argument("--no-extra", action="store_true",
                   help="only the paper's methods (by default MFM and the sparse finite mixture follow, "
                        "labelled as beyond the paper)")
    p.add_argument("--no-split-merge", action="store_true", help="the paper's plain Gibbs sampler")
    add_parallel_options(p)


def command(args, argv=None):
    import time
    from dataclasses import replace

    from ..experiments.reproduce import EXPERIMENTS, FULL, QUICK, REPRODUCE_PARAMS, run_over_seeds, seed_rows
    from ..experiments.reproduce import write_report as report

    keys = [k.strip() for k in args.experiments.split(",") if k.strip()]
    unknown = [k for k in keys if k not in EXPERIMENTS]
    if unknown or not keys:
        raise CliError(f"unknown experiment {', '.join(unknown) or '(none given)'}; choose from "
                       f"{', '.join(EXPERIMENTS)}")
    REPRODUCE_PARAMS.check("seed", args.seed, "--seed")
    if args.data_sets is not None:
        REPRODUCE_PARAMS.check("n_seeds", args.data_sets, "--data-sets")
    check_parallel(args)
    out_dir = output_folder(args.out, "--out")
    protocol = replace(QUICK if args.quick else FULL, split_merge=not args.no_split_merge)
    results = []
    command_line = "pcrp " + " ".join(argv if argv is not None else sys.argv[1:])
    started = time.perf_counter()
    for key in keys:
        title = EXPERIMENTS[key].title
        print(f"{title} ...", file=sys.stderr, flush=True)
        with progress_bar(total=100, unit="%", desc=title,
                          bar_format="{desc}: {percentage:3.0f}%|{bar}| [{elapsed}<{remaining}]") as bar:
            def progress(text, fraction, bar=bar, title=title):
                bar.set_description(f"{title}: {text}", refresh=False)
                bar.update(round(100 * fraction) - bar.n)

            res = run_over_seeds(EXPERIMENTS[key], protocol, seed=args.seed, n_seeds=args.data_sets,
                                 extra=not args.no_extra, n_jobs=args.n_jobs, scheduler=args.scheduler,
                                 progress=progress)
        means = [f"{row['method']} {row['K']:.2f}" for row in seed_rows(res)
                 if "K" in row and row["method"] != "Ground truth"]
        print(f"  {len(res.runs)} data set(s); mean K: " + ", ".join(means), file=sys.stderr)
        results.append(res)
        # the report is rewritten after every experiment, so stopping a long run keeps what is done
        pending = [EXPERIMENTS[k].title for k in keys[len(results):]]
        path = write_report(report, results, out_dir, command=command_line, seconds=time.perf_counter() - started,
                            pending=pending)
    print(path.read_text())
    print(f"wrote {path} and the figures in {path.parent / 'figures'}")

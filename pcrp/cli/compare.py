"""``pcrp compare``: the pCRP against the other priors and scikit-learn's BayesianGaussianMixture.

Its defaults are compare's declarations (:data:`pcrp.experiments.compare.COMPARE_PARAMS`); its methods are the registered priors
and scikit-learn's BayesianGaussianMixture (:func:`pcrp.experiments.compare.compare_methods`)."""

import sys

from .arguments import add_declared_options, add_parallel_options, check_parallel, names
from .output import output_folder, write_report
from .progress import counting_bar, progress_bar

OUT_DEFAULT = "compare-output"  # the output folder, relative to where the command runs


def add_parser(sub, help_line):
    from ..experiments.compare import COMPARE_PARAMS, DATA_SETS, compare_methods, prior_methods
    from ..runs.run_spec import RUN_PARAMS

    methods = compare_methods()
    priors = ", ".join(spec.label + (f" ({spec.tuned} chosen on each data set by cross validation and checked on all "
                                     "of it)" if spec.tuned else "") for spec in prior_methods().values())
    p = sub.add_parser(
        "compare", help=help_line,
        description=("Does the pCRP fix over-clustering, compared with what? Runs every registered prior: "
                     f"{priors} ({RUN_PARAMS['n_chains'].default} chains each, the automatic budget) and "
                     "scikit-learn's "
                     "BayesianGaussianMixture on Sim 1 and Sim 2 (N = 300 and 2000, several fresh data seeds), Old "
                     "Faithful, MNIST 1-4 and the labelled data sets scikit-learn ships, and writes compare.md "
                     "(where the pCRP wins and where it does not, counted, and one table), compare.csv, "
                     "compare.json and compare.html (one figure) into --out."),
    )
    p.add_argument("--data-sets", default=",".join(DATA_SETS), help=f"comma-separated subset of: {', '.join(DATA_SETS)}")
    p.add_argument("--methods", default=",".join(methods), help=f"comma-separated subset of: {', '.join(methods)}")
    add_declared_options(p, COMPARE_PARAMS, ("n_seeds", "seed"))
    p.add_argument("--covariance-type", default="full", metavar="{full,diag,spherical}",
                   help="every prior's and BayesianGaussianMixture's cluster covariance, scikit-learn's "
                        "covariance_type (default %(default)s)")
    p.add_argument("--out", default=OUT_DEFAULT, help="output folder (default %(default)s)")
    add_parallel_options(p)


def command(args, argv=None):
    import os
    import time

    from ..experiments.compare import COMPARE_PARAMS, DATA_SETS, compare_methods, run_comparison, write_report as report
    from ..sampling.compute import describe_machine

    data_sets = names(args.data_sets, DATA_SETS, "--data-sets")
    methods = names(args.methods, compare_methods(), "--methods")
    COMPARE_PARAMS.check("n_seeds", args.seeds, "--seeds")
    COMPARE_PARAMS.check("seed", args.seed, "--seed")
    check_parallel(args)
    from ..model import check_covariance_type

    covariance_type = check_covariance_type(args.covariance_type)
    out_dir = output_folder(args.out, "--out")
    command_line = "pcrp " + " ".join(argv if argv is not None else sys.argv[1:])
    load_before = os.getloadavg()[0]
    started = time.perf_counter()
    with progress_bar(unit="data set", desc="compare") as bar:
        fits = run_comparison(data_sets, n_seeds=args.seeds, seed=args.seed, methods=methods, n_jobs=args.n_jobs,
                              scheduler=args.scheduler, progress=counting_bar(bar), covariance_type=covariance_type)
    path = write_report(report, fits, out_dir, command=command_line, seconds=time.perf_counter() - started,
                        load=(load_before, os.getloadavg()[0]), machine=describe_machine())
    print(path.read_text())
    print(f"wrote {path} and compare.csv, compare.json, compare.html beside it")

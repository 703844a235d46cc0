"""The ``pcrp`` command line.

    pcrp run DATA [--prior {crp,pcrp,py,mfm,sfm}] [--alpha A] [--r R] [--sigma S] [--gamma G] [--lam L]
             [--k-max K] [--budget auto | --iters T [--burn-in B]] [--max-iters T] [--thin S] [--seed SEED]
             [--chains C] [--init START[,START..]] [--loss vi|binder] [--n-jobs J] [--split-merge M |
             --no-split-merge] [--m0 V1,V2,..] [--kappa0 X] [--nu0 X] [--s0 X] [--standardize | --no-standardize]
             [--columns c1,c2] --out RESULT.npz
    pcrp rerun RESULT.npz --out NEW.npz

    pcrp cv DATA [--r-grid 1.01,1.05,..] [--folds F] [--repeats R] [--iters T] [--burn-in B] [--thin S]
             [--alpha A] [--seed SEED] [--n-jobs J] [--scheduler ADDRESS] [--out-csv F] [--out-json F]
    pcrp reproduce [--quick] [--experiments KEY,..] [--out DIR] [--seed SEED] [--n-jobs J] [--scheduler ADDRESS]
    pcrp path DATA [data, --alpha and NIW options as for run] [--from-labels FILE] [--chains C] [--iters T]
             [--burn-in B] [--thin S] [--seed SEED] --out path.json
    pcrp compare [--data-sets KEY,..] [--methods M,..] [--seeds N] [--seed S] [--out DIR] [--n-jobs J]
             [--scheduler ADDRESS]

Errors exit with status 2 and one line on stderr, never a traceback; Ctrl-C at any point prints
"pcrp: interrupted." and exits with status 130. Every file is written whole or not at all
(:func:`pcrp.files.atomic_write`): an earlier file survives a full disk.

Only the standard library is imported with this module: the library (numpy, numba, scipy, ...: seconds) is
imported inside :func:`main`'s handlers, so that Ctrl-C during start-up is one line too. (The package's
``__init__`` imports nothing heavy either, for the same reason.)
"""

import argparse
import os
import sys
import warnings
from pathlib import Path

# Defaults of the options that only some data sets use (None in argparse, so that giving one for a data set
# that ignores it can be refused).
DATA_SEED_DEFAULT = 0
DIGITS_DEFAULT = (1, 2, 3, 4)
EMBEDDING_DEFAULT = "spectral"
DIMS_DEFAULT = 2


class CliError(Exception):
    """A user error: printed as one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse's own errors: one line, status 2
        raise CliError(message)


def _floats(text, name):
    try:
        return [float(v) for v in text.split(",")]
    except ValueError:
        raise CliError(f"{name} must be comma-separated numbers (got {text!r}).") from None


def _whole(text):
    """A whole number, also written like 1e6; refuses 1.7, NaN, infinity and text."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value.is_integer():  # also False for NaN and infinity
        raise argparse.ArgumentTypeError(f"must be a whole number (got {text!r})")
    return int(value)


def _wholes(text, name):
    try:
        return [_whole(v.strip()) for v in text.split(",")]
    except argparse.ArgumentTypeError:
        raise CliError(f"{name} must be comma-separated whole numbers (got {text!r}).") from None


def _add_niw_options(p):
    p.add_argument("--m0", help="prior mean of cluster means, comma-separated, one per column")
    p.add_argument("--kappa0", type=float, help="prior strength of m0 in pseudo-points, > 0")
    p.add_argument("--nu0", type=float, help="inverse-Wishart degrees of freedom, > d - 1")
    p.add_argument("--s0", type=float, help="inverse-Wishart scale: S0 = S0_VALUE * identity, > 0")


def _add_parallel_options(p):
    p.add_argument("--n-jobs", type=_whole, default=-1,
                   help="parallel fits on this machine, at most its core count (default -1: all cores)")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="run the fits on an existing Dask cluster, e.g. tcp://10.0.0.5:8786 (needs dask[distributed])")


def _flag(name):
    return "--" + name.replace("_", "-")  # the flag of a prior parameter (pcrp.params.Param.flag)


def _add_prior_options(p):
    """--prior and one flag per parameter name in the registry (pcrp.model.PRIORS), each saying which priors
    use it, with bounds and default; a flag defaults to None so that one the chosen prior lacks is refused."""
    from .model import DEFAULT_PRIOR, PRIORS

    p.add_argument("--prior", choices=list(PRIORS), default=DEFAULT_PRIOR,
                   help="seating prior (default %(default)s): "
                        + "; ".join(f"{s.name} = {s.label}" for s in PRIORS.values()))
    users = {}
    for spec in PRIORS.values():
        for param in spec.params:
            users.setdefault(param.name, []).append((spec, param))
    for name, uses in users.items():
        text = "; ".join(f"{spec.name}: {param.label} in {param.interval()}"
                         f"{', ' + param.constraint if param.constraint else ''}, default {param.default:g}"
                         for spec, param in uses)
        if name == "r":  # the pCRP's r may also be chosen for the data: --r cv
            p.add_argument("--r", dest="r", type=_r_value, metavar="R|cv",
                           help=f"{text}; or cv: choose r for these data by cross validation, then check it with "
                                "chains on all of them against a CRP fit (a collapse steps r down; one grid step of "
                                "margin), as `pcrp cv` does")
            continue
        p.add_argument(_flag(name), dest=name, type=float, metavar=name[0].upper(),
                       help=f"{text}{' (a whole number)' if uses[0][1].integer else ''}")


def _r_value(text):
    """--r: a number, or 'cv' (choose r for the data)."""
    if text.strip().lower() == "cv":
        return "cv"
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"give a number or cv (got {text!r})") from None


def prior_from_args(args):
    """The prior that --prior and its parameter flags describe (registry defaults for flags not given), and a
    note on where r came from (None for other priors or a given --r).

    The pCRP's r, when not given, is the cross-validated r shipped for a built-in data set
    (:func:`pcrp.cv.builtin_r`), else the registry default, with a sentence saying which. A flag that the chosen
    prior does not use is a CliError naming the prior's own flags."""
    from .model import PRIORS, make_prior

    spec = PRIORS[args.prior]
    own = {param.name for param in spec.params}
    every = {param.name for s in PRIORS.values() for param in s.params}
    given = {name: getattr(args, name) for name in sorted(every) if getattr(args, name, None) is not None}
    stray = [name for name in given if name not in own]
    if stray:
        have = ", ".join(f"{_flag(param.name)} ({param.label}, default {param.default:g})" for param in spec.params)
        flags = " and ".join(_flag(name) for name in stray)
        raise CliError(f"{flags} {'does' if len(stray) == 1 else 'do'} not apply to --prior {spec.name} "
                       f"({spec.label}); its parameters are {have}. Leave {flags} out.")
    given = {name: spec.param(name).check(value, f"the {spec.label}", CliError, name=_flag(name))
             for name, value in given.items()}
    note = None
    if spec.name == "pcrp" and "r" not in given:
        from .cv import builtin_r

        given["r"], note = builtin_r(args.data)
    return make_prior(spec.name, **given), note


def _add_data_options(p):
    from . import data as data_mod

    p.add_argument("data", metavar="DATA",
                   help="a CSV file (header row, numeric columns) or a built-in data set: "
                        + ", ".join(data_mod.BUILTIN_NAMES))
    p.add_argument("--columns", help="comma-separated CSV columns to cluster (default: every numeric column)")
    p.add_argument("--label-column", help="CSV column holding true labels (used for NMI / VI)")
    std = p.add_mutually_exclusive_group()
    std.add_argument("--standardize", dest="standardize", action="store_true", default=None,
                     help="z-score every column (default for CSV, Old Faithful and MNIST)")
    std.add_argument("--no-standardize", dest="standardize", action="store_false",
                     help="use the numbers exactly as in the file (default for sim1, sim2, demo)")
    p.add_argument("--n", type=_whole, help="points to draw for sim1/sim2/demo (default 300) or mnist (default 1000)")
    p.add_argument("--data-seed", type=_whole,
                   help=f"seed for simulated data / the MNIST subset, >= 0 (default {DATA_SEED_DEFAULT})")
    p.add_argument("--digits", help="MNIST digits (default 1,2,3,4 as in the paper)")
    p.add_argument("--embedding", choices=data_mod.MNIST_EMBEDDINGS,
                   help=f"MNIST embedding (default {EMBEDDING_DEFAULT}, as in the paper)")
    p.add_argument("--dims", type=_whole, help=f"MNIST embedding dimensions, 1-50 (default {DIMS_DEFAULT})")


# The run settings `pcrp run` takes, each a flag made from its declaration (pcrp.run_spec.RUN_PARAMS).
RUN_FLAGS = ("n_chains", "iters", "burn_in", "thin", "max_iters", "seed", "n_jobs", "split_merge")


def _add_run_options(p, names=RUN_FLAGS):
    """One flag per run setting in ``names``, made from its declaration (bounds, default and meaning in the help);
    a flag defaults to None, which the run specification resolves to the declared default. ``--budget auto`` (the
    default) and ``--no-split-merge`` are the two words that are not numbers."""
    from .budget import AUTO_ESS, AUTO_MAX_ITERS
    from .run_spec import RUN_PARAMS

    for name in names:
        param = RUN_PARAMS[name]
        default = {"iters": "none: the automatic budget", "burn_in": "half of --iters",
                   "seed": "a fresh seed, printed and recorded"}.get(name) or f"{param.default:g}"
        p.add_argument(param.flag, dest=name, type=_whole, metavar=name.split("_")[-1].upper(),
                       help=f"{param.help} {param.label} in {param.interval()} (default {default})".replace("%", "%%"))
    if "iters" in names:
        p.add_argument("--budget", choices=("auto",),
                       help=f"auto (the default unless --iters is given): run until split R-hat <= 1.01 and bulk ESS "
                            f">= {AUTO_ESS:g} for K and the log joint with one mode, or --max-iters sweeps "
                            f"(default {AUTO_MAX_ITERS:,}), and say which stopped it")
    if "split_merge" in names:
        p.add_argument("--no-split-merge", action="store_true",
                       help="plain Gibbs as in the paper (same as --split-merge 0)")


def run_settings(args, names=RUN_FLAGS):
    """{setting: value} of the run flags given on the command line, each checked against its declaration and
    named as typed in the message; the others are left to the run specification's defaults."""
    from .run_spec import RUN_PARAMS

    out = {}
    for name in names:
        value = getattr(args, name, None)
        if value is not None:
            param = RUN_PARAMS[name]
            out[name] = param.check(value, "the run", CliError, name=param.flag)
    if getattr(args, "no_split_merge", False):
        if out.get("split_merge", 0):
            raise CliError("--no-split-merge and --split-merge contradict each other: give one.")
        out["split_merge"] = 0
    if getattr(args, "budget", None) == "auto" and "iters" in out:
        raise CliError("--budget auto and --iters contradict each other: --iters fixes the sweeps; leave one out.")
    if "n_jobs" in out and out["n_jobs"] == 0:
        raise CliError("--n-jobs must be -1 (all cores) or a whole number from 1 to the cores (got 0).")
    return out


def build_parser():
    from .cv import BUILTIN_R_SETTINGS, CV_RULES, DEFAULT_GRID
    from .model import ALPHA
    from .run_spec import DEFAULT_INITS
    from .partition import DEFAULT_LOSS, LOSSES
    from .reproduce import EXPERIMENTS

    parser = _Parser(prog="pcrp", description="Powered Chinese restaurant process mixtures.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    p = sub.add_parser(
        "run",
        help="run the collapsed Gibbs sampler and save the chain",
        description=(
            "Run the collapsed Gibbs sampler (Algorithm 1 of Lu, Li & Dunson) for an infinite Gaussian "
            "mixture with a Normal-Inverse-Wishart prior under a Gibbs-type seating prior (CRP, pCRP, "
            "Pitman-Yor, MFM or sparse finite mixture; the same sampler for each), and save the chain as "
            ".npz. NIW settings are in the units the sampler sees (standardised units unless "
            "--no-standardize). Defaults: m0 = column means, kappa0 = 0.25, nu0 = d + 3, "
            "S0 = 0.25 * v * nu0 * I with v the mean column variance."
        ),
    )
    _add_data_options(p)
    _add_prior_options(p)
    _add_run_options(p)
    p.add_argument("--init", default=",".join(DEFAULT_INITS),
                   help="start of each chain: one | random:K | kmeans:K (K at most the number of points), or a "
                        f"comma-separated list used per chain and cycled (default {','.join(DEFAULT_INITS)}: a good "
                        "start, one cluster and many clusters)")
    p.add_argument("--loss", choices=LOSSES, default=DEFAULT_LOSS,
                   help="loss whose posterior expectation the point estimate minimises: vi (variation of "
                        "information, default) or binder")
    p.add_argument("--psm", action="store_true",
                   help="also compute and save the N x N posterior similarity matrix (4 N^2 bytes: 16 MB at "
                        "2,000 points); not made by default, since the point estimate works from the draws")
    _add_niw_options(p)
    p.add_argument("--out", required=True,
                   help="where to write RESULT.npz (.npz is added if missing; its folder must exist)")

    p = sub.add_parser(
        "rerun",
        help="run again exactly what a result file records",
        description=("Rebuild the run specification a RESULT.npz of `pcrp run` records (prior, NIW, chains and "
                     "starts, budget, thinning, seed, moves), load the same data (a built-in data set with its "
                     "options, or the CSV file at the recorded path, checked by its SHA-256) and run it again: "
                     "the draws are identical."),
    )
    p.add_argument("result", metavar="RESULT.npz", help="a result file of pcrp run")
    p.add_argument("--out", required=True, help="where to write the new RESULT.npz")

    p = sub.add_parser(
        "cv",
        help="cross-validate the pCRP power r (paper Sec. 2.3)",
        description=(
            "Cross-validate the pCRP power r: for each r on the grid and each fold, fit a pCRP chain on the "
            "training part and score the held-out part by the loss of eq. (5) (held-out points join the "
            "cluster with the highest posterior seating probability) and by the held-out log predictive "
            "density. Prints the curve (mean and SE over folds) and the proposed r: the grid value just "
            "before the loss blows up. Cross validation here tunes the pCRP's r only; the other priors' "
            "parameters (--prior of pcrp run) are prior beliefs, not tuned by this loss."
        ),
    )
    _add_data_options(p)
    p.add_argument("--r-grid", default=",".join(f"{r:g}" for r in DEFAULT_GRID),
                   help="increasing comma-separated r values (default 1.01,1.05,...,2)")
    cv_defaults = BUILTIN_R_SETTINGS  # the settings the shipped r of the built-in data sets were made with
    p.add_argument("--alpha", type=float, default=ALPHA.default, help=f"concentration (default {ALPHA.default:g})")
    p.add_argument("--folds", type=_whole, default=cv_defaults["folds"], help="folds (default %(default)s)")
    p.add_argument("--repeats", type=_whole, default=cv_defaults["repeats"],
                   help="repeat the folds with new shuffles (default %(default)s: the robust rule compares the "
                        "repeats)")
    p.add_argument("--rule", choices=CV_RULES, default=cv_defaults["rule"],
                   help="change-point rule: robust (default: the smallest repeat's proposal and the lower quartile "
                        "of the splits') or mean (the change point of the mean curve, the rule before Dec. 2026)")
    p.add_argument("--no-chain-check", action="store_true",
                   help="skip the check of the proposed r by 4 chains on all the data (by default r steps down "
                        "the grid while they collapse below a CRP fit's clusters or disagree, and keeps one grid "
                        "step of margin below the largest r that holds)")
    p.add_argument("--iters", type=_whole, default=cv_defaults["iters"], help="sweeps per fit (default %(default)s)")
    p.add_argument("--burn-in", type=_whole, default=cv_defaults["burn_in"],
                   help="burn-in per fit (default %(default)s)")
    p.add_argument("--thin", type=_whole, default=cv_defaults["thin"],
                   help="thinning of the scored draws (default %(default)s)")
    p.add_argument("--seed", type=_whole, default=cv_defaults["seed"],
                   help="seed for the folds and chains, >= 0 (default %(default)s)")
    p.add_argument("--no-split-merge", action="store_true", help="plain Gibbs in every fit")
    _add_niw_options(p)
    _add_parallel_options(p)
    p.add_argument("--out-csv", help="write the curve as CSV (r, loss, loss_se, log_pred, log_pred_se, mean_k)")
    p.add_argument("--out-json", help="write the curve, the proposed r and every setting as JSON")

    p = sub.add_parser(
        "reproduce",
        help="run the paper's experiments and write tables and figures",
        description=(
            "Run the paper's experiments (Sim 1 and Sim 2 at N = 300 and 2000, MNIST digits 1-4 at N = 1000 "
            "and 2000, Old Faithful) with CRP-Oracle, CRP and pCRP (r by cross validation), 4 chains each from "
            "different starts (R-hat flags rows whose chains disagree), under the paper's "
            "protocol (20,000 sweeps, burn-in 10,000, thin 5, alpha = 1), on several simulated data sets "
            "(mean, spread between data sets and within-run MCSE), and write tables.md / tables.csv "
            "next to the paper's numbers, the CV curves and the figures (HTML) into --out."
        ),
    )
    p.add_argument("--quick", action="store_true",
                   help="2,000 sweeps (burn-in 1,000) and a 3-fold CV of 400 sweeps: a few minutes for all experiments")
    p.add_argument("--experiments", default=",".join(EXPERIMENTS),
                   help=f"comma-separated subset of: {', '.join(EXPERIMENTS)} (default all)")
    p.add_argument("--out", default="reproduce-output", help="output folder (default reproduce-output)")
    p.add_argument("--seed", type=_whole, default=0,
                   help="first data seed, and seed for folds and chains, >= 0 (default 0)")
    p.add_argument("--data-sets", type=_whole,
                   help="simulated data sets drawn per simulation, each with its own CV of r (default: 3 with "
                        "--quick, 10 without); Old Faithful and MNIST are one data set")
    p.add_argument("--no-extra", action="store_true",
                   help="only the paper's methods (by default MFM and the sparse finite mixture follow, "
                        "labelled as beyond the paper)")
    p.add_argument("--no-split-merge", action="store_true", help="the paper's plain Gibbs sampler")
    _add_parallel_options(p)
    _add_path_parser(sub)
    _add_compare_parser(sub)
    return parser


def _add_compare_parser(sub):
    from .compare import DATA_SETS, METHODS

    p = sub.add_parser(
        "compare",
        help="the pCRP against the CRP, Pitman-Yor, MFM, the sparse finite mixture and scikit-learn's BGM",
        description=("Does the pCRP fix over-clustering, compared with what? Runs the CRP, the pCRP (r chosen on each "
                     "data set by cross validation and checked on all of it), Pitman-Yor, the MFM and the sparse "
                     "finite mixture (4 chains each, the automatic budget) and scikit-learn's "
                     "BayesianGaussianMixture on Sim 1 and Sim 2 (N = 300 and 2000, several fresh data seeds), Old "
                     "Faithful, MNIST 1-4 and the labelled data sets scikit-learn ships, and writes compare.md "
                     "(where the pCRP wins and where it does not, counted, and one table), compare.csv, "
                     "compare.json and compare.html (one figure) into --out."),
    )
    p.add_argument("--data-sets", default=",".join(DATA_SETS), help=f"comma-separated subset of: {', '.join(DATA_SETS)}")
    p.add_argument("--methods", default=",".join(METHODS), help=f"comma-separated subset of: {', '.join(METHODS)}")
    p.add_argument("--seeds", type=_whole, default=3, help="data seeds per simulation (default 3)")
    p.add_argument("--seed", type=_whole, default=1000,
                   help="first data seed of the simulations, >= 0 (default 1000: seeds nothing was tuned on)")
    p.add_argument("--out", default="compare-output", help="output folder (default compare-output)")
    _add_parallel_options(p)


def cmd_compare(args, argv):
    import os
    import time

    from .compare import DATA_SETS, METHODS, run_comparison, write_report
    from .sampler import check_seed

    def subset(text, allowed, option):
        keys = [k.strip() for k in text.split(",") if k.strip()]
        unknown = [k for k in keys if k not in allowed]
        if unknown or not keys:
            raise CliError(f"{option}: unknown {', '.join(unknown) or '(none given)'}; choose from {', '.join(allowed)}")
        return keys

    data_sets = subset(args.data_sets, DATA_SETS, "--data-sets")
    methods = subset(args.methods, METHODS, "--methods")
    if args.seeds < 1:
        raise CliError(f"--seeds must be a whole number >= 1 (got {args.seeds}).")
    check_seed(args.seed, "--seed")
    check_parallel(args)
    out_dir = output_folder(args.out, "--out")
    command = "pcrp " + " ".join(argv if argv is not None else sys.argv[1:])
    load_before = os.getloadavg()[0]
    started = time.perf_counter()
    with progress_bar(unit="data set", desc="compare") as bar:
        def progress(done, total):
            bar.total = total
            bar.update(done - bar.n)

        fits = run_comparison(data_sets, n_seeds=args.seeds, seed=args.seed, methods=methods, n_jobs=args.n_jobs,
                              scheduler=args.scheduler, progress=progress)
    from .compute import describe_machine

    machine = describe_machine()
    try:
        path = write_report(fits, out_dir, command=command, seconds=time.perf_counter() - started,
                            load=(load_before, os.getloadavg()[0]), machine=machine)
    except OSError as err:
        raise _cannot_write(Path(err.filename) if err.filename else out_dir, err) from None
    print(path.read_text())
    print(f"wrote {path} and compare.csv, compare.json, compare.html beside it")


# The data sets each data option applies to; giving one for another data set is refused, not ignored.
_DATA_OPTIONS = {
    "--n": ("n", ("sim1", "sim2", "demo", "mnist")),
    "--data-seed": ("data_seed", ("sim1", "sim2", "demo", "mnist")),
    "--digits": ("digits", ("mnist",)),
    "--embedding": ("embedding", ("mnist",)),
    "--dims": ("dims", ("mnist",)),
}


def load_data(args):
    from . import data as data_mod
    from .sampler import check_seed

    for option, (attr, users) in _DATA_OPTIONS.items():
        if getattr(args, attr) is not None and args.data not in users:
            raise CliError(f"{option} applies only to the built-in data set{'s' if len(users) > 1 else ''} "
                           f"{', '.join(users)}, not to {args.data}; leave it out.")
    data_seed = DATA_SEED_DEFAULT if args.data_seed is None else check_seed(args.data_seed, "--data-seed")
    digits = DIGITS_DEFAULT if args.digits is None else _wholes(args.digits, "--digits")
    columns = None
    if args.columns is not None:
        columns = [c.strip() for c in args.columns.split(",")]
        if not all(columns):
            raise CliError(f"--columns has an empty name (got {args.columns!r}): give comma-separated column names, "
                           "or leave it out to cluster every numeric column.")
    return data_mod.load(
        args.data, columns=columns, label_column=args.label_column, standardize_data=args.standardize,
        n=args.n, seed=data_seed, digits=digits, embedding=args.embedding or EMBEDDING_DEFAULT,
        dims=DIMS_DEFAULT if args.dims is None else args.dims,
    )


def niw_overrides(args):
    """The NIW settings given on the command line, {name: value}; the rest come from the data."""
    given = dict(m0=_floats(args.m0, "--m0") if args.m0 is not None else None, kappa0=args.kappa0, nu0=args.nu0,
                 S0=args.s0)
    return {k: v for k, v in given.items() if v is not None}


def niw_from_args(args, X):
    from .model import resolve_niw

    return resolve_niw(X, **niw_overrides(args))


def _refuse_special_target(path, shown, option, suffix):
    """CliError when ``path`` is in /dev or names a device, a named pipe or a socket (folders are refused with
    their own message): results go to regular files only, replaced whole once complete. ``suffix`` None: an
    output folder."""
    from .files import output_problem

    problem = output_problem(path)
    if problem and not problem.startswith("is a folder"):
        raise CliError(f"{option} {shown} {problem}: results are written only to regular files (each replaced "
                       "whole once complete, which a device or a pipe cannot be); "
                       + (f"give a folder of yours, such as {Path.cwd() / 'reproduce-output'}." if suffix is None else
                          f"give a file name in a folder of yours, such as {Path.cwd() / ('result' + suffix)}."))


def output_file(text, option, suffix, add_suffix=True):
    """The absolute path an output option names, checked before any work: not empty, not in /dev, not a device,
    named pipe or socket (neither as given nor once ``suffix`` is added), not a folder, in a folder that exists;
    ``suffix`` is added when missing (as numpy does for .npz) unless ``add_suffix`` is False."""
    if not text.strip():
        raise CliError(f"{option} is empty: give a file name such as result{suffix}.")
    _refuse_special_target(Path(text).expanduser(), text, option, suffix)
    if text.endswith(("/", os.sep)) or Path(text).expanduser().is_dir():
        raise CliError(f"{option} {text} is a folder: give a file name in it, such as "
                       f"{Path(text).expanduser().resolve() / ('result' + suffix)}.")
    path = Path(text).expanduser()
    if add_suffix and path.suffix != suffix:
        path = path.with_name(path.name + suffix)
    path = path.resolve()
    _refuse_special_target(path, f"would write {path}, which", option, suffix)
    if path.is_dir():
        raise CliError(f"{option} would write {path}, which is a folder: give another file name.")
    if not path.parent.is_dir():
        raise CliError(f"cannot write {path}: the folder {path.parent} does not exist.")
    if not os.access(path.parent, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise CliError(f"cannot write {path}: permission denied.")
    return path


def output_folder(text, option):
    """The absolute folder an output option names, created now (before any work) if missing."""
    if not text.strip():
        raise CliError(f"{option} is empty: give a folder name such as reproduce-output.")
    _refuse_special_target(Path(text).expanduser(), text, option, None)
    path = Path(text).expanduser().resolve()
    _refuse_special_target(path, f"names {path}, which", option, None)
    if path.exists() and not path.is_dir():
        raise CliError(f"{option} {path} is a file, not a folder: give a folder name.")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise CliError(f"cannot create the folder {path}: {err.strerror}.") from None
    if not os.access(path, os.W_OK):
        raise CliError(f"cannot write into {path}: permission denied.")
    return path


def check_n_jobs(n_jobs):
    """--n-jobs: 1 to the core count, or -1 for all cores (its declaration in pcrp.run_spec.RUN_PARAMS)."""
    from .run_spec import RUN_PARAMS

    n_jobs = RUN_PARAMS["n_jobs"].check(n_jobs, "the run", CliError, name="--n-jobs")
    if n_jobs == 0:
        raise CliError("--n-jobs must be -1 (all cores) or a whole number from 1 to the cores (got 0).")
    return n_jobs


def check_parallel(args):
    """--n-jobs (see check_n_jobs); --scheduler: not empty when given."""
    check_n_jobs(args.n_jobs)
    if args.scheduler is not None and not args.scheduler.strip():
        raise CliError("--scheduler is empty: give the Dask scheduler's address, e.g. tcp://10.0.0.5:8786, "
                       "or leave it out to fit on this machine.")


def progress_bar(**kwargs):
    """A tqdm bar on stderr, drawn only when stderr is a terminal (tqdm's disable=None)."""
    from tqdm import tqdm

    return tqdm(file=sys.stderr, disable=None, **kwargs)


def cmd_run(args):
    from .run_spec import data_description, make_run_spec
    from .sampler import parse_init, start_clusters

    settings = run_settings(args)
    r_cv = getattr(args, "r", None) == "cv"
    if r_cv:
        if args.prior != "pcrp":
            raise CliError(f"--r cv chooses the pCRP's power r; it does not apply to --prior {args.prior}.")
        args.r = None  # chosen below, once the data are loaded
    prior, r_note = prior_from_args(args)
    init_values = [v.strip() for v in args.init.split(",")]
    parsed_inits = [parse_init(v) for v in init_values]
    out_path = output_file(args.out, "--out", ".npz")
    ds = load_data(args)
    for note in ds.notes:
        print(f"note: {note}", file=sys.stderr)
    for value, (_, k) in zip(init_values, parsed_inits):
        if k is not None and k > ds.n:
            print(f"note: --init {value} asks for {k:,} clusters but there are {ds.n:,} points: starting from "
                  f"at most {start_clusters(value, ds.n):,}.", file=sys.stderr)
    reference = None
    if r_cv:
        prior, r_note, reference = choose_r_for_run(args, ds, prior, settings)
    spec = make_run_spec(ds.X, prior=prior, niw=niw_overrides(args), init=init_values, standardize=ds.standardized,
                         data=data_description(ds, args.data), similarity=args.psm, **settings)
    sample_and_report(spec, ds, out_path, loss=args.loss, r_note=r_note, seed_given="seed" in settings,
                      reference=reference)


def choose_r_for_run(args, ds, prior, settings):
    """--r cv: (the pCRP with the r chosen for ``ds`` by pcrp.cv.choose_r, where r came from, the CRP reference
    (clusters, phrase) the check used)."""
    from .cv import choose_r
    from .model import make_prior

    print("choosing r for these data: cross validation, then a check on all of them ...", file=sys.stderr,
          flush=True)
    with progress_bar(unit="fit", desc="choosing r") as bar:
        def progress(stage, done, total):
            bar.set_description(stage, refresh=False)
            bar.total = total
            bar.update(done - bar.n)

        r, details = choose_r(ds.X, standardize=ds.standardized, niw=niw_overrides(args), alpha=prior.alpha,
                              seed=settings.get("seed", 0), n_jobs=settings.get("n_jobs", -1), progress=progress)
    check = details["check"]
    return make_prior("pcrp", alpha=prior.alpha, r=r), details["text"], (check["reference"], check["reference_from"])


def cmd_rerun(args):
    """Run again exactly what a result file's specification records, on the same data (checked by its
    fingerprint), and write a new result."""
    from .chains import ChainSet
    from .run_spec import RunSpec, data_fingerprint

    source = Path(args.result).expanduser()
    out_path = output_file(args.out, "--out", ".npz")
    config = ChainSet.load(source).config
    spec = RunSpec.from_dict(config)
    ds = load_recorded_data(config)
    if ds.X.shape != (spec.n_points, spec.dim):
        raise CliError(f"the data {config.get('data')!r} now have {ds.n:,} rows and {ds.dim} columns, but the run "
                       f"had {spec.n_points:,} and {spec.dim}: they are not the data of {source}.")
    recorded = config.get("data_sha256")
    if recorded and data_fingerprint(ds.X) != recorded:
        raise CliError(f"the data {config.get('data')!r} are not the numbers {source} was run on (their SHA-256 "
                       "differs): a rerun needs the same data.")
    print(f"rerunning {source} ({spec.prior.label()}, seed {spec.seed})")
    sample_and_report(spec, ds, out_path, loss=config.get("loss", "vi"), seed_given=True)


def load_recorded_data(config):
    """The data set a run's config describes (its ``data`` as typed and ``data_source``: a built-in data set with
    its options, or a CSV file with its columns), standardised as it was."""
    from . import data as data_mod

    source = config.get("data_source") or {}
    name = config.get("data")
    if not name:
        raise CliError("the result file does not record which data it was run on, so it cannot be rerun.")
    options = {k: source[k] for k in ("n", "seed", "digits", "embedding", "dims") if source.get(k) is not None}
    if source.get("kind") == "csv":
        options = {"columns": source.get("columns"), "label_column": source.get("label_column")}
    return data_mod.load(name, standardize_data=bool(config.get("standardize")), **options)


PROGRESS_LINE_SECONDS = 2.0  # without a terminal, a fixed budget's progress line at most this often


class _Progress:
    """Progress of a run on stderr: a tqdm bar on a terminal (the ESS and R-hat so far beside it); otherwise, as in
    a log file, CI or nohup, plain lines with the sweeps, ESS so far, worst R-hat and time left: one at every
    checkpoint the automatic budget judges, and for a fixed budget one per checkpoint at most every
    PROGRESS_LINE_SECONDS."""

    def __init__(self, spec, label):
        import time

        self.spec = spec
        self.last_line = time.monotonic()
        self.terminal = sys.stderr.isatty()
        self.done = [0] * spec.n_chains
        self.bar = progress_bar(total=spec.max_sweeps * spec.n_chains, unit="sweep", desc=label) \
            if self.terminal else None

    def advance(self, chain_index, sweeps_done):  # from the chains' threads; tqdm's update is thread-safe
        if self.bar is not None:
            self.bar.update(sweeps_done - self.done[chain_index])
        self.done[chain_index] = sweeps_done

    def checkpoint(self, progress):
        import time

        now = time.monotonic()
        if self.bar is None and not self.spec.budget.auto and now - self.last_line < PROGRESS_LINE_SECONDS:
            return
        self.last_line = now
        v = progress.verdict
        so_far = "burn-in" if v is None else (
            f"ESS K {v.ess['K']:.0f}, log joint {v.ess['log_joint']:.0f}; worst R-hat "
            + ("undefined" if v.worst_rhat != v.worst_rhat else f"{v.worst_rhat:.3f}"))
        if self.bar is not None:
            self.bar.set_postfix_str(so_far)
            return
        rate = progress.seconds / max(progress.sweeps, 1)
        left = rate * (progress.max_sweeps - progress.sweeps)
        when = (f"about {left:,.0f} s left" if not self.spec.budget.auto
                else f"at most {left:,.0f} s left (to the cap)")
        print(f"sweeps {progress.sweeps:,} of {'at most ' if self.spec.budget.auto else ''}{progress.max_sweeps:,} "
              f"per chain; {so_far}; {progress.seconds:,.1f} s so far, {when}", file=sys.stderr, flush=True)

    def close(self):
        if self.bar is not None:
            self.bar.close()


def sample_and_report(spec, ds, out_path, *, loss, r_note=None, seed_given=True, reference=None):
    """Print the run's header, sample with progress, summarise, write RESULT.npz and print the summary. A pCRP run is
    judged against the clusters a CRP fit keeps on the same data (pcrp.collapse): ``reference`` (clusters, phrase)
    when --r cv's check made one, else a CRP fit made here (pcrp.cv.crp_reference)."""
    import time

    import numpy as np

    from .chains import run_chains
    from .json_text import dumps
    from .modes import find_modes, modes_json
    from .partition import point_estimate, similarity_matrix
    from .compiling import compile_kernels
    from .summary import metric_summary, nmi_vi, preload_in_background

    for line in spec.describe():
        print(line)
    if not seed_given:
        print(f"  (the seed was drawn for this run; `pcrp rerun {out_path.name}` or --seed {spec.seed} repeats it)")
    if r_note:
        print(f"  where r came from: {r_note}")
    sys.stdout.flush()
    compile_kernels()
    preload_in_background()  # the summaries' imports load while the chains run
    progress = _Progress(spec, spec.prior.label())
    try:
        chains = run_chains(ds.X, spec, callback=progress.advance, on_block=progress.checkpoint)
    finally:
        progress.close()
    summaries_started = time.perf_counter()
    chains.config["loss"] = loss
    draws = chains.pooled_labels()
    psm = similarity_matrix(draws) if spec.similarity else None
    estimate = point_estimate(draws, loss, seed=spec.seed)
    diagnostics = chains.diagnostics()
    modes, modes_warning = find_modes(chains, loss=loss, seed=spec.seed, pooled=estimate, diagnostics=diagnostics)
    metrics = None
    if ds.labels is not None:
        metrics = metric_summary(ds.labels, chains.labels)
        metrics["point"] = nmi_vi(ds.labels, estimate.labels)
    verdict = None
    if spec.prior.name == "pcrp":
        from .collapse import judge_chains

        if reference is None:
            from .cv import crp_reference

            reference = crp_reference(ds.X, spec.niw, alpha=spec.prior.alpha, seed=spec.seed, n_jobs=spec.n_jobs,
                                      iters=min(spec.max_sweeps, 1000), split_merge=bool(spec.split_merge))
        verdict = (judge_chains(chains, reference[0], diagnostics, what="this pCRP fit"), reference)
    timing = {"sampling": chains.wall_seconds, "summaries": time.perf_counter() - summaries_started}
    out = {
        "point_labels": estimate.labels,
        "point_expected_loss": np.float64(estimate.expected_loss),
        "diagnostics": np.array(dumps(diagnostics)),
        "modes": np.array(modes_json(modes)),
    }
    if psm is not None:
        out["psm"] = psm
    if ds.labels is not None:
        out["true_labels"] = ds.labels
    try:
        chains.save(out_path, extra=out)
    except OSError as err:
        raise _cannot_write(out_path, err) from None
    _print_run(chains, diagnostics, estimate, out_path, modes=modes, modes_warning=modes_warning, metrics=metrics,
               timing=timing, verdict=verdict)


def _print_run(chains, diagnostics, estimate, out_path, modes=(), modes_warning="", metrics=None, timing=None,
               verdict=None):
    import numpy as np

    from .summary import rhat_warnings

    ms = chains.seconds_per_sweep * 1e3
    T, burn_in = int(chains.K.shape[1]), chains.burn_in
    print(f"stopped: {chains.stop.get('reason', '')}")
    print(f"{chains.n_chains} chain(s) x {T:,} sweeps (burn-in {burn_in:,}; labels kept every "
          f"{chains.config.get('thin')}: {chains.n_kept} draws each) at {ms.min():.3f}-{ms.max():.3f} ms/sweep")
    k_diag, lj_diag = diagnostics["K"], diagnostics["log_joint"]
    after = chains.K_after_burn_in
    for c in range(chains.n_chains):
        kc, lc = k_diag["per_chain"][c], lj_diag["per_chain"][c]
        print(f"  chain {c + 1} ({chains.inits[c]}): mean K {kc['mean']:.2f} (MCSE {kc['mcse']:.2f}), "
              f"max K {after[c].max()}, mean log joint {lc['mean']:.1f} (MCSE {lc['mcse']:.2f}); "
              f"ESS bulk/tail K {kc['ess_bulk']:.0f}/{kc['ess_tail']:.0f}, log joint "
              f"{lc['ess_bulk']:.0f}/{lc['ess_tail']:.0f}")
    print(f"  all chains: mean K {k_diag['mean']:.2f} (MCSE {k_diag['mcse']:.2f}), max K {after.max()}; "
          f"R-hat K {k_diag['rhat']:.3f}, log joint {lj_diag['rhat']:.3f}; ESS bulk/tail K "
          f"{k_diag['ess_bulk']:.0f}/{k_diag['ess_tail']:.0f}, log joint "
          f"{lj_diag['ess_bulk']:.0f}/{lj_diag['ess_tail']:.0f}")
    if verdict is not None:  # a pCRP fit against the CRP on the same data (pcrp.collapse)
        judged, (reference, source) = verdict
        print(f"  against the CRP: {judged.text}" if judged.flagged else
              f"  against the CRP: no collapse; every chain keeps the {reference} clusters that {source} keeps "
              "(clusters of at least 2% of the points in its point estimate), and the chains agree")
    sizes = ", ".join(str(n) for n in np.bincount(estimate.labels))
    unit = "bits" if estimate.loss == "vi" else "of pairs"
    used = (f" (search over {estimate.n_draws} evenly spaced of the {estimate.n_draws_total} draws)"
            if estimate.n_draws < estimate.n_draws_total else "")
    pooled = " pooled over modes" if len(modes) > 1 else ""
    print(f"  point estimate{pooled} ({estimate.loss.upper() if estimate.loss == 'vi' else 'Binder'} loss): "
          f"{estimate.n_clusters} clusters of sizes {sizes}; expected loss {estimate.expected_loss:.4f} {unit}{used}")
    if metrics is not None:
        (nmi_mean, nmi_se), (vi_mean, vi_se) = metrics["NMI"], metrics["VI"]
        nmi_point, vi_point = metrics["point"]
        print(f"  against the true labels: NMI {nmi_mean:.3f} (MCSE {nmi_se:.3f}), VI {vi_mean:.3f} bits "
              f"(MCSE {vi_se:.3f}) over the kept draws; point estimate NMI {nmi_point:.3f}, VI {vi_point:.3f} bits "
              "(NMI: geometric normalisation; VI: log base 2)")
    if len(modes) > 1:
        print(f"  modes ({len(modes)}; pooled figures above depend on the starts):")
        for m in modes:
            msizes = ", ".join(str(n) for n in np.bincount(m.point.labels))
            print(f"    chains {', '.join(str(c + 1) for c in m.chains)}: mean K {m.mean_K:.2f}, mean log joint "
                  f"{m.mean_log_joint:.1f} (MCSE {m.mcse_log_joint:.2f}); its point estimate "
                  f"{m.point.n_clusters} clusters of sizes {msizes}")
    if timing is not None:
        print(f"time: sampling {timing['sampling']:.1f} s, summaries {timing['summaries']:.1f} s")
    for line in rhat_warnings({"K": k_diag, "the log joint": lj_diag}):
        print(f"warning: {line}", file=sys.stderr)
    if modes_warning:
        print(f"warning: {modes_warning}", file=sys.stderr)
    print(f"wrote {out_path}")


def _cannot_write(path, err):
    """The CliError for an OSError while writing ``path`` (written whole or not at all: nothing changed there)."""
    import errno

    advice = {errno.ENOSPC: "; free some space, or write to another disk.",
              errno.EDQUOT: "; free some of your quota, or write to another disk.",
              errno.EFBIG: "; raise the file-size limit (ulimit -f), or write to another file system."}
    return CliError(f"cannot write {path}: {err.strerror or err}; any earlier file there is left as it was"
                    + advice.get(err.errno, "."))


def _write(path, writer):
    """Write the text file ``path`` through ``writer(f)``, whole or not at all (:func:`pcrp.files.atomic_write`)."""
    from .files import atomic_write

    try:
        atomic_write(path, writer, "w")
    except OSError as err:
        raise _cannot_write(path, err) from None


# Bytes cross validation holds per split (its train / test indices: 8 bytes per point) and per fit (the
# queued joblib task and its result), for the memory check before the splits are made.
CV_BYTES_PER_FIT = 1024


def cmd_cv(args):
    import csv

    from .json_text import dumps
    from .cv import check_cv_settings, cross_validate
    from .model import PowerCRP
    from .dtypes import check_memory
    from .sampler import check_seed

    check_seed(args.seed, "--seed")
    check_parallel(args)
    r_grid = _floats(args.r_grid, "--r-grid")
    for r in r_grid:
        PowerCRP(args.alpha, r)  # the model's bounds on alpha and r, before any fit
    out_csv = output_file(args.out_csv, "--out-csv", ".csv") if args.out_csv is not None else None
    out_json = output_file(args.out_json, "--out-json", ".json") if args.out_json is not None else None
    ds = load_data(args)
    niw_from_args(args, ds.X)  # checks the NIW options; the fits resolve the prior on their training parts
    check_cv_settings(ds.n, r_grid, args.folds, args.repeats, args.alpha)
    splits = args.folds * args.repeats
    check_memory(splits * (8 * ds.n + CV_BYTES_PER_FIT * len(r_grid)),
                 f"Cross validation with {splits:,} splits x {len(r_grid)} values of r", "Use fewer --repeats.")
    for note in ds.notes:
        print(f"note: {note}", file=sys.stderr)
    with progress_bar(unit="fit", desc="cross validation") as bar:
        def progress(done, total):
            bar.total = total
            bar.update(done - bar.n)

        result = cross_validate(  # NIW defaults and standardisation come from each training part
            ds.X, niw_overrides(args), standardize=ds.standardized, r_grid=r_grid, alpha=args.alpha,
            folds=args.folds, repeats=args.repeats, iters=args.iters, burn_in=args.burn_in, thin=args.thin,
            seed=args.seed, split_merge=not args.no_split_merge, n_jobs=args.n_jobs, scheduler=args.scheduler,
            progress=progress, rule=args.rule,
        )
    rows = result.table()
    print(f"{'r':>6s} {'loss':>10s} {'(SE)':>8s} {'log pred':>10s} {'(SE)':>8s} {'mean K':>7s}")
    for row in rows:
        mark = "  <- proposed" if row["r"] == result.chosen_r else ""
        print(f"{row['r']:6.2f} {row['loss']:10.4f} {row['loss_se']:8.4f} {row['log_pred']:10.4f} "
              f"{row['log_pred_se']:8.4f} {row['mean_k']:7.2f}{mark}")
    print(f"cross validation proposes r = {result.chosen_r:g}: {result.blow_up.reason}")
    chosen, check = result.chosen_r, None
    if not args.no_chain_check:
        from .cv import check_with_chains

        print("checking it with 4 chains on all the data ...", file=sys.stderr, flush=True)
        chosen, check = check_with_chains(ds.X, result.chosen_r, r_grid, niw_from_args(args, ds.X),
                                          alpha=args.alpha, seed=args.seed, n_jobs=args.n_jobs, iters=args.iters,
                                          split_merge=not args.no_split_merge)
        for t in check["tried"]:
            print(f"  r = {t['r']:g}: mean K per chain " + ", ".join(f"{k:.2f}" for k in t["mean_K_per_chain"])
                  + (f" ({t['verdict']})" if t["verdict"] else " (keeps the clusters)"))
        print(check["text"])
    print(f"proposed r = {chosen:g}")
    if out_csv:
        def write_csv(f):
            writer = csv.DictWriter(f, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
        _write(out_csv, write_csv)
        print(f"wrote {out_csv}")
    if out_json:
        payload = {"chosen_r": chosen, "cv_r": result.chosen_r, "chain_check": check,
                   "blow_up_index": result.blow_up.index,
                   "reason": result.blow_up.reason, "curve": rows,
                   "settings": {**result.settings, "data": args.data, "data_source": ds.source}}
        _write(out_json, lambda f: f.write(dumps(payload, indent=2)))
        print(f"wrote {out_json}")


def cmd_reproduce(args, argv):
    import time
    from dataclasses import replace

    from .reproduce import EXPERIMENTS, FULL, QUICK, run_over_seeds, seed_rows, write_report
    from .sampler import check_seed

    keys = [k.strip() for k in args.experiments.split(",") if k.strip()]
    unknown = [k for k in keys if k not in EXPERIMENTS]
    if unknown or not keys:
        raise CliError(f"unknown experiment {', '.join(unknown) or '(none given)'}; choose from {', '.join(EXPERIMENTS)}")
    check_seed(args.seed, "--seed")
    if args.data_sets is not None and args.data_sets < 1:
        raise CliError(f"--data-sets must be a whole number >= 1 (got {args.data_sets}).")
    check_parallel(args)
    out_dir = output_folder(args.out, "--out")
    protocol = replace(QUICK if args.quick else FULL, split_merge=not args.no_split_merge)
    results = []
    command = "pcrp " + " ".join(argv if argv is not None else sys.argv[1:])
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
        means = [f"{row['method']} {row['K']:.2f}" for row in seed_rows(res) if "K" in row and row["method"] != "Ground truth"]
        print(f"  {len(res.runs)} data set(s); mean K: " + ", ".join(means), file=sys.stderr)
        results.append(res)
        # the report is rewritten after every experiment, so stopping a long run keeps what is done
        pending = [EXPERIMENTS[k].title for k in keys[len(results):]]
        try:
            path = write_report(results, out_dir, command=command, seconds=time.perf_counter() - started,
                                pending=pending)
        except OSError as err:
            raise _cannot_write(Path(err.filename) if err.filename else out_dir, err) from None
    print(path.read_text())
    print(f"wrote {path} and the figures in {path.parent / 'figures'}")


def _note(message, category, filename, lineno, file=None, line=None):
    """Show a Python warning as one 'note:' line on stderr (no file name, line number or source)."""
    print(f"note: {message}", file=sys.stderr)


def _add_path_parser(sub):
    p = sub.add_parser(
        "path",
        help="the exact merge path over r: at which power the pCRP merges each pair of clusters",
        description=(
            "For a fixed partition the pCRP log joint is linear in r, so each pair of clusters has a critical "
            "power r* = -L/G above which the pCRP prefers it merged (L: log-likelihood gain of the merge minus "
            "log alpha; G = lgamma(nA + nB) - lgamma(nA) - lgamma(nB)). Starting from the point estimate of a "
            "CRP run (or --from-labels), merge the pair with the smallest r* until one cluster is left, print "
            "each merge and write them as JSON: {partition, merges: [{r, clusters, sizes, L, G}], config}. "
            "Starting clusters are numbered 0..K-1 (by size, largest first, for a point estimate; by label "
            "value for --from-labels) and merge j creates cluster K + j. r is null where r* is infinite (two "
            "single points: L > 0 merges them at every r, L < 0 never). The path is the pCRP's alone: it "
            "needs a prior whose log joint is linear in one parameter, which the other priors of pcrp run "
            "are not. r* compares single partitions, not posterior mass: a merge at r* can still hold a "
            "minority of the posterior at that r."
        ),
    )
    _add_data_options(p)
    import inspect

    from .path import crp_start

    start = {name: param.default for name, param in inspect.signature(crp_start).parameters.items()}
    p.add_argument("--alpha", type=float, default=start["alpha"],
                   help="concentration: new-table weight (default %(default)s)")
    _add_niw_options(p)
    p.add_argument("--from-labels", metavar="FILE",
                   help="start from these labels instead of a CRP run: a text file of N integers (one per row, "
                        "or separated by commas / spaces) or a RESULT.npz of pcrp run (its point_labels)")
    p.add_argument("--chains", type=_whole, default=start["n_chains"],
                   help="CRP chains for the starting point estimate (default %(default)s, from different starts)")
    p.add_argument("--iters", type=_whole, default=start["iters"], help="sweeps per CRP chain (default %(default)s)")
    p.add_argument("--burn-in", type=_whole, default=start["burn_in"],
                   help="burn-in per CRP chain (default %(default)s)")
    p.add_argument("--thin", type=_whole, default=start["thin"], help="thinning of the CRP draws (default %(default)s)")
    p.add_argument("--seed", type=_whole, default=start["seed"], help="seed of the CRP chains (default %(default)s)")
    p.add_argument("--no-split-merge", action="store_true", help="plain Gibbs in the CRP chains")
    p.add_argument("--with-run", metavar="RESULT.npz",
                   help="a pcrp run result on the same data: each merge is shown with the sampler's P(those "
                        "clusters merged) at the run's r (JSON: sampler_p_merged)")
    p.add_argument("--out", required=True, help="where to write path.json")


def cmd_path(args):
    from .json_text import dumps
    from .path import crp_start, merge_path, merge_probabilities, path_table, read_labels

    out = output_file(args.out, "--out", ".json", add_suffix=False)
    ds = load_data(args)
    niw = niw_from_args(args, ds.X)
    for note in ds.notes:
        print(f"note: {note}", file=sys.stderr)
    data_config = {"data": args.data, "standardize": ds.standardized, "columns": ds.columns, "n": ds.n,
                   "d": ds.dim, "data_source": ds.source}
    if args.from_labels:
        labels = read_labels(args.from_labels, ds.n)
        start_config = {"start": f"labels from {args.from_labels}"}
    else:
        start = crp_start(ds.X, niw, alpha=args.alpha, n_chains=args.chains, iters=args.iters,
                          burn_in=args.burn_in, thin=args.thin, seed=args.seed,
                          split_merge=not args.no_split_merge)
        labels, start_config = start.labels, start.config
    path = merge_path(ds.X, labels, niw, alpha=args.alpha, config={**data_config, **start_config})
    sampler = None
    if args.with_run:
        from .chains import ChainSet

        sampler = merge_probabilities(path, ChainSet.load(args.with_run))
    _write(out, lambda f: f.write(dumps(path.as_dict(sampler=sampler))))
    print(path_table(path, sampler))
    print(f"wrote {out}")


class _CtrlC:
    """Ctrl-C that always ends the command, as a KeyboardInterrupt that :func:`main` catches.

    Python raises KeyboardInterrupt in whatever Python code runs at that moment, and some of that code loses it:
    a weakref callback or ``__del__`` (frequent while modules are imported) prints "Exception ignored ..." with a
    traceback and carries on; an extension module whose import it interrupts may turn it into an ImportError that
    a library catches. So while :func:`main` runs, a Ctrl-C is remembered, a KeyboardInterrupt that Python drops is
    not printed, and a watchdog thread sends SIGINT again every RESEND seconds until main has caught one. A
    KeyboardInterrupt already on its way up is not raised a second time. Outside the main thread, or when SIGINT
    is ignored (a background job) or handled by someone else, nothing changes.
    """

    RESEND = 0.25

    def __init__(self):
        import signal
        import threading

        self._lock = threading.Lock()
        self._done = threading.Event()
        self._watchdog = None
        self._previous_hook = sys.unraisablehook
        self._previous_handler = signal.getsignal(signal.SIGINT)
        self._installed = (self._previous_handler is signal.default_int_handler
                           and threading.current_thread() is threading.main_thread())
        if self._installed:
            signal.signal(signal.SIGINT, self._on_sigint)
            sys.unraisablehook = self._unraisable

    def _on_sigint(self, signum, frame):
        import threading

        if self._done.is_set() or _caused_by_interrupt(sys.exc_info()[1]):
            return  # caught already, or on its way up (perhaps as the ImportError it became)
        if self._watchdog is None:
            self._watchdog = threading.Thread(target=self._resend, name="pcrp-ctrl-c", daemon=True)
            self._watchdog.start()
        raise KeyboardInterrupt

    def _resend(self):
        import _thread

        while not self._done.wait(self.RESEND):
            with self._lock:
                if not self._done.is_set():
                    _thread.interrupt_main()

    def _unraisable(self, unraisable):
        if not (isinstance(unraisable.exc_type, type) and issubclass(unraisable.exc_type, KeyboardInterrupt)):
            self._previous_hook(unraisable)

    def caught(self):
        """main has caught the KeyboardInterrupt: stop sending it."""
        with self._lock:
            self._done.set()

    def restore(self):
        import signal

        self.caught()
        if self._installed:
            signal.signal(signal.SIGINT, self._previous_handler)
            sys.unraisablehook = self._previous_hook


def _caused_by_interrupt(err):
    """Whether a KeyboardInterrupt led to ``err``: an extension module whose import Ctrl-C interrupted reports an
    ImportError (numba: "numba._devicearray failed to import") with the KeyboardInterrupt as its context."""
    seen = set()
    while err is not None and id(err) not in seen:
        if isinstance(err, KeyboardInterrupt):
            return True
        seen.add(id(err))
        err = err.__cause__ or err.__context__
    return False


def main(argv=None):
    ctrl_c = _CtrlC()
    try:  # Ctrl-C anywhere, the library's imports included: one line, status 130
        from .cv import CVError
        from .data import DataError
        from .model import ModelError
        from .path import PathError
        from .sampler import SamplerError

        with warnings.catch_warnings():
            warnings.showwarning = _note
            try:
                args = build_parser().parse_args(argv)
                if args.command == "run":
                    cmd_run(args)
                elif args.command == "rerun":
                    cmd_rerun(args)
                elif args.command == "cv":
                    cmd_cv(args)
                elif args.command == "reproduce":
                    cmd_reproduce(args, argv)
                elif args.command == "path":
                    cmd_path(args)
                elif args.command == "compare":
                    cmd_compare(args, argv)
            except (CliError, CVError, ModelError, PathError, SamplerError, DataError) as err:
                print(f"pcrp: error: {err}", file=sys.stderr)
                return 2
            except MemoryError:
                print("pcrp: error: out of memory: use fewer points, sweeps or kept draws (a larger --thin).",
                      file=sys.stderr)
                return 2
    except KeyboardInterrupt:
        ctrl_c.caught()
        print("pcrp: interrupted.", file=sys.stderr)
        return 130
    except Exception as err:
        if not _caused_by_interrupt(err):
            raise
        ctrl_c.caught()
        print("pcrp: interrupted.", file=sys.stderr)
        return 130
    finally:
        ctrl_c.restore()
    return 0


if __name__ == "__main__":
    sys.exit(main())

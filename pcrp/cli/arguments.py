"""The command line's arguments: flags made from declarations, and the words and numbers they take.

Every flag's default, bounds and help come from a declaration: a run's settings from
:data:`pcrp.runs.run_spec.RUN_PARAMS`, each prior's parameters from the registry (:data:`pcrp.model.PRIORS`), the NIW's
from :data:`pcrp.model.NIW_PARAMS`, the data options' defaults from :func:`pcrp.data.load`'s signature (:func:`data_defaults`), and the other
subcommands' from their modules. Nothing here types a default or a bound of its own.
"""

import argparse

from ..basics.errors import SettingError


class CliError(SettingError):
    """A user error: printed as one line, exit status 2."""





def floats(text, name):
    try:
        return [float(v) for v in text.split(",")]
    except ValueError:
        raise CliError(f"{name} must be comma-separated numbers (got {text!r}).") from None


def whole(text):
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


def wholes(text, name):
    try:
        return [whole(v.strip()) for v in text.split(",")]
    except argparse.ArgumentTypeError:
        raise CliError(f"{name} must be comma-separated whole numbers (got {text!r}).") from None


def names(text, allowed, option):
    """The comma-separated keys of ``text``, each one of ``allowed``; CliError naming the unknown ones."""
    keys = [k.strip() for k in text.split(",") if k.strip()]
    unknown = [k for k in keys if k not in allowed]
    if unknown or not keys:
        raise CliError(f"{option}: unknown {', '.join(unknown) or '(none given)'}; choose from {', '.join(allowed)}")
    return keys


def help_text(param, default=None):
    """A flag's help from its declaration: meaning, label, bounds, default (``default``: words for a default the
    owner resolves, e.g. "half of --iters"). Percent signs are escaped for argparse."""
    shown = default or ("none" if param.default is None else f"{param.default:g}")
    constraint = f", {param.constraint}" if param.constraint else ""
    return f"{param.help} {param.label} in {param.interval()}{constraint} (default {shown})".replace("%", "%%")


def add_niw_options(p, several_types=False):
    """--m0 and one flag per declared NIW parameter (pcrp.model.NIW_PARAMS), each defaulting to None: the
    data-driven default the declaration states; --covariance-type, which with ``several_types`` (`pcrp cv`) takes a
    comma-separated list of types to compare."""
    from ..model import NIW_PARAMS

    p.add_argument("--m0", help="prior mean of cluster means, comma-separated, one per column (default the column "
                                "means)")
    for param in NIW_PARAMS.values():
        p.add_argument(param.flag, dest=param.name, type=float, help=help_text(param, "from the data"))
    compare = (" Several, comma-separated (full,diag,spherical), are each cross-validated for their own r and "
               "compared by held-out log predictive, and the command says which the data support."
               if several_types else "")
    p.add_argument("--covariance-type", dest="covariance_type",
                   metavar="{full,diag,spherical}" + ("[,...]" if several_types else ""),
                   help="each cluster's covariance, as scikit-learn's covariance_type: full (a d x d matrix, "
                        "Normal-Inverse-Wishart), diag (one variance per column) or spherical (one variance); "
                        "\"tied\" is not offered (default full)." + compare)


def niw_overrides(args):
    """The NIW settings given on the command line, {name: value}; the rest come from the data."""
    from ..model import NIW_PARAMS

    given = {"m0": floats(args.m0, "--m0") if args.m0 is not None else None,
             **{name: getattr(args, name) for name in NIW_PARAMS},
             "covariance_type": getattr(args, "covariance_type", None)}
    return {k: v for k, v in given.items() if v is not None}


_GIVEN = object()


def niw_from_args(args, X, covariance_type=_GIVEN):
    """The NIW the NIW options describe on X; ``covariance_type``: the type to use instead of --covariance-type's
    (`pcrp cv` compares several; None: the default, full)."""
    from ..model import resolve_niw

    overrides = niw_overrides(args)
    if covariance_type is not _GIVEN:
        overrides.pop("covariance_type", None)
        if covariance_type is not None:
            overrides["covariance_type"] = covariance_type
    return resolve_niw(X, **overrides)


def add_parallel_options(p):
    from ..runs.run_spec import RUN_PARAMS

    param = RUN_PARAMS["n_jobs"]
    p.add_argument("--n-jobs", type=whole, default=param.default,
                   help=f"parallel fits on this machine: {help_text(param)}")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="run the fits on an existing Dask cluster, e.g. tcp://10.0.0.5:8786 (needs dask[distributed])")


def check_n_jobs(n_jobs):
    """--n-jobs: 1 to the core count, or -1 for all cores (its declaration in pcrp.runs.run_spec.RUN_PARAMS)."""
    from ..runs.run_spec import RUN_PARAMS

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


def flag(name):
    return "--" + name.replace("_", "-")  # the flag of a prior parameter (pcrp.basics.params.Param.flag)


def r_value(text):
    """--r: a number, or 'cv' (choose r for the data)."""
    if text.strip().lower() == "cv":
        return "cv"
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"give a number or cv (got {text!r})") from None


def add_prior_options(p):
    """--prior and one flag per parameter name in the registry (pcrp.model.PRIORS), each saying which priors
    use it, with bounds and default; a flag defaults to None so that one the chosen prior lacks is refused. The
    parameter a prior tunes (its ``tuned``: the pCRP's r) also takes ``cv``: choose it for the data."""
    from ..model import DEFAULT_PRIOR, PRIORS

    p.add_argument("--prior", choices=list(PRIORS), default=DEFAULT_PRIOR,
                   help="seating prior (default %(default)s): "
                        + "; ".join(f"{s.name} = {s.label}" for s in PRIORS.values()))
    tuned = {s.tuned for s in PRIORS.values() if s.tuned}
    users = {}
    for spec in PRIORS.values():
        for param in spec.params:
            users.setdefault(param.name, []).append((spec, param))
    for name, uses in users.items():
        text = "; ".join(f"{spec.name}: {param.label} in {param.interval()}"
                         f"{', ' + param.constraint if param.constraint else ''}, default {param.default:g}"
                         for spec, param in uses)
        if name in tuned:
            p.add_argument(flag(name), dest=name, type=r_value, metavar=f"{name.upper()}|cv",
                           help=f"{text}; or cv: choose {name} for these data by cross validation, then check it "
                                "with chains on all of them against a CRP fit (a collapse steps it down; one grid "
                                "step of margin), as `pcrp cv` does")
            continue
        p.add_argument(flag(name), dest=name, type=float, metavar=name[0].upper(),
                       help=f"{text}{' (a whole number)' if uses[0][1].integer else ''}")


def prior_from_args(args):
    """The prior that --prior and its parameter flags describe (registry defaults for flags not given), and a
    note on where its tuned parameter came from (None for priors without one, or one given on the command line).

    The tuned parameter (the pCRP's r), when not given, is the cross-validated value shipped for a built-in data
    set at the data options and --covariance-type given (:func:`pcrp.analyses.cv.builtin_r`), else the registry
    default, with a sentence saying which (and, where no r was cross-validated for those settings, that none was). A
    flag that the chosen prior does not use is a CliError naming the prior's own flags."""
    from ..model import PRIORS, make_prior

    spec = PRIORS[args.prior]
    own = {param.name for param in spec.params}
    every = {param.name for s in PRIORS.values() for param in s.params}
    given = {name: getattr(args, name) for name in sorted(every) if getattr(args, name, None) is not None}
    stray = [name for name in given if name not in own]
    if stray:
        have = ", ".join(f"{flag(param.name)} ({param.label}, default {param.default:g})" for param in spec.params)
        flags = " and ".join(flag(name) for name in stray)
        raise CliError(f"{flags} {'does' if len(stray) == 1 else 'do'} not apply to --prior {spec.name} "
                       f"({spec.label}); its parameters are {have}. Leave {flags} out.")
    given = {name: spec.param(name).check(value, f"the {spec.label}", CliError, name=flag(name))
             for name, value in given.items()}
    note = None
    if spec.tuned and spec.tuned not in given:
        from ..analyses.cv import builtin_r

        # the r shipped for these data settings and this covariance type, or a sentence saying none was
        given[spec.tuned], note = builtin_r(args.data, getattr(args, "covariance_type", None), data_settings(args))
    return make_prior(spec.name, **given), note


# The data sets each data option applies to; giving one for another data set is refused, not ignored.
DATA_OPTIONS = {
    "--n": ("n", ("sim1", "sim2", "demo", "mnist")),
    "--data-seed": ("data_seed", ("sim1", "sim2", "demo", "mnist")),
    "--digits": ("digits", ("mnist",)),
    "--embedding": ("embedding", ("mnist",)),
    "--dims": ("dims", ("mnist",)),
}


def add_declared_options(p, declarations, names, preset=None, defaults_words=None):
    """One flag per parameter in ``names`` of ``declarations`` (a :class:`pcrp.basics.params.Declarations`): its flag, a
    float or whole-number type, its default (from ``preset`` when it holds the name, else the declaration's) and its
    help (meaning, bounds, default; ``defaults_words`` {name: words} for a default the owner resolves). The value is
    checked against the declaration by the owner when the command runs."""
    preset = preset or {}
    for name in names:
        param = declarations[name]
        default = preset.get(name, param.default)
        words = (defaults_words or {}).get(name) or (None if default is None else f"{default:g}")
        p.add_argument(param.flag, type=whole if param.integer else float, default=default,
                       help=help_text(param, words))


def defaults_of(function):
    """{argument: default} of ``function``'s signature: the defaults a module states for the flags that reach it."""
    import inspect

    return {name: p.default for name, p in inspect.signature(function).parameters.items()
            if p.default is not inspect.Parameter.empty}


def data_defaults():
    """The defaults of the built-in data sets' options, as :func:`pcrp.data.load` states them."""
    from .. import data as data_mod

    return defaults_of(data_mod.load)


def add_data_options(p):
    from .. import data as data_mod

    default = data_defaults()
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
    p.add_argument("--n", type=whole, help=f"points to draw for sim1/sim2/demo (default {data_mod.SIMULATION_N}) or "
                                           f"mnist (default {data_mod.MNIST_N})")
    p.add_argument("--data-seed", type=whole,
                   help=f"seed for simulated data / the MNIST subset, >= 0 (default {default['seed']})")
    p.add_argument("--digits", help=f"MNIST digits (default {','.join(map(str, default['digits']))} as in the paper)")
    p.add_argument("--embedding", choices=data_mod.MNIST_EMBEDDINGS,
                   help=f"MNIST embedding (default {default['embedding']}, as in the paper)")
    p.add_argument("--dims", type=whole,
                   help=f"MNIST embedding dimensions, 1-{data_mod.MAX_CLUSTER_COLUMNS} (default {default['dims']})")


def data_settings(args):
    """The data options given on the command line as :func:`pcrp.data.load` takes them ({name: value}; those not
    given are left out, at load's defaults), each checked; CliError for an option the data set does not take."""
    from ..sampling.starts import check_seed
    for option, (attr, users) in DATA_OPTIONS.items():
        if getattr(args, attr) is not None and args.data not in users:
            raise CliError(f"{option} applies only to the built-in data set{'s' if len(users) > 1 else ''} "
                           f"{', '.join(users)}, not to {args.data}; leave it out.")
    options = {"seed": None if args.data_seed is None else check_seed(args.data_seed, "--data-seed"),
               "digits": None if args.digits is None else wholes(args.digits, "--digits"),
               "embedding": args.embedding, "dims": args.dims, "n": args.n, "standardize_data": args.standardize}
    if args.columns is not None:
        options["columns"] = [c.strip() for c in args.columns.split(",")]
        if not all(options["columns"]):
            raise CliError(f"--columns has an empty name (got {args.columns!r}): give comma-separated column names, "
                           "or leave it out to cluster every numeric column.")
    return {name: value for name, value in options.items() if value is not None}


def load_data(args):
    """The data set the data options name; options not given are left to :func:`pcrp.data.load`'s defaults."""
    from .. import data as data_mod

    return data_mod.load(args.data, label_column=args.label_column, **data_settings(args))


def print_notes(notes):
    import sys

    for note in notes:
        print(f"note: {note}", file=sys.stderr)


# The run settings `pcrp run` takes, each a flag made from its declaration (pcrp.runs.run_spec.RUN_PARAMS).
RUN_FLAGS = ("n_chains", "iters", "burn_in", "thin", "max_iters", "seed", "n_jobs", "split_merge")
# Words for the defaults a run resolves itself (the declaration's default is None).
RESOLVED_DEFAULTS = {"iters": "none: the automatic budget", "burn_in": "half of --iters",
                     "seed": "a fresh seed, printed and recorded"}


def add_run_options(p, names=RUN_FLAGS):
    """One flag per run setting in ``names``, made from its declaration (bounds, default and meaning in the help);
    a flag defaults to None, which the run specification resolves to the declared default. ``--budget auto`` (the
    default) and ``--no-split-merge`` are the two words that are not numbers."""
    from ..runs.budget import AUTO_ESS
    from ..runs.run_spec import RUN_PARAMS
    from ..summaries.summary import RHAT_THRESHOLD

    for name in names:
        param = RUN_PARAMS[name]
        p.add_argument(param.flag, dest=name, type=whole, metavar=name.split("_")[-1].upper(),
                       help=help_text(param, RESOLVED_DEFAULTS.get(name)))
    if "iters" in names:
        p.add_argument("--budget", choices=("auto",),
                       help=f"auto (the default unless --iters is given): run until split R-hat <= {RHAT_THRESHOLD:g} and bulk ESS "
                            f">= {AUTO_ESS:g} for K and the log joint with one mode, or --max-iters sweeps "
                            f"(default {RUN_PARAMS['max_iters'].default:,}), and say which stopped it")
    if "split_merge" in names:
        p.add_argument("--no-split-merge", action="store_true",
                       help="plain Gibbs as in the paper (same as --split-merge 0)")


def run_settings(args, names=RUN_FLAGS):
    """{setting: value} of the run flags given on the command line, each checked against its declaration and
    named as typed in the message; the others are left to the run specification's defaults."""
    from ..runs.run_spec import RUN_PARAMS

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
    if "n_jobs" in out:
        out["n_jobs"] = check_n_jobs(out["n_jobs"])
    return out

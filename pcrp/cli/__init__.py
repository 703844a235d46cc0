"""The ``pcrp`` command line.

    pcrp run DATA [--prior {crp,pcrp,py,mfm,sfm}] [--alpha A] [--r R|cv] [--sigma S] [--gamma G] [--lam L]
             [--k-max K] [--budget auto | --iters T [--burn-in B]] [--max-iters T] [--thin S] [--seed SEED]
             [--chains C] [--init START[,START..]] [--loss vi|binder] [--n-jobs J] [--split-merge M |
             --no-split-merge] [--m0 V1,V2,..] [--kappa0 X] [--nu0 X] [--s0 X] [--covariance-type full|diag|spherical]
             [--standardize | --no-standardize]
             [--columns c1,c2] --out RESULT.npz
    pcrp rerun RESULT.npz --out NEW.npz
    pcrp cv DATA [--r-grid 1.01,1.05,..] [--folds F] [--repeats R] [--iters T] [--burn-in B] [--thin S]
             [--alpha A] [--seed SEED] [--n-jobs J] [--scheduler ADDRESS] [--out-csv F] [--out-json F]
    pcrp reproduce [--quick] [--experiments KEY,..] [--out DIR] [--seed SEED] [--n-jobs J] [--scheduler ADDRESS]
    pcrp path DATA [data, --alpha and NIW options as for run] [--from-labels FILE] [--chains C] [--iters T]
             [--burn-in B] [--thin S] [--seed SEED] --out path.json
    pcrp compare [--data-sets KEY,..] [--methods M,..] [--seeds N] [--seed S] [--out DIR] [--n-jobs J]
             [--scheduler ADDRESS]
    pcrp compile

One module per subcommand (``pcrp.cli.run``, ``.rerun``, ``.cv``, ``.path``, ``.reproduce``, ``.compare``,
``.compile``), each
with ``add_parser(sub)`` and ``command(args, argv)``; the flags made from declarations are in
:mod:`pcrp.cli.arguments`, output paths in :mod:`pcrp.cli.output`, progress in :mod:`pcrp.cli.progress`.

Errors exit with status 2 and one line on stderr, never a traceback; Ctrl-C at any point prints
"pcrp: interrupted." and exits with status 130 (:mod:`pcrp.cli.interrupt`). Every file is written whole or not at
all (:func:`pcrp.basics.files.atomic_write`): an earlier file survives a full disk.

Only the standard library is imported with this module, and only the chosen subcommand's module and flags are
built: ``pcrp --help`` imports no numpy, and the library (numpy, numba, scipy, ...: seconds) loads inside the
subcommand, so that Ctrl-C during start-up is one line too.
"""

import argparse
import gc
import importlib
import sys
import warnings

from .interrupt import CtrlC, caused_by_interrupt

# The subcommands in the order --help lists them, each a module of pcrp.cli: name -> its one line of help.
COMMANDS = {
    "run": "run the collapsed Gibbs sampler and save the chain",
    "rerun": "run again exactly what a result file records",
    "cv": "cross-validate the pCRP power r (paper Sec. 2.3)",
    "reproduce": "run the paper's experiments and write tables and figures",
    "path": "the exact merge path over r: at which power the pCRP merges each pair of clusters",
    "compare": "the pCRP against the CRP, Pitman-Yor, MFM, the sparse finite mixture and scikit-learn's BGM",
    "compile": "compile the sampler's kernels now (once per installation; the first run does it otherwise)",
}
# The user errors printed as one line with status 2, by module and class name: a module not yet imported cannot
# have raised its error, so none is imported to catch it.
USER_ERRORS = (("pcrp.cli.arguments", "CliError"), ("pcrp.basics.errors", "SettingError"), ("pcrp.analyses.cv", "CVError"),
               ("pcrp.analyses.path", "PathError"), ("pcrp.data", "DataError"))


def _module(name):
    return importlib.import_module(f"{__name__}.{name}")


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse's own errors: one line, status 2
        from .arguments import CliError

        raise CliError(message)


def build_parser(command=None):
    """The parser of every subcommand (``command`` None), or of ``command`` only (a name; "" for none): the others
    are listed with their one line of help and no flags, so that ``pcrp --help`` and ``pcrp run ...`` build (and
    import) no more than they use."""
    parser = _Parser(prog="pcrp", description="Powered Chinese restaurant process mixtures.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name, help_line in COMMANDS.items():
        if command is None or name == command:
            _module(name).add_parser(sub, help_line)
        else:
            sub.add_parser(name, help=help_line)
    return parser


def _chosen_command(argv):
    """The subcommand named in ``argv`` (its first word that is not a flag), or "" when it names none."""
    for word in argv:
        if not word.startswith("-"):
            return word if word in COMMANDS else ""
    return ""


def _user_errors():
    """The user-error classes of the modules imported so far."""
    return tuple(getattr(sys.modules[module], name) for module, name in USER_ERRORS if module in sys.modules)


def _note(message, category, filename, lineno, file=None, line=None):
    """Show a Python warning as one 'note:' line on stderr (no file name, line number or source)."""
    print(f"note: {message}", file=sys.stderr)


def main(argv=None):
    ctrl_c = CtrlC()
    try:  # Ctrl-C anywhere, the library's imports included: one line, status 130
        with warnings.catch_warnings():
            warnings.showwarning = _note
            try:
                words = sys.argv[1:] if argv is None else list(argv)
                args = build_parser(_chosen_command(words)).parse_args(words)
                _module(args.command).command(args, argv)
            except MemoryError:
                print("pcrp: error: out of memory: use fewer points, sweeps or kept draws (a larger --thin).",
                      file=sys.stderr)
                return 2
            except Exception as err:
                if not isinstance(err, _user_errors()):
                    raise
                print(f"pcrp: error: {err}", file=sys.stderr)
                return 2
    except KeyboardInterrupt:
        ctrl_c.caught()
        print("pcrp: interrupted.", file=sys.stderr)
        return 130
    except Exception as err:
        if not caused_by_interrupt(err):
            raise
        ctrl_c.caught()
        print("pcrp: interrupted.", file=sys.stderr)
        return 130
    finally:
        ctrl_c.restore()
    return 0


def console():
    """The ``pcrp`` command (the console script, ``python -m pcrp.cli``): :func:`main`'s exit status.

    Before the interpreter's teardown, the objects alive are frozen (``gc.freeze``): its last garbage collection
    would walk every object the imports and numba made, 0.15-0.2 s of a short run (bench/start_up.py), to free
    memory that the process gives back as it exits anyway."""
    status = main()
    gc.freeze()
    return status


def __getattr__(name):
    """The names tests and scripts import from ``pcrp.cli`` (RUN_FLAGS, run_settings, CliError), loaded on first
    use from :mod:`pcrp.cli.arguments`."""
    if name in ("RUN_FLAGS", "run_settings", "CliError"):
        return getattr(_module("arguments"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

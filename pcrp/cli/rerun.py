"""``pcrp rerun``: run again exactly what a result file of ``pcrp run`` records, on the same data."""

from pathlib import Path

from .arguments import CliError
from .output import output_file



def add_parser(sub, help_line):
    p = sub.add_parser(
        "rerun", help=help_line,
        description=("Rebuild the run specification a RESULT.npz of `pcrp run` records (prior, NIW, chains and "
                     "starts, budget, thinning, seed, moves), load the same data (a built-in data set with its "
                     "options, or the CSV file at the recorded path, checked by its SHA-256) and run it again: "
                     "the draws are identical."),
    )
    p.add_argument("result", metavar="RESULT.npz", help="a result file of pcrp run")
    p.add_argument("--out", required=True, help="where to write the new RESULT.npz")


def command(args, argv=None):
    """Run again exactly what a result file's specification records, on the same data (checked by its
    fingerprint), and write a new result."""
    from ..runs.chains import ChainSet
    from ..summaries.partition import DEFAULT_LOSS
    from ..runs.run_spec import RunSpec, data_fingerprint
    from .run import sample_and_report

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
    sample_and_report(spec, ds, out_path, loss=config.get("loss", DEFAULT_LOSS), seed_given=True)


def load_recorded_data(config):
    """The data set a run's config describes (its ``data`` as typed and ``data_source``: a built-in data set with
    its options, or a CSV file with its columns), standardised as it was."""
    from .. import data as data_mod

    source = config.get("data_source") or {}
    name = config.get("data")
    if not name:
        raise CliError("the result file does not record which data it was run on, so it cannot be rerun.")
    options = {k: source[k] for k in ("n", "seed", "digits", "embedding", "dims") if source.get(k) is not None}
    if source.get("kind") == "csv":
        options = {"columns": source.get("columns"), "label_column": source.get("label_column")}
    return data_mod.load(name, standardize_data=bool(config.get("standardize")), **options)

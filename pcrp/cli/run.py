"""``pcrp run``: sample a data set under a seating prior, print the run's summary and save RESULT.npz."""

import sys

from .arguments import (CliError, add_data_options, add_niw_options, add_prior_options, add_run_options,
                        defaults_of, load_data, niw_overrides, print_notes, prior_from_args, run_settings)
from .output import cannot_write, output_file
from .progress import RunProgress, progress_bar



def add_parser(sub, help_line):
    from ..model import NIW_PARAMS
    from ..summaries.partition import DEFAULT_LOSS, LOSSES
    from ..runs.run_spec import DEFAULT_INITS

    niw_defaults = " ".join(f"{param.name}: {param.help}" for param in NIW_PARAMS.values())
    p = sub.add_parser(
        "run", help=help_line,
        description=(
            "Run the collapsed Gibbs sampler (Algorithm 1 of Lu, Li & Dunson) for an infinite Gaussian "
            "mixture with a Normal-Inverse-Wishart prior under a Gibbs-type seating prior (CRP, pCRP, "
            "Pitman-Yor, MFM or sparse finite mixture; the same sampler for each), and save the chain as "
            ".npz. NIW settings are in the units the sampler sees (standardised units unless "
            f"--no-standardize). Defaults: m0 = the column means. {niw_defaults}"
        ).replace("%", "%%"),
    )
    add_data_options(p)
    add_prior_options(p)
    add_run_options(p)
    p.add_argument("--init", default=",".join(DEFAULT_INITS),
                   help="start of each chain: one | random:K | kmeans:K (K at most the number of points), or a "
                        f"comma-separated list used per chain and cycled (default {','.join(DEFAULT_INITS)}: a good "
                        "start, one cluster and many clusters)")
    p.add_argument("--loss", choices=LOSSES, default=DEFAULT_LOSS,
                   help="loss whose posterior expectation the point estimate minimises: vi (variation of "
                        f"information) or binder (default {DEFAULT_LOSS})")
    p.add_argument("--psm", action="store_true",
                   help="also compute and save the N x N posterior similarity matrix (4 N^2 bytes: 16 MB at "
                        "2,000 points); not made by default, since the point estimate works from the draws")
    add_niw_options(p)
    p.add_argument("--out", required=True,
                   help="where to write RESULT.npz (.npz is added if missing; its folder must exist)")


def command(args, argv=None):
    from ..runs.run_spec import data_description, make_run_spec
    from ..sampling.starts import parse_init, start_clusters
    settings = run_settings(args)
    tune_here = tuned_by_cv(args)
    if tune_here:
        setattr(args, tune_here, None)  # chosen below, once the data are loaded
    prior, r_note = prior_from_args(args)
    init_values = [v.strip() for v in args.init.split(",")]
    parsed_inits = [parse_init(v) for v in init_values]
    out_path = output_file(args.out, "--out", ".npz")
    ds = load_data(args)
    print_notes(ds.notes)
    for value, (_, k) in zip(init_values, parsed_inits):
        if k is not None and k > ds.n:
            print(f"note: --init {value} asks for {k:,} clusters but there are {ds.n:,} points: starting from "
                  f"at most {start_clusters(value, ds.n):,}.", file=sys.stderr)
    reference = None
    if tune_here:
        prior, r_note, reference = choose_r_for_run(args, ds, prior, settings)
    run_spec = make_run_spec(ds.X, prior=prior, niw=niw_overrides(args), init=init_values,
                             standardize=ds.standardized, data=data_description(ds, args.data),
                             similarity=args.psm, **settings)
    sample_and_report(run_spec, ds, out_path, loss=args.loss, r_note=r_note, seed_given="seed" in settings,
                      reference=reference)


def tuned_by_cv(args):
    """The tuned parameter given as ``cv`` (--r cv: choose the pCRP's r for the data), or None; CliError when the
    chosen prior does not tune it."""
    from ..model import PRIORS

    for owner in PRIORS.values():
        if owner.tuned and getattr(args, owner.tuned, None) == "cv":
            if PRIORS[args.prior].tuned != owner.tuned:
                raise CliError(f"--{owner.tuned} cv chooses the {owner.label}'s {owner.tuned_param.label}; it does "
                               f"not apply to --prior {args.prior}.")
            return owner.tuned
    return None


def choose_r_for_run(args, ds, prior, settings):
    """--r cv: (the prior with its tuned parameter chosen for ``ds`` by pcrp.analyses.cv.choose_r, where it came from, the
    reference (clusters, phrase) the check used)."""
    from ..analyses.cv import choose_r
    from ..model import make_prior
    from ..runs.run_spec import RUN_PARAMS

    print("choosing r for these data: cross validation, then a check on all of them ...", file=sys.stderr,
          flush=True)
    with progress_bar(unit="fit", desc="choosing r") as bar:
        def progress(stage, done, total):
            bar.set_description(stage, refresh=False)
            bar.total = total
            bar.update(done - bar.n)

        # without --seed the choice is seeded as pcrp.analyses.cv.choose_r states (the run then draws its own seed)
        r, details = choose_r(ds.X, standardize=ds.standardized, niw=niw_overrides(args), alpha=prior.alpha,
                              seed=settings.get("seed", defaults_of(choose_r)["seed"]),
                              n_jobs=settings.get("n_jobs", RUN_PARAMS["n_jobs"].default), progress=progress)
    check = details["check"]
    params = {name: value for name, value in prior.params().items() if name != "prior"}
    chosen = make_prior(prior.name, **{**params, prior.spec.tuned: r})
    return chosen, details["text"], (check["reference"], check["reference_from"])


def sample_and_report(spec, ds, out_path, *, loss, r_note=None, seed_given=True, reference=None):
    """Print the run's header, sample with progress, summarise (:func:`pcrp.analyses.run_summary.summarise_run`), write
    RESULT.npz and print the summary. A fit under a prior with a tuned parameter (the pCRP) is judged against the
    clusters the reference prior (the CRP) keeps on the same data (pcrp.analyses.collapse): ``reference`` (clusters,
    phrase) when --r cv's check made one, else :func:`pcrp.analyses.run_summary.reference_fit` after the run."""
    from ..runs.chains import run_chains
    from ..runs.compiling import compile_kernels
    from ..analyses.run_summary import (judged_against_reference, reference_fit, saved_arrays, summarise_run,
                               summary_lines)

    for line in spec.describe():
        print(line)
    if not seed_given:
        print(f"  (the seed was drawn for this run; `pcrp rerun {out_path.name}` or --seed {spec.seed} repeats it)")
    if r_note:
        print(f"  where r came from: {r_note}")
    sys.stdout.flush()
    compile_kernels(sys.stderr, spec.niw.covariance_type)  # a first run compiles what it uses, and says so
    progress = RunProgress(spec, spec.prior.label())
    try:
        chains = run_chains(ds.X, spec, callback=progress.advance, on_block=progress.checkpoint)
    finally:
        progress.close()
    if reference is None and judged_against_reference(spec.prior.name):
        def reference():
            return reference_fit(ds.X, spec, chains.K.shape[1])
    summary = summarise_run(chains, loss=loss, seed=spec.seed, similarity=spec.similarity, true_labels=ds.labels,
                            reference=reference)
    try:
        chains.save(out_path, extra=saved_arrays(summary, ds.labels))
    except OSError as err:
        raise cannot_write(out_path, err) from None
    lines, warnings = summary_lines(chains, summary)
    print("\n".join(lines))
    for line in warnings:
        print(f"warning: {line}", file=sys.stderr)
    print(f"wrote {out_path}")

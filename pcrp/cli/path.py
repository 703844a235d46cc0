"""``pcrp path``: the exact merge path over r, from a CRP point estimate (or given labels).

Its defaults are the declarations of the CRP start, :data:`pcrp.analyses.path.PATH_PARAMS`."""

from .arguments import add_data_options, add_declared_options, add_niw_options, load_data, niw_from_args, print_notes
from .output import output_file, write_text



def add_parser(sub, help_line):
    from ..analyses.path import PATH_PARAMS

    p = sub.add_parser(
        "path", help=help_line,
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
    add_data_options(p)
    add_declared_options(p, PATH_PARAMS, ("alpha",))
    add_niw_options(p)
    p.add_argument("--from-labels", metavar="FILE",
                   help="start from these labels instead of a CRP run: a text file of N integers (one per row, "
                        "or separated by commas / spaces) or a RESULT.npz of pcrp run (its point_labels)")
    add_declared_options(p, PATH_PARAMS, ("n_chains", "iters", "burn_in", "thin", "seed"))
    p.add_argument("--no-split-merge", action="store_true", help="plain Gibbs in the CRP chains")
    p.add_argument("--with-run", metavar="RESULT.npz",
                   help="a pcrp run result on the same data: each merge is shown with the sampler's P(those "
                        "clusters merged) at the run's r (JSON: sampler_p_merged)")
    p.add_argument("--out", required=True, help="where to write path.json")


def command(args, argv=None):
    from ..basics.json_text import dumps
    from ..analyses.path import crp_start, merge_path, merge_probabilities, path_table, read_labels

    out = output_file(args.out, "--out", ".json", add_suffix=False)
    ds = load_data(args)
    niw = niw_from_args(args, ds.X)
    print_notes(ds.notes)
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
        from ..runs.chains import ChainSet

        sampler = merge_probabilities(path, ChainSet.load(args.with_run))
    write_text(out, lambda f: f.write(dumps(path.as_dict(sampler=sampler))))
    print(path_table(path, sampler))
    print(f"wrote {out}")

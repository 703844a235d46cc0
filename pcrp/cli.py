"""The ``pcrp`` command line.

    pcrp run DATA --prior {crp,pcrp} --alpha A --r R --iters T --burn-in B --thin S --seed SEED
             [--chains C] [--init START[,START..]] [--loss vi|binder] [--n-jobs J] [--no-split-merge]
             [--m0 V1,V2,..] [--kappa0 X] [--nu0 X] [--s0 X] [--standardize | --no-standardize]
             [--columns c1,c2] --out RESULT.npz

    pcrp cv DATA [--r-grid 1.01,1.05,..] [--folds F] [--repeats R] [--iters T] [--burn-in B] [--thin S]
             [--alpha A] [--seed SEED] [--n-jobs J] [--scheduler ADDRESS] [--out-csv F] [--out-json F]
    pcrp reproduce [--quick] [--experiments KEY,..] [--out DIR] [--seed SEED] [--n-jobs J] [--scheduler ADDRESS]

Errors exit with status 2 and one line on stderr, never a traceback.
"""

import argparse
import json
import sys

import numpy as np

from . import data as data_mod
from .chains import DEFAULT_INITS, data_description, resolve_inits, run_chains
from .cv import DEFAULT_GRID, CVError, cross_validate
from .model import DEFAULT_R, ModelError, make_prior, resolve_niw
from .partition import LOSSES, point_estimate, similarity_matrix
from .reproduce import EXPERIMENTS
from .sampler import SamplerError
from .summary import rhat_warnings

# Four chains: R-hat needs two or more, and four from different starts (DEFAULT_INITS cycled) is the
# usual check (Vehtari et al. 2021) that the result does not depend on the start.
DEFAULT_CHAINS = 4


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


def _add_niw_options(p):
    p.add_argument("--m0", help="prior mean of cluster means, comma-separated, one per column")
    p.add_argument("--kappa0", type=float, help="prior strength of m0 in pseudo-points, > 0")
    p.add_argument("--nu0", type=float, help="inverse-Wishart degrees of freedom, > d - 1")
    p.add_argument("--s0", type=float, help="inverse-Wishart scale: S0 = S0_VALUE * identity, > 0")


def _add_parallel_options(p):
    p.add_argument("--n-jobs", type=int, default=-1, help="parallel fits on this machine (default -1: all cores)")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="run the fits on an existing Dask cluster, e.g. tcp://10.0.0.5:8786 (needs dask[distributed])")


def _add_data_options(p):
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
    p.add_argument("--n", type=int, help="points to draw for sim1/sim2/demo (default 300) or mnist (default 1000)")
    p.add_argument("--data-seed", type=int, default=0, help="seed for simulated data / the MNIST subset (default 0)")
    p.add_argument("--digits", default="1,2,3,4", help="MNIST digits (default 1,2,3,4 as in the paper)")
    p.add_argument("--embedding", choices=data_mod.MNIST_EMBEDDINGS, default="spectral",
                   help="MNIST embedding (default spectral, as in the paper)")
    p.add_argument("--dims", type=int, default=2, help="MNIST embedding dimensions, 1-50 (default 2)")


def build_parser():
    parser = _Parser(prog="pcrp", description="Powered Chinese restaurant process mixtures.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    p = sub.add_parser(
        "run",
        help="run the collapsed Gibbs sampler and save the chain",
        description=(
            "Run the collapsed Gibbs sampler (Algorithm 1 of Lu, Li & Dunson) for an infinite Gaussian "
            "mixture with a Normal-Inverse-Wishart prior under the CRP or the pCRP, and save the chain as "
            ".npz. NIW settings are in the units the sampler sees (standardised units unless "
            "--no-standardize). Defaults: m0 = column means, kappa0 = 0.25, nu0 = d + 3, "
            "S0 = 0.25 * v * nu0 * I with v the mean column variance."
        ),
    )
    _add_data_options(p)
    p.add_argument("--prior", choices=["crp", "pcrp"], default="pcrp", help="seating prior (default pcrp)")
    p.add_argument("--alpha", type=float, default=1.0, help="concentration: new-table weight (default 1)")
    p.add_argument("--r", type=float, default=DEFAULT_R,
                   help=f"pCRP power, > 0; r = 1 is the CRP (default {DEFAULT_R}); ignored for crp")
    p.add_argument("--iters", type=int, default=2000, help="Gibbs sweeps in all (default 2000)")
    p.add_argument("--burn-in", type=int, default=1000, help="sweeps discarded before keeping draws (default 1000)")
    p.add_argument("--thin", type=int, default=5, help="keep every thin-th sweep after burn-in (default 5)")
    p.add_argument("--seed", type=int, default=0, help="seed of the run; each chain gets its own stream (default 0)")
    p.add_argument("--chains", type=int, default=DEFAULT_CHAINS,
                   help=f"chains from different starts, run in parallel threads (default {DEFAULT_CHAINS}: R-hat "
                        "needs two or more, and four from different starts is the usual check that the result "
                        "does not depend on where the sampler started)")
    p.add_argument("--init", default=",".join(DEFAULT_INITS),
                   help="start of each chain: one | random:K | kmeans:K, or a comma-separated list used per chain "
                        f"and cycled (default {','.join(DEFAULT_INITS)}: a good start, one cluster and many "
                        "clusters)")
    p.add_argument("--loss", choices=LOSSES, default="vi",
                   help="loss whose posterior expectation the point estimate minimises: vi (variation of "
                        "information, default) or binder")
    p.add_argument("--n-jobs", type=int, default=-1, help="threads for the chains (default -1: all cores)")
    p.add_argument("--no-split-merge", action="store_true",
                   help="plain Gibbs as in the paper (split-merge moves are on by default)")
    _add_niw_options(p)
    p.add_argument("--out", required=True, help="where to write RESULT.npz")

    p = sub.add_parser(
        "cv",
        help="cross-validate the pCRP power r (paper Sec. 2.3)",
        description=(
            "Cross-validate the pCRP power r: for each r on the grid and each fold, fit a pCRP chain on the "
            "training part and score the held-out part by the loss of eq. (5) (held-out points join the "
            "cluster with the highest posterior seating probability) and by the held-out log predictive "
            "density. Prints the curve (mean and SE over folds) and the proposed r: the grid value just "
            "before the loss blows up."
        ),
    )
    _add_data_options(p)
    p.add_argument("--r-grid", default=",".join(f"{r:g}" for r in DEFAULT_GRID),
                   help="increasing comma-separated r values (default 1.01,1.05,...,2)")
    p.add_argument("--alpha", type=float, default=1.0, help="concentration (default 1)")
    p.add_argument("--folds", type=int, default=5, help="folds (default 5)")
    p.add_argument("--repeats", type=int, default=1, help="repeat the folds with new shuffles (default 1)")
    p.add_argument("--iters", type=int, default=2000, help="sweeps per fit (default 2000)")
    p.add_argument("--burn-in", type=int, default=1000, help="burn-in per fit (default 1000)")
    p.add_argument("--thin", type=int, default=10, help="thinning of the scored draws (default 10)")
    p.add_argument("--seed", type=int, default=0, help="seed for the folds and chains (default 0)")
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
            "and 2000, Old Faithful) with CRP-Oracle, CRP and pCRP (r by cross validation) under the paper's "
            "protocol (20,000 sweeps, burn-in 10,000, thin 5, alpha = 1), and write tables.md / tables.csv "
            "next to the paper's numbers, the CV curves and the figures (HTML) into --out."
        ),
    )
    p.add_argument("--quick", action="store_true",
                   help="2,000 sweeps (burn-in 1,000) and a 3-fold CV of 400 sweeps: under a minute for all experiments")
    p.add_argument("--experiments", default=",".join(EXPERIMENTS),
                   help=f"comma-separated subset of: {', '.join(EXPERIMENTS)} (default all)")
    p.add_argument("--out", default="reproduce-output", help="output folder (default reproduce-output)")
    p.add_argument("--seed", type=int, default=0, help="seed for data, folds and chains (default 0)")
    p.add_argument("--no-split-merge", action="store_true", help="the paper's plain Gibbs sampler")
    _add_parallel_options(p)
    return parser


def load_data(args):
    digits = [int(d) for d in _floats(args.digits, "--digits")]
    columns = [c.strip() for c in args.columns.split(",")] if args.columns else None
    return data_mod.load(
        args.data, columns=columns, label_column=args.label_column, standardize_data=args.standardize,
        n=args.n, seed=args.data_seed, digits=digits, embedding=args.embedding, dims=args.dims,
    )


def niw_from_args(args, X):
    return resolve_niw(X, m0=_floats(args.m0, "--m0") if args.m0 else None, kappa0=args.kappa0,
                       nu0=args.nu0, S0=args.s0)


def cmd_run(args):
    ds = load_data(args)
    prior = make_prior(args.prior, alpha=args.alpha, r=args.r)
    niw = niw_from_args(args, ds.X)
    inits = resolve_inits([v.strip() for v in args.init.split(",")], args.chains)
    for note in ds.notes:
        print(f"note: {note}", file=sys.stderr)
    chains = run_chains(ds.X, prior, niw, n_chains=args.chains, init=inits, iters=args.iters, burn_in=args.burn_in,
                        thin=args.thin, seed=args.seed, n_jobs=args.n_jobs, data=data_description(ds, args.data),
                        split_merge=not args.no_split_merge)
    chains.config["loss"] = args.loss
    draws = chains.pooled_labels()
    psm = similarity_matrix(draws)
    estimate = point_estimate(draws, args.loss, psm=psm, seed=args.seed)
    diagnostics = chains.diagnostics()
    out = {
        "psm": psm,
        "point_labels": estimate.labels,
        "point_expected_loss": np.float64(estimate.expected_loss),
        "diagnostics": np.array(json.dumps(_json_safe(diagnostics), allow_nan=False)),
    }
    if ds.labels is not None:
        out["true_labels"] = ds.labels
    try:
        chains.save(args.out, extra=out)
    except OSError as err:
        raise CliError(f"cannot write {args.out}: {err.strerror}") from None
    _print_run(prior, ds, args, chains, diagnostics, estimate)


def _json_safe(value):
    """nan -> null and +-inf -> "inf" / "-inf", so the JSON is valid for every reader."""
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_safe(v) for v in value]
    if isinstance(value, float) and not np.isfinite(value):
        return None if np.isnan(value) else ("inf" if value > 0 else "-inf")
    return value


def _print_run(prior, ds, args, chains, diagnostics, estimate):
    ms = chains.seconds_per_sweep * 1e3
    print(f"{prior.label()}: N={ds.n}, d={ds.dim}, {chains.n_chains} chain(s) x {args.iters} sweeps "
          f"(burn-in {args.burn_in}, thin {args.thin}: {chains.n_kept} kept draws each) at "
          f"{ms.min():.3f}-{ms.max():.3f} ms/sweep")
    k_diag, lj_diag = diagnostics["K"], diagnostics["log_joint"]
    after = chains.K[:, args.burn_in:]
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
    sizes = ", ".join(str(n) for n in np.bincount(estimate.labels))
    unit = "bits" if estimate.loss == "vi" else "of pairs"
    print(f"  point estimate ({estimate.loss.upper() if estimate.loss == 'vi' else 'Binder'} loss): "
          f"{estimate.n_clusters} clusters of sizes {sizes}; expected loss {estimate.expected_loss:.4f} {unit}")
    for line in rhat_warnings({"K": k_diag, "the log joint": lj_diag}):
        print(f"warning: {line}", file=sys.stderr)
    print(f"wrote {args.out}")


def _write(path, writer):
    try:
        with open(path, "w", newline="") as f:
            writer(f)
    except OSError as err:
        raise CliError(f"cannot write {path}: {err.strerror}") from None


def cmd_cv(args):
    import csv

    ds = load_data(args)
    niw = niw_from_args(args, ds.X)
    for note in ds.notes:
        print(f"note: {note}", file=sys.stderr)
    result = cross_validate(
        ds.X, niw, r_grid=_floats(args.r_grid, "--r-grid"), alpha=args.alpha, folds=args.folds,
        repeats=args.repeats, iters=args.iters, burn_in=args.burn_in, thin=args.thin, seed=args.seed,
        split_merge=not args.no_split_merge, n_jobs=args.n_jobs, scheduler=args.scheduler,
    )
    rows = result.table()
    print(f"{'r':>6s} {'loss':>10s} {'(SE)':>8s} {'log pred':>10s} {'(SE)':>8s} {'mean K':>7s}")
    for row in rows:
        mark = "  <- proposed" if row["r"] == result.chosen_r else ""
        print(f"{row['r']:6.2f} {row['loss']:10.4f} {row['loss_se']:8.4f} {row['log_pred']:10.4f} "
              f"{row['log_pred_se']:8.4f} {row['mean_k']:7.2f}{mark}")
    print(f"proposed r = {result.chosen_r:g}: {result.blow_up.reason}")
    if args.out_csv:
        def write_csv(f):
            writer = csv.DictWriter(f, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
        _write(args.out_csv, write_csv)
    if args.out_json:
        payload = {"chosen_r": result.chosen_r, "blow_up_index": result.blow_up.index,
                   "reason": result.blow_up.reason, "curve": rows,
                   "settings": {**result.settings, "data": args.data, "data_source": ds.source}}
        _write(args.out_json, lambda f: json.dump(payload, f, indent=2, default=float))


def cmd_reproduce(args, argv):
    from dataclasses import replace

    from .reproduce import FULL, QUICK, run_experiment, write_report

    keys = [k.strip() for k in args.experiments.split(",") if k.strip()]
    unknown = [k for k in keys if k not in EXPERIMENTS]
    if unknown or not keys:
        raise CliError(f"unknown experiment {', '.join(unknown) or '(none given)'}; choose from {', '.join(EXPERIMENTS)}")
    protocol = replace(QUICK if args.quick else FULL, split_merge=not args.no_split_merge)
    results = []
    for key in keys:
        print(f"{EXPERIMENTS[key].title} ...", file=sys.stderr, flush=True)
        res = run_experiment(EXPERIMENTS[key], protocol, seed=args.seed, n_jobs=args.n_jobs, scheduler=args.scheduler)
        print(f"  r = {res.cv.chosen_r:g}; mean K: "
              + ", ".join(f"{m} {r.metrics['K'][0]:.2f}" for m, r in res.methods.items()), file=sys.stderr)
        results.append(res)
    command = "pcrp " + " ".join(argv if argv is not None else sys.argv[1:])
    try:
        path = write_report(results, args.out, command=command)
    except OSError as err:
        raise CliError(f"cannot write into {args.out}: {err.strerror}") from None
    print(path.read_text())
    print(f"wrote {path} and the figures in {path.parent / 'figures'}")


def main(argv=None):
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if args.command == "run":
            cmd_run(args)
        elif args.command == "cv":
            cmd_cv(args)
        elif args.command == "reproduce":
            cmd_reproduce(args, argv)
    except (CliError, CVError, ModelError, SamplerError, data_mod.DataError) as err:
        print(f"pcrp: error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""``pcrp cv``: cross-validate the pCRP's power r on a data set and print the curve and the proposed r.

Its defaults are the settings the shipped r of the built-in data sets were made with (:data:`pcrp.analyses.cv.BUILTIN_R_SETTINGS`),
the registry's grid of the tuned power (:data:`pcrp.analyses.cv.DEFAULT_GRID`) and its concentration (:data:`pcrp.model.ALPHA`).
"""

import csv
import sys

from .arguments import (CliError, add_data_options, add_declared_options, add_niw_options, add_parallel_options, check_parallel,
                        floats, load_data, niw_from_args, niw_overrides, print_notes)
from .output import output_file, write_text
from .progress import counting_bar, progress_bar

# Bytes cross validation holds per split (its train / test indices: 8 bytes per point) and per fit (the
# queued joblib task and its result), for the memory check before the splits are made.
CV_BYTES_PER_FIT = 1024


def add_parser(sub, help_line):
    from ..analyses.cv import BUILTIN_R_SETTINGS, CHECK_CHAINS, CV_PARAMS, CV_RULES, DEFAULT_GRID

    p = sub.add_parser(
        "cv", help=help_line,
        description=(
            "Cross-validate the pCRP power r: for each r on the grid and each fold, fit a pCRP chain on the "
            "training part and score the held-out part by the loss of eq. (5) (held-out points join the "
            "cluster with the highest posterior seating probability) and by the held-out log predictive "
            "density. Prints the curve (mean and SE over folds) and the proposed r: the grid value just "
            "before the loss blows up. Cross validation here tunes the pCRP's r only; the other priors' "
            "parameters (--prior of pcrp run) are prior beliefs, not tuned by this loss. With several "
            "--covariance-type values (full,diag,spherical) each type gets its own r the same way, and the types "
            "are compared by held-out log predictive at their own r: the simplest type within 2 standard errors "
            "of the best (split by split) is the one the data support."
        ),
    )
    add_data_options(p)
    grid = ",".join(f"{r:g}" for r in DEFAULT_GRID)
    p.add_argument("--r-grid", default=grid, help=f"increasing comma-separated r values (default {grid})")
    # the settings the shipped r of the built-in data sets were made with (a preset over CV_PARAMS)
    add_declared_options(p, CV_PARAMS, ("alpha", "folds", "repeats"), preset=BUILTIN_R_SETTINGS)
    p.add_argument("--rule", choices=CV_RULES, default=BUILTIN_R_SETTINGS["rule"],
                   help="change-point rule (default %(default)s): robust (the smallest repeat's proposal and the "
                        "lower quartile of the splits') or mean (the change point of the mean curve, the rule "
                        "before Dec. 2026)")
    p.add_argument("--no-chain-check", action="store_true",
                   help=f"skip the check of the proposed r by {CHECK_CHAINS} chains on all the data (by default r "
                        "steps down the grid while they collapse below a CRP fit's clusters or disagree, and keeps "
                        "one grid step of margin below the largest r that holds)")
    add_declared_options(p, CV_PARAMS, ("iters", "burn_in", "thin", "seed"), preset=BUILTIN_R_SETTINGS)
    p.add_argument("--no-split-merge", action="store_true", help="plain Gibbs in every fit")
    add_niw_options(p, several_types=True)
    add_parallel_options(p)
    p.add_argument("--out-csv", help="write the curve as CSV (r, loss, loss_se, log_pred, log_pred_se, mean_k; "
                                     "covariance_type first when several are compared)")
    p.add_argument("--out-json", help="write the curve, the proposed r and every setting as JSON")


def covariance_types(args, dims):
    """The covariance types --covariance-type names (comma-separated; None when not given: the full type alone), each
    checked; at d = 1, where the types are one model, the first alone."""
    from ..model import check_covariance_type

    if args.covariance_type is None:
        return [None]
    types = [check_covariance_type(t) for t in args.covariance_type.split(",") if t.strip()]
    if not types or len(set(types)) != len(types):
        raise CliError(f"--covariance-type: give full, diag or spherical, each once, comma-separated (got "
                       f"{args.covariance_type!r}).")
    if len(types) > 1 and dims == 1:
        print(f"note: at d = 1 the full, diagonal and spherical covariances are one model: cross-validating "
              f"{types[0]} alone.", file=sys.stderr)
        return types[:1]
    return types


def command(args, argv=None):
    from ..analyses.cv import CV_PARAMS, check_cv_settings
    from ..basics.dtypes import check_memory
    from ..basics.json_text import dumps
    CV_PARAMS.check("seed", args.seed, "--seed")
    check_parallel(args)
    r_grid = floats(args.r_grid, "--r-grid")
    out_csv = output_file(args.out_csv, "--out-csv", ".csv") if args.out_csv is not None else None
    out_json = output_file(args.out_json, "--out-json", ".json") if args.out_json is not None else None
    ds = load_data(args)
    types = covariance_types(args, ds.dim)
    for t in types:  # checks the NIW options; the fits resolve the prior on their training parts
        niw_from_args(args, ds.X, covariance_type=t)
    check_cv_settings(ds.n, r_grid, args.folds, args.repeats, args.alpha)
    splits = args.folds * args.repeats
    check_memory(splits * (8 * ds.n + CV_BYTES_PER_FIT * len(r_grid)),
                 f"Cross validation with {splits:,} splits x {len(r_grid)} values of r", "Use fewer --repeats.")
    print_notes(ds.notes)
    runs = {}
    for t in types:
        if len(types) > 1:
            print(f"== {covariance_words(t)} ==")
        runs[t] = one_type(args, ds, r_grid, t)
    choice = None
    if len(types) > 1:
        choice = compare_types(runs)
    rows = [{**({"covariance_type": t} if len(types) > 1 else {}), **row}
            for t, (result, _, _) in runs.items() for row in result.table()]
    if out_csv:
        def write_csv(f):
            writer = csv.DictWriter(f, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
        write_text(out_csv, write_csv)
        print(f"wrote {out_csv}")
    if out_json:
        def one(t, result, chosen, check):
            return {"chosen_r": chosen, "cv_r": result.chosen_r, "chain_check": check,
                    "blow_up_index": result.blow_up.index, "reason": result.blow_up.reason, "curve": result.table(),
                    "settings": {**result.settings, "data": args.data, "data_source": ds.source}}

        if len(types) == 1:
            payload = one(types[0], *runs[types[0]])
        else:
            payload = {"types": {t: one(t, *run) for t, run in runs.items()},
                       "covariance_choice": {"chosen": choice.chosen, "best": choice.best, "rule": COMPARISON_RULE,
                                             "table": choice.table(), "text": choice.text()}}
        write_text(out_json, lambda f: f.write(dumps(payload, indent=2)))
        print(f"wrote {out_json}")


# The comparison of covariance types in words, as `pcrp cv` prints it (pcrp.analyses.cv.choose_covariance).
COMPARISON_RULE = ("each type at its own r (cross-validated, then checked); the best by mean held-out log predictive; "
                   "chosen: the simplest (spherical, then diagonal, then full) within 2 standard errors of the "
                   "split-by-split difference from the best")


def covariance_words(covariance_type):
    from ..analyses.collapse import covariance_words as words

    return words(covariance_type or "full")


def one_type(args, ds, r_grid, covariance_type):
    """Cross validation of r for one covariance type (None: --covariance-type not given, the full type), its table,
    proposal and check printed; returns (CVResult, the r kept, the check or None)."""
    from ..analyses.collapse import mean_k_per_chain
    from ..analyses.cv import CHECK_CHAINS, check_with_chains, cross_validate, cv_kept_clusters

    overrides = {k: v for k, v in niw_overrides(args).items() if k != "covariance_type"}
    if covariance_type is not None:
        overrides["covariance_type"] = covariance_type
    with progress_bar(unit="fit", desc="cross validation") as bar:
        result = cross_validate(  # NIW defaults and standardisation come from each training part
            ds.X, overrides, standardize=ds.standardized, r_grid=r_grid, alpha=args.alpha,
            folds=args.folds, repeats=args.repeats, iters=args.iters, burn_in=args.burn_in, thin=args.thin,
            seed=args.seed, split_merge=not args.no_split_merge, n_jobs=args.n_jobs, scheduler=args.scheduler,
            progress=counting_bar(bar), rule=args.rule,
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
        print(f"checking it with {CHECK_CHAINS} chains on all the data ...", file=sys.stderr, flush=True)
        chosen, check = check_with_chains(ds.X, result.chosen_r, r_grid,
                                          niw_from_args(args, ds.X, covariance_type=covariance_type),
                                          alpha=args.alpha, seed=args.seed, n_jobs=args.n_jobs, iters=args.iters,
                                          cv_mean_k=cv_kept_clusters(result, result.chosen_r),
                                          split_merge=not args.no_split_merge)
        for t in check["tried"]:
            print(f"  r = {t['r']:g}: {mean_k_per_chain(t['mean_K_per_chain'])}"
                  + (f" ({t['verdict']})" if t["verdict"] else " (keeps the clusters)"))
        print(check["text"])
    print(f"proposed r = {chosen:g}" + (f" for {covariance_words(covariance_type)}" if covariance_type else ""))
    return result, chosen, check


def compare_types(runs):
    """Print the comparison of the covariance types cross-validated in ``runs`` ({type: (CVResult, r, check)}) and
    the type the data support (pcrp.analyses.cv.choose_covariance); returns the CovarianceChoice."""
    from ..analyses.cv import choose_covariance
    from ..analyses.cv.covariance import type_score

    choice = choose_covariance({t: type_score(result, t, r, checked=check is not None)
                                for t, (result, r, check) in runs.items()})
    print(f"== which covariance the data support ({COMPARISON_RULE}) ==")
    print(f"{'type':>10s} {'r':>5s} {'log pred':>10s} {'(SE)':>7s} {'behind':>8s} {'(SE)':>7s} {'loss':>9s} "
          f"{'(SE)':>7s} {'mean K':>7s}")
    for row in choice.table():
        mark = "  <- chosen" if row["chosen"] else ("  (best)" if row["best"] else "")
        print(f"{row['covariance_type']:>10s} {row['r']:5.2f} {row['log_pred']:10.4f} {row['log_pred_se']:7.4f} "
              f"{row['behind_best']:8.4f} {row['behind_best_se']:7.4f} {row['loss']:9.4f} {row['loss_se']:7.4f} "
              f"{row['mean_k']:7.2f}{mark}")
    print(choice.text())
    return choice

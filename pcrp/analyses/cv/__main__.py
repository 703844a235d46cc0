"""`python -m pcrp.analyses.cv --builtin-r OUT.json` (BUILTIN_R_COMMAND): compute the shipped r of the built-in data
sets, per data settings and covariance type. --data or --covariance-type remake only those entries and keep the
others already in OUT.json."""

import argparse

from .builtin import BUILTIN_R_DATA, BUILTIN_R_VARIANTS, write_builtin_r


def main(argv=None):
    from ...model import COVARIANCE_TYPES

    parser = argparse.ArgumentParser(prog="python -m pcrp.analyses.cv", description="Compute the shipped r of the built-in "
                                     "data sets (pcrp/datasets/cv_r.json), per data settings and covariance type.")
    parser.add_argument("--builtin-r", metavar="OUT.json", required=True, help="where to write the table")
    parser.add_argument("--data", help="comma-separated built-in names to remake (default all: "
                                       f"{', '.join(BUILTIN_R_DATA)}); the other entries of OUT.json are kept")
    parser.add_argument("--covariance-type", help="comma-separated covariance types to remake (default all: "
                                                  f"{', '.join(COVARIANCE_TYPES)}); the other entries are kept")
    parser.add_argument("--n-jobs", type=int, default=None, help="parallel fits (default: all cores)")
    args = parser.parse_args(argv)
    names = None if args.data is None else {n.strip() for n in args.data.split(",") if n.strip()}
    types = None if args.covariance_type is None else {t.strip() for t in args.covariance_type.split(",") if t.strip()}
    unknown = sorted((names or set()) - set(BUILTIN_R_DATA)) + sorted((types or set()) - set(COVARIANCE_TYPES))
    if unknown:
        parser.error(f"unknown {', '.join(unknown)}")
    variants = [v for v in BUILTIN_R_VARIANTS if names is None or v[0] in names]
    write_builtin_r(args.builtin_r, variants, n_jobs=args.n_jobs, types=types,
                    keep_others=names is not None or types is not None)


if __name__ == "__main__":
    main()

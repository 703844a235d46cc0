"""`python -m pcrp.analyses.cv --builtin-r OUT.json` (BUILTIN_R_COMMAND): compute the shipped r of the built-in data sets."""

import argparse

from .builtin import BUILTIN_R_DATA, write_builtin_r


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m pcrp.analyses.cv", description="Compute the shipped r of the built-in "
                                     "data sets (pcrp/datasets/cv_r.json).")
    parser.add_argument("--builtin-r", metavar="OUT.json", required=True, help="where to write the table")
    parser.add_argument("--data", default=",".join(BUILTIN_R_DATA), help="comma-separated built-in names")
    parser.add_argument("--n-jobs", type=int, default=None, help="parallel fits (default: all cores)")
    args = parser.parse_args(argv)
    write_builtin_r(args.builtin_r, [n.strip() for n in args.data.split(",") if n.strip()], n_jobs=args.n_jobs)


if __name__ == "__main__":
    main()

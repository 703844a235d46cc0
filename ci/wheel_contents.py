"""Check that a built wheel holds every file of the pcrp package in this source tree.

Usage: python ci/wheel_contents.py PATH/TO/pcrp-*.whl   (run from the repository root by .ci/run)
Every file under pcrp/ except caches (__pycache__, *.pyc, numba's *.nbi / *.nbc) must be in the
wheel: a module, a subpackage or a data file (pcrp/datasets) left out of the packaging
configuration fails here instead of in a user's install.
"""

import sys
import zipfile
from pathlib import Path

CACHE_SUFFIXES = {".pyc", ".nbi", ".nbc"}


def main(wheel):
    expected = {p.as_posix() for p in Path("pcrp").rglob("*")
                if p.is_file() and "__pycache__" not in p.parts and p.suffix not in CACHE_SUFFIXES}
    if not expected:
        sys.exit("wheel contents: no pcrp/ here; run from the repository root")
    with zipfile.ZipFile(wheel) as zf:
        shipped = set(zf.namelist())
    missing = sorted(expected - shipped)
    if missing:
        sys.exit(f"wheel contents: {wheel} lacks {len(missing)} file(s) of pcrp/: {', '.join(missing)}")
    print(f"wheel contents: all {len(expected)} files of pcrp/ are in {Path(wheel).name}")


if __name__ == "__main__":
    main(sys.argv[1])

"""Whether LLVM vectorised the sweep: compiles the per-point kernel afresh (numba's cache holds no assembly) and
counts the vector instructions in its machine code.

    python bench/kernel_asm.py [--d 2]

Prints, for pcrp.kernels.sweep.seat_points (one kernel for every d; --d only sets the data it is compiled on): the
number of instructions on 512-bit (zmm) and 256-bit (ymm) registers, packed divisions (vdivpd: only the vectorised
log and exp of pcrp.kernels.vecmath divide) and packed multiplies/adds, and the calls left in the kernel.
"""

import argparse
import re

import numpy as np
from numba.core.caching import NullCache

from pcrp.kernels import sweep
from pcrp.model import CRP, resolve_niw
from pcrp.sampling import sampler as sampling


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--d", type=int, default=2)
    args = parser.parse_args()
    for kernel in (sweep.seat_points, sweep.run_sweeps):
        kernel._cache = NullCache()  # compile here, so that the assembly can be inspected (a bench, not the library)
    X = np.random.default_rng(0).normal(size=(50, args.d))
    sampling._warm = {("full", sampling.SWEEP)}  # no warm-up call: the first step compiles
    sampling.Sampler(X, CRP(1.0), resolve_niw(X), seed=0).step(1)
    for signature in sweep.seat_points.signatures:
        asm = sweep.seat_points.inspect_asm(signature)
        count = {name: len(re.findall(pattern, asm)) for name, pattern in (
            ("zmm", r"%zmm"), ("ymm", r"%ymm"), ("vdivpd", r"\bvdivpd\b"), ("packed mul/add", r"\bv(mul|add|sub)pd\b"),
            ("packed fma", r"\bvfn?m(add|sub)\w*pd\b"))}
        calls = sorted({re.sub(r"^_ZN.*?\d+([a-z_]+)B\d.*", r"\1", name) for name in re.findall(
            r"movabsq\s+\$([A-Za-z_][\w.]*), %r\w+\n\s+(?:vzeroupper\n\s+)?callq", asm)})
        print("seat_points: " + ", ".join(f"{k} {v}" for k, v in count.items()))
        print(f"  calls: {', '.join(calls) if calls else 'none'}")


if __name__ == "__main__":
    main()

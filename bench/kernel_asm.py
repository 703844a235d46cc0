"""Whether LLVM vectorised the sweep kernel: compiles it afresh (numba's cache holds no assembly) for the given d
and counts the vector instructions in its machine code.

    python bench/kernel_asm.py [--d 2]

Prints, for the kernel specialised to d: the number of instructions on 512-bit (zmm) and 256-bit (ymm)
registers, packed divisions (vdivpd: only the vectorised log and exp of pcrp.kernels.vecmath divide) and
packed multiplies/adds, and the calls left in the kernel.
"""

import argparse
import re

import numpy as np
from numba.core.caching import NullCache

from pcrp.kernels import gibbs
from pcrp.model import CRP, resolve_niw
from pcrp.sampling.sampler import Sampler
def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--d", type=int, default=2)
    args = parser.parse_args()
    gibbs.gibbs_sweeps._cache = NullCache()  # compile here, so that the assembly can be inspected
    X = np.random.default_rng(0).normal(size=(50, args.d))
    sampler = Sampler(X, CRP(1.0), resolve_niw(X), seed=0)
    sampler._warm_up = True  # no warm-up call: the first step compiles
    sampler.step(1)
    for signature in gibbs.gibbs_sweeps.signatures:
        asm = gibbs.gibbs_sweeps.inspect_asm(signature)
        count = {name: len(re.findall(pattern, asm)) for name, pattern in (
            ("zmm", r"%zmm"), ("ymm", r"%ymm"), ("vdivpd", r"\bvdivpd\b"), ("packed mul/add", r"\bv(mul|add|sub)pd\b"),
            ("packed fma", r"\bvfn?m(add|sub)\w*pd\b"))}
        calls = sorted(set(re.findall(r"\bcall\w*\s+(\S+)", asm)))
        print(f"d = {len(signature[0]) or 'general'}: " + ", ".join(f"{k} {v}" for k, v in count.items()))
        print(f"  calls: {', '.join(calls) if calls else 'none'}")


if __name__ == "__main__":
    main()

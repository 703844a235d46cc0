"""The shifted CRP, g(n) = n + theta, as a pcrp prior: a g-CRP of the paper's eq. 3 (docs/adding_a_prior.md).

An existing table of n customers weighs n + theta, a new table alpha; theta = 0 is the CRP, theta > 0 favours
small tables less than the CRP does (every table gets theta on top of its size).
"""

import numpy as np

import pcrp
from pcrp.model import ALPHA  # the CRP's concentration: same meaning, same bounds

THETA = pcrp.Param("theta", "shift theta", 0.5, 0.0, 1000.0, True, True,
                   "g(n) = n + theta: theta = 0 is the CRP; larger theta weighs tables more alike.",
                   why_high="beyond it every table weighs about theta whatever its size.")


def log_g(n, p):
    """log g(n) = log(n + theta) for an existing table of n >= 1 customers (an int array)."""
    return np.log(n + p.theta)


def log_new(K, p):
    """log alpha, the weight of a new table whatever the K occupied ones."""
    return np.log(p.alpha)


def register():
    """The entry point: ``pcrp`` calls it once, when its prior registry is first read."""
    pcrp.register_gcrp("shifted_crp", "shifted CRP", (ALPHA, THETA), log_g=log_g, log_new=log_new,
                       help="g-CRP with g(n) = n + theta: theta = 0 is the CRP.")

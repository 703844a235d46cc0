"""The reproduction's settings, declared once: :data:`REPRODUCE_PARAMS`, its presets (the paper's protocol
:data:`PAPER`, the quick check :data:`QUICK_CHECK`) and :class:`Protocol`, the settings one run uses.

The paper's protocol (Sec. 3): 20,000 sweeps, burn-in 10,000, thin 5, alpha = 1 for the CRP and the pCRP. The run's
settings (sweeps, burn-in, thinning, chains, seed) keep the run's bounds (:data:`pcrp.runs.run_spec.RUN_PARAMS`) with
reproduce's defaults; alpha is the registry's (:data:`pcrp.model.ALPHA`).
"""

from dataclasses import dataclass, fields, replace

from ...analyses.cv import CV_RULES
from ...basics.errors import SettingError
from ...model import ALPHA
from ...basics.params import Declarations, Param
from ...runs.run_spec import RUN_PARAMS

MAX_FOLDS = 100
MAX_REPEATS = 100
MAX_DATA_SETS = 1000

REPRODUCE_PARAMS = Declarations(
    "the paper's reproduction",
    replace(RUN_PARAMS["iters"], default=20000, help="Sweeps per chain of every compared method."),
    replace(RUN_PARAMS["burn_in"], default=10000, help="Sweeps discarded before draws are kept."),
    replace(RUN_PARAMS["thin"], default=5),
    replace(ALPHA, help="The CRP's and the pCRP's concentration (the paper's alpha = 1); the CRP-Oracle's is "
                        "K_true / ln N."),
    replace(RUN_PARAMS["n_chains"], help="Chains per method from different starts; R-hat compares them."),
    replace(RUN_PARAMS["seed"], default=0, help="First data seed, and the seed of folds and chains."),
    replace(RUN_PARAMS["iters"], name="cv_iters", label="sweeps per cross-validation fit", default=2000,
            help="Sweeps of each cross-validation fit of r."),
    replace(RUN_PARAMS["burn_in"], name="cv_burn_in", label="burn-in per cross-validation fit", default=1000,
            help="Burn-in of each cross-validation fit.", constraint="cv_burn_in < cv_iters"),
    replace(RUN_PARAMS["thin"], name="cv_thin", label="thinning of the cross-validation fits", default=10),
    Param("cv_folds", "folds", 5, 2, MAX_FOLDS, True, True, "Folds of the cross validation of r.", integer=True,
          why_high="each fold is a fit at every r; use repeats for more re-partitions."),
    Param("cv_repeats", "repeats of the folds", 3, 1, MAX_REPEATS, True, True,
          "Repeats of the folds: the robust rule reads each repeat (pcrp.analyses.cv.robust_blow_up).", integer=True,
          why_high="every repeat is folds x grid fits; three already see independent re-partitions."),
    Param("n_seeds", "data sets", 10, 1, MAX_DATA_SETS, True, True,
          "Data sets drawn per simulated experiment, each with its own cross validation of r.", integer=True,
          why_high="each data set is a whole experiment; ten already show the spread between data sets."),
    replace(RUN_PARAMS["iters"], name="check_iters", label="sweeps of the check of r", default=2000,
            help="Sweeps of each chain that checks the cross-validated r on the data fitted (pcrp.analyses.cv)."),
    error=SettingError,
)

# The paper's protocol (its Sec. 3) and the quick check (`pcrp reproduce --quick`, the page's "quick": a few
# minutes for every experiment).
PAPER = REPRODUCE_PARAMS.preset(iters=20000, burn_in=10000, thin=5, alpha=1.0)
QUICK_CHECK = REPRODUCE_PARAMS.preset(iters=2000, burn_in=1000, thin=5, cv_iters=400, cv_burn_in=200, cv_thin=10,
                                      cv_folds=3, n_seeds=3, check_iters=1000)

N_CHAINS = REPRODUCE_PARAMS["n_chains"].default


def _declared(name):
    return REPRODUCE_PARAMS[name].default


@dataclass(frozen=True)
class Protocol:
    """Sweeps for the compared chains and for each cross-validation fit (each field a declaration of
    :data:`REPRODUCE_PARAMS`, checked when the protocol is made), and three switches: split-merge moves, the CV
    rule (:data:`pcrp.analyses.cv.CV_RULES`) and whether the CV r is checked with chains on the data fitted."""

    iters: int = _declared("iters")
    burn_in: int = _declared("burn_in")
    thin: int = _declared("thin")
    cv_iters: int = _declared("cv_iters")
    cv_burn_in: int = _declared("cv_burn_in")
    cv_thin: int = _declared("cv_thin")
    cv_folds: int = _declared("cv_folds")
    split_merge: bool = bool(RUN_PARAMS["split_merge"].default)
    n_seeds: int = _declared("n_seeds")  # data sets per simulated experiment (run_over_seeds)
    cv_repeats: int = _declared("cv_repeats")
    cv_rule: str = CV_RULES[0]
    cv_check: bool = True  # check the CV r with chains on the data fitted, with a margin (pcrp.analyses.cv.check_with_chains)
    check_iters: int = _declared("check_iters")
    alpha: float = _declared("alpha")  # the CRP's and the pCRP's

    def __post_init__(self):
        for f in fields(self):
            if f.name in REPRODUCE_PARAMS:
                object.__setattr__(self, f.name, REPRODUCE_PARAMS.check(f.name, getattr(self, f.name)))
        if self.cv_rule not in CV_RULES:
            raise SettingError(f"the cross-validation rule must be one of {', '.join(CV_RULES)} (got "
                               f"{self.cv_rule!r}).")
        for burn, sweeps in (("burn_in", "iters"), ("cv_burn_in", "cv_iters")):
            if getattr(self, burn) >= getattr(self, sweeps):
                raise SettingError(f"{burn} ({getattr(self, burn)}) must be smaller than {sweeps} "
                                   f"({getattr(self, sweeps)}): lower {burn} or run more sweeps.")


FULL = Protocol(**PAPER)
QUICK = Protocol(**QUICK_CHECK)

# The Reproduce page's work per press of Run, in estimated core-seconds (pcrp.sampling.compute.work_cost): 15 minutes of one
# core. Every quick run fits (the largest, Sim 1 / Sim 2 at N = 2000 on 3 data sets, needs about 80 core-seconds);
# the full protocol fits for MNIST, Old Faithful and the N = 300 simulations (10 data sets: about 8 core-minutes),
# and for up to 3 data sets of the N = 2000 simulations (about 4 core-minutes each); `pcrp reproduce` has no limit.
REPRODUCE_BUDGET = 900.0

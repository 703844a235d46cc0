"""The paper's experiments and the numbers it publishes (Lu, Li & Dunson, Tables 1 and 2 and Fig. 8b).

Each :class:`Experiment` names the data compared on, the separate data r is cross-validated on, the true number of
clusters (for the CRP-Oracle's alpha = K_true / ln N) and the numbers the paper publishes; :data:`TOLERANCE` is the
gap between ours and the paper's that a report explains.
"""

from dataclasses import dataclass

import numpy as np

from ... import data as data_mod
from .protocol import FULL, REPRODUCE_PARAMS

# A gap between our number and the paper's larger than this is explained on the page and in the report.
TOLERANCE = {"NMI": 0.03, "VI": 0.1, "K": 0.5}


@dataclass(frozen=True)
class Experiment:
    key: str
    title: str
    table: str
    k_true: int
    data: str  # "sim1", "sim2", "mnist" or "old-faithful"
    n: int
    n_cv: int
    paper: dict  # method -> {"NMI", "VI", "K", "K max"}; a missing entry is not legible / not published
    paper_note: str = ""
    gap_note: str = ""  # why our numbers may differ from the paper's


def _paper(nmi, vi, k, kmax):
    return {name: v for name, v in (("NMI", nmi), ("VI", vi), ("K", k), ("K max", kmax)) if v is not None}


_NOT_LEGIBLE = "pCRP rows are set in bold in the paper and did not survive its text extraction."
_SIM_TRUTH = ("The paper's Table 1 gives Sim 2's ground truth as K = 2, while its Fig. 2 shows three components and "
              "its oracle alpha (0.52 = 3 / ln 300) implies three; we use three. ")
_SIM_GAPS = ("The paper prints no simulation parameters. Ours are calibrated (see pcrp/datasets/README.md) so that our "
             "CRP-Oracle and CRP rows match the paper's within 0.03 NMI, 0.1 VI and 0.5 K on average over data "
             "sets; a paper number outside our spread between data sets means our simulation differs from the "
             "authors' there, or their one data set was unusual.")
_MNIST_GAPS = ("Our MNIST pipeline is not the authors': a 2-D spectral embedding (scikit-learn) of our bundled "
               "10,000-digit subset, and our NIW defaults; the number of clusters depends strongly on both, so our "
               "CRP and CRP-Oracle find more clusters than the paper's.")
EXPERIMENTS = {
    e.key: e for e in [
        Experiment("sim1-300", "Sim 1, N = 300", "Table 1", 3, "sim1", 300, 200,
                   {"CRP-Oracle": _paper(0.800, 0.669, 4.2, 8), "CRP": _paper(0.773, 0.795, 5.3, 12)}, _NOT_LEGIBLE,
                   _SIM_GAPS),
        Experiment("sim2-300", "Sim 2, N = 300", "Table 1", 3, "sim2", 300, 200,
                   {"CRP-Oracle": _paper(0.937, 0.210, 4.0, 9), "CRP": _paper(0.917, 0.287, 4.8, 12)},
                   _SIM_TRUTH + _NOT_LEGIBLE, _SIM_GAPS),
        Experiment("sim1-2000", "Sim 1, N = 2000", "Table 1", 3, "sim1", 2000, 200,
                   {"CRP-Oracle": _paper(0.812, 0.610, 4.0, 10), "CRP": _paper(0.782, 0.732, 5.8, 12)},
                   _NOT_LEGIBLE, _SIM_GAPS),
        Experiment("sim2-2000", "Sim 2, N = 2000", "Table 1", 3, "sim2", 2000, 200,
                   {"CRP-Oracle": _paper(0.962, 0.122, 4.1, 8), "CRP": _paper(0.940, 0.205, 5.6, 13)},
                   _SIM_TRUTH + _NOT_LEGIBLE, _SIM_GAPS),
        Experiment("mnist-1000", "MNIST digits 1-4, N = 1000", "Table 2", 4, "mnist", 1000, 1000,
                   {"CRP-Oracle": _paper(None, None, 4.37, 7), "CRP": _paper(None, 1.386, 4.58, 8)},
                   "Only these CRP numbers are legible in our copy of the paper. " + _NOT_LEGIBLE, _MNIST_GAPS),
        Experiment("mnist-3000", "MNIST digits 1-4, N = 3000", "Table 2", 4, "mnist", 3000, 1000,
                   {"CRP-Oracle": _paper(0.651, 1.400, 5.17, 8), "CRP": _paper(0.651, 1.402, 5.44, 9)},
                   _NOT_LEGIBLE, _MNIST_GAPS),
        Experiment("old-faithful", "Old Faithful, N = 172", "Old Faithful", 2, "old-faithful", 172, 100,
                   {"CRP-Oracle": {"K": 2}, "CRP": {"K": 4}, "pCRP": {"K": 2}},
                   "The paper reports the number of components found (its Fig. 8b), not a posterior mean; "
                   "there are no true labels, so no NMI or VI.",
                   "The paper's K is the number of components of one fit (its Fig. 8b), a whole number; ours is "
                   "the posterior mean over draws, so a method whose draws have 2, 3 or 4 clusters shows a "
                   "mean in between."),
    ]
}


def load_experiment_data(experiment, seed=0):
    """(data compared on, data r is cross-validated on) as :class:`pcrp.data.Dataset`.

    Simulations: fresh draws (the CV set with another seed). MNIST: two random
    subsets of the bundled digits, drawn independently, so they may overlap (the
    bundled file has 4,000 images of digits 1-4; N <= 2,000 draws from the first
    500 of each digit, as before the bundle grew, N = 3,000 from all 1,000).
    Old Faithful: a random 100 for CV and the other 172 compared, as in the paper.
    """
    e = experiment
    if e.data in data_mod.SIMULATIONS:
        return (data_mod.simulation(e.data, e.n, seed=seed),
                data_mod.simulation(e.data, e.n_cv, seed=seed + 1000))
    if e.data == "mnist":
        return data_mod.mnist(n=e.n, seed=seed), data_mod.mnist(n=e.n_cv, seed=seed + 1000)
    full = data_mod.old_faithful()
    order = np.random.default_rng(seed).permutation(full.n)
    return _subset(full, np.sort(order[e.n_cv:])), _subset(full, np.sort(order[:e.n_cv]))


def _subset(ds, rows):
    return data_mod.Dataset(name=ds.name, X=ds.X[rows], columns=ds.columns, description=ds.description,
                            standardized=ds.standardized, center=ds.center, scale=ds.scale,
                            source={**ds.source, "rows": rows.tolist()})


# Dimensions of each experiment's data (sim1 / sim2: 1-D draws; MNIST: the 2-D embedding of pcrp.data.mnist's
# defaults; Old Faithful: its two columns), for the work estimate before any data are loaded.
DATA_DIMS = {"sim1": 1, "sim2": 1, "mnist": 2, "old-faithful": 2}


def data_seeds(experiment, seed=0, n_seeds=None, protocol=None):
    """The data seeds an experiment runs on: ``n_seeds`` (default ``protocol.n_seeds``, the paper's protocol when
    ``protocol`` is None) consecutive seeds from ``seed`` for a simulation, ``[seed]`` for MNIST and Old Faithful
    (one fixed data set each)."""
    n = (protocol or FULL).n_seeds if n_seeds is None else REPRODUCE_PARAMS.check("n_seeds", n_seeds)
    return [seed + i for i in range(n)] if experiment.data in data_mod.SIMULATIONS else [seed]

"""pcrp: the powered Chinese restaurant process for Gaussian mixtures.

Library only: nothing here imports streamlit.
"""

from .chains import ChainSet, run_chains
from .model import CRP, NIW, PowerCRP, default_niw, make_prior, resolve_niw
from .partition import point_estimate, similarity_matrix
from .sampler import Chain, Sampler, run

__version__ = "0.1.0"

__all__ = [
    "CRP", "NIW", "PowerCRP", "default_niw", "make_prior", "resolve_niw",
    "Chain", "Sampler", "run", "ChainSet", "run_chains", "similarity_matrix", "point_estimate",
    "PCRPMixture", "__version__",
]


def __getattr__(name):
    # the estimator imports scikit-learn (seconds): only when asked for
    if name == "PCRPMixture":
        from .estimator import PCRPMixture

        return PCRPMixture
    raise AttributeError(f"module 'pcrp' has no attribute {name!r}")

"""pcrp: the powered Chinese restaurant process for Gaussian mixtures.

Library only: nothing here imports streamlit.
"""

from .model import CRP, NIW, PowerCRP, default_niw, make_prior, resolve_niw
from .sampler import Chain, Sampler, run

__version__ = "0.1.0"

__all__ = [
    "CRP", "NIW", "PowerCRP", "default_niw", "make_prior", "resolve_niw",
    "Chain", "Sampler", "run", "__version__",
]

"""The model, in one import: the partition priors and the NIW base measure.

It gathers, under the names they have always had here (``from pcrp.model import PRIORS, NIW``):

- :mod:`pcrp.model.gibbs_prior`: what every Gibbs-type prior shares, p(partition) = V_N(K) prod_k W(n_k) as two log
  tables (:class:`PriorSpec`, :class:`GibbsPrior`, :func:`log_weight_table`, :func:`prior_tables`);
- :mod:`pcrp.model.priors`: the built-in priors (CRP, pCRP, Pitman-Yor, MFM, sparse finite mixture) and their
  declared parameters;
- :mod:`pcrp.model.registry`: the registry :data:`PRIORS`, :func:`make_prior`, and a prior of your own
  (:func:`register_gcrp`, :func:`register_prior`, the ``pcrp.priors`` entry points; docs/adding_a_prior.md);
- :mod:`pcrp.model.niw`: the NIW hyper-parameters, their declarations, defaults and the double-precision check.
"""

from ..basics.errors import ModelError
from .gibbs_prior import GibbsPrior, Growth, PriorSpec, log_weight_table, prior_tables
from .niw import (
    COND_MAX, COVARIANCE_TYPES, NIW, NIW_PARAMS, NU0_MAX, WITHIN_SCALE, check_covariance_type, check_niw_for_data,
    default_niw, resolve_niw,
)
from ..basics.params import Declarations, Param
from .registry import (
    ENTRY_POINT_GROUP, PRIORS, PriorPluginWarning, check_prior, make_prior, prior_of, register_gcrp, register_prior,
    unregister_prior,
)
from .priors import (
    ALPHA, ALPHA_MAX, BUILTIN_PRIORS, CRP, DEFAULT_PRIOR, DEFAULT_R, GAMMA_MAX, K_MAX, K_MAX_MAX, LAM, LAM_MAX, MFM,
    MFM_GAMMA, PY_ALPHA, R, R_GRID, R_MAX, SFM_GAMMA, SIGMA, PitmanYor, PowerCRP, SparseFiniteMixture,
)

__all__ = [
    "ModelError", "Declarations", "Param",
    "GibbsPrior", "Growth", "PriorSpec", "log_weight_table", "prior_tables",
    "ENTRY_POINT_GROUP", "PRIORS", "PriorPluginWarning", "check_prior", "make_prior", "prior_of", "register_gcrp",
    "register_prior", "unregister_prior",
    "ALPHA", "ALPHA_MAX", "BUILTIN_PRIORS", "CRP", "DEFAULT_PRIOR", "DEFAULT_R", "GAMMA_MAX", "K_MAX", "K_MAX_MAX",
    "LAM", "LAM_MAX", "MFM", "MFM_GAMMA", "PY_ALPHA", "R", "R_GRID", "R_MAX", "SFM_GAMMA", "SIGMA", "PitmanYor",
    "PowerCRP", "SparseFiniteMixture",
    "COND_MAX", "COVARIANCE_TYPES", "NIW", "NIW_PARAMS", "NU0_MAX", "WITHIN_SCALE", "check_covariance_type",
    "check_niw_for_data", "default_niw", "resolve_niw",
]

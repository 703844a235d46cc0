"""The NIW base measure: Sigma ~ IW(S0, nu0), mu | Sigma ~ N(m0, Sigma / kappa0), its declared parameters, the
data-driven defaults and the check that the sampler's double-precision arithmetic supports them on given data.
"""

from dataclasses import dataclass

import numpy as np

from ..basics.errors import ModelError
from ..basics.params import Declarations, Param


# Bounds that keep the sampler's double-precision arithmetic meaningful, for data sets up to the
# 10,000 points x 50 columns that pcrp.data accepts. Each keeps the rounding error of the log joint
# below 1e-6 nats (checked in tests/test_model.py; the pCRP's R_MAX is in pcrp.model.priors):
# - NU0_MAX: the marginal likelihood holds log Gamma_d(nu_n / 2) - log Gamma_d(nu0 / 2), a difference
#   of two huge numbers; at d = 50 its error is 5e-8 at nu0 = 1e6, 4e-7 at 1e7 and 6e-6 at 1e8.
# - COND_MAX: the kernels update S_n^{-1} by rank-one steps, which lose about log10(cond(S_n))
#   digits; below 1e12 a recomputation agrees with them to about 1e-13, while at 6e16 (S0 = 1e-14 I
#   on standardised data) the cached log-determinants are off by 25 (see check_niw_for_data).
NU0_MAX = 1e7
COND_MAX = 1e12

# The clusters' covariance types, with scikit-learn's names (BayesianGaussianMixture's covariance_type) and meanings.
COVARIANCE_TYPES = {
    "full": "each cluster its own full covariance matrix (Normal-Inverse-Wishart)",
    "diag": "each cluster its own diagonal covariance, one variance per column (a Normal-Gamma per column)",
    "spherical": "each cluster its own single variance, the same in every column (Normal-Inverse-Gamma)",
}
# Why "tied" is not offered: the message a user who asks for it reads.
TIED_REFUSED = (
    'covariance_type "tied" (one covariance shared by all clusters) is not offered: a collapsed sampler integrates '
    "each cluster's parameters out over that cluster's points alone, so that the data's likelihood is a product of "
    "one marginal per cluster; a shared covariance ties every cluster's marginal to every other's, the product "
    "breaks, and a point's move would have to re-score all the data. Use \"full\" (each cluster its own), "
    '"diag" or "spherical".'
)


def check_covariance_type(value):
    """``value`` as one of COVARIANCE_TYPES, or a ModelError naming the choices ("tied": TIED_REFUSED)."""
    if isinstance(value, str) and value.strip().lower() == "tied":
        raise ModelError(TIED_REFUSED)
    if not isinstance(value, str) or value.strip().lower() not in COVARIANCE_TYPES:
        raise ModelError(f"covariance_type must be one of {', '.join(map(repr, COVARIANCE_TYPES))} "
                         f"(got {value!r}).")
    return value.strip().lower()


@dataclass(frozen=True)
class NIW:
    """The clusters' conjugate base measure: with covariance_type "full", Sigma ~ IW(S0, nu0) and
    mu | Sigma ~ N(m0, Sigma / kappa0) (Normal-Inverse-Wishart); "diag" and "spherical" keep m0 and kappa0 and give
    each column's variance the prior that the NIW gives it, sigma_j^2 ~ Inverse-Gamma((nu0 - d + 1) / 2,
    S0_jj / 2): independently per column ("diag", S0 diagonal) or one variance shared by the columns
    ("spherical", S0 = s * identity). docs/design.md section 1.2 has their closed forms; at d = 1 the three are
    one model.

    m0: (d,) prior mean of cluster means.
    kappa0: prior strength of m0, in pseudo-observations (> 0).
    nu0: degrees of freedom of the inverse Wishart (> d - 1).
    S0: (d, d) symmetric positive definite scale; E[Sigma] = S0 / (nu0 - d - 1) when nu0 > d + 1.
    covariance_type: "full", "diag" or "spherical" (COVARIANCE_TYPES).
    """

    m0: np.ndarray
    kappa0: float
    nu0: float
    S0: np.ndarray
    covariance_type: str = "full"

    def __post_init__(self):
        m0 = np.atleast_1d(np.asarray(self.m0, dtype=float))
        d = m0.shape[0]
        if m0.ndim != 1 or not np.all(np.isfinite(m0)):
            raise ModelError("m0 must be a finite vector with one entry per column.")
        S0 = np.asarray(self.S0, dtype=float)
        if S0.ndim == 0:
            S0 = float(S0) * np.eye(d)
        if S0.shape != (d, d):
            raise ModelError(f"S0 must be a {d} x {d} matrix to match m0 (got shape {S0.shape}).")
        if not np.all(np.isfinite(S0)) or not np.allclose(S0, S0.T):
            raise ModelError("S0 must be a finite symmetric matrix.")
        if np.linalg.eigvalsh(S0).min() <= 0:
            raise ModelError("S0 must be positive definite (use a value > 0 for S0 = value * identity).")
        kappa0 = NIW_PARAMS.check("kappa0", self.kappa0)
        try:
            nu0 = float(self.nu0)
        except (TypeError, ValueError):
            raise ModelError(f"nu0 must be a number (got {self.nu0!r}).") from None
        if not np.isfinite(nu0) or nu0 <= d - 1:
            raise ModelError(f"nu0 must be > d - 1 = {d - 1} for d = {d} columns (got {nu0:g}).")
        nu0 = NIW_PARAMS.check("nu0", nu0)
        covariance_type = check_covariance_type(self.covariance_type)
        if covariance_type == "diag" and np.any(S0 != np.diag(np.diag(S0))):
            raise ModelError('With covariance_type "diag" S0 must be diagonal (each column its own variance prior): '
                             "set its off-diagonal entries to 0 or give S0 as one number.")
        if covariance_type == "spherical" and np.any(S0 != S0[0, 0] * np.eye(d)):
            raise ModelError('With covariance_type "spherical" S0 must be one number times the identity (one '
                             "variance shared by the columns): give S0 as that number.")
        object.__setattr__(self, "covariance_type", covariance_type)
        object.__setattr__(self, "m0", m0)
        object.__setattr__(self, "S0", S0)
        object.__setattr__(self, "kappa0", kappa0)
        object.__setattr__(self, "nu0", nu0)

    @property
    def dim(self):
        return self.m0.shape[0]

    def as_dict(self):
        return {
            "m0": self.m0.tolist(),
            "kappa0": self.kappa0,
            "nu0": self.nu0,
            "S0": self.S0.tolist(),
            "covariance_type": self.covariance_type,
        }


# The NIW's declared parameters. m0 (a vector, default the column means) and S0 given as a matrix are checked by
# NIW itself; S0 as one number means S0 * identity and is declared here. nu0 > d - 1 depends on the data and is
# checked by NIW; its declared bounds are those that hold for every d.
NIW_PARAMS = Declarations(
    "the NIW prior",
    Param("kappa0", "prior strength kappa0", 0.25, 0.0, 1e300, False, True,
          "Prior strength of m0, in pseudo-points; the default 0.25 = WITHIN_SCALE^2 lets cluster means spread like "
          "the data.",
          why_high="a larger value is not a finite double-precision number."),
    Param("nu0", "degrees of freedom nu0", None, 0.0, NU0_MAX, False, True,
          "Inverse-Wishart degrees of freedom, > d - 1; default d + 3.", constraint="nu0 > d - 1",
          why_high=("beyond it the log-gamma terms of the marginal likelihood lose their decimals in double "
                    "precision. The default is d + 3.")),
    Param("S0", "scale S0", None, 0.0, 1e300, False, True,
          "Inverse-Wishart scale as S0 * identity; default 0.25 * v * nu0 with v the mean column variance.",
          why_high="a larger value is not a finite double-precision number.", cli="--s0"),
    error=ModelError,
)


# The data-driven default recipe (documented in docs/model.md and in the app):
#   v     = mean of the column variances of X (1 for standardised data)
#   m0    = column means of X
#   nu0   = d + 3
#   S0    = WITHIN_SCALE**2 * v * nu0 * I      (the authors' S0 = s^2 nu0 I with s^2 = WITHIN_SCALE^2 v)
#   kappa0 = WITHIN_SCALE**2                   (the authors' s^2 / mu_scale^2 with mu_scale^2 = v)
# i.e. a cluster's spread is a priori about WITHIN_SCALE of the data's spread and
# cluster means are spread like the data.
WITHIN_SCALE = 0.5
assert NIW_PARAMS["kappa0"].default == WITHIN_SCALE**2


def default_niw(X, covariance_type="full"):
    """The documented data-driven NIW defaults for data ``X`` (N, d), the same for every covariance type (each
    column's variance gets the same prior whatever the type)."""
    X = np.asarray(X, dtype=float)
    d = X.shape[1]
    v = float(np.mean(X.var(axis=0))) if X.shape[0] > 1 else 1.0
    if not v > 0:
        v = 1.0
    nu0 = d + 3.0
    return NIW(
        m0=X.mean(axis=0),
        kappa0=NIW_PARAMS["kappa0"].default,
        nu0=nu0,
        S0=WITHIN_SCALE**2 * v * nu0 * np.eye(d),
        covariance_type=covariance_type,
    )


def resolve_niw(X, m0=None, kappa0=None, nu0=None, S0=None, covariance_type="full"):
    """Defaults from :func:`default_niw`, each overridden where a value is given.

    ``S0`` may be a scalar (meaning S0 * identity) or a (d, d) matrix.
    """
    base = default_niw(X, check_covariance_type(covariance_type))
    d = base.dim
    if m0 is not None:
        m0 = np.atleast_1d(np.asarray(m0, dtype=float))
        if m0.shape != (d,):
            raise ModelError(f"m0 needs {d} values, one per column (got {m0.size}).")
    if S0 is not None and np.ndim(S0) == 0:
        S0 = NIW_PARAMS.check("S0", S0) * np.eye(d)
    niw = NIW(
        m0=base.m0 if m0 is None else m0,
        kappa0=base.kappa0 if kappa0 is None else kappa0,
        nu0=base.nu0 if nu0 is None else nu0,
        S0=base.S0 if S0 is None else S0,
        covariance_type=base.covariance_type,
    )
    check_niw_for_data(niw, X)
    return niw


def check_niw_for_data(niw, X):
    """Raise ModelError unless the sampler's double-precision arithmetic supports ``niw`` on ``X`` (N, d).

    Every cluster's posterior scale S_n = S0 + C + (kappa0 n / kappa_n)(xbar - m0)(xbar - m0)^T lies
    between S0 and S0 + sum_i (x_i - m0)(x_i - m0)^T over all points (as kappa0 / kappa_n < 1), so its
    condition number is at most (lmax(S0) + sum_i |x_i - m0|^2) / lmin(S0). That bound must be finite
    and at most COND_MAX: m0 far from the data, or S0 tiny next to the data's spread, breaks it.
    """
    X = np.asarray(X, dtype=float)
    eig = np.linalg.eigvalsh(niw.S0)
    with np.errstate(over="ignore", invalid="ignore"):
        spread = float(np.sum((X - niw.m0) ** 2))
        bound = (eig[-1] + spread) / eig[0]
    if not np.isfinite(spread):
        raise ModelError(
            "The squared distances of the points from m0 overflow double precision: move m0 nearer the data "
            "(its default is the column means) or standardise the data."
        )
    if not bound <= COND_MAX:
        raise ModelError(
            f"S0 and m0 do not fit the data's scale in double precision: a cluster's scale matrix could reach a "
            f"condition number of {bound:.2g} (S0's eigenvalues {eig[0]:.2g} to {eig[-1]:.2g}; the points' "
            f"squared distances from m0 sum to {spread:.2g}), above the supported {COND_MAX:g}. "
            "Make S0 larger or move m0 nearer the data."
        )

"""The built-in Gibbs-type priors: CRP, powered CRP, Pitman-Yor, MFM and the sparse finite mixture, with their
declared parameters and their registry entries (:data:`BUILTIN_PRIORS`).

Each is a frozen dataclass over :class:`pcrp.model.gibbs_prior.GibbsPrior` giving its log tables W(n) and V_N(K)
(see that module). For the pCRP, W(n) = ((n - 1)!)^r and V_N(K) = alpha^K / Z with Z unknown, so its Gibbs full
conditionals are those of p(z) proportional to alpha^K prod_k ((N_k - 1)!)^r. A prior of your own needs no class:
see :func:`pcrp.register_prior` and :func:`pcrp.register_gcrp` (docs/adding_a_prior.md).
"""

import math
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from ..basics.errors import ModelError
from .gibbs_prior import SPECS, GibbsPrior, Growth, PriorSpec, _ints, _log_rising
from ..basics.params import Param
from scipy.special import gammaln


# R_MAX keeps the sampler's double-precision arithmetic meaningful for data sets up to the 10,000 points that
# pcrp.data accepts, the rounding error of the log joint below 1e-6 nats (checked in tests/test_model.py): the
# pCRP's prior term r log((n - 1)!) is a running sum of r log j; at n = 10,000 its error is 2.4e-8 at r = 100,
# 2.5e-7 at r = 1,000 and 5e-6 at r = 10,000 (r = 1e308 overflows it to inf); at n = 1,000,000 and r = 1,000 it
# is 3.6e-4 nats on a sum of 1.3e10 (2.8e-14 relatively).
R_MAX = 1000.0

# The defaults, each defined once. DEFAULT_R is a mild power for data without a cross-validated r (a CSV, the
# estimator): at r = 1.1 (2 chains of 2,000 sweeps) mean K is Old Faithful 2.5 (CRP 3.6-3.7), Sim 1 3.7 (CRP
# 5.4-5.5), Sim 2 3.6, MNIST 1-4 6.5 (CRP 7.5-7.6). It is not below every threshold (Sim 1's two overlapping
# components merge at r* = 0.95-1.08 on its merge path), so it is never a silent choice: built-in data sets use
# their shipped CV r (pcrp.analyses.cv.builtin_r) and every output says where r came from.
DEFAULT_R = 1.1
# The prior of `pcrp run`, PCRPMixture and the Explorer's second row: the paper's.
DEFAULT_PRIOR = "pcrp"
# GAMMA_MAX (MFM; the sparse mixture's log (k_max gamma)^(N) likewise): V_N(t) needs
# log (gamma k)^(N) = lgamma(gamma k + N) - lgamma(gamma k) for k up to about N + 2 lam; its rounding error is
# about 1e-16 (gamma k + N) log(gamma k + N), below 1e-6 nats for gamma up to 1000 at N = 10,000. LAM_MAX: the
# sum over k runs to about t + 2 lam + 40 terms for each t.
GAMMA_MAX = 1000.0
LAM_MAX = 1000.0
# ALPHA_MAX: with alpha = 1e6 a new cluster outweighs a cluster of a million points under every prior here, so
# larger values describe the same "every point alone" prior. K_MAX_MAX: pcrp reads at most 1,000,000 rows
# (pcrp.data.MAX_ROWS), so more components than that change nothing; the sparse mixture's tables hold k_max.
ALPHA_MAX = 1e6
K_MAX_MAX = 1_000_000
_ALPHA_WHY = ("beyond it a new cluster outweighs a cluster of a million points, so every point sits alone; "
              "alpha near 1 is the usual choice.")

ALPHA = Param("alpha", "concentration alpha", 1.0, 0.0, ALPHA_MAX, False, True,
              "Larger alpha opens new clusters more often; the CRP's E[K_N] is about alpha log N.",
              why_high=_ALPHA_WHY)
R = Param("r", "power r", DEFAULT_R, 0.0, R_MAX, False, True,
          "r = 1 is the CRP; r > 1 penalises small clusters (the paper's powers lie between 1 and 2).",
          why_high=("beyond it the prior's r log((n - 1)!) terms lose the log joint's decimals in double precision "
                    "(r = 1e308 overflows them). The paper's powers lie between 1 and 2."))
# The grid of r that cross validation scans (the paper's Sec. 2.3 starts at 1 + eps): 1.01, 1.05, 1.10, ..., 2.00.
R_GRID = tuple(float(v) for v in np.round(np.r_[1.01, np.arange(1.05, 2.0001, 0.05)], 2))
PY_ALPHA = Param("alpha", "strength alpha", ALPHA.default, -1.0, ALPHA_MAX, False, True,
                 "Larger alpha opens new clusters more often; alpha > -sigma.", constraint="alpha > -sigma",
                 why_high=_ALPHA_WHY)
SIGMA = Param("sigma", "discount sigma", 0.25, 0.0, 1.0, True, False,
              "sigma = 0 is the CRP; larger sigma gives more, smaller clusters (K grows like N^sigma).")
MFM_GAMMA = Param("gamma", "Dirichlet weight gamma", 1.0, 0.0, GAMMA_MAX, False, True,
                  "Symmetric Dirichlet(gamma) weights of the K components; smaller gamma favours unequal sizes.",
                  why_high=("beyond it log (gamma k)^(N) loses the log joint's decimals in double precision at "
                            "N = 10,000; gamma = 1 is the usual choice."))
LAM = Param("lam", "Poisson mean lam", 1.0, 0.0, LAM_MAX, False, True,
            "K - 1 ~ Poisson(lam): the prior mean of K is lam + 1.",
            why_high="V_N sums about 2 lam terms per K; use a value up to 1000 (prior mean K up to 1001).")
SFM_GAMMA = Param("gamma", "Dirichlet weight gamma", 0.01, 0.0, GAMMA_MAX, False, True,
                  "Symmetric Dirichlet(gamma) over k_max components; small gamma (0.01) empties the extra ones.",
                  why_high=("beyond it log (k_max gamma)^(N) loses the log joint's decimals in double precision; "
                            "small values (0.01) empty the extra components."))
K_MAX = Param("k_max", "components k_max", 10, 1.0, K_MAX_MAX, True, True,
              "The overfitted number of components: at most k_max clusters.", integer=True,
              why_high="pcrp reads at most 1,000,000 rows, so more components than that change nothing.")


def _occupied(k, gamma, n):
    """E[occupied components after N = 1..n draws] for k components with symmetric Dirichlet(gamma) weights."""
    i = np.arange(n, dtype=float)
    p_empty = np.cumprod(((k - 1) * gamma + i) / (k * gamma + i))
    return k * (1.0 - p_empty)


def _rising_k(alpha, sigma, n):
    """Exact E[K_N], N = 1..n, of the CRP (sigma = 0) and Pitman-Yor seating: E[K_{N+1}] = E[K_N] + (alpha + sigma
    E[K_N]) / (alpha + N), K_1 = 1 (the new-table probability is linear in K)."""
    out = np.empty(n)
    k = 1.0
    for i in range(n):
        out[i] = k
        k += (alpha + sigma * k) / (alpha + i + 1)
    return out


@dataclass(frozen=True)
class CRP(GibbsPrior):
    """Chinese restaurant process: W(n) = (n - 1)!, V_N(K) = alpha^K / alpha^(N); g(n) = n."""

    alpha: float = ALPHA.default
    name: str = field(default="crp", init=False, repr=False)

    def __post_init__(self):
        self._validate()

    def log_weight(self, n):
        return np.log(np.asarray(n, dtype=float))

    def log_w1(self):
        return 0.0

    def log_w(self, n):
        return gammaln(np.asarray(n, dtype=float))

    def log_v(self, N, K):
        return _ints(K) * np.log(self.alpha) - _log_rising(self.alpha, N)

    def log_new_weight(self, N, K):
        return np.where(_ints(K) == 0, 0.0, np.log(self.alpha))

    def growth(self, n):
        return Growth(_rising_k(self.alpha, 0.0, int(n)), None, f"grows like alpha log N (alpha = {self.alpha:g})",
                      "E[K_N] = sum over i < N of alpha / (alpha + i)")


@dataclass(frozen=True)
class PowerCRP(GibbsPrior):
    """Powered CRP: W(n) = ((n - 1)!)^r, V_N(K) = alpha^K / Z with Z unknown (taken as 1); g(n) = n^r.
    r = 1 is the CRP (up to the normaliser); r > 1 penalises small clusters."""

    alpha: float = ALPHA.default
    r: float = R.default
    name: str = field(default="pcrp", init=False, repr=False)

    def __post_init__(self):
        self._validate()

    def log_weight(self, n):
        return self.r * np.log(np.asarray(n, dtype=float))

    def log_w1(self):
        return 0.0

    def log_w(self, n):
        return self.r * gammaln(np.asarray(n, dtype=float))

    def log_v(self, N, K):
        return _ints(K) * np.log(self.alpha)

    def log_new_weight(self, N, K):
        return np.where(_ints(K) == 0, 0.0, np.log(self.alpha))

    def growth(self, n):
        if self.r == 1:
            return CRP(self.alpha).growth(n)
        return Growth(None, None, "",
                      "no closed form is known: the pCRP's seating weights N_k^r make K_N's law order dependent, "
                      "so the curve is simulated only")


@dataclass(frozen=True)
class PitmanYor(GibbsPrior):
    """Pitman-Yor process: W(n) = (1 - sigma)^(n-1), V_N(K) = prod_{i<K} (alpha + i sigma) / (alpha + 1)^(N-1);
    existing n - sigma, new alpha + K sigma. sigma = 0 is the CRP."""

    alpha: float = PY_ALPHA.default
    sigma: float = SIGMA.default
    name: str = field(default="py", init=False, repr=False)

    def __post_init__(self):
        self._validate()
        if not self.alpha > -self.sigma:
            raise ModelError(
                f"alpha must be > -sigma = {-self.sigma:g} for the Pitman-Yor process (got alpha = {self.alpha:g}, "
                f"sigma = {self.sigma:g}): otherwise the new-cluster weight alpha + K sigma is not positive. "
                "Raise alpha or sigma.")

    def log_weight(self, n):
        return np.log(np.asarray(n, dtype=float) - self.sigma)

    def log_w1(self):
        return 0.0

    def log_w(self, n):
        return gammaln(np.asarray(n, dtype=float) - self.sigma) - gammaln(1.0 - self.sigma)

    def log_v(self, N, K):
        K = _ints(K)
        top = int(K.max(initial=1))
        steps = np.log(self.alpha + self.sigma * np.arange(1, top, dtype=float))  # i = 1 .. top - 1
        cum = np.concatenate(([0.0, 0.0], np.cumsum(steps)))  # cum[K] = sum_{i<K} log(alpha + i sigma)
        return cum[K] - _log_rising(self.alpha + 1.0, N - 1)

    def log_new_weight(self, N, K):
        K = _ints(K)
        return np.where(K == 0, 0.0, np.log(self.alpha + self.sigma * np.maximum(K, 1)))

    def growth(self, n):
        exact = _rising_k(self.alpha, self.sigma, int(n))
        if self.sigma == 0:
            return Growth(exact, None, f"grows like alpha log N (alpha = {self.alpha:g})",
                          "sigma = 0 is the CRP: E[K_N] = sum over i < N of alpha / (alpha + i)")
        return Growth(exact, None, f"grows like N^sigma = N^{self.sigma:g}",
                      "E[K_N] = (alpha / sigma) [Gamma(alpha + sigma + N) Gamma(alpha) / "
                      "(Gamma(alpha + N) Gamma(alpha + sigma)) - 1]")


# log V_N(t) of the MFM for t = 1..t_max, cached per (gamma, lam, N, t_max): a sampler builds one table per data
# set, the seating simulation one small table per N.
_MFM_CHUNK = 1 << 20  # entries of the (t, k) grid evaluated at once


@lru_cache(maxsize=4096)
def _mfm_log_v(gamma, lam, N, t_max):
    """Miller & Harrison (2018): V_N(t) = sum_{k >= t} k_(t) / (gamma k)^(N) p_K(k), p_K(k) = Poisson(k - 1; lam).

    For each t the terms k = t, t + 1, ... are summed in logs until the rest is provably negligible: for k' >= k
    the ratio of consecutive terms is at most rho(k) = (k + 1) / (k + 1 - t) * lam / k (the rising-factorial
    factor is <= 1, the other two fall with k), so once rho(k) < 1 the tail after term k is at most
    term(k) rho / (1 - rho); the sum stops when that is below 1e-17 of the largest term. Read-only array.
    """
    t_all = np.arange(1, t_max + 1, dtype=float)
    out = np.empty(t_max)
    span = 64
    start = 0
    while start < t_max:
        rows = max(1, _MFM_CHUNK // span)
        t = t_all[start:start + rows, None]
        k = t + np.arange(span, dtype=float)
        log_terms = (gammaln(k + 1) - gammaln(k - t + 1)
                     - (gammaln(gamma * k + N) - gammaln(gamma * k))
                     + (k - 1) * np.log(lam) - lam - gammaln(k))
        top = log_terms.max(axis=1)
        k_last, last = k[:, -1], log_terms[:, -1]
        rho = (k_last + 1) / (k_last + 1 - t[:, 0]) * lam / k_last
        with np.errstate(divide="ignore", invalid="ignore"):
            tail = last + np.log(rho) - np.log1p(-rho)
        if not np.all((rho < 1) & (tail < top - 39.2)):  # e^-39.2 = 1e-17
            span *= 2
            if span > 1 << 22:  # not reached for lam <= LAM_MAX (about 2 lam + 100 terms suffice)
                raise ModelError(f"The MFM's V_N did not converge (gamma = {gamma:g}, lam = {lam:g}, N = {N}).")
            continue
        out[start:start + rows] = top + np.log(np.exp(log_terms - top[:, None]).sum(axis=1))
        start += rows
    out.flags.writeable = False
    return out


class _DirichletBlocks(GibbsPrior):
    """W(n) = gamma^(n), the block weight of symmetric Dirichlet(gamma) mixture weights (MFM and the sparse
    finite mixture): existing block n + gamma."""

    def log_weight(self, n):
        return np.log(np.asarray(n, dtype=float) + self.gamma)

    def log_w1(self):
        return float(np.log(self.gamma))

    def log_w(self, n):
        return gammaln(np.asarray(n, dtype=float) + self.gamma) - gammaln(self.gamma)


@dataclass(frozen=True)
class MFM(_DirichletBlocks):
    """Mixture of finite mixtures (Miller & Harrison 2018): K - 1 ~ Poisson(lam), weights ~ Dirichlet(gamma, ...).
    W(n) = gamma^(n), V_N(t) = sum_{k >= t} k_(t) / (gamma k)^(N) p_K(k); existing n + gamma, new
    gamma V_N(K + 1) / V_N(K)."""

    gamma: float = MFM_GAMMA.default
    lam: float = LAM.default
    name: str = field(default="mfm", init=False, repr=False)

    def __post_init__(self):
        self._validate()

    def log_v(self, N, K):
        K = _ints(K)
        t_max = max(8, 1 << int(K.max(initial=1) - 1).bit_length())  # powers of two: few cached tables
        table = _mfm_log_v(float(self.gamma), float(self.lam), int(N), t_max)
        return table[K - 1]

    def growth(self, n):
        # the sparse mixture's E[K_N] given k components, averaged over K - 1 ~ Poisson(lam)
        lam, n = self.lam, int(n)
        exact = np.zeros(n)
        for k in range(1, int(lam + 20 * math.sqrt(lam) + 60) + 1):
            exact += math.exp((k - 1) * math.log(lam) - lam - math.lgamma(k)) * _occupied(k, self.gamma, n)
        return Growth(exact, lam + 1.0, f"is bounded: rises to E[K] = lam + 1 = {lam + 1:g} as N grows",
                      "E[K_N] = sum over k of Poisson(k - 1; lam) k [1 - (gamma (k - 1))^(N) / (gamma k)^(N)]")


@dataclass(frozen=True)
class SparseFiniteMixture(_DirichletBlocks):
    """Sparse finite mixture (Malsiner-Walli, Fruehwirth-Schnatter & Gruen 2016): k_max components with
    symmetric Dirichlet(gamma) weights, collapsed over weights and labels. W(n) = gamma^(n),
    V_N(K) = k_max! / (k_max - K)! Gamma(k_max gamma) / Gamma(N + k_max gamma) for K <= k_max, else 0; existing
    n + gamma, new (k_max - K) gamma."""

    gamma: float = SFM_GAMMA.default
    k_max: int = K_MAX.default
    name: str = field(default="sfm", init=False, repr=False)

    def __post_init__(self):
        self._validate()

    @property
    def max_blocks(self):
        return self.k_max

    def log_v(self, N, K):
        K = _ints(K)
        M = self.k_max
        top = int(min(K.max(initial=1), M))
        falling = np.concatenate(([0.0], np.cumsum(np.log(M - np.arange(top, dtype=float)))))  # log M_(K)
        out = np.full(K.shape, -np.inf)
        ok = K <= M
        out[ok] = falling[K[ok]] - _log_rising(M * self.gamma, N)
        return out

    def log_new_weight(self, N, K):
        K = _ints(K)
        with np.errstate(divide="ignore"):
            out = np.log(self.gamma) + np.log(np.maximum(self.k_max - K, 0).astype(float))
        return np.where(K == 0, 0.0, out)

    def growth(self, n):
        return Growth(_occupied(self.k_max, self.gamma, int(n)), float(self.k_max),
                      f"is bounded by k_max = {self.k_max}",
                      "E[K_N] = k_max [1 - (gamma (k_max - 1))^(N) / (gamma k_max)^(N)]")



# The registry entries of the built-in priors, in the order they are listed everywhere (pcrp.model.PRIORS).
BUILTIN_PRIORS = (
    PriorSpec("crp", "CRP", CRP, (ALPHA,),
              "Chinese restaurant process (Dirichlet process): K grows like alpha log N.", True,
              reference=True),
    PriorSpec("pcrp", "pCRP", PowerCRP, (ALPHA, R),
              "Powered CRP (Lu, Li & Dunson): cluster sizes raised to the power r; its normaliser is unknown.",
              False, tuned="r", tune_grid=R_GRID),
    PriorSpec("py", "Pitman-Yor", PitmanYor, (PY_ALPHA, SIGMA),
              "Pitman-Yor process: more, smaller clusters than the CRP; K grows like N^sigma.", True),
    PriorSpec("mfm", "MFM", MFM, (MFM_GAMMA, LAM),
              "Mixture of finite mixtures (Miller & Harrison 2018): a prior on K; consistent for K.", True),
    PriorSpec("sfm", "Sparse finite mixture", SparseFiniteMixture, (SFM_GAMMA, K_MAX),
              "Overfitted mixture of k_max components (Malsiner-Walli et al. 2016) whose small Dirichlet "
              "weight gamma empties the extra ones.", True),
)
SPECS.update((spec.name, spec) for spec in BUILTIN_PRIORS)

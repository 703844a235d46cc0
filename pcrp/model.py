"""The model: the partition priors (Gibbs-type: CRP, pCRP, Pitman-Yor, MFM, sparse finite mixture) and the
NIW base measure.

Every prior has p(partition of N items) = V_N(K) prod_k W(n_k) (DESIGN.md section 2) and reaches the kernels
only as tables: log W(n + 1) / W(n) per block size (``log_weight_table``) and, per number of blocks K, the
new-block weight log W(1) V_N(K + 1) / V_N(K) and log V_N(K) + K log W(1) (``prior_tables``). A new prior is a
class with ``log_weight``, ``log_w1``, ``log_w`` and ``log_v`` and one ``PRIORS`` registry entry; no kernel
change. For the pCRP, W(n) = ((n - 1)!)^r and V_N(K) = alpha^K / Z with Z unknown, so its Gibbs full
conditionals are those of p(z) proportional to alpha^K prod_k ((N_k - 1)!)^r.
"""

import math
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
from scipy.special import gammaln

from .errors import ModelError
from .params import Declarations, Param


# Bounds that keep the sampler's double-precision arithmetic meaningful, for data sets up to the
# 10,000 points x 50 columns that pcrp.data accepts. Each keeps the rounding error of the log joint
# below 1e-6 nats (checked in tests/test_model.py):
# - R_MAX: the pCRP's prior term r log((n - 1)!) is a running sum of r log j; at n = 10,000 its error
#   is 2.4e-8 at r = 100, 2.5e-7 at r = 1,000 and 5e-6 at r = 10,000 (r = 1e308 overflows it to inf);
#   at n = 1,000,000 and r = 1,000 it is 3.6e-4 nats on a sum of 1.3e10 (2.8e-14 relatively).
# - NU0_MAX: the marginal likelihood holds log Gamma_d(nu_n / 2) - log Gamma_d(nu0 / 2), a difference
#   of two huge numbers; at d = 50 its error is 5e-8 at nu0 = 1e6, 4e-7 at 1e7 and 6e-6 at 1e8.
# - COND_MAX: the kernels update S_n^{-1} by rank-one steps, which lose about log10(cond(S_n))
#   digits; below 1e12 a recomputation agrees with them to about 1e-13, while at 6e16 (S0 = 1e-14 I
#   on standardised data) the cached log-determinants are off by 25 (see check_niw_for_data).
R_MAX = 1000.0
NU0_MAX = 1e7
COND_MAX = 1e12


# ---------------------------------------------------------------------------------------------------------------
# Gibbs-type priors (DESIGN.md section 2). Every prior here has an exchangeable partition probability function
#
#     p(partition of N items into blocks of sizes n_1..n_K) = V_N(K) prod_k W(n_k),
#
# so a prior is two log tables for the current N: log W(n) per block size and log V_N(K) per number of blocks.
# The Gibbs conditional of one item (taken out and put back, N fixed) is W(n + 1) / W(n) for an existing block of
# n and W(1) V_N(K + 1) / V_N(K) for a new one (K counted without the item); a split of a block of n into
# n1 + n2 multiplies the prior by [V_N(K + 1) / V_N(K)] W(n1) W(n2) / W(n). The kernels get exactly these
# (:func:`prior_tables`); nothing else about a prior reaches them.
#
# A prior class provides log_weight(n) = log W(n + 1) / W(n) (the existing-block weight, n >= 1), log_w1() =
# log W(1), log_w(n) = log W(n), log_v(N, K) = log V_N(K) and log_new_weight(N, K) = log W(1) V_N(K + 1) / V_N(K);
# its parameters, their bounds and defaults live in the PRIORS registry below, once.
# ---------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PriorSpec:
    """A registry entry: name (as typed: "crp"), label (as shown: "CRP"), the class, its parameters, a one-line
    help, and whether the log joint is the exact normalised log p(z, X) (False for the pCRP, whose V_N's
    normaliser is unknown).

    What differs between priors is a field here, never a test of a name:
    tuned: the name of the parameter cross validation and the merge path tune (the pCRP's power "r"), or None.
    tune_grid: the values ``tuned`` is tuned over (cross validation's grid), () when nothing is tuned.
    reference: the prior whose fits serve as the over-clustering reference (the CRP).
    """

    name: str
    label: str
    cls: type
    params: tuple
    help: str
    normalised: bool
    tuned: str | None = None
    tune_grid: tuple = ()
    reference: bool = False

    def __post_init__(self):
        names = [p.name for p in self.params]
        if self.tuned is not None and self.tuned not in names:
            raise ValueError(f"prior {self.name}: tuned parameter {self.tuned!r} is not one of {names}")
        if self.tuned is not None and not self.tune_grid:
            raise ValueError(f"prior {self.name}: a tuned parameter needs a tune_grid")

    @property
    def tuned_param(self):
        """The :class:`Param` that is tuned (None when the prior has none)."""
        return None if self.tuned is None else self.param(self.tuned)

    def param(self, name):
        """The :class:`Param` called ``name`` (KeyError if the prior has none)."""
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(name)

    def defaults(self):
        """{parameter name: default}."""
        return {p.name: p.default for p in self.params}


# The defaults, each defined once. DEFAULT_R is a mild power for data without a cross-validated r (a CSV, the
# estimator): at r = 1.1 (2 chains of 2,000 sweeps) mean K is Old Faithful 2.5 (CRP 3.6-3.7), Sim 1 3.7 (CRP
# 5.4-5.5), Sim 2 3.6, MNIST 1-4 6.5 (CRP 7.5-7.6). It is not below every threshold (Sim 1's two overlapping
# components merge at r* = 0.95-1.08 on its merge path), so it is never a silent choice: built-in data sets use
# their shipped CV r (pcrp.cv.builtin_r) and every output says where r came from.
DEFAULT_R = 1.1
# The prior of `pcrp run`, PCRPMixture and the Explorer's second row: the paper's.
DEFAULT_PRIOR = "pcrp"
# GAMMA_MAX (MFM; the sparse mixture's log (k_max gamma)^(N) likewise): V_N(t) needs log (gamma k)^(N) = lgamma(gamma k + N) - lgamma(gamma k) for k up to about
# N + 2 lam; its rounding error is about 1e-16 (gamma k + N) log(gamma k + N), below 1e-6 nats for gamma up to
# 1000 at N = 10,000. LAM_MAX: the sum over k runs to about t + 2 lam + 40 terms for each t.
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


@dataclass(frozen=True)
class Growth:
    """What is known about E[K_N] under one prior, for N = 1..n (the teaching page draws it).

    exact: (n,) exact E[K_N], or None (no closed form is known: simulate the seating).
    limit: the value E[K_N] tends to as N grows (None when it grows without bound, or is not known).
    rate: how K_N grows, as a verb phrase ("grows like N^sigma = N^0.25", "is bounded by k_max = 10"); "" when
        unknown.
    formula: the closed form in words, or the sentence saying there is none.
    """

    exact: np.ndarray | None
    limit: float | None
    rate: str
    formula: str


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


def _log_rising(x, n):
    """log x^(n) = log Gamma(x + n) / Gamma(x) as a sum of logs (accurate for any x > 0, unlike a difference of
    two lgamma when x is huge)."""
    return float(np.sum(np.log(x + np.arange(int(n), dtype=float)))) if n > 0 else 0.0


def _ints(K):
    return np.asarray(K, dtype=np.int64)


class GibbsPrior:
    """Shared behaviour of the prior classes (each a frozen dataclass with a ``name`` and its parameters)."""

    @property
    def spec(self):
        return PRIORS[self.name]

    def _validate(self):
        for p in self.spec.params:
            object.__setattr__(self, p.name, p.check(getattr(self, p.name), f"the {self.spec.label}", ModelError))

    def params(self):
        """{"prior": name, parameter: value, ...}: what results files record."""
        return {"prior": self.name, **{p.name: getattr(self, p.name) for p in self.spec.params}}

    def label(self):
        values = ", ".join(f"{p.name}={getattr(self, p.name):g}" for p in self.spec.params)
        return f"{self.spec.label} ({values})"

    @property
    def normalised(self):
        """True when V_N is known exactly, so the log joint is the normalised log p(z, X)."""
        return self.spec.normalised

    max_blocks = None  # the largest possible K (None: up to N)

    def log_w(self, n):
        """log W(n) for block sizes n >= 1 (array)."""
        n = _ints(n)
        top = int(n.max(initial=1))
        table = np.concatenate(([-np.inf, self.log_w1()],
                                self.log_w1() + np.cumsum(self.log_weight(np.arange(1, top)))))
        return table[n]

    def log_new_weight(self, N, K):
        """log W(1) V_N(K + 1) / V_N(K), the weight of a new block when the other N - 1 items form K blocks
        (array K >= 0; K = 0, a lone item, gives 0: its only choice)."""
        K = _ints(K)
        v = self.log_v(N, np.maximum(K, 1))
        v1 = self.log_v(N, np.maximum(K, 1) + 1)
        with np.errstate(invalid="ignore"):
            out = self.log_w1() + v1 - v
        out = np.where(np.isneginf(v1), -np.inf, out)
        return np.where(K == 0, 0.0, out)

    def tables(self, N):
        """The two log tables for N items: (log W(n) for n = 0..N+1, log V_N(K) for K = 0..N+1); entry 0 of
        each is -inf (no block of size 0; K >= 1)."""
        log_W = np.full(N + 2, -np.inf)
        log_W[1:] = self.log_w(np.arange(1, N + 2))
        log_V = np.full(N + 2, -np.inf)
        log_V[1:] = self.log_v(N, np.arange(1, N + 2))
        return log_W, log_V

    def log_eppf(self, sizes):
        """log p(partition) from its block sizes (the exact probability for normalised priors)."""
        sizes = _ints(sizes)
        return float(self.log_v(int(sizes.sum()), [sizes.size])[0] + self.log_w(sizes).sum())

    def growth(self, n):
        """The known growth of E[K_N] of the seating process for N = 1..n (a :class:`Growth`). A prior with no
        closed form says so (its curve is then simulated), as the pCRP at r != 1 does."""
        return Growth(None, None, "", f"no closed form of E[K_N] is known for the {self.spec.label}: the curve is "
                                      "simulated only")


@dataclass(frozen=True)
class CRP(GibbsPrior):
    """Chinese restaurant process: W(n) = (n - 1)!, V_N(K) = alpha^K / alpha^(N); g(n) = n."""

    alpha: float = ALPHA.default
    name: str = field(default="crp", init=False)

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
    name: str = field(default="pcrp", init=False)

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
    name: str = field(default="py", init=False)

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
    name: str = field(default="mfm", init=False)

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
    name: str = field(default="sfm", init=False)

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


PRIORS = {
    "crp": PriorSpec("crp", "CRP", CRP, (ALPHA,),
                     "Chinese restaurant process (Dirichlet process): K grows like alpha log N.", True,
                     reference=True),
    "pcrp": PriorSpec("pcrp", "pCRP", PowerCRP, (ALPHA, R),
                      "Powered CRP (Lu, Li & Dunson): cluster sizes raised to the power r; its normaliser is unknown.",
                      False, tuned="r", tune_grid=R_GRID),
    "py": PriorSpec("py", "Pitman-Yor", PitmanYor, (PY_ALPHA, SIGMA),
                    "Pitman-Yor process: more, smaller clusters than the CRP; K grows like N^sigma.", True),
    "mfm": PriorSpec("mfm", "MFM", MFM, (MFM_GAMMA, LAM),
                     "Mixture of finite mixtures (Miller & Harrison 2018): a prior on K; consistent for K.", True),
    "sfm": PriorSpec("sfm", "Sparse finite mixture", SparseFiniteMixture, (SFM_GAMMA, K_MAX),
                     "Overfitted mixture of k_max components (Malsiner-Walli et al. 2016) whose small Dirichlet "
                     "weight gamma empties the extra ones.", True),
}


def make_prior(name, **params):
    """Build a prior from the registry: ``make_prior("py", alpha=1, sigma=0.3)``; missing parameters take their
    registry defaults, and a value of None means "not given".

    A parameter the prior does not have is a ModelError naming the prior's parameters.
    """
    spec = PRIORS.get(name)
    if spec is None:
        raise ModelError(f"Unknown prior {name!r}; choose one of: {', '.join(PRIORS)}.")
    own = {p.name for p in spec.params}
    kwargs = {}
    for key, value in params.items():
        if value is None:
            continue
        if key in own:
            kwargs[key] = value
            continue
        elsewhere = [s for s in PRIORS.values() if key in {p.name for p in s.params}]
        users = f" ({key} belongs to {', '.join(s.name for s in elsewhere)})" if elsewhere else ""
        have = ", ".join(f"{p.name} in {p.interval()}" for p in spec.params)
        raise ModelError(f"The {spec.label} prior ({name}) has no parameter {key}{users}; its parameters are: "
                         f"{have}. Leave {key} out.")
    return spec.cls(**kwargs)


def log_weight_table(prior, n_max):
    """log g(n) = log W(n + 1) / W(n) for n = 0 .. n_max + 1 as the kernels expect (entry 0 unused, -inf)."""
    table = np.full(n_max + 2, -np.inf)
    table[1:] = prior.log_weight(np.arange(1, n_max + 2))
    return table


def prior_tables(prior, N):
    """The per-K tables the kernels take for N items, each (N + 2,) indexed by K = 0..N+1:

    log_new[K] = log W(1) V_N(K + 1) / V_N(K), the weight of a new block when the others form K blocks
        (0 at K = 0; -inf where K + 1 blocks are impossible);
    log_v[K] = log V_N(K) + K log W(1) (0 at K = 0), so that with the per-count row
        ROW_LOG_G_PROD = log W(n) - log W(1) (kernel_tables) the log joint is log V_N(K) + sum_k log W(n_k) + ...
    """
    K = np.arange(N + 2)
    log_new = np.ascontiguousarray(prior.log_new_weight(N, K), dtype=np.float64)
    log_v = np.empty(N + 2)
    log_v[0] = 0.0
    log_v[1:] = prior.log_v(N, K[1:]) + K[1:] * prior.log_w1()
    return log_new, log_v


@dataclass(frozen=True)
class NIW:
    """Normal-Inverse-Wishart hyperparameters: Sigma ~ IW(S0, nu0), mu | Sigma ~ N(m0, Sigma / kappa0).

    m0: (d,) prior mean of cluster means.
    kappa0: prior strength of m0, in pseudo-observations (> 0).
    nu0: degrees of freedom of the inverse Wishart (> d - 1).
    S0: (d, d) symmetric positive definite scale; E[Sigma] = S0 / (nu0 - d - 1) when nu0 > d + 1.
    """

    m0: np.ndarray
    kappa0: float
    nu0: float
    S0: np.ndarray

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


# The data-driven default recipe (documented in README and in the app):
#   v     = mean of the column variances of X (1 for standardised data)
#   m0    = column means of X
#   nu0   = d + 3
#   S0    = WITHIN_SCALE**2 * v * nu0 * I      (the authors' S0 = s^2 nu0 I with s^2 = WITHIN_SCALE^2 v)
#   kappa0 = WITHIN_SCALE**2                   (the authors' s^2 / mu_scale^2 with mu_scale^2 = v)
# i.e. a cluster's spread is a priori about WITHIN_SCALE of the data's spread and
# cluster means are spread like the data.
WITHIN_SCALE = 0.5
assert NIW_PARAMS["kappa0"].default == WITHIN_SCALE**2


def default_niw(X):
    """The documented data-driven NIW defaults for data ``X`` (N, d)."""
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
    )


def resolve_niw(X, m0=None, kappa0=None, nu0=None, S0=None):
    """Defaults from :func:`default_niw`, each overridden where a value is given.

    ``S0`` may be a scalar (meaning S0 * identity) or a (d, d) matrix.
    """
    base = default_niw(X)
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

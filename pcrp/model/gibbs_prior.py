"""What every Gibbs-type prior shares: its registry entry (:class:`PriorSpec`), the base class of the prior
classes (:class:`GibbsPrior`) and the two log tables the kernels take (:func:`log_weight_table`,
:func:`prior_tables`).

Every prior here has an exchangeable partition probability function

    p(partition of N items into blocks of sizes n_1..n_K) = V_N(K) prod_k W(n_k),

so a prior is two log tables for the current N: log W(n) per block size and log V_N(K) per number of blocks.
The Gibbs conditional of one item (taken out and put back, N fixed) is W(n + 1) / W(n) for an existing block of
n and W(1) V_N(K + 1) / V_N(K) for a new one (K counted without the item); a split of a block of n into
n1 + n2 multiplies the prior by [V_N(K + 1) / V_N(K)] W(n1) W(n2) / W(n). The kernels get exactly these
(:func:`prior_tables`); nothing else about a prior reaches them (docs/design.md section 1.1).

A prior class provides log_weight(n) = log W(n + 1) / W(n) (the existing-block weight, n >= 1), log_w1() =
log W(1), log_w(n) = log W(n), log_v(N, K) = log V_N(K) and log_new_weight(N, K) = log W(1) V_N(K + 1) / V_N(K).
Its parameters, their bounds and defaults live once, in its :class:`PriorSpec`; the built-in priors are in
:mod:`pcrp.model.priors`, the registry (and registering a prior of your own) in :mod:`pcrp.model.registry`.
"""

from dataclasses import dataclass, fields

import numpy as np

from ..basics.errors import ModelError


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


# The registry's storage, {name: PriorSpec} in the order registered: filled with the built-in priors by
# pcrp.model.priors, read and written through pcrp.model.registry.PRIORS. A prior finds its entry here by its name.
SPECS = {}


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
        """The registry entry of this prior (by its name)."""
        try:
            return SPECS[self.name]
        except KeyError:
            raise ModelError(f"No prior {self.name!r} is registered: register it (pcrp.register_gcrp or "
                             "pcrp.register_prior) before building one.") from None

    def _validate(self):
        for p in self.spec.params:
            object.__setattr__(self, p.name, p.check(getattr(self, p.name), f"the {self.spec.label}", ModelError))

    # scikit-learn's parameter protocol, as an immutable value: PCRPMixture(prior=PowerCRP(r=1.3)) shows the
    # prior's parameters as prior__alpha, prior__r in get_params(deep=True), and its set_params(prior__r=1.5)
    # replaces the prior with make_prior("pcrp", alpha=1.0, r=1.5), a checked copy. A prior is never changed in
    # place: it is compared by value (==), hashed, cached by value (the MFM's tables) and shared between clones.
    def get_params(self, deep=True):
        """{parameter: value} of this prior, in the order declared (its dataclass fields; ``name`` is not one).
        ``deep`` is scikit-learn's argument: a prior holds no objects with parameters of their own."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.init}

    def set_params(self, **params):
        """Refused, saying what to do instead: a prior is an immutable value."""
        shown = ", ".join(f"{key}={value!r}" for key, value in {**self.get_params(), **params}.items())
        raise TypeError(f"A prior cannot be changed in place ({type(self).__name__} is immutable and compared by "
                        f"value): build the changed one, pcrp.make_prior({self.name!r}, {shown}), or use an "
                        f"estimator's set_params(prior__NAME=value), which replaces its prior with that.")

    def __sklearn_clone__(self):
        """scikit-learn's clone of an immutable value is the value itself."""
        return self

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
        log_w[n] = log W(n) - log W(1) (kernel_tables) the log joint is log V_N(K) + sum_k log W(n_k) + ...
    """
    K = np.arange(N + 2)
    log_new = np.ascontiguousarray(prior.log_new_weight(N, K), dtype=np.float64)
    log_v = np.empty(N + 2)
    log_v[0] = 0.0
    log_v[1:] = prior.log_v(N, K[1:]) + K[1:] * prior.log_w1()
    return log_new, log_v


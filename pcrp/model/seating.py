"""The sequential seating process (the prior as customers arrive), for teaching.

Customer n (n = 1, 2, ...) finds K occupied tables among the n - 1 before and sits at table k with
probability proportional to W(N_k + 1) / W(N_k) and at a new table with probability proportional to
W(1) V_n(K + 1) / V_n(K): the Gibbs conditional of the last of n items, with V_n for the n customers seated
so far (docs/design.md section 1.1). For the pCRP these are g(N_k) = N_k^r and alpha, r = 1 being the CRP. For the
CRP, Pitman-Yor, MFM and sparse finite mixture the prior is projective, so the seating reproduces their
exchangeable partition distribution at every n; the pCRP's seating process is order dependent for r != 1
(unlike its Gibbs target for fixed N).

Every function takes a prior of :data:`pcrp.model.PRIORS` (``seat_prior``, ``simulate_k_growth_prior``, ...).
:func:`expected_k` gives the exact E[K_N] where a closed form or a short recursion exists, :func:`growth` that
curve with its limit and rate in words (what the teaching page draws).
"""

import math

import numpy as np

from . import ALPHA, CRP, Growth, PowerCRP, log_weight_table  # noqa: F401  (Growth: seating.growth returns it)
from scipy.special import gammaln


def seating_log_probabilities(prior, sizes):
    """The prior's predictive seating: log p(the next customer sits at table k) for the occupied tables of
    ``sizes`` (K,) (whole numbers >= 1, in order) and, last, at a new table; shape (K + 1,), normalised.

    The next customer is number n = sum(sizes) + 1: table k has weight W(n_k + 1) / W(n_k), a new table
    W(1) V_n(K + 1) / V_n(K) (-inf where K + 1 tables are impossible) (docs/design.md section 1.1).
    This is the one place the rule is written: the Gibbs conditional of one point (the other N - 1 seated), a new
    point's predictive (customer N + 1), the estimator's seating weights and the teaching page all call it.
    """
    sizes = np.asarray(sizes, dtype=np.int64).reshape(-1)
    log_w = np.append(prior.log_weight(sizes), prior.log_new_weight(int(sizes.sum()) + 1, [sizes.size]))
    return log_w - np.logaddexp.reduce(log_w)


class SeatingRule:
    """:func:`seating_log_probabilities`' weights, unnormalised and cached for the simulation loop
    (:func:`seat_prior`, thousands of customers per run): existing tables from the table of log W(n + 1) / W(n)
    for customers 1..n_max, a new table's W(1) V_n(K + 1) / V_n(K) cached per (n, K) (shared across runs)."""

    def __init__(self, prior, n_max):
        self.prior = prior
        self.log_g = log_weight_table(prior, max(int(n_max), 1))
        self._new = {}

    def log_new(self, n, K):
        """log weight of a new table for customer n finding K tables (-inf where K + 1 tables are impossible)."""
        value = self._new.get((n, K))
        if value is None:
            value = self._new[(n, K)] = float(self.prior.log_new_weight(n, [K])[0])
        return value


def seat_prior(prior, n_customers, uniforms, rule=None):
    """Seat ``n_customers`` one by one under ``prior`` using the given uniforms (n_customers,), so priors can
    share random numbers. Returns table labels (n_customers,) int. ``rule``: a :class:`SeatingRule` to reuse."""
    rule = rule or SeatingRule(prior, n_customers)
    labels = np.empty(n_customers, dtype=np.int64)
    sizes = np.zeros(n_customers + 1, dtype=np.int64)
    log_w = np.empty(n_customers + 1)  # log weight of each occupied table
    K = 0
    for i in range(n_customers):
        log_new = rule.log_new(i + 1, K)
        top = max(log_w[:K].max(), log_new) if K else log_new
        cumulative = np.cumsum(np.exp(log_w[:K] - top))
        total = (cumulative[-1] if K else 0.0) + math.exp(log_new - top)
        k = min(int(np.searchsorted(cumulative, uniforms[i] * total, side="right")), K)
        if k == K and log_new == -np.inf:  # a uniform of exactly 1 where no new table is allowed
            k = K - 1
        if k == K:
            K += 1
        sizes[k] += 1
        log_w[k] = rule.log_g[sizes[k]]
        labels[i] = k
    return labels


def seating_probabilities_prior(prior, sizes):
    """Probability of each occupied table (sizes, in order) and, last, of a new table for the next customer
    (:func:`seating_log_probabilities`)."""
    return np.exp(seating_log_probabilities(prior, sizes))


def simulate_k_growth_prior(prior, n_max, n_runs, seed=0):
    """K_N for N = 1..n_max over ``n_runs`` independent seatings under ``prior``: array (n_runs, n_max)."""
    rng = np.random.default_rng(seed)
    rule = SeatingRule(prior, n_max)
    out = np.empty((n_runs, n_max), dtype=np.int64)
    for run in range(n_runs):
        labels = seat_prior(prior, n_max, rng.random(n_max), rule)
        out[run] = np.maximum.accumulate(labels) + 1
    return out


def simulate_tables_prior(prior, n, n_runs, seed=0):
    """K_N, largest-table share and singletons after ``n`` customers under ``prior``, over ``n_runs`` seatings:
    a dict of arrays (n_runs,) "K", "largest_share", "singletons"."""
    rng = np.random.default_rng(seed)
    rule = SeatingRule(prior, n)
    rows = np.array([table_summary(seat_prior(prior, n, rng.random(n), rule)) for _ in range(n_runs)])
    return {"K": rows[:, 0].astype(int), "largest_share": rows[:, 1], "singletons": rows[:, 2].astype(int)}


def order_probability_prior(order, prior):
    """Probability that the sequential process under ``prior`` seats customers arriving in ``order`` (tuple of
    block indices) at tables that form exactly those blocks (see :func:`order_probability`)."""
    sizes = {}
    log_p = 0.0
    for b in order:
        tables = list(sizes)
        log_p += seating_log_probabilities(prior, [sizes[t] for t in tables])[tables.index(b) if b in sizes else -1]
        sizes[b] = sizes.get(b, 0) + 1
    return math.exp(log_p)


def expected_k(prior, n):
    """Exact E[K_N] of the seating process for N = 1..n, as an (n,) array, where it is known; None otherwise
    (the pCRP with r != 1: simulate it). Each prior states its own (:meth:`pcrp.model.GibbsPrior.growth`): CRP
    and Pitman-Yor by the recursion E[K_{N+1}] = E[K_N] + (alpha + sigma E[K_N]) / (alpha + N); the sparse finite
    mixture k_max (1 - P(a component is empty)); the MFM that, averaged over K - 1 ~ Poisson(lam)."""
    return prior.growth(int(n)).exact


def pitman_yor_expected_k(alpha, sigma, n):
    """Exact E[K_N], N = 1..n, of the Pitman-Yor seating by the Gamma-ratio closed form (Pitman 2006, eq. 3.13)

        E[K_N] = (alpha / sigma) [ (alpha + sigma)^(N) / alpha^(N) - 1 ],   x^(N) = Gamma(x + N) / Gamma(x),

    for alpha > 0 and 0 < sigma < 1 (for sigma -> 0 it tends to the CRP's sum; for alpha <= 0 use
    :func:`expected_k`, whose recursion covers every alpha > -sigma). Grows like
    Gamma(alpha + 1) / (sigma Gamma(alpha + sigma)) N^sigma. Returns an (n,) array."""
    if not (alpha > 0 and 0 < sigma < 1):
        raise ValueError(f"the Gamma-ratio form needs alpha > 0 and 0 < sigma < 1 (got alpha = {alpha:g}, "
                         f"sigma = {sigma:g}); expected_k covers the other cases.")
    N = np.arange(1, int(n) + 1, dtype=float)
    log_ratio = (gammaln(alpha + sigma + N) - gammaln(alpha + sigma)) - (gammaln(alpha + N) - gammaln(alpha))
    return alpha / sigma * np.expm1(log_ratio)


def growth(prior, n):
    """The known growth of E[K_N] under ``prior`` for N = 1..n (a :class:`pcrp.model.Growth`): the prior's own
    statement (CRP about alpha log N; Pitman-Yor about N^sigma; MFM bounded, rising to E[K] = lam + 1; sparse
    finite mixture bounded by k_max; pCRP at r != 1 none known)."""
    return prior.growth(int(n))


def crp_expected_k(alpha, n):
    """Exact E[K_N] under the CRP: sum_{i=1}^{N} alpha / (alpha + i - 1), for N = 1..n."""
    i = np.arange(1, n + 1)
    return np.cumsum(alpha / (alpha + i - 1))


def three_customer_example(r, alpha=None):
    """The paper's example: (p(z3 = 2 | z1 = 1, z2 = 1), p(z3 = 1 | z1 = 1, z2 = 2)).

    With z1 = z2 = 1 one table of 2: new table (table 2) has alpha / (2^r + alpha).
    With z1 = 1, z2 = 2 two tables of 1: table 1 has 1 / (2 + alpha). alpha None: the registry's default.
    """
    alpha = ALPHA.default if alpha is None else alpha
    return alpha / (2.0**r + alpha), 1.0 / (2.0 + alpha)


def table_summary(labels):
    """(K, share of the largest table, number of singleton tables) of one seating (N,)."""
    sizes = np.bincount(np.asarray(labels))
    sizes = sizes[sizes > 0]
    return int(sizes.size), float(sizes.max() / sizes.sum()), int(np.sum(sizes == 1))


def arrival_orders(block_sizes):
    """Every distinct arrival order of customers from blocks of the given sizes.

    An order is a tuple of block indices, e.g. sizes (2, 1) give (0, 0, 1), (0, 1, 0), (1, 0, 0).
    """
    counts = list(block_sizes)
    n = sum(counts)
    out = []

    def extend(prefix):
        if len(prefix) == n:
            out.append(tuple(prefix))
            return
        for b, left in enumerate(counts):
            if left:
                counts[b] -= 1
                extend(prefix + [b])
                counts[b] += 1

    extend([])
    return out

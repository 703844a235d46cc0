"""The sequential seating process (the prior as customers arrive), for teaching.

Customer n + 1 sits at occupied table k with probability proportional to
g(N_k) and at a new table with probability proportional to alpha; g(n) = n^r,
r = 1 being the CRP. Unlike the Gibbs target for fixed N, this process is order
dependent for r != 1.
"""

import numpy as np


def seat(n_customers, alpha, r, uniforms):
    """Seat customers one by one using the given uniforms (n_customers,), so CRP and
    pCRP can share random numbers. Returns table labels (n_customers,) int."""
    labels = np.empty(n_customers, dtype=np.int64)
    sizes = []
    for i in range(n_customers):
        weights = np.append(np.power(np.array(sizes, dtype=float), r), alpha)
        cumulative = np.cumsum(weights)
        k = int(np.searchsorted(cumulative, uniforms[i] * cumulative[-1], side="right"))
        k = min(k, len(sizes))
        if k == len(sizes):
            sizes.append(0)
        sizes[k] += 1
        labels[i] = k
    return labels


def seating_probabilities(sizes, alpha, r):
    """Probability of each occupied table (in order) and, last, of a new table."""
    weights = np.append(np.power(np.asarray(sizes, dtype=float), r), alpha)
    return weights / weights.sum()


def simulate_k_growth(alpha, r, n_max, n_runs, seed=0):
    """K_N for N = 1..n_max over ``n_runs`` independent seatings: array (n_runs, n_max)."""
    rng = np.random.default_rng(seed)
    out = np.empty((n_runs, n_max), dtype=np.int64)
    for run in range(n_runs):
        labels = seat(n_max, alpha, r, rng.random(n_max))
        out[run] = np.maximum.accumulate(labels) + 1
    return out


def crp_expected_k(alpha, n):
    """Exact E[K_N] under the CRP: sum_{i=1}^{N} alpha / (alpha + i - 1), for N = 1..n."""
    i = np.arange(1, n + 1)
    return np.cumsum(alpha / (alpha + i - 1))


def three_customer_example(r, alpha=1.0):
    """The paper's example: (p(z3 = 2 | z1 = 1, z2 = 1), p(z3 = 1 | z1 = 1, z2 = 2)).

    With z1 = z2 = 1 one table of 2: new table (table 2) has alpha / (2^r + alpha).
    With z1 = 1, z2 = 2 two tables of 1: table 1 has 1 / (2 + alpha).
    """
    return alpha / (2.0**r + alpha), 1.0 / (2.0 + alpha)


def table_summary(labels):
    """(K, share of the largest table, number of singleton tables) of one seating (N,)."""
    sizes = np.bincount(np.asarray(labels))
    sizes = sizes[sizes > 0]
    return int(sizes.size), float(sizes.max() / sizes.sum()), int(np.sum(sizes == 1))


def simulate_tables(alpha, r, n, n_runs, seed=0):
    """K_N, largest-table share and singletons after ``n`` customers, over ``n_runs`` seatings.

    Returns a dict of arrays (n_runs,): "K", "largest_share", "singletons".
    """
    rng = np.random.default_rng(seed)
    rows = np.array([table_summary(seat(n, alpha, r, rng.random(n))) for _ in range(n_runs)])
    return {"K": rows[:, 0].astype(int), "largest_share": rows[:, 1], "singletons": rows[:, 2].astype(int)}


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


def order_probability(order, alpha, r):
    """Probability that the sequential process seats customers arriving in ``order`` (tuple
    of block indices) at tables that form exactly those blocks: each customer joins its
    block's table, or opens it if it is the block's first customer."""
    sizes = {}
    p = 1.0
    for i, b in enumerate(order):
        total = sum(n**r for n in sizes.values()) + alpha
        p *= (sizes[b] ** r if b in sizes else alpha) / total
        sizes[b] = sizes.get(b, 0) + 1
    return p

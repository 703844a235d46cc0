"""Exact posterior over partitions for tiny data sets, by enumeration.

For N <= 8 every set partition can be listed (Bell(8) = 4140), and the target of
the sampler, p(z | X) proportional to V_N(K) prod_k W(N_k) m(X_k) (docs/design.md
section 1.3; any prior of pcrp.model.PRIORS, a registered one too), normalised exactly. This is
the reference the sampler's long-run frequencies are tested against; :func:`log_eppf` (the
prior alone) is how the registry checks that a normalised prior sums to 1.
"""

import numpy as np

from .niw_math import log_marginal

MAX_EXACT_N = 9


def set_partitions(n):
    """All partitions of {0..n-1} as canonical label tuples (restricted growth strings)."""
    if n == 0:
        return [()]
    out = []

    def extend(prefix, k):
        if len(prefix) == n:
            out.append(tuple(prefix))
            return
        for label in range(k + 1):
            extend(prefix + [label], max(k, label + 1))

    extend([0], 1)
    return out


def canonical(labels):
    """Relabel so clusters are numbered in order of first appearance."""
    mapping = {}
    return tuple(mapping.setdefault(int(z), len(mapping)) for z in labels)


def log_eppf(prior, N):
    """The prior's log V_N(K) + sum_k log W(N_k) of every partition of N items (N <= MAX_EXACT_N).

    Returns (partitions, log_p): canonical label tuples and a (n_partitions,) array; for a normalised prior
    exp(log_p) sums to 1 (-inf where a partition is impossible, e.g. K > k_max).
    """
    if N > MAX_EXACT_N:
        raise ValueError(f"exact enumeration is limited to N <= {MAX_EXACT_N} (got {N}).")
    log_W, log_V = prior.tables(N)  # log W(n), log V_N(K); -inf where impossible (K > k_max)
    partitions = set_partitions(N)
    log_p = np.array([log_V[max(z) + 1] + log_W[np.bincount(z)].sum() for z in partitions])
    return partitions, log_p


def exact_posterior(X, prior, niw):
    """Exact p(z | X) over all partitions of the rows of ``X`` (N <= MAX_EXACT_N).

    Returns (partitions, probabilities): a list of canonical label tuples and a
    (n_partitions,) array summing to one.
    """
    X = np.asarray(X, dtype=float)
    partitions, logp = log_eppf(prior, X.shape[0])
    block_cache = {}
    for p, z in enumerate(partitions):
        z = np.asarray(z)
        for k in range(z.max() + 1):
            members = tuple(np.flatnonzero(z == k))
            if members not in block_cache:
                block_cache[members] = log_marginal(X[list(members)], niw.m0, niw.kappa0, niw.nu0, niw.S0,
                                                     niw.covariance_type)
            logp[p] += block_cache[members]
    prob = np.exp(logp - logp.max())
    return partitions, prob / prob.sum()


def k_distribution(partitions, probabilities):
    """Posterior of K as an array indexed by K (entry 0 unused)."""
    n = len(partitions[0])
    out = np.zeros(n + 1)
    for z, p in zip(partitions, probabilities):
        out[max(z) + 1] += p
    return out

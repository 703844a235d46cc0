"""The primary correctness test (DESIGN.md section 2): long-run frequencies of the
sampler against the exact partition posterior, enumerated for N = 6 or 7 points.

Tolerances. With T = 50,000 kept sweeps of a chain whose integrated autocorrelation
time for K is at most about 4 on these data (overlapping points), the effective
sample size is >= 12,000. For a distribution over m categories the expected total
variation of an iid sample of size n is about sum_j sqrt(p_j (1 - p_j) / (2 pi n));
for K (m <= 7) that is below 0.006 at n = 12,000, so TV(K) < 0.02 is > 3 times the
expected error. Over all partitions (Bell(7) = 877) the same bound gives about
0.035 at n = 12,000 (most mass sits on a few dozen partitions), so TV < 0.07.
A sampler targeting a different r fails these bounds (see the last test).
"""

from collections import Counter

import numpy as np
import pytest

from pcrp.exact import canonical, exact_posterior, k_distribution
from pcrp.model import CRP, PowerCRP, resolve_niw
from pcrp.sampler import run

SWEEPS = 50_000
TV_K_TOL = 0.02
TV_PARTITION_TOL = 0.07


def overlapping_data(n, d, seed):
    X = np.random.default_rng(seed).normal(size=(n, d))
    return (X - X.mean(axis=0)) / X.std(axis=0)


def sampled_distribution(X, prior, niw, split_merge, seed):
    chain = run(X, prior, niw, iters=SWEEPS, burn_in=0, thin=1, seed=seed,
                split_merge=split_merge, init="one")
    counts = Counter(canonical(z) for z in chain.labels)
    return counts


def total_variations(X, prior, niw, split_merge, seed=1):
    partitions, probs = exact_posterior(X, prior, niw)
    counts = sampled_distribution(X, prior, niw, split_merge, seed)
    assert sum(counts.values()) == SWEEPS
    freq = np.array([counts.get(z, 0) / SWEEPS for z in partitions])
    assert freq.sum() == pytest.approx(1.0)  # every visited state is a valid partition
    tv_k = 0.5 * np.abs(k_distribution(partitions, freq) - k_distribution(partitions, probs)).sum()
    tv_part = 0.5 * np.abs(freq - probs).sum()
    return tv_k, tv_part


CASES = [
    pytest.param(n, d, prior, sm, id=f"N{n}-d{d}-{prior.label()}-sm{sm}")
    for n, d in ((7, 1), (6, 2))
    for prior in (CRP(1.0), PowerCRP(1.0, 1.3), PowerCRP(1.0, 1.8))
    for sm in (False, True)
]


@pytest.mark.slow
@pytest.mark.parametrize("n,d,prior,split_merge", CASES)
def test_sampler_matches_exact_posterior(n, d, prior, split_merge):
    X = overlapping_data(n, d, seed=n + d)
    niw = resolve_niw(X)
    tv_k, tv_part = total_variations(X, prior, niw, split_merge)
    assert tv_k < TV_K_TOL
    assert tv_part < TV_PARTITION_TOL


@pytest.mark.slow
def test_wrong_target_is_detected():
    """The test has power: a pCRP chain (r = 1.8) compared with the CRP posterior fails."""
    X = overlapping_data(7, 1, seed=8)
    niw = resolve_niw(X)
    partitions, crp_probs = exact_posterior(X, CRP(1.0), niw)
    counts = sampled_distribution(X, PowerCRP(1.0, 1.8), niw, True, seed=1)
    freq = np.array([counts.get(z, 0) / SWEEPS for z in partitions])
    tv_k = 0.5 * np.abs(k_distribution(partitions, freq) - k_distribution(partitions, crp_probs)).sum()
    assert tv_k > 5 * TV_K_TOL


def test_exact_posterior_counts_partitions():
    X = overlapping_data(5, 1, seed=0)
    partitions, probs = exact_posterior(X, CRP(1.0), resolve_niw(X))
    assert len(partitions) == 52  # Bell(5)
    assert len(set(partitions)) == 52
    assert probs.sum() == pytest.approx(1.0)

"""The summaries' speed-ups change no number (the MCMC diagnostics are ArviZ's code: tests/test_mcmc_diagnostics.py)."""

import numpy as np
import pytest


def test_the_estimator_checks_its_memory_plan_before_sampling(monkeypatch):
    """With 50 MiB free, a fit of 4 chains of 100,000 points (up to 4 x 335 kept draws of the automatic budget:
    512 MiB of draws) is refused before any chain runs, naming the plan's parts and what to do."""
    from pcrp.basics import dtypes
    from pcrp.runs.compiling import compile_kernels
    from pcrp.estimator import PCRPMixture
    from pcrp.basics.errors import SamplerError
    compile_kernels()  # first: with an empty numba cache the compiling warm-up's sampler meets the 50 MiB too
    monkeypatch.setattr(dtypes, "available_memory", lambda: 50 * 2**20)
    X = np.random.default_rng(0).normal(size=(100_000, 1))
    with pytest.raises(SamplerError, match=r"This run of 4 chain\(s\) of up to 20,000 sweeps of 100,000 points, with "
                                           r"its summaries.*\(data .*, draws 5\d\d MiB, samplers .*, summaries .*\)"
                                           r".*Keep fewer draws"):
        PCRPMixture(random_state=0).fit(X)


def _nmi_vi_by_unique(true, pred):
    """The earlier nmi_vi (np.unique's sort for both labelings), kept as the reference of the O(N) coding."""
    _, u = np.unique(true, return_inverse=True)
    _, v = np.unique(pred, return_inverse=True)
    u, v = u.reshape(-1), v.reshape(-1)
    N = u.size
    nu, nv = int(u.max()) + 1, int(v.max()) + 1
    joint = np.bincount(u * nv + v, minlength=nu * nv)
    joint = joint[joint > 0] / N
    pu, pv = np.bincount(u) / N, np.bincount(v) / N
    hu, hv = -np.sum(pu * np.log(pu)), -np.sum(pv * np.log(pv))
    mi = max(hu + hv - -np.sum(joint * np.log(joint)), 0.0)
    if hu == 0.0 and hv == 0.0:
        score = 1.0
    elif hu == 0.0 or hv == 0.0:
        score = 0.0
    else:
        score = min(mi / np.sqrt(hu * hv), 1.0)
    return float(score), float(max(hu + hv - 2.0 * mi, 0.0) / np.log(2.0))


def test_sorted_codes_number_labels_as_np_unique():
    from pcrp.summaries.summary import sorted_codes

    rng = np.random.default_rng(0)
    for labels in (rng.integers(0, 7, 500), rng.integers(0, 7, 500) * 1000, rng.integers(-3, 4, 500),
                   rng.integers(0, 2**40, 50), rng.integers(0, 3, 300).astype(np.int16), np.array([5.0, 2.0, 5.0])):
        codes, n = sorted_codes(labels)
        values, inverse = np.unique(labels, return_inverse=True)
        assert np.array_equal(codes, inverse.reshape(-1)) and n == values.size


def test_nmi_vi_and_metric_summary_give_the_same_bits_as_before():
    """The true labels coded once and the draws coded by bincount give exactly the figures of the sort-based
    coding (the same contingency tables in the same order)."""
    from pcrp.summaries.summary import mean_and_mcse, metric_summary, nmi_vi

    rng = np.random.default_rng(1)
    true = rng.integers(0, 4, 3000) * 3
    draws = rng.integers(0, 6, (2, 5, 3000)).astype(np.int32)
    draws[0, 0] = true  # identical partitions
    draws[1, 1] = 0  # one cluster
    expected = np.array([[_nmi_vi_by_unique(true, z) for z in chain] for chain in draws])
    got = np.array([[nmi_vi(true, z) for z in chain] for chain in draws])
    assert np.array_equal(got, expected)
    summary = metric_summary(true, draws)
    assert summary["NMI"] == mean_and_mcse(expected[..., 0]) and summary["VI"] == mean_and_mcse(expected[..., 1])

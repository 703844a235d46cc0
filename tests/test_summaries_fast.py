"""The summaries' speed-ups change no number: ArviZ's NumPy path (its numba path compiles afresh in every
process) against its numba path, and the user's ArviZ setting left as it was."""

import warnings

import numpy as np
import pytest

from pcrp.summary import chain_diagnostics


def _direct(values, fn, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(np.asarray(fn(values, **kwargs)).reshape(-1)[0])


@pytest.mark.parametrize("seed", range(5))
def test_diagnostics_equal_arvizs_own_numba_path(seed):
    """Random-walk chains rounded like a log joint, some with a constant stretch (ties in the ranks): pooled
    R-hat, ESS bulk / tail and MCSE equal ArviZ's with its numba path on, to 1e-9 relatively (the two paths
    differ only in floating-point order)."""
    az = pytest.importorskip("arviz")
    rng = np.random.default_rng(seed)
    values = np.round(rng.normal(size=(4, 300)).cumsum(axis=1), 1)
    values[:, :40] = 2.0
    az.Numba.enable_numba()
    try:
        ours = chain_diagnostics(values)
        assert az.Numba.numba_flag  # restored after every call
        assert ours["rhat"] == pytest.approx(_direct(values, az.rhat, method="rank"), rel=1e-9)
        assert ours["ess_bulk"] == pytest.approx(_direct(values, az.ess, method="bulk"), rel=1e-9)
        assert ours["ess_tail"] == pytest.approx(_direct(values, az.ess, method="tail"), rel=1e-9)
        assert ours["mcse"] == pytest.approx(_direct(values, az.mcse, method="mean"), rel=1e-9)
    finally:
        az.Numba.enable_numba()
    az.Numba.disable_numba()
    try:
        chain_diagnostics(values)
        assert not az.Numba.numba_flag  # a user's choice to switch it off stays
    finally:
        az.Numba.enable_numba()


def test_the_estimator_checks_its_memory_plan_before_sampling(monkeypatch):
    """With 50 MiB free, a fit of 4 chains of 100,000 points (up to 4 x 335 kept draws of the automatic budget:
    512 MiB of draws) is refused before any chain runs, naming the plan's parts and what to do."""
    from pcrp import dtypes
    from pcrp.estimator import PCRPMixture
    from pcrp.sampler import SamplerError

    monkeypatch.setattr(dtypes, "available_memory", lambda: 50 * 2**20)
    X = np.random.default_rng(0).normal(size=(100_000, 1))
    with pytest.raises(SamplerError, match=r"This run of 4 chain\(s\) of up to 20,000 sweeps of 100,000 points, with "
                                           r"its summaries.*\(data .*, draws 5\d\d MiB, samplers .*, summaries .*\)"
                                           r".*Keep fewer draws"):
        PCRPMixture(random_state=0).fit(X)

"""pcrp.summaries.mcmc_diagnostics against ArviZ, the reference it replaces in the summaries (ArviZ's import costs more than a
short run): the same R-hat, ESS and MCSE, the same nan where a figure is undefined.

Tolerance 1e-9 relative: the two compute the same sums in the same order except the normal quantile (the standard
library's against SciPy's, both accurate to about 1e-16) and the FFT length's rounding, so they differ by a few
units in the last place (4e-15 at most on these cases when written); a wrong tie rule, split, quantile or Geyer
truncation moves the figures by far more than 1e-9."""

import logging
import warnings

import numpy as np
import pytest

from pcrp.summaries import mcmc_diagnostics

az = pytest.importorskip("arviz")


def _arviz(fn, values, **kwargs):
    """ArviZ's figure on (C, D) values through its NumPy path, quietly (it logs a warning where undefined)."""
    flag = az.Numba.numba_flag
    az.Numba.disable_numba()
    logging.disable(logging.WARNING)
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            return float(np.asarray(fn(values, **kwargs)).reshape(-1)[0])
    finally:
        logging.disable(logging.NOTSET)
        if flag:
            az.Numba.enable_numba()


def _cases(seed, n_cases=60):
    """(C, D) arrays of the kinds the summaries meet: random walks (a log joint), a few integer values (K, many
    ties), a constant stretch, constant chains with one stray draw, one chain, short and odd lengths, a NaN."""
    rng = np.random.default_rng(seed)
    for case in range(n_cases):
        C, D = int(rng.integers(1, 6)), int(rng.integers(1, 300))
        kind = case % 6
        if kind == 0:
            values = rng.normal(size=(C, D)).cumsum(axis=1)
        elif kind == 1:
            values = rng.integers(1, 5, size=(C, D)).astype(float)
        elif kind == 2:
            values = np.round(rng.normal(size=(C, D)).cumsum(axis=1), 1)
            values[:, :D // 5] = 2.0
        elif kind == 3:
            values = np.full((C, D), 3.0)
            values[0, -1] = 4.0
        elif kind == 4:
            values = np.full((C, D), 3.0)
        else:
            values = rng.normal(size=(C, D))
            values[rng.integers(C), rng.integers(D)] = np.nan
        yield values


FIGURES = [
    ("rhat_rank", az.rhat, {"method": "rank"}),
    ("ess_bulk", az.ess, {"method": "bulk"}),
    ("ess_tail", az.ess, {"method": "tail"}),
    ("mcse_mean", az.mcse, {"method": "mean"}),
]


@pytest.mark.parametrize("name, reference, kwargs", FIGURES, ids=[f[0] for f in FIGURES])
@pytest.mark.parametrize("seed", range(3))
def test_each_figure_equals_arvizs(name, reference, kwargs, seed):
    ours_fn = getattr(mcmc_diagnostics, name)
    for values in _cases(seed):
        ours, theirs = ours_fn(values), _arviz(reference, values, **kwargs)
        assert np.isnan(ours) == np.isnan(theirs), (values.shape, ours, theirs)
        if not np.isnan(theirs):
            assert ours == pytest.approx(theirs, rel=1e-9, abs=1e-12), values.shape


def test_one_chain_is_read_as_one_chain():
    """A (D,) array is one chain: R-hat undefined, ESS and MCSE as of its (1, D) form."""
    chain = np.random.default_rng(0).normal(size=200).cumsum()
    assert np.isnan(mcmc_diagnostics.rhat_rank(chain))
    assert mcmc_diagnostics.ess_bulk(chain) == mcmc_diagnostics.ess_bulk(chain[None])
    assert mcmc_diagnostics.ess_bulk(chain) == pytest.approx(_arviz(az.ess, chain, method="bulk"), rel=1e-9)


def test_rank_normalise_averages_tied_ranks():
    """Ties share their average rank: the four values (1, 2, 2, 3) have ranks 1, 2.5, 2.5, 4, so the two 2s get
    the same z, symmetric about the middle, and the whole is symmetric."""
    z = mcmc_diagnostics.rank_normalise(np.array([[1.0, 2.0], [2.0, 3.0]]))
    assert z[0, 1] == z[1, 0] == pytest.approx(0.0, abs=1e-15)
    assert z[0, 0] == pytest.approx(-z[1, 1], rel=1e-15) and z[0, 0] < 0


def test_normal_quantile_matches_the_standard_library_and_scipy():
    """pcrp.model.special_functions.normal_quantile is AS 241 vectorised, the algorithm of statistics.NormalDist.inv_cdf:
    equal to it within 4 units in the last place (both round the same rational functions, in another order), and to
    scipy's ndtri within 1e-14 relative (another algorithm, accurate to about 1e-16), over the central region, both
    tails to 1e-300 and the boundaries of the three approximations (|p - 1/2| = 0.425, r = 5); 0, 1 and values
    outside [0, 1] give -inf, inf and nan. A wrong coefficient moves some region by far more."""
    import statistics

    from scipy.special import ndtri

    from pcrp.model.special_functions import normal_quantile

    rng = np.random.default_rng(0)
    p = np.concatenate([rng.uniform(size=20_000), 10.0 ** -rng.uniform(0, 300, 5_000),
                        1 - 10.0 ** -rng.uniform(0, 16, 5_000), [0.075, 0.925, np.exp(-25), 0.5]])
    p = p[(p > 0) & (p < 1)]
    z = normal_quantile(p)
    expected = np.array([statistics.NormalDist().inv_cdf(v) for v in p])
    assert np.all(np.abs(z - expected) <= 4 * np.spacing(np.abs(expected)) + 1e-300)
    assert np.allclose(z, ndtri(p), rtol=1e-14, atol=0)
    edges = normal_quantile(np.array([0.0, 1.0, -0.5, 1.5, np.nan]))
    assert edges[0] == -np.inf and edges[1] == np.inf and np.isnan(edges[2:]).all()


def test_fft_length_is_the_next_5_smooth_number():
    scipy_fftpack = pytest.importorskip("scipy.fftpack")
    for n in range(1, 5000):
        assert mcmc_diagnostics._next_regular(n) == scipy_fftpack.next_fast_len(n)

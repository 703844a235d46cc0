"""pcrp.summaries.diagnostics: ArviZ's R-hat, ESS and MCSE (arviz-stats' array functions) behind pcrp's conventions.

Each test names one convention of the wrapper and fails when it breaks: which of ArviZ's figures each function is
(method, tail probabilities), a (D,) array read as one chain, nan where a figure is undefined, constant values
without a NumPy warning, a float returned, and the import made only when a figure is asked for."""

import logging
import subprocess
import sys
import warnings

import numpy as np
import pytest

from pcrp.summaries import diagnostics

az = pytest.importorskip("arviz")

FUNCTIONS = ("rhat_rank", "ess_bulk", "ess_tail", "mcse_mean")


def _arviz(fn, values, **kwargs):
    """ArviZ 0.x's figure on (C, D) values through its NumPy path, quietly (it logs a warning where undefined)."""
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
def test_each_function_is_the_arviz_figure_it_names(name, reference, kwargs):
    """Each function is ArviZ 0.x's figure of that name (the method, the tail's 5% and 95% quantiles), with the same
    nan, on 180 arrays with ties, short and odd lengths, one chain, constant chains and a NaN: one code, so equal to
    rounding (a wrong method, probability or axis moves the figures by far more than 1e-12)."""
    ours_fn = getattr(diagnostics, name)
    for seed in range(3):
        for values in _cases(seed):
            ours, theirs = ours_fn(values), _arviz(reference, values, **kwargs)
            assert np.isnan(ours) == np.isnan(theirs), (values.shape, ours, theirs)
            if not np.isnan(theirs):
                assert ours == pytest.approx(theirs, rel=1e-12, abs=1e-12), values.shape


def test_a_1d_array_is_one_chain():
    """A (D,) array is one chain: R-hat undefined, ESS and MCSE those of its (1, D) form."""
    chain = np.random.default_rng(0).normal(size=200).cumsum()
    assert np.isnan(diagnostics.rhat_rank(chain))
    for name in FUNCTIONS[1:]:
        value = getattr(diagnostics, name)(chain)
        assert np.isfinite(value) and value == getattr(diagnostics, name)(chain[None])


@pytest.mark.parametrize("name", FUNCTIONS)
def test_fewer_than_min_draws_per_chain_is_nan(name):
    """4 draws per chain (MIN_DRAWS) give a figure, 3 give nan, and so do none."""
    values = np.random.default_rng(1).normal(size=(3, 4))
    assert np.isfinite(getattr(diagnostics, name)(values))
    assert np.isnan(getattr(diagnostics, name)(values[:, :-1]))
    assert np.isnan(getattr(diagnostics, name)(np.empty((3, 0))))


def test_rhat_needs_two_chains():
    values = np.random.default_rng(2).normal(size=(2, 100))
    assert np.isfinite(diagnostics.rhat_rank(values))
    assert np.isnan(diagnostics.rhat_rank(values[:1]))


@pytest.mark.parametrize("name", FUNCTIONS)
def test_a_nan_anywhere_gives_nan(name):
    values = np.random.default_rng(3).normal(size=(2, 100))
    values[1, 57] = np.nan
    assert np.isnan(getattr(diagnostics, name)(values))


def test_constant_values_give_their_figures_without_a_warning():
    """Constant values (a K that never moves): R-hat nan (0/0, no RuntimeWarning), ESS every draw, MCSE 0."""
    values = np.full((2, 50), 3.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.isnan(diagnostics.rhat_rank(values))
        assert diagnostics.ess_bulk(values) == diagnostics.ess_tail(values) == 100.0
        assert diagnostics.mcse_mean(values) == 0.0


@pytest.mark.parametrize("name", FUNCTIONS)
def test_each_figure_is_a_python_float(name):
    """A float, not a 0-d array: the figures go into JSON (the result's config) and f-strings."""
    assert type(getattr(diagnostics, name)(np.random.default_rng(4).normal(size=(2, 30)))) is float


def _run(script):
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout.splitlines()[-1]


def test_arviz_stats_is_imported_when_a_figure_is_asked_for():
    """Importing the summaries (the live view, the budget) loads no arviz-stats, nor does a figure that is
    undefined by its shape; the first defined figure does."""
    script = ("import sys\nimport numpy as np\nimport pcrp.summaries.summary, pcrp.runs.budget\n"
              "from pcrp.summaries import diagnostics as d\n"
              "before = 'arviz_stats' in sys.modules\n"
              "short = np.isnan(d.ess_bulk(np.ones((2, 3))))\n"
              "after_short = 'arviz_stats' in sys.modules\n"
              "d.ess_bulk(np.arange(40.0).reshape(2, 20))\n"
              "print(before, short, after_short, 'arviz_stats.base' in sys.modules)")
    assert _run(script) == "False True False True"

"""A newcomer's first minutes: a compile is announced while it happens, with the seconds it took, and a fitted
model and its chains say in a line what they are."""

import numpy as np
import pytest

from pcrp.runs import compiling
from pcrp.cli import main
from pcrp.data import old_faithful
from pcrp.estimator import PCRPMixture
from pcrp.model import PowerCRP


@pytest.fixture
def first_run(monkeypatch):
    """As if numba's cache were empty: the sweep's parts compile something (a kernel made afresh for each call, which
    numba has never seen) and the real kernels load from the cache when the run first calls them; the separate
    process is a stand-in that compiles the same way, so the test does not wait for a real one."""
    from numba import njit

    def compiles_afresh(part):
        if part == compiling.SEARCH:  # the separate process (a real one, loading from the cache) did it
            return

        @njit
        def afresh(x):
            return x + 1

        afresh(1)
        compiling.warm_up_sweeps("full", part.split(":")[0])

    monkeypatch.setattr(compiling, "run_part", compiles_afresh)
    monkeypatch.setattr(compiling, "_READY", set())


def test_the_first_pcrp_run_says_what_it_compiles_with_the_seconds_measured(first_run, tmp_path, capsys):
    assert main(["run", "old-faithful", "--iters", "40", "--out", str(tmp_path / "a.npz")]) == 0
    err = capsys.readouterr().err
    assert err.startswith("compiling the sweep and its split-merge moves (once per installation) ...\n"
                          "  part of it and the point estimate's search in a separate process meanwhile\n"
                          "  compiled in ")
    assert err.count("compiling ") == 1  # the search's compile in the separate process is said only when it compiled
    seconds = float(err.split("  compiled in ")[1].split(" s;")[0])
    assert 0 <= seconds < 60  # this compile's own seconds (a few hundredths here), not a figure typed beforehand


def test_the_first_fit_says_it_is_compiling_when_verbose_and_nothing_at_verbose_0(first_run, capsys):
    """A scikit-learn estimator is silent at verbose=0 (issue 57): the compile is announced with verbose=1 only."""
    PCRPMixture(n_chains=1, iters=20, random_state=0, verbose=1).fit(old_faithful().X)
    assert "compiling the sweep and its split-merge moves (once per installation) ..." in capsys.readouterr().err
    PCRPMixture(n_chains=1, iters=20, random_state=0).fit(old_faithful().X)
    assert capsys.readouterr() == ("", "")


def test_a_cached_run_says_nothing_about_compiling(tmp_path, capsys):
    compiling.compile_kernels()  # this process has them now
    assert main(["run", "old-faithful", "--iters", "40", "--out", str(tmp_path / "a.npz")]) == 0
    assert "compiling" not in capsys.readouterr().err


def test_a_fitted_model_and_its_chains_say_what_they_are_in_a_line():
    model = PCRPMixture(prior=PowerCRP(r=1.7), random_state=0).fit(old_faithful().X)
    text = repr(model)
    assert text.startswith("PCRPMixture(prior=PowerCRP(alpha=1.0, r=1.7), random_state=0)")
    assert "fitted: prior pCRP (alpha=1, r=1.7); N 272; K 2;" in text and "R-hat K" in text and "stopped" in text
    chains = repr(model.chains_)
    assert chains.startswith("ChainSet(prior: pCRP") and "stopped: converged" in chains and len(chains) < 400
    html = model.chains_._repr_html_()
    assert "<table>" in html and "&lt;= 1.01" in html  # escaped
    assert "PCRPMixture" in model._repr_mimebundle_()["text/html"]  # scikit-learn's own diagram, not overridden
    assert repr(PCRPMixture()) == "PCRPMixture()"  # unfitted: scikit-learn's own

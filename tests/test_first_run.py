"""A newcomer's first minutes: the compile step is announced, and a fitted model and its chains say in a line
what they are."""

import numpy as np
import pytest

from pcrp.runs import compiling
from pcrp.cli import main
from pcrp.data import old_faithful
from pcrp.estimator import PCRPMixture
from pcrp.model import PowerCRP


@pytest.fixture
def first_run(monkeypatch):
    """As if numba's cache were empty: kernels_need_compiling says so, and warm_up is recorded (not redone)."""
    calls = []
    monkeypatch.setattr(compiling, "kernels_need_compiling", lambda dim=2: True)
    monkeypatch.setattr(compiling, "warm_up", lambda summaries=False, dim=2: calls.append((summaries, dim)))
    return calls


def test_the_first_pcrp_run_says_it_is_compiling_and_later_runs_do_not(first_run, tmp_path, capsys):
    assert main(["run", "old-faithful", "--iters", "40", "--out", str(tmp_path / "a.npz")]) == 0
    err = capsys.readouterr().err
    assert "compiling the sampler's kernels for d = 2 (once per installation and d, about" in err
    assert "compiled in" in err
    assert first_run[0] == (True, 2)  # the sweep (for Old Faithful's d) and the point estimate's kernels, one message


def test_the_first_fit_says_it_is_compiling(first_run, capsys):
    PCRPMixture(n_chains=1, iters=20, random_state=0).fit(old_faithful().X)
    assert "compiling the sampler's kernels" in capsys.readouterr().err


def test_a_cached_run_says_nothing_about_compiling(tmp_path, capsys):
    compiling.warm_up(summaries=True)  # this process has them now
    assert not compiling.kernels_need_compiling(2)
    assert main(["run", "old-faithful", "--iters", "40", "--out", str(tmp_path / "a.npz")]) == 0
    assert "compiling" not in capsys.readouterr().err


def test_a_fitted_model_and_its_chains_say_what_they_are_in_a_line():
    model = PCRPMixture(prior=PowerCRP(r=1.7), random_state=0).fit(old_faithful().X)
    text = repr(model)
    assert text.startswith("PCRPMixture(prior=PowerCRP(alpha=1.0, r=1.7, name='pcrp'), random_state=0)")
    assert "fitted: prior pCRP (alpha=1, r=1.7); N 272; K 2;" in text and "R-hat K" in text and "stopped" in text
    chains = repr(model.chains_)
    assert chains.startswith("ChainSet(prior: pCRP") and "stopped: converged" in chains and len(chains) < 400
    html = model.chains_._repr_html_()
    assert "<table>" in html and "&lt;= 1.01" in html  # escaped
    assert "fitted" in model._repr_mimebundle_()["text/html"]
    assert repr(PCRPMixture()) == "PCRPMixture()"  # unfitted: scikit-learn's own

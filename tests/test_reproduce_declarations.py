"""Reproduce's and compare's settings are declared once (REPRODUCE_PARAMS, COMPARE_PARAMS, their presets), their
priors come from the registry (a prior registered at run time included) and what a prior does there is decided by
its registry fields; the report writers they share (pcrp.experiments.reports)."""

from dataclasses import dataclass, field, replace

import pytest

from pcrp.experiments import compare
from pcrp.basics.errors import SettingError
from pcrp.model import MFM, PRIORS, PriorSpec
from pcrp.experiments.reproduce import FULL, PAPER, QUICK, QUICK_CHECK, REPRODUCE_PARAMS, Protocol, all_methods, extra_methods
from pcrp.experiments.reproduce import methods as repro_methods


@dataclass(frozen=True)
class WideMFM(MFM):
    name: str = field(default="mfm-wide", init=False)


@pytest.fixture
def registry_with_a_new_prior(monkeypatch):
    """A prior registered at run time: the MFM's maths under another name and label."""
    spec = PriorSpec("mfm-wide", "Wide MFM", WideMFM, PRIORS["mfm"].params, "The MFM with another name (a test).",
                     True)
    monkeypatch.setitem(PRIORS, "mfm-wide", spec)
    return spec


def test_the_paper_protocol_and_the_quick_check_are_presets_of_the_declarations():
    assert PAPER == {"iters": 20000, "burn_in": 10000, "thin": 5, "alpha": 1.0}
    assert (FULL.iters, FULL.burn_in, FULL.thin, FULL.alpha, FULL.n_seeds) == (20000, 10000, 5, 1.0, 10)
    assert Protocol() == FULL  # the declared defaults are the paper's protocol
    assert QUICK == Protocol(**QUICK_CHECK) and (QUICK.iters, QUICK.n_seeds, QUICK.cv_folds) == (2000, 3, 3)
    assert all(getattr(FULL, name) == p.default for name, p in REPRODUCE_PARAMS.items() if hasattr(FULL, name))


@pytest.mark.parametrize("settings,message", [
    (dict(cv_folds=1), "cv_folds must be a whole number >= 2"),
    (dict(iters=100, burn_in=100), r"burn_in \(100\) must be smaller than iters \(100\)"),
    (dict(alpha=0), "alpha must be a finite number > 0"),
    (dict(cv_rule="median"), "the cross-validation rule must be one of robust, mean"),
])
def test_a_protocol_outside_its_declarations_is_refused_with_the_reason(settings, message):
    with pytest.raises(SettingError, match=message):
        Protocol(**settings)


def test_reproduce_runs_the_registry_priors_beyond_the_paper_including_one_registered_at_run_time(
        registry_with_a_new_prior):
    assert extra_methods() == ("MFM", "SFM", "WM")  # the label "Wide MFM" reads WM in the tables
    assert all_methods()[:3] == ("CRP-Oracle", "CRP", "pCRP")
    prior = repro_methods.method_prior("WM", QUICK, k_true=3, n=300)
    assert prior.spec is registry_with_a_new_prior and (prior.gamma, prior.lam) == (1.0, 1.0)  # registry defaults
    assert "the wide mfm" in repro_methods.extra_methods_text()


def test_reproduce_builds_the_paper_priors_from_the_registry_fields(monkeypatch):
    oracle = repro_methods.method_prior("CRP-Oracle", FULL, k_true=3, n=300)
    crp = repro_methods.method_prior("CRP", replace(FULL, alpha=2.0), k_true=3, n=300)
    pcrp = repro_methods.method_prior("pCRP", FULL, k_true=3, n=300, tuned_value=1.3)
    assert oracle.spec.reference and oracle.alpha == pytest.approx(3 / 5.703782474656201)
    assert crp.spec.reference and crp.alpha == 2.0
    assert pcrp.spec.tuned == "r" and (pcrp.alpha, pcrp.r) == (1.0, 1.3)
    assert repro_methods.tuned_value(crp) == 1.0 and repro_methods.tuned_value(pcrp) == 1.3
    # the roles follow the fields, not the names: without a tuned prior there is no pCRP row to run
    monkeypatch.setitem(PRIORS, "pcrp", replace(PRIORS["pcrp"], tuned=None, tune_grid=()))
    with pytest.raises(SettingError, match="no prior in the registry has a tuned parameter"):
        repro_methods.method_prior("pCRP", FULL, k_true=3, n=300, tuned_value=1.3)


def test_an_unknown_method_is_refused_naming_the_choices():
    from pcrp.experiments.reproduce import EXPERIMENTS, run_experiment

    with pytest.raises(SettingError, match=r"unknown method 'DP'; choose from CRP-Oracle, CRP, pCRP, MFM, SFM"):
        run_experiment(EXPERIMENTS["sim1-300"], QUICK, methods=("CRP", "DP"))


def test_compare_lists_every_registered_prior_and_its_declared_settings(registry_with_a_new_prior):
    assert compare.compare_methods() == ("CRP", "pCRP", "Pitman-Yor", "MFM", "SFM", "WM", "BGM")
    assert compare.reference_method() == "CRP" and compare.tuned_method() == "pCRP"
    assert compare.COMPARE_PARAMS.defaults()["n_seeds"] == 3 and compare.COMPARE_PARAMS.defaults()["seed"] == 1000
    assert compare.SHIPPED == {"n_seeds": 3, "seed": 1000}


def test_compare_refuses_bad_settings_before_fitting_anything(monkeypatch):
    monkeypatch.setattr(compare, "fit_data_set", lambda *a, **k: pytest.fail("fitted"))
    with pytest.raises(SettingError, match="n_seeds must be a whole number >= 1"):
        compare.run_comparison(["iris"], n_seeds=0)


def test_the_report_writers_write_whole_files_and_one_plotly_bundle(tmp_path):
    import plotly.graph_objects as go

    from pcrp.experiments.reports import csv_text, markdown_table, method_name, write_figure

    assert csv_text([{"a": 1, "b": 2, "c": 3}], ["a", "b"]) == "a,b\r\n1,2\r\n"
    assert markdown_table([{"x": "1", "y": "2"}]) == "| x | y |\n|---|---|\n| 1 | 2 |"
    assert [method_name(PRIORS[k]) for k in ("crp", "pcrp", "py", "mfm", "sfm")] == [
        "CRP", "pCRP", "Pitman-Yor", "MFM", "SFM"]
    write_figure(go.Figure(), tmp_path / "a.html")
    write_figure(go.Figure(), tmp_path / "b.html")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.html", "b.html", "plotly.min.js"]
    assert 'src="plotly.min.js"' in (tmp_path / "a.html").read_text()

"""`pcrp run --prior ...`: the flags come from the registry (pcrp.model.PRIORS), a flag the chosen prior does not
use is refused with the prior's own flags named, and every prior's run, read back from its file, samples the
exact posterior (the same tolerance rule as tests/test_exact_posterior.py)."""

from collections import Counter

import arviz as az
import numpy as np
import pytest

from pcrp.runs.chains import ChainSet
from pcrp.cli import build_parser, main
from pcrp.model.exact import canonical, exact_posterior, k_distribution
from pcrp.model import NIW, PRIORS, make_prior

from test_exact_posterior import K_FACTOR, PARTITION_FACTOR, expected_tv

X5 = np.array([[-1.2, 0.3], [-0.9, 0.1], [0.2, -0.4], [1.1, 0.8], [1.4, 0.6]])
NIW_FLAGS = ["--no-standardize", "--m0", "0,0", "--kappa0", "0.5", "--nu0", "5", "--s0", "1.5"]


def flag(name):
    return "--" + name.replace("_", "-")


@pytest.fixture
def csv5(tmp_path):
    path = tmp_path / "five.csv"
    path.write_text("a,b\n" + "\n".join(f"{a},{b}" for a, b in X5.tolist()) + "\n")
    return path


EVERY_PARAMETER = sorted({p.name for spec in PRIORS.values() for p in spec.params})
STRAY = [pytest.param(name, other, id=f"{name}-{other}") for name, spec in PRIORS.items()
         for other in EVERY_PARAMETER if other not in {p.name for p in spec.params}]


def test_every_registry_parameter_is_a_flag_of_run():
    run = build_parser()._subparsers._group_actions[0].choices["run"]
    flags = {option for action in run._actions for option in action.option_strings}
    assert {flag(name) for name in EVERY_PARAMETER} <= flags
    prior_action = next(a for a in run._actions if "--prior" in a.option_strings)
    assert list(prior_action.choices) == list(PRIORS)


@pytest.mark.parametrize("name,other", STRAY)
def test_a_flag_the_prior_does_not_use_is_refused_naming_its_own(csv5, tmp_path, capsys, name, other):
    rc = main(["run", str(csv5), "--prior", name, flag(other), "1", "--out", str(tmp_path / "o.npz")])
    err = capsys.readouterr().err
    assert rc == 2 and err.startswith("pcrp: error:") and err.count("\n") == 1, err
    assert f"{flag(other)} does not apply to --prior {name}" in err
    for p in PRIORS[name].params:
        assert flag(p.name) in err.split("its parameters are")[1]
    assert not (tmp_path / "o.npz").exists()


@pytest.mark.parametrize("args,message", [
    (["--prior", "py", "--sigma", "1"], r"sigma must be below 1 \(got 1\)"),
    (["--prior", "py", "--sigma", "-0.1"], r"sigma must be a finite number >= 0 \(got -0.1\)"),
    (["--prior", "py", "--alpha", "-0.5", "--sigma", "0.2"], r"alpha must be > -sigma"),
    (["--prior", "mfm", "--lam", "0"], r"lam must be a finite number > 0 \(got 0\)"),
    (["--prior", "mfm", "--gamma", "1e6"], r"gamma must be at most 1000 \(got 1e\+06\)"),
    (["--prior", "sfm", "--k-max", "2.5"], r"--k-max must be a whole number \(got 2.5\)"),
    (["--prior", "sfm", "--k-max", "0"], r"--k-max must be a whole number >= 1 \(got 0\)"),
    (["--prior", "sfm", "--gamma", "nan"], r"gamma must be a finite number > 0 \(got nan\)"),
    (["--prior", "pcrp", "--r", "0"], r"r must be a finite number > 0 \(got 0\)"),
    (["--prior", "crp", "--alpha", "x"], r"argument --alpha: invalid float value: 'x'"),
])
def test_each_out_of_bounds_prior_parameter_gets_one_line(csv5, tmp_path, capsys, args, message):
    import re

    rc = main(["run", str(csv5), *args, "--out", str(tmp_path / "o.npz")])
    err = capsys.readouterr().err
    assert rc == 2 and err.startswith("pcrp: error:") and err.count("\n") == 1, err
    assert re.search(message, err), err


# One non-default value per parameter, so that a flag that is parsed but not passed on would show.
CHOSEN = {"crp": ["--alpha", "0.7"], "pcrp": ["--alpha", "0.8", "--r", "1.6"],
          "py": ["--alpha", "0.5", "--sigma", "0.6"], "mfm": ["--gamma", "0.4", "--lam", "2.5"],
          "sfm": ["--gamma", "0.3", "--k-max", "2"]}


def test_every_prior_has_a_case_here():
    assert set(CHOSEN) == set(PRIORS)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(CHOSEN))
def test_pcrp_run_with_each_prior_samples_its_exact_posterior(csv5, tmp_path, capsys, name):
    """Two chains of 20,000 sweeps on 5 points; the config in the file must name exactly the prior's own
    parameters at the values typed, and the pooled partition frequencies must meet the bounds of
    tests/test_exact_posterior.py with n = the bulk ESS of K over both chains (at least 10,000 here)."""
    out = tmp_path / "o.npz"
    rc = main(["run", str(csv5), "--prior", name, *CHOSEN[name], *NIW_FLAGS, "--iters", "20000",
               "--burn-in", "0", "--thin", "1", "--chains", "2", "--init", "one,random:5", "--seed", "4",
               "--out", str(out)])
    assert rc == 0, capsys.readouterr().err
    chains = ChainSet.load(out)
    typed = dict(zip(CHOSEN[name][::2], map(float, CHOSEN[name][1::2])))
    prior = make_prior(name, **{k[2:].replace("-", "_"): v for k, v in typed.items()})
    assert {k: chains.config[k] for k in prior.params()} == prior.params()
    config = chains.config
    niw = NIW(np.asarray(config["m0"]), config["kappa0"], config["nu0"], np.asarray(config["S0"]))
    partitions, probs = exact_posterior(X5, prior, niw)
    draws = chains.labels.reshape(-1, len(X5))
    counts = Counter(canonical(z) for z in draws)
    freq = np.array([counts.get(z, 0) for z in partitions]) / len(draws)
    assert freq.sum() == pytest.approx(1.0)
    ess = float(np.asarray(az.ess(chains.K.astype(float), method="bulk")).item())
    assert ess >= 10_000
    p_k = k_distribution(partitions, probs)
    assert 0.5 * np.abs(k_distribution(partitions, freq) - p_k).sum() < K_FACTOR * expected_tv(p_k, ess)
    assert 0.5 * np.abs(freq - probs).sum() < PARTITION_FACTOR * expected_tv(probs, ess)


def test_the_pcrp_r_of_a_built_in_data_set_is_its_shipped_cv_choice_and_says_so(tmp_path, capsys):
    """No silent default: without --r, pcrp run on a built-in data set uses the r shipped in
    pcrp/datasets/cv_r.json and prints where it came from; a CSV gets the registry default, said to be one;
    a given --r is used as typed."""
    from pcrp.analyses.cv import builtin_r
    from pcrp.model import DEFAULT_R

    short = ["--iters", "30", "--burn-in", "10", "--thin", "5", "--chains", "1"]
    assert main(["run", "old-faithful", *short, "--out", str(tmp_path / "a.npz")]) == 0
    printed = capsys.readouterr().out
    r, provenance = builtin_r("old-faithful")
    assert r != DEFAULT_R  # else this test could not tell the two apart
    assert ChainSet.load(tmp_path / "a.npz").config["r"] == r
    assert f"where r came from: r = {r:g} for old-faithful" in printed and "cross validation" in printed
    assert main(["run", "old-faithful", "--r", "1.3", *short, "--out", str(tmp_path / "b.npz")]) == 0
    assert ChainSet.load(tmp_path / "b.npz").config["r"] == 1.3
    assert "where r came from" not in capsys.readouterr().out


def test_a_csv_gets_the_default_r_and_is_told_it_is_one(csv5, tmp_path, capsys):
    from pcrp.model import DEFAULT_R

    assert main(["run", str(csv5), "--iters", "20", "--burn-in", "0", "--chains", "1",
                 "--out", str(tmp_path / "a.npz")]) == 0
    assert ChainSet.load(tmp_path / "a.npz").config["r"] == DEFAULT_R
    assert f"where r came from: r = {DEFAULT_R:g} is pcrp's default, not chosen for these data" in capsys.readouterr().out

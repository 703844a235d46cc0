"""A prior of your own (docs/adding_a_prior.md): the shifted CRP, g(n) = n + theta, registered at run time or
found through an installed package's ``pcrp.priors`` entry point, samples its exact posterior and runs through
``pcrp run`` (its parameter a flag, its bound enforced) and PCRPMixture; bad registrations and broken packages are
refused with a message naming them. Every test leaves the registry as built in (the fixtures unregister).

The exact-posterior check uses the method and tolerances of tests/test_exact_posterior.py: 50,000 sweeps from one
cluster on N = 7 overlapping points, TV(K) < 4 E_TV(p_K, ESS) and TV over the 877 partitions < 2 E_TV(p, ESS),
with ESS the bulk effective sample size of the K trace (at least 10,000).
"""

import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
from sklearn.base import clone
import pytest
from scipy.special import gammaln

import pcrp
from pcrp.model.exact import exact_posterior, k_distribution, log_eppf
from pcrp.model import ALPHA, CRP, PRIORS, ModelError, make_prior, resolve_niw
from pcrp.basics.params import Param
from pcrp.model.registry import PriorPluginWarning

from test_exact_posterior import K_FACTOR, assert_matches_exact, expected_tv, overlapping_data

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "docs" / "examples" / "shifted_crp"
sys.path.insert(0, str(EXAMPLE))
import shifted_crp  # noqa: E402  (the example package's one module: docs/examples/shifted_crp)

BUILT_IN = ["crp", "pcrp", "py", "mfm", "sfm"]
CSV = "a,b\n-1.2,0.3\n-0.9,0.1\n0.2,-0.4\n1.1,0.8\n1.4,0.6\n"


@pytest.fixture(autouse=True)
def built_in_registry_afterwards():
    """Whatever a test registers is removed after it, so that other tests see the built-in registry."""
    yield
    for name in set(PRIORS) - set(BUILT_IN):
        pcrp.unregister_prior(name)
    assert list(PRIORS) == BUILT_IN


@pytest.fixture
def registered():
    """The shifted CRP registered at run time (by the example's own register function), removed afterwards."""
    shifted_crp.register()
    yield PRIORS["shifted_crp"]
    pcrp.unregister_prior("shifted_crp")


@pytest.fixture
def csv5(tmp_path):
    path = tmp_path / "five.csv"
    path.write_text(CSV)
    return path


def test_its_tables_are_the_shifted_crp(registered):
    """W(n) = (1 + theta)^(n-1) (a rising factorial), V_N(K) = alpha^K up to a constant: every partition's
    prior mass, relative to one block, matches the closed form (theta = 2, alpha = 0.7, N = 6)."""
    prior = make_prior("shifted_crp", alpha=0.7, theta=2.0)
    partitions, log_p = log_eppf(prior, 6)
    sizes = [np.bincount(z) for z in partitions]
    closed = np.array([len(n) * np.log(0.7) + np.sum(gammaln(n + 2.0) - gammaln(3.0)) for n in sizes])
    assert np.allclose(log_p - log_p[0], closed - closed[0], rtol=0, atol=1e-12)
    assert not registered.normalised and registered.label == "shifted CRP"
    assert make_prior("shifted_crp", theta=0.0).log_weight(np.arange(1, 9)) == pytest.approx(
        CRP(1.0).log_weight(np.arange(1, 9)))


def test_registered_at_run_time_it_samples_its_exact_posterior(registered):
    """The sampler's long-run frequencies of K and of every partition match the exact posterior (N = 7, d = 1,
    split-merge on), and that posterior differs from the CRP's by far more than the tolerance (the test would
    see a registration that dropped theta)."""
    X = overlapping_data(7, 1, seed=8)
    prior = make_prior("shifted_crp", alpha=1.0, theta=3.0)
    p_k, ess = assert_matches_exact(X, prior, "dahl")
    partitions, crp_probs = exact_posterior(X, CRP(1.0), resolve_niw(X))
    assert 0.5 * np.abs(k_distribution(partitions, crp_probs) - p_k).sum() > 3 * K_FACTOR * expected_tv(p_k, ess)


def test_pcrp_run_takes_its_parameter_as_a_flag(registered, csv5, tmp_path, capsys):
    from pcrp.runs.chains import ChainSet
    from pcrp.cli import main

    out = tmp_path / "o.npz"
    rc = main(["run", str(csv5), "--prior", "shifted_crp", "--theta", "2.5", "--iters", "60", "--chains", "2",
               "--seed", "3", "--out", str(out)])
    assert rc == 0, capsys.readouterr().err
    assert "prior: shifted CRP (alpha=1, theta=2.5)" in capsys.readouterr().out
    config = ChainSet.load(out).config
    assert (config["prior"], config["theta"], config["alpha"]) == ("shifted_crp", 2.5, 1.0)


@pytest.mark.parametrize("value,message", [
    ("1001", "--theta must be at most 1000 (got 1001): beyond it every table weighs about theta"),
    ("-0.5", "--theta must be a finite number >= 0 (got -0.5): shift theta of the shifted CRP, in [0, 1000]"),
])
def test_pcrp_run_refuses_a_value_outside_its_bounds(registered, csv5, tmp_path, capsys, value, message):
    from pcrp.cli import main

    rc = main(["run", str(csv5), "--prior", "shifted_crp", "--theta", value, "--out", str(tmp_path / "o.npz")])
    err = capsys.readouterr().err
    assert rc == 2 and err.startswith("pcrp: error:") and err.count("\n") == 1, err
    assert message in err
    assert not (tmp_path / "o.npz").exists()


def test_pcrp_mixture_fits_a_prior_registered_before_it_is_imported():
    """In a fresh process: registered, then pcrp.estimator imported."""
    code = textwrap.dedent(f"""
        import sys; sys.path.insert(0, {str(EXAMPLE)!r})
        import numpy as np, shifted_crp
        shifted_crp.register()
        from pcrp.estimator import PCRPMixture
        from pcrp.model import make_prior
        X = np.random.default_rng(0).normal(size=(30, 2))
        prior = make_prior("shifted_crp", theta=2.0)
        m = PCRPMixture(prior=prior, iters=60, n_chains=2, random_state=0).fit(X)
        print(m.prior_.label(), m.labels_.shape)
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300,
                          env=_env())
    assert done.returncode == 0, done.stderr
    assert "shifted CRP (alpha=1, theta=2) (30,)" in done.stdout


def test_pcrp_mixture_fits_a_prior_registered_after_it_is_imported():
    """The order of a notebook that imports the estimator, then registers a prior: nothing of the estimator is
    made from the registry at import (its signature is fixed; a prior object carries its own parameters), so the
    prior works at once, by name and as an object whose parameters nest (prior__theta)."""
    from pcrp.estimator import PCRPMixture  # imported first

    shifted_crp.register()
    try:
        X = np.random.default_rng(0).normal(size=(30, 2))
        model = PCRPMixture(prior=make_prior("shifted_crp", theta=2.0), iters=60, n_chains=2, random_state=0)
        assert clone(model).get_params()["prior__theta"] == 2.0  # scikit-learn sees theta as a nested parameter
        assert model.fit(X).prior_.theta == 2.0
        assert model.set_params(prior__theta=3.0).fit(X).prior_ == make_prior("shifted_crp", theta=3.0)
        with pytest.raises(ModelError, match=r"theta must be at most 1000 \(got 1001\)"):
            model.set_params(prior__theta=1001.0)
        by_name = PCRPMixture(prior="shifted_crp", iters=60, n_chains=2, random_state=0).fit(X)
        assert by_name.prior_ == make_prior("shifted_crp")  # its declared defaults
    finally:
        pcrp.unregister_prior("shifted_crp")
    # once unregistered, the prior is refused by name at fit, as an object or by its name
    with pytest.raises(ValueError, match="No prior 'shifted_crp' is registered"):
        model.fit(X)
    with pytest.raises(ValueError, match="Unknown prior 'shifted_crp'"):
        by_name.fit(X)
    with pytest.raises(TypeError, match="theta"):
        PCRPMixture(prior="crp", theta=2.0)


# ---------------------------------------------------------------------------------------------------------------
# Installed packages: a dist-info folder on sys.path with an entry point in the group pcrp.priors.
# ---------------------------------------------------------------------------------------------------------------


def _env():
    import os

    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}


def fake_package(folder, name, entry, module=None, source=""):
    """A package called ``name`` installed in ``folder``: its dist-info with one pcrp.priors entry point
    (``entry``, e.g. "shifted_crp:register") and, when given, a module file of ``source``."""
    info = folder / f"{name.replace('-', '_')}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[pcrp.priors]\n{entry.split(':')[0]} = {entry}\n")
    if module:
        (folder / f"{module}.py").write_text(source)
    return folder


@pytest.fixture
def discover(monkeypatch):
    """discover(folder): put ``folder`` on sys.path and read the entry points anew; afterwards the registry is as
    built in again."""
    import importlib

    before = set(PRIORS)

    def run(folder):
        monkeypatch.syspath_prepend(str(folder))
        importlib.invalidate_caches()
        failures = len(PRIORS.failures)
        PRIORS.discover(again=True)
        return PRIORS.failures[failures:]

    yield run
    for name in set(PRIORS) - before:
        pcrp.unregister_prior(name)
    PRIORS.failures.clear()


def test_an_installed_package_adds_its_prior(tmp_path, discover):
    """The example package's entry point (docs/examples/shifted_crp/pyproject.toml) is found and registers the
    prior, recorded as the package's."""
    entry = (EXAMPLE / "pyproject.toml").read_text().split('[project.entry-points."pcrp.priors"]\n')[1].split("\n")[0]
    assert entry == 'shifted_crp = "shifted_crp:register"'
    assert "shifted_crp" not in PRIORS
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert discover(fake_package(tmp_path, "pcrp-shifted-crp", "shifted_crp:register")) == []
    assert "shifted_crp" in PRIORS
    assert "pcrp-shifted-crp 0.1" in PRIORS.source("shifted_crp")
    assert make_prior("shifted_crp", theta=1.0).theta == 1.0


BROKEN = {
    "import": ("raise ImportError('no module named numpyy')", "ImportError: no module named numpyy"),
    "bad prior": ("import numpy as np, pcrp\n"
                  "def register():\n"
                  "    pcrp.register_gcrp('half_good', 'half good', (), log_g=lambda n, p: np.log(n),\n"
                  "                       log_new=lambda K, p: 0.0)\n"
                  "    pcrp.register_gcrp('minus', 'minus', (), log_g=lambda n, p: np.log(n - 1.0),\n"
                  "                       log_new=lambda K, p: 0.0)\n",
                  "log g(n) = log W(n + 1) / W(n) must be finite for every block size n >= 1 (it is -inf at n = 1)"),
    "nothing": ("def register():\n    pass\n", "it registered no prior"),
}


@pytest.mark.parametrize("case", list(BROKEN))
def test_a_broken_package_is_left_out_with_a_warning_naming_it(tmp_path, discover, case):
    source, message = BROKEN[case]
    module = f"broken_prior_{case.replace(' ', '_')}"  # a module per case: Python imports a name once
    folder = fake_package(tmp_path, "pcrp-broken-prior", f"{module}:register", module, source)
    with pytest.warns(PriorPluginWarning) as caught:
        failures = discover(folder)
    texts = [str(w.message) for w in caught if issubclass(w.category, PriorPluginWarning)]
    assert failures == texts and len(texts) == 1
    text = texts[0]
    assert f"the package pcrp-broken-prior 0.1 (entry point {module} = {module}:register" in text
    assert message in text and "Its priors are left out" in text
    assert "half_good" not in PRIORS  # a package that fails adds nothing
    with pytest.raises(ModelError, match="Unknown prior 'minus'.*pcrp-broken-prior"):
        make_prior("minus")


def test_a_broken_package_never_stops_pcrp_starting(tmp_path):
    """`pcrp run --help` and the registry work, with one warning line naming the package and no traceback."""
    folder = fake_package(tmp_path, "pcrp-broken-prior", "broken_prior:register", "broken_prior",
                          "raise RuntimeError('boom')")
    env = _env()
    env["PYTHONPATH"] = f"{folder}:{env['PYTHONPATH']}"
    done = subprocess.run([sys.executable, "-m", "pcrp.cli", "run", "--help"], capture_output=True, text=True,
                          cwd=ROOT, timeout=300, env=env)
    assert done.returncode == 0 and "--prior {crp,pcrp,py,mfm,sfm}" in done.stdout.replace("\n", " ")
    assert "Traceback" not in done.stderr
    # one line naming the package (the command line prints a warning as a note)
    lines = [line for line in done.stderr.splitlines() if "pcrp-broken-prior 0.1" in line]
    assert len(lines) == 1 and "did not add its priors: RuntimeError: boom." in lines[0]


# ---------------------------------------------------------------------------------------------------------------
# Registrations refused, each with what is wrong.
# ---------------------------------------------------------------------------------------------------------------

THETA = shifted_crp.THETA
GOOD = {"log_g": shifted_crp.log_g, "log_new": shifted_crp.log_new}
BAD = [
    ("crp", "mine", (ALPHA,), GOOD, "'crp' is a built-in prior of pcrp; register yours under another name"),
    ("Shifted CRP", "x", (ALPHA,), GOOD, "lower case letters, digits and _"),
    ("sc", "", (ALPHA,), GOOD, "label must be the name shown to people"),
    ("sc", "x", ("alpha",), GOOD, "each parameter must be declared as pcrp.basics.params.Param"),
    ("sc", "x", (ALPHA, ALPHA), GOOD, "two parameters are called 'alpha'"),
    ("sc", "x", (Param("label", "l", 1.0, 0.0, 2.0, True, True, "h"),), GOOD, "parameter name 'label' is not usable"),
    ("sc", "x", (Param("kappa0", "k", 1.0, 0.0, 2.0, True, True, "h"),), GOOD, "is the NIW's"),
    ("sc", "x", (Param("theta", "t", 5.0, 0.0, 2.0, True, True, "h"),), GOOD, "theta must be at most 2 (got 5)"),
    ("sc", "x", (ALPHA,), {"log_g": "log", "log_new": shifted_crp.log_new}, "log_g must be a function"),
    ("sc", "x", (ALPHA, THETA), {**GOOD, "log_new": lambda K, p: np.full(3, 0.0)},
     "its functions failed for N = 1 item: ValueError"),
    ("sc", "x", (ALPHA, THETA), {**GOOD, "log_g": lambda n, p: np.log(p.theta - n)},
     "log g(n) = log W(n + 1) / W(n) must be finite for every block size n >= 1 (it is nan at n = 1)"),
    ("sc", "x", (ALPHA, THETA), {**GOOD, "log_new": lambda K, p: np.where(K > 2, np.inf, 0.0)},
     "the new-block weight (K tables occupied) is inf at N = 2, K = 3"),
    ("sc", "x", (ALPHA, THETA), {**GOOD, "tuned": "theta", "tune_grid": (1.0, 2000.0)},
     "theta must be at most 1000 (got 2000)"),
    ("sc", "x", (ALPHA, THETA), {**GOOD, "tuned": "r", "tune_grid": (1.0,)}, "tuned='r' is not one of its parameters"),
]


@pytest.mark.parametrize("name,label,params,functions,message", BAD, ids=[m for *_, m in BAD])
def test_a_bad_g_crp_registration_is_refused_saying_why(name, label, params, functions, message):
    with pytest.raises(ModelError) as caught:
        pcrp.register_gcrp(name, label, params, **functions)
    assert message in str(caught.value)
    assert list(PRIORS) == BUILT_IN


def test_the_registry_counts_its_changes():
    """PRIORS.version moves on with every registration and removal, so that what is made from the registry (the
    Explorer's settings) can tell that it is stale."""
    start = PRIORS.version
    shifted_crp.register()
    assert PRIORS.version == start + 1
    pcrp.unregister_prior("shifted_crp")
    assert PRIORS.version == start + 2


def test_a_name_is_registered_once_unless_replaced(registered):
    with pytest.raises(ModelError, match="A prior 'shifted_crp' is already registered .*pass replace=True"):
        shifted_crp.register()
    spec = pcrp.register_gcrp("shifted_crp", "shifted CRP (again)", (ALPHA, THETA), replace=True, **GOOD)
    assert PRIORS["shifted_crp"] is spec and make_prior("shifted_crp").label().startswith("shifted CRP (again)")


def _crp_log_w(n, p):
    return gammaln(n)


def test_a_normalised_prior_must_sum_to_one():
    """register_prior with normalised=True checks the EPPF over all partitions of N <= 6: the CRP by its tables
    passes, the same without its normaliser 1 / alpha^(N) is refused; an unnormalised registration is not
    checked (its V_N is known up to a constant)."""
    def log_v(N, K, p):
        return K * np.log(p.alpha) - (gammaln(p.alpha + N) - gammaln(p.alpha))

    try:
        spec = pcrp.register_prior("crp_tables", "CRP by tables", (ALPHA,), log_w=_crp_log_w, log_v=log_v,
                                   normalised=True)
        assert spec.normalised
        assert np.exp(log_eppf(make_prior("crp_tables", alpha=0.3), 7)[1]).sum() == pytest.approx(1.0)
        with pytest.raises(ModelError, match="registered as normalised, but its EPPF .* sums to 2 over the "
                                             "partitions of N = 1 item, not 1"):
            pcrp.register_prior("crp_loose", "loose", (Param("alpha", "a", 2.0, 0.0, 9.0, False, True, "h"),),
                                log_w=_crp_log_w, log_v=lambda N, K, p: K * np.log(p.alpha), normalised=True)
        assert not pcrp.register_prior("crp_loose", "loose", (ALPHA,), log_w=_crp_log_w,
                                       log_v=lambda N, K, p: K * np.log(p.alpha)).normalised
        with pytest.raises(ModelError, match="the new-block weight log_new = 0 disagrees with log W"):
            pcrp.register_prior("crp_new", "x", (Param("alpha", "a", 2.0, 0.0, 9.0, False, True, "h"),),
                                log_w=_crp_log_w, log_v=log_v, log_new=lambda N, K, p: 0.0 * K)
    finally:
        for name in ("crp_tables", "crp_loose"):
            if name in PRIORS:
                pcrp.unregister_prior(name)
    with pytest.raises(ModelError, match="'crp' is a built-in prior of pcrp and cannot be removed"):
        pcrp.unregister_prior("crp")


def test_a_registered_prior_pickles_by_name(registered):
    import pickle

    prior = make_prior("shifted_crp", theta=4.0)
    assert pickle.loads(pickle.dumps(prior)) == prior


# ---------------------------------------------------------------------------------------------------------------
# The app: Rich get richer reads the registry each time the page runs; the Explorer's settings are made from it
# when pcrp.app.explorer_settings is imported (so an installed package's prior is there, one registered later not).
# ---------------------------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_rich_get_richer_seats_a_prior_registered_at_run_time(registered):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file("../app_pages/rich_get_richer.py", default_timeout=120)
    at.run()
    assert "shifted CRP" in at.multiselect(key="rgr_priors").options  # shown by its label
    assert any(w.key == "rgr_theta" and w.value == 0.5 for w in at.number_input)
    at.multiselect(key="rgr_priors").set_value(["crp", "shifted_crp"]).run()
    assert not at.exception, at.exception
    assert "shift theta" in [w.label for w in at.number_input]
    assert not at.error, [e.value for e in at.error]


def test_an_installed_package_s_prior_is_in_the_explorer_rows_and_pcrp_mixture(tmp_path):
    folder = fake_package(tmp_path, "pcrp-shifted-crp", "shifted_crp:register")
    code = textwrap.dedent(f"""
        import sys; sys.path[:0] = [{str(folder)!r}, {str(EXAMPLE)!r}]
        import numpy as np
        import pcrp.app.explorer_settings as es
        from pcrp.estimator import PCRPMixture
        from pcrp.model import make_prior
        print("shifted_crp" in es.BY_NAME[es.prior_key(1)].choices, es.row_key("theta", 2) in es.BY_NAME)
        X = np.random.default_rng(0).normal(size=(30, 2))
        prior = make_prior("shifted_crp", theta=2.0)
        m = PCRPMixture(prior=prior, iters=60, n_chains=2, random_state=0).fit(X)
        print(m.prior_.label())
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300,
                          env=_env())
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["True True", "shifted CRP (alpha=1, theta=2)"]


def test_the_explorer_rows_offer_a_prior_registered_after_they_are_imported():
    import pcrp.app.explorer_settings as es

    assert "shifted_crp" not in es.BY_NAME[es.prior_key(1)].choices  # the tables are made before the registration
    shifted_crp.register()
    try:
        assert "shifted_crp" in es.BY_NAME[es.prior_key(1)].choices and es.row_key("theta", 1) in es.BY_NAME
        values, problems = es.from_query({"prior1": "shifted_crp", "theta1": "2.5"})
        assert problems == [] and values["theta1"] == 2.5
    finally:
        pcrp.unregister_prior("shifted_crp")
    assert "shifted_crp" not in es.BY_NAME[es.prior_key(1)].choices


def test_a_registered_prior_s_tuned_parameter_keeps_its_own_default_in_the_explorer(monkeypatch):
    """The Explorer's rows take the data set's shipped r as the default of the pCRP's tuned r; that r is the pCRP's
    (cross validation tunes it), so a registered prior that tunes a parameter of its own keeps that default."""
    from dataclasses import replace

    import pcrp.app.explorer_settings as es

    shifted_crp.register()
    monkeypatch.setitem(PRIORS, "shifted_crp", replace(PRIORS["shifted_crp"], tuned="theta", tune_grid=(0.5, 1.0)))
    values = {**es.defaults(), "data": "old-faithful", "prior1": "shifted_crp"}
    es.reset_row(values, 1)
    assert values["theta1"] == PRIORS["shifted_crp"].param("theta").default == 0.5
    values["prior1"] = "pcrp"
    es.reset_row(values, 1)
    from pcrp.analyses.cv import builtin_r_table

    assert values["r1"] == builtin_r_table()["old-faithful"]["r"]  # the pCRP's row: the data set's shipped r


def test_a_spec_set_directly_is_seen_everywhere_and_undone(monkeypatch):
    """Other tests add a prior with monkeypatch.setitem(PRIORS, name, spec) (no validation): its instances find
    their entry by name, and the teardown leaves the built-in registry."""
    from dataclasses import dataclass, field, replace

    @dataclass(frozen=True)
    class TeachingCRP(CRP):
        name: str = field(default="teach", init=False)

    monkeypatch.setitem(PRIORS, "teach", replace(PRIORS["crp"], name="teach", label="Teaching CRP", cls=TeachingCRP,
                                                 reference=False))
    monkeypatch.setitem(PRIORS, "pcrp", replace(PRIORS["pcrp"], label="patched pCRP"))
    assert make_prior("teach", alpha=2.0).label() == "Teaching CRP (alpha=2)"
    assert make_prior("pcrp").label().startswith("patched pCRP") and CRP(1.0).label() == "CRP (alpha=1)"
    with pytest.raises(ModelError, match=r"PRIORS\['x'\] takes the PriorSpec named 'x'"):
        PRIORS["x"] = PRIORS["crp"]
    monkeypatch.undo()
    assert list(PRIORS) == BUILT_IN and make_prior("pcrp").label().startswith("pCRP (")

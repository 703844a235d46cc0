"""PCRPMixture: scikit-learn's estimator checks, and what its predictions mean."""

import numpy as np
import pytest
from sklearn.datasets import make_blobs
from sklearn.metrics import adjusted_rand_score
from sklearn.utils.estimator_checks import parametrize_with_checks

from pcrp.estimator import PCRPMixture
from pcrp.model import CRP, PowerCRP, make_prior, resolve_niw
from pcrp.summaries.partition import point_estimate

# Short chains keep the ~46 checks fast; the checks test the API, not the statistics.
QUICK = dict(n_chains=2, iters=30, burn_in=10, thin=2, random_state=0)


# The one check expected to fail, for the one reason test_the_default_prior_object_is_the_one_departure_from_the_
# default_check checks: its list of a default's allowed types (str, numbers, tuple, None, types, callables) has no
# room for an immutable value such as PowerCRP(), the default prior. Strict: should the check pass, the test fails.
DEFAULT_CHECK = "check_parameters_default_constructible"
EXPECTED_FAILURES = {DEFAULT_CHECK: "the default prior is PowerCRP(), an immutable value, not among the check's types"}


# Every other check of scikit-learn's suite runs, with the default prior, a prior object and a prior by name (a prior
# object's parameters nest: clone, get_params and set_params see them); the only skip is sklearn's own array-API
# check, which skips itself unless SCIPY_ARRAY_API=1 (the estimator works on NumPy arrays only).
@parametrize_with_checks([PCRPMixture(**QUICK), PCRPMixture(prior=PowerCRP(r=1.3), **QUICK),
                          PCRPMixture(prior="crp", **QUICK)],
                         expected_failed_checks=lambda estimator: EXPECTED_FAILURES, xfail_strict=True)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


def test_the_default_prior_object_is_the_one_departure_from_the_default_check():
    """scikit-learn's check_parameters_default_constructible fails on the prior's default, PowerCRP(), and on
    nothing else: what the check is there for (a default shared by every instance must not change under them, and
    __init__ stores every parameter unchanged) holds, checked here for every parameter. A prior is a frozen
    dataclass: nothing changes it in place, clone returns it, set_params replaces it."""
    import dataclasses
    import inspect

    from sklearn.base import clone
    from sklearn.utils.estimator_checks import check_parameters_default_constructible

    with pytest.raises(AssertionError, match=r"^Parameter 'prior' of estimator 'PCRPMixture' is of type PowerCRP "
                                             r"which is not allowed"):
        check_parameters_default_constructible("PCRPMixture", PCRPMixture())
    default = inspect.signature(PCRPMixture).parameters["prior"].default
    assert default == make_prior("pcrp") == PowerCRP(alpha=1.0, r=1.1)
    allowed = (str, int, float, bool, tuple, type(None))
    params = PCRPMixture().get_params(deep=False)
    for name, parameter in inspect.signature(PCRPMixture).parameters.items():
        assert name == "prior" or isinstance(parameter.default, allowed), name
        assert params[name] is parameter.default, name  # stored unchanged
    with pytest.raises(dataclasses.FrozenInstanceError):
        default.r = 2.0
    one, two = PCRPMixture(), PCRPMixture()
    assert one.prior is two.prior is clone(one).prior is default
    one.set_params(prior__r=1.5)
    assert one.prior == PowerCRP(r=1.5) and two.prior is default and default.r == 1.1


@pytest.fixture(scope="module")
def blobs():
    X, y = make_blobs(n_samples=150, centers=[[-6, 0], [0, 6], [6, 0]], cluster_std=1.0, random_state=1)
    return X / 3.0, y


@pytest.fixture(scope="module")
def fitted(blobs):
    X, _ = blobs
    return PCRPMixture(prior=PowerCRP(r=1.3), n_chains=2, iters=300, burn_in=100, thin=4, psm=True,
                       random_state=2).fit(X)


def test_no_similarity_matrix_unless_asked(blobs):
    assert PCRPMixture(**QUICK).fit(blobs[0][:30]).psm_ is None


def test_fit_recovers_separated_clusters_and_sets_attributes(blobs, fitted):
    X, y = blobs
    assert adjusted_rand_score(y, fitted.labels_) == 1.0 and fitted.n_clusters_ == 3
    assert fitted.labels_.dtype == np.int64 and np.bincount(fitted.labels_).tolist() == [50, 50, 50]
    assert fitted.psm_.shape == (150, 150) and fitted.psm_.dtype == np.float32
    assert fitted.chains_.labels.shape == (2, 50, 150) and fitted.chains_.config["r"] == 1.3
    Z = (X - X.mean(axis=0)) / X.std(axis=0)  # standardised by default, as pcrp run does for a CSV file
    assert np.allclose(fitted.center_, X.mean(axis=0)) and np.allclose(fitted.scale_, X.std(axis=0))
    assert np.allclose(fitted.niw_.S0, resolve_niw(Z).S0) and fitted.chains_.config["standardize"] is True
    assert fitted.expected_loss_ == pytest.approx(point_estimate(fitted.chains_.labels, "vi", seed=2).expected_loss)
    assert np.array_equal(fitted.predict(X), fitted.labels_)
    assert fitted.n_iter_ == 300 and set(fitted.timing_) == {"sampling", "summaries"}
    assert len(fitted.modes_) == 1 and fitted.modes_warning_ == ""


def test_cluster_weights_means_covariances_and_sample_are_in_the_units_of_x(blobs, fitted):
    """means_ are the NIW posterior means of each cluster's mean: with 50 points per cluster and kappa0 = 0.25
    they lie within 0.25 / 50.25 of the way to m0 from the cluster's sample mean (0.01 here); covariances_ are the
    NIW posterior mean of Sigma, the closed form written out below, in the units of X."""
    X, _ = blobs
    K = fitted.n_clusters_
    assert fitted.weights_.shape == (K,) and fitted.weights_.sum() == pytest.approx(1.0)
    sizes = np.bincount(fitted.labels_)
    assert fitted.weights_ == pytest.approx(sizes / sizes.sum())  # mixing proportions, as BGM's weights_
    seating = np.append(sizes ** 1.3, 1.0)  # the pCRP's seating weights n_k^r and alpha = 1 for a new cluster
    assert fitted.seating_weights_ == pytest.approx(seating / seating.sum())
    for k in range(K):
        members = X[fitted.labels_ == k]
        assert fitted.means_[k] == pytest.approx(members.mean(axis=0), abs=0.01)
        # E[Sigma | members] = S_n / (nu_n - d - 1) in standardised units, S_n written out here, then rescaled
        Z = (members - fitted.center_) / fitted.scale_
        niw, n = fitted.niw_, len(Z)
        diff = Z.mean(axis=0) - niw.m0
        S_n = niw.S0 + np.cov(Z.T, bias=True) * n + (niw.kappa0 * n / (niw.kappa0 + n)) * np.outer(diff, diff)
        expected_cov = S_n / (niw.nu0 + n - 3) * np.outer(fitted.scale_, fitted.scale_)
        assert np.allclose(fitted.covariances_[k], expected_cov, rtol=1e-10)
        assert np.all(np.linalg.eigvalsh(fitted.covariances_[k]) > 0)
    Xs, ys = fitted.sample(3000)
    assert Xs.shape == (3000, 2) and ys.shape == (3000,) and np.bincount(ys, minlength=K).sum() == 3000
    assert np.abs(np.bincount(ys) / 3000 - fitted.weights_).max() < 0.05  # 4 binomial SEs at n = 3000
    assert np.array_equal(fitted.sample(10)[0], fitted.sample(10)[0])  # random_state makes it reproducible
    with pytest.raises(ValueError, match="n_samples must be a whole number >= 1"):
        fitted.sample(0)


def test_to_inference_data_keeps_k_and_log_joint_in_posterior(blobs, fitted):
    import arviz as az

    idata = fitted.to_inference_data()
    assert list(az.summary(idata).index) == ["K", "log_joint"]
    assert idata.labels["labels"].shape == (2, 50, 150) and idata.observed_data["X"].shape == (150, 2)


def test_defaults_are_those_of_pcrp_run():
    """One place per default: the estimator's parameters are the run settings' declarations (pcrp.runs.run_spec), and
    `pcrp run` leaves every run flag to the same declarations; both build their spec with make_run_spec."""
    from pcrp.cli import RUN_FLAGS, build_parser, run_settings
    from pcrp.model import DEFAULT_PRIOR, DEFAULT_R
    from pcrp.runs.run_spec import RUN_PARAMS

    args = build_parser().parse_args(["run", "sim1", "--out", "x"])
    est = PCRPMixture()
    assert args.prior == DEFAULT_PRIOR and est.prior == make_prior(args.prior) and est.loss == args.loss
    assert run_settings(args) == {} and all(getattr(args, name) is None for name in RUN_FLAGS)
    for name in ("n_chains", "iters", "burn_in", "thin", "split_merge", "n_jobs"):
        assert est.get_params()[name] == RUN_PARAMS[name].default, name
    spec = est._spec(np.random.default_rng(0).normal(size=(30, 2)))
    assert spec.budget.auto and spec.budget.max_iters == RUN_PARAMS["max_iters"].default
    assert spec.prior.params() == {"prior": "pcrp", "alpha": 1.0, "r": DEFAULT_R} and est.standardize is True


def test_the_signature_is_explicit_and_init_stores_what_it_is_given():
    """scikit-learn reads the parameters from __init__'s signature: explicit keywords, no **kwargs, nothing
    rewritten; the defaults are the declared ones."""
    import inspect

    from pcrp.runs.run_spec import RUN_PARAMS

    signature = inspect.signature(PCRPMixture)
    assert all(p.kind is p.KEYWORD_ONLY for p in signature.parameters.values())
    assert "__signature__" not in vars(PCRPMixture.__init__) and not hasattr(PCRPMixture, "_parameter_constraints")
    assert signature.parameters["n_chains"].default == RUN_PARAMS["n_chains"].default
    prior = PowerCRP(r=1.7)
    assert PCRPMixture(prior=prior, n_chains="anything").get_params(deep=False)["n_chains"] == "anything"
    assert PCRPMixture(prior=prior).prior is prior
    assert "prior" in PCRPMixture.__doc__ and all(f"{name} :" in PCRPMixture.__doc__ for name in signature.parameters)


def test_a_prior_s_parameters_nest_as_prior__name_and_set_params_replaces_the_prior():
    """As GaussianProcessRegressor's kernel__length_scale: get_params(deep=True) shows prior__alpha and prior__r;
    set_params(prior__r=v) puts a checked copy in place of the prior (a prior is immutable, compared by value),
    so a clone, or the prior another estimator shares, is untouched."""
    from sklearn.base import clone
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    prior = PowerCRP(alpha=1.0, r=1.1)
    model = PCRPMixture(prior=prior, n_chains=2)
    params = model.get_params(deep=True)
    assert params["prior"] is prior and params["prior__alpha"] == 1.0 and params["prior__r"] == 1.1
    twin = clone(model)
    assert twin.prior == prior and twin.get_params(deep=True)["prior__r"] == 1.1
    assert model.set_params(prior__r=1.5, n_chains=3) is model
    assert model.prior == PowerCRP(alpha=1.0, r=1.5) and model.n_chains == 3
    assert prior.r == 1.1 and twin.prior.r == 1.1  # replaced, not changed in place
    # a new prior and its parameter in one call: the prior is set first, as scikit-learn orders nested parameters
    model.set_params(prior=make_prior("mfm"), prior__lam=3.0)
    assert model.prior == make_prior("mfm", lam=3.0) and model.get_params()["prior__lam"] == 3.0
    # in a pipeline, the step's name goes first
    pipe = make_pipeline(StandardScaler(), PCRPMixture(prior=CRP()))
    pipe.set_params(pcrpmixture__prior__alpha=2.0)
    assert pipe.get_params()["pcrpmixture__prior__alpha"] == 2.0 and pipe[-1].prior == CRP(alpha=2.0)
    with pytest.raises(TypeError, match=r"A prior cannot be changed in place .*make_prior\('pcrp', alpha=1.0, r=2\)"):
        prior.set_params(r=2)


def test_a_prior_given_by_name_has_no_nested_parameters():
    model = PCRPMixture(prior="pcrp")
    assert not any(key.startswith("prior__") for key in model.get_params(deep=True))
    message = (r"prior is the name 'pcrp', which has no parameters to set \(r\): give a prior object instead, "
               r"set_params\(prior=pcrp.model.make_prior\('pcrp', r=1.3\)\)")
    with pytest.raises(ValueError, match=message):
        model.set_params(prior__r=1.3)
    assert model.prior == "pcrp"
    with pytest.raises(ValueError, match="Invalid parameter 'r' for estimator"):
        model.set_params(r=1.3)  # the old route: a prior's parameter is not one of the estimator's


def test_the_default_estimator_s_prior_nests_too():
    """The default prior is an object, PowerCRP(): PCRPMixture().set_params(prior__r=1.5) works, and
    get_params(deep=True) shows its parameters, as for a prior given."""
    model = PCRPMixture()
    params = model.get_params(deep=True)
    assert params["prior"] == PowerCRP() and params["prior__alpha"] == 1.0 and params["prior__r"] == 1.1
    assert model.set_params(prior__r=1.5).prior == PowerCRP(alpha=1.0, r=1.5)
    assert PCRPMixture().prior == PowerCRP(r=1.1)  # the default itself is untouched
    assert "prior" not in repr(PCRPMixture()) and "prior=PowerCRP(alpha=1.0, r=1.5)" in repr(model)


def test_grid_search_over_r():
    """GridSearchCV over prior__r on the default estimator's prior, on two blobs: cv_results_ holds both values of
    r and the refit estimator ran with the best one (scored by score, the mean log predictive density of the
    held-out points)."""
    from sklearn.model_selection import GridSearchCV

    X, _ = make_blobs(n_samples=60, centers=[[-4, 0], [4, 0]], cluster_std=1.0, random_state=3)
    base = PCRPMixture(n_chains=2, iters=40, burn_in=10, thin=2, n_jobs=1, random_state=0)
    search = GridSearchCV(base, {"prior__r": [1.1, 1.5]}, cv=2).fit(X)
    assert list(search.cv_results_["param_prior__r"]) == [1.1, 1.5]
    assert np.all(np.isfinite(search.cv_results_["mean_test_score"]))
    best = search.best_params_["prior__r"]
    assert best == [1.1, 1.5][int(np.argmax(search.cv_results_["mean_test_score"]))]
    assert search.best_estimator_.prior == PowerCRP(r=best) and search.best_estimator_.prior_.r == best
    assert search.best_estimator_.chains_.config["r"] == best and search.best_estimator_.n_clusters_ == 2
    assert base.prior == PowerCRP(r=1.1) and not hasattr(base, "labels_")  # the search fitted clones


@pytest.mark.parametrize("prior,params,expected", [
    ("crp", {}, dict(alpha=1.0)),
    ("py", dict(sigma=0.5), dict(alpha=1.0, sigma=0.5)),
    ("mfm", dict(gamma=2.0, lam=3.0), dict(gamma=2.0, lam=3.0)),
    ("sfm", dict(k_max=5), dict(gamma=0.01, k_max=5)),
])
def test_every_prior_of_the_registry(blobs, prior, params, expected):
    """A prior by name (its registry defaults) or as an object carrying its parameters."""
    model = PCRPMixture(prior=make_prior(prior, **params) if params else prior, **QUICK).fit(blobs[0][:40])
    assert model.prior_.params() == {"prior": prior, **expected}
    assert model.chains_.config["prior"] == prior


@pytest.mark.parametrize("prior,params,message", [
    ("crp", dict(r=1.2), r"The CRP prior \(crp\) has no parameter r .*its parameters are: alpha"),
    ("pcrp", dict(r=1.1, k_max=4), r"has no parameter k_max \(k_max belongs to sfm\)"),
    ("mfm", dict(alpha=1.0), r"MFM prior \(mfm\) has no parameter alpha.*gamma in .*lam in"),
    ("pcrp", dict(alpha=-0.5), r"alpha must be a finite number > 0 \(got -0.5\): concentration alpha of the pCRP"),
    ("pcrp", dict(r="x"), r"r must be a number \(got 'x'\): power r of the pCRP"),
])
def test_a_parameter_the_prior_lacks_or_a_value_out_of_bounds_is_refused_when_set(prior, params, message):
    """set_params(prior__NAME=value) builds the checked copy at once, so the prior is never left invalid."""
    model = PCRPMixture(prior=make_prior(prior), **QUICK)
    with pytest.raises(ValueError, match=message):
        model.set_params(**{f"prior__{name}": value for name, value in params.items()})
    assert model.prior == make_prior(prior)


def test_the_estimator_and_pcrp_run_give_the_same_summary(tmp_path):
    """Same CSV, same seed, same settings: the same chains, the same point estimate and expected loss."""
    from pcrp.runs.chains import ChainSet
    from pcrp.cli import main

    rng = np.random.default_rng(4)
    X = np.concatenate([rng.normal([0, 0], 1, (30, 2)), rng.normal([5, 40], [1, 10], (30, 2))])
    csv = tmp_path / "d.csv"
    np.savetxt(csv, X, delimiter=",", header="a,b", comments="")
    out = tmp_path / "r.npz"
    assert main(["run", str(csv), "--iters", "60", "--burn-in", "20", "--thin", "2", "--chains", "2", "--seed", "7",
                 "--out", str(out)]) == 0
    model = PCRPMixture(iters=60, burn_in=20, thin=2, n_chains=2, random_state=7).fit(X)
    saved = ChainSet.load(out)
    with np.load(out) as f:
        point, loss = f["point_labels"], float(f["point_expected_loss"])
    assert np.array_equal(saved.labels, model.chains_.labels) and np.array_equal(saved.K, model.chains_.K)
    assert np.array_equal(point, model.labels_) and loss == pytest.approx(model.expected_loss_)
    assert np.allclose(np.asarray(saved.config["S0"]), model.niw_.S0)


def test_predict_proba_seats_points_where_they_belong(blobs, fitted):
    X, _ = blobs
    centre = X[fitted.labels_ == 1].mean(axis=0)
    far = np.array([40.0, -40.0])
    proba = fitted.predict_proba(np.vstack([centre, far]))
    assert proba.shape == (2, 3) and proba.sum(axis=1) == pytest.approx([1.0, 1.0])
    assert proba[0, 1] > 0.99  # the centre of a cluster joins it
    new = fitted.predict_new_cluster_proba(np.vstack([centre, far]))
    assert new.shape == (2,) and new[0] < 1e-3 and new[1] > 0.99  # a point far from all data opens a new cluster


def test_weights_and_predict_proba_read_as_bayesian_gaussian_mixture_users_expect(blobs, fitted):
    """Same data: weights_ (n_components,) summing to 1 and predict_proba (n_samples, n_components) with rows
    summing to 1, in pcrp as in scikit-learn's BayesianGaussianMixture; both mixtures put the same points
    together (three separated blobs)."""
    from sklearn.metrics import adjusted_rand_score
    from sklearn.mixture import BayesianGaussianMixture

    X, _ = blobs
    bgm = BayesianGaussianMixture(n_components=3, random_state=0).fit(X)
    for model, K in ((fitted, fitted.n_clusters_), (bgm, 3)):
        proba = model.predict_proba(X)
        assert model.weights_.shape == (K,) and model.weights_.sum() == pytest.approx(1.0)
        assert proba.shape == (len(X), K) and proba.sum(axis=1) == pytest.approx(np.ones(len(X)))
    assert adjusted_rand_score(fitted.predict(X), bgm.predict(X)) == 1.0
    assert sorted(fitted.weights_) == pytest.approx(sorted(bgm.weights_), abs=0.01)


def test_predictive_integrates_to_one_and_new_table_mass_matches_the_seating_rule():
    """On 1-D data whose partition is uncertain (24 points in two close groups; K ranges over 1-9 in the
    draws): exp(score_samples) is a density, and integrating p(x) P(new | x) over x gives the seating rule's
    new-table probability alpha / (sum_k N_k^r + alpha) averaged over the draws used.

    The trapezoid rule on 20,001 points over [-30, 30] is accurate to about 1e-6 here (Student-t tails hold
    under 1e-6 of the mass beyond 30), so tolerance 1e-4. Averaging log densities over draws instead
    (integral 0.98) or averaging P(new | x) without weighting each draw by p_s(x) (off by 3e-3) fails."""
    rng = np.random.default_rng(0)
    X = np.concatenate([rng.normal(-1, 0.6, 12), rng.normal(1, 0.6, 12)])[:, None]
    model = PCRPMixture(prior=PowerCRP(alpha=2.0, r=1.2), n_chains=2, iters=400, burn_in=50, thin=5,
                        n_predict_draws=20, random_state=1).fit(X)
    assert model.chains_.kept_K.max() - model.chains_.kept_K.min() >= 3  # the draws do disagree
    grid = np.linspace(-30, 30, 20_001)[:, None]
    assert model.predict_proba(grid[::1000]).sum(axis=1) == pytest.approx(np.ones(21))
    density = np.exp(model.score_samples(grid))
    assert np.trapezoid(density, grid[:, 0]) == pytest.approx(1.0, abs=1e-4)
    new_mass = np.trapezoid(density * model.predict_new_cluster_proba(grid), grid[:, 0])
    draws = model.chains_.pooled_labels()
    picks = np.unique(np.linspace(0, len(draws) - 1, 20).round().astype(int))
    weights = []
    for s in picks:
        sizes = np.bincount(np.unique(draws[s], return_inverse=True)[1])
        weights.append(2.0 / ((sizes ** 1.2).sum() + 2.0))
    assert new_mass == pytest.approx(float(np.mean(weights)), abs=1e-4)


def test_binder_loss_and_reproducibility(blobs):
    X, _ = blobs
    a = PCRPMixture(loss="binder", **QUICK).fit(X[:60])
    b = PCRPMixture(loss="binder", **QUICK).fit(X[:60])
    assert np.array_equal(a.labels_, b.labels_) and np.array_equal(a.chains_.K, b.chains_.K)
    assert a.expected_loss_ == pytest.approx(point_estimate(a.chains_.labels, "binder", seed=0).expected_loss)
    c = PCRPMixture(loss="binder", **{**QUICK, "random_state": 5}).fit(X[:60])
    assert c.chains_.config["chain_seeds"] != a.chains_.config["chain_seeds"]


@pytest.mark.parametrize("params,error,message", [
    (dict(prior="dp"), ValueError, r"Unknown prior 'dp'; choose one of: crp, pcrp, py, mfm, sfm"),
    (dict(prior=3), TypeError, r"prior must be the name of a registered prior \(crp, pcrp, .*\) or a prior object"),
    (dict(loss="ari"), ValueError, r"loss must be one of vi, binder \(got 'ari'\)"),
    (dict(standardize="yes"), TypeError, r"standardize must be True or False \(got 'yes'\)"),
    (dict(n_chains="x"), ValueError, r"n_chains must be a number \(got 'x'\): chains of the run"),
    (dict(n_chains=0), ValueError, r"n_chains must be a whole number >= 1 \(got 0\)"),
    (dict(n_predict_draws=0), ValueError, r"n_predict_draws must be a whole number >= 1 \(got 0\)"),
    (dict(verbose=-1), ValueError, r"verbose must be a whole number >= 0 \(got -1\)"),
    (dict(random_state=-1), ValueError, r"random_state must be a whole number >= 0 \(got -1\): seed of the run"),
    (dict(init=3), TypeError, r"init must be a start \('one', 'random:K', 'kmeans:K'\), a list of them, or None"),
    (dict(iters=20, burn_in=20), ValueError, r"burn_in \(20\) must be smaller than iters \(20\)"),
    (dict(iters=20, burn_in=10, thin=11), ValueError, r"thin \(11\) leaves no draws to keep"),
    (dict(nu0=0.5), ValueError, r"nu0 must be > d - 1 = 1"),
    (dict(init=["one", "kmeans:x"]), ValueError, "init must be 'one', 'random:K' or 'kmeans:K'"),
])
def test_bad_parameters_are_refused_at_fit_with_pcrp_s_message(blobs, params, error, message):
    """Stored as given, checked when fit starts by the declarations `pcrp run` checks (no constraint table of
    scikit-learn's private API: each bound is declared once, in pcrp)."""
    model = PCRPMixture(**{**QUICK, **params})
    with pytest.raises(error, match=message):
        model.fit(blobs[0][:20])
    assert not hasattr(model, "labels_")


def test_the_estimator_prints_the_summary_pcrp_run_prints(tmp_path, capsys):
    """One run summary (pcrp.analyses.run_summary): PCRPMixture(verbose=1) writes the lines `pcrp run` prints for the same
    chains (stopped, each chain's K and log joint, the point estimate), word for word but for the timings."""
    import re

    from pcrp.cli import main

    rng = np.random.default_rng(4)
    X = np.concatenate([rng.normal([0, 0], 1, (30, 2)), rng.normal([5, 40], [1, 10], (30, 2))])
    csv = tmp_path / "d.csv"
    np.savetxt(csv, X, delimiter=",", header="a,b", comments="")
    assert main(["run", str(csv), "--prior", "crp", "--iters", "60", "--burn-in", "20", "--thin", "2", "--chains",
                 "2", "--seed", "7", "--out", str(tmp_path / "r.npz")]) == 0
    printed = capsys.readouterr().out.splitlines()
    PCRPMixture(prior="crp", iters=60, burn_in=20, thin=2, n_chains=2, random_state=7, verbose=1).fit(X)
    written = capsys.readouterr().err.splitlines()
    def untimed(lines):
        return [re.sub(r" at [\d.]+-[\d.]+ ms/sweep$", "", line) for line in lines
                if not line.startswith(("time: ", "wrote "))]

    start = next(i for i, line in enumerate(printed) if line.startswith("stopped: "))
    shared = untimed(printed[start:])
    assert len(shared) >= 5 and all(line in untimed(written) for line in shared), (shared, written)


def test_n_jobs_above_the_cores_is_clamped_with_a_warning(blobs):
    """n_jobs beyond this machine's cores runs on all of them and says so (a UserWarning), never an error; the
    parameter stays as given (scikit-learn: __init__'s values are never rewritten). 0 is still refused."""
    from pcrp.runs.run_spec import CORES

    model = PCRPMixture(**{**QUICK, "n_jobs": CORES + 3})
    with pytest.warns(UserWarning, match=rf"^n_jobs={CORES + 3} is more than this machine's {CORES} cores: running "
                                         rf"{CORES} threads"):
        model.fit(blobs[0][:30])
    assert model.spec_.n_jobs == CORES and model.n_jobs == CORES + 3 and model.n_clusters_ >= 1
    with pytest.raises(ValueError, match=r"n_jobs must be -1 \(all cores\) or a whole number from 1"):
        PCRPMixture(**{**QUICK, "n_jobs": 0}).fit(blobs[0][:30])


def test_fit_is_silent_at_verbose_0_even_when_the_kernels_compile(blobs, capfd, monkeypatch):
    """verbose=0 writes nothing to stdout or stderr (file descriptors, so C-level writes count too), also on a
    first fit whose kernels compile: compile_kernels is made to behave as on a cold cache (it announces to the
    stream it is given), and the fit gives it none; verbose=1 gives it stderr, so the message shows there."""
    import pcrp.estimator as estimator_module
    from pcrp.runs import compiling

    def cold(stream=None, *args, **kwargs):
        if stream is not None:
            print("compiling the sweep (once per installation) ...", file=stream, flush=True)
        return compiling.compile_kernels(None, *args, **kwargs)

    monkeypatch.setattr(estimator_module, "compile_kernels", cold)
    capfd.readouterr()
    PCRPMixture(**QUICK).fit(blobs[0][:30])
    assert capfd.readouterr() == ("", "")
    PCRPMixture(**{**QUICK, "verbose": 1}).fit(blobs[0][:30])
    assert "compiling the sweep (once per installation) ..." in capfd.readouterr().err


@pytest.mark.slow
def test_a_first_fit_at_verbose_0_on_a_cold_cache_prints_nothing(tmp_path):
    """A fresh process with an empty numba cache (NUMBA_CACHE_DIR), so the kernels compile for real (one to two
    minutes on two cores; the cache it fills shows they did): a fit at verbose=0 leaves stdout and stderr empty."""
    import os
    import subprocess
    import sys

    code = ("import numpy as np; from pcrp.estimator import PCRPMixture; "
            "X = np.random.default_rng(0).normal(size=(40, 2)); "
            "PCRPMixture(n_chains=2, iters=20, burn_in=5, thin=1, random_state=0).fit(X)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=900,
                          env={**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    assert any(tmp_path.rglob("*.nbi")), "the kernels did not compile into the empty cache"
    assert (done.stdout, done.stderr) == ("", "")


def test_converged_says_whether_the_stopping_rule_was_met(blobs):
    """converged_ is the automatic budget's verdict when the chains stopped (True when the targets were met before
    the cap), and for a fixed budget the same targets judged at its last sweep; it agrees with stop_reason_."""
    X = blobs[0][:60]
    auto = PCRPMixture(n_chains=2, max_iters=3000, random_state=0).fit(X)
    assert auto.converged_ is True and auto.stop_reason_.startswith("converged")
    capped = PCRPMixture(n_chains=2, max_iters=20, random_state=0).fit(X)  # 20 sweeps cannot give ESS 400
    assert capped.converged_ is False and capped.stop_reason_.startswith("cap of 20 sweeps reached")
    short = PCRPMixture(n_chains=2, iters=20, burn_in=5, random_state=0).fit(X)
    assert short.converged_ is False and short.stop_reason_.startswith("fixed budget of 20 sweeps")
    long = PCRPMixture(n_chains=2, iters=3000, random_state=0).fit(X)
    assert long.converged_ is True and long.chains_.stop["verdict"]["passed"] is True


def test_no_private_method_of_scikit_learn_is_overridden():
    """The estimator overrides only scikit-learn's public methods (set_params, and __repr__), never a private one
    such as _html_repr, which scikit-learn may change in any release."""
    sklearn_bases = [c for c in PCRPMixture.__mro__[1:] if c.__module__.startswith("sklearn")]
    overridden = {name for name in vars(PCRPMixture) if any(name in vars(base) for base in sklearn_bases)}
    private = {name for name in overridden if name.startswith("_") and not name.endswith("__")}
    assert not private and {"set_params", "__repr__"} <= overridden, overridden

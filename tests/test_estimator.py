"""PCRPMixture: scikit-learn's estimator checks, and what its predictions mean."""

import numpy as np
import pytest
from sklearn.datasets import make_blobs
from sklearn.metrics import adjusted_rand_score
from sklearn.utils.estimator_checks import parametrize_with_checks

from pcrp.estimator import PCRPMixture
from pcrp.model import resolve_niw
from pcrp.partition import point_estimate

# Short chains keep the ~46 checks fast; the checks test the API, not the statistics.
QUICK = dict(n_chains=2, iters=30, burn_in=10, thin=2, random_state=0)


# Every check of scikit-learn's suite runs; the only skip is sklearn's own array-API check, which
# skips itself unless SCIPY_ARRAY_API=1 (the estimator works on NumPy arrays only).
@parametrize_with_checks([PCRPMixture(**QUICK)])
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


@pytest.fixture(scope="module")
def blobs():
    X, y = make_blobs(n_samples=150, centers=[[-6, 0], [0, 6], [6, 0]], cluster_std=1.0, random_state=1)
    return X / 3.0, y


@pytest.fixture(scope="module")
def fitted(blobs):
    X, _ = blobs
    return PCRPMixture(r=1.3, n_chains=2, iters=300, burn_in=100, thin=4, random_state=2).fit(X)


def test_fit_recovers_separated_clusters_and_sets_attributes(blobs, fitted):
    X, y = blobs
    assert adjusted_rand_score(y, fitted.labels_) == 1.0 and fitted.n_clusters_ == 3
    assert fitted.labels_.dtype == np.int64 and np.bincount(fitted.labels_).tolist() == [50, 50, 50]
    assert fitted.psm_.shape == (150, 150) and fitted.psm_.dtype == np.float32
    assert fitted.chains_.labels.shape == (2, 50, 150) and fitted.chains_.config["r"] == 1.3
    assert np.array_equal(fitted.niw_.S0, resolve_niw(X).S0)
    assert fitted.expected_loss_ == pytest.approx(point_estimate(fitted.chains_.labels, "vi", seed=2).expected_loss)
    assert np.array_equal(fitted.predict(X), fitted.labels_)


def test_predict_proba_seats_points_where_they_belong(blobs, fitted):
    X, _ = blobs
    centre = X[fitted.labels_ == 1].mean(axis=0)
    far = np.array([40.0, -40.0])
    proba = fitted.predict_proba(np.vstack([centre, far]))
    assert proba.shape == (2, 4) and proba.sum(axis=1) == pytest.approx([1.0, 1.0])
    assert proba[0, 1] > 0.99  # the centre of a cluster joins it
    assert proba[1, 3] > 0.99  # a point far from all data opens a new cluster


def test_predictive_integrates_to_one_and_new_table_mass_matches_the_seating_rule():
    """On 1-D data whose partition is uncertain (24 points in two close groups; K ranges over 1-9 in the
    draws): exp(score_samples) is a density, and integrating p(x) P(new | x) over x gives the seating rule's
    new-table probability alpha / (sum_k N_k^r + alpha) averaged over the draws used.

    The trapezoid rule on 20,001 points over [-30, 30] is accurate to about 1e-6 here (Student-t tails hold
    under 1e-6 of the mass beyond 30), so tolerance 1e-4. Averaging log densities over draws instead
    (integral 0.98) or averaging P(new | x) without weighting each draw by p_s(x) (off by 3e-3) fails."""
    rng = np.random.default_rng(0)
    X = np.concatenate([rng.normal(-1, 0.6, 12), rng.normal(1, 0.6, 12)])[:, None]
    model = PCRPMixture(alpha=2.0, r=1.2, n_chains=2, iters=400, burn_in=50, thin=5, n_predict_draws=20,
                        random_state=1).fit(X)
    assert model.chains_.kept_K.max() - model.chains_.kept_K.min() >= 3  # the draws do disagree
    grid = np.linspace(-30, 30, 20_001)[:, None]
    density = np.exp(model.score_samples(grid))
    assert np.trapezoid(density, grid[:, 0]) == pytest.approx(1.0, abs=1e-4)
    new_mass = np.trapezoid(density * model.predict_proba(grid)[:, -1], grid[:, 0])
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


@pytest.mark.parametrize("params,message", [
    (dict(alpha=-1.0), "'alpha' parameter of PCRPMixture must be a float in the range"),
    (dict(prior="dp"), "'prior' parameter of PCRPMixture must be a str among"),
    (dict(loss="ari"), "'loss' parameter of PCRPMixture must be a str among"),
    (dict(iters=20, burn_in=20), r"burn_in \(20\) must be smaller than iters \(20\)"),
    (dict(iters=20, burn_in=10, thin=11), r"thin \(11\) leaves no draws to keep"),
    (dict(nu0=0.5), r"nu0 must be > d - 1 = 1"),
    (dict(init=["one", "kmeans:x"]), "init must be 'one', 'random:K' or 'kmeans:K'"),
])
def test_bad_parameters_are_refused_with_a_message(blobs, params, message):
    with pytest.raises(ValueError, match=message):
        PCRPMixture(**{**QUICK, **params}).fit(blobs[0][:20])

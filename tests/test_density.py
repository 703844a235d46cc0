"""Posterior density maths against scipy's Student-t and Monte Carlo (pcrp.analyses.density)."""

import numpy as np
import pytest
from scipy import stats
from scipy.special import logsumexp

from pcrp.analyses.density import (averaged_density, density_draws, density_panel, grid_1d, marginal_niw, mixture_density,
                          project, seating_log_predictive)
from pcrp.model import PowerCRP, resolve_niw
from pcrp.model.niw_math import student_t_params


def blobs(n, d, seed):
    rng = np.random.default_rng(seed)
    X = np.concatenate([rng.normal(-2, 1, size=(n // 2, d)), rng.normal(2, 0.6, size=(n - n // 2, d))])
    labels = np.repeat([0, 1], [n // 2, n - n // 2])
    labels[::7] = 2  # a third, scattered block
    return X, labels


def scipy_components(points, X, labels, niw, axes=None):
    """(K, G) N_k / N times each block's Student-t predictive, written with scipy on the full model and,
    for ``axes``, marginalised the textbook way (a sub-vector of a multivariate t is a t with the same df)."""
    out = []
    for k in np.unique(labels):
        df, loc, scale = student_t_params(X[labels == k], niw.m0, niw.kappa0, niw.nu0, niw.S0)
        if axes is not None:
            loc, scale = loc[axes], scale[np.ix_(axes, axes)]
        out.append(np.mean(labels == k) * stats.multivariate_t(loc=loc, shape=scale, df=df).pdf(points))
    return np.array(out)


@pytest.mark.parametrize("d", [1, 2, 3])
def test_mixture_density_is_the_weighted_student_t_mixture(d):
    X, labels = blobs(60, d, seed=d)
    niw = resolve_niw(X)
    points = np.random.default_rng(0).normal(size=(9, d))
    total, comps = mixture_density(points, X, labels, niw)
    expected = scipy_components(points, X, labels, niw).reshape(3, -1)
    assert comps == pytest.approx(expected, rel=1e-10)
    assert total == pytest.approx(expected.sum(axis=0), rel=1e-10)


def test_projection_is_the_marginal_of_the_full_predictive():
    X, labels = blobs(80, 4, seed=3)
    niw = resolve_niw(X, S0=np.diag([1.0, 2.0, 0.5, 1.5]) + 0.2)
    Xp, niw_p = project(X, niw, (1, 3))
    assert niw_p.nu0 == niw.nu0 - 2 and niw_p.S0.shape == (2, 2)
    points = np.random.default_rng(1).normal(size=(11, 2))
    _, comps = mixture_density(points, Xp, labels, niw_p)
    assert comps == pytest.approx(scipy_components(points, X, labels, niw, axes=[1, 3]), rel=1e-10)
    same = marginal_niw(niw, [0, 1, 2, 3])
    assert same.nu0 == niw.nu0 and np.array_equal(same.S0, niw.S0) and np.array_equal(same.m0, niw.m0)


def test_densities_integrate_to_one():
    X, labels = blobs(50, 1, seed=4)
    niw = resolve_niw(X)
    grid = np.linspace(-40, 40, 40_001)  # Student-t tails: +-40 holds all but ~1e-5 of the mass
    total, _ = mixture_density(grid, X, labels, niw)
    assert np.trapezoid(total, grid) == pytest.approx(1.0, abs=1e-3)
    log_seat = seating_log_predictive(grid[:, None], X, labels, PowerCRP(0.7, 1.6), niw)
    assert np.trapezoid(np.exp(logsumexp(log_seat, axis=1)), grid) == pytest.approx(1.0, abs=1e-3)


def test_seating_predictive_uses_the_powered_weights():
    X, labels = blobs(40, 2, seed=5)
    niw = resolve_niw(X)
    prior = PowerCRP(0.5, 1.7)
    x = np.array([[0.3, -0.2], [2.0, 1.5]])
    log_seat = seating_log_predictive(x, X, labels, prior, niw)
    sizes = np.bincount(labels)
    weights = np.append(sizes ** 1.7, 0.5)
    weights /= weights.sum()
    def predictive(block):
        df, loc, scale = student_t_params(block, niw.m0, niw.kappa0, niw.nu0, niw.S0)
        return stats.multivariate_t(loc=loc, shape=scale, df=df).pdf(x)

    t = [predictive(X[labels == k]) for k in range(3)] + [predictive(np.empty((0, 2)))]
    assert np.exp(log_seat) == pytest.approx(np.array(t).T * weights, rel=1e-10)


def test_averaged_density_is_the_mean_over_the_chosen_draws():
    X, labels = blobs(40, 1, seed=6)
    niw = resolve_niw(X)
    rng = np.random.default_rng(0)
    draws = np.array([np.where(rng.random(40) < 0.3, rng.integers(0, 4, 40), labels) for _ in range(12)])
    grid = grid_1d(X[:, 0], 50)
    summary = averaged_density(grid, X, draws.reshape(3, 4, 40), niw, band=False)
    expected = np.mean([mixture_density(grid, X, z, niw)[0] for z in draws], axis=0)
    assert summary.n_draws == 12 and summary.lower is None
    assert summary.mean == pytest.approx(expected, rel=1e-12)
    picked = averaged_density(grid, X, draws, niw, max_draws=3, band=False)
    assert picked.n_draws == 3
    assert picked.mean == pytest.approx(np.mean([mixture_density(grid, X, draws[s], niw)[0] for s in (0, 6, 11)],
                                                axis=0), rel=1e-12)


def test_density_draws_average_to_the_predictive_mixture():
    """Posterior draws of the density (Dirichlet weights, NIW parameters) must average to sum_k N_k/N t_k(x).

    1,000 draws: at every grid point the Monte Carlo mean is within 5 standard errors (estimated from the
    draws themselves) of the exact value; a wrong inverse-Wishart scale or mean variance moves it by far
    more (the t_k would be the predictive of another model)."""
    X, labels = blobs(30, 1, seed=7)
    niw = resolve_niw(X)
    grid = grid_1d(X[:, 0], 40)
    f = density_draws(grid, X, np.tile(labels, (1000, 1)), niw, n_draws=1000, seed=1)
    exact, _ = mixture_density(grid, X, labels, niw)
    se = f.std(axis=0, ddof=1) / np.sqrt(f.shape[0])
    assert np.all(np.abs(f.mean(axis=0) - exact) < 5 * se + 1e-12)
    summary = averaged_density(grid, X, np.tile(labels, (200, 1)), niw, level=0.9, seed=2)
    assert np.all(summary.lower <= summary.upper)
    inside = (summary.lower <= summary.mean) & (summary.mean <= summary.upper)
    assert inside.mean() > 0.95  # the posterior mean lies inside the 90% band (away from sharp peaks)


@pytest.mark.parametrize("d,dim", [(1, 1), (2, 2), (3, 2)])
def test_density_panel_shapes_and_components(d, dim):
    X, labels = blobs(40, d, seed=8)
    niw = resolve_niw(X)
    draws = np.tile(labels, (2, 5, 1))
    panel = density_panel(X, draws, labels, niw, max_draws=10, n_grid=30)
    assert panel.dim == dim and panel.components.shape[0] == 3
    if dim == 1:
        assert panel.density.mean.shape == (30,) and panel.density.lower.shape == (30,)
    else:
        assert panel.density.mean.shape == (30, 30) and panel.components.shape == (3, 30, 30)
        assert panel.density.lower is None and panel.axes == [0, 1]
    # every draw is the point estimate here, so the mean density is the sum of its components
    assert panel.components.sum(axis=0) == pytest.approx(panel.density.mean, rel=1e-10)


@pytest.mark.parametrize("d", [1, 3])
def test_posterior_density_figure_draws_band_mean_and_dashed_components(d):
    from pcrp import plots

    X, labels = blobs(40, d, seed=9)
    panel = density_panel(X, np.tile(labels, (4, 1)), labels, resolve_niw(X), max_draws=4, n_grid=25)
    fig = plots.posterior_density(panel, labels, [f"c{j}" for j in range(d)], "t")
    dashed = [t for t in fig.data if getattr(t, "line", None) is not None and t.line.dash == "dash"]
    assert len(dashed) == 3  # one per point-estimate cluster
    if d == 1:
        assert any(getattr(t, "fill", None) == "tonexty" for t in fig.data)  # the credible band
        assert np.allclose(fig.data[-1].y, panel.density.mean)  # the posterior mean, drawn last
    else:
        assert fig.layout.xaxis.title.text == "c0" and fig.layout.yaxis.title.text == "c1"
        assert sum(t.type == "contour" for t in fig.data) == 4  # mean density + one per cluster


def scipy_predictive(points, X, labels, weights, niw):
    """(K + 1, G): weights[k] t_k(x) for each block and weights[K] t_0(x), Student-t densities from scipy."""
    out = []
    for k in range(len(weights)):
        block = X[labels == k] if k < len(weights) - 1 else np.empty((0, X.shape[1]))
        df, loc, scale = student_t_params(block, niw.m0, niw.kappa0, niw.nu0, niw.S0)
        out.append(weights[k] * stats.multivariate_t(loc=loc, shape=scale, df=df).pdf(points))
    return np.array(out)


def test_model_density_is_the_average_seating_predictive_for_the_pcrp_at_r_1_6():
    """The model's density averaged over draws equals the mean of the per-draw seating predictive (weights
    N_k^1.6 and alpha, normalised, scipy's Student-t), to rounding; it differs from the plug-in density (N_k / N,
    no new-cluster term), which is what the figure showed before."""
    X, labels = blobs(40, 1, seed=6)
    niw = resolve_niw(X)
    prior = PowerCRP(0.8, 1.6)
    rng = np.random.default_rng(1)
    draws = np.array([np.where(rng.random(40) < 0.2, rng.integers(0, 3, 40), labels) for _ in range(6)])
    grid = grid_1d(X[:, 0], 60)
    summary = averaged_density(grid, X, draws, niw, prior=prior, level=0.8)
    per_draw = []
    for z in draws:
        _, z = np.unique(z, return_inverse=True)
        sizes = np.bincount(z)
        w = np.append(sizes ** 1.6, 0.8)
        per_draw.append(scipy_predictive(grid[:, None], X, z, w / w.sum(), niw).sum(axis=0))
    per_draw = np.array(per_draw)
    assert summary.kind == "predictive" and summary.n_draws == 6
    assert summary.mean == pytest.approx(per_draw.mean(axis=0), rel=1e-9)
    assert summary.lower == pytest.approx(np.quantile(per_draw, 0.1, axis=0), rel=1e-9)
    assert summary.upper == pytest.approx(np.quantile(per_draw, 0.9, axis=0), rel=1e-9)
    plug_in = averaged_density(grid, X, draws, niw, band=False)
    assert plug_in.kind == "plug-in" and "N_k / N" in plug_in.label
    assert np.max(np.abs(plug_in.mean - summary.mean) / summary.mean.max()) > 0.01


def test_new_cluster_term_uses_v_at_n_plus_1_for_the_mfm():
    """For the MFM the new-cluster weight of customer N + 1 is W(1) V_{N+1}(K + 1) / V_{N+1}(K) (not V_N), read
    here from the prior's own tables at N + 1; the existing blocks get W(n + 1) / W(n) = n + gamma."""
    from pcrp.analyses.density import predictive_density
    from pcrp.model import MFM

    X, labels = blobs(30, 2, seed=3)
    niw = resolve_niw(X)
    prior = MFM(gamma=0.5, lam=2.0)
    N, K = 30, 3
    log_W, log_V = prior.tables(N + 1)
    w = np.append(np.bincount(labels) + 0.5, np.exp(log_W[1] + log_V[K + 1] - log_V[K]))
    points = np.array([[0.0, 0.0], [5.0, -5.0], [-2.0, -2.0]])
    density, comps = predictive_density(points, X, labels, prior, niw)
    expected = scipy_predictive(points, X, labels, w / w.sum(), niw)
    assert comps == pytest.approx(expected, rel=1e-9) and density == pytest.approx(expected.sum(axis=0), rel=1e-9)
    log_W_n, log_V_n = prior.tables(N)
    assert abs((log_V_n[K + 1] - log_V_n[K]) - (log_V[K + 1] - log_V[K])) > 1e-3  # V_N would be a different weight


@pytest.mark.parametrize("d,dim", [(1, 1), (3, 2)])
def test_density_panel_of_the_model_has_the_new_cluster_term_and_a_band(d, dim):
    X, labels = blobs(40, d, seed=8)
    panel = density_panel(X, np.tile(labels, (6, 1)), labels, resolve_niw(X), prior=PowerCRP(1.0, 1.3),
                          max_draws=6, n_grid=20)
    assert panel.components.shape[0] == 3 and panel.new_component.shape == panel.density.mean.shape
    # every draw is the point estimate here: the mean density is its components plus the new-cluster term
    assert panel.components.sum(axis=0) + panel.new_component == pytest.approx(panel.density.mean, rel=1e-10)
    assert panel.density.lower.shape == panel.density.mean.shape and panel.density.kind == "predictive"


def test_a_missing_prior_is_an_error_that_says_so():
    """The model's predictive needs the run's prior: None is refused with a message (never a CRP(1) stand-in), and a
    run configuration without a 'prior' entry is refused too (never a CRP or pCRP guessed from r)."""
    from pcrp.basics.errors import ModelError
    from pcrp.model import prior_of

    X, labels = blobs(30, 1, 0)
    with pytest.raises(ModelError, match="needs the run's seating prior"):
        seating_log_predictive(X[:3], X, labels, None, resolve_niw(X))
    with pytest.raises(ModelError, match="records no prior"):
        prior_of({"r": 1.5, "alpha": 1.0})
    assert prior_of({"prior": "pcrp", "alpha": 0.5, "r": 1.5}) == PowerCRP(0.5, 1.5)

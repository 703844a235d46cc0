"""Posterior density of the mixture (paper Fig. 5) and the posterior predictive of new points.

Given one partition z of the data, a block k with N_k points has the NIW posterior predictive
t_k(x) (a multivariate Student-t, docs/design.md section 1.2); t_0 is the prior predictive (an empty block).

- **The model's density** (the default, :func:`predictive_density`, :func:`averaged_density` with a prior): the
  posterior predictive of a new point, i.e. the seating rule for customer N + 1,
  p(x | z) = [sum_k w_k t_k(x) + w_new t_0(x)] / [sum_k w_k + w_new] with the prior's weights
  w_k = W(N_k + 1) / W(N_k) and w_new = W(1) V_{N+1}(K + 1) / V_{N+1}(K) (docs/design.md section 1.1; N_k^r and alpha
  for the pCRP, N_k and alpha for the CRP, N_k - sigma and alpha + K sigma for Pitman-Yor, ...). Averaged over
  kept draws it is p(x | X), the density the model predicts; its pointwise credible band is the spread of
  p(x | z_s) over the draws. Used by the figures, the estimator's predict_proba and score_samples.
- **Plug-in density** (labelled so wherever shown; ``prior=None``): f(x | z) = sum_k (N_k / N) t_k(x), the
  weights' posterior mean under a Dirichlet(N_1..N_K) with the new-cluster mass left out, as in the paper's
  figure. For r != 1 it is not the pCRP's predictive (on Old Faithful at r = 1.6 it differs by a median 11%).
  Its band comes from :func:`density_draws` (Dirichlet(N_k) weights and NIW draws of each block).

For d > 2 the figures use the first two axes (or any chosen ones): the marginal of the model on
those axes is again an NIW mixture, with the same m0, kappa0 and S0 restricted to the axes and
nu0 reduced by the number of dropped axes (the marginal of an inverse Wishart), so the projected
predictive is exactly the marginal of the full predictive (the seating weights depend on the partition only).
"""

from dataclasses import dataclass

import numpy as np
from scipy import stats

from ..kernels import clusters
from ..kernels.vecmath import LANES
from ..basics.errors import ModelError
from ..model import NIW
from ..model.niw_math import draw_mean_and_covariance, kernel_tables, posterior_params
from ..model.seating import seating_log_probabilities
from ..sampling.sampler import base_measure, prior_slots, slots_for
from ..summaries.summary import sorted_codes

# Kept draws a density figure averages (evenly spaced), and the probability of its pointwise credible band.
DENSITY_DRAWS = 200
BAND_LEVEL = 0.9


def marginal_niw(niw, axes):
    """The NIW prior of the coordinates ``axes`` (a list of column indices) alone."""
    axes = list(axes)
    dropped = niw.dim - len(axes)
    # nu0 less the dropped columns keeps each column's variance prior, (nu0 - d + 1) / 2, for every covariance type
    return NIW(m0=niw.m0[axes], kappa0=niw.kappa0, nu0=niw.nu0 - dropped, S0=niw.S0[np.ix_(axes, axes)],
               covariance_type=niw.covariance_type)


def project(X, niw, axes=(0, 1)):
    """(X[:, axes], NIW of those axes) for figures of data with more columns than ``axes``."""
    X = np.asarray(X, dtype=float)
    axes = [a for a in axes if a < X.shape[1]]
    if len(axes) == X.shape[1]:
        return X, niw
    return np.ascontiguousarray(X[:, axes]), marginal_niw(niw, axes)


def grid_1d(x, n=300, pad=0.1):
    """(n,) evenly spaced points covering x padded by ``pad`` x its range on each side."""
    x = np.asarray(x, dtype=float).reshape(-1)
    span = np.ptp(x) or 1.0
    return np.linspace(x.min() - pad * span, x.max() + pad * span, n)


def grid_2d(X, n=60, pad=0.15):
    """Axes (gx (n,), gy (n,)) and the mesh points (n * n, 2), row-major in y then x (for contour z[y, x])."""
    X = np.asarray(X, dtype=float)
    gx, gy = grid_1d(X[:, 0], n, pad), grid_1d(X[:, 1], n, pad)
    xx, yy = np.meshgrid(gx, gy)
    return gx, gy, np.column_stack([xx.ravel(), yy.ravel()])


class _Blocks:
    """The NIW posterior of every block of one partition, for evaluating predictives at many points (no prior:
    the seating weights come from :func:`pcrp.model.seating.seating_log_probabilities`)."""

    def __init__(self, X, labels, niw):
        X = np.require(X, np.float64, ["C", "W"])  # writable C arrays: the kernels' one compiled signature
        N, d = X.shape
        labels, self.K = sorted_codes(labels)  # the blocks numbered as np.unique numbers them
        # the Student-t columns only: the predictive never reads the prior's, so they are left at zero; and only up
        # to the largest block (its entries are all a predictive reads: 16 ms a call at N = 100,000 for all N)
        n_max = int(np.bincount(labels).max())
        zeros = np.zeros(n_max + 2)
        self.tables = kernel_tables(n_max, d, niw.kappa0, niw.nu0, niw.S0, zeros, zeros, zeros, niw.covariance_type)
        base = base_measure(niw)
        self.slots = slots_for(X, labels.astype(np.int64).reshape(-1), self.K, base, self.tables,
                               niw.covariance_type)
        self.counts = self.slots.counts[:self.K]
        self._prior = prior_slots(d, LANES, base, self.tables, niw.covariance_type)

    def log_predictive(self, points):
        """(G, K) log t_k(x) at points (G, d)."""
        points = np.require(points, np.float64, ["C", "W"])
        return clusters.log_predictive(points, self.slots, self.K, self.tables)

    def log_prior_predictive(self, points):
        """(G,) log t_0(x), the predictive of an empty cluster."""
        points = np.require(points, np.float64, ["C", "W"])
        return clusters.log_predictive(points, self._prior, 1, self.tables)[:, 0]


def mixture_density(points, X, labels, niw):
    """Plug-in density f(x | z) = sum_k (N_k / N) t_k(x) of one partition at points (G, d) (or (G,) for 1-D):
    N_k / N weights, no new-cluster term (not the model's predictive for r != 1: see :func:`predictive_density`).

    X (N, d), labels (N,). Returns (density (G,), weighted components (K, G)), components in the
    order of ``np.unique(labels)``.
    """
    X = np.asarray(X, dtype=float).reshape(len(labels), -1)
    points = np.asarray(points, dtype=float).reshape(-1, X.shape[1])
    blocks = _Blocks(X, labels, niw)
    comps = (blocks.counts[:, None] / X.shape[0]) * np.exp(blocks.log_predictive(points)).T
    return comps.sum(axis=0), comps


def _spaced(n_total, n_max):
    return np.unique(np.linspace(0, n_total - 1, min(n_max, n_total)).round().astype(int))


@dataclass
class DensitySummary:
    """The posterior density on a set of points (G,).

    mean: posterior mean of the density (the average over draws of p(x | z_s), or of the plug-in f(x | z_s)).
    lower, upper: pointwise credible band (quantiles over draws), or None.
    level: the band's probability (0.9 = 90%); n_draws: kept partitions averaged.
    kind: "predictive" (the model's: the prior's seating weights and the new-cluster term) or "plug-in"
        (N_k / N weights, no new-cluster term); ``label`` says it in words for a figure.
    """

    mean: np.ndarray
    lower: np.ndarray | None
    upper: np.ndarray | None
    level: float
    n_draws: int
    kind: str = "predictive"

    @property
    def label(self):
        if self.kind == "plug-in":
            return "plug-in density (weights N_k / N, no new-cluster term)"
        return "posterior predictive density (the prior's seating weights, new-cluster term included)"


def density_draws(points, X, label_draws, niw, n_draws=DENSITY_DRAWS, seed=0):
    """(n, G) draws of the plug-in density function at points (G, d): for evenly spaced kept partitions,
    Dirichlet(N_k) weights and (mu_k, Sigma_k) from each block's posterior under its covariance type (the plug-in's
    band)."""
    X = np.asarray(X, dtype=float).reshape(np.shape(label_draws)[-1], -1)
    d = X.shape[1]
    points = np.asarray(points, dtype=float).reshape(-1, d)
    draws = np.asarray(label_draws).reshape(-1, X.shape[0])
    rng = np.random.default_rng(seed)
    out = []
    for s in _spaced(len(draws), n_draws):
        ids, labels = np.unique(draws[s], return_inverse=True)
        weights = rng.dirichlet(np.bincount(labels))
        f = np.zeros(points.shape[0])
        for k in range(ids.size):
            mu, sigma = draw_mean_and_covariance(X[labels == k], niw, rng)
            chol = np.linalg.cholesky(sigma)
            z = np.linalg.solve(chol, (points - mu).T)  # (d, G) whitened offsets
            log_norm = -0.5 * d * np.log(2 * np.pi) - np.log(np.diag(chol)).sum()
            f += weights[k] * np.exp(log_norm - 0.5 * (z * z).sum(axis=0))
        out.append(f)
    return np.array(out)


def predictive_density(points, X, labels, prior, niw):
    """The model's density of a new point given one partition, at points (G, d) (or (G,) for 1-D).

    X (N, d), labels (N,), prior: a seating prior (pcrp.model). Returns (density (G,), components (K + 1, G)):
    component k < K is w_k t_k(x) / (sum_l w_l + w_new) for the blocks in the order of ``np.unique(labels)``,
    component K the new-cluster term w_new t_0(x) / (...); they sum to the density.
    """
    X = np.asarray(X, dtype=float).reshape(len(labels), -1)
    points = np.asarray(points, dtype=float).reshape(-1, X.shape[1])
    comps = np.exp(seating_log_predictive(points, X, labels, prior, niw)).T
    return comps.sum(axis=0), comps


def averaged_density(points, X, label_draws, niw, *, prior=None, max_draws=DENSITY_DRAWS, level=BAND_LEVEL, band=True,
                     seed=0):
    """Posterior density at points (G, d) averaged over up to ``max_draws`` evenly spaced kept draws
    ((S, N) or (C, S, N) labels), with a pointwise ``level`` credible band when ``band``.

    prior given: the model's posterior predictive (:func:`predictive_density` per draw), the band the
    pointwise quantiles of the per-draw predictive densities. prior None: the plug-in density
    (:func:`mixture_density`), its band from :func:`density_draws` (meant for 1-D: one NIW draw per block and
    draw); the result is marked ``kind="plug-in"``.
    """
    X = np.asarray(X, dtype=float)
    draws = np.asarray(label_draws).reshape(-1, X.shape[0])
    X = X.reshape(draws.shape[1], -1)
    picks = _spaced(len(draws), max_draws)
    lower = upper = None
    quantiles = [(1 - level) / 2, (1 + level) / 2]
    if prior is not None:
        f = np.array([predictive_density(points, X, draws[s], prior, niw)[0] for s in picks])
        if band:
            lower, upper = np.quantile(f, quantiles, axis=0)
        return DensitySummary(mean=f.mean(axis=0), lower=lower, upper=upper, level=level, n_draws=int(picks.size))
    mean = np.mean([mixture_density(points, X, draws[s], niw)[0] for s in picks], axis=0)
    if band:
        f = density_draws(points, X, draws, niw, n_draws=max_draws, seed=seed)
        lower, upper = np.quantile(f, quantiles, axis=0)
    return DensitySummary(mean=mean, lower=lower, upper=upper, level=level, n_draws=int(picks.size), kind="plug-in")


def seating_log_predictive(X_new, X, labels, prior, niw):
    """log of p(x joins block k, x | z) for new points under the seating rule, one partition.

    X_new (M, d), X (N, d), labels (N,). Returns (M, K + 1): columns 0..K-1 are the blocks in the
    order of ``np.unique(labels)``, column K a new cluster; logsumexp over columns is log p(x | z).
    """
    if prior is None:
        raise ModelError("The model's predictive density needs the run's seating prior (pcrp.model.make_prior of "
                         "its configuration's prior); the plug-in density (mixture_density) needs none.")
    X = np.asarray(X, dtype=float)
    blocks = _Blocks(X, labels, niw)
    log_weights = seating_log_probabilities(prior, blocks.counts)  # the new point is customer N + 1
    X_new = np.asarray(X_new, dtype=float).reshape(-1, X.shape[1])
    log_t = np.column_stack([blocks.log_predictive(X_new), blocks.log_prior_predictive(X_new)])
    return log_t + log_weights


@dataclass
class DensityPanel:
    """Everything a posterior-density figure draws, for 1-D data or two chosen axes.

    dim: 1 or 2; axes: the columns of the original data shown; X: (N, dim) those columns.
    grid: (G,) points for dim 1; gx (nx,), gy (ny,) mesh axes for dim 2 (grid is then (ny * nx, 2)).
    density: a :class:`DensitySummary` (its ``label`` says which density); mean (and band) have shape (G,) in
        1-D and (ny, nx) in 2-D.
    components: (K, G) or (K, ny, nx) the point estimate's weighted components: w_k t_k(x) with the prior's
        seating weights (normalised with the new-cluster weight), or N_k / N t_k(x) for the plug-in.
    new_component: (G,) or (ny, nx) the new-cluster term w_new t_0(x) of the point estimate, or None (plug-in).
    """

    dim: int
    axes: list
    X: np.ndarray
    grid: np.ndarray
    gx: np.ndarray | None
    gy: np.ndarray | None
    density: DensitySummary
    components: np.ndarray
    new_component: np.ndarray | None = None


def density_panel(X, label_draws, point_labels, niw, *, prior=None, axes=(0, 1), max_draws=DENSITY_DRAWS, level=BAND_LEVEL,
                  n_grid=None, seed=0):
    """The posterior density of data X (N, d) averaged over kept draws, with the point estimate's components:
    on a 1-D grid (with a pointwise ``level`` band) when d = 1, else on a 2-D mesh over ``axes`` using the
    marginal model of those axes (:func:`project`). prior: the run's seating prior, for the model's predictive
    density; None gives the plug-in density (labelled so in ``density.label``)."""
    X = np.asarray(X, dtype=float)
    if X.ndim == 1:
        X = X[:, None]
    Xp, niw_p = project(X, niw, axes if X.shape[1] > 1 else (0,))
    shown = list(axes[: Xp.shape[1]]) if X.shape[1] > 1 else [0]

    def components(points):
        if prior is None:
            return mixture_density(points, Xp, point_labels, niw_p)[1], None
        comps = predictive_density(points, Xp, point_labels, prior, niw_p)[1]
        return comps[:-1], comps[-1]

    if Xp.shape[1] == 1:
        grid = grid_1d(Xp[:, 0], n_grid or 300)
        summary = averaged_density(grid[:, None], Xp, label_draws, niw_p, prior=prior, max_draws=max_draws,
                                   level=level, seed=seed)
        comps, new = components(grid[:, None])
        return DensityPanel(1, shown, Xp, grid, None, None, summary, comps, new)
    gx, gy, grid = grid_2d(Xp, n_grid or 60)
    summary = averaged_density(grid, Xp, label_draws, niw_p, prior=prior, max_draws=max_draws, level=level,
                               band=prior is not None)
    shape = (gy.size, gx.size)
    summary.mean = summary.mean.reshape(shape)
    if summary.lower is not None:
        summary.lower, summary.upper = summary.lower.reshape(shape), summary.upper.reshape(shape)
    comps, new = components(grid)
    return DensityPanel(2, shown, Xp, grid, gx, gy, summary, comps.reshape((-1,) + shape),
                        None if new is None else new.reshape(shape))

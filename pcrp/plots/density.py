"""Posterior density figures (paper Fig. 5): the mixture density with weighted components dashed.

Drawing only: the densities come from :mod:`pcrp.analyses.density` (including the marginal model used to show
the first two axes of higher-dimensional data). Given the run's seating ``prior`` the figures draw the
model's predictive density (:func:`pcrp.analyses.density.predictive_density`: the prior's seating weights and the
new-cluster term, drawn grey and dashed); without it the plug-in density (weights N_k / N, no new-cluster
term), and the title says "plug-in".
"""

import numpy as np
import plotly.graph_objects as go

from ..analyses.density import averaged_density, grid_1d, grid_2d, mixture_density, predictive_density, project
from .clusters import cluster_scatter
from .palette import DATA_GREY, NEW_CLUSTER_GREY as NEW_CLUSTER_COLOUR, PALETTE
from .style import LAYOUT, side_by_side

PLUG_IN = " (plug-in: N_k / N weights)"


def _components_by_height(comps):
    return np.argsort(-comps.reshape(comps.shape[0], -1).max(axis=1), kind="stable")


def _density(points, X, labels, niw, prior):
    """(density (G,), cluster components (K, G), new-cluster term (G,) or None): the model's predictive given
    ``prior``, else the plug-in."""
    if prior is None:
        total, comps = mixture_density(points, X, labels, niw)
        return total, comps, None
    total, comps = predictive_density(points, X, labels, prior, niw)
    return total, comps[:-1], comps[-1]


def _add_new_1d(fig, grid, new, **where):
    fig.add_scatter(x=grid, y=new, mode="lines", line=dict(dash="dot", color=NEW_CLUSTER_COLOUR, width=1.5),
                    name="new cluster", **where)


def _add_new_2d(fig, gx, gy, new, name="new cluster"):
    peak = float(np.max(new))
    if peak <= 0:
        return
    level = 0.3 * peak
    fig.add_contour(x=gx, y=gy, z=new, showscale=False, contours_coloring="lines",
                    contours=dict(start=level, end=level, size=1.0),
                    colorscale=[[0, NEW_CLUSTER_COLOUR], [1, NEW_CLUSTER_COLOUR]], line=dict(dash="dot", width=2),
                    name=name)


def add_new_cluster_term(fig, panel):
    """Draw a :class:`pcrp.analyses.density.DensityPanel`'s new-cluster term w_new t_0(x) on ``fig`` (the figure of
    :func:`pcrp.plots.posterior_density` for that panel), grey and dotted: a line in 1-D, its contour at 30%
    of its peak in 2-D. Nothing when the panel has none (the plug-in). Returns ``fig``."""
    if panel.new_component is None:
        return fig
    if panel.dim == 1:
        _add_new_1d(fig, panel.grid, panel.new_component)
    else:
        _add_new_2d(fig, panel.gx, panel.gy, panel.new_component)
    return fig


def density_1d(X, labels, niw, title, x_range=None, prior=None):
    """Posterior density for one labelling, weighted components dashed (paper Fig. 5); with ``prior`` the
    model's predictive density and its new-cluster term (grey, dotted), else the plug-in (said in the title)."""
    x = np.asarray(X, dtype=float)[:, 0]
    grid = np.linspace(*x_range, 300) if x_range else grid_1d(x)
    total, comps, new = _density(grid, x, labels, niw, prior)
    fig = go.Figure()
    fig.add_histogram(x=x, histnorm="probability density", nbinsx=40, marker_color=DATA_GREY,
                      name="data", opacity=0.6)
    for r, k in enumerate(_components_by_height(comps)):
        fig.add_scatter(x=grid, y=comps[k], mode="lines", line=dict(dash="dash", color=PALETTE[r % 10]),
                        name=f"component {r + 1}")
    if new is not None:
        _add_new_1d(fig, grid, new)
    fig.add_scatter(x=grid, y=total, mode="lines", line=dict(color="black", width=2), name="density")
    fig.update_layout(title=title + (PLUG_IN if prior is None else ""), xaxis_title="x", yaxis_title="density",
                      showlegend=False, **LAYOUT)
    return fig


def density_2d(X, labels, niw, columns, title, prior=None):
    """Posterior density contours over the coloured scatter (first two columns, marginal model); with ``prior``
    the model's predictive density, else the plug-in (said in the title)."""
    Xp, niw_p = project(X, niw, (0, 1))
    gx, gy, points = grid_2d(Xp)
    total, _, _ = _density(points, Xp, labels, niw_p, prior)
    fig = cluster_scatter(Xp, labels, columns, title + (PLUG_IN if prior is None else ""))
    fig.add_contour(x=gx, y=gy, z=total.reshape(gy.size, gx.size), contours_coloring="lines", showscale=False,
                    ncontours=12, line=dict(width=1), colorscale="Greys")
    return fig


def density_side_by_side(X, label_draws, niw, title, priors=None):
    """1-D posterior density averaged over kept draws, one panel per chain {name: (S, N)},
    with the last draw's weighted components dashed (paper Fig. 5). priors: {name: seating prior} for the
    model's predictive density (new-cluster term grey, dotted); without, the plug-in (said in the title)."""
    x = np.asarray(X, dtype=float)[:, 0]
    grid = grid_1d(x)
    priors = priors or {}
    plug_in = any(priors.get(name) is None for name in label_draws)
    fig = side_by_side(list(label_draws), title + (PLUG_IN if plug_in else ""))
    for col, (name, draws) in enumerate(label_draws.items(), start=1):
        prior = priors.get(name)
        fig.add_histogram(x=x, histnorm="probability density", nbinsx=40, marker_color=DATA_GREY, opacity=0.6,
                          row=1, col=col)
        _, comps, new = _density(grid, x, np.asarray(draws)[-1], niw, prior)
        for r, k in enumerate(_components_by_height(comps)):
            fig.add_scatter(x=grid, y=comps[k], mode="lines", line=dict(dash="dash", color=PALETTE[r % 10]),
                            row=1, col=col)
        if new is not None:
            _add_new_1d(fig, grid, new, row=1, col=col)
        mean = averaged_density(grid, x, draws, niw, prior=prior, max_draws=50, band=False).mean
        fig.add_scatter(x=grid, y=mean, mode="lines", line=dict(color="black", width=2), row=1, col=col)
        fig.update_xaxes(title_text="x", row=1, col=col)
    fig.update_yaxes(title_text="density", row=1, col=1)
    return fig

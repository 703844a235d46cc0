"""Posterior density figures (paper Fig. 5): the mixture density with weighted components dashed.

Drawing only: the densities come from :mod:`pcrp.density` (including the marginal model used to show
the first two axes of higher-dimensional data).
"""

import numpy as np
import plotly.graph_objects as go

from ..density import averaged_density, grid_1d, grid_2d, mixture_density, project
from .clusters import cluster_scatter
from .style import LAYOUT, PALETTE, side_by_side


def _components_by_height(comps):
    return np.argsort(-comps.reshape(comps.shape[0], -1).max(axis=1), kind="stable")


def density_1d(X, labels, niw, title, x_range=None):
    """Posterior density for one labelling, weighted components dashed (paper Fig. 5)."""
    x = np.asarray(X, dtype=float)[:, 0]
    grid = np.linspace(*x_range, 300) if x_range else grid_1d(x)
    total, comps = mixture_density(grid, x, labels, niw)
    fig = go.Figure()
    fig.add_histogram(x=x, histnorm="probability density", nbinsx=40, marker_color="#cccccc",
                      name="data", opacity=0.6)
    for r, k in enumerate(_components_by_height(comps)):
        fig.add_scatter(x=grid, y=comps[k], mode="lines", line=dict(dash="dash", color=PALETTE[r % 10]),
                        name=f"component {r + 1}")
    fig.add_scatter(x=grid, y=total, mode="lines", line=dict(color="black", width=2), name="density")
    fig.update_layout(title=title, xaxis_title="x", yaxis_title="density", showlegend=False, **LAYOUT)
    return fig


def density_2d(X, labels, niw, columns, title):
    """Posterior density contours over the coloured scatter (first two columns, marginal model)."""
    Xp, niw_p = project(X, niw, (0, 1))
    gx, gy, points = grid_2d(Xp)
    total, _ = mixture_density(points, Xp, labels, niw_p)
    fig = cluster_scatter(Xp, labels, columns, title)
    fig.add_contour(x=gx, y=gy, z=total.reshape(gy.size, gx.size), contours_coloring="lines", showscale=False,
                    ncontours=12, line=dict(width=1), colorscale="Greys")
    return fig


def density_side_by_side(X, label_draws, niw, title):
    """1-D posterior density averaged over kept draws, one panel per chain {name: (S, N)},
    with the last draw's weighted components dashed (paper Fig. 5)."""
    x = np.asarray(X, dtype=float)[:, 0]
    grid = grid_1d(x)
    fig = side_by_side(list(label_draws), title)
    for col, draws in enumerate(label_draws.values(), start=1):
        fig.add_histogram(x=x, histnorm="probability density", nbinsx=40, marker_color="#cccccc", opacity=0.6,
                          row=1, col=col)
        _, comps = mixture_density(grid, x, np.asarray(draws)[-1], niw)
        for r, k in enumerate(_components_by_height(comps)):
            fig.add_scatter(x=grid, y=comps[k], mode="lines", line=dict(dash="dash", color=PALETTE[r % 10]),
                            row=1, col=col)
        mean = averaged_density(grid, x, draws, niw, max_draws=50, band=False).mean
        fig.add_scatter(x=grid, y=mean, mode="lines", line=dict(color="black", width=2), row=1, col=col)
        fig.update_xaxes(title_text="x", row=1, col=col)
    fig.update_yaxes(title_text="density", row=1, col=1)
    return fig

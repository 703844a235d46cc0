"""Posterior density figures (paper Fig. 5): the mixture density with weighted components dashed."""

import numpy as np
import plotly.graph_objects as go

from ..summary import posterior_density_1d, posterior_density_2d
from .clusters import cluster_scatter
from .style import LAYOUT, PALETTE, side_by_side


def density_1d(X, labels, niw, title, x_range=None):
    """Posterior density for one labelling, weighted components dashed (paper Fig. 5)."""
    x = np.asarray(X)[:, 0]
    lo, hi = x_range or (x.min() - 0.1 * np.ptp(x), x.max() + 0.1 * np.ptp(x))
    grid = np.linspace(lo, hi, 300)
    total, comps = posterior_density_1d(grid, x, labels, niw)
    fig = go.Figure()
    fig.add_histogram(x=x, histnorm="probability density", nbinsx=40, marker_color="#cccccc",
                      name="data", opacity=0.6)
    order = np.argsort(-comps.max(axis=1))
    for r, k in enumerate(order):
        fig.add_scatter(x=grid, y=comps[k], mode="lines", line=dict(dash="dash", color=PALETTE[r % 10]),
                        name=f"component {r + 1}")
    fig.add_scatter(x=grid, y=total, mode="lines", line=dict(color="black", width=2), name="density")
    fig.update_layout(title=title, xaxis_title="x", yaxis_title="density", showlegend=False, **LAYOUT)
    return fig


def density_2d(X, labels, niw, columns, title):
    """Posterior density contours over the coloured scatter (first two columns)."""
    X = np.asarray(X)[:, :2]
    pad = 0.15 * np.ptp(X, axis=0)
    gx = np.linspace(X[:, 0].min() - pad[0], X[:, 0].max() + pad[0], 60)
    gy = np.linspace(X[:, 1].min() - pad[1], X[:, 1].max() + pad[1], 60)
    xx, yy = np.meshgrid(gx, gy)
    from ..model import NIW

    marginal = NIW(m0=niw.m0[:2], kappa0=niw.kappa0, nu0=niw.nu0 - (niw.dim - 2), S0=niw.S0[:2, :2])
    zz = posterior_density_2d(xx, yy, X, labels, marginal)
    fig = cluster_scatter(X, labels, columns, title)
    fig.add_contour(x=gx, y=gy, z=zz, contours_coloring="lines", showscale=False, ncontours=12,
                    line=dict(width=1), colorscale="Greys")
    return fig


def density_side_by_side(X, label_draws, niw, title):
    """1-D posterior density averaged over kept draws, one panel per chain {name: (S, N)},
    with the last draw's weighted components dashed (paper Fig. 5)."""
    from ..summary import averaged_density_1d

    x = np.asarray(X)[:, 0]
    grid = np.linspace(x.min() - 0.1 * np.ptp(x), x.max() + 0.1 * np.ptp(x), 300)
    fig = side_by_side(list(label_draws), title)
    for col, draws in enumerate(label_draws.values(), start=1):
        fig.add_histogram(x=x, histnorm="probability density", nbinsx=40, marker_color="#cccccc", opacity=0.6,
                          row=1, col=col)
        _, comps = posterior_density_1d(grid, x, draws[-1], niw)
        for r, k in enumerate(np.argsort(-comps.max(axis=1))):
            fig.add_scatter(x=grid, y=comps[k], mode="lines", line=dict(dash="dash", color=PALETTE[r % 10]),
                            row=1, col=col)
        fig.add_scatter(x=grid, y=averaged_density_1d(grid, x, draws, niw), mode="lines",
                        line=dict(color="black", width=2), row=1, col=col)
        fig.update_xaxes(title_text="x", row=1, col=col)
    fig.update_yaxes(title_text="density", row=1, col=1)
    return fig

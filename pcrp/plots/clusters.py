"""Figures of one partition: points coloured by cluster, cluster sizes, digits per cluster."""

import numpy as np
import plotly.graph_objects as go

from .palette import PALETTE, TRANSPARENT, colour
from .style import LAYOUT, cluster_colours, plain_text, side_by_side


def cluster_scatter(X, labels, columns, title, jitter_seed=0):
    """Points coloured by cluster. 1-D: jittered strip; 2-D+: the first two columns."""
    X = np.asarray(X)
    colours, _ = cluster_colours(labels)
    if X.shape[1] == 1:
        y = np.random.default_rng(jitter_seed).uniform(-1, 1, X.shape[0])
        fig = go.Figure(go.Scatter(x=X[:, 0], y=y, mode="markers", marker=dict(color=colours, size=5)))
        fig.update_yaxes(visible=False)
        fig.update_layout(xaxis_title=plain_text(columns[0]))
    else:
        fig = go.Figure(go.Scattergl(x=X[:, 0], y=X[:, 1], mode="markers",
                                     marker=dict(color=colours, size=5)))
        fig.update_layout(xaxis_title=plain_text(columns[0]), yaxis_title=plain_text(columns[1]))
    fig.update_layout(title=title, showlegend=False, **LAYOUT)
    return fig


def cluster_sizes(labels, title, y_max=None):
    """Bar chart of cluster sizes, largest first (paper Fig. 8b)."""
    _, counts = np.unique(labels, return_counts=True)
    counts = np.sort(counts)[::-1]
    fig = go.Figure(go.Bar(x=np.arange(1, counts.size + 1), y=counts,
                           marker_color=[colour(i) for i in range(counts.size)]))
    fig.update_layout(title=title, xaxis_title="cluster (by size)", yaxis_title="points", **LAYOUT)
    fig.update_xaxes(dtick=1)
    if y_max:
        fig.update_yaxes(range=[0, y_max])
    return fig


def digit_gallery(pixels, labels, per_cluster=6, title="Digits per cluster"):
    """A grid of 28 x 28 images: one row per cluster (largest first), a few digits each."""
    labels = np.asarray(labels)
    ids, counts = np.unique(labels, return_counts=True)
    ids = ids[np.argsort(-counts)][:8]
    rows = []
    for k in ids:
        members = np.flatnonzero(labels == k)[:per_cluster]
        tiles = [pixels[i].reshape(28, 28) for i in members]
        tiles += [np.zeros((28, 28))] * (per_cluster - len(tiles))
        rows.append(np.hstack(tiles))
    image = np.vstack(rows) if rows else np.zeros((28, 28))
    fig = go.Figure(go.Heatmap(z=image[::-1], colorscale="Greys", showscale=False))
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False, scaleanchor="x")
    fig.update_layout(title=title, template="plotly_white", margin=dict(l=10, r=10, t=40, b=10),
                      height=60 + 45 * len(rows))
    return fig


def scatter_side_by_side(X, labels, columns, title):
    """Points coloured by cluster, one panel per labelling {name: (N,)} (first two columns)."""
    X = np.asarray(X)
    fig = side_by_side(list(labels), title)
    for col, z in enumerate(labels.values(), start=1):
        colours, _ = cluster_colours(z)
        fig.add_scattergl(x=X[:, 0], y=X[:, 1], mode="markers", marker=dict(color=colours, size=4), row=1, col=col)
        fig.update_xaxes(title_text=plain_text(columns[0]), row=1, col=col)
    fig.update_yaxes(title_text=plain_text(columns[1]), row=1, col=1)
    return fig


def cluster_sizes_compare(labels, title):
    """Cluster sizes, largest first, for several labellings {name: (N,)} as grouped bars (paper Fig. 8b)."""
    fig = go.Figure()
    for i, (name, z) in enumerate(labels.items()):
        counts = np.sort(np.unique(z, return_counts=True)[1])[::-1]
        fig.add_bar(x=np.arange(1, counts.size + 1), y=counts, name=name, marker_color=PALETTE[i])
    fig.update_layout(title=title, xaxis_title="cluster (by size)", yaxis_title="points", barmode="group", **LAYOUT)
    fig.update_xaxes(dtick=1)
    return fig


def highlight_point(X, labels, i, columns, title):
    """Cluster scatter (first two columns, or jittered 1-D) with point i ringed in black."""
    fig = cluster_scatter(X, labels, columns, title)
    X = np.asarray(X)
    y = X[i, 1] if X.shape[1] > 1 else np.random.default_rng(0).uniform(-1, 1, X.shape[0])[i]
    fig.add_scatter(x=[X[i, 0]], y=[y], mode="markers",
                    marker=dict(size=16, color=TRANSPARENT, line=dict(color="black", width=3)))
    return fig

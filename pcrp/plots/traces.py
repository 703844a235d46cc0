"""Figures of K over sweeps and of the posterior of K."""

import numpy as np
import plotly.graph_objects as go

from ..summaries.summary import k_posterior
from .palette import BLUE, PALETTE
from .style import LAYOUT, side_by_side


def k_trace(K, burn_in, title, y_range=None, total_sweeps=None):
    """Trace of K over sweeps (1-based), burn-in shaded."""
    K = np.asarray(K)
    fig = go.Figure(go.Scatter(x=np.arange(1, K.size + 1), y=K, mode="lines", line=dict(width=1),
                               name="K"))
    if burn_in:
        fig.add_vrect(x0=0, x1=burn_in, fillcolor="grey", opacity=0.15, line_width=0,
                      annotation_text="burn-in", annotation_position="top left")
    fig.update_layout(title=title, xaxis_title="sweep", yaxis_title="clusters K", **LAYOUT)
    if total_sweeps:
        fig.update_xaxes(range=[0, total_sweeps])
    if y_range:
        fig.update_yaxes(range=y_range)
    return fig


def k_histogram(K, title, x_range=None, y_max=None):
    """Posterior probability of each K (after burn-in)."""
    values, probs = k_posterior(K) if len(K) else (np.array([]), np.array([]))
    fig = go.Figure(go.Bar(x=values, y=probs, marker_color=BLUE))
    fig.update_layout(title=title, xaxis_title="clusters K", yaxis_title="posterior probability", **LAYOUT)
    fig.update_xaxes(dtick=1, range=x_range)
    if y_max:
        fig.update_yaxes(range=[0, y_max])
    return fig


def k_traces_side_by_side(traces, burn_in, title, y_range=None):
    """K over sweeps for several chains {name: (iters,)}, one panel each, burn-in shaded."""
    fig = side_by_side(list(traces), title)
    for col, K in enumerate(traces.values(), start=1):
        K = np.asarray(K)
        fig.add_scatter(x=np.arange(1, K.size + 1), y=K, mode="lines", line=dict(width=1, color=PALETTE[col - 1]),
                        row=1, col=col)
        if burn_in:
            fig.add_vrect(x0=0, x1=burn_in, fillcolor="grey", opacity=0.15, line_width=0, row=1, col=col)
        fig.update_xaxes(title_text="sweep", row=1, col=col)
    fig.update_yaxes(title_text="clusters K", range=y_range, row=1, col=1)
    return fig


def k_posterior_compare(traces, title):
    """Posterior of K for several chains {name: K after burn-in} as markers on one axis (paper Fig. 6)."""
    fig = go.Figure()
    for i, (name, K) in enumerate(traces.items()):
        values, probs = k_posterior(K)
        fig.add_scatter(x=values, y=probs, mode="markers+lines", name=name,
                        marker=dict(symbol=["x", "circle", "star"][i % 3], size=10, color=PALETTE[i]))
    fig.update_layout(title=title, xaxis_title="clusters K", yaxis_title="posterior probability", **LAYOUT)
    fig.update_xaxes(dtick=1)
    return fig

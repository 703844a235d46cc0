"""Figures of the paper's reproduction: K over sweeps for several chains per method."""

import numpy as np

from .style import colour, side_by_side

MAX_POINTS = 4000  # per chain and panel: a 20,000-sweep trace is thinned for display


def k_traces_by_method(traces, burn_in, title, y_range=None):
    """K over sweeps {method: (C, T)}, one panel per method and one line per chain, burn-in shaded."""
    fig = side_by_side(list(traces), title)
    for col, K in enumerate(traces.values(), start=1):
        K = np.atleast_2d(np.asarray(K))
        step = max(1, K.shape[1] // MAX_POINTS)
        sweeps = np.arange(1, K.shape[1] + 1)[::step]
        for c, chain in enumerate(K):
            fig.add_scatter(x=sweeps, y=chain[::step], mode="lines", name=f"chain {c + 1}",
                            line=dict(width=1, color=colour(c)), opacity=0.7,
                            showlegend=col == 1, row=1, col=col)
        if burn_in:
            fig.add_vrect(x0=0, x1=burn_in, fillcolor="grey", opacity=0.15, line_width=0, row=1, col=col)
        fig.update_xaxes(title_text="sweep", row=1, col=col)
    fig.update_yaxes(title_text="clusters K", range=y_range, row=1, col=1)
    fig.update_layout(showlegend=True)
    return fig

"""The arrival-order figure of the Rich get richer page: the probability of one partition under each order in which
its customers may arrive (the pCRP's depends on the order; the CRP's does not)."""

import numpy as np
import plotly.graph_objects as go

from .palette import colour
from .style import LAYOUT


MAX_ORDER_BARS = 24  # beyond this, one bar per arrival order is unreadable


def order_probabilities(orders, probs, title):
    """Probability of one partition under each arrival order: orders (list of str), probs {label:
    (n_orders,)}. Up to MAX_ORDER_BARS orders: grouped bars, one per order. More: the distribution of
    the probability over the orders (how many orders give each probability), one trace per process
    (the CRP's is a single spike: every order has the same probability)."""
    fig = go.Figure()
    if len(orders) <= MAX_ORDER_BARS:
        for i, (label, p) in enumerate(probs.items()):
            fig.add_bar(x=orders, y=p, name=label, marker_color=colour(i))
        fig.update_layout(xaxis_title="arrival order (block of each customer)", yaxis_title="probability",
                          barmode="group")
    else:
        values = np.concatenate([np.asarray(p, dtype=float) for p in probs.values()])
        edges = np.linspace(values.min() * 0.98, values.max() * 1.02 + 1e-300, 41)
        for i, (label, p) in enumerate(probs.items()):
            counts, _ = np.histogram(p, bins=edges)
            fig.add_bar(x=(edges[:-1] + edges[1:]) / 2, y=counts, width=np.diff(edges), name=label,
                        marker_color=colour(i), opacity=0.75)
        fig.update_layout(xaxis_title=f"probability of the partition (over its {len(orders):,} arrival orders)",
                          yaxis_title="arrival orders", barmode="overlay", xaxis_tickformat=".2e")
    fig.update_layout(title=title, legend=dict(orientation="h", y=1.02, x=1, xanchor="right", yanchor="bottom"),
                      **{**LAYOUT, "height": 340, "margin": dict(l=50, r=10, t=60, b=50)})
    return fig

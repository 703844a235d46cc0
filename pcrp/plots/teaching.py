"""Figures of the teaching page: the seating process, growth of K, arrival orders, one customer's choice."""

import numpy as np
import plotly.graph_objects as go

from .style import LAYOUT, PALETTE


def table_sizes(sizes, title):
    """Customers per table T1, T2, ... in opening order."""
    fig = go.Figure(go.Bar(x=[f"T{k + 1}" for k in range(len(sizes))], y=sizes,
                           marker_color=[PALETTE[k % 10] for k in range(len(sizes))]))
    fig.update_layout(title=title, **LAYOUT)
    return fig


def next_customer(probs, title):
    """Seating probabilities of the next customer: each table, then a new one."""
    fig = go.Figure(go.Bar(x=[f"T{k + 1}" for k in range(len(probs) - 1)] + ["new"], y=probs, marker_color="#888"))
    fig.update_layout(title=title, yaxis_range=[0, 1], **LAYOUT)
    return fig


def k_growth(curves, exact, title):
    """E[K_N] against N (log axis): curves {label: (N (n,), mean (n,), se (n,))} with +-2 SE bands,
    and the exact CRP curve (N, E[K_N]) dotted."""
    fig = go.Figure()
    for i, (label, (N, mean, se)) in enumerate(curves.items()):
        fig.add_scatter(x=N, y=mean + 2 * se, mode="lines", line=dict(width=0), showlegend=False, hoverinfo="skip")
        fig.add_scatter(x=N, y=mean - 2 * se, mode="lines", line=dict(width=0), fill="tonexty",
                        fillcolor="rgba(128,128,128,0.2)", showlegend=False, hoverinfo="skip")
        fig.add_scatter(x=N, y=mean, mode="lines", name=label, line=dict(color=PALETTE[i % 10]))
    fig.add_scatter(x=exact[0], y=exact[1], mode="lines", name="CRP exact", line=dict(color="black", dash="dot"))
    fig.update_layout(title=title, xaxis_type="log", xaxis_title="N", yaxis_title="tables",
                      **{**LAYOUT, "height": 380})
    return fig


def distribution_compare(samples, title, xaxis_title, integer=True):
    """Distributions of one statistic for several processes {label: (runs,)}: bars of
    probabilities for integers, overlaid histograms otherwise."""
    fig = go.Figure()
    for i, (label, values) in enumerate(samples.items()):
        values = np.asarray(values)
        if integer:
            v, c = np.unique(values, return_counts=True)
            fig.add_bar(x=v, y=c / c.sum(), name=label, marker_color=PALETTE[i % 10])
        else:
            fig.add_histogram(x=values, histnorm="probability", name=label, marker_color=PALETTE[i % 10],
                              opacity=0.6, xbins=dict(start=0, end=1.0001, size=0.05))
    fig.update_layout(title=title, xaxis_title=xaxis_title, yaxis_title="probability",
                      barmode="group" if integer else "overlay", **LAYOUT)
    return fig


def order_probabilities(orders, probs, title):
    """Probability of one partition under each arrival order: orders (list of str),
    probs {label: (n_orders,)} as grouped bars."""
    fig = go.Figure()
    for i, (label, p) in enumerate(probs.items()):
        fig.add_bar(x=orders, y=p, name=label, marker_color=PALETTE[i % 10])
    fig.update_layout(title=title, xaxis_title="arrival order (block of each customer)", yaxis_title="probability",
                      barmode="group", **{**LAYOUT, "height": 340})
    return fig


def seating_choice_bars(choice, title):
    """Algorithm 1's inner loop for one point: prior, predictive (normalised) and posterior per option."""
    names = [f"cluster {k + 1} (n={n})" for k, n in enumerate(choice.sizes[:-1])] + ["new"]
    fig = go.Figure()
    for i, (label, values) in enumerate((("prior weight", choice.prior),
                                         ("predictive likelihood (normalised)", choice.likelihood_share),
                                         ("posterior", choice.posterior))):
        fig.add_bar(x=names, y=values, name=label, marker_color=["#bbbbbb", "#7f7f7f", PALETTE[0]][i])
    fig.update_layout(title=title, yaxis_title="probability", yaxis_range=[0, 1], barmode="group",
                      legend=dict(orientation="h", y=-0.25), **{**LAYOUT, "height": 360})
    return fig

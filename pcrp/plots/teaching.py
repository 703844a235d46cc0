"""Figures of the teaching page: the seating process, growth of K, arrival orders, one customer's choice."""

import numpy as np
import plotly.graph_objects as go

from .style import LAYOUT, PALETTE, colour


NEW_TABLE_GREY = "#9a9a9a"


def _table_names(n_tables):
    return [f"T{k + 1}" for k in range(n_tables)]


def _table_colour_scale(names):
    """Table k has the same colour in every chart (CRP and pCRP side by side); a new table is grey."""
    return {"domain": list(names) + ["new"], "range": [colour(k) for k in range(len(names))]
            + [NEW_TABLE_GREY]}


def table_sizes_chart(sizes, *, y_max, n_tables):
    """Vega-Lite: customers per table T1, T2, ... in opening order, on a y axis [0, y_max] shared by the
    charts it is compared with; n_tables fixes the colour of each table across charts. Animated pages
    use Vega-Lite: its data update in place instead of the whole chart being rebuilt."""
    names = _table_names(len(sizes))
    return {
        "height": "container", "width": "container",
        "datasets": {"tables": [{"table": n, "customers": int(c)} for n, c in zip(names, sizes)]},
        "data": {"name": "tables"}, "mark": {"type": "bar"},
        "encoding": {
            "x": {"field": "table", "type": "ordinal", "sort": None, "title": "table (in opening order)",
                  "axis": {"labelAngle": 0}},
            "y": {"field": "customers", "type": "quantitative", "title": "customers",
                  "scale": {"domain": [0, y_max]}},
            "color": {"field": "table", "type": "nominal", "scale": _table_colour_scale(_table_names(n_tables)),
                      "legend": None},
        },
    }


def next_customer_chart(probs, *, n_tables):
    """Vega-Lite: seating probabilities of the next customer, each table (its colour) then a new one (grey)."""
    names = _table_names(len(probs) - 1) + ["new"]
    return {
        "height": "container", "width": "container",
        "datasets": {"probs": [{"table": n, "probability": float(p)} for n, p in zip(names, probs)]},
        "data": {"name": "probs"}, "mark": {"type": "bar"},
        "encoding": {
            "x": {"field": "table", "type": "ordinal", "sort": None, "title": "where the next customer sits",
                  "axis": {"labelAngle": 0}},
            "y": {"field": "probability", "type": "quantitative", "scale": {"domain": [0, 1]}},
            "color": {"field": "table", "type": "nominal", "scale": _table_colour_scale(_table_names(n_tables)),
                      "legend": None},
        },
    }


def k_growth(curves, exact, title):
    """E[K_N] against N (log axis): curves {label: (N (n,), mean (n,), se (n,))} with +-2 SE bands,
    and the exact CRP curve (N, E[K_N]) dotted."""
    fig = go.Figure()
    for i, (label, (N, mean, se)) in enumerate(curves.items()):
        fig.add_scatter(x=N, y=mean + 2 * se, mode="lines", line=dict(width=0), showlegend=False, hoverinfo="skip")
        fig.add_scatter(x=N, y=mean - 2 * se, mode="lines", line=dict(width=0), fill="tonexty",
                        fillcolor="rgba(128,128,128,0.2)", showlegend=False, hoverinfo="skip")
        fig.add_scatter(x=N, y=mean, mode="lines", name=label, line=dict(color=colour(i)))
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
            fig.add_bar(x=v, y=c / c.sum(), name=label, marker_color=colour(i))
        else:
            fig.add_histogram(x=values, histnorm="probability", name=label, marker_color=colour(i),
                              opacity=0.6, xbins=dict(start=0, end=1.0001, size=0.05))
    fig.update_layout(title=title, xaxis_title=xaxis_title, yaxis_title="probability",
                      barmode="group" if integer else "overlay", **LAYOUT)
    return fig


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


def seating_choice_bars(choice, title):
    """Algorithm 1's inner loop for one point: prior, predictive (normalised) and posterior per option."""
    names = [f"cluster {k + 1}<br>n = {n}" for k, n in enumerate(choice.sizes[:-1])] + ["new"]
    fig = go.Figure()
    for i, (label, values) in enumerate((("prior weight", choice.prior),
                                         ("predictive likelihood (normalised)", choice.likelihood_share),
                                         ("posterior", choice.posterior))):
        fig.add_bar(x=names, y=values, name=label, marker_color=["#bbbbbb", "#7f7f7f", PALETTE[0]][i])
    fig.update_layout(title=title, yaxis_title="probability", yaxis_range=[0, 1], barmode="group",
                      legend=dict(orientation="h", y=1.0, x=1, xanchor="right", yanchor="bottom"),
                      **{**LAYOUT, "height": 360, "margin": dict(l=50, r=10, t=70, b=60)})
    fig.update_xaxes(tickangle=0)
    return fig

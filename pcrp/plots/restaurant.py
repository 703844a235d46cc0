"""Figures of the Rich get richer page: the restaurant drawn, E[K_N] for several priors, distributions of one
statistic for several priors, and one customer's choice.

The restaurant is Vega-Lite (an animation: only its data change between frames, so it updates in place); the
others are static Plotly figures. Plain data in, figures out: the seating itself is :mod:`pcrp.model.seating`.
"""

import numpy as np
import plotly.graph_objects as go

from ..basics.shares import fraction_text, percent_text
from .palette import (NEW_CLUSTER_GREY, NEW_TABLE_GREY, PALETTE, PRIOR_WEIGHT_GREY, TEXT_DARK, TEXT_MUTED, colour,
                      rgba)
from .style import LAYOUT, plain_text

TABLE_FIELD_TITLE = "table (in opening order)"
# (tables per row, cell pixels) of the Rich get richer page's restaurant grid by the number of restaurants side by
# side; its Present has the sidebar's width too and larger cells, so that a projector shows the tables and their
# probabilities from the back of a room.
GRID = {1: (9, 88), 2: (4, 84), 3: (3, 80)}
PRESENT_GRID = {1: (10, 112), 2: (5, 112), 3: (3, 112)}


def probability_text(p):
    """A seating probability as a short label: '41%', '99.6%' (never '100%' below 1:
    :func:`pcrp.basics.shares.percent_text`), '3.2%', '0.04%', '<0.01%' or '0' (impossible)."""
    p = float(p)
    if p <= 0:
        return "0"
    if p >= 0.1:
        return percent_text(p)
    if p >= 0.001:
        return f"{100 * p:.2g}%"
    return "<0.1%" if p >= 1e-4 else "<0.01%"


def restaurant_grid(n_tables, cols, max_rows):
    """Rows of the grid that holds ``n_tables`` tables and the empty table, ``cols`` per row, at most
    ``max_rows`` (tables beyond the grid are counted in a note instead of drawn)."""
    return int(min(max(1, -(-(int(n_tables) + 1) // int(cols))), max_rows))


def restaurant_chart(sizes, probs, *, max_customers, cols=6, rows=3, cell_px=64, title=None, note_row=False,
                     font_px=13, title_px=15):
    """Vega-Lite: the restaurant after the customers so far, tables as circles in opening order.

    sizes: (K,) customers per table in opening order. probs: (K + 1,) the next customer's probability of each
    table and, last, of a new table (drawn as an empty dashed table in the next free place). A circle's area is
    proportional to its customers, on a scale shared by every panel compared (``max_customers`` fills about
    three quarters of a cell's width); its count is written inside when the circle is large enough, the
    newcomer's probability under it. ``cols`` x ``rows`` cells of ``cell_px`` pixels: pass the same grid to
    every panel; tables that do not fit (beyond cols * rows - 1) are summed in a note at the bottom. ``title``:
    one line above the grid (cut with an ellipsis when wider than the chart), so panels side by side line up;
    ``note_row``: keep the note's line even without a note (when another panel has one). ``font_px``: the counts'
    and probabilities' type (the note's a pixel less), ``title_px`` the title's: a projector's larger type (the
    lesson's, Rich get richer's Present) passes its own.
    """
    sizes = np.asarray(sizes, dtype=int)
    probs = np.asarray(probs, dtype=float)
    if probs.shape != (sizes.size + 1,):
        raise ValueError(f"probs needs one entry per table and one for a new table ({sizes.size + 1}), "
                         f"got {probs.size}.")
    capacity = cols * rows - 1
    shown = min(sizes.size, capacity)
    max_diameter = 0.68 * cell_px
    max_area = max_diameter ** 2  # Vega's symbol size is the area of the circle's bounding square, in px^2
    scale_top = max(int(max_customers), 1)
    records = []
    for k in range(shown):
        diameter = max_diameter * np.sqrt(sizes[k] / scale_top)
        records.append({"table": f"T{k + 1}", "kind": "table", "customers": int(sizes[k]),
                        "x": k % cols + 0.5, "y": k // cols + 0.38, "label_y": k // cols + 0.98,
                        "count": str(int(sizes[k])) if diameter >= 18 else "",
                        "probability": float(probs[k]), "p_text": probability_text(probs[k])})
    slot = shown
    records.append({"table": "new", "kind": "new", "customers": 0,
                    "x": slot % cols + 0.5, "y": slot // cols + 0.38, "label_y": slot // cols + 0.98,
                    "count": "", "probability": float(probs[-1]), "p_text": "new: " + probability_text(probs[-1])})
    hidden = sizes.size - shown
    note = 18 if hidden or note_row else 0
    height = rows * cell_px + note
    layers = [
        {"mark": {"type": "point", "shape": "circle", "filled": True, "opacity": 0.9, "stroke": "white",
                  "strokeWidth": 1},
         "transform": [{"filter": "datum.kind == 'table'"}],
         "encoding": {
             "size": {"field": "customers", "type": "quantitative", "legend": None,
                      "scale": {"domain": [0, scale_top], "range": [0, max_area], "zero": True}},
             "color": {"field": "table", "type": "nominal", "legend": None,
                       "scale": {"domain": [f"T{k + 1}" for k in range(shown)] or ["T1"],
                                 "range": [colour(k) for k in range(max(shown, 1))]}},
             "tooltip": [{"field": "table", "title": TABLE_FIELD_TITLE},
                         {"field": "customers", "type": "quantitative", "title": "customers"},
                         {"field": "probability", "type": "quantitative", "format": ".3f",
                          "title": "next customer sits here"}]}},
        {"mark": {"type": "point", "shape": "circle", "filled": False, "size": (0.5 * cell_px) ** 2,
                  "color": NEW_TABLE_GREY, "strokeDash": [4, 3], "strokeWidth": 2},
         "transform": [{"filter": "datum.kind == 'new'"}],
         "encoding": {"tooltip": [{"field": "p_text", "title": "a new table"}]}},
        {"mark": {"type": "text", "color": "white", "fontWeight": "bold", "fontSize": font_px},
         "encoding": {"text": {"field": "count"}}},
        {"mark": {"type": "text", "fontSize": font_px, "baseline": "bottom", "color": TEXT_DARK},
         "encoding": {"y": {"field": "label_y", "type": "quantitative", "axis": None,
                            "scale": {"domain": [0, rows + note / cell_px], "reverse": True}},
                      "text": {"field": "p_text"}}},
    ]
    if hidden:
        layers.append({"data": {"values": [{"x": cols / 2, "y": rows + 0.1,
                                            "note": f"+ {hidden} more table{'s' if hidden != 1 else ''} "
                                                    f"({int(sizes[shown:].sum())} customers) not drawn"}]},
                       "mark": {"type": "text", "fontSize": font_px - 1, "color": TEXT_MUTED, "baseline": "top"},
                       "encoding": {"text": {"field": "note"}}})
    spec = {
        "width": cols * cell_px, "height": height,
        "datasets": {"tables": records}, "data": {"name": "tables"},
        "encoding": {
            "x": {"field": "x", "type": "quantitative", "axis": None, "scale": {"domain": [0, cols]}},
            "y": {"field": "y", "type": "quantitative", "axis": None,
                  "scale": {"domain": [0, rows + note / cell_px], "reverse": True}},
        },
        "layer": layers,
        # "pad": the plot area is exactly width x height and the title sits outside it, so a cell is cell_px
        # pixels and the circles (sized in pixels) fit their cells
        "autosize": {"type": "pad"},
        "config": {"view": {"stroke": None}},
    }
    if title is not None:
        spec["title"] = {"text": plain_text(title), "anchor": "start", "fontSize": title_px, "limit": cols * cell_px,
                         "offset": 8}
    return spec


def k_growth_priors(curves, title):
    """E[K_N] against N (log axis) for several priors. ``curves``: list of dicts with "label" (str), "N" (n,),
    "mean" (n,) and "se" (n,) of the simulated K_N (drawn solid with a +-2 SE band, one legend entry per prior),
    "exact" ((n,) or None: drawn dashed in the same colour) and "limit" (float or None: the value E[K_N] tends to,
    a dotted line labelled at the right)."""
    fig = go.Figure()
    for i, c in enumerate(curves):
        line_colour = colour(i)
        label = plain_text(c["label"])
        N, mean, se = np.asarray(c["N"]), np.asarray(c["mean"]), np.asarray(c["se"])
        fig.add_scatter(x=N, y=mean + 2 * se, mode="lines", line=dict(width=0), showlegend=False,
                        hoverinfo="skip", legendgroup=label)
        fig.add_scatter(x=N, y=mean - 2 * se, mode="lines", line=dict(width=0), fill="tonexty",
                        fillcolor=rgba(line_colour, 0.18), showlegend=False, hoverinfo="skip", legendgroup=label)
        fig.add_scatter(x=N, y=mean, mode="lines", name=label, line=dict(color=line_colour, width=2), legendgroup=label)
        if c.get("exact") is not None:
            fig.add_scatter(x=N, y=np.asarray(c["exact"]), mode="lines", name=f"{label}: exact", showlegend=False,
                            line=dict(color=line_colour, dash="dash", width=2), legendgroup=label)
        if c.get("limit") is not None:
            fig.add_scatter(x=[N[0], N[-1]], y=[c["limit"]] * 2, mode="lines", name=f"{label}: limit {c['limit']:g}",
                            line=dict(color=line_colour, dash="dot", width=1.5), legendgroup=label, showlegend=False)
            fig.add_annotation(x=1, xref="paper", xanchor="right", y=c["limit"], yanchor="bottom", showarrow=False,
                               text=f"{label}: limit {c['limit']:g}", font=dict(color=line_colour, size=11))
    ticks = [v for v in (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000)
             if curves and v <= max(np.asarray(c["N"])[-1] for c in curves)]
    fig.update_xaxes(tickvals=ticks, ticktext=[f"{v:,}" for v in ticks])
    fig.update_layout(title=dict(text=plain_text(title), y=0.97, yanchor="top"), xaxis_type="log",
                      xaxis_title="customers N", yaxis_title="tables K_N",
                      legend=dict(orientation="h", x=0, xanchor="left", y=1.0, yanchor="bottom"),
                      **{**LAYOUT, "height": 420, "margin": dict(l=55, r=10, t=70, b=45)})
    return fig


def distribution_lines(samples, title, xaxis_title, integer=True, bins=20, x_range=None, showlegend=True):
    """Distributions of one statistic for several priors {label: (runs,)} as lines with markers, one per prior
    (readable for five priors at once, unlike grouped bars): the probability of each value for integers, of
    each of ``bins`` equal bins over ``x_range`` (default: the values' range) otherwise. Prior i has colour PALETTE[i]
    as in :func:`k_growth_priors`; ``showlegend=False`` leaves the legend to the page (narrow panels stack it)."""
    fig = go.Figure()
    arrays = {k: np.asarray(v) for k, v in samples.items()}
    if not integer:
        lo, hi = x_range or (min(v.min() for v in arrays.values()), max(v.max() for v in arrays.values()))
        edges = np.linspace(lo, hi if hi > lo else lo + 1.0, bins + 1)
    for i, (label, values) in enumerate(arrays.items()):
        if integer:
            x, counts = np.unique(values, return_counts=True)
        else:
            counts, _ = np.histogram(values, bins=edges)
            x = (edges[:-1] + edges[1:]) / 2
        fig.add_scatter(x=x, y=counts / counts.sum(), mode="lines+markers", name=plain_text(label),
                        line=dict(color=colour(i), width=2, shape="linear"), marker=dict(size=7))
    fig.update_layout(title=dict(text=plain_text(title), y=0.97, yanchor="top"), xaxis_title=xaxis_title,
                      yaxis_title="probability",
                      showlegend=showlegend, legend=dict(orientation="h", x=0, xanchor="left", y=-0.25, yanchor="top"),
                      **{**LAYOUT, "height": 320, "margin": dict(l=50, r=10, t=45, b=40)})
    if integer:
        fig.update_xaxes(tickformat="d", rangemode="tozero")
    return fig


def choice_bars(choice, title):
    """Algorithm 1's inner loop for one point: prior weight, predictive (normalised) and posterior per option
    (clusters, largest first, then a new one), each bar labelled with its value (none under 0.005, where labels
    would overlap; never 1.00 below 1: :func:`pcrp.basics.shares.fraction_text`); the legend sits under the x axis,
    clear of the title."""
    names = [f"cluster {k + 1}<br>n = {n}" for k, n in enumerate(choice.sizes[:-1])] + ["new"]
    fig = go.Figure()
    for bar_colour, (label, values) in zip((PRIOR_WEIGHT_GREY, NEW_CLUSTER_GREY, PALETTE[0]),
                                       (("prior weight", choice.prior),
                                        ("predictive likelihood (normalised)", choice.likelihood_share),
                                        ("posterior", choice.posterior))):
        fig.add_bar(x=names, y=values, name=label, marker_color=bar_colour,
                    text=[fraction_text(v) if v >= 0.005 else "" for v in values], textposition="outside",
                    cliponaxis=False)
    fig.update_layout(title=dict(text=plain_text(title), y=0.97, yanchor="top"), yaxis_title="probability",
                      yaxis_range=[0, 1.12], barmode="group", uniformtext=dict(minsize=9, mode="hide"),
                      legend=dict(orientation="h", x=0, xanchor="left", y=-0.28, yanchor="top"),
                      **{**LAYOUT, "height": 380, "margin": dict(l=50, r=10, t=45, b=40)})
    fig.update_xaxes(tickangle=0)
    return fig

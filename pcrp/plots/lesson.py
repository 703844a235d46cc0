"""Figures of the guided lesson, sized for a 1280 x 800 projector and read from the back of a room (18 px text).

Plain data in, figures out: the numbers are :mod:`pcrp.teaching.lesson`'s. The restaurant is the Rich get richer page's
Vega-Lite drawing in larger type; E[K_N] is its Plotly figure; the rest are small Plotly figures of their own.
"""

import numpy as np
import plotly.graph_objects as go

from .restaurant import k_growth_priors, restaurant_chart, restaurant_grid
from .style import LAYOUT, colour, plain_text

FONT_PX = 18  # every label of a lesson figure
HEIGHT_PX = 430  # a figure and the step's sentence fit a 1280 x 800 screen below the step's buttons
TINY_GREY = "#b0b0b0"


def projector(fig, height=HEIGHT_PX, **layout):
    """``fig`` with the lesson's type size and height (titles a little larger)."""
    fig.update_layout(font=dict(size=FONT_PX), height=height, **layout)
    fig.update_annotations(font_size=FONT_PX)
    return fig


def restaurant(sizes, probs, title, cols=8, max_rows=3, cell_px=100):
    """The restaurant (:func:`pcrp.plots.restaurant.restaurant_chart`) with its counts, probabilities and title in
    the lesson's type size: as many rows of ``cols`` tables as it needs, at most ``max_rows``."""
    rows = restaurant_grid(len(sizes), cols, max_rows)
    spec = restaurant_chart(sizes, probs, max_customers=max(int(np.max(sizes)), 1), cols=cols, rows=rows,
                            cell_px=cell_px, title=title)
    for layer in spec["layer"]:
        if layer["mark"].get("type") == "text":
            layer["mark"]["fontSize"] = FONT_PX
    spec["title"]["fontSize"] = FONT_PX + 2
    return spec


def k_growth(labels, N, means, ses, exact, title):
    """E[K_N] against N for the CRP and the pCRP (means and ses: (n,) each), the CRP's exact curve dashed."""
    curves = [{"label": label, "N": N, "mean": m, "se": s, "exact": exact if i == 0 else None, "limit": None}
              for i, (label, m, s) in enumerate(zip(labels, means, ses))]
    return projector(k_growth_priors(curves, title))


def partitions(X, columns, panels):
    """Old Faithful's points coloured by cluster, one panel per (title, colours (N,) colour indices, -1 = tiny)
    of ``panels``, side by side with shared axes."""
    from plotly.subplots import make_subplots

    X = np.asarray(X)
    fig = make_subplots(rows=1, cols=len(panels), subplot_titles=[plain_text(t) for t, _ in panels],
                        shared_xaxes=True, shared_yaxes=True, horizontal_spacing=0.04)
    for i, (_, colours) in enumerate(panels):
        colours = np.asarray(colours)
        fig.add_scatter(x=X[:, 0], y=X[:, 1], mode="markers", row=1, col=i + 1, hoverinfo="skip",
                        marker=dict(size=10, line=dict(width=0.5, color="white"),
                                    color=[TINY_GREY if c < 0 else colour(c) for c in colours]))
        fig.update_xaxes(title_text=plain_text(columns[0]), row=1, col=i + 1)
    fig.update_yaxes(title_text=plain_text(columns[1]), row=1, col=1)
    return projector(fig, showlegend=False, template=LAYOUT["template"], margin=dict(l=70, r=10, t=50, b=60))


def kept_over_r(r_values, kept, r_star, title):
    """Clusters the pCRP prefers on the exact merge path against r: one step line per N (``kept``: {N: (R,)
    clusters at ``r_values`` (R,)}), each N's threshold ``r_star`` {N: r} a dashed vertical line."""
    fig = go.Figure()
    for i, (n, k) in enumerate(kept.items()):
        fig.add_scatter(x=r_values, y=k, mode="lines", name=f"N = {n:,}", line=dict(color=colour(i), width=4,
                                                                                   shape="hv"))
        r = r_star[n]
        if np.isfinite(r):
            fig.add_vline(x=r, line=dict(color=colour(i), dash="dash", width=2))
            fig.add_annotation(x=r, y=1.0, yref="paper", yanchor="bottom", showarrow=False,
                               xanchor="right" if i == 0 else "left", text=f"r* = {r:.2f}",
                               font=dict(color=colour(i)))
    fig.update_xaxes(title_text="power r")
    fig.update_yaxes(title_text="clusters kept", dtick=1, rangemode="tozero")
    return projector(fig, title=dict(text=plain_text(title), y=0.98, yanchor="top"), template=LAYOUT["template"],
                     legend=dict(orientation="h", x=1, xanchor="right", y=1.0, yanchor="bottom"),
                     margin=dict(l=70, r=20, t=90, b=60))


def cv_loss(r_grid, loss, se, proposed, title):
    """The held-out loss of cross validation against r (mean +- 1 SE), the proposed r a dashed red line."""
    r_grid, loss, se = (np.asarray(v, dtype=float) for v in (r_grid, loss, se))
    se = np.nan_to_num(se)
    fig = go.Figure()
    fig.add_scatter(x=np.r_[r_grid, r_grid[::-1]], y=np.r_[loss + se, (loss - se)[::-1]], fill="toself",
                    fillcolor="rgba(31,119,180,0.2)", line=dict(width=0), hoverinfo="skip", showlegend=False)
    fig.add_scatter(x=r_grid, y=loss, mode="lines+markers", line=dict(color=colour(0), width=3),
                    marker=dict(size=9), showlegend=False)
    fig.add_vline(x=proposed, line=dict(color=colour(3), dash="dash", width=3))
    fig.add_annotation(x=proposed, y=1.0, yref="paper", yanchor="bottom", xanchor="right", showarrow=False,
                       text=f"proposed r = {proposed:g}", font=dict(color=colour(3)))
    fig.update_xaxes(title_text="power r")
    fig.update_yaxes(title_text="held-out loss (lower is better)")
    return projector(fig, title=dict(text=plain_text(title), y=0.98, yanchor="top"), template=LAYOUT["template"],
                     margin=dict(l=70, r=20, t=80, b=60))


OUTCOMES = (("nearer the truth", "#2ca02c"), ("as near", "#b0b0b0"), ("farther", "#d62728"))


def compare_counts(against, nearer, as_near, farther, title):
    """One horizontal bar per method compared with the pCRP: on how many data sets the pCRP's mean K was nearer the
    true number of clusters, as near, or farther (green, grey, red)."""
    fig = go.Figure()
    labels = [plain_text(f"vs {m}") for m in against]
    for (name, col), values in zip(OUTCOMES, (nearer, as_near, farther)):
        fig.add_bar(y=labels, x=list(values), name=f"pCRP's K {name}", orientation="h", marker_color=col,
                    text=[str(v) if v else "" for v in values], textposition="inside", insidetextanchor="middle")
    fig.update_yaxes(autorange="reversed")
    fig.update_xaxes(title_text="labelled data sets")
    return projector(fig, height=HEIGHT_PX - 30, barmode="stack", title=dict(text=plain_text(title), y=0.98, yanchor="top"),
                     template=LAYOUT["template"],
                     legend=dict(orientation="h", x=0, xanchor="left", y=1.0, yanchor="bottom", traceorder="normal"),
                     margin=dict(l=170, r=20, t=100, b=60))

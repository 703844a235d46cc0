"""Figures of the guided lesson, sized for a 1280 x 800 projector and read from the back of a room (18 px text).

Plain data in, figures out: the numbers are :mod:`pcrp.teaching.lesson`'s. The restaurant is the Rich get richer page's
Vega-Lite drawing in larger type; E[K_N] is its Plotly figure; the rest are small Plotly figures of their own.
"""

import numpy as np
import plotly.graph_objects as go

from ..basics.shares import percent_text
from .restaurant import k_growth_priors, restaurant_chart, restaurant_grid
from .style import LAYOUT, colour, plain_text

FONT_PX = 18  # every label of a lesson figure
HEIGHT_PX = 430  # a figure and the step's sentence fit a 1280 x 800 screen below the step's buttons
TINY_GREY = "#b0b0b0"


def projector(fig, height=HEIGHT_PX, **layout):
    """``fig`` with the lesson's type size and height (None: its own); annotations without a size of their own (the
    panels' titles) at the lesson's size too. Rich get richer's Present sets its figures in this type as well."""
    fig.update_layout(font=dict(size=FONT_PX), **({} if height is None else {"height": height}), **layout)
    fig.for_each_annotation(lambda a: a.update(font_size=FONT_PX) if a.font.size is None else None)
    return fig


def restaurant(sizes, probs, title, cols=8, max_rows=3, cell_px=100):
    """The restaurant (:func:`pcrp.plots.restaurant.restaurant_chart`) with its counts, probabilities and title in
    the lesson's type size: as many rows of ``cols`` tables as it needs, at most ``max_rows``."""
    rows = restaurant_grid(len(sizes), cols, max_rows)
    return restaurant_chart(sizes, probs, max_customers=max(int(np.max(sizes)), 1), cols=cols, rows=rows,
                            cell_px=cell_px, title=title, font_px=FONT_PX, title_px=FONT_PX + 2)


def k_growth(labels, N, means, ses, exact, title):
    """E[K_N] against N for the CRP and the pCRP (means and ses: (n,) each), the CRP's exact curve dashed."""
    curves = [{"label": label, "N": N, "mean": m, "se": s, "exact": exact if i == 0 else None, "limit": None}
              for i, (label, m, s) in enumerate(zip(labels, means, ses))]
    return projector(k_growth_priors(curves, title))


def _scatter(fig, X, colours, row, col):
    colours = np.asarray(colours)
    fig.add_scatter(x=X[:, 0], y=X[:, 1], mode="markers", row=row, col=col, hoverinfo="skip", showlegend=False,
                    marker=dict(size=8, line=dict(width=0.5, color="white"),
                                color=[TINY_GREY if c < 0 else colour(c) for c in colours]))


def partitions(X, columns, panels):
    """Old Faithful's points coloured by cluster, one panel per (title, colours (N,) colour indices, -1 = tiny)
    of ``panels``, side by side with shared axes."""
    from plotly.subplots import make_subplots

    X = np.asarray(X)
    fig = make_subplots(rows=1, cols=len(panels), subplot_titles=[plain_text(t) for t, _ in panels],
                        shared_xaxes=True, shared_yaxes=True, horizontal_spacing=0.04)
    fig.update_annotations(font_size=FONT_PX)
    for i, (_, colours) in enumerate(panels):
        _scatter(fig, X, colours, 1, i + 1)
        fig.update_xaxes(title_text=plain_text(columns[0]), row=1, col=i + 1)
    fig.update_yaxes(title_text=plain_text(columns[1]), row=1, col=1)
    return projector(fig, showlegend=False, template=LAYOUT["template"], margin=dict(l=70, r=10, t=50, b=60))


def share_text(percent):
    """A share of draws as written above its bar, in the axis's unit (% of draws) without the sign, narrow enough
    for a grouped bar: :func:`pcrp.basics.shares.percent_text`'s rule (never 100 for less, never 0 for more: '39',
    '99.6', '0.3'), or '' (none)."""
    return "" if percent <= 0 else percent_text(percent / 100).removesuffix("%")


BARS_TOP = 100.0  # the bars' axis: % of draws
MEAN_ROW = 9.0  # % of the axis between the bars' top and each prior's mean K row above it, one row per prior


def mean_rows(n):
    """The heights (on the % axis) of ``n`` priors' mean K markers: rows above the tallest bar's label, so that no
    mark crosses a share written on a bar."""
    return [BARS_TOP + MEAN_ROW * (i + 2) for i in range(n)]


def posterior_and_partitions(X, columns, bars, panels, true_k, height=HEIGHT_PX):
    """Left: the posterior of K of one or more priors (``bars``: [(legend label, K values (M,), shares (M,), mean
    K, half width of its interval)]), grouped bars with each share written on its bar, K_true's bars outlined and
    each mean K a diamond with its interval in a row of its own above the bars (:func:`mean_rows`: never across a
    share's label; the legend label says the mean).
    Right: the points coloured by cluster, one panel per (title, colours (N,), -1 = tiny) of ``panels``, sharing
    their axes."""
    from plotly.subplots import make_subplots

    X = np.asarray(X)
    n = len(panels)
    fig = make_subplots(rows=1, cols=1 + n, column_widths=[0.38] + [0.62 / n] * n, horizontal_spacing=0.06,
                        subplot_titles=["posterior of K"] + [plain_text(t) for t, _ in panels])
    fig.update_annotations(font_size=FONT_PX - 1)  # the panels' titles (three side by side)
    ks = sorted({int(k) for _, values, _, _, _ in bars for k in values})
    rows = mean_rows(len(bars))
    for i, (label, values, shares, mean_k, half) in enumerate(bars):
        share = dict(zip((int(k) for k in values), (float(p) for p in shares)))
        y = [100 * share.get(k, 0.0) for k in ks]
        fig.add_bar(x=ks, y=y, name=plain_text(label), marker_color=colour(i), row=1, col=1,
                    marker_line=dict(color=["black" if k == true_k else colour(i) for k in ks],
                                     width=[3 if k == true_k else 0 for k in ks]),
                    text=[share_text(v) for v in y], textposition="outside", cliponaxis=False,
                    textfont=dict(size=FONT_PX - 3, color=colour(i)))
        fig.add_scatter(x=[mean_k], y=[rows[i]], mode="markers", row=1, col=1, showlegend=False, hoverinfo="skip",
                        marker=dict(symbol="diamond", size=14, color=colour(i), line=dict(color="white", width=1)),
                        error_x=dict(type="constant", value=float(half), color=colour(i), thickness=2, width=6))
    fig.update_xaxes(title_text=f"K (outlined: K_true = {true_k})", dtick=1, row=1, col=1)
    ticks = [0, 25, 50, 75, BARS_TOP]
    fig.update_yaxes(title_text="% of draws", range=[0, rows[-1] + MEAN_ROW / 2], row=1, col=1,
                     tickvals=ticks + [float(np.mean(rows))], ticktext=[f"{t:g}" for t in ticks] + ["mean K"])
    for i, (_, colours) in enumerate(panels):
        _scatter(fig, X, colours, 1, i + 2)
        fig.update_xaxes(title_text=plain_text(columns[0]), row=1, col=i + 2, matches="x2")
        fig.update_yaxes(row=1, col=i + 2, matches="y2", showticklabels=i == 0)
    fig.update_yaxes(title_text=plain_text(columns[1]), row=1, col=2, title_standoff=4)
    return projector(fig, height=height, barmode="group", bargap=0.12, bargroupgap=0.04, template=LAYOUT["template"],
                     uniformtext=dict(minsize=FONT_PX - 4, mode="show"),
                     legend=dict(orientation="v", x=0, xanchor="left", y=-0.2, yanchor="top",
                                 font=dict(size=FONT_PX - 1)),
                     showlegend=True, margin=dict(l=60, r=30, t=30, b=10))


def merge_and_posterior(r_grid, mean_k, r_axis, kept, r_star, just_above, merge_r, line, true_k, shipped, title,
                        height=HEIGHT_PX):
    """Against r, per N (one colour each): the clusters the merge path's single partition prefers (a thin dotted
    step line, ``kept`` {N: (R,)} at ``r_axis``), its r* (dashed), and the posterior's mean K (thick, ``mean_k``
    {N: (G,)} at ``r_grid``), circled at the r just above r* and at the r where it falls below ``line``; those
    numbers in a box, the line itself dotted, and the shipped r (``shipped``) grey."""
    fig = go.Figure()
    top = max(max(np.max(k) for k in kept.values()), max(np.max(m) for m in mean_k.values()))
    rows = []
    for i, n in enumerate(kept):
        c = colour(i)
        fig.add_scatter(x=r_axis, y=kept[n], mode="lines", name=f"one partition (merge path), N = {n:,}",
                        line=dict(color=c, width=2, dash="dot", shape="hv"))
        fig.add_scatter(x=r_grid, y=mean_k[n], mode="lines+markers", name=f"posterior mean K, N = {n:,}",
                        line=dict(color=c, width=4), marker=dict(size=7))
        if np.isfinite(r_star[n]):
            fig.add_vline(x=r_star[n], line=dict(color=c, dash="dash", width=2))
            fig.add_annotation(x=r_star[n], y=1.0, yref="paper", yanchor="bottom", showarrow=False,
                               xanchor="right" if i == 0 else "left", text=f"r* = {r_star[n]:.2f}",
                               font=dict(color=c))
        marked = [r for r in (just_above[n], merge_r[n]) if np.isfinite(r)]
        fig.add_scatter(x=marked, y=[_at(r_grid, mean_k[n], r) for r in marked], mode="markers", showlegend=False,
                        hoverinfo="skip", marker=dict(size=18, color="rgba(0,0,0,0)", line=dict(color=c, width=3)))
        row = f"N = {n:,}: r* {r_star[n]:.2f}"
        if np.isfinite(just_above[n]):
            row += f"; mean K {_at(r_grid, mean_k[n], just_above[n]):.1f} at r = {just_above[n]:g}"
        row += (f"; below {line:g} from r = {merge_r[n]:g}" if np.isfinite(merge_r[n]) else
                f"; never below {line:g}")
        rows.append(f"<span style='color:{c}'>{plain_text(row)}</span>")
    fig.add_annotation(x=0.99, xref="paper", y=0.97, yref="paper", xanchor="right", yanchor="top", showarrow=False,
                       align="left", text="<br>".join(rows), bgcolor="rgba(255,255,255,0.9)", bordercolor="#ccc",
                       borderwidth=1, font=dict(size=FONT_PX - 2))
    fig.add_hline(y=line, line=dict(color="black", dash="dot", width=2))
    fig.add_annotation(x=1.0, xref="paper", y=line, yanchor="top", xanchor="right", showarrow=False,
                       text=f"{line:g}: the {true_k} true clusters less {true_k - line:g}", font=dict(size=FONT_PX - 3))
    if np.isfinite(shipped):
        fig.add_vline(x=shipped, line=dict(color=TINY_GREY, width=6))
        fig.add_annotation(x=shipped, y=0.04, yref="paper", yanchor="bottom", xanchor="left", showarrow=False,
                           text=f" Sim 1's cross-validated r = {shipped:g}", font=dict(color="#555", size=FONT_PX - 3))
    fig.update_xaxes(title_text="power r")
    fig.update_yaxes(title_text="clusters", dtick=1, range=[0, top + 0.5])
    return projector(fig, height=height, title=dict(text=plain_text(title), y=0.98, yanchor="top"),
                     template=LAYOUT["template"],
                     legend=dict(orientation="h", x=0, xanchor="left", y=-0.3, yanchor="top",
                                 font=dict(size=FONT_PX - 3)),
                     margin=dict(l=70, r=20, t=70, b=10))


def _at(x, y, value):
    return float(np.asarray(y)[int(np.argmin(np.abs(np.asarray(x) - value)))])


def cv_curves(r_grid, loss, loss_se, log_pred, log_pred_se, proposed, first, jump, height=HEIGHT_PX):
    """Cross validation against r, side by side: the held-out loss of eq. (5) and the held-out log predictive
    density per point (mean +- 1 SE each), the proposed r a dashed red line, and the values at the grid's
    ``first`` r, at ``proposed`` and (loss only) at ``jump`` (None: none) written beside their points."""
    from plotly.subplots import make_subplots

    r_grid = np.asarray(r_grid, dtype=float)
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.12,
                        subplot_titles=("held-out loss, eq. (5): where does it jump?",
                                        "held-out log predictive per point"))
    fig.update_annotations(font_size=FONT_PX - 1)  # the panels' titles
    panels = ((loss, loss_se, 2, (first, proposed) + ((jump,) if jump is not None else ())),
              (log_pred, log_pred_se, 3, (first, proposed)))
    for col, (values, se, digits, marked) in enumerate(panels, start=1):
        values = np.asarray(values, dtype=float)
        se = np.nan_to_num(np.asarray(se, dtype=float))
        fig.add_scatter(x=np.r_[r_grid, r_grid[::-1]], y=np.r_[values + se, (values - se)[::-1]], fill="toself",
                        fillcolor="rgba(31,119,180,0.2)", line=dict(width=0), hoverinfo="skip", showlegend=False,
                        row=1, col=col)
        fig.add_scatter(x=r_grid, y=values, mode="lines+markers", line=dict(color=colour(0), width=3),
                        marker=dict(size=7), showlegend=False, row=1, col=col)
        for j, r in enumerate(marked):
            fig.add_annotation(x=r, y=_at(r_grid, values, r), text=f"{_at(r_grid, values, r):.{digits}f}",
                               showarrow=True, arrowhead=0, ax=[25, -45, 45][j] if col == 1 else [20, -40][j],
                               ay=[-40, -40, 0][j] if col == 1 else [25, 35][j], row=1, col=col,
                               font=dict(size=FONT_PX - 2), bgcolor="rgba(255,255,255,0.85)")
        fig.add_vline(x=proposed, line=dict(color=colour(3), dash="dash", width=3), row=1, col=col)
        fig.update_xaxes(title_text="power r", row=1, col=col)
    fig.add_annotation(x=proposed, y=1.0, xref="x", yref="y domain", yanchor="top", xanchor="right", showarrow=False,
                       text=f"proposed r = {proposed:g}", font=dict(color=colour(3)))
    return projector(fig, height=height, template=LAYOUT["template"], margin=dict(l=60, r=20, t=40, b=60))


OUTCOMES = (("nearer the truth", "#2ca02c"), ("as near", "#b0b0b0"), ("farther", "#d62728"))
NMI_OUTCOMES = ("higher", "within {margin:g}", "lower")


def _coloured_key(names):
    return " · ".join(f"<span style='color:{'#888' if c == '#b0b0b0' else c}'>{plain_text(name)}</span>"
                      for name, (_, c) in zip(names, OUTCOMES))


def compare_counts(against, k_counts, nmi_counts, nmi_margin, data_sets, height=HEIGHT_PX - 30):
    """Per method compared with the pCRP, on how many of ``data_sets`` labelled data sets the pCRP's mean K was
    nearer the true number of clusters, as near or farther (``k_counts``: three tuples), and its NMI higher, within
    ``nmi_margin`` or lower (``nmi_counts``); green, grey, red, side by side, each count on its bar and the colours
    named under each panel."""
    from plotly.subplots import make_subplots

    labels = [plain_text(f"vs {m}") for m in against]
    panels = [("pCRP's mean K", k_counts, [name for name, _ in OUTCOMES])]
    if nmi_counts and len(nmi_counts[0]):
        panels.append(("pCRP's NMI", nmi_counts, [w.format(margin=nmi_margin) for w in NMI_OUTCOMES]))
    fig = make_subplots(rows=1, cols=len(panels), shared_yaxes=True, horizontal_spacing=0.04,
                        subplot_titles=[f"{t}, {data_sets} labelled data sets" for t, _, _ in panels])
    fig.update_annotations(font_size=FONT_PX)  # the panels' titles
    for col, (_, counts, names) in enumerate(panels, start=1):
        for name, (_, c), values in zip(names, OUTCOMES, counts):
            fig.add_bar(y=labels, x=list(values), name=name, orientation="h", marker_color=c, row=1, col=col,
                        text=[str(v) if v else "" for v in values], textposition="inside",
                        insidetextanchor="middle", showlegend=False, textfont=dict(size=FONT_PX))
        fig.update_xaxes(range=[0, data_sets], title_text=_coloured_key(names), row=1, col=col)
    fig.update_yaxes(autorange="reversed")
    return projector(fig, height=height, barmode="stack", template=LAYOUT["template"],
                     uniformtext=dict(minsize=FONT_PX - 4, mode="show"),
                     margin=dict(l=150, r=20, t=40, b=30))

"""Figures of the posterior over partitions: averaged density, similarity matrix, point estimate, diagnostics.

Inputs are summaries computed by the library (:func:`pcrp.analyses.density.density_panel`,
:func:`pcrp.summaries.partition.similarity_matrix`, :func:`pcrp.summaries.partition.point_estimate`,
:meth:`pcrp.runs.chains.ChainSet.diagnostics`); these functions only draw.
"""

import numpy as np
import plotly.graph_objects as go

from ..summaries.partition import similarity_order
from .clusters import cluster_scatter
from .palette import BLACK, DATA_GREY, HEADER_FILL, RED, TINY_GREY, WARNING_FILL, colour, rgba
from .style import LAYOUT, cluster_colours, plain_text


def point_colours(colour_index):
    """Colours of points (or clusters) from colour indices (n,): palette colour i (cycled), TINY_GREY for a negative
    index (a tiny cluster), as the Explorer's live charts draw them (pcrp.app.live_view.matched_colours)."""
    return [TINY_GREY if int(i) < 0 else colour(int(i)) for i in np.asarray(colour_index).reshape(-1)]


def recolour_points(fig, colour_index, trace=0):
    """Give the points of ``fig``'s trace ``trace`` (a cluster_scatter) the colours of ``colour_index`` (N,): the
    colours a page shows these clusters in elsewhere. Returns ``fig``."""
    fig.data[trace].marker.color = point_colours(colour_index)
    return fig


def _component_colours(labels, n_components, colour_index=None):
    """Colour of each point-estimate component (in np.unique(labels) order): that of its cluster in
    ``colour_index`` (N,) when given, else cluster_scatter's (largest blue)."""
    ids, first = np.unique(labels, return_index=True)
    if colour_index is not None:
        return point_colours(np.asarray(colour_index)[first[:n_components]])
    _, rank = cluster_colours(labels)
    return [colour(rank[k]) for k in ids[:n_components]]


def posterior_density(panel, labels, columns, title, colour_index=None):
    """The posterior mean density of a :class:`pcrp.analyses.density.DensityPanel` with the point estimate's
    weighted components dashed: 1-D with the pointwise credible band and a histogram of the data;
    2-D as contours over the points coloured by the point estimate ``labels`` (N,). colour_index: (N,) the
    clusters' colours as a page shows them elsewhere (pcrp.app.live_view.matched_colours); default: by size."""
    colours = _component_colours(labels, panel.components.shape[0], colour_index)
    names = [plain_text(columns[a]) for a in panel.axes] if columns else [f"x{a + 1}" for a in panel.axes]
    dens = panel.density
    if panel.dim == 1:
        x = panel.X[:, 0]
        fig = go.Figure()
        fig.add_histogram(x=x, histnorm="probability density", nbinsx=40, marker_color=DATA_GREY, opacity=0.6,
                          name="data")
        if dens.lower is not None:
            fig.add_scatter(x=panel.grid, y=dens.upper, mode="lines", line=dict(width=0), showlegend=False,
                            hoverinfo="skip")
            fig.add_scatter(x=panel.grid, y=dens.lower, mode="lines", line=dict(width=0), fill="tonexty",
                            fillcolor=rgba(BLACK, 0.15), name=f"{dens.level:.0%} band")
        for k, comp in enumerate(panel.components):
            fig.add_scatter(x=panel.grid, y=comp, mode="lines", line=dict(dash="dash", color=colours[k]),
                            name=f"cluster {k + 1}")
        fig.add_scatter(x=panel.grid, y=dens.mean, mode="lines", line=dict(color="black", width=2),
                        name=f"posterior mean ({dens.n_draws} draws)")
        fig.update_layout(title=title, xaxis_title=names[0], yaxis_title="density", showlegend=False, **LAYOUT)
        return fig
    fig = cluster_scatter(panel.X, labels, names, title)
    if colour_index is not None:
        recolour_points(fig, colour_index)
    fig.add_contour(x=panel.gx, y=panel.gy, z=dens.mean, contours_coloring="lines", showscale=False, ncontours=12,
                    line=dict(width=1), colorscale="Greys", name="posterior mean density")
    for k, comp in enumerate(panel.components):
        peak = float(comp.max())
        if peak <= 0:
            continue
        level = 0.3 * peak
        fig.add_contour(x=panel.gx, y=panel.gy, z=comp, showscale=False, contours_coloring="lines",
                        contours=dict(start=level, end=level, size=1.0),
                        colorscale=[[0, colours[k]], [1, colours[k]]], line=dict(dash="dash", width=2),
                        name=f"cluster {k + 1}")
    return fig


def similarity_heatmap(psm, labels, title, max_points=600):
    """Co-clustering probabilities as a heatmap, points ordered by the point estimate ``labels`` (clusters
    largest first, each cluster's core first), with the clusters' borders marked. Above ``max_points``
    points, evenly spaced points of that order are shown."""
    order = similarity_order(psm, labels)
    if order.size > max_points:
        order = order[np.linspace(0, order.size - 1, max_points).round().astype(int)]
    psm = np.asarray(psm)[np.ix_(order, order)]
    fig = go.Figure(go.Heatmap(z=psm, zmin=0, zmax=1, colorscale="Blues",
                               colorbar=dict(title="P(same cluster)")))
    sorted_labels = np.asarray(labels)[order]
    borders = np.flatnonzero(sorted_labels[1:] != sorted_labels[:-1]) + 0.5
    edge = (-0.5, order.size - 0.5)  # the borders run across the matrix only, not the whole plot area
    line = dict(color=RED, width=1)
    for b in borders:
        fig.add_shape(type="line", x0=edge[0], x1=edge[1], y0=b, y1=b, line=line, xref="x", yref="y")
        fig.add_shape(type="line", x0=b, x1=b, y0=edge[0], y1=edge[1], line=line, xref="x", yref="y")
    # square, and the axes as wide as the matrix (constrain="domain" shrinks the axis, not the range)
    fig.update_xaxes(showticklabels=False, title_text="points (ordered by the point estimate)", range=list(edge),
                     constrain="domain", showgrid=False, zeroline=False)
    fig.update_yaxes(showticklabels=False, range=[edge[1], edge[0]], scaleanchor="x", scaleratio=1,
                     constrain="domain", showgrid=False, zeroline=False)
    fig.update_layout(title=title, **{**LAYOUT, "height": 420})
    return fig


def point_estimate_scatter(X, labels, confidence, columns, title, colour_index=None):
    """The point-estimate partition (cluster_scatter) with each point's opacity its ``confidence`` (N,):
    the mean co-clustering probability with its cluster (:func:`pcrp.summaries.partition.cluster_confidence`).
    colour_index: (N,) as in :func:`posterior_density`."""
    fig = cluster_scatter(X, labels, columns, title)
    if colour_index is not None:
        recolour_points(fig, colour_index)
    opacity = np.clip(np.asarray(confidence, dtype=float), 0.15, 1.0)
    fig.update_traces(marker_opacity=opacity, hovertext=[f"P(with its cluster) = {c:.2f}" for c in confidence])
    return fig





def _undefined(value):
    return value is None or not np.isfinite(float(value))


def mean_with_mcse(mean, mcse):
    """"3.593 ± 0.051": the MCSE to 2 significant digits and the mean to the same decimal place (the digits
    the Monte Carlo error leaves meaningful); the mean alone (4 significant digits) when the MCSE is undefined
    or zero."""
    if _undefined(mean):
        return "—"
    mean = float(mean)
    if _undefined(mcse) or float(mcse) <= 0:
        return f"{mean:.4g}"
    mcse = float(mcse)
    decimals = max(0, 1 - int(np.floor(np.log10(mcse))))
    return f"{mean:,.{decimals}f} ± {mcse:.{decimals}f}"


def _fmt_ess(value):
    return "—" if _undefined(value) else f"{float(value):,.0f}"


def _fmt_rhat(value):
    """R-hat to 3 decimals; "inf" for chains constant at different values (their R-hat is infinite)."""
    if value is not None and np.isinf(float(value)):
        return "inf"
    return "—" if _undefined(value) else f"{float(value):.3f}"


QUANTITY_NAMES = {"K": "K", "log_joint": "log joint"}
ROW_PX, HEADER_PX = 26, 30  # one line per cell (the columns are wide enough for their texts)


def diagnostics_table(diagnostics, title="MCMC diagnostics", threshold=1.01, names=None):
    """A table of R-hat, bulk/tail ESS and mean (MCSE) per quantity, pooled and per chain; R-hat cells
    above ``threshold`` in red. ``diagnostics``: :meth:`pcrp.runs.chains.ChainSet.diagnostics`; names: {quantity:
    its name in the table} over QUANTITY_NAMES (a log joint known only up to a constant says so)."""
    names = {**QUANTITY_NAMES, **(names or {})}
    rows = []
    for name, diag in diagnostics.items():
        if not isinstance(diag, dict):
            continue
        for label, d in [("all chains", diag)] + [(f"chain {c + 1}", s) for c, s in enumerate(diag["per_chain"])]:
            rows.append([names.get(name, name), label, mean_with_mcse(d["mean"], d["mcse"]),
                         _fmt_rhat(d["rhat"]), _fmt_ess(d["ess_bulk"]), _fmt_ess(d["ess_tail"]), d["rhat"]])
    columns = list(zip(*rows)) if rows else [[]] * 7
    white = ["white"] * len(columns[6])
    red = [WARNING_FILL if r is not None and not np.isnan(float(r)) and float(r) > threshold else "white"
           for r in columns[6]]
    fig = go.Figure(go.Table(
        columnwidth=[0.8, 0.9, 1.7, 0.7, 0.8, 0.8],
        header=dict(values=["quantity", "chains", "mean ± MCSE", "R-hat", "ESS bulk", "ESS tail"],
                    fill_color=HEADER_FILL, align="left", height=HEADER_PX),
        cells=dict(values=columns[:6], align="left", fill_color=[white, white, white, red, white, white],
                   height=ROW_PX),
    ))
    top = 40  # the title
    fig.update_layout(title=title, **{**LAYOUT, "margin": dict(l=10, r=10, t=top, b=4),
                                      "height": top + HEADER_PX + ROW_PX * max(len(rows), 1) + 12})
    return fig

"""Plotly figure builders: plain data in, ``go.Figure`` out. No Streamlit here.

Side-by-side panels share axis ranges: pass the same ``y_range`` / ``x_range`` to both.
"""

import numpy as np
import plotly.graph_objects as go

from .summary import k_posterior, posterior_density_1d, posterior_density_2d

PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
           "#bcbd22", "#17becf"]
LAYOUT = dict(template="plotly_white", margin=dict(l=50, r=10, t=40, b=40), height=300)


def cluster_colours(labels):
    """One colour per point, clusters ordered by size so the largest is always blue."""
    labels = np.asarray(labels)
    ids, counts = np.unique(labels, return_counts=True)
    rank = {k: r for r, k in enumerate(ids[np.argsort(-counts, kind="stable")])}
    return [PALETTE[rank[k] % len(PALETTE)] for k in labels], rank


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
    fig = go.Figure(go.Bar(x=values, y=probs, marker_color="#1f77b4"))
    fig.update_layout(title=title, xaxis_title="clusters K", yaxis_title="posterior probability", **LAYOUT)
    fig.update_xaxes(dtick=1, range=x_range)
    if y_max:
        fig.update_yaxes(range=[0, y_max])
    return fig


def cluster_scatter(X, labels, columns, title, jitter_seed=0):
    """Points coloured by cluster. 1-D: jittered strip; 2-D+: the first two columns."""
    X = np.asarray(X)
    colours, _ = cluster_colours(labels)
    if X.shape[1] == 1:
        y = np.random.default_rng(jitter_seed).uniform(-1, 1, X.shape[0])
        fig = go.Figure(go.Scatter(x=X[:, 0], y=y, mode="markers", marker=dict(color=colours, size=5)))
        fig.update_yaxes(visible=False)
        fig.update_layout(xaxis_title=columns[0])
    else:
        fig = go.Figure(go.Scattergl(x=X[:, 0], y=X[:, 1], mode="markers",
                                     marker=dict(color=colours, size=5)))
        fig.update_layout(xaxis_title=columns[0], yaxis_title=columns[1])
    fig.update_layout(title=title, showlegend=False, **LAYOUT)
    return fig


def cluster_sizes(labels, title, y_max=None):
    """Bar chart of cluster sizes, largest first (paper Fig. 8b)."""
    _, counts = np.unique(labels, return_counts=True)
    counts = np.sort(counts)[::-1]
    fig = go.Figure(go.Bar(x=np.arange(1, counts.size + 1), y=counts,
                           marker_color=[PALETTE[i % len(PALETTE)] for i in range(counts.size)]))
    fig.update_layout(title=title, xaxis_title="cluster (by size)", yaxis_title="points", **LAYOUT)
    fig.update_xaxes(dtick=1)
    if y_max:
        fig.update_yaxes(range=[0, y_max])
    return fig


def density_1d(X, labels, niw, title, x_range=None):
    """Posterior density for one labelling, weighted components dashed (paper Fig. 5)."""
    x = np.asarray(X)[:, 0]
    lo, hi = x_range or (x.min() - 0.1 * np.ptp(x), x.max() + 0.1 * np.ptp(x))
    grid = np.linspace(lo, hi, 300)
    total, comps = posterior_density_1d(grid, x, labels, niw)
    fig = go.Figure()
    fig.add_histogram(x=x, histnorm="probability density", nbinsx=40, marker_color="#cccccc",
                      name="data", opacity=0.6)
    order = np.argsort(-comps.max(axis=1))
    for r, k in enumerate(order):
        fig.add_scatter(x=grid, y=comps[k], mode="lines", line=dict(dash="dash", color=PALETTE[r % 10]),
                        name=f"component {r + 1}")
    fig.add_scatter(x=grid, y=total, mode="lines", line=dict(color="black", width=2), name="density")
    fig.update_layout(title=title, xaxis_title="x", yaxis_title="density", showlegend=False, **LAYOUT)
    return fig


def density_2d(X, labels, niw, columns, title):
    """Posterior density contours over the coloured scatter (first two columns)."""
    X = np.asarray(X)[:, :2]
    pad = 0.15 * np.ptp(X, axis=0)
    gx = np.linspace(X[:, 0].min() - pad[0], X[:, 0].max() + pad[0], 60)
    gy = np.linspace(X[:, 1].min() - pad[1], X[:, 1].max() + pad[1], 60)
    xx, yy = np.meshgrid(gx, gy)
    from .model import NIW

    marginal = NIW(m0=niw.m0[:2], kappa0=niw.kappa0, nu0=niw.nu0 - (niw.dim - 2), S0=niw.S0[:2, :2])
    zz = posterior_density_2d(xx, yy, X, labels, marginal)
    fig = cluster_scatter(X, labels, columns, title)
    fig.add_contour(x=gx, y=gy, z=zz, contours_coloring="lines", showscale=False, ncontours=12,
                    line=dict(width=1), colorscale="Greys")
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


def _side_by_side(titles, title, shared_y=True):
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=1, cols=len(titles), subplot_titles=titles, shared_yaxes=shared_y,
                        horizontal_spacing=0.05)
    fig.update_layout(title=title, showlegend=False, **{**LAYOUT, "height": 320})
    return fig


def cv_curves(cv, title):
    """Cross-validation curves of r: loss of eq. (5) and held-out log predictive, +-1 SE, chosen r marked."""
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.12,
                        subplot_titles=("loss of eq. (5) (lower is better)",
                                        "held-out log predictive per point (higher is better)"))
    r = np.asarray(cv.r_grid)
    for col, name in ((1, "loss"), (2, "log_pred")):
        mean, se = cv.curve(name)
        se = np.nan_to_num(se)
        fig.add_scatter(x=np.r_[r, r[::-1]], y=np.r_[mean + se, (mean - se)[::-1]], fill="toself",
                        fillcolor="rgba(31,119,180,0.2)", line=dict(width=0), hoverinfo="skip", row=1, col=col)
        fig.add_scatter(x=r, y=mean, mode="lines+markers", line=dict(color=PALETTE[0]), name=name,
                        row=1, col=col)
        fig.add_vline(x=cv.chosen_r, line=dict(color=PALETTE[3], dash="dash"), row=1, col=col)
        fig.update_xaxes(title_text="power r", row=1, col=col)
    fig.update_layout(title=f"{title}: proposed r = {cv.chosen_r:.2f}", showlegend=False,
                      **{**LAYOUT, "height": 340})
    return fig


def k_traces_side_by_side(traces, burn_in, title, y_range=None):
    """K over sweeps for several chains {name: (iters,)}, one panel each, burn-in shaded."""
    fig = _side_by_side(list(traces), title)
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


def density_side_by_side(X, label_draws, niw, title):
    """1-D posterior density averaged over kept draws, one panel per chain {name: (S, N)},
    with the last draw's weighted components dashed (paper Fig. 5)."""
    from .summary import averaged_density_1d

    x = np.asarray(X)[:, 0]
    grid = np.linspace(x.min() - 0.1 * np.ptp(x), x.max() + 0.1 * np.ptp(x), 300)
    fig = _side_by_side(list(label_draws), title)
    for col, draws in enumerate(label_draws.values(), start=1):
        fig.add_histogram(x=x, histnorm="probability density", nbinsx=40, marker_color="#cccccc", opacity=0.6,
                          row=1, col=col)
        _, comps = posterior_density_1d(grid, x, draws[-1], niw)
        for r, k in enumerate(np.argsort(-comps.max(axis=1))):
            fig.add_scatter(x=grid, y=comps[k], mode="lines", line=dict(dash="dash", color=PALETTE[r % 10]),
                            row=1, col=col)
        fig.add_scatter(x=grid, y=averaged_density_1d(grid, x, draws, niw), mode="lines",
                        line=dict(color="black", width=2), row=1, col=col)
        fig.update_xaxes(title_text="x", row=1, col=col)
    fig.update_yaxes(title_text="density", row=1, col=1)
    return fig


def scatter_side_by_side(X, labels, columns, title):
    """Points coloured by cluster, one panel per labelling {name: (N,)} (first two columns)."""
    X = np.asarray(X)
    fig = _side_by_side(list(labels), title)
    for col, z in enumerate(labels.values(), start=1):
        colours, _ = cluster_colours(z)
        fig.add_scattergl(x=X[:, 0], y=X[:, 1], mode="markers", marker=dict(color=colours, size=4), row=1, col=col)
        fig.update_xaxes(title_text=columns[0], row=1, col=col)
    fig.update_yaxes(title_text=columns[1], row=1, col=1)
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


# ----------------------------------------------------------------------------- teaching figures
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


def highlight_point(X, labels, i, columns, title):
    """Cluster scatter (first two columns, or jittered 1-D) with point i ringed in black."""
    fig = cluster_scatter(X, labels, columns, title)
    X = np.asarray(X)
    y = X[i, 1] if X.shape[1] > 1 else np.random.default_rng(0).uniform(-1, 1, X.shape[0])[i]
    fig.add_scatter(x=[X[i, 0]], y=[y], mode="markers",
                    marker=dict(size=16, color="rgba(0,0,0,0)", line=dict(color="black", width=3)))
    return fig

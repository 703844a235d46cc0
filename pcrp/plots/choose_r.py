"""Figures for choosing the pCRP power r: cross-validation curves, and the loss, the sampled K and the
exact merge path on one shared r axis."""

import numpy as np

from .palette import BLUE, PALETTE, rgba
from .style import LAYOUT


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
                        fillcolor=rgba(BLUE, 0.2), line=dict(width=0), hoverinfo="skip", row=1, col=col)
        fig.add_scatter(x=r, y=mean, mode="lines+markers", line=dict(color=PALETTE[0]), name=name,
                        row=1, col=col)
        fig.add_vline(x=cv.chosen_r, line=dict(color=PALETTE[3], dash="dash"), row=1, col=col)
        fig.update_xaxes(title_text="power r", row=1, col=col)
    # the figure title sits above the panel titles instead of touching them
    fig.update_layout(title=dict(text=f"{title}: proposed r = {cv.chosen_r:.2f}", y=0.98, yanchor="top"),
                      showlegend=False, **{**LAYOUT, "height": 360, "margin": dict(l=50, r=10, t=90, b=40)})
    return fig


def r_axis_range(r_grid, path=None, proposed_r=None):
    """[left, right] of the shared r axis: the grid, widened to show the path's next merge above the
    proposed r when that is within twice the grid's largest r."""
    r_grid = np.asarray(r_grid, dtype=float)
    left, right = min(1.0, r_grid.min()), r_grid.max()
    if path is not None and proposed_r is not None:
        later = [m for m in path.effective_r() if m > proposed_r and np.isfinite(m)]
        if later and later[0] <= 2 * right:
            right = max(right, later[0])
    pad = 0.04 * (right - left)
    return [left - pad, right + pad]


def _dendrogram_segments(path, x_range):
    """Line segments (xs, ys) of the merge dendrogram with r on x, leaves at the left edge, and the
    leaf order (starting cluster ids, bottom to top). Merges outside the axis sit on its edge."""
    from scipy.cluster.hierarchy import dendrogram

    left, right = x_range
    heights = np.clip(path.effective_r(), left, right) - left  # scipy wants heights >= 0
    leaves = [1] * path.n_start + [0] * len(path.merges)  # starting clusters under each node (scipy's count)
    rows = []
    for j, (m, h) in enumerate(zip(path.merges, heights)):
        a, b = m.clusters
        leaves[path.n_start + j] = leaves[a] + leaves[b]
        rows.append([a, b, h, leaves[path.n_start + j]])
    Z = np.array(rows, dtype=float)
    tree = dendrogram(Z, no_plot=True, orientation="right")
    xs, ys = [], []
    for icoord, dcoord in zip(tree["icoord"], tree["dcoord"]):
        xs += [left + h for h in dcoord] + [None]
        ys += [(i - 5.0) / 10.0 for i in icoord] + [None]
    return xs, ys, tree["leaves"]


def choose_r_figure(cv, k_over_r, path, proposed_r, title=""):
    """Three panels on one shared r axis: the CV loss (+-1 SE), the sampled posterior of K (dot area =
    P(K = k), line = mean K, dashed steps = clusters the exact path keeps) and the merge dendrogram
    of the exact path (a merge drawn at r joins its two clusters for every larger r).
    ``k_over_r`` or ``path`` may be None (panel left empty). The proposed r is a red dashed line."""
    from plotly.subplots import make_subplots

    x_range = r_axis_range(cv.r_grid, path, proposed_r)
    fig = make_subplots(rows=3, cols=1, shared_xaxes=True, vertical_spacing=0.06,
                        row_heights=[0.3, 0.3, 0.4],
                        subplot_titles=("cross-validation loss of eq. (5), mean +- 1 SE over folds (lower is better)",
                                        "clusters K on all the data: sampled posterior and exact path",
                                        "exact merge path: the r at which the pCRP prefers two clusters merged"))
    r = np.asarray(cv.r_grid)
    mean, se = cv.curve("loss")
    se = np.nan_to_num(se)
    fig.add_scatter(x=np.r_[r, r[::-1]], y=np.r_[mean + se, (mean - se)[::-1]], fill="toself",
                    fillcolor=rgba(BLUE, 0.2), line=dict(width=0), hoverinfo="skip", showlegend=False,
                    row=1, col=1)
    fig.add_scatter(x=r, y=mean, mode="lines+markers", line=dict(color=PALETTE[0]), name="CV loss",
                    showlegend=False, row=1, col=1)
    if k_over_r is not None:
        rr, kk = np.meshgrid(k_over_r.r_grid, k_over_r.k_values, indexing="ij")
        p = k_over_r.p_k
        shown = p > 0.005
        fig.add_scatter(x=rr[shown], y=kk[shown], mode="markers", name="P(K = k), sampled",
                        marker=dict(size=6 + 30 * np.sqrt(p[shown]), color=PALETTE[0], opacity=0.35),
                        customdata=p[shown], hovertemplate="r %{x}, K = %{y}: P = %{customdata:.2f}<extra></extra>",
                        row=2, col=1)
        fig.add_scatter(x=k_over_r.r_grid, y=k_over_r.mean_k, mode="lines", name="mean K, sampled",
                        line=dict(color=PALETTE[0]), row=2, col=1)
    if path is not None:
        grid = np.linspace(*x_range, 400)
        fig.add_scatter(x=grid, y=[path.n_clusters_at(g) for g in grid], mode="lines", name="clusters kept, exact path",
                        line=dict(color=PALETTE[1], dash="dash", shape="hv"), row=2, col=1)
        xs, ys, leaves = _dendrogram_segments(path, x_range)
        fig.add_scatter(x=xs, y=ys, mode="lines", line=dict(color=PALETTE[2], width=2), hoverinfo="skip",
                        showlegend=False, row=3, col=1)
        fig.update_yaxes(tickvals=list(range(len(leaves))),
                         ticktext=[f"{path.sizes_of(k)} pt{'s' if path.sizes_of(k) != 1 else ''}" for k in leaves],
                         row=3, col=1)
        merge_x = np.clip(path.effective_r(), *x_range)
        text = [f"r* = {m.r:.3g}: clusters of {m.sizes[0]} and {m.sizes[1]} points<br>L = {m.L:.1f}, G = {m.G:.1f}"
                for m in path.merges]
        fig.add_scatter(x=merge_x, y=_merge_heights(path, leaves), mode="markers", showlegend=False,
                        marker=dict(color=PALETTE[2], size=7), text=text, hoverinfo="text", row=3, col=1)
    for row in (1, 2, 3):
        fig.add_vline(x=proposed_r, line=dict(color=PALETTE[3], dash="dash"), row=row, col=1)
    fig.update_xaxes(range=x_range)
    fig.update_xaxes(title_text="power r", row=3, col=1)
    fig.update_yaxes(title_text="loss", row=1, col=1)
    fig.update_yaxes(title_text="K", dtick=1, rangemode="tozero", row=2, col=1)
    fig.update_layout(title=title or f"proposed r = {proposed_r:.2f}", legend=dict(orientation="h", y=-0.08),
                      **{**LAYOUT, "height": 760, "margin": {**LAYOUT["margin"], "t": 80}})
    return fig


def _merge_heights(path, leaves):
    """Leaf-axis position of each merge node (mean of its children's), leaves at 0, 1, ..."""
    position = {leaf: float(i) for i, leaf in enumerate(leaves)}
    out = []
    for j, m in enumerate(path.merges):
        a, b = m.clusters
        position[path.n_start + j] = 0.5 * (position[a] + position[b])
        out.append(position[path.n_start + j])
    return out

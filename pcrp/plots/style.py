"""Shared look of every figure: palette, layout defaults, cluster colours, side-by-side panels."""

import html

import numpy as np

PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
           "#bcbd22", "#17becf"]
LAYOUT = dict(template="plotly_white", margin=dict(l=50, r=10, t=40, b=40), height=300)


def plain_text(text):
    """A name that comes from the data (a column of an uploaded CSV) as Plotly shows it literally: Plotly
    reads tags such as <a href>, <b> and <br> and HTML entities in titles and hover text, so ``<``, ``>``
    and ``&`` are written as entities (which it shows as the characters); whitespace runs become one space."""
    return html.escape(" ".join(str(text).split()), quote=False)


def colour(index):
    """The colour of cluster, table or prior number ``index`` (0 = the first: the largest cluster, the first table,
    the first prior), the palette cycled: the one colour map of every figure (the live charts' scale is
    :data:`PALETTE` itself, indexed the same way)."""
    return PALETTE[int(index) % len(PALETTE)]


def cluster_colours(labels):
    """One colour per point, clusters ordered by size so the largest is always blue."""
    labels = np.asarray(labels)
    ids, counts = np.unique(labels, return_counts=True)
    rank = {k: r for r, k in enumerate(ids[np.argsort(-counts, kind="stable")])}
    return [colour(rank[k]) for k in labels], rank


def side_by_side(titles, title, shared_y=True):
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=1, cols=len(titles), subplot_titles=titles, shared_yaxes=shared_y,
                        horizontal_spacing=0.05)
    # the figure title sits above the panel titles instead of on top of them
    fig.update_layout(title=dict(text=title, y=0.98, yanchor="top"), showlegend=False,
                      **{**LAYOUT, "height": 340, "margin": dict(l=50, r=10, t=80, b=40)})
    return fig

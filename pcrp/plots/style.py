"""Shared look of every figure: layout defaults, cluster colours, side-by-side panels (the colours themselves are
:mod:`pcrp.plots.palette`'s)."""

import html

import numpy as np

from .palette import colour, rank_by_size  # noqa: F401  (colour: for plots.compare and plots.reproduce until they import palette)

LAYOUT = dict(template="plotly_white", margin=dict(l=50, r=10, t=40, b=40), height=300)


def plain_text(text):
    """A name that comes from the data (a column of an uploaded CSV) as Plotly shows it literally: Plotly
    reads tags such as <a href>, <b> and <br> and HTML entities in titles and hover text, so ``<``, ``>``
    and ``&`` are written as entities (which it shows as the characters); whitespace runs become one space."""
    return html.escape(" ".join(str(text).split()), quote=False)


def cluster_colours(labels):
    """One colour per point, clusters ordered by size so the largest is always blue."""
    labels = np.asarray(labels)
    ranks = rank_by_size(labels)
    rank = {k: int(r) for k, r in zip(labels.tolist(), ranks.tolist())}
    return [colour(r) for r in ranks], rank


def side_by_side(titles, title, shared_y=True):
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=1, cols=len(titles), subplot_titles=titles, shared_yaxes=shared_y,
                        horizontal_spacing=0.05)
    # the figure title sits above the panel titles instead of on top of them
    fig.update_layout(title=dict(text=title, y=0.98, yanchor="top"), showlegend=False,
                      **{**LAYOUT, "height": 340, "margin": dict(l=50, r=10, t=80, b=40)})
    return fig

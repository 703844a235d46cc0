"""Every colour of pcrp's figures and pages, and the one ordering of clusters that colours follow (rank by size).

A leaf: numpy only (no Plotly), so the live charts and the pages read their colours here too. Cluster, table or prior
number i has :func:`colour` (i); clusters are numbered by :func:`rank_by_size` (0 = the largest, drawn blue), so one
partition has one set of colours in every figure.
"""

import numpy as np

# Plotly's (and Vega's "category10") ten colours, in their order: blue, orange, green, red, purple, brown, pink,
# grey, olive, cyan. COLOUR_NAMES says them in words (a page names a cluster by its colour).
PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
           "#bcbd22", "#17becf"]
COLOUR_NAMES = ("blue", "orange", "green", "red", "purple", "brown", "pink", "grey", "olive", "cyan")
BLUE, RED, GREY = PALETTE[0], PALETTE[3], PALETTE[7]

# The rows of the live Explorer (one colour per prior's row, five rows), and the same colours as Streamlit Markdown
# names.
ROW_COLOURS = (PALETTE[0], PALETTE[3], PALETTE[2], PALETTE[4], PALETTE[1])
ROW_MARKDOWN_COLOURS = ("blue", "red", "green", "violet", "orange")
# Streamlit's markdown text colours of those names in its light theme, as Streamlit 1.67 draws them: the live rows'
# headings are text in a canvas component (app_pages/explorer_parts/live_canvas.js) and look like the ended run's
# markdown headings with them (darker than the row colours, so that text keeps its contrast on white).
MARKDOWN_TEXT_COLOURS = {"blue": "#244fb4", "red": "#9e303b", "green": "#0c5a44", "violet": "#6f33b8",
                         "orange": "#9b4519"}

# Greys, darkest first, each for one purpose.
INK = "#222222"  # axis titles and labels of the live charts
TEXT_DARK = "#333333"  # numbers drawn on the restaurant's tables
TEXT_MUTED = "#555555"  # the restaurant's notes under its tables
TINY_GREY = "#6b6b6b"  # points of tiny clusters: darker than the burn-in shading, drawn larger
NEW_CLUSTER_GREY = GREY  # the new-cluster term of a density; the predictive bar of one customer's choice
BAND_GREY = "#808080"  # the range of K within a pixel column of the live trace (drawn translucent)
NEW_TABLE_GREY = "#8a8a8a"  # the empty table a new customer may open, in the drawn restaurant
BURN_IN_GREY = "#9a9a9a"  # the burn-in part of the live trace
PRIOR_WEIGHT_GREY = "#bbbbbb"  # the prior weight bar of one customer's choice
DATA_GREY = "#cccccc"  # histograms of the data behind a density
GRID_GREY = "#e8e8e8"  # grid lines of the live charts
HEADER_FILL = "#eeeeee"  # header cells of a table figure
WARNING_FILL = "#f8d0d0"  # a table cell over its threshold (R-hat)
BLACK = "#000000"
TRANSPARENT = "rgba(0,0,0,0)"


def colour(index):
    """The colour of cluster, table or prior number ``index`` (0 = the first: the largest cluster, the first table,
    the first prior), the palette cycled: the one colour map of every figure (the live charts' scale is
    :data:`PALETTE` itself, indexed the same way)."""
    return PALETTE[int(index) % len(PALETTE)]


def rgba(hex_colour, alpha):
    """``hex_colour`` ("#1f77b4") with opacity ``alpha`` in [0, 1], as Plotly's "rgba(31,119,180,0.2)"."""
    h = hex_colour.lstrip("#")
    return f"rgba({int(h[0:2], 16)},{int(h[2:4], 16)},{int(h[4:6], 16)},{alpha})"


def rank_by_size(labels):
    """(N,) int64: the rank of each point's cluster by size (0 = the largest; clusters of equal size by label), the
    order colours follow. ``labels``: (N,) integer labels."""
    from ..summaries.summary import sorted_codes  # (a bincount for integer labels: this runs at every live frame)

    codes, n_ids = sorted_codes(labels)
    order = np.argsort(-np.bincount(codes, minlength=n_ids), kind="stable")
    rank_of_id = np.empty(n_ids, dtype=np.int64)
    rank_of_id[order] = np.arange(n_ids)
    return rank_of_id[codes]

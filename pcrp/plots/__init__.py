"""Plotly figure builders: plain data in, ``go.Figure`` out. No Streamlit here, and no maths:
summaries are computed in :mod:`pcrp.summaries.summary`, :mod:`pcrp.analyses.density`, :mod:`pcrp.summaries.partition` (and friends) and passed in.

One module per subject; everything is re-exported here, so ``from pcrp import plots`` and
``plots.k_trace(...)`` work. Side-by-side panels share axis ranges: pass the same ``y_range`` /
``x_range`` to both.
"""

from .choose_r import choose_r_figure, cv_curves
from .clusters import (cluster_scatter, cluster_sizes, cluster_sizes_compare, digit_gallery, highlight_point,
                       scatter_side_by_side)
from .density import add_new_cluster_term, density_1d, density_2d, density_side_by_side
from .posterior import diagnostics_table, point_estimate_scatter, posterior_density, similarity_heatmap
from .reproduce import k_traces_by_method
from .palette import PALETTE
from .style import LAYOUT, cluster_colours, side_by_side
from .teaching import order_probabilities
from .traces import k_histogram, k_posterior_compare, k_trace, k_traces_side_by_side

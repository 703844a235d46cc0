"""Figure layout rules that a reader sees: titles that do not sit on top of each other."""

from types import SimpleNamespace

import numpy as np

from pcrp import plots
from pcrp.plots.style import side_by_side


def fake_cv():
    r = np.linspace(1.0, 2.0, 5)
    curves = {"loss": (np.linspace(4, 8, 5), np.full(5, 0.3)), "log_pred": (-np.linspace(1, 2, 5), np.full(5, 0.1))}
    return SimpleNamespace(r_grid=r, chosen_r=1.5, curve=lambda name: curves[name])


def test_figure_titles_sit_above_the_panel_titles():
    """Panel titles are drawn just above the plotting area (paper y = 1); the figure title is anchored
    by its top near the top of the figure, with a top margin tall enough for both lines (Plotly's
    default puts it in the middle of a 40 px margin, on top of the panel titles)."""
    for fig in (plots.cv_curves(fake_cv(), "Sim 1, N = 300: cross validation of r"), side_by_side(["a", "b"], "t")):
        assert fig.layout.title.yanchor == "top" and fig.layout.title.y >= 0.95
        assert fig.layout.margin.t >= 80
        assert all(a.y == 1.0 for a in fig.layout.annotations)  # the panel titles

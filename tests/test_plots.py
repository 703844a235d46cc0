"""Figure layout rules that a reader sees: titles that do not sit on top of each other; the live views' colours."""

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


def test_column_names_from_a_csv_reach_plotly_as_literal_text():
    """Plotly turns <a href=...> in a title into a live link and <br> into a line break: names that come
    from the data are written with entities, which Plotly shows as the characters themselves."""
    from pcrp.plots.style import plain_text

    hostile = ['<a href="http://198.51.100.7/">re-login</a>', "x & <b>y</b>"]
    X = np.random.default_rng(0).normal(size=(30, 2))
    labels = np.arange(30) % 3
    for fig in (plots.point_estimate_scatter(X, labels, np.ones(30), hostile, "t"),
                plots.cluster_scatter(X, labels, hostile, "t")):
        assert fig.layout.xaxis.title.text == '&lt;a href="http://198.51.100.7/"&gt;re-login&lt;/a&gt;'
        assert fig.layout.yaxis.title.text == "x &amp; &lt;b&gt;y&lt;/b&gt;"
    assert plain_text("a\n<br>b") == "a &lt;br&gt;b"


def test_live_cluster_views_draw_tiny_clusters_grey_on_top_and_keep_matched_colours():
    from pcrp.app import live_charts as live_plots

    x, y = np.arange(6.0), np.arange(6.0)
    colour = np.array([0, 0, 3, 3, -1, 12])  # 12 wraps around the palette; -1 is a tiny cluster's point
    spec = live_plots.clusters_chart(x, y, colour, x_domain=(0, 6), y_domain=(0, 6), x_title="a", y_title="b",
                                     presentation=True)
    points, tiny = spec["datasets"]["points"], spec["datasets"]["tiny"]
    assert points.column("colour").to_pylist() == [0, 0, 3, 3, 12 % len(live_plots.PALETTE)]
    assert tiny.column("x").to_pylist() == [4.0] and tiny.column("colour").to_pylist() == [-1]
    scale = spec["layer"][0]["encoding"]["color"]["scale"]
    assert dict(zip(scale["domain"], scale["range"]))[-1] == live_plots.TINY_GREY
    assert dict(zip(scale["domain"], scale["range"]))[3] == live_plots.PALETTE[3]  # the index is the colour
    assert spec["layer"][1]["data"]["name"] == "tiny"  # drawn last: on top
    assert spec["config"]["axis"]["labelFontSize"] >= 18  # presentation
    grid = np.linspace(0, 1, 5)
    dens = live_plots.density_chart(grid, grid, np.vstack([grid, grid / 2]), [2, -1], x, colour, x_domain=(0, 6),
                                    x_title="a")
    assert dens["datasets"]["components"].column("colour").to_pylist() == [2] * 5 + [-1] * 5
    ticks = {layer["data"]["name"]: layer["mark"]["size"] for layer in dens["layer"] if layer["mark"]["type"] == "tick"}
    assert ticks["tiny"] > 2 * ticks["rug"]  # a tiny cluster's points stand out of the rug

"""The live comparison's charts, as Vega-Lite specifications (plain dicts).

Each chart fills the element Streamlit gives it: pass the total height (title and axes included)
as ``st.vega_lite_chart(spec, width="stretch", height=...)``.

Why Vega-Lite here when every other figure is Plotly: the page redraws these charts twice a second,
and Streamlit re-creates a Plotly chart from scratch whenever its figure changes (a flash, and the
browser busy for a large part of a second), while a Vega-Lite chart whose specification is unchanged
only receives new data. So each builder returns a specification that depends only on things that
rarely change (axis ranges, colours, sizes) and puts everything that changes every redraw into
named ``datasets``, which Streamlit sends separately.

Inputs are the display summaries of :mod:`pcrp.app.live_view`; nothing here computes statistics.
"""

import numpy as np

from ..plots.palette import BAND_GREY, BURN_IN_GREY, GRID_GREY, INK, PALETTE, TINY_GREY


def _config(presentation):
    size = 18 if presentation else 12
    return {
        "axis": {"labelFontSize": size, "titleFontSize": size, "labelColor": INK, "titleColor": INK,
                 "titleFontWeight": "normal", "grid": True, "gridColor": GRID_GREY},
        "view": {"stroke": None},
        "mark": {"aria": False},  # no per-mark accessibility attributes: the rows' text says what they show
    }


# Drawn on a canvas, not as SVG elements: the charts are redrawn twice a second, and with SVG the browser
# spent most of each redraw creating and removing one element per point, so clicks on Pause waited behind
# it (bench/live_browser.py). Streamlit switches to canvas by itself only above 2,000 data rows.
CANVAS = {"embedOptions": {"renderer": "canvas"}}


def _x_axis(shown):
    """Rows of the comparison share their x axes: only the bottom row labels them."""
    return {} if shown else {"labels": False, "title": None, "ticks": False}


def _records(**columns):
    """Column arrays -> an Arrow table, what Streamlit sends for a named dataset. Built directly: going
    through lists of dicts and pandas cost the page most of its redraw time (bench/live_browser.py).
    (pyarrow comes with Streamlit; these charts are only drawn by the app.)"""
    import pyarrow as pa

    return pa.table({name: np.asarray(values) for name, values in columns.items()})


def trace_chart(envelopes, *, burn_in, total_sweeps, k_max, colour, marker_sweep=None, x_axis=True,
                presentation=False):
    """Trace of K of one or more chains of a prior: burn-in shaded grey, the first chain's min/max band
    per column of sweeps, the mean of K per column of each chain (the first solid, the others dashed),
    and an optional dotted marker at ``marker_sweep`` (replay). envelopes: one
    pcrp.app.live_view.TraceEnvelope or a list of them, one per chain."""
    if not isinstance(envelopes, (list, tuple)):
        envelopes = [envelopes]
    first = envelopes[0]
    x = {"field": "sweep", "type": "quantitative", "title": "sweep", "scale": {"domain": [0, total_sweeps]},
         "axis": _x_axis(x_axis)}
    y_scale = {"domain": [0, k_max + 0.5], "nice": False}
    means = _records(sweep=np.concatenate([env.sweep for env in envelopes]),
                     mean=np.concatenate([env.mean for env in envelopes]),
                     chain=np.concatenate([[f"chain {c + 1}"] * len(env.sweep) for c, env in enumerate(envelopes)]))
    names = [f"chain {c + 1}" for c in range(len(envelopes))]
    line = {"x": x, "y": {"field": "mean", "type": "quantitative", "scale": y_scale},
            "detail": {"field": "chain", "type": "nominal"}}
    if len(names) > 1:  # (with one chain these one-value scales hid its line: the five-row demo runs one per row)
        line["strokeDash"] = {"field": "chain", "type": "nominal",
                              "scale": {"domain": names, "range": [[1, 0]] + [[4, 3]] * (len(names) - 1)},
                              "legend": None}
        line["opacity"] = {"field": "chain", "type": "nominal",
                           "scale": {"domain": names, "range": [1.0] + [0.75] * (len(names) - 1)}, "legend": None}
    return {
        "height": "container", "width": "container", "config": _config(presentation), "usermeta": CANVAS,
        "datasets": {
            "burn": _records(x0=[0] if burn_in else [], x1=[burn_in] if burn_in else []),
            "band": _records(sweep=first.sweep, low=first.low, high=first.high),
            "means": means,
            "marker": _records(sweep=[int(marker_sweep)] if marker_sweep else np.zeros(0, dtype=np.int64)),
        },
        "layer": [
            {"data": {"name": "burn"}, "mark": {"type": "rect", "color": BURN_IN_GREY, "opacity": 0.18},
             "encoding": {"x": {"field": "x0", "type": "quantitative", "scale": {"domain": [0, total_sweeps]}},
                          "x2": {"field": "x1"}}},
            {"data": {"name": "band"}, "mark": {"type": "area", "color": BAND_GREY, "opacity": 0.3},
             "encoding": {"x": x, "y": {"field": "low", "type": "quantitative", "scale": y_scale, "title": "clusters K"},
                          "y2": {"field": "high"}}},
            {"data": {"name": "means"}, "mark": {"type": "line", "color": colour, "strokeWidth": 2},
             "encoding": line},
            {"data": {"name": "marker"}, "mark": {"type": "rule", "color": INK, "strokeDash": [4, 3], "strokeWidth": 2},
             "encoding": {"x": {"field": "sweep", "type": "quantitative"}}},
        ],
    }


def k_histogram_chart(hist, *, k_max, colour, x_axis=True, presentation=False):
    """Posterior of K: share of sweeps after burn-in with each K; grey while only burn-in sweeps exist
    (the page says so). hist: pcrp.app.live_view.KHistogram. Every row labels its K values (a tick at every K from 1
    to ``k_max``, labels thinned to every second, fourth, ... K where they would overlap, as the live canvas does);
    only the bottom row (``x_axis``) names the axis."""
    phase = "burn-in so far" if hist.burn_in_only else "after burn-in"
    k_axis = {"values": list(range(1, int(k_max) + 1)), "format": "d", "labelOverlap": "parity",
              "title": "clusters K" if x_axis else None}
    return {
        "height": "container", "width": "container", "config": _config(presentation), "usermeta": CANVAS,
        "datasets": {"hist": _records(k=hist.k, share=hist.share, phase=[phase] * len(hist.k))},
        "data": {"name": "hist"},
        "mark": {"type": "bar", "width": {"band": 0.8}},
        "encoding": {
            "x": {"field": "k", "type": "quantitative", "title": "clusters K",
                  "scale": {"domain": [0.5, k_max + 0.5], "nice": False}, "axis": k_axis},
            "y": {"field": "share", "type": "quantitative", "title": "share", "scale": {"domain": [0, 1]}},
            "color": {"field": "phase", "type": "nominal",
                      "scale": {"domain": ["after burn-in", "burn-in so far"], "range": [colour, BURN_IN_GREY]},
                      "legend": None},
        },
    }


def _colour_index(colour):
    """Colour indices as the charts' scale knows them: -1 (tiny) stays, the rest wrap around the palette."""
    colour = np.asarray(colour, dtype=np.int64)
    return np.where(colour < 0, -1, colour % len(PALETTE))


def _cluster_colour_scale():
    return {"domain": [-1] + list(range(len(PALETTE))), "range": [TINY_GREY] + list(PALETTE)}


def clusters_chart(x, y, colour, *, x_domain, y_domain, x_title, y_title, x_axis=True, presentation=False):
    """Points (two columns, or a projection) coloured by cluster; points of tiny clusters (colour -1) grey,
    larger and drawn on top with a dark outline, so over-clustering is visible. x, y, colour: (n,) for the
    points shown; colour from pcrp.app.live_view.matched_colours (the same index means the same cluster in every
    row)."""
    colour = _colour_index(colour)
    tiny = colour < 0
    x, y = np.asarray(x), np.asarray(y)
    encoding = {
        "x": {"field": "x", "type": "quantitative", "title": x_title, "scale": {"domain": list(x_domain)},
              "axis": _x_axis(x_axis)},
        "y": {"field": "y", "type": "quantitative", "title": y_title, "scale": {"domain": list(y_domain)}},
        "color": {"field": "colour", "type": "ordinal", "scale": _cluster_colour_scale(), "legend": None},
    }
    size = 30 if presentation else 18
    return {
        "height": "container", "width": "container", "config": _config(presentation), "usermeta": CANVAS,
        "datasets": {"points": _records(x=x[~tiny], y=y[~tiny], colour=colour[~tiny]),
                     "tiny": _records(x=x[tiny], y=y[tiny], colour=colour[tiny])},
        "layer": [
            {"data": {"name": "points"}, "mark": {"type": "circle", "size": size, "opacity": 0.85},
             "encoding": encoding},
            {"data": {"name": "tiny"}, "mark": {"type": "circle", "size": size * 2.5, "opacity": 1, "stroke": INK,
                                                "strokeWidth": 1}, "encoding": encoding},
        ],
    }


def density_chart(grid, density, components, component_colours, x_data, data_colours, *, x_domain, x_title,
                  x_axis=True, presentation=False):
    """1-D data: the density of the current state (black), its weighted components (dashed, in their
    clusters' colours; tiny clusters grey) and a rug of the data in their clusters' colours, where points
    of tiny clusters are tall dark ticks (their components lie flat at zero). grid (G,), density (G,),
    components (K, G), component_colours (K,), x_data and data_colours (n,): colours as in clusters_chart."""
    components = np.asarray(components)
    component_colours = _colour_index(component_colours)
    data_colours = _colour_index(data_colours)
    x_data = np.asarray(x_data)
    tiny = data_colours < 0
    comps = _records(x=np.tile(grid, len(components)), density=components.ravel(),
                     colour=np.repeat(component_colours, len(grid)),
                     component=np.repeat(np.arange(len(components)), len(grid)))
    x = {"field": "x", "type": "quantitative", "title": x_title, "scale": {"domain": list(x_domain)},
         "axis": _x_axis(x_axis)}
    colour = {"field": "colour", "type": "ordinal", "scale": _cluster_colour_scale(), "legend": None}
    return {
        "height": "container", "width": "container", "config": _config(presentation), "usermeta": CANVAS,
        "datasets": {"components": comps, "density": _records(x=grid, density=density),
                     "rug": _records(x=x_data[~tiny], colour=data_colours[~tiny]),
                     "tiny": _records(x=x_data[tiny], colour=data_colours[tiny])},
        "layer": [
            {"data": {"name": "components"}, "mark": {"type": "line", "strokeDash": [5, 3], "strokeWidth": 1.5},
             "encoding": {"x": x, "y": {"field": "density", "type": "quantitative", "title": "density"},
                          "color": colour, "detail": {"field": "component"}}},
            {"data": {"name": "density"}, "mark": {"type": "line", "color": INK, "strokeWidth": 2.5},
             "encoding": {"x": x, "y": {"field": "density", "type": "quantitative"}}},
            {"data": {"name": "rug"}, "mark": {"type": "tick", "opacity": 0.5, "size": 10},
             "encoding": {"x": x, "y": {"value": {"expr": "height - 5"}}, "color": colour}},
            {"data": {"name": "tiny"}, "mark": {"type": "tick", "opacity": 1, "size": 26, "thickness": 2.5},
             "encoding": {"x": x, "y": {"value": {"expr": "height - 13"}}, "color": colour}},
        ],
    }

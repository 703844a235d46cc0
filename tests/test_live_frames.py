"""The live canvas's frames (pcrp.app.live_frames): a snapshot first, then only what is new, and small."""

import numpy as np
import pytest

from pcrp.app.live_frames import RowFeed, RowLayout, colour_bytes, decode, frame_bytes
from pcrp.app.live_view import DISPLAY_POINTS

PALETTE = tuple(f"#{i:06x}" for i in range(10))


def feed(n_points=50, n_chains=2, dim=2):
    coords = np.random.default_rng(0).normal(size=(n_points, dim))
    return RowFeed(RowLayout(total_sweeps=2000, burn_in=500, coords=coords, x_domain=(-3, 3),
                             y_domain=(-3, 3) if dim == 2 else None, titles=("a", "b")[:dim], colour="#1f77b4",
                             palette=PALETTE, tiny_colour="#6b6b6b", n_chains=n_chains))


def k_values(frame, chain):
    return decode(frame["k"][chain], np.uint16).tolist()


def applied(colours, change):
    """The page's colours after applying a frame's colour change to ``colours`` (uint8)."""
    if "all" in change:
        return decode(change["all"], np.uint8).copy()
    out = colours.copy()
    out[decode(change["index"], np.uint16)] = decode(change["value"], np.uint8)
    return out


def test_the_first_frame_is_a_snapshot_and_the_next_holds_exactly_the_new_k_values():
    f = feed()
    traces = [np.array([3, 4, 4, 5]), np.array([1, 2])]
    first = f.frame(traces, np.zeros(50, dtype=int), k_max=8)
    assert first["snapshot"] and first["seq"] == 0 and "layout" in first
    assert k_values(first, 0) == [3, 4, 4, 5] and k_values(first, 1) == [1, 2]
    assert decode(first["layout"]["x"], np.float32).size == 50
    traces = [np.array([3, 4, 4, 5, 6, 6]), np.array([1, 2, 2])]
    second = f.frame(traces, None, k_max=8)
    assert not second["snapshot"] and second["seq"] == 1 and "layout" not in second
    assert second["feed"] == first["feed"]
    assert second["k_from"] == [4, 2] and k_values(second, 0) == [6, 6] and k_values(second, 1) == [2]
    third = f.frame(traces, None, k_max=8)  # nothing new: nothing sent
    assert k_values(third, 0) == [] and k_values(third, 1) == [] and "colours" not in third


def test_only_changed_colours_are_sent_and_they_rebuild_the_page_colours():
    f = feed(n_points=100)
    colours = np.arange(100) % 4
    first = f.frame([[1], [1]], colours, k_max=4)
    page = applied(np.zeros(100, dtype=np.uint8), first["colours"])
    assert page.tolist() == colour_bytes(colours, len(PALETTE)).tolist()
    colours = colours.copy()
    colours[[7, 42]] = -1  # two points join tiny clusters
    colours[60] = 13  # wraps around the palette
    second = f.frame([[1], [1]], colours, k_max=4)
    assert decode(second["colours"]["index"], np.uint16).tolist() == [7, 42, 60]
    assert decode(second["colours"]["value"], np.uint8).tolist() == [0, 0, 13 % 10 + 1]
    page = applied(page, second["colours"])
    assert page.tolist() == colour_bytes(colours, len(PALETTE)).tolist()
    third = f.frame([[1], [1]], colours, k_max=4)  # unchanged: an empty change
    assert decode(third["colours"]["index"], np.uint16).size == 0
    everything = f.frame([[1], [1]], (colours + 1) % 5, k_max=4)  # most changed: all of them, one byte each
    assert "all" in everything["colours"]


def test_restart_makes_the_next_frame_a_snapshot_with_everything_again():
    f = feed()
    first = f.frame([np.arange(10), np.arange(5)], np.zeros(50, dtype=int), k_max=12)
    f.frame([np.arange(12), np.arange(6)], None, k_max=12)
    f.restart()
    again = f.frame([np.arange(12), np.arange(6)], np.ones(50, dtype=int), k_max=12)
    assert again["snapshot"] and again["seq"] == 0 and again["feed"] != first["feed"]
    assert k_values(again, 0) == list(range(12)) and again["k_from"] == [0, 0]
    assert "all" in again["colours"]


def test_frames_stay_small_at_full_display_size():
    """A frame after the snapshot at 2,000 displayed points, ten new sweeps per chain and every tenth point changing
    colour stays under 2 kB; the snapshot itself (coordinates included) under 40 kB."""
    rng = np.random.default_rng(1)
    f = feed(n_points=DISPLAY_POINTS, n_chains=2)
    colours = rng.integers(-1, 6, DISPLAY_POINTS)
    traces = [rng.integers(1, 20, 1000), rng.integers(1, 20, 1000)]
    snapshot = f.frame(traces, colours, k_max=20)
    assert frame_bytes(snapshot) < 40_000
    colours = colours.copy()
    colours[::10] = (colours[::10] + 1) % 6
    traces = [np.concatenate([t, rng.integers(1, 20, 10)]) for t in traces]
    delta = f.frame(traces, colours, k_max=20)
    assert frame_bytes(delta) < 2_000


def test_one_dimensional_rows_send_their_density_view_and_a_wrong_chain_count_is_refused():
    f = feed(dim=1, n_chains=1)
    grid = np.linspace(0, 1, 200)
    view = {"grid": grid, "density": grid ** 2, "components": np.vstack([grid, grid / 2]),
            "component_colours": np.array([0, 3])}
    first = f.frame([[2, 3]], np.zeros(50, dtype=int), k_max=4, view=view)
    assert first["layout"]["y"] is None
    assert np.allclose(decode(first["view"]["density"], np.float32), grid ** 2, atol=1e-6)
    assert first["view"]["component_colours"] == [1, 4]
    assert "view" not in f.frame([[2, 3]], None, k_max=4)
    with pytest.raises(ValueError, match="expected 1 traces of K, got 2"):
        f.frame([[2], [3]], None, k_max=4)

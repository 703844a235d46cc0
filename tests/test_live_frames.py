"""The live canvas's frames (pcrp.app.live_frames): complete at first, then only what is new since a frame OVERLAP
back (the page may miss frames), and small."""

import numpy as np
import pytest

from pcrp.app.live_frames import OVERLAP, RowFeed, RowLayout, colour_bytes, decode, frame_bytes
from pcrp.app.live_view import DISPLAY_POINTS

PALETTE = tuple(f"#{i:06x}" for i in range(10))


def feed(n_points=50, n_chains=2, dim=2):
    coords = np.random.default_rng(0).normal(size=(n_points, dim))
    return RowFeed(RowLayout(total_sweeps=2000, burn_in=500, coords=coords, x_domain=(-3, 3),
                             y_domain=(-3, 3) if dim == 2 else None, titles=("a", "b")[:dim], colour="#1f77b4",
                             palette=PALETTE, tiny_colour="#6b6b6b", n_chains=n_chains))


def k_values(frame, chain):
    return decode(frame["k"][chain], np.uint16).tolist()


class Page:
    """What the page's script (live_canvas.js) keeps of a row, applying frames as it does."""

    def __init__(self):
        self.feed, self.seq, self.k, self.colours = None, -1, None, None

    def take(self, f):
        if f["base"] < 0 and f["feed"] != self.feed:
            self.feed, self.seq, self.k = f["feed"], -1, [[] for _ in f["k"]]
            self.colours = np.zeros(f["layout"]["n_points"], dtype=np.uint8)
        if f["feed"] != self.feed or f["base"] > self.seq:
            return False
        for c, text in enumerate(f["k"]):
            values = decode(text, np.uint16).tolist()
            self.k[c] += values[len(self.k[c]) - f["k_from"][c]:]
        change = f.get("colours")
        if change and "all" in change:
            self.colours = decode(change["all"], np.uint8).copy()
        elif change:
            self.colours[decode(change["index"], np.uint16)] = decode(change["value"], np.uint8)
        self.seq = f["seq"]
        return True


def steps(n, n_points=50, seed=0):
    """n successive (K traces, colours) of a 2-chain row: K grows by a few values, a few colours change."""
    rng = np.random.default_rng(seed)
    traces, colours, out = [[], []], rng.integers(-1, 6, n_points), []
    for _ in range(n):
        traces = [t + rng.integers(1, 9, rng.integers(0, 5)).tolist() for t in traces]
        colours = colours.copy()
        colours[rng.integers(0, n_points, 3)] = rng.integers(-1, 6, 3)
        out.append(([list(t) for t in traces], colours))
    return out


def test_frames_after_the_complete_ones_hold_only_the_k_values_since_their_base():
    f = feed()
    first = f.frame([[3, 4, 4, 5], [1, 2]], np.zeros(50, dtype=int), k_max=8)
    assert first["base"] == -1 and first["seq"] == 0 and "layout" in first
    assert k_values(first, 0) == [3, 4, 4, 5] and k_values(first, 1) == [1, 2]
    traces = [[3, 4, 4, 5], [1, 2]]
    sent = []
    for i in range(1, OVERLAP + 3):
        traces = [traces[0] + [i], traces[1] + [i, i]]
        sent.append([len(t) for t in traces])
        frame = f.frame(traces, None, k_max=8)
        if i < OVERLAP:
            assert frame["base"] == -1 and frame["k_from"] == [0, 0]  # still complete
    # the last frame is a delta from the frame OVERLAP back: exactly the K values recorded since that frame
    assert frame["base"] == frame["seq"] - OVERLAP and "layout" not in frame
    base_lengths = sent[frame["base"] - 1]
    assert frame["k_from"] == base_lengths
    assert k_values(frame, 0) == traces[0][base_lengths[0]:] and k_values(frame, 1) == traces[1][base_lengths[1]:]


def test_a_page_that_misses_frames_still_ends_with_every_k_value_and_colour():
    f, page = feed(), Page()
    for i, (traces, colours) in enumerate(steps(40)):
        frame = f.frame(traces, None if i % 3 == 1 else colours, k_max=8)  # colours not recomputed every frame
        if i % 3 == 0 or i in (5, 6, 7):  # the page sees every third frame, and some more
            assert page.take(frame), i
            assert page.k == [list(t) for t in traces]
            assert page.colours.tolist() == f.colours_sent.tolist()


def test_only_changed_colours_are_sent():
    f = feed(n_points=100)
    colours = np.arange(100) % 4
    for _ in range(OVERLAP):
        f.frame([[1], [1]], colours, k_max=4)
    colours = colours.copy()
    colours[[7, 42]] = -1  # two points join tiny clusters
    colours[60] = 13  # wraps around the palette
    frame = f.frame([[1], [1]], colours, k_max=4)
    assert decode(frame["colours"]["index"], np.uint16).tolist() == [7, 42, 60]
    assert decode(frame["colours"]["value"], np.uint8).tolist() == [0, 0, 13 % 10 + 1]
    for _ in range(OVERLAP - 1):  # the change is sent again until the frame OVERLAP back holds it
        assert decode(f.frame([[1], [1]], None, k_max=4)["colours"]["index"], np.uint16).tolist() == [7, 42, 60]
    assert decode(f.frame([[1], [1]], None, k_max=4)["colours"]["index"], np.uint16).size == 0
    everything = f.frame([[1], [1]], (colours + 1) % 5, k_max=4)  # most changed: all of them, one byte each
    assert "all" in everything["colours"]


def test_a_page_too_far_behind_is_refused_and_restart_sends_everything_again():
    f, page = feed(), Page()
    frames = [f.frame(traces, colours, k_max=8) for traces, colours in steps(3 * OVERLAP)]
    assert page.take(frames[0])
    assert not page.take(frames[2 * OVERLAP])  # missed more than OVERLAP frames: it must ask for a restart
    f.restart()
    traces, colours = steps(3 * OVERLAP + 1)[-1]
    again = f.frame(traces, colours, k_max=8)
    assert again["base"] == -1 and again["feed"] != frames[0]["feed"] and "layout" in again
    fresh = Page()
    assert fresh.take(again) and fresh.k == [list(t) for t in traces]
    assert fresh.colours.tolist() == colour_bytes(colours, len(PALETTE)).tolist()


def test_frames_stay_small_at_full_display_size():
    """A delta frame at 2,000 displayed points, ten new sweeps per chain per frame and 20 points changing colour per
    frame stays under 4 kB; a complete frame at 1,000 sweeps (coordinates included) under 40 kB."""
    rng = np.random.default_rng(1)
    f = feed(n_points=DISPLAY_POINTS, n_chains=2)
    colours = rng.integers(-1, 6, DISPLAY_POINTS)
    traces = [rng.integers(1, 20, 1000), rng.integers(1, 20, 1000)]
    assert frame_bytes(f.frame(traces, colours, k_max=20)) < 40_000
    for _ in range(2 * OVERLAP):
        colours = colours.copy()
        colours[rng.integers(0, DISPLAY_POINTS, 20)] = rng.integers(-1, 6, 20)
        traces = [np.concatenate([t, rng.integers(1, 20, 10)]) for t in traces]
        delta = f.frame(traces, colours, k_max=20)
    assert delta["base"] >= 0 and frame_bytes(delta) < 4_000


def test_one_dimensional_rows_send_their_density_view_while_it_is_new_and_a_wrong_chain_count_is_refused():
    f = feed(dim=1, n_chains=1)
    grid = np.linspace(0, 1, 200)
    view = {"grid": grid, "density": grid ** 2, "components": np.vstack([grid, grid / 2]),
            "component_colours": np.array([0, 3])}
    first = f.frame([[2, 3]], np.zeros(50, dtype=int), k_max=4, view=view)
    assert first["layout"]["y"] is None
    assert np.allclose(decode(first["view"]["density"], np.float32), grid ** 2, atol=1e-6)
    assert first["view"]["component_colours"] == [1, 4]
    frames = [f.frame([[2, 3]], None, k_max=4) for _ in range(2 * OVERLAP)]
    assert all("view" in fr for fr in frames[:OVERLAP - 1]) and "view" not in frames[-1]
    with pytest.raises(ValueError, match="expected 1 traces of K, got 2"):
        f.frame([[2], [3]], None, k_max=4)


def test_a_frame_carries_the_top_of_the_posterior_of_k_axis_apart_from_the_traces():
    """The trace's K axis keeps the burn-in's start (k_max); the posterior of K has its own top (k_hist), so that its
    labels fit under every kept K value. Without one it is the trace's."""
    f = feed(n_chains=1)
    assert f.frame([[10, 3, 2]], None, k_max=12, k_hist=5)["k_hist"] == 5
    assert f.frame([[10, 3, 2, 2]], None, k_max=12)["k_hist"] == 12

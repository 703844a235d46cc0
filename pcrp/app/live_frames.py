"""What the live view's canvas receives each frame: small deltas of one row's chains, as JSON-ready dicts.

Pure (numpy only, no Streamlit). A :class:`RowFeed` remembers what it sent to one row's canvas (the K values of each
chain, the colour of each displayed point) over its last ``OVERLAP`` frames and builds the next frame from the row's
current state. The page may never see some frames (the browser draws a component with the latest data it has, and
skips any that came in between), so each frame is a delta from ``base``, the frame OVERLAP frames back, not from
the one before it:

- ``k_from``: per chain, the number of K values sent up to frame ``base``; ``k`` the values from there on (the page
  keeps those it lacks: a K value never changes once recorded);
- ``colours``: the displayed points whose colour changed since frame ``base``, with their colours now (every colour,
  one byte each, when that is smaller);
- ``view`` (1-D data: the density drawn over the points) when it changed since frame ``base``.

The first OVERLAP frames of a feed (and those after :meth:`RowFeed.restart`) are *complete* (``base`` -1): the
fixed layout, every K value so far and every colour. The page applies a frame when it holds frame ``base`` or a
later one of the same ``feed``, else asks for a restart. Arrays travel as base64 of little-endian bytes (uint16 K
values, uint8 colours, uint16 point indices, float32 coordinates and densities): a frame at N = 2,000 is about a
kilobyte.

Colour bytes: 0 = a tiny cluster (drawn grey), c + 1 = palette colour c (cycled over the palette); the colour
indices are pcrp.app.live_view.matched_colours'.
"""

import base64
import itertools
from collections import deque
from dataclasses import dataclass, field

import numpy as np

_FEED_IDS = itertools.count(1)
K_LIMIT = np.iinfo(np.uint16).max  # K values travel as uint16 (K never nears it: K <= N, and N is capped far below)


def encode(array, dtype):
    """``array`` as base64 of its little-endian ``dtype`` bytes (the page decodes it into a typed array)."""
    return base64.b64encode(np.ascontiguousarray(array, dtype=np.dtype(dtype).newbyteorder("<")).tobytes()).decode()


def decode(text, dtype):
    """The inverse of :func:`encode` (tests read frames with it)."""
    return np.frombuffer(base64.b64decode(text), dtype=np.dtype(dtype).newbyteorder("<"))


def colour_bytes(colours, n_colours):
    """(n,) uint8 colour bytes of colour indices (n,): 0 for TINY (< 0), else index % n_colours + 1."""
    colours = np.asarray(colours, dtype=np.int64)
    return np.where(colours < 0, 0, colours % n_colours + 1).astype(np.uint8)


@dataclass(frozen=True)
class RowLayout:
    """What stays fixed for one row during a run (sent with every snapshot).

    total_sweeps, burn_in: of the run; coords: (n, 1 or 2) float coordinates of the displayed points (1 column:
    1-D data, drawn as a rug under the density); x_domain, y_domain: (low, high) axis ranges (y_domain None for
    1-D); titles: the axes' titles; colour: the row's colour (#rrggbb); palette: the cluster colours, tiny_colour:
    the grey of tiny clusters; n_chains: the chains of the row."""

    total_sweeps: int
    burn_in: int
    coords: np.ndarray
    x_domain: tuple
    y_domain: tuple | None
    titles: tuple
    colour: str
    palette: tuple
    tiny_colour: str
    n_chains: int

    def as_dict(self):
        coords = np.asarray(self.coords, dtype=float)
        return {"total_sweeps": int(self.total_sweeps), "burn_in": int(self.burn_in), "n_points": int(len(coords)),
                "x": encode(coords[:, 0], np.float32),
                "y": encode(coords[:, 1], np.float32) if coords.shape[1] > 1 else None,
                "x_domain": [float(v) for v in self.x_domain],
                "y_domain": [float(v) for v in self.y_domain] if self.y_domain is not None else None,
                "titles": [str(t) for t in self.titles], "colour": self.colour, "palette": list(self.palette),
                "tiny_colour": self.tiny_colour, "n_chains": int(self.n_chains)}


OVERLAP = 10  # frames: a frame still applies after the page missed this many minus one before it (1 s at 10/s)


@dataclass
class RowFeed:
    """The frames of one row's canvas (see the module docstring). layout: its RowLayout."""

    layout: RowLayout
    feed: int = field(default_factory=lambda: next(_FEED_IDS))
    seq: int = -1  # the last frame's number; -1: nothing sent since the (re)start
    k_sent: list = field(default_factory=list)  # K values sent so far, per chain
    colours_sent: np.ndarray | None = None  # (n,) uint8 colour bytes sent so far
    history: deque = field(default_factory=lambda: deque(maxlen=OVERLAP))  # per frame: (K values sent, changed)
    view: dict | None = None  # the last view sent, and the frame that first sent it
    view_seq: int = -1

    def restart(self):
        """Start a new feed: its next OVERLAP frames are complete (the page lost its state, or asked for them)."""
        self.seq = -1

    def frame(self, traces, colours, *, k_max, k_hist=None, view=None, marker_sweep=None):
        """The next frame of this row.

        traces: one (T_c,) K trace per chain (growing; earlier values never change); colours: (n,) colour
        indices of the displayed points now (matched_colours, TINY < 0), or None when unchanged since the last
        frame; k_max: the top of the trace's K axis; k_hist: the top of the posterior of K's axis (default k_max); view: the clusters panel's drawing at 1-D, {"grid": (G,), "density":
        (G,), "components": (C, G), "component_colours": (C,)}, or None when unchanged; marker_sweep: the replayed
        sweep to mark on the trace, or None. Returns a JSON-ready dict."""
        if len(traces) != self.layout.n_chains:
            raise ValueError(f"expected {self.layout.n_chains} traces of K, got {len(traces)}")
        if self.seq < 0:
            self.feed = next(_FEED_IDS)
            self.k_sent = [0] * self.layout.n_chains
            self.history.clear()
        self.seq += 1
        complete = self.seq < OVERLAP
        base = -1 if complete else self.seq - OVERLAP
        out = {"feed": self.feed, "seq": self.seq, "base": base, "k_max": int(k_max),
               "k_hist": int(k_max if k_hist is None else k_hist),
               "marker": int(marker_sweep) if marker_sweep else None}
        if complete:
            out["layout"] = self.layout.as_dict()
        k_from = [0] * self.layout.n_chains if complete else list(self.history[0][0])
        out["k_from"], out["k"] = k_from, []
        for c, trace in enumerate(traces):
            trace = np.asarray(trace)
            out["k"].append(encode(np.clip(trace[k_from[c]:], 0, K_LIMIT), np.uint16))
            self.k_sent[c] = len(trace)
        changed = self._new_colours(colours)
        if complete and self.colours_sent is not None:
            out["colours"] = {"all": encode(self.colours_sent, np.uint8)}
        elif self.colours_sent is not None:
            since = np.unique(np.concatenate([c for _, c in list(self.history)[1:]] + [changed]))
            out["colours"] = self._change(since)
        if view is not None:
            self.view, self.view_seq = _view_dict(view, len(self.layout.palette)), self.seq
        if self.view is not None and (complete or self.view_seq > base):
            out["view"] = self.view
        self.history.append((list(self.k_sent), changed))
        return out

    def _new_colours(self, colours):
        """Keep the colours now; the indices of the displayed points whose colour byte changed."""
        if colours is None:
            return np.zeros(0, dtype=np.int64)
        now = colour_bytes(colours, len(self.layout.palette))
        before, self.colours_sent = self.colours_sent, now
        if before is None or before.shape != now.shape:
            return np.arange(now.size)
        return np.flatnonzero(before != now)

    def _change(self, changed):
        """{"all": every colour byte} or {"index": ``changed`` points, "value": their colour bytes}: the smaller."""
        now = self.colours_sent
        if 3 * changed.size >= now.size:  # uint16 index + uint8 value per change: no smaller than all of them
            return {"all": encode(now, np.uint8)}
        return {"index": encode(changed, np.uint16), "value": encode(now[changed], np.uint8)}


def _view_dict(view, n_colours):
    return {"grid": encode(view["grid"], np.float32), "density": encode(view["density"], np.float32),
            "components": [encode(c, np.float32) for c in view["components"]],
            "component_colours": colour_bytes(view["component_colours"], n_colours).tolist()}


def frame_bytes(frame):
    """The size of a frame as the page receives it (JSON text), in bytes."""
    import json

    return len(json.dumps(frame))

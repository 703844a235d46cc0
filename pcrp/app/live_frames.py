"""What the live view's canvas receives each frame: small deltas of one row's chains, as JSON-ready dicts.

Pure (numpy only, no Streamlit). A :class:`RowFeed` remembers what it already sent to one row's canvas (the K
values of each chain, the colour of each displayed point) and builds the next frame from the row's current state:

- the first frame, and any frame after :meth:`RowFeed.restart`, is a *snapshot*: the fixed layout (sweeps, burn-in,
  the displayed points' coordinates) and every K value and colour so far;
- every later frame is a *delta*: only the K values recorded since the previous frame and only the displayed points
  whose colour changed (or every colour, in one byte each, when that is smaller).

Frames carry ``feed`` (which feed made them) and ``seq`` (0 for a snapshot, then 1, 2, ...): the page's script
applies a delta only on top of the frame before it, and asks for a snapshot when one went missing (a redraw of the
whole page, a reconnect). Arrays travel as base64 of little-endian bytes (uint16 K values, uint8 colours, uint16
point indices, float32 coordinates and densities), so a frame at N = 2,000 is a few hundred bytes.

Colour bytes: 0 = a tiny cluster (drawn grey), c + 1 = palette colour c (cycled over ``n_colours``); the colour
indices are pcrp.app.live_view.matched_colours'.
"""

import base64
import itertools
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


@dataclass
class RowFeed:
    """The frames of one row's canvas (see the module docstring). layout: its RowLayout."""

    layout: RowLayout
    feed: int = field(default_factory=lambda: next(_FEED_IDS))
    seq: int = -1  # the last frame's number; -1: nothing sent yet (the next frame is a snapshot)
    k_sent: list = field(default_factory=list)  # K values sent so far, per chain
    colours_sent: np.ndarray | None = None  # (n,) uint8 colour bytes last sent

    def restart(self):
        """Make the next frame a snapshot (the page lost its state, or asked for one)."""
        self.seq = -1

    def frame(self, traces, colours, *, k_max, view=None, marker_sweep=None):
        """The next frame of this row.

        traces: one (T_c,) K trace per chain (growing; earlier values never change); colours: (n,) colour
        indices of the displayed points now (matched_colours, TINY < 0), or None to leave them as sent;
        k_max: the top of the K axes; view: extra drawing of the clusters panel sent whole each time it is given
        (at 1-D, {"grid": (G,), "density": (G,), "components": (C, G), "component_colours": (C,)}), or None;
        marker_sweep: the replayed sweep to mark on the trace, or None. Returns a JSON-ready dict."""
        if len(traces) != self.layout.n_chains:
            raise ValueError(f"expected {self.layout.n_chains} traces of K, got {len(traces)}")
        snapshot = self.seq < 0
        if snapshot:
            self.feed, self.seq = next(_FEED_IDS), 0
            self.k_sent, self.colours_sent = [0] * self.layout.n_chains, None
        else:
            self.seq += 1
        out = {"feed": self.feed, "seq": self.seq, "snapshot": snapshot, "k_max": int(k_max),
               "marker": int(marker_sweep) if marker_sweep else None}
        if snapshot:
            out["layout"] = self.layout.as_dict()
        out["k_from"], out["k"] = [], []
        for c, trace in enumerate(traces):
            new = np.asarray(trace)[self.k_sent[c]:]
            out["k_from"].append(self.k_sent[c])
            out["k"].append(encode(np.clip(new, 0, K_LIMIT), np.uint16))
            self.k_sent[c] += len(new)
        if colours is not None:
            out["colours"] = self._colour_change(colour_bytes(colours, len(self.layout.palette)))
        if view is not None:
            out["view"] = _view_dict(view, len(self.layout.palette))
        return out

    def _colour_change(self, now):
        """{"all": every colour byte} or {"index": changed points, "value": their colour bytes} (the smaller)."""
        before, self.colours_sent = self.colours_sent, now
        if before is None or before.shape != now.shape:
            return {"all": encode(now, np.uint8)}
        changed = np.flatnonzero(before != now)
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

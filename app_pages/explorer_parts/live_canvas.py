"""The live view's canvas: one st.components.v2 component per row of the Explorer, drawing that row's trace of K,
posterior of K and clusters (live_canvas.js, live_canvas.css: inline, no build step, nothing fetched) from the small
frames of pcrp.app.live_frames, and the status line (live_status.js), both stepped by one clock (live_clock.js).

The scripts travel once per page, not once per frame. A component's JavaScript goes with every element that shows it,
and the rows and the status line are sent again at every frame of the live fragment: their scripts were about 45 KB
a frame of every live page (bench/load_client.py). So the drawing code (the clock, the row's and the status line's
renderers) is one component, :func:`live_code`, that the page sends outside the fragment (with the page itself, so
once per full page run) and that installs the renderers in the page's window under a name that carries a hash of the
code (a page that outlives a new version of the server gets the new code, not the old); the rows and the status line
are components whose script is a few lines that hand their data to those renderers (and wait, a frame at a time,
until the code component has run).

Each component's data travels as a list of one dict: Streamlit looks through a dict's top-level values for data
frames to send as Arrow (0.1-0.2 ms a value, every frame of every live page), and not through a list's.

A frame that does not follow the one before (the page was redrawn whole, or a message was lost) makes the script ask
for a snapshot: its "resync" trigger restarts the row's feed, and the next frame carries everything again.
"""

import hashlib
import pathlib

import streamlit as st

HERE = pathlib.Path(__file__).parent
# The page plays a frame's new sweeps back over this many frame intervals: a frame that comes a little late (a busy
# server draws thirty pages' frames in turn) then finds the count and the traces still moving instead of stopped, and
# the next frame goes on from what is shown; the view runs about half a frame further behind the chains.
PLAYBACK_STRETCH = 1.5
EXPORT = "export default function (component) {"  # how live_canvas.js and live_status.js each begin their renderer


def _renderer(name, source):
    """``source`` (a module whose default export draws one component) as a function expression in its own scope."""
    if source.count(EXPORT) != 1:
        raise ValueError(f"{name} must define its renderer as '{EXPORT}' exactly once")
    return "(() => {\n" + source.replace(EXPORT, "return function (component) {") + "\n})()"


CLOCK = (HERE / "live_clock.js").read_text(encoding="utf-8")  # shared by the rows and the status line
RENDERERS = {"row": _renderer("live_canvas.js", (HERE / "live_canvas.js").read_text(encoding="utf-8")),
             "status": _renderer("live_status.js", (HERE / "live_status.js").read_text(encoding="utf-8"))}
CODE = CLOCK + "".join(f"\nconst {which}Renderer = {body};\n" for which, body in RENDERERS.items())
VERSION = hashlib.sha256(CODE.encode("utf-8")).hexdigest()[:16]
CODE_JS = CODE + ("\nexport default function () {\n  const all = window.pcrpLive || (window.pcrpLive = {});\n"
                  f"  all['{VERSION}'] = all['{VERSION}'] || "
                  + "{" + ", ".join(f"{w}: {w}Renderer" for w in RENDERERS) + "};\n}\n")
LIVE_CODE = st.components.v2.component("pcrp_live_code", js=CODE_JS)


def _loader(which):
    """A component's script that hands its data to the ``which`` renderer of :func:`live_code`'s code."""
    return ("export default function (component) {\n"
            f"  const go = () => {{ const code = window.pcrpLive && window.pcrpLive['{VERSION}'];\n"
            f"    if (code) code.{which}(component); else requestAnimationFrame(go); }};\n"
            "  go();\n}\n")


LIVE_ROW = st.components.v2.component("pcrp_live_row", js=_loader("row"),
                                      css=(HERE / "live_canvas.css").read_text(encoding="utf-8"))
# The status line: in the page's own DOM (no shadow root), so that it reads as the page's text.
LIVE_STATUS = st.components.v2.component("pcrp_live_status", js=_loader("status"),
                                         css="p.pcrp-live-status { margin: 0; }", isolate_styles=False)


def live_code():
    """Send the live view's drawing code (see the module docstring): once per full run of a page that may show a live
    run, outside the live fragment. It draws nothing; it sits at the end of the sidebar, where it moves nothing."""
    with st.sidebar:
        LIVE_CODE(key="pcrp-live-code")


PANEL_LABELS = ("trace of K", "posterior of K", "clusters now")


def live_row(key, feed, frame, *, height, columns, font, x_axis, playback_seconds, running, headers=None,
             large_headers=False, heading=None, compact=False):
    """Draw one row: ``frame`` (RowFeed.frame's dict) of ``feed`` (its pcrp.app.live_frames.RowFeed) into the row's
    canvas ``key``; height in px, columns: the three panels' relative widths, font: axis text size in px, x_axis:
    whether this row labels the x axes (the bottom row); the frame's new sweeps are played back over
    ``playback_seconds`` (times PLAYBACK_STRETCH) while ``running`` (else shown at once); headers: (bold words, the
    rest) per panel, shown as text above it (the top row), in presentation mode's size when ``large_headers``;
    heading: the row's heading line
    as runs [text, bold, CSS colour or ""] (pcrp.app.live_view.heading_runs), shown as text above the row, in
    presentation mode's size when ``large_headers``; compact: the heading in the row's first column beside the
    trace and the clusters (``columns`` then the heading's, the trace's and the clusters' widths), no posterior of K
    (presentation mode with more than two rows)."""
    LIVE_ROW(key=key, data=[{"frame": frame, "height": int(height), "columns": list(columns), "font": int(font),
                             "x_axis": bool(x_axis), "labels": list(PANEL_LABELS),
                             "playback_ms": round(1000 * playback_seconds * PLAYBACK_STRETCH),
                             "running": bool(running),
                             "headers": [list(h) for h in headers] if headers else None,
                             "large_headers": bool(large_headers),
                             "heading": [[str(t), bool(b), str(c)] for t, b, c in heading] if heading else None,
                             "compact": bool(compact)}],
             on_resync_change=feed.restart, height="content")


def live_status(key, run_token, parts, playback_seconds, note=""):
    """The live status line: ``parts`` (live_panel.status_parts' dicts, one per prior), each running prior's sweeps
    done counted up over ``playback_seconds`` (times PLAYBACK_STRETCH) from the count shown (live_status.js);
    ``run_token`` tells runs apart; ``note``: a sentence shown after the counts (how the run shares the server:
    pcrp.app.fair_share), or ""."""
    LIVE_STATUS(key=key, data=[{"run": str(run_token), "groups": list(parts), "note": str(note),
                                "playback_ms": round(1000 * playback_seconds * PLAYBACK_STRETCH)}],
                height="content")

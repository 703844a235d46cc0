"""The Explorer's live panel: the controls, the status line and one row per prior, redrawn by a fragment every
FRAME_SECONDS while the run is live; the previous run's "changed since" note.

While the run is live each row is drawn on a canvas (live_canvas.py) fed small deltas (pcrp.app.live_frames); once
it has ended the rows are Vega-Lite charts (pcrp.app.live_charts) with the replay slider. What depends on the whole
partition (row headings, matched colours, the 1-D density, MNIST's mean digits) is recomputed at most every
LABEL_WORK_SHARE-th of the time it takes (so at N = 100,000 it does not hold the server's GIL every frame)."""

import time

import numpy as np
import streamlit as st

from app_pages.explorer_parts.controls import changed_since, controls, current_config, on_start, pressed
from app_pages.explorer_parts.live_canvas import live_code, live_row, live_status
from app_pages.explorer_parts.row_notes import collapse_notes, merge_notes
from app_pages.explorer_parts.session import explorer, settings
from app_pages.shared import EMPTY_STYLE, guarded, inert, registry, render_slot, session_owner
from pcrp.app import digit_means, explorer_settings as es, live_charts, live_view, warm_up
from pcrp.app.live_params import DEFAULT_ROW_COUNT
from pcrp.app.live_frames import RowFeed, RowLayout
from pcrp.app.live_chain import PAUSED, RUNNING
from pcrp.analyses.density import predictive_density
from pcrp.model import PRIORS
from pcrp.plots.palette import PALETTE, ROW_COLOURS, ROW_MARKDOWN_COLOURS, TINY_GREY
from pcrp.data.projection import pca_projection
from pcrp.summaries.summary import MIN_DRAWS, RHAT_THRESHOLD, agreement, nmi_vi

# Asked between the server's frames. The page plays each frame's new sweeps back over the next FRAME_SECONDS (the
# status line counting up, the canvases drawing, about 12 times a second: live_clock.js), so the view moves like an
# animation up to FRAME_SECONDS behind the chains. Each fragment rerun costs the browser's main thread tens of ms
# whatever the page draws (Streamlit's frontend re-renders the page: bench/streamlit_floor.py), so reruns at animation
# speed took most of a core from the chains of a 2-core server; 0.5 s apart they left the chains 0.72-0.81 of their
# unwatched speed at two rows, 1 s apart 0.85-0.89 (the browser's share fell from 0.28-0.43 of a core to 0.22). The
# trace, the K histogram and the status line still move about 12 times a second; the clusters change once a second
# (docs/records/live_canvas.md).
FRAME_SECONDS = 1.0
# While paused nothing moves but by a button, whose callback returns once its work is recorded (One sweep: its
# sweep), so the panel is not asked for frames: a rerun that the timer asks for while a slow callback runs made
# Streamlit call the callback twice now and then (one press of One sweep, two sweeps).
PAUSED_FRAME_SECONDS = None
WAIT_FRAME_SECONDS = 0.5  # while a Start waits for the kernels' compile: its progress this often
LABEL_WORK_SHARE = 0.1  # the partition-wide work of a frame may take this share of the time between its redos
LABEL_WORK_MAX_SECONDS = 0.5  # ... but is redone at least this often (a cached point estimate's rare cost aside)
# While a run is live its panel redraws itself (a fragment rerun), and Streamlit fades each element of a rerunning
# fragment as "stale" until it is sent again: 40-45% of the time the charts were faded (issue 37). Fresh data come
# every redraw, so the live panel is never shown faded while its run is live (a full page rerun still fades). Streamlit
# has no public option for this: the style selects the panel by its key's class (.st-key-live_panel, public) and the
# frontend's stale marker (data-stale), the one way there is (docs/design.md section 7).
NO_FADE_CSS = ("<style>.st-key-live_panel [data-stale='true'], .st-key-live_panel [data-stale='true'] * "
               "{opacity: 1 !important; transition: none !important;}</style>")
SYMBOLS = {"alpha": "α", "sigma": "σ", "gamma": "γ", "lam": "λ"}  # how a parameter name is printed

def run_prior(run, group):
    """The seating prior (pcrp.model) of one group of a run: that of its first chain."""
    return run.chains[run.groups[group][0]].prior


COVARIANCE_WORDS = {"diag": "diagonal", "spherical": "spherical"}  # a row heading's words for a type other than full


def chain_label(run, name):
    """A row's heading: its group name and its prior's parameters ("CRP (α = 1)", "pCRP (α = 1, r = 1.1)"), and the
    clusters' covariance type unless full ("CRP (α = 1), diagonal covariances")."""
    params = dict(run.config["priors"][name])
    prior = params.pop("prior")
    shown = ", ".join(f"{SYMBOLS.get(k, k)} = {v:g}" for k, v in params.items())
    head = name if name.startswith(PRIORS[prior].label) else f"{name}: {PRIORS[prior].label}"
    label = head if "(" in name else f"{head} ({shown})"
    covariance = run.niw.covariance_type
    return label if covariance == "full" else f"{label}, {COVARIANCE_WORDS[covariance]} covariances"


def status_run_id(run):
    """A number that tells this session's runs apart on the page: counted per session (a server-wide count would tell a
    visitor how many runs others started), never the run's token."""
    return explorer().status_number(run)


def group_status(group, snaps, short=False):
    """One line for a prior's chains, as markdown (an ended run's status line): see status_parts."""
    part = status_parts(group, snaps, short)
    return f"**{group}** {part['state']}: {part['done']:,} / {part['total']:,} sweeps{part['rest']}"


def status_parts(group, snaps, short=False):
    """A prior's part of the status line, {"group", "state", "done", "total", "rest"}: its chains' state, progress
    (the slowest chain), then in ``rest`` wall-clock speed and time left (not when ``short``: five rows on a
    projector) and why they stopped. The live status line (live_canvas.live_status) counts "done" up as the page
    plays the sweeps back."""
    first = snaps[0]
    done = min(s.sweeps_done for s in snaps)
    states = {s.state for s in snaps}
    state_word = first.state if len(states) == 1 else "/".join(sorted(states))
    text = ""
    if len(snaps) > 1:
        text += f" ({len(snaps)} chains)"
    rates = [s.sweeps_per_second for s in snaps if s.state == RUNNING and s.sweeps_per_second > 0]
    if rates and not short:
        text += f", {min(rates):,.0f}/s"
        left = max((s.seconds_left for s in snaps if np.isfinite(s.seconds_left)), default=float("nan"))
        if np.isfinite(left):
            text += f", about {left:,.0f} s left"
    reasons = {s.stop_reason for s in snaps if s.stop_reason}
    if reasons:
        text += f" (stopped because {'; '.join(sorted(reasons))})"
    errors = {s.error for s in snaps if s.error}
    if errors:
        text += f" (failed: {'; '.join(sorted(errors))})"
    return {"group": group, "state": state_word, "done": int(done), "total": int(first.total_sweeps), "rest": text}


def metrics_text(run, group, snaps):
    """Mean and max K after burn-in pooled over the prior's chains, NMI now (first chain)."""
    first = snaps[0]
    parts = []
    after = [s.K[run.plan.burn_in:] for s in snaps]
    if all(a.size for a in after):
        pooled = np.concatenate(after)
        parts.append(f"mean K {pooled.mean():.2f} (max {pooled.max()}) after burn-in")
    else:
        parts.append("in burn-in")
    if run.dataset.labels is not None:
        parts.append(f"NMI now {nmi_now(run, group, first):.2f}")
    return " · ".join(parts)


NMI_EVERY_SECONDS = 1.0


def nmi_now(run, group, first):
    """NMI of the labels of ``first`` (the snapshot of ``group``'s first chain) against the true classes, recomputed
    at most every NMI_EVERY_SECONDS while its chain runs (a button pressed while a live frame is drawn waits for the
    frame). pcrp.summaries.summary.nmi_vi's bincount, not scikit-learn's sort: 29 ms a call at N = 100,000 in a profile of the
    live fragment."""
    cache = explorer().view(run).nmi
    now = time.monotonic()
    if group not in cache or first.state != RUNNING or now - cache[group][0] > NMI_EVERY_SECONDS:
        cache[group] = (now, nmi_vi(run.dataset.labels, first.labels)[0])
    return cache[group][1]


RHAT_EVERY_SECONDS = 2.0
ONE_CHAIN = "one chain: no R-hat"  # where the badge would be, for a row of one chain (R-hat needs two)


def rhat_badge(run, group):
    """R-hat of K and of the log joint over the prior's chains, as a short coloured text (recomputed at
    most every RHAT_EVERY_SECONDS while the chains run): see rhat_text. A row of one chain has none, and says so
    where the badge would be (:data:`ONE_CHAIN`), never silently."""
    if len(run.groups[group]) < 2:
        return ONE_CHAIN
    cache = explorer().view(run).rhat
    key = group
    now = time.monotonic()
    if key not in cache or (run.running and now - cache[key][0] > RHAT_EVERY_SECONDS) or \
            (not run.running and cache[key][2]):
        chain_set = run.chain_set(group)
        value = None
        if chain_set is not None and chain_set.n_kept >= MIN_DRAWS:
            value = chain_verdicts({"K": chain_set.K_after_burn_in, "log joint": chain_set.log_joint_after_burn_in})
        cache[key] = (now, value, run.running)
    return rhat_text(cache[key][1])


def chain_verdicts(quantities):
    """{name: pcrp.app.live_view.ChainVerdict} of (chain, draw) values {name: array}: the library's agreement, and
    where it finds none, the chains' means and MCSEs (only then: they take the time)."""
    verdicts = {}
    for name, values in quantities.items():
        diag = agreement(values)
        if diag["agree"] or diag["settled"]:  # (the means for the words; MCSEs would not change the verdict)
            means = [(float(m), float("nan")) for m in np.asarray(values, dtype=float).mean(axis=1)]
        else:
            means = live_view.chain_means_and_mcse(values)
        verdicts[name] = (live_view.chain_verdict(diag, means), bool(diag["settled"]))
    return verdicts


def rhat_text(verdicts):
    """The R-hat badge of a row heading from chain_verdicts' result (None: too few kept draws). It shows the worse
    R-hat of K's and the log joint's (that of a quantity every chain holds at one value says nothing and is left out)
    and what it means:

    - "chains agree": pcrp.summaries.summary.chains_agree on both (R-hat at most RHAT_THRESHOLD);
    - "(above 1.01: more sweeps would settle it)": R-hat above the threshold but at most live_view.UNSETTLED_MAX_RHAT,
      and on every such quantity the chains' means lie within live_view.MCSE_Z combined MCSEs of each other (R-hat
      1.017 with mean K 2.02 and 2.01 in two chains): the library's verdict (pcrp.analyses.collapse, the diagnostics
      table) still flags it, so the badge is not green, but "disagree" would claim more than the numbers show;
    - "chains disagree", with the chains' mean K (or "on the log joint") otherwise."""
    if verdicts is None:
        return "R-hat after a few kept draws"
    rhats = [v.rhat for v, settled in verdicts.values() if not settled and np.isfinite(v.rhat)]
    text = f"R-hat {max(rhats):.3f}" if rhats else "R-hat undefined"
    states = {v.state for v, _ in verdicts.values()}
    if states == {"agree"}:
        return f":green[{text}: chains agree]"
    if "disagree" not in states:
        return f":orange[{text} (above {RHAT_THRESHOLD:g}: more sweeps would settle it)]"
    k = verdicts["K"][0]
    if k.state == "disagree":
        low, high = min(k.means), max(k.means)
        spread = f"{low:.2f} vs {high:.2f}" if len(k.means) == 2 else f"{low:.2f} to {high:.2f}"
        return f":orange[{text}: chains disagree, mean K {spread}]"
    return f":orange[{text}: chains disagree on the log joint]"


TINY_WORDS = f"grey = tiny, < {live_view.TINY_SHARE:.0%} of points"
CHART_COLUMNS = [2.3, 1.05, 1.6]  # trace | posterior of K | clusters
# Presentation mode with more than two rows (five priors on a projector): each row is its heading beside two charts,
# heading | trace | clusters, live and once ended (canvases both); the posterior of K goes (the heading says each
# row's mean K) and so do MNIST's mean digits. Over the heading's line and the three charts of two rows, this gives
# every chart a plot of about 60 px and its text 16 px at five rows, where three charts under a heading line left
# 45 px and 12 px text, a y title cut at the bottom row.
COMPACT_COLUMNS = [1.9, 2.3, 1.6]


def compact(presentation, n_rows):
    """Whether the rows are drawn compact (:data:`COMPACT_COLUMNS`): presentation mode with more than two rows."""
    return bool(presentation) and n_rows > DEFAULT_ROW_COUNT


def header_texts(run):
    """What each column of charts shows, once above the rows: (bold words, the rest) per column."""
    several = any(len(names) > 1 for names in run.groups.values())
    clusters = "density now" if run.dataset.dim == 1 else "PCA view" if run.dataset.dim > 2 else "clusters now"
    return (("trace of K", (" (dashed: other chains)" if several else "") + ", grey = burn-in"),
            ("posterior of K", ", all chains" if several else ""), (clusters, f", {TINY_WORDS}"))


def shown_headers(run, presentation):
    """(column widths, (bold words, the rest) per column) of the rows as drawn: three charts, or compact (a heading
    column, then the trace and the clusters)."""
    texts = header_texts(run)
    if compact(presentation, len(run.groups)):
        return COMPACT_COLUMNS, (("", ""), texts[0], texts[2])
    return CHART_COLUMNS, texts


def column_headers(run, presentation):
    """The column headers of an ended run's charts (larger text for a projector; a live run's canvas draws them)."""
    for col, (bold, rest) in zip(st.columns(CHART_COLUMNS), header_texts(run)):
        text = f"**{bold}**{rest}"
        if presentation:
            col.markdown(text)
        else:
            col.caption(text)


def view_coordinates(run):
    """The coordinates "clusters now" draws, (N, 1 or 2), and their axis titles: the data's columns for d <= 2,
    else the first two principal components of the standardised data (fixed for the run, computed once)."""
    ds_run = run.dataset
    if ds_run.dim <= 2:
        return ds_run.X, tuple(ds_run.columns)
    view = explorer().view(run)
    if view.projection is None:
        view.projection = pca_projection(ds_run.X)
    return view.projection.coords, view.projection.titles


def row_labels(snaps, replay_index):
    """The partition a row shows (the first chain now, or at the replayed sweep) and the replayed sweep."""
    first = snaps[0]
    if replay_index is not None and replay_index < len(first.replay):
        return first.replay[replay_index], int(first.replay_sweeps[replay_index])
    return first.labels, None


def row_colours(run, shown):
    """{group: (N,) colour index per point} of the partitions ``shown`` {group: labels}: matched to the true
    classes when the data have them, else to the top row's colours at the previous redraw (so colours stay
    put from one redraw to the next and mean the same cluster in both rows)."""
    if run.dataset.labels is not None:
        reference = live_view.reference_colours(run.dataset.labels)
    else:
        kept = explorer().view(run).colour_reference
        first = next(iter(shown.values()))
        reference = kept if kept is not None else live_view.reference_colours(first)
    colours = {group: live_view.matched_colours(labels, reference) for group, labels in shown.items()}
    if run.dataset.labels is None:
        explorer().view(run).colour_reference = colours[next(iter(shown))]
    return colours


PRESENT_CHART_HEIGHT = 198  # px per row (the bottom row adds its axis): both rows fit 1280 x 800
NORMAL_CHART_HEIGHT = 138  # ... with the sidebar collapsed and the data and "what to watch for" lines above
MIN_CHART_HEIGHT = 70  # px: with more than two rows the charts shrink, to this at least (their axes at normal size)
# Presentation mode with more than two rows (compact): the px of a 1280 x 800 screen below the title, the controls,
# the status line (three lines once a run has stopped and says why) and the column headers, less the bottom row's
# axis, shared by the rows; each row loses COMPACT_GAP of its share to the gap between rows (measured in Chromium at
# 1280 x 800: tests/test_browser_presentation.py holds every chart and heading inside the screen, live and stopped,
# and the charts' text at least 14 px).
COMPACT_ROWS_SPACE = 470
COMPACT_GAP = 6
COMPACT_FONT = 16  # px: the compact rows' axis text (presentation mode's 18 px leaves no plot at five rows)
PRESENT_FONT = 18  # px: presentation mode's axis text, two rows
NORMAL_FONT = 12


DIGIT_STRIP_ROOM = 46  # px of a row that the MNIST mean digits take (32 px images and a gap)


def chart_height(presentation, n_rows):
    """Height in px of one row's charts (the bottom row adds its axis): two rows at full height; more rows shrunk,
    in presentation mode (compact rows) so that all of them (five at most) fit a 1280 x 800 projector."""
    if n_rows <= 2:
        return PRESENT_CHART_HEIGHT if presentation else NORMAL_CHART_HEIGHT
    if presentation:
        return max(MIN_CHART_HEIGHT, min(PRESENT_CHART_HEIGHT, COMPACT_ROWS_SPACE // n_rows - COMPACT_GAP))
    return max(MIN_CHART_HEIGHT, round(NORMAL_CHART_HEIGHT * 2 / n_rows))


def chart_font(presentation, n_rows):
    """The charts' axis text in px: presentation mode's 18 px for two rows, 16 px compact (more rows), else 12."""
    if not presentation:
        return NORMAL_FONT
    return COMPACT_FONT if compact(presentation, n_rows) else PRESENT_FONT


def large_chart_text(presentation, n_rows):
    """Whether the ended run's charts (Vega-Lite) use presentation mode's large axis text (18 px): in presentation
    mode (two rows at most there: more are compact rows, canvases live and ended)."""
    return bool(presentation)


def row_heading(run, index, group, snaps, labels, marker, note=""):
    """A row's heading line: its prior in the row's colour, its clusters now, a note, K after burn-in, NMI, R-hat."""
    badge = rhat_badge(run, group)
    return (f"**:{ROW_MARKDOWN_COLOURS[index % len(ROW_MARKDOWN_COLOURS)]}[{chain_label(run, group)}]** · "
            f"**{live_view.counts_text(labels)}**" + (f" · {note}" if note else "")
            + f" · {metrics_text(run, group, snaps)}"
            + (f" · {badge}" if badge else "") + (f" · showing sweep {marker:,}" if marker else ""))


def row_geometry(run, presentation, last):
    """(height in px of a row's charts, large text, MNIST digits shown) for a row of ``run``."""
    large = large_chart_text(presentation, len(run.groups))
    axis = 45 if large or len(run.groups) <= 2 else 40  # px the bottom row's x axis adds (less at small text)
    # MNIST: each row shows its clusters' mean digits too (not compact: five rows leave no room for them)
    digits = digit_means.is_digit_images(run.dataset.raw) and not compact(presentation, len(run.groups))
    strip_room = DIGIT_STRIP_ROOM if digits and presentation else 0  # ... and the rows still fit the projector
    return chart_height(presentation, len(run.groups)) - strip_room + (axis if last else 0), large, digits


def view_domain(values):
    """(low, high) of an axis showing ``values`` (n,), with 5% room on each side."""
    return float(values.min() - 0.05 * np.ptp(values)), float(values.max() + 0.05 * np.ptp(values))


def row_density(run, group, labels, colours):
    """1-D data: the model's predictive density of a new point given the partition ``labels`` (N,) (the prior's
    seating weights, the new-cluster term included in the total) on a 200-point grid, and the clusters' terms with
    their colours (from ``colours`` (N,)): (grid, density, components (K, G), component colours (K,))."""
    x = view_coordinates(run)[0][:, 0]
    grid = np.linspace(*view_domain(x), 200)
    density, comps = predictive_density(grid, x, np.asarray(labels), run_prior(run, group), run.niw)
    first_point = np.unique(np.asarray(labels), return_index=True)[1]  # components: in np.unique order
    return grid, density, comps[:-1], colours[first_point]


def prior_row(run, index, group, snaps, replay_index, k_max, presentation, last, colours, note="", k_hist=None):
    """One prior of an ended run: a heading with its figures, then trace (every chain) | posterior of K (pooled) |
    clusters (the first chain now, or at the replayed sweep), as Vega-Lite charts. Rows share their x axes; only
    the last row labels them."""
    ds_run, plan = run.dataset, run.plan
    colour = ROW_COLOURS[index % len(ROW_COLOURS)]
    height, large, digits = row_geometry(run, presentation, last)
    labels, marker = row_labels(snaps, replay_index)
    st.markdown(row_heading(run, index, group, snaps, labels, marker, note))
    common = dict(presentation=large, x_axis=last)
    cols = st.columns(CHART_COLUMNS)
    cols[0].vega_lite_chart(live_charts.trace_chart([live_view.trace_envelope(s.K) for s in snaps], burn_in=plan.burn_in,
                                              total_sweeps=plan.iters, k_max=k_max, colour=colour,
                                              marker_sweep=marker, **common),
                            key=f"trace-{group}", width="stretch", height=height)
    cols[1].vega_lite_chart(live_charts.k_histogram_chart(live_view.running_k_histogram([s.K for s in snaps], plan.burn_in),
                                                    k_max=k_max if k_hist is None else k_hist, colour=colour,
                                                    **common),
                            key=f"khist-{group}", width="stretch", height=height)
    shown = live_view.display_subset(ds_run.n)
    xy, titles = view_coordinates(run)
    x = xy[:, 0]
    x_domain = view_domain(x)
    if ds_run.dim == 1:
        grid, density, comps, comp_colours = row_density(run, group, labels, colours)
        chart = live_charts.density_chart(grid, density, comps, comp_colours, x[shown], colours[shown],
                                    x_domain=x_domain, x_title=titles[0], **common)
    else:
        chart = live_charts.clusters_chart(x[shown], xy[shown, 1], colours[shown], x_domain=x_domain,
                                     y_domain=view_domain(xy[:, 1]), x_title=titles[0],
                                     y_title=titles[1], **common)
    cols[2].vega_lite_chart(chart, key=f"clusters-{group}", width="stretch", height=height)
    if digits:  # what each cluster is, as its mean image in its colour
        strip = digit_means.digit_strip(digit_means.cluster_mean_images(ds_run.raw, colours))
        if strip is not None:
            cols[2].image(strip, output_format="PNG")


def partition_colours(run, group, labels):
    """(N,) colour indices of a partition ``labels`` of the run's data shown for row ``group`` outside its charts (the
    posterior summary's point estimate, the cluster sizes and densities now): matched as the rows are, to the true
    classes, else to the row's colours as last drawn, so that one cluster has one colour on the whole page (live,
    stopped and summarised)."""
    if run.dataset.labels is not None:
        reference = live_view.reference_colours(run.dataset.labels)
    else:
        reference = explorer().view(run).shown_colours.get(group)
        if reference is None:
            reference = live_view.reference_colours(labels)
    return live_view.matched_colours(labels, reference)


def colours_and_notes(run, groups, shown):
    """({group: (N,) matched colour per point}, {group: note on merged true classes or collapsed chains}) of the
    partitions ``shown`` {group: labels}."""
    colours = row_colours(run, shown)
    explorer().view(run).shown_colours = colours  # (partition_colours matches the other figures to them)
    notes = merge_notes(run, shown)
    for group, text in collapse_notes(run, groups).items():
        notes[group] = f"{notes[group]} · {text}" if group in notes else text
    return colours, notes


def row_feed(run, index, group):
    """The pcrp.app.live_frames.RowFeed of a row's canvas (made on its first frame, kept for the run)."""
    feeds = explorer().view(run).feeds  # (of this run only: another run's view is dropped whole)
    if group not in feeds:
        xy, titles = view_coordinates(run)
        shown = live_view.display_subset(run.dataset.n)
        layout = RowLayout(total_sweeps=run.plan.iters, burn_in=run.plan.burn_in, coords=xy[shown],
                           x_domain=view_domain(xy[:, 0]), y_domain=view_domain(xy[:, 1]) if xy.shape[1] > 1 else None,
                           titles=titles, colour=ROW_COLOURS[index % len(ROW_COLOURS)], palette=tuple(PALETTE),
                           tiny_colour=TINY_GREY, n_chains=len(run.groups[group]))
        feeds[group] = RowFeed(layout)
    return feeds[group]


def partition_parts(run, groups, replay_index, presentation):
    """What each row shows of its partition now, {group: {"heading", "colours" (the displayed points'), "view"
    (1-D density) or None, "strip" (MNIST mean digits) or None}}: the work a frame may skip (see the module
    docstring)."""
    shown = {group: row_labels(group_snaps, replay_index) for group, group_snaps in groups.items()}
    colours, notes = colours_and_notes(run, groups, {group: labels for group, (labels, _) in shown.items()})
    displayed = live_view.display_subset(run.dataset.n)
    digits = digit_means.is_digit_images(run.dataset.raw)
    parts = {}
    for index, (group, group_snaps) in enumerate(groups.items()):
        labels, marker = shown[group]
        view = None
        if run.dataset.dim == 1:
            grid, density, comps, comp_colours = row_density(run, group, labels, colours[group])
            big = comp_colours >= 0  # tiny clusters' terms lie flat at zero: not sent
            view = {"grid": grid, "density": density, "components": comps[big], "component_colours": comp_colours[big]}
        strip = digit_means.digit_strip(digit_means.cluster_mean_images(run.dataset.raw, colours[group])) \
            if digits and not compact(presentation, len(groups)) else None
        parts[group] = {"heading": row_heading(run, index, group, group_snaps, labels, marker, notes.get(group, "")),
                        "colours": colours[group][displayed], "view": view, "strip": strip, "marker": marker}
    return parts


def fresh_parts(run, groups, replay_index, presentation):
    """partition_parts, recomputed when the last ones are older than their cost / LABEL_WORK_SHARE (or were of
    another run or replayed sweep); returns (parts, whether they are new)."""
    view = explorer().view(run)
    kept = view.parts
    now = time.monotonic()
    key = (replay_index, tuple(groups))
    if kept is not None and kept["key"] == key and now < kept["next"]:
        return kept["parts"], False
    began = time.perf_counter()
    parts = partition_parts(run, groups, replay_index, presentation)
    cost = time.perf_counter() - began
    view.parts = {"key": key, "parts": parts, "next": now + min(cost / LABEL_WORK_SHARE, LABEL_WORK_MAX_SECONDS)}
    return parts, True


def histogram_top(run, groups, live):
    """The top of the rows' posterior of K axes (pcrp.app.live_view.k_histogram_top). A live page plays each frame
    back until the next, so a row that had no kept sweep at the previous frame may still show its burn-in."""
    burn_in = run.plan.burn_in
    after = {group: any(s.K.size > burn_in for s in snaps) for group, snaps in groups.items()}
    view = explorer().view(run)
    before, view.k_hist_after = view.k_hist_after, after
    may_show = {group: not before.get(group, False) for group in groups} if live else \
        {group: not after[group] for group in groups}
    return live_view.k_histogram_top({group: [s.K for s in snaps] for group, snaps in groups.items()}, burn_in,
                                     may_show)


def canvas_row(run, group, snaps, k_max, k_hist, presentation, last, part, new):
    """One prior of a live run: its canvas row (trace | posterior of K | clusters) with its heading, sent the K values
    since the last frame and, when ``new``, the partition's colours and view from ``part`` (partition_parts'). The
    top row's canvas carries the column headers. The heading is text in the canvas row, not a markdown element: a
    markdown element per row, sent again at every frame, cost the browser more than the rows' drawing (five rows:
    0.56 of a core with them, 0.34 without; docs/records/live_canvas.md)."""
    index = list(run.groups).index(group)
    height, large, _ = row_geometry(run, presentation, last)
    feed = row_feed(run, index, group)
    frame = feed.frame([s.K for s in snaps], part["colours"] if new or feed.seq < 0 else None, k_max=k_max,
                       k_hist=k_hist,
                       view=part["view"] if new or feed.seq < 0 else None, marker_sweep=part["marker"])
    widths, headers = shown_headers(run, presentation)
    live_row(f"canvas-{group}", feed, frame, height=height, columns=widths,
             font=chart_font(presentation, len(run.groups)), x_axis=last, playback_seconds=FRAME_SECONDS,
             running=any(s.state == RUNNING for s in snaps), headers=headers if index == 0 else None,
             large_headers=presentation, heading=live_view.heading_runs(part["heading"]),
             compact=compact(presentation, len(run.groups)))
    if part["strip"] is not None:
        st.columns(widths)[-1].image(part["strip"], output_format="PNG")


def rows_and_replay(run, snaps, groups, presentation, frozen=False):
    """The live panel below its status line: one row per prior (canvases while the run is live, Vega-Lite charts and
    the replay slider once it has ended). snaps: {chain: Snapshot}; groups: {group: [its chains' Snapshots]};
    frozen: the run has just ended but the page is not redrawn yet: its canvases as they were, no slider."""
    # the replay slider sits below the charts (so showing it does not move them): read its value first
    first = next(iter(snaps.values()))
    options = [f"{s:,}" for s in first.replay_sweeps] + ["now"]  # past at the left, now at the right
    view = explorer().view(run)
    choice = view.replay if not (run.running or frozen) else "now"
    replay_index = options.index(choice) if choice in options[:-1] else None
    # the K axes grow in steps, so the charts' specifications (and the page) stay still
    k_top = max([int(s.K.max()) for s in snaps.values() if s.K.size] + [3])
    view.k_axis = k_max = max(view.k_axis, int(np.ceil((k_top + 1) / 4) * 4))
    k_hist = histogram_top(run, groups, live=run.live or frozen)
    # compact rows (five on a projector) stay canvases once the run has ended: their text is measured to fit
    if run.live or frozen or compact(presentation, len(groups)):
        parts, new = fresh_parts(run, groups, replay_index, presentation)
        for index, (group, group_snaps) in enumerate(groups.items()):
            canvas_row(run, group, group_snaps, k_max, k_hist, presentation, index == len(groups) - 1, parts[group],
                       new)
    else:
        column_headers(run, presentation)
        shown = {group: row_labels(group_snaps, replay_index)[0] for group, group_snaps in groups.items()}
        colours, notes = colours_and_notes(run, groups, shown)
        for index, (group, group_snaps) in enumerate(groups.items()):
            prior_row(run, index, group, group_snaps, replay_index, k_max, presentation,
                      last=index == len(groups) - 1, colours=colours[group], note=notes.get(group, ""),
                      k_hist=k_hist)
    if run.plan.thin_raised:
        st.caption(run.plan.describe())
    if not run.running and not frozen and len(options) > 1:
        # the widget shows the view's sweep (its change goes into the view)
        st.session_state[REPLAY_KEY] = choice if choice in options else "now"
        st.select_slider("Replay: show the clusters at sweep", options=options, key=REPLAY_KEY, on_change=on_replay,
                         args=(run,))
    ex = explorer()
    if ex.polling and frame_seconds(run) != ex.frame_seconds:  # paused or resumed (shown above)
        if pressed() and frame_seconds(run) is None:
            # Paused by this press: this frame shows it, and the fragment's next tick stops the polling. A page run
            # started now would drop this frame (Streamlit clears a session's unsent messages when a run starts), so
            # under load the press showed only once that page run had waited its turn: seconds at 30 visitors.
            return
        ex.press_redraw = pressed()
        st.rerun(scope="app")  # the fragment's pace is set by a page run


REPLAY_KEY = "scrub"


def on_replay(run):
    explorer().view(run).replay = st.session_state[REPLAY_KEY]


def live_panel(data, presentation):
    """The controls, the status line and one row per prior: a fragment (see live_section) that redraws itself every
    FRAME_SECONDS while the run is live. data: a PageData.

    The buttons are in it (a press reruns the fragment only, and the status line follows the press in the same
    run): as a fragment of their own they saved the server about 5 ms a frame but not the browser (Streamlit's
    frontend redraws every element of the page on each fragment run), and a press then waited for the panel's next
    frame. The column headers are drawn by the top row's canvas while the run is live (fewer elements a frame)."""
    ended, run = False, None
    ex = explorer()
    urgent, ex.press_redraw = pressed() or ex.press_redraw, False
    with guarded("the live view"), render_slot(urgent=urgent):
        if ex.app_rerun:
            ex.app_rerun = False
            st.rerun(scope="app")
        run = ex.run
        S = settings()
        controls(run, data)
        if ex.start_pending:
            waiting_for_kernels(data)
            return
        if run is None and data.dataset is None:
            return  # the data lines above say what is missing (Start is disabled)
        if run is None:
            labels = [PRIORS[S[es.prior_key(row)]].label for row in es.active_rows(S)]
            st.info(f"Press **Start** to run {' and '.join(labels) if len(labels) < 3 else ', '.join(labels)}"
                    + (" side by side" if len(labels) > 1 else "") + " on these data.")
            return
        session_owner().adopt(run)
        run.watch()  # drawn: a run nobody watches for a while gives its place back (RunRegistry.sweep)
        run.set_pace(es.PACES[S["pace"]])
        if run.queued:  # the server's places are taken: its place in the queue and the wait (it starts by itself)
            st.info(registry().queue_text(run), icon=":material/hourglass_top:")
            return
        if run.reclaimed:
            st.info(f"Paused by the server: nobody watched this run for {registry().reclaim_seconds / 60:g} minutes, "
                    "so its place went to other visitors. Press **Resume** to go on (it waits in the queue when the "
                    "server is full).")
        snaps = run.snapshots()
        groups = {group: [snaps[name] for name in names] for group, names in run.groups.items()}
        short = presentation and len(groups) > 2
        if run.live:
            with st.container(key="status"):
                live_status("status-line", status_run_id(run),
                            [status_parts(group, g, short) for group, g in groups.items()], FRAME_SECONDS,
                            note=registry().share_text(run))
        else:
            st.container(key="status").markdown(" · ".join(group_status(group, g, short)
                                                           for group, g in groups.items()))
        ended = ex.polling and not run.live
        if not ended:  # (the redraw of the whole page below draws an ended run's charts: not twice, they are slow)
            rows_and_replay(run, snaps, groups, presentation)
        elif not ex.view(run).end_shown:
            # The first frame after the run ended (finished, or Stop) says so above and keeps the rows as they were;
            # the next frame redraws the whole page. A page rerun started in this frame would clear the status line's
            # message before the server had sent it (Streamlit clears what a session has not yet sent when a run
            # starts), and "stopped" then showed only once the whole page had been run again (0.3-0.5 s at
            # N = 100,000 instead of 0.1 s: docs/records/live_canvas.md).
            ex.view(run).end_shown = True
            rows_and_replay(run, snaps, groups, presentation, frozen=True)
            return
    if ended:
        # redraw the whole page once, with its details, and stop polling. Stop does not wait for the chains' calls in
        # flight (so "stopped" shows at once): they are waited for here, outside the drawing slot, so that the
        # redraw shows where the chains stopped
        run.wait_settled()
        st.rerun(scope="app")


def waiting_for_kernels(data):
    """A Start pressed before the kernels' separate compile finished (once per installation): what it waits for,
    with measured figures, every frame; the run starts once they are ready."""
    w = warm_up.state(settings()["covariance"])  # the sweep of its covariance type (the other groups compile on)
    if w.ready:
        explorer().start_pending = False
        on_start(data)
        st.rerun(scope="app")
    elif w.error:
        explorer().start_pending = False
        st.error(w.describe())
    else:
        st.info(w.describe() + " The run starts by itself when it is ready.", icon=":material/hourglass_top:")
        st.progress(w.groups_done / w.n_groups)


def frame_seconds(run):
    """Seconds between frames of a live run: FRAME_SECONDS, or PAUSED_FRAME_SECONDS (none) when every chain is
    paused (unless the run waits in the server's queue to resume: its page shows its place and when it starts)."""
    return PAUSED_FRAME_SECONDS if set(run.states.values()) == {PAUSED} and not run.queued else FRAME_SECONDS


def live_section(data, presentation):
    """The previous run's "changed since" note and the live panel (polling while the run is live)."""
    ex = explorer()
    run = ex.run
    ex.polling = (run is not None and run.live) or ex.start_pending
    ex.frame_seconds = (frame_seconds(run) if run is not None and run.live else WAIT_FRAME_SECONDS) \
        if ex.polling else None
    if run is not None:
        session_owner().adopt(run)
        changed = changed_since(run.config, current_config(data))
        if changed:
            # (the words follow Start's state: with no data in use it is disabled, and the line above says why)
            then = ("Press **Start** to run with the current settings." if data.dataset is not None else
                    "**Start** runs them once data are in use (see above).")
            st.warning(f"Showing the previous run, on {inert(run.dataset.description)} N = {run.dataset.n}. Changed "
                       f"since it started: {', '.join(changed)}. {then}")
    st.html(NO_FADE_CSS if ex.polling else EMPTY_STYLE)  # always one element: see shared.EMPTY_STYLE
    live_code()  # the live view's drawing code, once per page run (not with every frame: live_canvas.py)
    # a fragment made on each full run: whether it polls follows the run as this page run finds it
    with st.container(key="live_panel"):
        st.fragment(live_panel, run_every=ex.frame_seconds)(data, presentation)

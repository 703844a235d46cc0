"""Explorer: CRP and pCRP cluster the same data live, one above the other.

The page only arranges widgets and calls the library: runs are pcrp.live.LiveRun objects (threads,
memory plan, lifetime), display summaries come from pcrp.live_view, figures from pcrp.plots.
Settings live in st.session_state["explorer"] for the whole session and are mirrored in the URL.
"""

import json

import numpy as np
import pandas as pd
import streamlit as st

from app_pages.shared import guarded, registry, session_owner
from pcrp import data, explorer_settings as es, live_view, plots
from pcrp.density import mixture_density
from pcrp.live import PAUSED, RUNNING, SESSION_BUDGET_BYTES, ServerBusy, new_run
from pcrp.model import CRP, WITHIN_SCALE, ModelError, PowerCRP, resolve_niw
from pcrp.sampler import SamplerError, warm_up
from pcrp.summary import metric_summary, nmi, oracle_alpha, vi

state = st.session_state
CHAINS = ("CRP", "pCRP")
REDRAW_SECONDS = 0.5


# ----------------------------------------------------------------------------- settings
def settings():
    """The session's settings dict; on the session's first visit, read from the URL (validated)."""
    if "explorer" not in state:
        values = es.defaults()
        parsed, problems = es.from_query(st.query_params.to_dict())
        values.update(parsed)
        state.explorer = values
        state.explorer_url_problems = problems
        token = st.query_params.get("run")
        if token and state.get("run") is None:
            run = registry().get(token)
            if run is not None:
                state.run = run
    return state.explorer


def bind(name):
    """Widget key for setting ``name``, filled from the session's settings if the widget is new."""
    key = "w_" + name
    if key not in state:
        state[key] = settings()[name]
    return key


def remember(names):
    """Copy the rendered widgets' values into the session's settings and the URL."""
    values = settings()
    for name in names:
        if "w_" + name in state:
            values[name] = state["w_" + name]
    query = es.to_query(values)
    run = state.get("run")
    if run is not None:
        query["run"] = run.token
    if st.query_params.to_dict() != query:
        st.query_params.from_dict(query)


S = settings()
st.title("CRP vs pCRP, live")
for problem in state.pop("explorer_url_problems", []):
    st.warning(f"Ignored a setting in the address bar: {problem}.")


# ----------------------------------------------------------------------------- data
@st.cache_data(max_entries=16, show_spinner=False)
def builtin_dataset(source, sim_n, sim_seed, digits, mnist_n, embedding, dims):
    """A built-in data set: a pure function of its settings, shared by all sessions (bounded)."""
    if source == "old-faithful":
        return data.old_faithful()
    if source == "mnist":
        return data.mnist(digits=list(digits), n=mnist_n, embedding=embedding, dims=dims, seed=0)
    return data.simulation(source, n=sim_n, seed=sim_seed)


def builtin_key(values):
    source = values["data"]
    if source == "mnist":
        return (source, tuple(values["digits"]), values["mnist_n"], values["embedding"], values["dims"])
    if source in ("sim1", "sim2"):
        return (source, values["sim_n"], values["sim_seed"])
    return (source,)


with st.sidebar:
    st.header("Data")
    st.selectbox("Data set", es.SOURCES, format_func=es.SOURCE_LABELS.get, key=bind("data"))
    source = state["w_data"]
    if source == "mnist":
        st.multiselect("Digits", list(range(10)), key=bind("digits"))
        st.number_input("N (bundled file: 500 per digit)", 50, 5000, step=50, key=bind("mnist_n"))
        st.selectbox("Embedding", ["spectral", "pca"], key=bind("embedding"))
        st.number_input("Dimensions", 1, 50, key=bind("dims"))
    if source in ("sim1", "sim2"):
        st.number_input("N", 10, data.MAX_ROWS, step=50, key=bind("sim_n"))
        st.number_input("Data seed", 0, 10_000, key=bind("sim_seed"))
    remember(("data", "digits", "mnist_n", "embedding", "dims", "sim_n", "sim_seed"))
    if source == "csv":
        st.caption(f"Limits: {data.MAX_BYTES // 2**20} MiB, {data.MAX_ROWS:,} rows, "
                   f"{data.MAX_CLUSTER_COLUMNS} columns clustered.")
        upload = st.file_uploader("CSV file (header row, numeric columns)", type=["csv", "txt", "tsv"],
                                  key="upload")
        if upload is not None:
            table = None
            try:
                table = data.read_csv_table(upload.getvalue())
            except data.DataError as err:
                st.error(f"{upload.name}: {err}")
            if table is not None:
                fid = upload.file_id  # fresh column widgets for every new file
                label_col = st.selectbox("True labels (optional)", ["(none)"] + table.header,
                                         key=f"csv_label_{fid}")
                label = None if label_col == "(none)" else label_col
                usable = [c for c in table.numeric_columns if c != label]
                cols = st.multiselect("Columns to cluster", [c for c in table.header if c != label],
                                      default=usable[: data.MAX_CLUSTER_COLUMNS], key=f"csv_columns_{fid}")
                standardise = st.checkbox("Standardise columns", True, key=f"csv_standardise_{fid}")
                if st.button("Use this CSV", key="use_csv"):
                    try:
                        state.csv_dataset = data.dataset_from_table(
                            table, columns=cols, label_column=label, standardize_data=standardise, name=upload.name)
                        state.csv_key = ("csv", upload.name, fid, tuple(cols), label, standardise)
                        st.toast(f"Using {upload.name}: {state.csv_dataset.n} rows.")
                    except data.DataError as err:
                        st.error(f"{upload.name}: {err}")

if source == "csv":
    ds, ds_key = state.get("csv_dataset"), state.get("csv_key")
else:
    ds, ds_key = None, builtin_key(S)
    try:
        with st.spinner("Loading data…"):
            ds = builtin_dataset(S["data"], S["sim_n"], S["sim_seed"], tuple(S["digits"]), S["mnist_n"],
                                 S["embedding"], S["dims"])
    except data.DataError as err:
        st.error(str(err))
state.dataset = ds  # the Choose r page clusters the same data

if ds is None:
    st.info("Upload a CSV file in the sidebar and press **Use this CSV** to begin." if source == "csv"
            else "Choose a data set in the sidebar to begin.")
else:
    st.caption(f"**Data:** {ds.description} N = {ds.n}, d = {ds.dim}"
               f"{', standardised' if ds.standardized else ''}"
               f"{f', {ds.true_k} true classes' if ds.labels is not None else ''}. Both chains see the same data, "
               "prior, seed and start; only the seating rule differs.")
    for note in ds.notes:
        st.caption(f"Note: {note}")

# ----------------------------------------------------------------------------- model and run settings
with st.sidebar:
    st.header("Model")
    if ds is not None and ds.labels is not None and st.button("CRP-Oracle alpha = K_true / ln N", key="oracle"):
        state.w_crp_alpha = round(oracle_alpha(ds.true_k, ds.n), 3)
        st.toast(f"CRP alpha set to K_true / ln N = {ds.true_k} / ln {ds.n} = {state.w_crp_alpha:g}.")
    st.number_input("CRP alpha", 0.001, 100.0, step=0.1, format="%.3f", key=bind("crp_alpha"))
    st.number_input("pCRP alpha", 0.001, 100.0, step=0.1, format="%.3f", key=bind("pcrp_alpha"))
    if "pending_r" in state:  # sent by the "Choose r" page
        state.w_r = float(np.clip(state.pop("pending_r"), 0.05, 3.0))
        st.toast(f"pCRP power set to r = {state.w_r:g} from cross validation.")
    st.slider("pCRP power r", 0.05, 3.0, step=0.01, key=bind("r"),
              help="r = 1 is the CRP; r > 1 penalises small clusters. The Choose r page cross-validates it.")
    niw_choice = {}
    if ds is not None:
        default = resolve_niw(ds.X)
        with st.expander("NIW prior (defaults from the data)"):
            st.caption("mu_k | Sigma_k ~ N(m0, Sigma_k / kappa0), Sigma_k ~ IW(S0, nu0). "
                       f"m0 = column means; kappa0 = {WITHIN_SCALE**2:g}; nu0 = d + 3; S0 = s * I. "
                       "Larger S0 = broader clusters a priori = fewer clusters; smaller kappa0 = means expected "
                       "far apart = fewer clusters.")
            niw_choice["kappa0"] = st.number_input("kappa0: strength of m0, in points", 1e-4, 1e4,
                                                   float(default.kappa0), format="%.4f", key=f"kappa0_{ds_key}")
            niw_choice["nu0"] = st.number_input(f"nu0: degrees of freedom (> d - 1 = {ds.dim - 1})",
                                                float(ds.dim - 1) + 0.01, 1e4, float(default.nu0), key=f"nu0_{ds_key}")
            niw_choice["S0"] = st.number_input("S0 = s * identity, s =", 1e-6, 1e6, float(default.S0[0, 0]),
                                               format="%.4f", key=f"s0_{ds_key}")
    st.header("Run")
    st.number_input("Sweeps", 10, 100_000, step=100, key=bind("sweeps"))
    st.number_input("Burn-in", 0, 99_999, step=100, key=bind("burn_in"))
    st.number_input("Thin", 1, 1000, key=bind("thin"))
    st.number_input("Seed", 0, 2**31 - 1, key=bind("seed"))
    st.checkbox("Split-merge moves", key=bind("split_merge"),
                help="Off = the paper's plain Gibbs; pCRP chains then tend to stay where they start.")
    st.selectbox("Start", es.STARTS, key=bind("start"))
    presentation = st.toggle("Large fonts (projector)", key="presentation")
    remember(("crp_alpha", "pcrp_alpha", "r", "sweeps", "burn_in", "thin", "seed", "split_merge", "start"))


def current_config():
    """The settings a Start press would use now (for comparing with the shown run)."""
    return {"data_key": ds_key, "crp_alpha": S["crp_alpha"], "pcrp_alpha": S["pcrp_alpha"], "r": S["r"],
            "iters": S["sweeps"], "burn_in": S["burn_in"], "requested_thin": S["thin"], "seed": S["seed"],
            "split_merge": S["split_merge"], "init": S["start"],
            "niw_choice": {k: float(v) for k, v in niw_choice.items()}}


def start_run():
    """Build, register and start a run from the current settings; returns an error message or None."""
    if ds is None:
        return "Load a data set first."
    try:
        niw = resolve_niw(ds.X, **niw_choice)
        priors = {"CRP": CRP(alpha=S["crp_alpha"]), "pCRP": PowerCRP(alpha=S["pcrp_alpha"], r=S["r"])}
        config = {**current_config(), "data": ds.description, "source": ds.source, "columns": ds.columns,
                  "standardized": ds.standardized, "niw": niw.as_dict(),
                  "priors": {k: p.params() for k, p in priors.items()}}
        with st.spinner("Preparing the sampler (compiling on first use)…"):
            warm_up()
            run = new_run(ds, priors, niw, iters=S["sweeps"], burn_in=S["burn_in"], thin=S["thin"],
                          seed=S["seed"], init=S["start"], config=config, split_merge=S["split_merge"])
        registry().add(run)
    except (ModelError, SamplerError, ServerBusy) as err:
        return str(err)
    old = state.get("run")
    if old is not None:
        old.stop("a new run was started")
    session_owner().adopt(run)
    run.set_pace(es.PACES[S["pace"]])
    run.start()
    state.run = run
    state.pop("scrub", None)
    return None


# ----------------------------------------------------------------------------- controls
# Buttons act in on_click callbacks, which run before the page is drawn again: the buttons below
# then show the new state (Pause disabled once paused, and so on). Callbacks may not draw, so their
# feedback is queued and shown as a toast by the live panel.
def say(message):
    state.toast_message = message


def on_start():
    error = start_run()
    if error:
        state.start_error = error
    else:
        say(f"Started CRP and pCRP on {ds.name}: {S['sweeps']:,} sweeps at {S['pace']}.")
    state.app_rerun = True  # polling starts with a full redraw


def on_pause():
    run = state.get("run")
    if run is not None:
        run.pause()
        say(f"Paused at sweep {max(c.done for c in run.chains.values()):,}.")


def on_resume():
    run = state.get("run")
    if run is not None:
        run.resume()
        say("Resumed.")


def on_step():
    run = state.get("run")
    if run is not None and any(run.step_once()):
        say("One sweep.")


def on_stop():
    run = state.get("run")
    if run is not None:
        run.stop("you pressed Stop")
        say("Stopped; the results so far stay on the page.")
    state.app_rerun = True


def on_reset():
    run = state.pop("run", None)
    if run is not None:
        run.stop("you pressed Reset")
    say("Cleared.")
    state.app_rerun = True


def controls(run):
    """Start / Pause / Resume / One sweep / Stop / Reset, each enabled only where it does something."""
    states = set(run.states.values()) if run is not None else set()
    running, paused = RUNNING in states, PAUSED in states
    b = st.columns([1, 1, 1.1, 1.3, 1, 1, 3.5], vertical_alignment="bottom")
    b[0].button("Start", type="primary", key="start", disabled=ds is None, on_click=on_start,
                help="Start a new run with the settings in the sidebar (replaces the current one).")
    b[1].button("Pause", key="pause", disabled=not running, on_click=on_pause)
    b[2].button("Resume", key="resume", disabled=not paused, on_click=on_resume)
    b[3].button("One sweep", key="step", disabled=not paused, on_click=on_step,
                help="Advance both chains by exactly one sweep.")
    b[4].button("Stop", key="stop", disabled=not (running or paused), on_click=on_stop)
    b[5].button("Reset", key="reset", disabled=run is None, on_click=on_reset, help="Stop and clear the run.")
    b[6].select_slider("Pace", options=list(es.PACES), key=bind("pace"), label_visibility="collapsed",
                       help="Sweeps per second while watching; it can change during a run.")
    remember(("pace",))
    if "start_error" in state:
        st.error(state.pop("start_error"))
    if "toast_message" in state:
        st.toast(state.pop("toast_message"))


# ----------------------------------------------------------------------------- the live panel
def chain_label(run, name):
    prior = run.config["priors"][name]
    return f"{name} (α = {prior['alpha']:g}" + (f", r = {prior['r']:g})" if "r" in prior else ")")


def status_text(name, snap):
    """One line: state, progress, wall-clock speed and time left, and why a chain stopped."""
    text = f"**{name}** {snap.state}: {snap.sweeps_done:,} / {snap.total_sweeps:,} sweeps"
    if snap.state == RUNNING and snap.sweeps_per_second > 0:
        text += f", {snap.sweeps_per_second:,.0f}/s"
        if np.isfinite(snap.seconds_left):
            text += f", about {snap.seconds_left:,.0f} s left"
    if snap.stop_reason:
        text += f" (stopped because {snap.stop_reason})"
    if snap.error:
        text += f" (failed: {snap.error})"
    return text


def metrics_text(run, snap):
    mean_k, max_k = live_view.summary_line(snap.K, run.plan.burn_in)
    k_now = int(snap.K[-1]) if snap.K.size else int(np.unique(snap.labels).size)
    parts = [f"K now {k_now}"]
    parts.append(f"after burn-in mean K {mean_k:.2f}, max {max_k}" if mean_k is not None else "in burn-in")
    if run.dataset.labels is not None:
        parts.append(f"NMI now {nmi(run.dataset.labels, snap.labels):.2f}")
    return " · ".join(parts)


MARKDOWN_COLOURS = ("blue", "red", "green", "violet")  # the chains' colours, as Streamlit markdown names
CHART_COLUMNS = [2.3, 1.05, 1.6]  # trace | posterior of K | clusters


def column_headers(run, presentation):
    """What each column of charts shows, once above the rows (larger text for a projector)."""
    texts = ("**trace of K**: line = mean, band = range per column of sweeps, grey = burn-in",
             "**posterior of K** (grey: burn-in so far)",
             "**posterior density now** (dashed: clusters)" if run.dataset.dim == 1
             else "**clusters now** (colour = cluster, largest first)")
    for col, text in zip(st.columns(CHART_COLUMNS), texts):
        if presentation:
            col.markdown(text)
        else:
            col.caption(text)


def chain_row(run, index, name, snap, replay_index, k_max, presentation, last):
    """One chain: a heading with its figures, then trace | posterior of K | clusters (Vega-Lite charts
    whose specifications stay the same between redraws, so only their data are sent again). Rows share
    their x axes; only the last row labels them."""
    ds_run, plan = run.dataset, run.plan
    colour = plots.CHAIN_COLOURS[index % len(plots.CHAIN_COLOURS)]
    height = (260 if presentation else 150) + (45 if last else 0)
    labels, marker = snap.labels, None
    if replay_index is not None and replay_index < len(snap.replay):
        labels, marker = snap.replay[replay_index], int(snap.replay_sweeps[replay_index])
    st.markdown(f"**:{MARKDOWN_COLOURS[index % 4]}[{chain_label(run, name)}]** · {metrics_text(run, snap)}"
                + (f" · showing sweep {marker:,}" if marker else ""))
    cols = st.columns(CHART_COLUMNS)
    common = dict(presentation=presentation, x_axis=last)
    cols[0].vega_lite_chart(plots.trace_chart(live_view.trace_envelope(snap.K), burn_in=plan.burn_in,
                                              total_sweeps=plan.iters, k_max=k_max, colour=colour,
                                              marker_sweep=marker, **common), key=f"trace-{name}", width="stretch", height=height)
    cols[1].vega_lite_chart(plots.k_histogram_chart(live_view.running_k_histogram(snap.K, plan.burn_in),
                                                    k_max=k_max, colour=colour, **common),
                            key=f"khist-{name}", width="stretch", height=height)
    shown = live_view.display_subset(ds_run.n)
    x = ds_run.X[:, 0]
    x_domain = (float(x.min() - 0.05 * np.ptp(x)), float(x.max() + 0.05 * np.ptp(x)))
    if ds_run.dim == 1:
        grid = np.linspace(*x_domain, 200)
        density, comps = mixture_density(grid, x, np.asarray(labels), run.niw)
        chart = plots.density_chart(grid, density, comps[np.argsort(-comps.max(axis=1))], x[shown],
                                    x_domain=x_domain, x_title=ds_run.columns[0], **common)
    else:
        y = ds_run.X[:, 1]
        y_domain = (float(y.min() - 0.05 * np.ptp(y)), float(y.max() + 0.05 * np.ptp(y)))
        chart = plots.clusters_chart(x[shown], y[shown], live_view.cluster_ranks(labels)[shown], x_domain=x_domain,
                                     y_domain=y_domain, x_title=ds_run.columns[0], y_title=ds_run.columns[1],
                                     **common)
    cols[2].vega_lite_chart(chart, key=f"clusters-{name}", width="stretch", height=height)


@st.fragment(run_every=REDRAW_SECONDS if state.get("run") is not None and state.run.live else None)
def live_panel():
    with guarded("the live view"):
        if state.pop("app_rerun", False):
            st.rerun(scope="app")
        run = state.get("run")
        controls(run)
        if run is None:
            st.info("Press **Start** to run CRP and pCRP side by side on these data.")
            return
        session_owner().adopt(run)
        run.set_pace(es.PACES[S["pace"]])
        snaps = run.snapshots()
        st.markdown(" · ".join(status_text(name, snap) for name, snap in snaps.items()))
        # the replay slider sits below the charts (so showing it does not move them): read its value first
        first = next(iter(snaps.values()))
        options = ["now"] + [f"{s:,}" for s in first.replay_sweeps]
        choice = state.get("scrub", "now") if not run.running else "now"
        replay_index = options.index(choice) - 1 if choice in options[1:] else None
        # the K axes grow in steps, so the charts' specifications (and the page) stay still
        k_top = max([int(s.K.max()) for s in snaps.values() if s.K.size] + [3])
        state.k_axis = k_max = max(state.get("k_axis", 0) if state.get("k_axis_run") == run.token else 0,
                                   int(np.ceil((k_top + 1) / 4) * 4))
        state.k_axis_run = run.token
        column_headers(run, presentation)
        for index, (name, snap) in enumerate(snaps.items()):
            chain_row(run, index, name, snap, replay_index, k_max, presentation, last=index == len(snaps) - 1)
        if run.plan.thin_raised:
            st.caption(run.plan.describe())
        if not run.running and len(options) > 1:
            st.select_slider("Replay: show the clusters at sweep", options=options, value=choice, key="scrub")
        if state.get("polling") and not run.live:
            st.rerun(scope="app")  # the run ended: redraw once with its details, and stop polling


run = state.get("run")
state.polling = run is not None and run.live
if run is not None:
    session_owner().adopt(run)
    cfg, now = run.config, current_config()
    changed = [name for name, key in (("data", "data_key"), ("r", "r"), ("CRP alpha", "crp_alpha"),
                                      ("pCRP alpha", "pcrp_alpha"), ("sweeps", "iters"), ("burn-in", "burn_in"),
                                      ("thin", "requested_thin"), ("seed", "seed"), ("split-merge", "split_merge"),
                                      ("start", "init"), ("NIW prior", "niw_choice"))
               if cfg.get(key) != now.get(key)]
    if "data" in changed and "NIW prior" in changed:
        changed.remove("NIW prior")  # its defaults follow the data
    if changed:
        st.warning(f"Showing the previous run, on {run.dataset.description} N = {run.dataset.n}. Changed since it "
                   f"started: {', '.join(changed)}. Press **Start** to run with the current settings.")
live_panel()


# ----------------------------------------------------------------------------- details (not while running)
def details(run):
    snaps = run.snapshots()
    tabs = st.tabs(["Cluster sizes", "Posterior density", "Digits", "Downloads", "Settings of this run"])
    ds_run = run.dataset
    with tabs[0]:
        cols = st.columns(len(snaps))
        size_max = max(int(np.bincount(s.labels).max()) for s in snaps.values()) * 1.05
        for col, (name, snap) in zip(cols, snaps.items()):
            col.plotly_chart(plots.cluster_sizes(snap.labels, f"{name}: cluster sizes now", y_max=size_max),
                             key=f"sizes-{name}", width="stretch", config={"displayModeBar": False})
            if ds_run.labels is not None and len(snap.kept):
                summary = metric_summary(ds_run.labels, snap.kept)
                col.caption(f"Over {len(snap.kept)} kept draws: NMI {summary['NMI'][0]:.3f} "
                            f"(SE {summary['NMI'][1]:.3f}), VI {summary['VI'][0]:.3f} bits (SE {summary['VI'][1]:.3f}).")
    with tabs[1]:
        cols = st.columns(len(snaps))
        for col, (name, snap) in zip(cols, snaps.items()):
            if ds_run.dim == 1:
                fig = plots.density_1d(ds_run.X, snap.labels, run.niw, f"{name}: posterior density now")
            else:
                fig = plots.density_2d(ds_run.X, snap.labels, run.niw, ds_run.columns, f"{name}: density now")
            col.plotly_chart(fig, key=f"density-{name}", width="stretch", config={"displayModeBar": False})
    with tabs[2]:
        if ds_run.raw is not None and ds_run.raw.shape[1] == 784:
            cols = st.columns(len(snaps))
            for col, (name, snap) in zip(cols, snaps.items()):
                col.plotly_chart(plots.digit_gallery(ds_run.raw, snap.labels, title=f"{name}: digits per cluster"),
                                 key=f"digits-{name}", width="stretch", config={"displayModeBar": False})
        else:
            st.caption("Digit images exist for MNIST only.")
    with tabs[3]:
        st.caption("Files are built when you click.")
        for name, chain in run.chains.items():
            c = st.columns(3)
            c[0].download_button(f"{name}: traces (CSV)", lambda ch=chain: traces_csv(ch), f"{name.lower()}_traces.csv",
                                 key=f"dl-traces-{name}", on_click="ignore")
            c[1].download_button(f"{name}: kept draws (CSV)", lambda ch=chain: kept_csv(ch),
                                 f"{name.lower()}_kept_labels.csv", key=f"dl-kept-{name}", on_click="ignore")
            c[2].download_button(f"{name}: labels now (CSV)", lambda ch=chain: now_csv(ch),
                                 f"{name.lower()}_labels.csv", key=f"dl-labels-{name}", on_click="ignore")
        st.download_button("Run configuration (JSON)", lambda: json.dumps(run.config, indent=2, default=str),
                           "run_config.json", key="dl-config", on_click="ignore")
    with tabs[4]:
        st.caption(run.plan.describe())
        st.json(run.config, expanded=False)


def traces_csv(chain):
    snap = chain.snapshot()
    return pd.DataFrame({"sweep": np.arange(1, snap.K.size + 1), "K": snap.K,
                         "log_joint": snap.log_joint}).to_csv(index=False)


def kept_csv(chain):
    snap = chain.snapshot()
    frame = pd.DataFrame(snap.kept.T, columns=[f"sweep_{s}" for s in snap.kept_sweeps])
    return frame.to_csv(index_label="point")


def now_csv(chain):
    return pd.DataFrame({"label": chain.snapshot().labels}).to_csv(index_label="point")


if run is not None:
    with guarded("the details"):
        if run.running:
            st.caption("Cluster sizes, densities, digits and downloads appear here when the run is paused or "
                       "finished.")
        else:
            details(run)

with st.expander("How to read this"):
    st.markdown(
        "- **Trace of K**: clusters after every sweep; the band is the range of K within each pixel column, the "
        "line its mean; the grey part is burn-in.\n"
        "- **Posterior of K**: share of post-burn-in sweeps with each K (grey while only burn-in sweeps exist).\n"
        "- **NMI** = I(U;V)/sqrt(H(U)H(V)) (1 = identical); **VI** = H(U|V)+H(V|U) in bits (0 = identical).\n"
        "- For a fixed data set the sampler targets an exchangeable partition posterior, "
        "p(z|X) ∝ alpha^K ∏ ((N_k-1)!)^r ∏ m(X_k); the non-exchangeability of the pCRP is a property "
        "of the seating process as N grows (see *Rich get richer*).\n"
        f"- Each run stores at most {SESSION_BUDGET_BYTES // 2**20} MiB; a run stops a few seconds after its "
        "page is closed. Reloading the page brings a finished run back (its id is in the address).")

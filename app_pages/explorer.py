"""Explorer: CRP and pCRP cluster the same data live, side by side."""

import json

import numpy as np
import pandas as pd
import streamlit as st

from pcrp import data, plots
from pcrp.live import LiveChain
from pcrp.model import CRP, DEFAULT_R, WITHIN_SCALE, ModelError, PowerCRP, resolve_niw
from pcrp.sampler import SamplerError, warm_up
from pcrp.summary import metric_summary, oracle_alpha

CHAINS = ("CRP", "pCRP")
state = st.session_state

st.title("CRP vs pCRP, live")
st.caption("Both chains see the same data, NIW prior, seed and start; only the seating rule differs: "
           "an occupied table of size n gets weight n (CRP) or n^r (pCRP), a new table alpha.")


# ----------------------------------------------------------------------------- data
def load_builtin(choice):
    if choice == "Old Faithful":
        return data.old_faithful()
    if choice == "MNIST":
        digits = st.session_state.get("mnist_digits", [1, 2, 3, 4])
        return data.mnist(digits=digits, n=state.get("mnist_n", 1000), embedding=state.get("mnist_embedding", "spectral"),
                          dims=state.get("mnist_dims", 2), seed=0)
    which = {"Sim 1": "sim1", "Sim 2": "sim2"}[choice]
    return data.simulation(which, n=state.get("sim_n", 300), seed=state.get("sim_seed", 0))


with st.sidebar:
    st.header("Data")
    source = st.selectbox("Data set", ["Old Faithful", "MNIST", "Sim 1", "Sim 2", "Upload a CSV"], key="source")
    if source == "MNIST":
        st.multiselect("Digits", list(range(10)), default=[1, 2, 3, 4], key="mnist_digits")
        st.number_input("N (bundled file: 500 per digit)", 50, 5000, 1000, step=50, key="mnist_n")
        st.selectbox("Embedding", ["spectral", "pca"], key="mnist_embedding")
        st.number_input("Dimensions", 1, 50, 2, key="mnist_dims")
    if source in ("Sim 1", "Sim 2"):
        st.number_input("N", 10, data.MAX_ROWS, 300, step=50, key="sim_n")
        st.number_input("Data seed", 0, 10_000, 0, key="sim_seed")
    if source == "Upload a CSV":
        st.caption(f"Limits: {data.MAX_BYTES // 2**20} MiB, {data.MAX_ROWS:,} rows, "
                   f"{data.MAX_CLUSTER_COLUMNS} columns clustered.")
        upload = st.file_uploader("CSV file (header row, numeric columns)", type=["csv", "txt", "tsv"],
                                  key="upload")
        if upload is not None:
            try:
                table = data.read_csv_table(upload.getvalue())
            except data.DataError as err:
                st.error(f"{upload.name}: {err}")
                table = None
            if table is not None:
                cols = st.multiselect("Columns to cluster", table.header,
                                      default=table.numeric_columns[: data.MAX_CLUSTER_COLUMNS],
                                      key="csv_columns")
                label_col = st.selectbox("True labels (optional)", ["(none)"] + table.header, key="csv_label")
                standardise = st.checkbox("Standardise columns", True, key="csv_standardise")
                if st.button("Use this CSV", key="use_csv"):
                    try:
                        state.dataset = data.dataset_from_table(
                            table, columns=cols, label_column=None if label_col == "(none)" else label_col,
                            standardize_data=standardise, name=upload.name)
                        state.dataset_key = ("csv", upload.name, tuple(cols), label_col, standardise)
                    except data.DataError as err:
                        st.error(f"{upload.name}: {err}")
    else:
        key = (source, str(state.get("mnist_digits")), state.get("mnist_n"), state.get("mnist_embedding"),
               state.get("mnist_dims"), state.get("sim_n"), state.get("sim_seed"))
        if state.get("dataset_key") != key:
            try:
                with st.spinner("Loading data…"):
                    state.dataset = load_builtin(source)
                state.dataset_key = key
            except data.DataError as err:
                st.error(str(err))

ds = state.get("dataset")
if ds is None:
    st.info("Load a data set in the sidebar to begin.")
    st.stop()

st.markdown(f"**Data:** {ds.description} N = {ds.n}, d = {ds.dim}"
            f"{', standardised' if ds.standardized else ''}"
            f"{f', {ds.true_k} true classes' if ds.labels is not None else ''}.")
for note in ds.notes:
    st.caption(f"Note: {note}")

# ----------------------------------------------------------------------------- model
with st.sidebar:
    st.header("Model")
    if ds.labels is not None and st.button("CRP-Oracle alpha = K_true / ln N", key="oracle"):
        state.crp_alpha = round(oracle_alpha(ds.true_k, ds.n), 3)
    st.number_input("CRP alpha", 0.001, 100.0, 1.0, step=0.1, key="crp_alpha", format="%.3f")
    st.number_input("pCRP alpha", 0.001, 100.0, 1.0, step=0.1, key="pcrp_alpha", format="%.3f")
    if "pending_r" in state:  # sent by the "Choose r" page
        state.r = state.pop("pending_r")
        st.toast(f"pCRP power set to r = {state.r:g} from cross validation.")
    st.slider("pCRP power r", 0.05, 3.0, DEFAULT_R, step=0.01, key="r",
              help="r = 1 is the CRP; r > 1 penalises small clusters. The Choose r page cross-validates it.")
    default = resolve_niw(ds.X)
    with st.expander("NIW prior (defaults from the data)"):
        st.caption("mu_k | Sigma_k ~ N(m0, Sigma_k / kappa0), Sigma_k ~ IW(S0, nu0). "
                   f"m0 = column means; kappa0 = {WITHIN_SCALE**2:g}; nu0 = d + 3; S0 = s * I. "
                   "Larger S0 = broader clusters a priori = fewer clusters; smaller kappa0 = means expected "
                   "far apart = fewer clusters.")
        kappa0 = st.number_input("kappa0: strength of m0, in points", 1e-4, 1e4, float(default.kappa0), format="%.4f")
        nu0 = st.number_input(f"nu0: degrees of freedom (> d - 1 = {ds.dim - 1})", float(ds.dim - 1) + 0.01,
                              1e4, float(default.nu0))
        s0 = st.number_input("S0 = s * identity, s =", 1e-6, 1e6, float(default.S0[0, 0]), format="%.4f")
    st.header("Run")
    iters = st.number_input("Sweeps", 10, 100_000, 2000, step=100)
    burn_in = st.number_input("Burn-in", 0, 99_999, min(500, iters - 1), step=100)
    thin = st.number_input("Thin", 1, 1000, 5)
    seed = st.number_input("Seed", 0, 2**31 - 1, 0)
    split_merge = st.checkbox("Split-merge moves", True,
                              help="Off = the paper's plain Gibbs; pCRP chains then tend to stay where they start.")
    init = st.selectbox("Start", ["kmeans:10", "one", "random:10", "kmeans:3"])
    delay = st.select_slider("Speed", options=[0.0, 0.05, 0.2, 0.5, 1.0], value=0.0,
                             format_func=lambda v: "full speed" if v == 0 else f"1 sweep per {v:g} s",
                             key="delay")


def new_chains():
    try:
        niw = resolve_niw(ds.X, kappa0=kappa0, nu0=nu0, S0=s0)
        priors = {"CRP": CRP(alpha=state.crp_alpha), "pCRP": PowerCRP(alpha=state.pcrp_alpha, r=state.r)}
        if burn_in >= iters:
            raise SamplerError(f"Burn-in ({burn_in}) must be smaller than the number of sweeps ({iters}).")
        with st.spinner("Preparing the sampler (compiling on first use)…"):
            warm_up()
            chains = {name: LiveChain(ds.X, prior, niw, iters=iters, burn_in=burn_in, thin=thin, seed=seed,
                                      split_merge=split_merge, init=init) for name, prior in priors.items()}
    except (ModelError, SamplerError) as err:
        st.error(str(err))
        return None
    state.run_config = {
        "data": ds.description, "source": ds.source, "columns": ds.columns, "standardized": ds.standardized,
        "niw": niw.as_dict(), "priors": {k: p.params() for k, p in priors.items()}, "iters": int(iters),
        "burn_in": int(burn_in), "thin": int(thin), "seed": int(seed), "split_merge": bool(split_merge),
        "init": init,
    }
    state.run_dataset = ds
    state.run_niw = niw
    return chains


def stop_all():
    for chain in state.get("chains", {}).values():
        chain.stop()


buttons = st.columns(5)
chains = state.get("chains")
if buttons[0].button("Start", type="primary", key="start"):
    stop_all()
    chains = new_chains()
    state.chains = chains
    if chains:
        for chain in chains.values():
            chain.delay = delay
            chain.start()
if buttons[1].button("Pause", key="pause") and chains:
    for chain in chains.values():
        chain.pause()
if buttons[2].button("Resume", key="resume") and chains:
    for chain in chains.values():
        chain.resume()
if buttons[3].button("Stop", key="stop") and chains:
    stop_all()
if buttons[4].button("Reset", key="reset"):
    stop_all()
    state.chains = chains = None

if not chains:
    st.info("Press **Start** to run CRP and pCRP side by side.")
    st.stop()

for chain in chains.values():
    chain.delay = delay
running = any(c.state in ("running", "paused") for c in chains.values())


@st.fragment(run_every=0.5 if running else None)
def live_panel():
    run_ds = state.run_dataset
    snaps = {}
    for name, chain in state.chains.items():
        chain.touch()
        snaps[name] = chain.snapshot()
    if any(s.error and s.state == "failed" for s in snaps.values()):
        for name, s in snaps.items():
            if s.error:
                st.error(f"{name} chain stopped: {s.error}")
    total = state.run_config["iters"]
    burn = state.run_config["burn_in"]
    k_max = max([int(s.K.max()) if s.K.size else 1 for s in snaps.values()]) + 1
    niw = state.run_niw
    size_max = max(int(np.bincount(s.labels).max()) for s in snaps.values()) * 1.05
    cols = st.columns(2)
    for col, (name, snap) in zip(cols, snaps.items()):
        with col:
            prior = state.run_config["priors"][name]
            title = f"{name} (alpha={prior['alpha']:g}" + (f", r={prior['r']:g})" if "r" in prior else ")")
            st.subheader(title)
            eta = snap.seconds_left
            st.progress(snap.sweeps_done / total,
                        text=f"{snap.state}: {snap.sweeps_done:,}/{total:,} sweeps, "
                             f"{snap.sweeps_per_second:,.0f} sweeps/s"
                             + (f", about {eta:.0f} s left" if np.isfinite(eta) and snap.state == 'running' else ""))
            after = snap.K[burn:]
            k_now = int(snap.K[-1]) if snap.K.size else int(np.unique(snap.labels).size)
            m = st.columns(3)
            m[0].metric("K now", k_now)
            m[1].metric("mean K after burn-in", f"{after.mean():.2f}" if after.size else "—")
            m[2].metric("max K after burn-in", int(after.max()) if after.size else "—")
            if run_ds.labels is not None:
                draws = snap.kept if len(snap.kept) else snap.labels[None]
                summary = metric_summary(run_ds.labels, draws[-200:])
                m = st.columns(2)
                m[0].metric("NMI (geometric)", f"{summary['NMI'][0]:.3f}")
                m[1].metric("VI (bits)", f"{summary['VI'][0]:.3f}")
            st.plotly_chart(plots.k_trace(snap.K, burn, "Trace of K", y_range=[0, k_max + 0.5], total_sweeps=total),
                            key=f"{name}-trace", width="stretch")
            st.plotly_chart(plots.k_histogram(after, "Posterior of K after burn-in", x_range=[0.5, k_max + 0.5],
                                              y_max=1.0), key=f"{name}-khist", width="stretch")
            if run_ds.dim == 1:
                fig = plots.density_1d(run_ds.X, snap.labels, niw, "Posterior density (current state)")
            else:
                fig = plots.density_2d(run_ds.X, snap.labels, niw, run_ds.columns,
                                       "Clusters and posterior density (current state)")
            st.plotly_chart(fig, key=f"{name}-density", width="stretch")
            if run_ds.dim == 1:
                st.plotly_chart(plots.cluster_scatter(run_ds.X, snap.labels, run_ds.columns, "Clusters (jittered)"),
                                key=f"{name}-scatter", width="stretch")
            st.plotly_chart(plots.cluster_sizes(snap.labels, "Cluster sizes", y_max=size_max),
                            key=f"{name}-sizes", width="stretch")
            if run_ds.raw is not None and run_ds.raw.shape[1] == 784:
                st.plotly_chart(plots.digit_gallery(run_ds.raw, snap.labels), key=f"{name}-digits", width="stretch")
            traces = pd.DataFrame({"sweep": np.arange(1, snap.K.size + 1), "K": snap.K, "log_joint": snap.log_joint})
            d = st.columns(2)
            d[0].download_button("Traces (CSV)", traces.to_csv(index=False), f"{name.lower()}_traces.csv",
                                 key=f"{name}-dl-traces")
            d[1].download_button("Current labels (CSV)", pd.DataFrame({"label": snap.labels}).to_csv(index=False),
                                 f"{name.lower()}_labels.csv", key=f"{name}-dl-labels")
    st.download_button("Run configuration (JSON)", json.dumps(state.run_config, indent=2), "run_config.json",
                       key="dl-config")
    with st.expander("How to read this"):
        st.markdown(
            "- **Trace of K**: clusters after every sweep; the shaded part is burn-in.\n"
            "- **Posterior of K**: share of post-burn-in sweeps with each K.\n"
            "- **NMI** = I(U;V)/sqrt(H(U)H(V)) (1 = identical); **VI** = H(U|V)+H(V|U) in bits "
            "(0 = identical); averaged over the kept draws.\n"
            "- For a fixed data set the sampler targets an exchangeable partition posterior, "
            "p(z|X) ∝ alpha^K ∏ ((N_k-1)!)^r ∏ m(X_k); the non-exchangeability of the pCRP is a property "
            "of the seating process as N grows (see *Rich get richer*).")
    if running and not any(s.state in ("running", "paused") for s in snaps.values()):
        st.rerun()  # the run ended: redraw the page once so polling stops


live_panel()

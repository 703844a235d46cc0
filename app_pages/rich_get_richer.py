"""Rich get richer: the seating process, CRP against pCRP, one customer at a time."""

import numpy as np
import streamlit as st

from app_pages.shared import guarded
from pcrp import data, plots
from pcrp.model import CRP, PowerCRP, resolve_niw
from pcrp.one_customer import seating_choice
from pcrp.sampler import run
from pcrp.seating import (arrival_orders, crp_expected_k, order_probability, seat, seating_probabilities,
                          simulate_k_growth, simulate_tables, three_customer_example)

state = st.session_state
st.title("Rich get richer")
st.latex(r"p(z_{n+1}=k \mid z_{1:n}) \propto \begin{cases} N_k^{\,r} & \text{occupied table } k \\ "
         r"\alpha & \text{new table}\end{cases}\qquad r=1:\ \text{CRP}")

c = st.columns(4)
alpha = c[0].number_input("alpha", 0.01, 50.0, 1.0, step=0.1, key="rgr_alpha")
r = c[1].slider("pCRP power r", 0.5, 3.0, 1.5, step=0.05, key="rgr_r")
n_total = c[2].number_input("customers", 10, 2000, 200, step=10, key="rgr_n")
seed = c[3].number_input("seed", 0, 10_000, 0, key="rgr_seed")

# ----------------------------------------------------------------------------- animation
st.header("Customers arrive one by one")
SPEEDS = {"slow (2 per second)": (0.5, 1), "medium (5 per second)": (0.2, 1), "fast (25 per second)": (0.2, 5),
          "very fast (100 per second)": (0.2, 20)}
uniforms = np.random.default_rng(int(seed)).random(int(n_total))
state.setdefault("rgr_shown", 1)
b = st.columns([1, 1, 1, 1, 3])
if b[0].button("Step", key="rgr_step"):
    state.rgr_shown = min(state.rgr_shown + 1, int(n_total))
if b[1].button("+10", key="rgr_step10"):
    state.rgr_shown = min(state.rgr_shown + 10, int(n_total))
if b[2].button("Play / pause", key="rgr_play"):
    state.rgr_playing = not state.get("rgr_playing", False)
if b[3].button("Restart", key="rgr_restart"):
    state.rgr_shown = 1
    state.rgr_playing = False
speed = b[4].select_slider("speed", options=list(SPEEDS), value="medium (5 per second)", key="rgr_speed")
interval, per_tick = SPEEDS[speed]


@st.fragment(run_every=interval if state.get("rgr_playing") else None)
def tables():
    with guarded("the seating animation"):
        if state.get("rgr_playing"):
            state.rgr_shown = min(state.rgr_shown + per_tick, int(n_total))
            if state.rgr_shown >= int(n_total):
                state.rgr_playing = False
        n = state.rgr_shown
        st.caption(f"{n} customers seated (the same random numbers for both rules).")
        rules = (("CRP", 1.0), (f"pCRP r={r:g}", r))
        sizes = {name: np.bincount(seat(n, alpha, power, uniforms)) for name, power in rules}
        n_tables = max(s.size for s in sizes.values())
        y_max = int(np.ceil(max(s.max() for s in sizes.values()) / 10) * 10)  # shared, in steps of 10
        cols = st.columns(2)
        for col, (name, power) in zip(cols, rules):
            with col:
                st.markdown(f"**{name}**: {sizes[name].size} tables")
                st.vega_lite_chart(plots.table_sizes_chart(sizes[name], y_max=y_max, n_tables=n_tables),
                                   key=f"rgr-tables-{name}", width="stretch", height=230)
                st.vega_lite_chart(plots.next_customer_chart(seating_probabilities(sizes[name], alpha, power),
                                                             n_tables=n_tables),
                                   key=f"rgr-probs-{name}", width="stretch", height=200)


tables()


# ----------------------------------------------------------------------------- growth of K
@st.cache_data(max_entries=64)
def k_growth(alpha, power, n_max, runs, seed):
    """Simulated K_N curves: a pure function of its arguments, safe to share between users."""
    return simulate_k_growth(alpha, power, n_max, runs, seed=seed)


@st.cache_data(max_entries=64)
def tables_at(alpha, power, n, runs, seed):
    return simulate_tables(alpha, power, n, runs, seed=seed)


st.header("Growth of K")
runs = st.slider("simulated seatings per curve", 20, 200, 50, step=10, key="rgr_runs")
n_max = 1000
N = np.arange(1, n_max + 1)
curves = {}
for power in sorted({1.0, 1.2, 1.5, 2.0, float(r)}):
    sims = k_growth(float(alpha), power, n_max, int(runs), int(seed))
    curves[f"r = {power:g} (simulated)"] = (N, sims.mean(axis=0), sims.std(axis=0, ddof=1) / np.sqrt(runs))
st.plotly_chart(plots.k_growth(curves, (N, crp_expected_k(alpha, n_max)), "E[K_N] (bands: ±2 standard errors)"),
                key="rgr-growth", width="stretch", config={"displayModeBar": False})
st.latex(r"\text{CRP: } E[K_N] = \sum_{i=1}^{N} \frac{\alpha}{\alpha + i - 1} \approx \alpha \ln N")

n_at = st.select_slider("distribution of the tables after N customers", options=[10, 30, 100, 300, 1000],
                        value=300, key="rgr_n_at")
at = {"CRP": tables_at(float(alpha), 1.0, int(n_at), int(runs), int(seed)),
      f"pCRP r={r:g}": tables_at(float(alpha), float(r), int(n_at), int(runs), int(seed))}
cols = st.columns(3)
cols[0].plotly_chart(plots.distribution_compare({k: v["K"] for k, v in at.items()}, f"K_N at N = {n_at}", "tables K"),
                     key="rgr-kdist", width="stretch", config={"displayModeBar": False})
cols[1].plotly_chart(plots.distribution_compare({k: v["largest_share"] for k, v in at.items()},
                                                "share of the largest table", "largest table / N", integer=False),
                     key="rgr-largest", width="stretch", config={"displayModeBar": False})
cols[2].plotly_chart(plots.distribution_compare({k: v["singletons"] for k, v in at.items()},
                                                "tables with one customer", "singletons"),
                     key="rgr-singletons", width="stretch", config={"displayModeBar": False})
st.caption(" · ".join(f"{k}: mean K {v['K'].mean():.2f}, largest table {v['largest_share'].mean():.0%}, "
                      f"{v['singletons'].mean():.2f} singletons" for k, v in at.items())
           + f" ({runs} seatings each).")

# ----------------------------------------------------------------------------- exchangeability
st.header("Exchangeability")
same, different = three_customer_example(r, alpha)
st.markdown(
    f"The paper's example with r = {r:g}: p(z3 = 2 | z1 = 1, z2 = 1) = alpha / (2^r + alpha) = **{same:.3f}**, "
    f"p(z3 = 1 | z1 = 1, z2 = 2) = 1 / (2 + alpha) = **{different:.3f}**.")
blocks_text = st.text_input("a partition, as block sizes (at most 8 customers)", "3,1", key="rgr_blocks")
try:
    block_sizes = [int(v) for v in blocks_text.split(",")]
    if not block_sizes or min(block_sizes) < 1 or sum(block_sizes) > 8:
        raise ValueError
except ValueError:
    st.error(f"'{blocks_text}' is not a list of positive block sizes adding up to at most 8, e.g. 3,1 or 2,2,1.")
else:
    orders = arrival_orders(block_sizes)
    letters = "ABCDEFGH"
    names = ["".join(letters[b] for b in o) for o in orders]
    probs = {"CRP": [order_probability(o, alpha, 1.0) for o in orders],
             f"pCRP r={r:g}": [order_probability(o, alpha, r) for o in orders]}
    st.plotly_chart(plots.order_probabilities(names, probs,
                                              f"p(partition {'/'.join(map(str, block_sizes))}) by arrival order"),
                    key="rgr-orders", width="stretch", config={"displayModeBar": False})
    spread = {k: (min(v), max(v)) for k, v in probs.items()}
    st.caption(" · ".join(f"{k}: from {lo:.4g} to {hi:.4g}" for k, (lo, hi) in spread.items())
               + ". Every order gives the CRP the same probability; the pCRP's depends on who arrives when.")
st.info("For a fixed data set the Gibbs sampler does not seat customers in arrival order: it targets the "
        "exchangeable partition distribution p(z) ∝ alpha^K ∏ ((N_k - 1)!)^r, whose full conditionals are "
        "exactly the N_k^r weights. The order dependence above belongs to the seating process as N grows.")

# ----------------------------------------------------------------------------- one customer, real posterior
st.header("One customer's choice in a real posterior")
st.markdown("Algorithm 1's inner loop: take one point out of its cluster, weigh each cluster's seating prior by "
            "the point's posterior predictive density, and sample from the normalised products:")
st.latex(r"p(z_i = k \mid z_{-i}, X) \propto g(N_{k,-i})\, p(x_i \mid X_{k,-i}),\qquad "
         r"p(z_i = \text{new} \mid z_{-i}, X) \propto \alpha\, p(x_i)")


@st.cache_data(max_entries=8)
def posterior_state(name, seed):
    """A CRP posterior draw (300 sweeps) of a small data set: the partition both rules are shown on."""
    ds = data.old_faithful() if name == "Old Faithful" else data.simulation("sim1", 300, seed=0)
    niw = resolve_niw(ds.X)
    chain = run(ds.X, CRP(1.0), niw, iters=300, burn_in=299, thin=1, seed=seed)
    return ds, niw, chain.labels[-1]


c = st.columns([1, 3])
dataset_name = c[0].radio("data", ["Old Faithful", "Sim 1"], key="rgr_choice_data")
ds, niw, labels = posterior_state(dataset_name, int(seed))
sizes = np.bincount(labels)
smallest = int(np.flatnonzero(labels == np.argmin(np.where(sizes > 0, sizes, ds.n + 1)))[0])
if state.get("rgr_point", 0) >= ds.n:  # switched to a smaller data set
    state.rgr_point = 0
state.setdefault("rgr_point", 0)
if c[0].button("a point of the smallest cluster", key="rgr_pick_small"):
    state.rgr_point = smallest
point = c[1].slider("point", 0, ds.n - 1, key="rgr_point")
c[1].plotly_chart(plots.highlight_point(ds.X, labels, point, ds.columns,
                                        f"{dataset_name}: a CRP posterior draw, point {point} ringed"),
                  key="rgr-choice-scatter", width="stretch", config={"displayModeBar": False})
cols = st.columns(2)
for col, (name, prior) in zip(cols, (("CRP", CRP(alpha)), (f"pCRP r={r:g}", PowerCRP(alpha, r)))):
    choice = seating_choice(ds.X, labels, point, niw, prior)
    col.plotly_chart(plots.seating_choice_bars(choice, f"{name}: where point {point} goes"),
                     key=f"rgr-choice-{name}", width="stretch", config={"displayModeBar": False})
st.caption("Both panels use the same partition of the other points and the same predictive densities; only the "
           "prior weights differ. Under the pCRP the big clusters' weights grow as N_k^r, so a point that "
           "fits a small cluster is pulled towards a big one unless its predictive clearly prefers the small one.")

"""The Explorer's "How to read this" expander: every chart and key in words (not in presentation mode)."""

import streamlit as st

from pcrp.app.live_storage import SESSION_BUDGET_BYTES


def how_to_read():
    """The expander that explains every chart and key (not in presentation mode)."""
    with st.expander("How to read this"):
        st.markdown(
            "- Both rows see the same data, NIW model, seed and start; only the partition prior differs.\n"
            "- **Clusters now**: the first chain's partition; the same colour means the same cluster in both rows "
            "(clusters are matched to the true classes, or else to the top row). For d > 2 the view is the first "
            "two principal components of the standardised data (PCA view), each axis with its share of the "
            "variance.\n"
            "- **Trace of K**: clusters after every sweep; the band is the range of K within each pixel column, the "
            "line its mean; the grey part is burn-in.\n"
            "- **Density now** (1-D data): the model's predictive density of a new point given the current "
            "partition (black: the prior's seating weights, the new-cluster term included) and its clusters' terms "
            "(dashed); the rug below shows the points in their clusters' colours.\n"
            "- **Posterior of K**: share of post-burn-in sweeps with each K (grey while only burn-in sweeps exist).\n"
            "- **NMI** = I(U;V)/sqrt(H(U)H(V)) (1 = identical); **VI** = H(U|V)+H(V|U) in bits (0 = identical).\n"
            "- For a fixed data set the sampler targets an exchangeable partition posterior, "
            "p(z|X) ∝ alpha^K ∏ ((N_k-1)!)^r ∏ m(X_k); the non-exchangeability of the pCRP is a property "
            "of the seating process as N grows (see *Rich get richer*).\n"
            f"- Each run stores at most {SESSION_BUDGET_BYTES // 2**20} MiB; a run stops a few seconds after its "
            "page is closed. Reloading the page brings your run back, in this browser only, unless you pressed "
            "**Reset**, which discards it: the address holds settings, never a run, so a projected or shared address "
            "shows nobody your run or your data.\n"
            "- **Keys**: Space = pause / resume (start when there is no run), → or Page Down (a clicker) = one "
            "sweep, R = reset. Space on a finished run (a new run) and R act at the second press; the first says so "
            "at the top of the page. **Present** (or `?present=1` in the address) shows the comparison alone, in "
            "large type, for a projector.")

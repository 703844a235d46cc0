"""pcrp app: navigation and the shared sidebar only; pages live in pages/."""

import streamlit as st

st.set_page_config(page_title="pcrp: powered Chinese restaurant process", layout="wide")

pages = [
    st.Page("pages/explorer.py", title="Explorer: CRP vs pCRP", default=True),
    st.Page("pages/choose_r.py", title="Choose r"),
    st.Page("pages/reproduce.py", title="Reproduce the paper"),
    st.Page("pages/rich_get_richer.py", title="Rich get richer"),
]
navigation = st.navigation(pages)
st.sidebar.caption("pCRP: Lu, Li & Dunson, *Reducing over-clustering via the powered Chinese restaurant process*.")
navigation.run()

"""pcrp app: navigation and the shared sidebar only; pages live in app_pages/.

Not in pages/: Streamlit (1.67) treats a folder named pages/ next to the main script as an
old-style multipage app until st.navigation has run once in the server process, so the first
visit to a deep link such as /choose_r after a restart would run that page without this shell
(no wide layout, file names in the sidebar).
"""

import streamlit as st

from app_pages.shared import guarded

st.set_page_config(page_title="pcrp: powered Chinese restaurant process", layout="wide")
# Streamlit's own "Stop" in the header only stops redrawing, not the chains: the pages have one Stop.
# Less empty space above the page, so the live comparison fits a 1280 x 800 projector.
st.html("<style>[data-testid='stStatusWidget'] {display: none;} "
        "[data-testid='stMainBlockContainer'] {padding-top: 2.5rem; padding-bottom: 2rem;}</style>")

pages = [
    st.Page("app_pages/explorer.py", title="Explorer: two priors live", default=True),
    st.Page("app_pages/choose_r.py", title="Choose r"),
    st.Page("app_pages/reproduce.py", title="Reproduce the paper"),
    st.Page("app_pages/rich_get_richer.py", title="Rich get richer"),
]
navigation = st.navigation(pages)
st.sidebar.caption("pCRP: Lu, Li & Dunson, *Reducing over-clustering via the powered Chinese restaurant process*.")
with guarded(f"the page {navigation.title!r}"):
    navigation.run()

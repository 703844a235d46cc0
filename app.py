"""pcrp app: navigation and the shared sidebar only; pages live in app_pages/.

As in Streamlit's own hello app, this shell is the function run() and each page is a file whose work is done by
functions, ending with one call of its page(): values flow through arguments, never through names that the page
run leaves at module level, and the files keep their addresses (/choose_r, ...) and run alone under AppTest.

Not in pages/: Streamlit (1.67) treats a folder named pages/ next to the main script as an
old-style multipage app until st.navigation has run once in the server process, so the first
visit to a deep link such as /choose_r after a restart would run that page without this shell
(no wide layout, file names in the sidebar).
"""

import streamlit as st

from app_pages.shared import guarded
from pcrp.app import warm_up

PAGES = [  # (file, title in the navigation; the address is the file's name, e.g. /choose_r)
    ("app_pages/explorer.py", "Explorer: priors live"),
    ("app_pages/choose_r.py", "Choose r"),
    ("app_pages/reproduce.py", "Reproduce the paper"),
    ("app_pages/rich_get_richer.py", "Rich get richer"),
    ("app_pages/lesson.py", "Lesson"),
]


def run():
    """The shell around every page: wide layout, navigation (the first page is the default) and the paper."""
    st.set_page_config(page_title="pcrp: powered Chinese restaurant process", layout="wide")
    warm_up.start()  # the kernels compile in a separate process, once per server process (no page waits on it)
    # Streamlit's own "Stop" in the header only stops redrawing, not the chains: the pages have one Stop.
    # Less empty space above the page, so the live comparison fits a 1280 x 800 projector.
    st.html("<style>[data-testid='stStatusWidget'] {display: none;} "
            "[data-testid='stMainBlockContainer'] {padding-top: 2.5rem; padding-bottom: 2rem;}</style>")
    navigation = st.navigation([st.Page(path, title=title, default=i == 0) for i, (path, title) in enumerate(PAGES)])
    st.sidebar.caption("pCRP: Lu, Li & Dunson, *Reducing over-clustering via the powered Chinese restaurant "
                       "process*.")
    with guarded(f"the page {navigation.title!r}"):
        navigation.run()


if __name__ == "__main__":
    run()

"""The app as a public server: `streamlit run serve.py` (same flags and .streamlit/config.toml as app.py).

It runs app.py unchanged inside Streamlit's ASGI app (st.App, Streamlit >= 1.53, experimental there) with one
addition: the browser key that ties a visitor's runs to their browser is set by the server, on the HTTP response of
each page load that lacks a valid one, as an HttpOnly cookie (pcrp.app.browser_keys.BrowserKeyMiddleware), so no
script on the page can read it. `streamlit run app.py` runs the same pages, but a page script sets that cookie,
and page scripts can read it (docs/serving.md).
"""

from starlette.middleware import Middleware
from streamlit.starlette import App

from pcrp.app.browser_keys import BrowserKeyMiddleware

app = App("app.py", middleware=[Middleware(BrowserKeyMiddleware)])

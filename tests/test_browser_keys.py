"""Browser keys only this server can issue (pcrp.app.browser_keys): minted and signed here, verified on every
connection, anything else replaced and never adopted; the HttpOnly cookie of serve.py's middleware."""

import asyncio
import re


import pytest

from pcrp.app import browser_keys
from pcrp.app.browser_keys import COOKIE, BrowserKeyMiddleware, BrowserKeys, cookie_value
from explorer_support import browser_key, current_run


@pytest.fixture(autouse=True)
def no_middleware_afterwards(monkeypatch):
    """A middleware made here marks this process as served by serve.py; the pages' other tests must not see that."""
    monkeypatch.setitem(browser_keys._MIDDLEWARE, "active", False)


def altered(key, position):
    """``key`` with the character at ``position`` changed to another allowed character."""
    ch = key[position]
    other = "A" if ch != "A" else "B"
    return key[:position] + other + key[position + 1:]


def test_a_minted_key_verifies_and_every_altered_or_unsigned_value_is_refused():
    keys = BrowserKeys()
    key = keys.mint()
    assert keys.verify(key) == key and keys.mint() != key
    random_part = key.split(".")[2]
    assert len(random_part) == 32 and key.startswith("v1.")
    # one character changed anywhere in the random part, the time stamp or the signature
    for position in range(3, len(key)):
        if key[position] != ".":
            assert keys.verify(altered(key, position)) is None, position
    # the old format (any 32-64 URL-safe characters, adopted as they came) and other shapes
    for value in ("k" * 43, random_part, key + "x", key[:-1], key.replace("v1.", "v2."), "", None, 42,
                  key + ";" + key, "v1." + "a" * 200, key.upper(), "\u00e9" + key[1:]):
        assert keys.verify(value) is None, value
    # a key signed by another server process (another secret), or by this one long ago
    assert BrowserKeys().verify(key) is None
    now = [1_000_000.0]
    clocked = BrowserKeys(secret=b"s" * 32, max_age_seconds=100, clock=lambda: now[0])
    old = clocked.mint()
    assert clocked.verify(old) == old
    now[0] += 101
    assert clocked.verify(old) is None
    now[0] -= 10_000  # issued "in the future"
    assert clocked.verify(clocked.mint()) is not None and clocked.verify(old) is None


def test_the_cookie_is_http_only_strict_and_secure_over_https():
    keys = BrowserKeys()
    header = keys.cookie_header("v1.x.y.z")
    assert header.startswith(f"{COOKIE}=v1.x.y.z; Path=/;") and "HttpOnly" in header and "SameSite=Strict" in header
    assert "Secure" not in header
    assert keys.cookie_header("k", secure=True).endswith("; Secure")
    assert cookie_value("a=1; pcrp_browser=abc; b=2") == "abc" and cookie_value("") is None
    assert cookie_value("xpcrp_browser=abc") is None


def run_middleware(path_type="http", content_type=b"text/html; charset=utf-8", cookie=None, scheme="http",
                   method="GET", keys=None):
    """The headers the middleware sends for one request to a stand-in app that answers with ``content_type``."""
    sent = []

    async def app(scope, receive, send):
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", content_type)]})
        await send({"type": "http.response.body", "body": b"<html></html>"})

    async def send(message):
        sent.append(message)

    headers = [(b"cookie", cookie.encode())] if cookie is not None else []
    scope = {"type": path_type, "method": method, "headers": headers, "scheme": scheme, "path": "/"}
    middleware = BrowserKeyMiddleware(app, keys=keys)
    asyncio.run(middleware(scope, None, send))
    return [(n, v.decode()) for n, v in sent[0].get("headers", []) if n == b"set-cookie"]


def test_the_middleware_sets_a_fresh_key_on_a_page_load_without_a_valid_one_and_nothing_else():
    keys = BrowserKeys()
    set_cookies = run_middleware(keys=keys)
    assert len(set_cookies) == 1
    value = set_cookies[0][1]
    assert "HttpOnly" in value and "SameSite=Strict" in value and "Secure" not in value
    key = re.match(rf"{COOKIE}=([^;]+);", value).group(1)
    assert keys.verify(key) == key
    assert run_middleware(cookie=f"other=1; {COOKIE}={key}", keys=keys) == []  # a valid key stays
    forged = altered(key, 10)
    replaced = run_middleware(cookie=f"{COOKIE}={forged}", keys=keys)  # a forged one is replaced, not kept
    assert len(replaced) == 1 and forged not in replaced[0][1]
    assert run_middleware(content_type=b"application/javascript", keys=keys) == []  # scripts, styles, data
    assert run_middleware(method="POST", keys=keys) == []
    assert "Secure" in run_middleware(scheme="https", keys=keys)[0][1]


def test_a_forged_or_altered_key_controls_nothing_in_the_explorer(monkeypatch):
    """Visitor A starts a run; a second browser sends A's key with one character changed, or an unsigned value of
    the old format: it gets a fresh key and a page of its own, never A's run. A's own key, sent whole, finds it."""
    from streamlit.testing.v1 import AppTest

    from app_pages import shared

    def session(cookie):
        monkeypatch.setattr(shared, "_cookie", lambda: cookie)
        at = AppTest.from_file("../app_pages/explorer.py", default_timeout=120)
        at.run()
        assert not at.exception, at.exception
        return at

    a = session(None)
    a.select_slider(key="w_pace").set_value("2 sweeps/s")
    a.number_input(key="w_sweeps").set_value(100_000)
    a.run()
    a.button(key="start").click().run()
    run = current_run(a)
    key = browser_key(a)
    assert run.browser == key and shared.SERVER_KEYS.verify(key) == key
    try:
        for forged in (altered(key, 12), altered(key, len(key) - 3), key.split(".")[2] + "x" * 11, "k" * 43):
            b = session(forged)
            assert current_run(b) is None, forged
            assert browser_key(b) != forged
            assert shared.SERVER_KEYS.verify(browser_key(b)) == browser_key(b)
            assert b.button(key="reset").disabled and b.button(key="stop").disabled
        again = session(key)  # the owner's browser, reloaded
        assert current_run(again) is run
    finally:
        run.stop("test over")


def serve_media(body, cookie=None, keys=None, downloads=None, method="GET", range_header=False):
    """(status, body, headers the app saw) of a /media/ request through the middleware to a stand-in app."""
    seen, sent = {}, []

    async def app(scope, receive, send):
        seen["headers"] = dict(scope["headers"])
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"text/csv"), (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body[:5], "more_body": True})
        await send({"type": "http.response.body", "body": body[5:]})

    async def send(message):
        sent.append(message)

    headers = [(b"cookie", cookie.encode())] if cookie else []
    if range_header:
        headers += [(b"range", b"bytes=0-3"), (b"accept-encoding", b"gzip")]
    scope = {"type": "http", "method": method, "headers": headers, "scheme": "http", "path": "/media/abc.csv"}
    asyncio.run(BrowserKeyMiddleware(app, keys=keys, downloads=downloads)(scope, None, send))
    status = sent[0]["status"]
    return status, b"".join(m.get("body", b"") for m in sent[1:]), seen.get("headers", {})


def test_a_generated_download_is_served_only_to_a_browser_that_generated_it():
    from pcrp.app.browser_keys import DownloadOwners

    keys, downloads = BrowserKeys(), DownloadOwners()
    owner, other = keys.mint(), keys.mint()
    secret = b"point,cluster\n0,1\n1,0\n"
    downloads.own(secret, owner)
    assert serve_media(secret, f"{COOKIE}={owner}", keys, downloads)[:2] == (200, secret)
    for cookie in (f"{COOKIE}={other}", None, f"{COOKIE}={altered(owner, 30)}"):  # another browser, none, forged
        assert serve_media(secret, cookie, keys, downloads)[:2] == (404, b"Not found."), cookie
    # a range or compressed request is read whole and plain (a part could not be told), and HEAD is refused
    status, body, seen = serve_media(secret, f"{COOKIE}={other}", keys, downloads, range_header=True)
    assert status == 404 and b"range" not in seen and b"accept-encoding" not in seen
    assert serve_media(secret, f"{COOKIE}={owner}", keys, downloads, method="HEAD")[0] == 404
    # a file nobody recorded (an image of a page) is served to anyone
    assert serve_media(b"public bytes", None, keys, downloads)[:2] == (200, b"public bytes")
    # bounded: the oldest records go first
    small = DownloadOwners(max_files=2)
    for content in (b"a", b"b", b"c"):
        small.own(content, owner)
    assert not small.refuses(b"a", other) and small.refuses(b"c", other)


def test_without_the_middleware_the_page_stores_its_signed_key_from_a_script_and_with_it_does_not(monkeypatch):
    """`streamlit run app.py`: the page's own script sets the cookie (the key the server signed; not HttpOnly, a
    script cannot). serve.py: the server sets it on the page load, and no page script writes it."""
    from streamlit.testing.v1 import AppTest

    def cookie_scripts():
        at = AppTest.from_file("../app_pages/explorer.py", default_timeout=120)
        at.run()
        assert not at.exception, at.exception
        key = browser_key(at)
        scripts = [(e.proto.js_content, e.proto.json) for e in at.get("bidi_component")
                   if e.proto.component_name == "pcrp_browser_key"]
        return key, scripts

    key, scripts = cookie_scripts()
    assert browser_keys.SERVER_KEYS.verify(key) == key
    assert len(scripts) == 1 and "document.cookie = data.cookie" in scripts[0][0]
    assert f"pcrp_browser={key}; path=/;" in scripts[0][1] and "SameSite=Strict" in scripts[0][1]
    monkeypatch.setitem(browser_keys._MIDDLEWARE, "active", True)
    assert cookie_scripts()[1] == []

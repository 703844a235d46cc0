"""New browser keys per network address (pcrp.app.browser_keys.KeyRate): a visitor is its browser key, so the number
of new keys one address gets per minute is what stops one person from being many visitors; a classroom arriving
together stays well within it."""

import asyncio

from pcrp.app.browser_keys import (COOKIE, NEW_KEYS_PER_MINUTE, BrowserKeyMiddleware, BrowserKeys, KeyRate,
                                   key_rate_setting, scope_address)


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def test_an_address_gets_at_most_its_keys_per_minute_and_more_as_the_minute_passes():
    clock = Clock()
    rate = KeyRate(per_minute=3, clock=clock)
    assert [rate.allow("203.0.113.5") for _ in range(4)] == [True, True, True, False]
    assert rate.allow("198.51.100.1")  # another address is counted apart
    clock.now += 20
    assert not rate.allow("203.0.113.5") and rate.wait("203.0.113.5") == 40.0
    clock.now += 40  # the first three were issued 60 s ago
    assert rate.wait("203.0.113.5") == 0.0 and rate.allow("203.0.113.5")
    assert all(rate.allow("local") for _ in range(10)) and rate.wait("local") == 0.0  # this machine: no limit


def test_a_class_of_thirty_and_a_reload_each_fits_the_default():
    rate = KeyRate(clock=Clock())
    assert all(rate.allow("203.0.113.5") for _ in range(60)) and NEW_KEYS_PER_MINUTE >= 60


def test_the_address_book_is_bounded():
    rate = KeyRate(per_minute=1, clock=Clock(), max_addresses=100)
    for i in range(1000):
        rate.allow(f"198.18.{i // 250}.{i % 250}")
    assert len(rate._issued) == 100


def test_the_administrator_sets_the_rate():
    assert key_rate_setting({}) == (NEW_KEYS_PER_MINUTE, [])
    assert key_rate_setting({"PCRP_NEW_KEYS_PER_MINUTE": "120"}) == (120, [])
    value, problems = key_rate_setting({"PCRP_NEW_KEYS_PER_MINUTE": "-1"})
    assert value == NEW_KEYS_PER_MINUTE and "not a whole number" in problems[0]


def page_load(middleware, client):
    """The Set-Cookie headers of one page load from ``client`` (host, port) through ``middleware``."""
    sent = []

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "method": "GET", "headers": [], "scheme": "http", "path": "/", "client": client}
    asyncio.run(middleware(scope, None, send))
    return [v.decode() for n, v in sent[0].get("headers", []) if n == b"set-cookie"]


def test_the_middleware_issues_keys_within_the_rate_of_the_requests_address():
    async def app(scope, receive, send):
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/html")]})
        await send({"type": "http.response.body", "body": b"<html></html>"})

    keys = BrowserKeys(rate=KeyRate(per_minute=2, clock=Clock()))
    middleware = BrowserKeyMiddleware(app, keys=keys)
    room = ("203.0.113.5", 50000)  # the address uvicorn took from X-Forwarded-For (a trusted proxy) or the socket
    loads = [page_load(middleware, room) for _ in range(3)]
    assert [len(cookies) for cookies in loads] == [1, 1, 0]  # the third page load gets no key: the page says so
    assert loads[0][0].startswith(f"{COOKIE}=") and loads[0] != loads[1]
    assert len(page_load(middleware, ("198.51.100.7", 1))) == 1
    assert all(len(page_load(middleware, ("127.0.0.1", 1))) == 1 for _ in range(5))  # this machine: "local"
    assert scope_address({"client": ("127.0.0.1", 1)}) == "local" and scope_address({}) == "local"
    assert scope_address({"client": ("2001:db8:1:2::9", 1)}) == "2001:db8:1:2::/64"

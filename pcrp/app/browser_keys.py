"""Browser keys that only this server can issue: how a run is found again by the browser that started it.

A run belongs to the browser that started it (:meth:`pcrp.app.live_runs.RunRegistry.latest_for`), which keeps a key
in its ``pcrp_browser`` cookie. A key is minted here with :mod:`secrets` and signed with an HMAC-SHA256 of a
per-process secret: ``v1.<issued, base 36 seconds>.<32 random characters>.<signature>``. :meth:`BrowserKeys.verify`
accepts only a key this process signed within its lifetime (30 days); an unsigned, malformed, altered, expired or
foreign value (one signed by an earlier process, or typed by someone) is never adopted, and the page gives that
browser a fresh key instead. So a visitor cannot choose a key for someone else's browser (say, on a shared lab
machine) or make one up; a key that is copied whole from a browser still works, as any session cookie does.

The secret lives in this process's memory only (:data:`SERVER_KEYS`, made when the module is first imported): it is
never written to a file, the repository or a page. Runs live in the same process's memory, so when the server
restarts no run survives for a key to find, and every browser simply gets a new key on its next visit; a secret
that outlived the process would protect nothing more. Several server processes each keep their own secret and
their own runs.

The key is also who a visitor is for the server's fair share (pcrp.app.fair_share): a classroom behind one router is
many browsers. So that one person opening many windows without the cookie is not many visitors at will, one network
address is issued at most :data:`NEW_KEYS_PER_MINUTE` new keys a minute (:class:`KeyRate`,
:meth:`BrowserKeys.mint_for`).

:class:`BrowserKeyMiddleware` is an ASGI middleware (no Streamlit in it) for ``serve.py``'s ``st.App``: it sets the
cookie on the HTTP response of each page load when the request has no valid key (within the address's rate), with
``HttpOnly`` (page scripts cannot read it), ``SameSite=Strict`` and, over HTTPS, ``Secure``; and it serves a
generated download (a
/media/ link, which Streamlit serves to anyone who has it) only to a browser that generated it (the pages record
each download's owner in :data:`DOWNLOADS`). Without it (``streamlit run app.py``), the page sets the cookie from a
script, which cannot set ``HttpOnly``, and a download's link works for whoever has it until Streamlit deletes the
file (docs/serving.md).
"""

import base64
import hashlib
import hmac
import re
import secrets
import threading
import time
from collections import OrderedDict, deque

COOKIE = "pcrp_browser"
KEY_DAYS = 30
_KEY = re.compile(r"v1\.([0-9a-z]{1,13})\.([A-Za-z0-9_-]{32})\.([A-Za-z0-9_-]{43})")
_CLOCK_SKEW_SECONDS = 300  # a key "issued" further in the future than this is refused


def _base36(number):
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        number, digit = divmod(number, 36)
        out = digits[digit] + out
        if not number:
            return out


# New keys one network address may be issued per minute. A visitor is its browser key (a classroom behind one router
# is thirty visitors), so one person opening many windows without the cookie would otherwise be many visitors: this
# bounds how fast. A class arriving together (30 students and a reload or two each) stays well within it.
NEW_KEYS_PER_MINUTE = 60


class KeyRate:
    """At most ``per_minute`` new keys per network address in any 60 seconds; "local" (this machine itself, or a
    test harness: no address) is not limited. Remembers the issue times of at most ``max_addresses`` addresses (the
    least recently seen forgotten first). Thread-safe.

    clock: a function returning the time in seconds (tests)."""

    UNLIMITED = ("local",)

    WINDOW_SECONDS = 60.0

    def __init__(self, per_minute=NEW_KEYS_PER_MINUTE, clock=time.monotonic, max_addresses=10_000):
        self.per_minute = per_minute
        self.max_addresses = max_addresses
        self._clock = clock
        self._issued = OrderedDict()  # address -> deque of issue times, oldest first
        self._lock = threading.Lock()

    def _recent(self, address, now):
        times = self._issued.setdefault(address, deque())
        self._issued.move_to_end(address)
        while times and now - times[0] >= self.WINDOW_SECONDS:
            times.popleft()
        while len(self._issued) > self.max_addresses:
            self._issued.popitem(last=False)
        return times

    def allow(self, address):
        """Whether ``address`` may be issued a new key now; if so, the key is counted."""
        if address in self.UNLIMITED:
            return True
        with self._lock:
            now = self._clock()
            times = self._recent(address, now)
            if len(times) >= self.per_minute:
                return False
            times.append(now)
            return True

    def wait(self, address):
        """Seconds until ``address`` may be issued a key again (0 when it may now)."""
        if address in self.UNLIMITED:
            return 0.0
        with self._lock:
            now = self._clock()
            times = self._recent(address, now)
            if len(times) < self.per_minute:
                return 0.0
            return max(0.0, times[0] + self.WINDOW_SECONDS - now)


def key_rate_setting(environ):
    """(new keys per address per minute, problems) from the server's environment: PCRP_NEW_KEYS_PER_MINUTE, a whole
    number >= 1 (default NEW_KEYS_PER_MINUTE); a bad value is ignored and named in ``problems``."""
    text = environ.get("PCRP_NEW_KEYS_PER_MINUTE")
    if text is None:
        return NEW_KEYS_PER_MINUTE, []
    try:
        value = int(text)
        if value < 1:
            raise ValueError
    except ValueError:
        return NEW_KEYS_PER_MINUTE, [f"PCRP_NEW_KEYS_PER_MINUTE={text!r} is not a whole number >= 1: ignored"]
    return value, []


class BrowserKeys:
    """Mints and verifies browser keys with one secret (default: 32 random bytes made here, kept in memory).

    max_age_seconds: how long a key stays valid after it was issued; clock: a function returning the time (tests);
    rate: the :class:`KeyRate` that :meth:`mint_for` keeps to.
    """

    def __init__(self, secret=None, max_age_seconds=KEY_DAYS * 86400, clock=time.time, rate=None):
        self._secret = secret if secret is not None else secrets.token_bytes(32)
        self.max_age_seconds = max_age_seconds
        self._clock = clock
        self.rate = rate if rate is not None else KeyRate()

    def _signature(self, payload):
        digest = hmac.new(self._secret, payload.encode("ascii"), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")

    def mint(self):
        """A new key: unguessable (192 random bits), signed, stamped with the time it was issued."""
        payload = f"v1.{_base36(int(self._clock()))}.{secrets.token_urlsafe(24)}"
        return f"{payload}.{self._signature(payload)}"

    def mint_for(self, address):
        """A new key for a visitor from network ``address`` (as pcrp.app.fair_share.visitor_address groups it), or
        None when that address has been issued its :class:`KeyRate` of keys in the last minute."""
        return self.mint() if self.rate.allow(address) else None

    def verify(self, value):
        """``value`` when it is a key this object signed that has not expired, else None (never raises)."""
        if not isinstance(value, str) or len(value) > 120:
            return None
        match = _KEY.fullmatch(value)
        if match is None:
            return None
        payload = value[: value.rindex(".")]
        if not hmac.compare_digest(match.group(3), self._signature(payload)):
            return None
        age = self._clock() - int(match.group(1), 36)
        if age > self.max_age_seconds or age < -_CLOCK_SKEW_SECONDS:
            return None
        return value

    def cookie_header(self, key, secure=False):
        """The Set-Cookie header value that stores ``key`` for KEY_DAYS days, out of reach of page scripts."""
        return (f"{COOKIE}={key}; Path=/; Max-Age={self.max_age_seconds}; HttpOnly; SameSite=Strict"
                + ("; Secure" if secure else ""))


class DownloadOwners:
    """Which browsers may fetch which generated download: a file is told by the SHA-256 of its bytes (what the
    server sends), an owner by its browser key. Holds at most ``max_files`` files (the newest; a file's link lives
    only until Streamlit's next clean-up anyway), 32 bytes and a key each. Thread-safe."""

    def __init__(self, max_files=4096):
        import threading
        from collections import OrderedDict

        self.max_files = max_files
        self._owners = OrderedDict()
        self._lock = threading.Lock()

    def own(self, data, key):
        """Record that the browser with ``key`` generated a download of ``data`` (bytes)."""
        digest = hashlib.sha256(data).digest()
        with self._lock:
            self._owners.setdefault(digest, set()).add(key)
            self._owners.move_to_end(digest)
            while len(self._owners) > self.max_files:
                self._owners.popitem(last=False)

    def refuses(self, data, key):
        """Whether ``data`` is a recorded download that the browser with ``key`` (None: no valid key) did not
        generate."""
        with self._lock:
            owners = self._owners.get(hashlib.sha256(data).digest())
        return owners is not None and key not in owners


SERVER_KEYS = BrowserKeys()  # this process's keys (see the module's description)
DOWNLOADS = DownloadOwners()  # this process's generated downloads and their owners
_MIDDLEWARE = {"active": False}


def middleware_active():
    """Whether :class:`BrowserKeyMiddleware` serves this process's pages (then the server sets the cookie, HttpOnly,
    and a page must not set it from a script)."""
    return _MIDDLEWARE["active"]


def cookie_value(header, name=COOKIE):
    """The value of cookie ``name`` in a Cookie request header (str), or None. The first one wins, as browsers send
    the most specific path first."""
    for part in (header or "").split(";"):
        key, _, value = part.strip().partition("=")
        if key == name:
            return value.strip().strip('"')
    return None


class BrowserKeyMiddleware:
    """ASGI middleware, two duties. Every HTML response to a request without a valid ``pcrp_browser`` key (absent,
    unsigned, altered, expired, signed by an earlier process) sets a fresh one, HttpOnly, unless the request's network
    address (:func:`scope_address`) has had its new keys for the last minute (its page then says so). And a generated
    download (Streamlit serves it at /media/<hash of its content>, to anyone who has the link) reaches only a browser
    that generated it: a request for a file recorded in ``downloads`` from another browser, or without a valid key,
    gets 404 (the body is read whole, uncompressed, to be told, so a range request is served whole, and HEAD is
    refused on /media/).
    Other responses (scripts, styles, the WebSocket, health checks) pass untouched. keys: the :class:`BrowserKeys`
    (default :data:`SERVER_KEYS`, which the pages verify against); downloads: the :class:`DownloadOwners` (default
    :data:`DOWNLOADS`, which the pages record into)."""

    def __init__(self, app, keys=None, downloads=None):
        self.app = app
        self.keys = keys if keys is not None else SERVER_KEYS
        self.downloads = downloads if downloads is not None else DOWNLOADS
        _MIDDLEWARE["active"] = True

    async def __call__(self, scope, receive, send):
        if scope.get("type") != "http" or scope.get("method") not in ("GET", "HEAD"):
            await self.app(scope, receive, send)
            return
        cookies = b"; ".join(value for name, value in scope.get("headers", []) if name == b"cookie")
        key = self.keys.verify(cookie_value(cookies.decode("latin-1")))
        if "/media/" in scope.get("path", ""):
            await self._media(scope, receive, send, key)
            return
        valid = key is not None
        secure = scope.get("scheme") == "https"

        async def send_with_key(message):
            if not valid and message.get("type") == "http.response.start":
                headers = list(message.get("headers", []))
                content_type = next((v for n, v in headers if n.lower() == b"content-type"), b"")
                fresh = self.keys.mint_for(scope_address(scope)) if content_type.startswith(b"text/html") else None
                if fresh is not None:  # (None: the address's new keys for this minute are spent; the page says so)
                    headers.append((b"set-cookie", self.keys.cookie_header(fresh, secure).encode("ascii")))
                    message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_key)

    async def _media(self, scope, receive, send, key):
        """Serve a /media/ request whole, or 404 when it is a recorded download that ``key`` did not generate."""
        if scope.get("method") == "HEAD":
            await _not_found(send)
            return
        # the whole file as it was stored: no range, no compression (the bytes must be those recorded)
        headers = [(n, v) for n, v in scope.get("headers", []) if n.lower() not in (b"range", b"accept-encoding")]
        start, body = None, []

        async def collect(message):
            nonlocal start
            if message.get("type") == "http.response.start":
                start = message
            elif message.get("type") == "http.response.body":
                body.append(message.get("body", b""))

        await self.app({**scope, "headers": headers}, receive, collect)
        data = b"".join(body)
        if start is None or self.downloads.refuses(data, key):
            await _not_found(send)
            return
        await send(start)
        await send({"type": "http.response.body", "body": data})


def scope_address(scope):
    """The network address of an ASGI request as the pages count it (pcrp.app.fair_share.visitor_address of the
    client's address, which the server took from X-Forwarded-For when the request came through a trusted proxy;
    this machine's own address counts as "local", as Streamlit's st.context.ip_address reports it)."""
    from .fair_share import visitor_address

    client = scope.get("client") or (None, None)
    host = client[0]
    return visitor_address(None if host in ("127.0.0.1", "::1") else host)


async def _not_found(send):
    await send({"type": "http.response.start", "status": 404,
                "headers": [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", b"10")]})
    await send({"type": "http.response.body", "body": b"Not found."})

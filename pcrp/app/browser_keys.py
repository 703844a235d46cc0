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

:class:`BrowserKeyMiddleware` is an ASGI middleware (no Streamlit in it) for ``serve.py``'s ``st.App``: it sets the
cookie on the HTTP response of each page load when the request has no valid key, with ``HttpOnly`` (page scripts
cannot read it), ``SameSite=Strict`` and, over HTTPS, ``Secure``. Without it (``streamlit run app.py``), the page
sets the cookie from a script, which cannot set ``HttpOnly``.
"""

import base64
import hashlib
import hmac
import re
import secrets
import time

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


class BrowserKeys:
    """Mints and verifies browser keys with one secret (default: 32 random bytes made here, kept in memory).

    max_age_seconds: how long a key stays valid after it was issued; clock: a function returning the time (tests).
    """

    def __init__(self, secret=None, max_age_seconds=KEY_DAYS * 86400, clock=time.time):
        self._secret = secret if secret is not None else secrets.token_bytes(32)
        self.max_age_seconds = max_age_seconds
        self._clock = clock

    def _signature(self, payload):
        digest = hmac.new(self._secret, payload.encode("ascii"), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")

    def mint(self):
        """A new key: unguessable (192 random bits), signed, stamped with the time it was issued."""
        payload = f"v1.{_base36(int(self._clock()))}.{secrets.token_urlsafe(24)}"
        return f"{payload}.{self._signature(payload)}"

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


SERVER_KEYS = BrowserKeys()  # this process's keys (see the module's description)
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
    """ASGI middleware: every HTML response to a request without a valid ``pcrp_browser`` key (absent, unsigned,
    altered, expired, signed by an earlier process) sets a fresh one, HttpOnly. Other responses (scripts, styles,
    the WebSocket, health checks, downloads) pass untouched. keys: the :class:`BrowserKeys` (default
    :data:`SERVER_KEYS`, which the pages verify against)."""

    def __init__(self, app, keys=None):
        self.app = app
        self.keys = keys if keys is not None else SERVER_KEYS
        _MIDDLEWARE["active"] = True

    async def __call__(self, scope, receive, send):
        if scope.get("type") != "http" or scope.get("method") not in ("GET", "HEAD"):
            await self.app(scope, receive, send)
            return
        cookies = b"; ".join(value for name, value in scope.get("headers", []) if name == b"cookie")
        valid = self.keys.verify(cookie_value(cookies.decode("latin-1"))) is not None
        secure = scope.get("scheme") == "https"

        async def send_with_key(message):
            if not valid and message.get("type") == "http.response.start":
                headers = list(message.get("headers", []))
                content_type = next((v for n, v in headers if n.lower() == b"content-type"), b"")
                if content_type.startswith(b"text/html"):
                    headers.append((b"set-cookie", self.keys.cookie_header(self.keys.mint(), secure).encode("ascii")))
                    message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_key)

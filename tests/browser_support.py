"""What the real-browser tests share: Debian's chromium, and `streamlit run serve.py` (the app as a public server
runs it: app.py with the browser key in an HttpOnly cookie) on a free port.

Needs /usr/bin/chromium (`apt-get install -y chromium`). Outside CI a browser test skips with a message when
it is missing; with PCRP_REQUIRE_BROWSER=1 (set by .ci/run) it must run.
"""

import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
ROOT = Path(__file__).resolve().parent.parent
LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def require_chromium(module_level=False):
    """Skip (or, with PCRP_REQUIRE_BROWSER set, fail) when Debian's chromium is missing."""
    if os.path.exists(CHROMIUM):
        return
    if os.environ.get("PCRP_REQUIRE_BROWSER"):
        raise RuntimeError(f"{CHROMIUM} is missing but PCRP_REQUIRE_BROWSER is set: install Debian's chromium.")
    pytest.skip(f"{CHROMIUM} not found: install Debian's chromium (apt-get install -y chromium) to run the "
                "browser tests", allow_module_level=module_level)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def chromium():
    """Debian's chromium under Playwright, headless; closed afterwards."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=LAUNCH_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@contextmanager
def streamlit_app(start_seconds=90, env=None):
    """`streamlit run serve.py` on a free local port (env: variables added to its environment, such as an
    administrator's setting); yields (url, process) once its health check answers, and stops it afterwards. A server
    that does not start fails the test with the end of its output."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "serve.py", "--server.port", str(port),
         "--server.headless", "true", "--server.address", "127.0.0.1"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env={**os.environ, **(env or {})})
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + start_seconds
    while True:
        try:
            urllib.request.urlopen(url + "/_stcore/health", timeout=2).read()
            break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                output = proc.stdout.read().decode(errors="replace")[-2000:]
                pytest.fail(f"streamlit did not start (exit code {proc.poll()}):\n{output}")
            time.sleep(0.3)
    try:
        yield url, proc
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.fixture(scope="module")
def server():
    """The app served for one test module: its address."""
    with streamlit_app() as (url, _):
        yield url


@pytest.fixture(scope="module")
def browser():
    """Debian's chromium for one test module."""
    with chromium() as b:
        yield b


# The Explorer's status line: "<prior> <state>: <done> / <total> sweeps" for each row, joined by " · ".
EXPLORER_STATUS = re.compile(r"([\w -]+?) (running|paused|finished|stopped): ([\d,]+) / ([\d,]+) sweeps")


def status(page):
    """{prior label: (state, sweeps done)} from the Explorer's status line ({} while it is being redrawn)."""
    try:
        text = page.locator(".st-key-status").inner_text(timeout=2_000)
    except Exception:
        return {}
    return {m.group(1).strip(" ·"): (m.group(2), int(m.group(3).replace(",", "")))
            for m in EXPLORER_STATUS.finditer(text)}


def wait_for_status(page, condition, seconds=60):
    """The Explorer's status once ``condition(status)`` holds; AssertionError after ``seconds``."""
    deadline = time.monotonic() + seconds
    found = {}
    while time.monotonic() < deadline:
        found = status(page)
        if found and condition(found):
            return found
        time.sleep(0.1)
    raise AssertionError(f"status not reached; last: {found}")


def choose(page, box_label, option, tries=3):
    """Pick ``option`` in the selectbox whose text has ``box_label``. A page run that arrives while its list is open
    (the full run after a Stop, say) draws the box again and closes the list, as it would for a visitor: the box is
    opened again, at most ``tries`` times."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    from playwright.sync_api import expect

    box = page.locator('[data-testid="stSelectbox"]').filter(has_text=box_label)
    expect(box).to_be_visible(timeout=30_000)
    for attempt in range(tries):
        box.click()
        try:
            page.get_by_role("option", name=option).click(timeout=5_000)
            return
        except PlaywrightTimeout:
            if attempt == tries - 1:
                raise

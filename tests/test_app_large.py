"""The Explorer at the app's row limit (pcrp.data.APP_MAX_ROWS = 100,000) in a real browser: Sim 1 with 100,000
points runs, draws a fixed subset of the points (said in a caption), pauses at a sweep, and its posterior summary
is computed from the draws (no 100,000 x 100,000 similarity matrix, which would take 37 GiB)."""

import re
import time

import pytest

from browser_support import chromium, require_chromium, streamlit_app

pytestmark = [pytest.mark.browser, pytest.mark.slow]

require_chromium(module_level=True)

from playwright.sync_api import expect  # noqa: E402

STATUS = re.compile(r"(\w+) (running|paused|finished|stopped): ([\d,]+) / ([\d,]+) sweeps")


def test_the_explorer_runs_pauses_and_summarises_100000_points():
    with streamlit_app() as (url, _), chromium() as browser:
        page = browser.new_page(viewport={"width": 1500, "height": 1000})
        page.goto(url + "/?data=sim1&sim_n=100000&sweeps=200&burn_in=100&pace=full+speed")
        expect(page.get_by_text(re.compile("N = 100000|100,000")).first).to_be_visible(timeout=90_000)
        page.get_by_role("button", name="Start", exact=True).click()
        charts = page.locator(".pcrp-live-row canvas")  # the live view: three canvases per row
        expect(charts.nth(5)).to_be_visible(timeout=120_000)
        page.get_by_role("button", name="Pause", exact=True).click()
        status = page.locator(".st-key-status")
        expect(status).to_contain_text("paused", timeout=60_000)
        page.get_by_role("button", name="Resume", exact=True).click()
        deadline = time.monotonic() + 300
        found = {}
        while time.monotonic() < deadline:  # both rows finished: every chain ran its 200 sweeps
            try:
                found = {m.group(1): m.group(2, 3, 4) for m in STATUS.finditer(status.inner_text())}
            except Exception:  # the status line is being redrawn
                found = {}
            if len(found) == 2 and all(s == "finished" and d == t for s, d, t in found.values()):
                break
            page.wait_for_timeout(500)
        assert len(found) == 2 and all(s == "finished" and d == t == "200" for s, d, t in found.values()), found
        page.get_by_role("button", name="Summarise the posterior").click()
        expect(page.get_by_text(re.compile("point estimate", re.I)).first).to_be_visible(timeout=300_000)
        expect(page.get_by_text(re.compile("Traceback|Error", re.I))).to_have_count(0)
        page.close()

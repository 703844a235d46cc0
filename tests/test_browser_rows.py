"""The five-row demo link in a real browser (Playwright + Debian's chromium against `streamlit run serve.py`): at
1280 x 800 with ?present=1&priors=crp,pcrp,py,mfm,sfm the five registry priors run one row each, every row's charts
lie inside the screen, and the status line names all five as they run."""

import re
import time

import pytest

from browser_support import chromium, require_chromium, streamlit_app

pytestmark = [pytest.mark.browser, pytest.mark.slow]

require_chromium(module_level=True)

from playwright.sync_api import expect  # noqa: E402

FIVE = ("CRP", "pCRP", "Pitman-Yor", "MFM", "Sparse finite mixture")
GROUP_STATUS = re.compile(r"([\w -]+?) (running|paused|finished|stopped): ([\d,]+) / ([\d,]+) sweeps")


def status(page):
    """{prior: (state, sweeps done)} from the status line."""
    text = page.locator(".st-key-status").inner_text()
    return {m.group(1).strip(" ·"): (m.group(2), int(m.group(3).replace(",", "")))
            for m in GROUP_STATUS.finditer(text)}


def test_the_five_row_demo_link_runs_every_registry_prior_on_one_projector_screen():
    with streamlit_app() as (server, _), chromium() as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.goto(server + "/?present=1&data=sim2&sweeps=100000&priors=crp,pcrp,py,mfm,sfm")
        expect(page.get_by_role("button", name="Start", exact=True)).to_be_enabled(timeout=60_000)
        expect(page.get_by_role("heading", name=re.compile("5 priors on the same data"))).to_be_visible()
        page.get_by_role("button", name="Start", exact=True).click()
        deadline, found = time.monotonic() + 90, {}
        while time.monotonic() < deadline:
            try:
                found = status(page)
            except Exception:  # the status line is being redrawn
                found = {}
            if set(found) == set(FIVE) and all(v[0] == "running" and v[1] > 50 for v in found.values()):
                break
            time.sleep(0.2)
        assert set(found) == set(FIVE) and all(v[0] == "running" for v in found.values()), found
        page.mouse.move(640, 799)
        charts = page.locator("[data-testid='stVegaLiteChart']")
        expect(charts).to_have_count(15, timeout=30_000)  # trace | posterior of K | density, for each of 5 rows
        for i in range(15):
            box = charts.nth(i).bounding_box()
            assert box["x"] >= 0 and box["y"] >= 0, (i, box)
            assert box["x"] + box["width"] <= 1280 and box["y"] + box["height"] <= 800, (i, box)
        for label in FIVE:  # each row's heading names its prior
            expect(page.get_by_text(re.compile(rf"^{re.escape(label)} \(")).first).to_be_visible()
        page.get_by_role("button", name="Stop", exact=True).click()
        expect(page.get_by_text(re.compile("stopped: "))).not_to_have_count(0, timeout=30_000)

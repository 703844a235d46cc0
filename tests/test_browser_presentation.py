"""Presentation mode in a real browser (Playwright + Debian's chromium against `streamlit run serve.py`):
at 1280 x 800 with ?present=1 both rows of charts lie inside the screen, the status text is at least
18 px, and the keys drive the run (Space starts and pauses, Right arrow = exactly one sweep, R resets)."""

import re
import time

import pytest

from browser_support import browser, require_chromium, server, status, wait_for_status  # noqa: F401 (fixtures)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

require_chromium(module_level=True)

from playwright.sync_api import expect  # noqa: E402

def test_presentation_mode_fits_a_projector_and_the_keys_drive_the_run(server, browser):
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.goto(server + "/?present=1&sweeps=100000")
    expect(page.get_by_role("button", name="Start", exact=True)).to_be_enabled(timeout=60_000)
    assert not page.locator("section[data-testid='stSidebar']").is_visible()
    page.wait_for_function("() => window.pcrpKeys === true", timeout=30_000)  # the keys' listener is in place
    page.keyboard.press("Space")  # no run yet: Space starts one
    wait_for_status(page, lambda s: set(s) == {"CRP", "pCRP"} and all(v[0] == "running" and v[1] > 300
                                                                      for v in s.values()))
    page.mouse.move(640, 799)
    charts = page.locator(".pcrp-live-row > div")  # the live view: three panels per row (live_canvas.js)
    expect(charts).to_have_count(6, timeout=30_000)
    for i in range(6):
        box = charts.nth(i).bounding_box()
        assert box["x"] >= 0 and box["y"] >= 0, box
        assert box["x"] + box["width"] <= 1280 and box["y"] + box["height"] <= 800, (i, box)
        # drawn on a canvas: as SVG, every redraw made and removed one element per point, and a press of
        # Pause waited behind that work (bench/live_browser.py)
        assert charts.nth(i).locator("canvas").count() == 1 and charts.nth(i).locator("svg").count() == 0, i
    size = page.locator(".st-key-status p").first.evaluate("e => parseFloat(getComputedStyle(e).fontSize)")
    assert size >= 18
    assert page.locator("[data-testid='stElementToolbar']:visible").count() == 0

    page.keyboard.press("Space")  # pause: the page then shows the sweep where the chains stopped
    paused = wait_for_status(page, lambda s: all(v[0] == "paused" for v in s.values()), seconds=30)
    time.sleep(1.5)
    assert status(page) == paused  # a freeze: nothing moves after "paused" shows
    for k in (1, 2):
        page.keyboard.press("ArrowRight")
        wait_for_status(page, lambda s: all(s[p][1] == paused[p][1] + k for p in s), seconds=30)
    time.sleep(1.0)
    assert {p: v[1] for p, v in status(page).items()} == {p: v[1] + 2 for p, v in paused.items()}
    page.keyboard.press("Space")  # resume
    wait_for_status(page, lambda s: all(v[0] == "running" for v in s.values()), seconds=30)
    page.keyboard.press("r")  # reset asks for a second press ...
    expect(page.get_by_text(re.compile("Press R again to clear this run"))).to_be_visible(timeout=10_000)
    page.keyboard.press("r")  # ... and the second clears the run
    expect(page.get_by_text("Press Start to run CRP and pCRP")).to_be_visible(timeout=10_000)
    page.close()

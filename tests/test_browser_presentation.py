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


# Every live canvas of the page, as drawn: [its box on the screen, its size, the text it drew] (live_canvas.js
# records each label it paints: [text, font px, left, top, right, bottom] in the canvas' own CSS px).
DRAWN = """() => Array.from(document.querySelectorAll('[data-testid=stMain] *')).filter(e => e.shadowRoot)
  .flatMap(e => Array.from(e.shadowRoot.querySelectorAll('.pcrp-live-row canvas')))
  .filter(c => c.clientWidth > 0).map(c => { const b = c.getBoundingClientRect();
    return {cls: c.className, box: [b.left, b.top, b.right, b.bottom], w: c.clientWidth, h: c.clientHeight,
            texts: JSON.parse(c.dataset.texts || '[]')}; })"""
# Every row heading: its font size, its box, and whether its text overflows the cell it sits in.
HEADINGS = """() => Array.from(document.querySelectorAll('[data-testid=stMain] *')).filter(e => e.shadowRoot)
  .flatMap(e => Array.from(e.shadowRoot.querySelectorAll('.pcrp-row-heading'))).map(p => {
    const b = p.getBoundingClientRect(), cell = p.parentElement;
    return {size: parseFloat(getComputedStyle(p).fontSize), box: [b.left, b.top, b.right, b.bottom],
            text: p.textContent, overflow: cell.scrollHeight > cell.clientHeight + 1}; })"""


def check_compact_rows(page):
    """Five compact rows at 1280 x 800: two charts each inside the screen, every drawn label at least 14 px and inside
    its canvas, the bottom row naming the x axes, each row its y axes; every heading inside the screen and its cell,
    at least 14 px, saying that the row runs one chain where its R-hat badge would be."""
    drawn = page.evaluate(DRAWN)
    assert len(drawn) == 10 and {d["cls"] for d in drawn} == {"trace", "clusters"}, drawn  # two charts per row
    for d in drawn:
        left, top, right, bottom = d["box"]
        assert left >= 0 and top >= 0 and right <= 1280 and bottom <= 800, d["box"]
        assert d["texts"], d["cls"]
        for text, size, x0, y0, x1, y1 in d["texts"]:
            assert size >= 14, (d["cls"], text, size)
            assert x0 >= 0 and y0 >= 0 and x1 <= d["w"] + 0.5 and y1 <= d["h"] + 0.5, (d["cls"], text, d["w"], d["h"],
                                                                                     (x0, y0, x1, y1))
    titles = [t[0] for d in drawn for t in d["texts"]]
    assert titles.count("sweep") == 1 and titles.count("x") == 1  # the bottom row names the x axes
    assert sum(t in ("clusters K", "K") for t in titles) == 5 and titles.count("density") == 5  # each row its y
    headings = page.evaluate(HEADINGS)
    assert len(headings) == 5, headings
    for h in headings:
        assert h["size"] >= 14 and not h["overflow"], h
        assert h["box"][0] >= 0 and h["box"][1] >= 0 and h["box"][2] <= 1280 and h["box"][3] <= 800, h
        assert "one chain: no R-hat" in h["text"], h["text"]
    size = page.locator(".st-key-status p").first.evaluate("e => parseFloat(getComputedStyle(e).fontSize)")
    assert size >= 14


def test_five_rows_in_present_are_legible_on_a_projector_and_say_they_run_one_chain(server, browser):
    """Issue 57: five rows in Present fit the screen but were no slide: charts about 45 px tall, tick labels about
    10 px, the last row's y title cut, and the rows' chains dropped to one each without a word. At 1280 x 800 each row
    is now its heading beside its trace and clusters; every label a canvas draws is at least 14 px and inside its
    canvas, every chart and heading inside the screen, and each row says it runs one chain where R-hat would be."""
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.goto(server + "/?present=1&data=sim2&sweeps=100000&priors=crp,pcrp,py,mfm,sfm")
    expect(page.get_by_role("button", name="Start", exact=True)).to_be_enabled(timeout=60_000)
    page.get_by_role("button", name="Start", exact=True).click()
    wait_for_status(page, lambda s: len(s) == 5 and all(v[0] == "running" and v[1] > 700 for v in s.values()),
                    seconds=90)
    page.mouse.move(640, 799)
    time.sleep(2)  # (past burn-in: every panel has painted its axes and its labels)
    check_compact_rows(page)
    page.get_by_role("button", name="Stop", exact=True).click()  # ended: the same rows, still canvases, on screen
    wait_for_status(page, lambda s: all(v[0] == "stopped" for v in s.values()), seconds=30)
    expect(page.get_by_text("Replay: show the clusters at sweep")).to_be_visible(timeout=30_000)
    time.sleep(1)
    assert page.locator("[data-testid='stVegaLiteChart']").count() == 0
    check_compact_rows(page)
    page.close()

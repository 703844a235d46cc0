"""The five-row demo link in a real browser (Playwright + Debian's chromium against `streamlit run serve.py`): at
1280 x 800 with ?present=1&priors=crp,pcrp,py,mfm,sfm the five registry priors run one row each, every row's charts
lie inside the screen, and the status line names all five as they run."""

import re
import time

import pytest

from browser_support import chromium, require_chromium, status, streamlit_app

pytestmark = [pytest.mark.browser, pytest.mark.slow]

require_chromium(module_level=True)

from playwright.sync_api import expect  # noqa: E402

FIVE = ("CRP", "pCRP", "Pitman-Yor", "MFM", "Sparse finite mixture")
def test_the_five_row_demo_link_runs_every_registry_prior_on_one_projector_screen():
    with streamlit_app() as (server, _), chromium() as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.goto(server + "/?present=1&data=sim2&sweeps=100000&priors=crp,pcrp,py,mfm,sfm")
        expect(page.get_by_role("button", name="Start", exact=True)).to_be_enabled(timeout=60_000)
        expect(page.get_by_role("heading", name=re.compile("5 priors on the same data"))).to_be_visible()
        page.get_by_role("button", name="Start", exact=True).click()
        deadline, found = time.monotonic() + 90, {}
        while time.monotonic() < deadline:
            found = status(page)
            if set(found) == set(FIVE) and all(v[0] == "running" and v[1] > 50 for v in found.values()):
                break
            time.sleep(0.2)
        assert set(found) == set(FIVE) and all(v[0] == "running" for v in found.values()), found
        page.mouse.move(640, 799)
        charts = page.locator(".pcrp-live-row canvas:visible")  # the live view (live_canvas.js)
        expect(charts).to_have_count(10, timeout=30_000)  # heading | trace | density, for each of 5 rows (compact)
        for i in range(10):
            box = charts.nth(i).bounding_box()
            assert box["x"] >= 0 and box["y"] >= 0, (i, box)
            assert box["x"] + box["width"] <= 1280 and box["y"] + box["height"] <= 800, (i, box)
        for label in FIVE:  # each row's heading names its prior
            expect(page.get_by_text(re.compile(rf"^{re.escape(label)} \(")).first).to_be_visible()
        page.get_by_role("button", name="Stop", exact=True).click()
        expect(page.get_by_text(re.compile("stopped: "))).not_to_have_count(0, timeout=30_000)


# [elements marked stale, elements drawn faded] among the page's visible elements
FADED = """() => { const shown = Array.from(document.querySelectorAll(
    '[data-testid=stMain] [data-testid=stElementContainer]')).filter(e => e.getBoundingClientRect().height > 0);
  return [shown.filter(e => e.getAttribute('data-stale') === 'true').length,
          shown.filter(e => parseFloat(getComputedStyle(e).opacity) < 0.99).length]; }"""


# per live canvas row: how many steps of the playback it has drawn, how many of its panels have ink (a non-white
# pixel), the sequence number of the server's last frame it received, and how many times its clusters panel was painted
CANVAS_ROWS = """() => Array.from(document.querySelectorAll('[data-testid=stMain] *')).filter(e => e.shadowRoot)
  .map(e => e.shadowRoot.querySelector('.pcrp-live-row')).filter(r => r).map(r => [+(r.dataset.frames || 0),
    Array.from(r.querySelectorAll('canvas')).filter(c => { const d = c.getContext('2d')
      .getImageData(0, 0, c.width, c.height).data; for (let i = 3; i < d.length; i += 4) if (d[i] > 0) return true;
      return false; }).length, +(r.dataset.seq || 0), +(r.querySelector('canvas.clusters').dataset.paints || 0)])"""


def test_a_live_run_at_n_2000_draws_on_its_canvases_moves_its_status_line_and_fades_nothing():
    """The live view is one canvas row per prior (trace | posterior of K | clusters, live_canvas.js), redrawn as
    frames come; the status line is page text that changes as the chains advance. Streamlit fades the elements of a
    rerunning fragment as stale; the live panel reruns itself every frame, so without the panel's own style 40-45% of
    samples showed faded charts (issue 37). Streamlit's fade starts after a delay that a quick redraw on a quiet
    machine never reaches; with transitions off here every stale moment shows (as on a busy server), so the test
    sees a fade whenever the page would draw one."""
    with streamlit_app() as (server, _), chromium() as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.goto(server + "/?data=sim2&sim_n=2000&sweeps=100000&pace=full+speed")
        expect(page.get_by_role("button", name="Start", exact=True)).to_be_enabled(timeout=60_000)
        page.get_by_role("button", name="Start", exact=True).click()
        expect(page.locator(".pcrp-live-row canvas")).to_have_count(6, timeout=90_000)
        expect(page.get_by_text(re.compile(r"pCRP running: "))).not_to_have_count(0, timeout=60_000)
        assert page.locator("[data-testid='stVegaLiteChart']").count() == 0  # Vega-Lite only once the run ends
        for header in ("trace of K", "posterior of K", "density now"):  # the column headers: page text in the canvas
            expect(page.get_by_text(header, exact=True)).to_have_count(1)
        before = page.evaluate(CANVAS_ROWS)
        page.add_style_tag(content="* {transition: none !important;}")
        stale, faded, samples, redraws, last = 0, 0, 0, 0, ""
        deadline = time.monotonic() + 6
        while time.monotonic() < deadline:
            marked, drawn_faded = page.evaluate(FADED)
            stale += marked > 0
            faded += drawn_faded > 0
            samples += 1
            text = page.locator(".st-key-status").inner_text()
            redraws += text != last
            last = text
            time.sleep(0.1)
        assert redraws > 3 and stale > 0, "the run must be redrawn (its elements marked stale) while sampled"
        assert faded == 0, f"{faded} of {samples} samples showed a faded element"
        after = page.evaluate(CANVAS_ROWS)
        assert len(before) == len(after) == 2, (before, after)
        assert all(a[0] > b[0] + 5 and a[1] == 3 for a, b in zip(after, before)), (before, after)  # drawn, inked
        # played back: the page draws each server frame's sweeps over several drawn frames (about 4: live_canvas.js),
        # so it draws more often than frames come (drawn only on arrival, the two counts would be about equal)
        assert all(2 * (a[0] - b[0]) >= 3 * (a[2] - b[2]) > 0 for a, b in zip(after, before)), (before, after)
        # a panel is painted only when its picture changes: the clusters panel (a mark per point) only when a frame
        # brings new colours, so at most once per frame, not at every step of the playback
        assert all(a[3] - b[3] <= a[2] - b[2] + 1 for a, b in zip(after, before)), (before, after)
        page.get_by_role("button", name="Stop", exact=True).click()

"""A presenter at the Explorer, in a real browser (Playwright + Debian's chromium against `streamlit run serve.py`):
the keys work after a click on the Present toggle or the pace slider (→ and Page Down, as a clicker sends, step a
paused run); no key throws a run away at one press (Space on a finished run and R say what a second press does, at
the top of the page); Reset, by the button or the keys, leaves no run for a reload; the live posterior of K labels
its K values in every row; a notice shown at Start does not come back when the run ends."""

import re
import time

import pytest

from browser_support import browser, require_chromium, server, status, wait_for_status  # noqa: F401 (fixtures)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

require_chromium(module_level=True)

from playwright.sync_api import expect  # noqa: E402

def settled_pause(page):
    """The status once every chain has paused and the page shows the sweep it stopped at (two readings a second
    apart agree: under load the last sweep before the pause can reach the page after the word "paused")."""
    paused = wait_for_status(page, lambda s: all(v[0] == "paused" for v in s.values()), seconds=30)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        time.sleep(1.0)
        again = status(page)
        if again == paused:
            return paused
        paused = again or paused
    raise AssertionError(f"the paused status kept changing; last: {paused}")


def step_ready(page):
    """Wait until the One sweep button is enabled (a key pressed while the page redraws it has nothing to click)."""
    expect(page.locator(".st-key-step button")).to_be_enabled(timeout=30_000)


def key_notice(page):
    """The keys' notice at the top of the page, or None when none shows."""
    box = page.locator("#pcrp-key-notice")
    return box.inner_text() if box.count() and box.is_visible() else None


def open_explorer(browser, query):
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.goto(f"{browser.pcrp_server}/?{query}")
    expect(page.get_by_role("button", name="Start", exact=True)).to_be_enabled(timeout=90_000)
    page.wait_for_function("() => window.pcrpKeys === true", timeout=30_000)  # the keys' listener is in place
    return page


@pytest.fixture
def explorer(server, browser):
    browser.pcrp_server = server
    pages = []

    def make(query):
        pages.append(open_explorer(browser, query))
        return pages[-1]

    yield make
    for page in pages:
        page.close()


def test_the_keys_work_after_a_click_on_the_present_toggle_or_the_pace_slider(explorer):
    """Clicking Present left the focus on its toggle, and the keys were ignored there (the arrow and Page Down did
    nothing). Now a control focused by a click keeps no key: after the toggle (on, then off) and after a click on the
    pace slider's handle, Space pauses, → and Page Down each step exactly one sweep, and the pace stays."""
    page = explorer("sweeps=100000")
    page.keyboard.press("Space")  # no run yet: Space starts one
    wait_for_status(page, lambda s: set(s) == {"CRP", "pCRP"} and all(v[0] == "running" for v in s.values()))
    page.locator(".st-key-w_present").get_by_text("Present", exact=True).click()
    expect(page.locator("section[data-testid='stSidebar']")).to_be_hidden(timeout=30_000)
    expect(page.locator(".st-key-pause button")).to_be_enabled(timeout=30_000)
    toggle = page.locator(".st-key-w_present input[type=checkbox]")
    for _ in range(20):  # the page's redraw may take the focus; the case under test is the click's focus on the toggle
        if page.evaluate("() => document.activeElement.type") == "checkbox":
            break
        toggle.focus()
        time.sleep(0.3)
    assert page.evaluate("() => document.activeElement.type") == "checkbox"
    page.keyboard.press("Space")
    paused = settled_pause(page)
    step_ready(page)
    page.keyboard.press("ArrowRight")
    wait_for_status(page, lambda s: all(s[p][1] == paused[p][1] + 1 for p in s), seconds=30)
    step_ready(page)
    page.keyboard.press("PageDown")
    wait_for_status(page, lambda s: all(s[p][1] == paused[p][1] + 2 for p in s), seconds=30)
    page.locator(".st-key-w_present").get_by_text("Present", exact=True).click()  # Present off again
    expect(page.locator("section[data-testid='stSidebar']")).to_be_visible(timeout=30_000)
    step_ready(page)
    page.keyboard.press("PageDown")
    wait_for_status(page, lambda s: all(s[p][1] == paused[p][1] + 3 for p in s), seconds=30)
    pace = page.locator(".st-key-w_pace input[type=range]")
    before = pace.get_attribute("aria-valuetext")
    pace.locator("xpath=../..").click()  # the slider's handle: the pace stays, the focus is the slider's
    assert page.evaluate("() => document.activeElement.type") == "range"
    step_ready(page)
    page.keyboard.press("ArrowRight")
    wait_for_status(page, lambda s: all(s[p][1] == paused[p][1] + 4 for p in s), seconds=30)
    assert pace.get_attribute("aria-valuetext") == before
    page.keyboard.press("Space")  # resume
    wait_for_status(page, lambda s: all(v[0] == "running" for v in s.values()), seconds=30)
    page.keyboard.press("r")
    page.keyboard.press("r")


def test_space_and_r_on_a_finished_run_act_only_at_a_second_press(explorer):
    """Space on a finished run started a new one (the old one gone) and R reset at once. Now the first press says
    at the top of the page what a second press of the same key does; another key, or four seconds, cancels; the
    second press does it."""
    page = explorer("sweeps=2000&burn_in=500&pace=1%2C000+sweeps%2Fs")  # 2 s a run
    page.keyboard.press("Space")
    wait_for_status(page, lambda s: all(v == ("finished", 2000) for v in s.values()))
    expect(page.locator(".pcrp-live-row")).to_have_count(0, timeout=30_000)  # the ended run's page is drawn
    finished = page.locator(".st-key-status").inner_text()

    page.keyboard.press("Space")
    expect(page.locator("#pcrp-key-notice")).to_have_text(re.compile("Press Space again to start a new run"))
    page.wait_for_timeout(1_500)
    assert status(page) == {"CRP": ("finished", 2000), "pCRP": ("finished", 2000)}  # nothing started
    expect(page.locator("#pcrp-key-notice")).to_be_hidden(timeout=6_000)  # the offer lapses
    page.keyboard.press("Space")
    page.wait_for_timeout(5_000)
    page.keyboard.press("Space")  # a second press after the offer lapsed is a first press again
    page.wait_for_timeout(1_500)
    assert page.locator(".st-key-status").inner_text() == finished

    page.keyboard.press("r")  # R, then another key: kept
    expect(page.locator("#pcrp-key-notice")).to_have_text(re.compile("Press R again to clear this run"))
    page.keyboard.press("Space")  # ... Space now asks in its turn, and R's offer is gone
    assert "Press Space again" in key_notice(page)
    page.keyboard.press("r")
    assert "Press R again" in key_notice(page)
    page.wait_for_timeout(1_500)
    assert page.locator(".st-key-status").inner_text() == finished

    page.keyboard.press("r")  # R twice: cleared
    expect(page.get_by_text(re.compile("Press Start to run CRP and pCRP"))).to_be_visible(timeout=10_000)
    page.keyboard.press("Space")  # no run: Space starts one at once
    wait_for_status(page, lambda s: all(v[0] == "running" for v in s.values()))
    wait_for_status(page, lambda s: all(v == ("finished", 2000) for v in s.values()))
    expect(page.locator(".pcrp-live-row")).to_have_count(0, timeout=30_000)
    page.keyboard.press("Space")
    page.keyboard.press("Space")  # Space twice: a new run
    wait_for_status(page, lambda s: all(v[0] == "running" for v in s.values()))


def test_reset_by_the_button_or_r_twice_leaves_no_run_for_a_reload(explorer):
    """After Reset (the button, or R pressed twice) a reload brought the run back, "stopped because you pressed Reset"
    or "finished". Now the reload shows no run: a running run reset by the button, a running one and a finished one
    by the keys."""
    page = explorer("sweeps=100000")
    for how, query in (("button", "sweeps=100000"), ("keys", "sweeps=100000"),
                       ("keys", "sweeps=2000&burn_in=500&pace=full+speed")):
        page.goto(page.url.split("?")[0] + "?" + query)
        expect(page.get_by_role("button", name="Start", exact=True)).to_be_enabled(timeout=60_000)
        page.wait_for_function("() => window.pcrpKeys === true", timeout=30_000)
        page.get_by_role("button", name="Start", exact=True).click()
        if "full" in query:
            wait_for_status(page, lambda s: all(v == ("finished", 2000) for v in s.values()))
            expect(page.locator(".pcrp-live-row")).to_have_count(0, timeout=30_000)  # the ended run's page is drawn
        else:
            wait_for_status(page, lambda s: all(v[0] == "running" for v in s.values()))
        if how == "button":
            page.get_by_role("button", name="Reset", exact=True).click()
        else:
            page.keyboard.press("r")
            page.keyboard.press("r")
        expect(page.get_by_text(re.compile("Press Start to run CRP and pCRP"))).to_be_visible(timeout=10_000)
        page.reload()
        expect(page.get_by_role("button", name="Start", exact=True)).to_be_enabled(timeout=60_000)
        expect(page.get_by_text(re.compile("Press Start to run CRP and pCRP"))).to_be_visible(timeout=30_000)
        page.wait_for_timeout(2_000)  # (a run found again would be drawn by now)
        assert status(page) == {}, (how, query, status(page))
        expect(page.locator(".st-key-reset button")).to_be_disabled()


# the K labels of each row's live posterior of K (canvases), and the dark pixels under each: [[K, ink], ...] per row
K_LABELS = """canvases => canvases.map(c => {
  const labels = JSON.parse(c.dataset.kLabels || '[]'), top = +c.dataset.labelTop, dpr = c.width / c.clientWidth;
  const ctx = c.getContext('2d'), font = 12;
  return labels.map(([k, x]) => {
    const img = ctx.getImageData(Math.round((x - font / 2) * dpr), Math.round(top * dpr), Math.round(font * dpr),
                                 Math.round(font * dpr)).data;
    let ink = 0;
    for (let i = 0; i < img.length; i += 4) if (img[i + 3] > 128 && img[i] < 120) ink++;
    return [k, ink];
  });
})"""


def test_the_live_posterior_of_k_labels_its_k_values_in_every_row(explorer):
    """While a run is live each row's posterior of K labels the K values under its bars (before, only the bottom row
    had labels, at multiples of 5: a class could not tell K = 2 from K = 3). Old Faithful at its shipped r: the axis
    fits the kept K values, so every K from 1 to at least 6 has its label, and each label is drawn (dark pixels
    under its K)."""
    page = explorer("sweeps=100000")
    page.get_by_role("button", name="Start", exact=True).click()
    wait_for_status(page, lambda s: all(v[0] == "running" and v[1] > 800 for v in s.values()))  # past burn-in
    page.wait_for_timeout(2_500)
    rows = page.locator(".pcrp-live-row canvas.khist").evaluate_all(K_LABELS)  # (in the rows' shadow roots)
    assert len(rows) == 2, rows
    for row in rows:
        ks = [k for k, _ in row]
        assert ks[:6] == [1, 2, 3, 4, 5, 6], rows
        assert all(ink > 3 for _, ink in row), rows
    page.keyboard.press("r")
    page.keyboard.press("r")


def test_a_notice_shown_at_start_does_not_come_back_when_the_run_ends(explorer):
    """The "Started ..." notice came back when the run ended (Streamlit showed it again when a style element before
    it went away). A run of 7 s: the notice shows at Start, has gone before the end, and stays gone after it."""
    page = explorer("sweeps=700&burn_in=200")
    page.get_by_role("button", name="Start", exact=True).click()
    expect(page.locator('[data-testid="stToast"]')).to_have_count(1, timeout=10_000)
    assert "Started CRP and pCRP on Old Faithful" in page.locator('[data-testid="stToast"]').inner_text()
    expect(page.locator('[data-testid="stToast"]')).to_have_count(0, timeout=15_000)
    wait_for_status(page, lambda s: all(v[0] == "finished" for v in s.values()), seconds=60)
    seen = 0
    for _ in range(30):  # 6 s after the end: the page is redrawn whole meanwhile
        seen += page.locator('[data-testid="stToast"]').count()
        page.wait_for_timeout(200)
    assert seen == 0

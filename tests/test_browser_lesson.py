"""The lesson in a real browser (Debian's chromium under Playwright): a presenter runs the whole lesson from the
keyboard, as a clicker does (the right arrow and Page Down forward, the left arrow and Page Up back), with Present
switched on by a click in the middle and off again later, so that the keys are pressed with the focus on the switch;
a step that computes says what it computes under its new title, never over the previous step's content.

Skips with a message when /usr/bin/chromium is missing (tests/browser_support.py)."""

import re

import pytest

from pcrp.teaching import lesson

pytestmark = [pytest.mark.browser, pytest.mark.slow]

STEP_MS = 120_000  # a fresh server computes steps 3 to 5 the first time (and may compile the kernels first)


def heading(page, number):
    return page.get_by_role("heading", name=f"{number}. {lesson.STEPS[number - 1].title}")


def shown(page, number):
    """Step ``number`` is on the page with its own sentence, its Explorer link and nothing left greyed."""
    from playwright.sync_api import expect

    expect(heading(page, number)).to_be_visible(timeout=STEP_MS)
    expect(page.locator("p.lesson-say")).to_have_count(1, timeout=STEP_MS)
    expect(page.locator("[data-stale='true']")).to_have_count(0, timeout=STEP_MS)
    expect(page.get_by_role("link", name=re.compile(r"^Open in the Explorer"))).to_be_visible(timeout=STEP_MS)
    if number > 1:  # the lesson's first address may carry no step
        expect(page).to_have_url(re.compile(rf"step={number}\b"))


def press(page, key, number):
    """``key`` goes to step ``number``, which is then shown whole."""
    page.keyboard.press(key)
    shown(page, number)


def focused(page):
    return page.evaluate("() => { const a = document.activeElement; "
                         "return [a.tagName, a.type || '', a.getAttribute('role') || ''].join(' ') }")


def present_switch(page):
    return page.locator(".st-key-lesson_present").get_by_text("Present", exact=True)


def test_the_whole_lesson_runs_from_the_keyboard_with_present_toggled_in_the_middle():
    from browser_support import chromium, require_chromium, streamlit_app

    require_chromium()
    from playwright.sync_api import expect

    with streamlit_app() as (url, _), chromium() as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.goto(url + "/lesson")
        shown(page, 1)
        page.wait_for_function("() => window.pcrpLessonKeys === true", timeout=30_000)
        sidebar = page.locator("section[data-testid='stSidebar']")
        expect(sidebar).to_be_visible()
        press(page, "ArrowRight", 2)
        press(page, "PageDown", 3)

        # A step that computes (the kernels, then the chains, on a fresh server): under the new title, a line that
        # says what it waits for, and no sentence of the step before (recorded by the page itself, as it changes).
        page.evaluate("""() => {
            window.pcrpSeen = [];
            const look = () => {
              const h = [...document.querySelectorAll('h2')].map(e => e.textContent).join('|');
              const say = [...document.querySelectorAll('p.lesson-say')].map(e => e.textContent).join('|');
              const wait = [...document.querySelectorAll('[data-testid="stAlert"]')].map(e => e.textContent).join('|');
              window.pcrpSeen.push({h, say, wait});
            };
            new MutationObserver(look).observe(document.body, {subtree: true, childList: true, characterData: true});
        }""")
        before = page.locator("p.lesson-say").first.text_content()
        press(page, "ArrowRight", 4)
        seen = page.evaluate("() => window.pcrpSeen")
        at_4 = [s for s in seen if s["h"].startswith("4.")]
        assert at_4, seen[-3:]
        assert not any(before in s["say"] for s in at_4), "step 3's sentence stayed under step 4's title"
        waits = [s["wait"] for s in at_4 if s["wait"]]
        # (the sampler's wait line says "checking numba's cache" before the compile's first report on a busy machine)
        assert all("Step 4: Running" in w or "compil" in w.lower() or "Preparing the sampler" in w
                   for w in waits), waits

        # Present on, by a click: the focus stays on the switch, and the keys still move the lesson.
        present_switch(page).click()
        expect(sidebar).to_be_hidden(timeout=30_000)
        expect(page).to_have_url(re.compile(r"present=1"))
        assert focused(page) == "INPUT checkbox switch", focused(page)
        page.evaluate("() => { window.pcrpSeen = []; }")
        four = page.locator("p.lesson-say").first.text_content()
        press(page, "PageDown", 5)
        at_5 = [s for s in page.evaluate("() => window.pcrpSeen") if s["h"].startswith("5.")]
        assert any("Step 5: Fitting the CRP to Sim 1" in s["wait"] and not s["say"] for s in at_5), \
            "step 5 computed without saying what it waits for, in place of step 4's content"
        assert not any(four in s["say"] for s in at_5), "step 4's sentence stayed under step 5's title"
        link = page.get_by_role("link", name=re.compile(r"^Open in the Explorer at r = "))
        expect(link).to_have_attribute("href", re.compile(r"^http://127\.0\.0\.1:\d+/\?.*data=sim1"))
        expect(link).to_have_attribute("href", re.compile(r"present=1"))
        press(page, "ArrowRight", 6)
        press(page, "PageDown", 7)
        page.keyboard.press("ArrowRight")  # the last step: Next is disabled, the key does nothing
        page.wait_for_timeout(1000)
        shown(page, 7)

        # Present off, by a click, and back through every step from the keyboard.
        present_switch(page).click()
        expect(sidebar).to_be_visible(timeout=30_000)
        assert "present" not in page.url
        assert focused(page) == "INPUT checkbox switch", focused(page)
        for number, key in zip(range(6, 0, -1), ("PageUp", "ArrowLeft") * 3):
            press(page, key, number)
        page.close()

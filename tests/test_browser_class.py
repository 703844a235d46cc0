"""A class on one server, in real browsers (Playwright + Debian's chromium against `streamlit run serve.py` with the
capacity fixed low by the administrator's setting, PCRP_MAX_LIVE_RUNS=3): three students behind one router and two
visitors from other addresses press Start. The first three go live and their pages say how many runs share the
server and at what pace; the other two wait in the queue with their place; when a student closes the tab, its run's
place goes to the first in the queue, which starts by itself. bench/load_client.py measures how many visitors fit;
this test checks what they see."""

import re

import pytest

from browser_support import chromium, require_chromium, streamlit_app

pytestmark = pytest.mark.browser

require_chromium(module_level=True)

from playwright.sync_api import expect  # noqa: E402

CAPACITY = 3
# a run that stays live through the test at a pace a 2-core machine keeps for five pages at once
ADDRESS = "/?sweeps=50000&pace=10+sweeps%2Fs"
RUNNING = re.compile(r"CRP running: [\d,]+ / 50,000 sweeps")


@pytest.fixture(scope="module")
def server():
    with streamlit_app(env={"PCRP_MAX_LIVE_RUNS": str(CAPACITY)}) as (url, _):
        yield url


def visitor(browser, server, address):
    """A browser of its own (its own cookie jar: its own key) whose requests come from ``address`` (as a reverse
    proxy on this machine sends them), on the Explorer with Start ready."""
    context = browser.new_context(viewport={"width": 1280, "height": 800},
                                  extra_http_headers={"X-Forwarded-For": address})
    page = context.new_page()
    page.goto(server + ADDRESS)
    page.get_by_role("button", name="Start").wait_for(timeout=120_000)
    return page


def test_a_class_behind_one_router_goes_live_shares_the_pace_queues_past_capacity_and_frees_a_closed_tab(server):
    with chromium() as browser:
        students = [visitor(browser, server, "203.0.113.5") for _ in range(CAPACITY)]
        for page in students:
            page.get_by_role("button", name="Start").click()
            expect(page.get_by_text(RUNNING).first).to_be_visible(timeout=60_000)  # live: no refusal per address
        # every live page says how many runs share the server and the pace each gets
        for page in students:
            expect(page.locator(".st-key-status")).to_contain_text(re.compile(
                rf"{CAPACITY} runs share this server's \d+ cores now; (each still runs at the pace it asks for "
                r"\(10 sweeps/s\)|this one gets about [\d,]+ of the 10 sweeps/s it asks for)"), timeout=30_000)
        late = [visitor(browser, server, f"198.51.100.{i}") for i in (7, 8)]
        for page in late:
            page.get_by_role("button", name="Start").click()
        expect(late[0].get_by_text(re.compile(r"waits in the queue: 1st of 2; it starts by itself"))).to_be_visible(
            timeout=30_000)
        expect(late[1].get_by_text(re.compile(r"waits in the queue: 2nd of 2"))).to_be_visible(timeout=30_000)
        assert not late[0].get_by_text(RUNNING).count()
        # a student closes the tab: the run stops after its grace, and the first in the queue starts by itself
        students[0].context.close()
        expect(late[0].get_by_text(RUNNING).first).to_be_visible(timeout=30_000)
        expect(late[1].get_by_text(re.compile(r"waits in the queue: 1st of 1"))).to_be_visible(timeout=30_000)
        for page in students[1:] + late:
            page.get_by_role("button", name="Reset").click()
            page.context.close()

"""Screenshots of every page of the app, as a visitor sees them, at a projector's 1280 x 800 and at 1500 x 1000.

    python bench/screenshots.py [--out docs/screenshots] [--pages explorer,present,five,five-present,choose_r,
                                                                 choose_r-present,...]

Starts `streamlit run serve.py` on a free port and drives Debian's chromium (Playwright; never `playwright
install`). Each page is shown after it has something on it: the Explorer after its default demo has run about
12 s, live (and again with `?present=1`, the presentation mode; "five": the five registry priors on Sim 2, one row
each, `?priors=crp,pcrp,py,mfm,sfm`), Choose r after "Compare all three" at its other default settings (Old
Faithful; a few minutes; and in Present, `choose_r-present`), Reproduce the paper with our published run opened, Rich
get richer after twenty customers ("rich-present": with `?present=1`, at 1280 x 800); issue 57's settings with Present
on at 1280 x 800 after 12 s of their run, live ("faithful-types": Old Faithful under each covariance type,
explorer-old-faithful-<type>-present; "mnist10-types": MNIST at 10 dimensions, explorer-mnist-10d-<type>-present). Files:
<out>/<page>-<width>x<height>.png. Look at them before committing.
"""

import argparse
import os
import re
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))

SIZES = ((1280, 800), (1500, 1000))


def shoot(page, out, name, width, height):
    page.set_viewport_size({"width": width, "height": height})
    page.wait_for_timeout(1500)  # charts re-lay out to the new width
    page.mouse.move(width - 5, height - 5)  # no tooltip over the content
    path = os.path.join(out, f"{name}-{width}x{height}.png")
    page.screenshot(path=path)
    print(f"wrote {path}", flush=True)


FIVE_ROWS = "priors=crp,pcrp,py,mfm,sfm&data=sim2"


def explorer(browser, url, out, present, five=False):
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1280, "height": 800})
    query = "&".join((["present=1"] if present else []) + ([FIVE_ROWS] if five else []))
    page.goto(url + "/" + (f"?{query}" if query else ""))
    expect(page.get_by_role("button", name="Start", exact=True)).to_be_enabled(timeout=90_000)
    if not present:  # the sidebar's collapse button shows on hover
        page.locator('[data-testid="stSidebar"]').hover()
        page.get_by_label("Collapse sidebar").click()
    page.get_by_role("button", name="Start", exact=True).click()
    expect(page.locator(".pcrp-live-row canvas").nth(14 if five else 5)).to_be_visible(timeout=90_000)
    page.wait_for_timeout(12_000)  # live, past burn-in (500 of 2,000 sweeps at 100 a second): the notes show
    expect(page.locator('[data-testid="stToast"]')).to_have_count(0, timeout=15_000)
    sizes = SIZES[:1] if present else SIZES
    name = "explorer" + ("-five-rows" if five else "") + ("-present" if present else "")
    for width, height in sizes:
        shoot(page, out, name, width, height)
    page.close()


# Issue 57's settings, each with Present on at 1280 x 800 after its run has run 12 s (past burn-in, so that the rows'
# notes show): Old Faithful and MNIST at 10 dimensions under each covariance type, the rows' r the one shipped for it.
SETTINGS_SHOTS = {
    **{f"explorer-old-faithful-{t}-present": f"present=1&covariance={t}" for t in ("full", "diag", "spherical")},
    **{f"explorer-mnist-10d-{t}-present": f"present=1&data=mnist&dims=10&covariance={t}"
       for t in ("full", "diag", "spherical")},
}


def explorer_at(browser, url, out, name, query, seconds=12):
    """The Explorer at ``query`` (with Present on), its run started and shot after ``seconds`` at 1280 x 800."""
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.goto(url + "/?" + query)
    expect(page.get_by_role("button", name="Start", exact=True)).to_be_enabled(timeout=90_000)
    page.get_by_role("button", name="Start", exact=True).click()
    expect(page.locator(".pcrp-live-row canvas").first).to_be_visible(timeout=90_000)
    page.wait_for_timeout(seconds * 1000)
    expect(page.locator('[data-testid="stToast"]')).to_have_count(0, timeout=15_000)
    shoot(page, out, name, 1280, 800)
    page.close()


def choose_r(browser, url, out, present=False):
    """Choose r after "Compare all three" at the page's other defaults (Old Faithful; a few minutes): the comparison
    of the covariance types at the top, then the chosen type's curve. Present: ?present=1, at 1280 x 800, and the
    same scrolled to the figure."""
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.goto(url + "/choose_r" + ("?present=1" if present else ""))
    expect(page.get_by_text("Choose r by cross validation")).to_be_visible(timeout=90_000)
    page.locator("[data-testid=stRadio] label", has_text="Compare all three").click()
    page.get_by_role("button", name="Run cross validation").click()
    expect(page.get_by_text(re.compile("Cross validation proposes r ="))).to_be_visible(timeout=900_000)
    expect(page.locator(".js-plotly-plot").first).to_be_visible(timeout=60_000)
    name = "choose_r" + ("-present" if present else "")
    shoot_from_heading(page, out, name, "Which covariance the data support", SIZES[:1] if present else SIZES)
    if present:
        page.locator(".js-plotly-plot").first.evaluate("element => element.scrollIntoView({block: 'start'})")
        shoot(page, out, name + "-figure", 1280, 800)
    page.close()


def reproduce(browser, url, out):
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.goto(url + "/reproduce")
    expect(page.get_by_text("Reproduce the paper").first).to_be_visible(timeout=90_000)
    for width, height in SIZES:
        shoot(page, out, "reproduce", width, height)
    page.get_by_text("Our full run of every experiment").click()
    shoot_from_heading(page, out, "reproduce-published", "Sim 1, N = 300")
    shoot_from_heading(page, out, "reproduce-compared", "Compared with what")
    page.close()


def shoot_from_heading(page, out, name, heading, sizes=SIZES):
    """Screenshots at every size with the page scrolled to the first heading matching ``heading`` at the top."""
    from playwright.sync_api import expect

    element = page.get_by_role("heading", name=re.compile(heading)).first
    expect(element).to_be_visible(timeout=30_000)
    for width, height in sizes:
        page.set_viewport_size({"width": width, "height": height})
        element.evaluate("element => element.scrollIntoView({block: 'start'})")
        shoot(page, out, name, width, height)


def rich(browser, url, out, present=False):
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.goto(url + "/rich_get_richer" + ("?present=1" if present else ""))
    expect(page.get_by_role("button", name="+10")).to_be_visible(timeout=90_000)
    for _ in range(2):
        page.get_by_role("button", name="+10").click()
        page.wait_for_timeout(1500)
    for width, height in SIZES[:1] if present else SIZES:
        shoot(page, out, "rich_get_richer" + ("-present" if present else ""), width, height)
    page.close()


def main():
    from browser_support import chromium, streamlit_app

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.path.join(ROOT, "docs", "screenshots"))
    parser.add_argument("--pages", default="explorer,present,choose_r,choose_r-present,reproduce,rich")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    started = time.perf_counter()
    with streamlit_app() as (url, _), chromium() as browser:
        for name in args.pages.split(","):
            if name in ("explorer", "present", "five", "five-present"):
                explorer(browser, url, args.out, present=name.endswith("present"), five=name.startswith("five"))
            elif name in ("faithful-types", "mnist10-types"):
                stem = "explorer-old-faithful-" if name == "faithful-types" else "explorer-mnist-10d-"
                for shot, query in SETTINGS_SHOTS.items():
                    if shot.startswith(stem):
                        explorer_at(browser, url, args.out, shot, query)
            elif name in ("choose_r", "choose_r-present"):
                choose_r(browser, url, args.out, present=name.endswith("present"))
            elif name == "reproduce":
                reproduce(browser, url, args.out)
            elif name in ("rich", "rich-present"):
                rich(browser, url, args.out, present=name.endswith("present"))
            else:
                raise SystemExit(f"unknown page {name!r}")
    print(f"{time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())

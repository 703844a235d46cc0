"""Screenshots of every step of the guided lesson, as a class sees them on a 1280 x 800 projector (and step 1 at
1500 x 1000), each reached with the right arrow key from the step before.

    python bench/lesson_screenshots.py [--out docs/screenshots] [--present]

Starts `streamlit run serve.py` on a free port and drives Debian's chromium (Playwright; never `playwright
install`). Files: <out>/lesson-step<N>-1280x800.png and <out>/lesson-step1-1500x1000.png (with --present:
lesson-present-step<N>-1280x800.png). Look at each before committing.
"""

import argparse
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))

STEP_SECONDS = 120  # a cold server compiles the sampler's kernels at the first chain (step 3)


def wait_for_step(page, number):
    """Until step ``number`` shows its own sentence (not a wait, not the previous step greyed) and its charts have
    laid out."""
    from playwright.sync_api import expect

    from pcrp.teaching.lesson import STEPS

    timeout = STEP_SECONDS * 1000
    expect(page.get_by_role("heading", name=f"{number}. {STEPS[number - 1].title}")).to_be_visible(timeout=timeout)
    expect(page.locator("p.lesson-say")).to_have_count(1, timeout=timeout)
    expect(page.locator("[data-stale='true']")).to_have_count(0, timeout=timeout)
    page.wait_for_timeout(2500)  # charts lay out


def main():
    from browser_support import chromium, streamlit_app

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.path.join(ROOT, "docs", "screenshots"))
    parser.add_argument("--present", action="store_true", help="presentation mode (?present=1)")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    from pcrp.teaching.lesson import STEPS

    prefix = "lesson-present-step" if args.present else "lesson-step"
    with streamlit_app() as (url, _), chromium() as browser:
        page = browser.new_page(viewport={"width": 1500, "height": 1000})
        page.goto(url + "/lesson" + ("?present=1" if args.present else ""))
        wait_for_step(page, 1)
        if not args.present:
            page.mouse.move(1495, 995)
            page.screenshot(path=os.path.join(args.out, f"{prefix}1-1500x1000.png"))
        page.set_viewport_size({"width": 1280, "height": 800})
        for step in STEPS:
            if step.number > 1:
                page.keyboard.press("ArrowRight")
            wait_for_step(page, step.number)
            page.mouse.move(1275, 795)  # no tooltip over the content
            path = os.path.join(args.out, f"{prefix}{step.number}-1280x800.png")
            page.screenshot(path=path)
            print(f"wrote {path}", flush=True)


if __name__ == "__main__":
    main()

"""A long session with a restless user: does the live view stay connected? Run by hand (not in CI).

    python bench/soak.py [--minutes 30]

One browser tab on the Explorer runs long CRP vs pCRP runs at full speed while the script, every
few seconds in turn, pauses, resumes, steps, scrolls down and back, resizes the window between
1280 x 800 and 1500 x 1000, changes the pace, and starts a new run when one ends. It counts the
"Connection error" modal (the old "Cached ForwardMsg MISS"), JavaScript errors, times a control
did not act within 5 s, and how often the charts were re-created, and prints them at the end.
"""

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from live_browser import ARGS, CHROMIUM, free_port, start_server  # noqa: E402

WATCH = """() => {
  window.__soak = {errors: 0, remounts: 0};
  new MutationObserver(ms => { for (const m of ms) for (const n of m.addedNodes)
      if (n.nodeType === 1 && n.querySelector && n.querySelector('[data-testid=stVegaLiteChart]')) window.__soak.remounts++; })
    .observe(document.querySelector('[data-testid=stMain]'), {childList: true, subtree: true});
}"""


def main():
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=30.0)
    args = parser.parse_args()
    port = free_port()
    server = start_server(port)
    counts = {"connection errors": 0, "javascript errors": 0, "controls that did not act": 0, "runs started": 0}
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.on("pageerror", lambda e: counts.__setitem__("javascript errors", counts["javascript errors"] + 1))
            page.goto(f"http://127.0.0.1:{port}/?sweeps=100000&burn_in=1000&pace=full+speed")
            page.get_by_role("button", name="Start").wait_for(timeout=120_000)
            page.evaluate(WATCH)
            status = page.get_by_text(" sweeps")

            def start():
                page.get_by_role("button", name="Start").click()
                counts["runs started"] += 1
                page.locator('[data-testid="stVegaLiteChart"]').nth(5).wait_for(timeout=60_000)

            def acts(button, word):
                button_el = page.get_by_role("button", name=button, exact=True)
                if button_el.is_disabled():
                    return
                button_el.click()
                try:
                    page.get_by_text(word).first.wait_for(timeout=5_000)
                except Exception:
                    counts["controls that did not act"] += 1

            start()
            steps = [
                lambda: acts("Pause", "paused:"),
                lambda: acts("One sweep", "paused:"),
                lambda: acts("Resume", "running:"),
                lambda: page.evaluate("() => document.querySelector('[data-testid=stMain]').scrollTo(0, 900)"),
                lambda: page.evaluate("() => document.querySelector('[data-testid=stMain]').scrollTo(0, 0)"),
                lambda: page.set_viewport_size({"width": 1500, "height": 1000}),
                lambda: page.set_viewport_size({"width": 1280, "height": 800}),
            ]
            deadline = time.monotonic() + 60 * args.minutes
            i = 0
            while time.monotonic() < deadline:
                steps[i % len(steps)]()
                i += 1
                page.wait_for_timeout(4000)
                if page.get_by_text("Connection error").count():
                    counts["connection errors"] += 1
                    page.reload()
                    page.get_by_role("button", name="Start").wait_for(timeout=120_000)
                    page.evaluate(WATCH)
                if status.count() and ("finished" in status.first.inner_text() or
                                       "stopped" in status.first.inner_text()):
                    start()
            remounts = page.evaluate("() => window.__soak.remounts")
            browser.close()
    finally:
        server.terminate()
        server.wait(10)
    print(f"soak of {args.minutes:g} minutes, {i} user actions")
    for name, value in counts.items():
        print(f"  {name:28s} {value}")
    print(f"  {'charts re-created':28s} {remounts}  (one set per run started is expected)")


if __name__ == "__main__":
    main()

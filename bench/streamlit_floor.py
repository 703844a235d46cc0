"""What one fragment rerun costs the browser on its own: the floor under the live Explorer's frames.

    python bench/streamlit_floor.py [--seconds 8] [--sizes 0,40,160]

Serves a scratch page (written to a temporary folder) whose only moving part is a fragment that reruns every
0.06 s (the live panel's FRAME_SECONDS) and writes one line of text, beside ``size`` static elements (half in the
sidebar: text, or number inputs with --widgets). Opens it in Debian's chromium at 1280 x 800 on the same machine and
prints, per page size, the frames a second (changes of the moving line) and the browser main thread's work per frame
(Chrome's TaskDuration and ScriptDuration), and the share of a core that makes at 10 frames a second.

Why: issue 37 asks 10 frames a second and chains at 0.8 of their unwatched speed with the browser on the same 2
cores, that is at most 0.4 of a core for the browser and the server together. This measures what Streamlit's frontend
spends on each fragment rerun whatever the app draws, so that the Explorer's figure (bench/live_browser.py prints
its page's element count) can be read against it.
"""

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from live_browser import ARGS, CHROMIUM, free_port, page_metrics, wait_for_server

PAGE = '''
import time
import streamlit as st

size = int(st.query_params.get("size", "0"))
widgets = st.query_params.get("widgets") == "1"
with st.sidebar:
    for i in range(size // 2):
        if widgets:
            st.number_input(f"value {i}", value=i, key=f"value{i}")
        else:
            st.markdown(f"static text {i}")
for i in range(size - size // 2):
    st.markdown(f"body text {i}")


@st.fragment(run_every=0.06)
def moving():
    st.markdown(f"moving: {time.monotonic():.3f}")


moving()
'''


def measure(page, cdp, seconds):
    """(frames a second, main-thread task ms per frame, script ms per frame) over ``seconds`` of the open page."""
    line = page.locator("text=moving:").first
    last, changes = line.inner_text(), 0
    before = page_metrics(cdp)
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        now = line.inner_text()
        if now != last:
            changes, last = changes + 1, now
        time.sleep(0.02)
    wall = time.perf_counter() - start
    after = page_metrics(cdp)
    per_frame = {name: 1000 * (after[name] - before[name]) / max(changes, 1) for name in after}
    return changes / wall, per_frame["TaskDuration"], per_frame["ScriptDuration"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--sizes", default="0,40,160", help="static elements on the page, comma-separated")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "page.py").write_text(PAGE, encoding="utf-8")
        port = free_port()
        server = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "page.py", "--server.port", str(port),
                                   "--server.headless", "true", "--server.address", "127.0.0.1",
                                   "--browser.gatherUsageStats", "false"], cwd=folder,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_for_server(port, server)
            print(f"load average {Path('/proc/loadavg').read_text().split()[:3]}; a fragment rerun every 0.06 s, "
                  f"{args.seconds:g} s per page, 1280 x 800")
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
                for widgets in (False, True):
                    for size in (int(s) for s in args.sizes.split(",")):
                        if widgets and size == 0:
                            continue
                        page = browser.new_page(viewport={"width": 1280, "height": 800})
                        cdp = page.context.new_cdp_session(page)
                        cdp.send("Performance.enable")
                        page.goto(f"http://127.0.0.1:{port}/?size={size}&widgets={int(widgets)}")
                        page.locator("text=moving:").first.wait_for(timeout=60_000)
                        page.wait_for_timeout(2000)
                        fps, task, script = measure(page, cdp, args.seconds)
                        kind = "number inputs" if widgets else "lines of text"
                        print(f"  {size:4d} {kind:14s} frames/s {fps:5.1f}   main thread per frame {task:5.1f} ms "
                              f"(script {script:5.1f} ms)   at 10 frames/s: {task / 100:.2f} of a core")
                        page.close()
                browser.close()
        finally:
            server.terminate()
            server.wait(timeout=30)
        print(f"load average at end {Path('/proc/loadavg').read_text().split()[:3]}")


if __name__ == "__main__":
    main()

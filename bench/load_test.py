"""Several visitors at once, in real browsers: does every watched run finish, and does the server give back what it
took? And does a visitor with many windows leave room for everybody else? (bench/load_client.py measures the server
alone, without browsers.)

    python bench/load_test.py [--sessions 8] [--sweeps 20000] [--chains 1] [--after 120] [--rounds 1]
    python bench/load_test.py --defaults     # every tab presses Start on the bare address: the app's defaults
    python bench/load_test.py --attack       # 20 windows from one address at the slowest pace, then a 21st visitor

Starts `streamlit run serve.py`, opens --sessions browser tabs (separate sessions, Debian chromium), each as a
visitor from its own network address (192.0.2.1, .2, ...; --one-address: all from 203.0.113.5) and presses Start
in each (CRP + pCRP on Old Faithful, --chains chains per prior, --sweeps sweeps at full speed; the server admits
runs up to its measured capacity and queues the rest, which start by themselves; one browser holds at most 8 chains)
and watches them until every run has finished or stopped. The addresses reach the server as a reverse proxy on this
machine would send them (an X-Forwarded-For header, which Streamlit's server trusts from 127.0.0.1 only; README).
Meanwhile it samples the server's resident memory and thread count, and the latency of the health check
(/_stcore/health) every 0.2 s. Then it closes every tab and waits --after seconds. Printed per round: runs
finished / started, Starts that waited in the queue and Starts refused, the server's CPU, peak RSS (goal < 1.5 GB),
health latency p50 / p99 / max
(goal p99 < 1 s), and RSS and threads before, at the peak, and after the tabs closed (goal: back within 10% of
before). With --rounds 2 or more the same load runs again on the same server: memory that a round keeps for good
shows as growth from round to round, a one-off high-water mark does not.

--attack (issue 32): --windows (20) windows without cookies, all from one address, start the longest run the
Explorer allows (100,000 sweeps) at its slowest pace (2 sweeps/s; about 14 hours); then a visitor from another
address presses Start at the Explorer's defaults. Printed: how many windows got a run, how many wait in the queue
and how many were refused (and the first refusal's or queue's words), the seconds from that visitor's click to its
run's status line (its place in the queue if it waits), whether its run finished, health latency and peak RSS over
the whole attack.

The browsers run on the server's own two cores here; they are kept at the lowest CPU priority (as if they ran on
the visitors' machines) unless --local-browsers is given.
"""

import argparse
import os
import re
import sys
import threading
import time
import urllib.request
from pathlib import Path

import numpy as np
import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from live_browser import ARGS, CHROMIUM, free_port, lower_browser_priority, start_server  # noqa: E402


class Sampler(threading.Thread):
    """Samples RSS and threads of the server process and health-check latency until stopped; with
    remote_browsers, keeps the browsers at the lowest priority (see lower_browser_priority)."""

    def __init__(self, pid, url, remote_browsers=True):
        super().__init__(daemon=True)
        self.proc, self.url, self.remote_browsers = psutil.Process(pid), url, remote_browsers
        self.rss, self.threads, self.latency, self.times = [], [], [], []
        self.stop_event = threading.Event()

    def snapshot(self):
        return self.proc.memory_info().rss, self.proc.num_threads()

    def run(self):
        while not self.stop_event.is_set():
            if self.remote_browsers:
                lower_browser_priority()  # new tabs start new processes
            rss, threads = self.snapshot()
            self.rss.append(rss)
            self.threads.append(threads)
            start = time.perf_counter()
            try:
                urllib.request.urlopen(self.url + "/_stcore/health", timeout=30).read()
                self.latency.append(time.perf_counter() - start)
            except OSError:
                self.latency.append(float("inf"))
            self.times.append(start)
            self.stop_event.wait(0.2)


def state_of(page):
    text = " ".join(page.get_by_text(re.compile(r"/ [\d,]+ sweeps")).all_inner_texts())
    return re.findall(r"(running|paused|finished|stopped|failed)[^:]*: ([\d,]+) / ([\d,]+) sweeps", text)


REFUSAL = re.compile(r"(already run|runs at most|may hold at most|Too many new browsers)[^\n]*")
QUEUED = re.compile(r"waits in the queue: \d+\w\w of \d+[^\n]*")


def visitor(browser, address):
    """A new browser (no cookies) whose requests reach the server from ``address`` (X-Forwarded-For, as from a
    reverse proxy on this machine)."""
    return browser.new_context(viewport={"width": 1280, "height": 800},
                               extra_http_headers={"X-Forwarded-For": address}).new_page()


def refusal(page):
    """The refusal message on the page after a Start, or None."""
    for text in page.locator('[data-testid="stAlertContentError"]').all_inner_texts():
        if REFUSAL.search(text):
            return text
    return None


def queued(page):
    """The queue's sentence on the page (the run waits for a place), or None."""
    for text in page.locator('[data-testid="stAlertContentInfo"]').all_inner_texts():
        if QUEUED.search(text):
            return QUEUED.search(text).group(0)
    return None


def one_round(browser, url, sampler, args):
    """Open --sessions tabs, press Start in each, watch until every run ended, close the tabs."""
    pages = []
    for i in range(args.sessions):
        page = visitor(browser, "203.0.113.5" if args.one_address else f"192.0.2.{i + 1}")
        page.goto(f"{url}/" if args.defaults else
                  f"{url}/?sweeps={args.sweeps}&burn_in={args.sweeps // 4}&chains={args.chains}&pace=full+speed")
        pages.append(page)
    for page in pages:
        page.get_by_role("button", name="Start").wait_for(timeout=120_000)
        page.get_by_role("button", name="Start").click()
    started = time.monotonic()
    server_cpu = sum(sampler.proc.cpu_times()[:2])
    states, waited = {}, set()
    while time.monotonic() - started < args.timeout:
        states = {i: state_of(page) for i, page in enumerate(pages)}
        waited |= {i for i, page in enumerate(pages) if not states[i] and queued(page)}
        refused = {i: refusal(page) for i, page in enumerate(pages) if not states[i]}
        if all((len(s) == 2 and all(word in ("finished", "stopped", "failed") for word, *_ in s)) or refused.get(i)
               for i, s in states.items()):
            break
        time.sleep(2)
    elapsed = time.monotonic() - started
    server_cpu = sum(sampler.proc.cpu_times()[:2]) - server_cpu
    for page in pages:
        page.context.close()
    return states, refused, elapsed, server_cpu, waited


def attack(browser, url, sampler, args):
    """--windows windows from one address start the longest, slowest run; then a visitor from another address starts
    one at the defaults. Returns what happened, for printing."""
    windows = []
    for _ in range(args.windows):
        page = visitor(browser, "203.0.113.5")
        page.goto(f"{url}/?sweeps=100000&pace=2+sweeps%2Fs")
        windows.append(page)
    for page in windows:
        page.get_by_role("button", name="Start").wait_for(timeout=120_000)
        page.get_by_role("button", name="Start").click()
        time.sleep(0.5)
    time.sleep(5)
    running = sum(bool(state_of(page)) for page in windows)
    refused = [refusal(page) or queued(page) for page in windows]
    waiting = sum(bool(queued(page)) for page in windows)
    newcomer = visitor(browser, "198.51.100.21")
    newcomer.goto(f"{url}/")
    newcomer.get_by_role("button", name="Start").wait_for(timeout=120_000)
    clicked = time.monotonic()
    newcomer.get_by_role("button", name="Start").click()
    time.sleep(2)
    place = queued(newcomer)
    newcomer.get_by_text(re.compile(r"CRP running: [\d,]+ / [\d,]+ sweeps")).first.wait_for(
        timeout=1000 * args.timeout)
    to_start = time.monotonic() - clicked
    finished = False
    while time.monotonic() - clicked < args.timeout:
        s = state_of(newcomer)
        if len(s) == 2 and all(word in ("finished", "stopped", "failed") for word, *_ in s):
            finished = all(word == "finished" for word, *_ in s)
            break
        time.sleep(2)
    newcomer_refused = refusal(newcomer)
    for page in windows + [newcomer]:
        page.context.close()
    return running, waiting, [r for r in refused if r], to_start, finished, newcomer_refused, place


def main():
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=8)
    parser.add_argument("--sweeps", type=int, default=20_000)
    parser.add_argument("--chains", type=int, default=1, help="chains per prior in each session (1-4)")
    parser.add_argument("--after", type=float, default=120.0, help="seconds to wait after closing the tabs")
    parser.add_argument("--rounds", type=int, default=1,
                        help="repeat the whole load this many times on the same server (a leak grows every round)")
    parser.add_argument("--defaults", action="store_true",
                        help="open the bare address: the Explorer's default data, sweeps, chains and pace "
                             "(--sweeps and --chains are then ignored)")
    parser.add_argument("--one-address", action="store_true",
                        help="every tab from one network address (a classroom behind one router)")
    parser.add_argument("--attack", action="store_true",
                        help="--windows windows from one address at the slowest pace, then a visitor from another")
    parser.add_argument("--windows", type=int, default=20)
    parser.add_argument("--timeout", type=float, default=900.0)
    parser.add_argument("--local-browsers", action="store_true",
                        help="leave the browsers at normal priority (they then compete with the server for its cores)")
    args = parser.parse_args()
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    server = start_server(port)
    mib = 2**20
    if args.attack:
        print(f"attack: {args.windows} windows without cookies from one address start 100,000 sweeps at 2 sweeps/s, "
              "then a visitor from another address presses Start at the Explorer's defaults")
    elif args.defaults:
        from pcrp.app.explorer_settings import defaults

        d = defaults()
        print(f"{args.sessions} sessions at the Explorer's defaults: 2 priors x {d['chains']} chain(s) on {d['data']}, "
              f"{d['sweeps']:,} sweeps each at {d['pace']}")
    else:
        print(f"{args.sessions} sessions x 2 priors x {args.chains} chain(s) on Old Faithful, {args.sweeps:,} sweeps "
              "each, at full speed")
    print(f"  load average before: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print("  browsers at " + ("normal priority (competing with the server)" if args.local_browsers else
                              "the lowest priority, as if on the visitors' own machines (--local-browsers: not)"))
    try:
        sampler = Sampler(server.pid, url, remote_browsers=not args.local_browsers)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
            # first visit with a short run: imports, numba's compiled kernels and the page's caches are
            # loaded once per server process; the baseline is taken after that
            warm = browser.new_context().new_page()
            warm.goto(f"{url}/?sweeps=200&burn_in=50&pace=full+speed")
            warm.get_by_role("button", name="Start").wait_for(timeout=120_000)
            warm.get_by_role("button", name="Start").click()
            warm.get_by_text(re.compile("finished: 200 / 200")).first.wait_for(timeout=120_000)
            warm.context.close()
            time.sleep(10)
            before = sampler.snapshot()
            sampler.start()
            if args.attack:
                running, waiting, refused, to_start, finished, newcomer_refused, place = attack(browser, url, sampler,
                                                                                                args)
                latency = np.array(sampler.latency)
                print(f"  windows with a run            {running} / {args.windows}   waiting in the queue: {waiting}   "
                      f"refused: {len(refused) - waiting}")
                if refused:
                    print(f"  first refusal or queue: {refused[0]}")
                print("  visitor from another address  "
                      + (f"refused: {newcomer_refused}" if newcomer_refused else
                         (f"waited in the queue ({place}), " if place else "")
                         + f"run started {to_start:.1f} s after its click, "
                         f"{'finished' if finished else 'NOT finished'}"))
                print(f"  peak RSS                      {max(sampler.rss) / mib:.0f} MiB   (goal < 1,536 MiB)")
                print(f"  health check latency          p50 {np.percentile(latency, 50) * 1000:.0f} ms, "
                      f"p99 {np.percentile(latency, 99) * 1000:.0f} ms, max {latency.max() * 1000:.0f} ms")
                print(f"  load average after: {' '.join(f'{x:.1f}' for x in os.getloadavg())}", flush=True)
                args.rounds = 0
            for round_no in range(1, args.rounds + 1):
                first_sample = len(sampler.rss)
                states, refused, elapsed, server_cpu, waited = one_round(browser, url, sampler, args)
                peak_rss, peak_threads = max(sampler.rss[first_sample:]), max(sampler.threads[first_sample:])
                latency = np.array(sampler.latency[first_sample:])
                times = sampler.times[first_sample:]
                closed = time.monotonic()
                timeline = []  # (seconds after the tabs closed, RSS)
                while time.monotonic() - closed < args.after:
                    time.sleep(min(30.0, args.after - (time.monotonic() - closed)))
                    timeline.append((time.monotonic() - closed, sampler.snapshot()[0]))
                after = sampler.snapshot()
                finished = sum(len(s) == 2 and all(word == "finished" for word, *_ in s) for s in states.values())
                print(f"round {round_no}")
                print(f"  runs finished while watched   {finished} / {args.sessions}   (in {elapsed:.0f} s); "
                      f"Starts that waited in the queue: {len(waited)}; refused Starts: "
                      f"{sum(bool(r) for r in refused.values())}")
                for i, s in states.items():
                    if not (len(s) == 2 and all(word == "finished" for word, *_ in s)):
                        print(f"    session {i}: {s or refused.get(i)}")
                print(f"  server CPU while the runs ran {server_cpu:.0f} s of {elapsed:.0f} s wall "
                      f"({server_cpu / elapsed:.2f} of the {os.cpu_count()} cores)")
                print(f"  peak RSS                      {peak_rss / mib:.0f} MiB   (goal < 1,536 MiB)")
                print(f"  health check latency          p50 {np.percentile(latency, 50) * 1000:.0f} ms, "
                      f"p99 {np.percentile(latency, 99) * 1000:.0f} ms, max {latency.max() * 1000:.0f} ms   "
                      "(goal p99 < 1 s)")
                slow = [(t - times[0], lat) for t, lat in zip(times, latency) if lat > 1.0]
                if slow:
                    print("  health checks over 1 s (seconds into the round, latency): "
                          + ", ".join(f"{t:.1f}: {lat:.2f}" for t, lat in slow[:10]))
                change = 100 * (after[0] - before[0]) / before[0]
                print(f"  RSS     before {before[0] / mib:.0f} MiB, peak {peak_rss / mib:.0f} MiB, {args.after:.0f} s "
                      f"after the tabs closed {after[0] / mib:.0f} MiB ({change:+.1f}%)")
                print("  RSS after the tabs closed: "
                      + ", ".join(f"{t:.0f} s {rss / mib:.0f} MiB" for t, rss in timeline))
                print(f"  threads before {before[1]}, peak {peak_threads}, {args.after:.0f} s after {after[1]}")
                print(f"  load average: {' '.join(f'{x:.1f}' for x in os.getloadavg())}", flush=True)
            browser.close()
        sampler.stop_event.set()
    finally:
        server.terminate()
        server.wait(10)


if __name__ == "__main__":
    main()

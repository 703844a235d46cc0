"""The live Explorer as a class sees it: measured in a real browser (Playwright + Debian chromium).

    python bench/live_browser.py [--sweeps 100000] [--chains 1] [--data old-faithful] [--n N] [--seconds 12]
                                 [--repeats 10] [--low-priority-browser] [--priors crp,pcrp,py,mfm,sfm]
                                 [--app-root /work/wt/base]

--priors: the rows (the page's ?priors=; default its two, CRP above pCRP). --app-root: the checkout whose app is
served (its own pcrp on the server's PYTHONPATH), for a "before" figure of an older version; the unwatched speed is
always this checkout's library (the same kernels).

Old Faithful runs 100,000 sweeps in about 10 s here, so use --seconds 4 for it, or a slower data set
(e.g. --data sim2 --n 2000) for the full 12 s. At N = 100,000 use --sweeps 2000: 100,000 sweeps of 100,000 points
are hours of sampling, which the server's work budget refuses (the script then says so and stops). A run near its end (70% of its sweeps) during the Pause /
Resume clicks is started again (Start) before the next Pause.

One run prints, for the CRP vs pCRP comparison at 1280 x 800 with the sidebar collapsed:
- redraws per second of the live view (changes of the status line, which the same redraw updates
  with the six charts) and the fraction of time the charts are drawn faded as "stale";
- main-thread blocking in the browser per redraw (PerformanceObserver long tasks, > 50 ms each);
- how long Pause, Resume and Stop take to show in the page after the press (from the mouse-down event's time
  stamp, so a busy page's delay in handling the press counts; median, 95th percentile and
  worst over --repeats clicks each; Stop is followed by a new Start), and whether a pause is a freeze (the
  sweep counts one second after "paused" shows, against those shown with it);
- sweeps per second of each chain while watched, against the same chains run in their threads with
  nobody watching (the batch figure, measured before and after the watched run), and their ratio;
- whether the charts were ever re-created (Streamlit re-mounting an element) during the run.

The machine is shared: run it when it is quiet, and read ratios rather than absolute times.
"""

import argparse
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CHROMIUM = "/usr/bin/chromium"
DEFAULT_PRIORS = ("crp", "pcrp")  # the page's two rows without ?priors=
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]

# The live view's row elements: Vega-Lite charts (three per row: the app before issue 37's canvas) or the canvas
# rows of app_pages/explorer_parts/live_canvas.js (one per row, inside a component's shadow root).
VIEWS = """() => Array.from(document.querySelectorAll('[data-testid=stVegaLiteChart]')).concat(
  Array.from(document.querySelectorAll('[data-testid=stMain] *')).filter(e => e.shadowRoot &&
    e.shadowRoot.querySelector('.pcrp-live-row')))"""
PROBE = """() => {
  const views = """ + VIEWS + """;
  window.__live = {longtasks: [], remounts: 0, stale: 0, samples: 0, status: [], t0: performance.now()};
  new PerformanceObserver(list => { for (const e of list.getEntries()) window.__live.longtasks.push(e.duration); })
    .observe({type: 'longtask', buffered: false});
  new MutationObserver(ms => { for (const m of ms) for (const n of m.addedNodes)
      if (n.nodeType === 1 && n.querySelector && (n.querySelector('[data-testid=stVegaLiteChart]') ||
          (n.shadowRoot && n.shadowRoot.querySelector('.pcrp-live-row')))) window.__live.remounts++; })
    .observe(document.querySelector('[data-testid=stMain]'), {childList: true, subtree: true});
  // the time stamp of each press: when the input happened, however long the page took to handle it
  document.addEventListener('pointerdown', e => { window.__live.pressed = e.timeStamp; }, true);
  // the status line (page text, live or not): each change, as it happens (an observer, not polling: a probe that
  // polled every 20 ms took main-thread time from the page it measured)
  let last = '';
  const record = () => {
    const line = document.querySelector('.st-key-status');
    const s = line ? line.textContent : '';
    if (s !== last) { last = s; window.__live.status.push([performance.now(), s]); }
  };
  new MutationObserver(record).observe(document.querySelector('[data-testid=stMain]'),
                                       {childList: true, subtree: true, characterData: true});
  record();
  // faded charts: sampled every 0.1 s
  setInterval(() => {
    if (!window.__live.views || performance.now() - window.__live.viewsAt > 1000) {  // (a full scan: once a second)
      window.__live.views = views(); window.__live.viewsAt = performance.now(); }
    const charts = window.__live.views;
    const faded = charts.some(c => { const box = c.closest('[data-testid=stElementContainer]');
                                     return box && parseFloat(getComputedStyle(box).opacity) < 0.99; });
    window.__live.samples++; if (faded) window.__live.stale++;
  }, 100);
}"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(port, app_root=ROOT, profile=None, env=None, log=None):
    """Serve ``app_root``'s app on ``port``; with ``profile`` (a path), its live fragment under cProfile
    (bench/fragment_profile.py writes the statistics there). env: variables added to the server's environment
    (e.g. NUMBA_CACHE_DIR); log: a path that receives the server's output (default: discarded)."""
    launcher = ([str(ROOT / "bench" / "fragment_profile.py"), str(Path(profile).resolve()), "--"] if profile
                else ["-m", "streamlit"])
    out = open(log, "w") if log else subprocess.DEVNULL
    proc = subprocess.Popen([sys.executable, *launcher, "run", "serve.py", "--server.port", str(port),
                             "--server.headless", "true", "--server.address", "127.0.0.1"], cwd=app_root,
                            env={**os.environ, **(env or {}), "PYTHONPATH": str(app_root)},
                            stdout=out, stderr=subprocess.STDOUT if log else subprocess.DEVNULL)
    if log:
        out.close()  # the server holds its own copy
    wait_for_server(port, proc)
    return proc


def wait_for_server(port, proc, seconds=60):
    """Return once the Streamlit server ``proc`` answers its health check on ``port``; stop it and raise after
    ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=1).read()
            return
        except OSError:
            time.sleep(0.3)
    proc.terminate()
    raise RuntimeError("the Streamlit server did not start")


def data_query(data_name, n):
    """The Explorer's address parameters for the data set (n: points of a simulation or the MNIST subset)."""
    query = f"data={data_name}"
    if n is not None:
        query += f"&{'mnist_n' if data_name == 'mnist' else 'sim_n'}={n}"
    return query


def row_priors(names):
    """{row label: prior} of the rows named ``names`` (registry names), as the page builds them at its defaults: a
    tuned parameter (the pCRP's r) at the data set's shipped cross-validated value (set by the caller)."""
    from pcrp.model import PRIORS

    return {PRIORS[name].label: (name, PRIORS[name]) for name in names}


def batch_rates(data_name, sweeps, chains, n=None, priors=DEFAULT_PRIORS):
    """Sweeps/s of the app's chains (``chains`` per prior, as the page starts them) run in their threads
    with nobody watching, for as long as the watched run is watched."""
    from pcrp import data
    from pcrp.app.live_runs import contrasting_starts, live_specs, new_run
    from pcrp.analyses.cv import builtin_r
    from pcrp.model import make_prior, resolve_niw
    from pcrp.runs.compiling import compile_kernels

    compile_kernels()  # (from numba's cache when the server has compiled them)
    ds = data.load(data_name, n=n)
    r, _ = builtin_r(data_name)  # the r the page starts with (the shipped CV r), not the default 1.1: at
    # Old Faithful's r = 1.7 the pCRP keeps about 2 clusters and sweeps about 3 times as fast as at 1.1
    rows = {label: make_prior(name, **{**spec.defaults(), **({spec.tuned: r} if spec.tuned else {})})
            for label, (name, spec) in row_priors(priors).items()}
    run = new_run(ds, live_specs(ds, rows, resolve_niw(ds.X), iters=sweeps,
                                 burn_in=sweeps // 4, thin=5, seed=0, inits=contrasting_starts("kmeans:10", chains)))
    run.start()
    time.sleep(2.0)
    before = {name: (time.perf_counter(), chain.done) for name, chain in run.chains.items()}
    time.sleep(10.0)
    rates = {name: (chain.done - before[name][1]) / (time.perf_counter() - before[name][0])
             for name, chain in run.chains.items()}
    run.stop("measured")
    run.join(5)
    # the slowest chain of each prior: the page's status line counts a prior's sweeps as its slowest chain's
    # (live_panel.status_parts), so the watched figure is that chain's too
    return {group: min(rates[name] for name in names) for group, names in run.groups.items()}


def parse_done(text):
    return [int(m.replace(",", "")) for m in re.findall(r"([\d,]+) / [\d,]+ sweeps", text)]


def _cpu(processes):
    total = 0.0
    for proc in processes:
        try:
            times = proc.cpu_times()
            total += times.user + times.system
        except psutil.NoSuchProcess:
            pass
    return total


def _process_kind(proc):
    """A chromium process's --type (renderer, gpu-process, utility, ...), or "browser" for the main one."""
    for arg in proc.info["cmdline"] or []:
        if arg.startswith("--type="):
            return arg[len("--type="):]
    return "browser"


def _cpu_by_kind(processes):
    kinds = {}
    for proc in processes:
        kinds.setdefault(_process_kind(proc), []).append(proc)
    return {kind: _cpu(procs) for kind, procs in kinds.items()}


def _busy():
    """CPU seconds the whole machine has been busy (every process, this script and Playwright's driver too)."""
    times = psutil.cpu_times()
    return times.user + times.nice + times.system + times.irq + times.softirq + getattr(times, "steal", 0.0)


# Chrome's own accounting of the page's main thread (CDP Performance.getMetrics, cumulative seconds): all its tasks,
# and the JavaScript, style recalculation and layout among them.
PAGE_METRICS = ("TaskDuration", "ScriptDuration", "RecalcStyleDuration", "LayoutDuration")


def page_metrics(cdp):
    """{metric: cumulative seconds} of PAGE_METRICS for the page of the CDP session ``cdp``."""
    values = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
    return {name: values.get(name, 0.0) for name in PAGE_METRICS}


def write_js_profile(profile, out):
    """Write the page's JavaScript CPU profile (CDP Profiler.stop's) to ``out`` (.cpuprofile, for Chrome's DevTools)
    and its self time per function and per script to ``out``.txt."""
    import collections
    import json

    Path(out).write_text(json.dumps(profile))
    nodes = {n["id"]: n for n in profile["nodes"]}
    gaps = profile["timeDeltas"]
    by_function, by_script = collections.Counter(), collections.Counter()
    for node_id, gap in zip(profile["samples"][1:], gaps[1:]):
        frame = nodes[node_id]["callFrame"]
        script = frame["url"].rsplit("/", 1)[-1] or "(" + (frame["functionName"] or "program") + ")"
        by_function[f"{frame['functionName'] or '(anonymous)'} {script}:{frame['lineNumber'] + 1}"] += gap / 1000
        by_script[script] += gap / 1000
    total = sum(by_script.values())
    lines = [f"JavaScript CPU profile: {total:.0f} ms sampled", "", "self time per script (ms):"]
    lines += [f"  {ms:9.1f}  {name}" for name, ms in by_script.most_common(20)]
    lines += ["", "self time per function (ms):"] + [f"  {ms:9.1f}  {name}" for name, ms in by_function.most_common(60)]
    Path(out + ".txt").write_text("\n".join(lines) + "\n")


def server_threads_cpu(pid):
    """(CPU seconds of the server's chain threads, of its other live threads): the chains run at a lowered priority
    (nice > 0, pcrp.sampling.compute), the script runner and the event loop at the process's own. Threads that ended are
    in neither (the server's own share is its process's CPU less its chains')."""
    chains = own = 0.0
    tick = os.sysconf("SC_CLK_TCK")
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        seconds = (int(fields[11]) + int(fields[12])) / tick  # utime, stime
        if int(fields[16]) > 0:  # nice
            chains += seconds
        else:
            own += seconds
    return chains, own


def lower_browser_priority():
    """Give every thread of every chromium process the lowest CPU priority (nice 19). Visitors' browsers
    run on their own machines; here they share the server's cores, and chromium raises some of its own
    threads (nice -8), so without this a measurement of the server also measures the browsers' drawing."""
    for proc in psutil.process_iter(["name"]):
        if proc.info["name"] and "chrom" in proc.info["name"]:
            try:
                for thread in proc.threads():
                    os.setpriority(os.PRIO_PROCESS, thread.id, 19)
            except (psutil.Error, OSError):
                pass


def _click_and_wait(page, button, word):
    """Click ``button``; seconds from the press (the mouse-down event's own time stamp, as the visitor
    pressed it: Playwright's waits for the button to be stable before clicking are not counted) until the
    status line says ``word``, that status line, and how long Playwright waited before pressing (for the
    button to be stable and enabled)."""
    page.evaluate("() => { window.__live.pressed = null; }")
    called = page.evaluate("() => performance.now()")
    page.get_by_role("button", name=button, exact=True).click()
    page.wait_for_function("() => window.__live.pressed !== null", timeout=30_000)
    clicked = page.evaluate("() => window.__live.pressed")
    try:
        page.wait_for_function(f"() => window.__live.status.length && "
                               f"window.__live.status[window.__live.status.length - 1][1].includes('{word}')",
                               timeout=30_000)
    except Exception:
        last = page.evaluate("() => window.__live.status.slice(-3)")
        raise RuntimeError(f"the page never said {word!r} after {button}: last status lines {last}")
    shown, text = page.evaluate("() => window.__live.status[window.__live.status.length - 1]")
    return (shown - clicked) / 1000, text, (clicked - called) / 1000


def _start_again(page):
    page.get_by_role("button", name="Start").click()
    page.wait_for_function("() => window.__live.status.length && "
                           "window.__live.status[window.__live.status.length - 1][1].includes('running')",
                           timeout=60_000)
    page.wait_for_timeout(1500)


def watched(url, query, sweeps, seconds, chains, server_pid, low_priority_browser=False, repeats=10,
            priors=DEFAULT_PRIORS, js_profile=None):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.goto(f"{url}/?{query}&sweeps={sweeps}&burn_in={sweeps // 4}&pace=full+speed&chains={chains}")
        page.get_by_role("button", name="Start").wait_for(timeout=60_000)
        page.locator('[data-testid="stSidebar"]').hover()
        page.get_by_label("Collapse sidebar").click()
        page.mouse.move(5, 790)
        page.get_by_role("button", name="Start").click()
        # running, then every row's three charts (at N = 100,000 the first redraw takes seconds); a start the
        # server refuses (the work budget: 100,000 sweeps of 100,000 points is hours of sampling) says why
        page.wait_for_function("() => document.querySelector('[data-testid=stAlertContentError]') || "
                               "/ running: [\\d,]+ \\/ [\\d,]+ sweeps/.test("
                               "(document.querySelector('.st-key-status') || {}).innerText || '')",
                               timeout=180_000)
        refused = page.locator("[data-testid=stAlertContentError]")
        if refused.count():
            raise SystemExit(f"the page refused the run: {refused.first.inner_text()}")
        # every row drawn: three charts per row (before the canvas) or one canvas row per row
        page.wait_for_function(f"() => {{ const v = ({VIEWS})(); return v.length >= {3 * len(priors)} || "
                               f"(v.length >= {len(priors)} && !v.some(e => e.dataset.testid === 'stVegaLiteChart')); }}",
                               timeout=180_000)
        page.wait_for_timeout(1000)
        elements = page.locator('[data-testid="stElementContainer"]').count()
        page.evaluate(PROBE)
        if low_priority_browser:
            lower_browser_priority()
        browser_procs = [p for p in psutil.process_iter(["name", "cmdline"])
                         if "chromium" in " ".join(p.info["cmdline"] or [])]
        server_proc = psutil.Process(server_pid)
        cdp = page.context.new_cdp_session(page)
        cdp.send("Performance.enable")
        if js_profile:
            cdp.send("Profiler.enable")
            cdp.send("Profiler.setSamplingInterval", {"interval": 200})
            cdp.send("Profiler.start")
        metrics0 = page_metrics(cdp)
        cpu0 = _cpu(browser_procs), _cpu([server_proc]), server_threads_cpu(server_pid), _busy()
        kinds0 = _cpu_by_kind(browser_procs)
        wall0 = time.perf_counter()
        page.wait_for_timeout(seconds * 1000)
        cpu1 = _cpu(browser_procs), _cpu([server_proc]), server_threads_cpu(server_pid), _busy()
        kinds1 = _cpu_by_kind(browser_procs)
        metrics1 = page_metrics(cdp)
        if js_profile:
            write_js_profile(cdp.send("Profiler.stop")["profile"], js_profile)
        window_wall = time.perf_counter() - wall0
        cpu_share = {"browser": (cpu1[0] - cpu0[0]) / window_wall, "server": (cpu1[1] - cpu0[1]) / window_wall,
                     "chains": (cpu1[2][0] - cpu0[2][0]) / window_wall,
                     "server_own": (cpu1[1] - cpu0[1] - (cpu1[2][0] - cpu0[2][0])) / window_wall,
                     "machine": (cpu1[3] - cpu0[3]) / window_wall,
                     "browser_kinds": {kind: (kinds1[kind] - kinds0.get(kind, 0.0)) / window_wall for kind in kinds1}}
        page_work = {name: metrics1[name] - metrics0[name] for name in PAGE_METRICS}
        live = page.evaluate("() => window.__live")
        # Pause, Resume and Stop: time from the click to the page saying so, ``repeats`` times each
        latency = {"Pause": [], "Resume": [], "Stop": []}
        before_press = []  # Playwright's own wait before each press (not counted in latency)
        moved_after_pause = []  # sweeps added, summed over the priors, between "paused" showing and 1 s later
        for _ in range(repeats):
            last = page.evaluate("() => window.__live.status[window.__live.status.length - 1][1]")
            if "finished" in last or max(parse_done(last), default=sweeps) > 0.7 * sweeps:  # near its end
                _start_again(page)
            took, text, waited = _click_and_wait(page, "Pause", "paused")
            latency["Pause"].append(took)
            before_press.append(waited)
            page.wait_for_timeout(1000)
            later = page.locator(".st-key-status").inner_text()
            moved_after_pause.append(sum(parse_done(later)) - sum(parse_done(text)))
            took, _, waited = _click_and_wait(page, "Resume", "running")
            latency["Resume"].append(took)
            before_press.append(waited)
            page.wait_for_timeout(700)
        for i in range(repeats):
            took, _, waited = _click_and_wait(page, "Stop", "stopped")
            latency["Stop"].append(took)
            before_press.append(waited)
            if i < repeats - 1:
                _start_again(page)
        browser.close()
    status = [(t / 1000, parse_done(s)) for t, s in live["status"] if len(parse_done(s)) == len(priors)]
    (t0, d0), (t1, d1) = status[0], status[-1]
    # (a page that never redrew in the window shows one status: no speed seen, 0 frames per second)
    rates = {name: (b - a) / (t1 - t0) if t1 > t0 else float("nan") for name, a, b in zip(row_priors(priors), d0, d1)}
    window = max((live["status"][-1][0] - live["status"][0][0]) / 1000, 1e-9)
    redraws = len(live["status"]) - 1
    blocked = sum(live["longtasks"]) / 1000
    return dict(redraws_per_second=redraws / window, stale_fraction=live["stale"] / max(live["samples"], 1),
                blocked_ms_per_redraw=1000 * blocked / max(redraws, 1),
                longest_task_ms=max(live["longtasks"], default=0.0), remounts=live["remounts"],
                latency=latency, before_press=before_press, moved_after_pause=moved_after_pause, rates=rates,
                seconds=window, cpu_share=cpu_share, page_work=page_work, elements=elements)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sweeps", type=int, default=100_000, help="long enough not to finish while measured")
    parser.add_argument("--chains", type=int, default=1, help="chains per prior (the page's default is 2)")
    parser.add_argument("--data", default="old-faithful", help="old-faithful, sim1, sim2, demo or mnist")
    parser.add_argument("--n", type=int, default=None, help="points of a simulation or of the MNIST subset")
    parser.add_argument("--seconds", type=float, default=12.0, help="how long to watch before pressing Pause")
    parser.add_argument("--repeats", type=int, default=10, help="clicks of each of Pause, Resume and Stop")
    parser.add_argument("--low-priority-browser", action="store_true",
                        help="run the browser at the lowest CPU priority, as if on the visitor's own machine")
    parser.add_argument("--priors", default=",".join(DEFAULT_PRIORS),
                        help="the rows' priors, registry names separated by commas (the page's ?priors=)")
    parser.add_argument("--app-root", default=str(ROOT), help="the checkout whose app is served")
    parser.add_argument("--profile-fragment", default=None, metavar="OUT.prof",
                        help="profile the server's live fragment (bench/fragment_profile.py; summary in OUT.prof.txt)")
    parser.add_argument("--js-profile", default=None, metavar="OUT.cpuprofile",
                        help="the page's JavaScript CPU profile over the watched window (summary in OUT.cpuprofile.txt)")
    parser.add_argument("--no-unwatched", action="store_true",
                        help="skip the unwatched speed (a profile or frame-rate check: no ratio printed)")
    args = parser.parse_args()
    priors = tuple(args.priors.split(","))
    unwatched = (lambda: batch_rates(args.data, args.sweeps, args.chains, args.n, priors)) if not args.no_unwatched \
        else (lambda: {name: float("nan") for name in row_priors(priors)})
    batch_before = unwatched()
    port = free_port()
    server = start_server(port, args.app_root, args.profile_fragment)
    query = data_query(args.data, args.n) + (f"&priors={args.priors}" if priors != DEFAULT_PRIORS else "")
    try:
        seen = watched(f"http://127.0.0.1:{port}", query, args.sweeps, args.seconds, args.chains, server.pid,
                       low_priority_browser=args.low_priority_browser, repeats=args.repeats, priors=priors,
                       js_profile=args.js_profile)
    finally:
        server.terminate()
        server.wait(10)
    # unwatched before and after the watched run: the machine is shared, and its speed drifts
    batch_after = unwatched()
    batch = {name: (batch_before[name] + batch_after[name]) / 2 for name in batch_before}
    data_text = args.data + (f" (N = {args.n})" if args.n else "")
    print(f"load average (1, 5, 15 min) at the end: {', '.join(f'{v:.2f}' for v in os.getloadavg())} on "
          f"{psutil.cpu_count()} cores")
    print(f"app of {args.app_root}; rows {args.priors}")
    print(f"live Explorer, {data_text}, {args.chains} chain(s) per prior at full speed, 1280 x 800, watched for "
          f"{seen['seconds']:.1f} s" + (", browser at the lowest CPU priority" if args.low_priority_browser else ""))
    target = 3 if (args.n or 0) >= 100_000 else 5 if len(priors) > 2 else 10  # issue 37 item 2
    print(f"  frames per second           {seen['redraws_per_second']:.2f}   (target >= {target}; changes of the "
          "status line)")
    print(f"  stale (faded) fraction      {seen['stale_fraction']:.3f}")
    print(f"  main thread blocked/redraw  {seen['blocked_ms_per_redraw']:.0f} ms   (target < 150 ms; longest "
          f"task {seen['longest_task_ms']:.0f} ms)")
    print(f"  charts re-created           {seen['remounts']}")
    print(f"  CPU cores in use: browser {seen['cpu_share']['browser']:.2f}, server {seen['cpu_share']['server']:.2f} "
          f"(its chains {seen['cpu_share']['chains']:.2f}, its own threads {seen['cpu_share']['server_own']:.2f}), "
          f"everything else {seen['cpu_share']['machine'] - seen['cpu_share']['browser'] - seen['cpu_share']['server']:.2f} "
          f"(this script, Playwright's driver, other work), of {psutil.cpu_count()}")
    print("  the browser's cores by process: " + ", ".join(
        f"{kind} {share:.2f}" for kind, share in sorted(seen["cpu_share"]["browser_kinds"].items(), key=lambda kv: -kv[1])))
    frames = max(seen["redraws_per_second"] * seen["seconds"], 1)
    work = seen["page_work"]
    print(f"  page main thread per frame  {1000 * work['TaskDuration'] / frames:.1f} ms of tasks: script "
          f"{1000 * work['ScriptDuration'] / frames:.1f} ms, style {1000 * work['RecalcStyleDuration'] / frames:.1f} "
          f"ms, layout {1000 * work['LayoutDuration'] / frames:.1f} ms (Chrome's Performance metrics); server's own "
          f"threads {1000 * seen['cpu_share']['server_own'] * seen['seconds'] / frames:.1f} ms")
    print(f"  elements on the page        {seen['elements']}   (Streamlit's element containers; bench/streamlit_floor.py "
          "gives a fragment rerun's cost against this count)")
    import numpy as np

    for button, values in seen["latency"].items():
        print(f"  {button:6s} shown after         median {np.median(values):.2f} s, 95th percentile "
              f"{np.percentile(values, 95):.2f} s, worst {max(values):.2f} s over {len(values)} clicks   "
              "(target: 95th percentile <= 0.3 s)")
    print(f"  Playwright's wait before pressing (not counted above): median {np.median(seen['before_press']):.2f} s, "
          f"worst {max(seen['before_press']):.2f} s")
    print(f"  sweeps added in the 1 s after 'paused' showed: {seen['moved_after_pause']}   (a freeze: all 0)")
    for name in row_priors(priors):
        w, b = seen["rates"][name], batch[name]
        print(f"  {name:5s} sweeps/s watched {w:9,.0f}  unwatched (same threads) {b:9,.0f} (before "
              f"{batch_before[name]:,.0f}, after {batch_after[name]:,.0f})  ratio {w / b:.2f}   (target >= 0.80)")


if __name__ == "__main__":
    main()

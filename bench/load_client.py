"""A class on one server, without browsers: visitors that speak Streamlit's protocol as a browser does, so that the
server alone is measured.

    python bench/load_client.py                         # the table: 10, 30, 60 visitors, one address and distinct
    python bench/load_client.py --visitors 30 --one-address
    python bench/load_client.py --visitors 10 --app-root /work/main    # another checkout's app ("before" figures)
    python bench/load_client.py --visitors 30 --one-address --classes 3 --after 60   # three classes, one server

Starts `streamlit run serve.py` (with a probe thread inside the server process, see ``probe``), warms it (the
kernels' compile, the Lesson's cached steps), then lets ``--visitors`` visitors arrive ``--arrive`` seconds apart.
Each is a browser with its own cookie jar: it loads the page over HTTP (serve.py's middleware sets the signed
``pcrp_browser`` cookie on that response), opens the WebSocket ``/_stcore/stream`` with the cookie, and asks for
the page's first run with its query string (a ``rerun_script`` BackMsg, as Streamlit's frontend sends it). From
then on it keeps what a browser keeps: the widgets the ForwardMsg deltas describe (their ids, whether they are
disabled, the fragment each belongs to), the query string the server writes (``page_info_changed``), and the
fragments' auto reruns (an ``auto_rerun`` message starts a timer that asks for that fragment's rerun every
``interval`` seconds, whether or not the last one has come back, as the frontend's ``setInterval`` does; a full
run's ``new_session`` clears them). A button press is a ``rerun_script`` with the button's trigger value and the
fragment of the button; a live row's canvas (``st.components.v2``) that receives a frame it cannot apply asks for
a complete one with its ``resync`` trigger, as live_canvas.js does.

A third of the visitors (every third) open the Lesson (``/lesson?step=1``) and press Next or Previous every
``--lesson-every`` seconds; the others open the Explorer at its defaults (CRP and pCRP, 2 chains each, Old
Faithful, 100 sweeps/s) with ``--sweeps`` sweeps, so that every run stays live through the measurement (the
defaults' 2,000 sweeps end after 20 s), and press Start. Addresses: with ``--one-address`` every visitor sends
``X-Forwarded-For: 203.0.113.5`` (a classroom behind one router), else each its own (198.18.x.y). The server
trusts that header from 127.0.0.1 only (uvicorn's ``FORWARDED_ALLOW_IPS``, Streamlit's default; docs/serving.md),
as it would from a reverse proxy on the same machine.

What is printed, per visitor and summarised:

- ``live``: seconds from the Start press (its BackMsg sent) to the first status line that shows the run running
  with a sweep done; a Start that is queued says so and counts from the same press;
- ``changes/s``: status-line changes per second over the common window (every Explorer visitor live,
  ``--window`` seconds), as a browser would see them. The status line is the ``pcrp_live_status`` component; the
  client runs its script's logic (live_status.js, live_clock.js): each message sets the counts, and while a prior
  runs its shown sweep count goes up from the count shown to the new one over ``playback_ms``, redrawn at the page
  clock's steps (80 ms apart, each on the next 60 Hz animation frame). A change is a redraw whose text (counts and
  words) differs from the one before. Median and 5th percentile are over the window's one-second bins;
- ``press p95``: seconds from a button's BackMsg to the status line showing its effect: Pause (every prior
  "paused"), One sweep (the slowest chain one sweep further), Resume ("running"); on the Lesson, Next and
  Previous (the step's heading changes);
- errors: connection errors, error alerts (st.error), messages the page shows instead of a run;
- KB/s received per visitor (the WebSocket's bytes).

The server, from the probe (every 0.5 s inside the server process): resident memory, threads, live chain threads,
runs in the registry, and CPU by thread: the chains' (sampling) against the script runs' (drawing: fragment reruns,
building the frames) and the event loop's (serialising and sending messages), as cores in use. After the window,
every visitor closes its connection; the client then watches the server for ``--after`` seconds and prints when
its chain threads, threads, registry and memory came back.

Each case runs on a fresh server (with ``--classes``, that many classes one after the other on it). The machine's
other work slows everything: the load average is printed before and after each case, and CPU is given beside wall
time.
"""

import argparse
import asyncio
import base64
import json
import math
import os
import re
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

STEP_SECONDS = 0.080  # live_clock.js's STEP_MS
VSYNC = 1 / 60  # a 60 Hz display: each clock step runs in the next animation frame
LESSON_STEPS = 7
ONE_ADDRESS = "203.0.113.5"
PRESSES = ("pause", "step", "step", "resume")  # one cycle of a visitor's button presses


def now():
    return time.monotonic()


# ----------------------------------------------------------------------------- what a browser draws
class StatusLine:
    """The live status line as live_status.js draws it (see the module docstring): ``changes`` are the times its
    text changed."""

    def __init__(self):
        self.S = None
        self.drawn = None
        self.changes = []
        self.step_at = None
        self.last = None  # the last message's data

    def message(self, t, data):
        self.advance(t)
        old, groups = self.S, data["groups"]
        self.last = data
        text = json.dumps([[[g["group"], g["state"], g["total"], g["rest"]] for g in groups], data.get("note", "")])

        def same(i):
            return (old is not None and old["run"] == data["run"] and i < len(old["groups"])
                    and old["groups"][i]["group"] == groups[i]["group"])

        start = [old["shown"][i] if same(i) and old["shown"][i] <= g["done"] else g["done"]
                 for i, g in enumerate(groups)]
        self.S = {"run": data["run"], "groups": groups, "from": start, "shown": list(start), "text": text, "t0": t,
                  "seconds": max(1, data["playback_ms"]) / 1000}
        if self.render(t) and self.step_at is None:
            self.step_at = math.ceil(t / VSYNC) * VSYNC

    def render(self, t):
        S = self.S
        progress = min(1.0, (t - S["t0"]) / S["seconds"])
        S["shown"] = [math.floor(f + (g["done"] - f) * progress) if g["state"] == "running" else g["done"]
                      for f, g in zip(S["from"], S["groups"])]
        key = (tuple(S["shown"]), S["text"])
        if key != self.drawn:
            self.drawn = key
            self.changes.append(t)
        return progress < 1

    def advance(self, t):
        """Run the page clock's steps due by ``t``."""
        while self.step_at is not None and self.step_at <= t:
            at = self.step_at
            self.step_at = math.ceil((at + STEP_SECONDS) / VSYNC) * VSYNC if self.render(at) else None

    def states(self):
        return [g["state"] for g in self.last["groups"]] if self.last else []

    def done(self):
        return min(g["done"] for g in self.last["groups"]) if self.last else None


def b64_items(text, itemsize):
    return len(base64.b64decode(text)) // itemsize


class CanvasRow:
    """A live row's canvas as live_canvas.js keeps it: its feed, the last frame applied and the K values held per
    chain; ``resync`` is called (once per feed) when a frame cannot be applied."""

    def __init__(self):
        self.S = None
        self.asked = None
        self.frames = 0

    def frame(self, f):
        """Apply frame ``f``; returns the feed to ask a resync for, or None."""
        S = self.S
        if S is not None and S["feed"] == f["feed"] and f["seq"] <= S["seq"]:
            return None
        if f["base"] < 0 and (S is None or S["feed"] != f["feed"]):
            S = self.S = {"feed": f["feed"], "seq": -1, "len": [0] * len(f["k"])}
        if S is None or not self._apply(S, f):
            self.S = None
            if self.asked != f["feed"]:
                self.asked = f["feed"]
                return f["feed"]
            return None
        self.frames += 1
        return None

    @staticmethod
    def _apply(S, f):
        if f["feed"] != S["feed"] or f["base"] > S["seq"]:
            return False
        for c, text in enumerate(f["k"]):
            skip = S["len"][c] - f["k_from"][c]
            if skip < 0:
                return False
            S["len"][c] += max(0, b64_items(text, 2) - skip)
        S["seq"] = f["seq"]
        return True


# ----------------------------------------------------------------------------- one visitor
WIDGET_KEY = re.compile(r"^\$\$ID-[0-9a-f]+-(.+)$")
ENDED = re.compile(r"(finished|stopped|failed)[^:]*: ([\d,]+) / ([\d,]+) sweeps")


class Visitor:
    """One browser: a cookie jar, an address, one tab on ``page`` ("" = the Explorer, "lesson") at ``query``."""

    def __init__(self, index, host, port, address, page, query):
        self.index, self.host, self.port, self.address = index, host, port, address
        self.page, self.query = page, query
        self.jar = {}
        self.ws = None
        self.page_hash = ""
        self.buttons = {}  # widget key -> (id, disabled, fragment id)
        self.components = {}  # component key -> (id, fragment id)
        self.status = StatusLine()
        self.canvases = {}
        self.heading = None
        self.ended = None
        self.headings = []  # (time, text)
        self.full_runs = []  # times at which a full script run ended
        self.auto = {}  # fragment id -> (interval, task)
        self.errors = []
        self.alerts = []  # (time, text) of st.error / st.warning / st.info
        self.bytes = 0
        self.messages = 0
        self.t_connected = None
        self.t_start = None
        self.t_live = None
        self.queued = None  # the first queue sentence seen
        self.presses = []  # (what, seconds)
        self.changed = asyncio.Event()
        self.closed = False
        self.resyncs = 0

    @property
    def url(self):
        return f"http://{self.host}:{self.port}/{self.page}" + (f"?{self.query}" if self.query else "")

    # ---------------------------------------------------------------- HTTP: the page, its cookie
    async def load_page(self):
        reader, writer = await asyncio.open_connection(self.host, self.port)
        path = f"/{self.page}" + (f"?{self.query}" if self.query else "")
        headers = {"Host": f"{self.host}:{self.port}", "X-Forwarded-For": self.address, "Accept": "text/html",
                   "Connection": "close"}
        if self.jar:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.jar.items())
        writer.write((f"GET {path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items())
                      + "\r\n").encode("latin-1"))
        await writer.drain()
        data = await reader.read()
        writer.close()
        head = data.partition(b"\r\n\r\n")[0].decode("latin-1").split("\r\n")
        status = int(head[0].split()[1])
        for line in head[1:]:
            name, _, value = line.partition(":")
            if name.strip().lower() == "set-cookie":
                key, _, rest = value.strip().partition("=")
                self.jar[key] = rest.split(";", 1)[0]
        if status != 200:
            body = data.partition(b"\r\n\r\n")[2][:200]
            raise RuntimeError(f"GET {path} answered {status}: {body!r}")

    # ---------------------------------------------------------------- the WebSocket
    async def connect(self):
        import websockets

        await self.load_page()
        headers = {"X-Forwarded-For": self.address}
        if self.jar:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.jar.items())
        self.ws = await websockets.connect(
            f"ws://{self.host}:{self.port}/_stcore/stream", subprotocols=["streamlit"], additional_headers=headers,
            origin=f"http://{self.host}:{self.port}", max_size=None, open_timeout=60, ping_interval=None)
        self.t_connected = now()
        self.receiver = asyncio.create_task(self.receive())
        await self.rerun()

    async def close(self):
        self.closed = True
        for _, task in self.auto.values():
            task.cancel()
        self.auto.clear()
        if self.ws is not None:
            await self.ws.close()
        if getattr(self, "receiver", None) is not None:
            self.receiver.cancel()

    async def send(self, back):
        try:
            await self.ws.send(back.SerializeToString())
        except Exception as err:  # the connection went
            if not self.closed:
                self.errors.append(f"send: {type(err).__name__}: {err}")

    async def rerun(self, widgets=(), fragment_id="", auto=False):
        from streamlit.proto.BackMsg_pb2 import BackMsg
        from streamlit.proto.ClientState_pb2 import ClientState, ContextInfo

        state = ClientState(query_string=self.query, page_script_hash=self.page_hash,
                            page_name="" if self.page_hash else self.page, fragment_id=fragment_id,
                            is_auto_rerun=auto,
                            context_info=ContextInfo(timezone="UTC", timezone_offset=0, locale="en-US", url=self.url,
                                                     is_embedded=False, color_scheme="light"))
        state.widget_states.widgets.extend(widgets)
        await self.send(BackMsg(rerun_script=state))

    async def press(self, key):
        """Press the button ``key`` (its trigger, with the fragment it belongs to)."""
        from streamlit.proto.WidgetStates_pb2 import WidgetState

        widget_id, _, fragment = self.buttons[key]
        await self.rerun([WidgetState(id=widget_id, trigger_value=True)], fragment_id=fragment)

    async def trigger(self, component_key, event, value):
        from streamlit.proto.WidgetStates_pb2 import WidgetState

        widget_id, fragment = self.components[component_key]
        payload = json.dumps([{"event": event, "value": value}])
        await self.rerun([WidgetState(id=f"$$STREAMLIT_INTERNAL_KEY_{widget_id}__events",
                                      json_trigger_value=payload)], fragment_id=fragment)

    async def auto_rerun(self, fragment, interval):
        while True:
            await asyncio.sleep(interval)
            await self.rerun(fragment_id=fragment, auto=True)

    async def receive(self):
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        try:
            async for raw in self.ws:
                t = now()
                self.bytes += len(raw)
                self.messages += 1
                msg = ForwardMsg()
                msg.ParseFromString(raw)
                await self.handle(t, msg)
                self.changed.set()
        except asyncio.CancelledError:
            raise
        except Exception as err:
            if not self.closed:
                self.errors.append(f"connection: {type(err).__name__}: {err}")
                self.changed.set()

    async def handle(self, t, msg):
        kind = msg.WhichOneof("type")
        if kind == "new_session":
            if not list(msg.metadata.run.fragment_ids):  # a full run: the frontend clears its auto reruns
                for _, task in self.auto.values():
                    task.cancel()
                self.auto.clear()
        elif kind == "navigation":  # (st.navigation: the page shown; new_session's hash is the main script's)
            self.page_hash = msg.navigation.page_script_hash
        elif kind == "page_info_changed":
            self.query = msg.page_info_changed.query_string
        elif kind == "auto_rerun":
            fragment, interval = msg.auto_rerun.fragment_id, msg.auto_rerun.interval
            if fragment and (fragment not in self.auto or self.auto[fragment][0] != interval):
                if fragment in self.auto:
                    self.auto[fragment][1].cancel()
                self.auto[fragment] = (interval, asyncio.create_task(self.auto_rerun(fragment, interval)))
        elif kind == "script_finished" and msg.script_finished == 0:  # a full run ended (not a fragment's)
            self.full_runs.append(t)
        elif kind == "stop_auto_rerun":
            for fragment in msg.stop_auto_rerun.fragment_ids:
                if fragment in self.auto:
                    self.auto.pop(fragment)[1].cancel()
        elif kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
            await self.element(t, msg.delta.new_element, msg.delta.fragment_id)
        elif kind == "session_event" and msg.session_event.WhichOneof("type") == "script_compilation_exception":
            self.errors.append("script compilation exception")

    async def element(self, t, element, fragment):
        which = element.WhichOneof("type")
        if which == "button":
            match = WIDGET_KEY.match(element.button.id)
            if match:
                self.buttons[match.group(1)] = (element.button.id, element.button.disabled, fragment)
        elif which == "bidi_component":
            proto = element.bidi_component
            match = WIDGET_KEY.match(proto.id)
            if match:
                self.components[match.group(1)] = (proto.id, fragment)
            text = proto.json or (proto.mixed.json if proto.HasField("mixed") else "")
            data = json.loads(text) if text else None
            if isinstance(data, list):  # (the live components' data: a list of one dict)
                data = data[0] if data else None
            if data is None:
                return
            if proto.component_name.endswith("live_status"):
                self.status.message(t, data)
                if self.t_start is not None and self.t_live is None and self.status.done() and \
                        "running" in self.status.states():
                    self.t_live = t
            elif proto.component_name.endswith("live_row") and data.get("frame") and match:
                row = self.canvases.setdefault(match.group(1), CanvasRow())
                feed = row.frame(data["frame"])
                if feed is not None:
                    self.resyncs += 1
                    await self.trigger(match.group(1), "resync", feed)
        elif which == "markdown" and ENDED.search(element.markdown.body):
            self.ended = ENDED.findall(element.markdown.body)  # an ended run's status line: (state, done, total)
        elif which == "heading":
            self.heading = element.heading.body
            self.headings.append((t, element.heading.body))
        elif which == "alert":
            text = element.alert.body
            self.alerts.append((t, text))
            if element.alert.format == 1:  # ERROR
                self.errors.append(f"error shown: {text[:160]}")
            if self.queued is None and re.search(r"\bqueue\b", text, re.I):
                self.queued = text
        elif which == "exception":
            self.errors.append(f"exception shown: {element.exception.message[:160]}")

    async def wait_for(self, predicate, timeout):
        """Wait until ``predicate()`` holds (checked after each message); its time, or None after ``timeout``."""
        deadline = now() + timeout
        while True:
            if predicate():
                return now()
            remaining = deadline - now()
            if remaining <= 0 or self.closed:
                return None
            self.changed.clear()
            try:
                await asyncio.wait_for(self.changed.wait(), remaining)
            except asyncio.TimeoutError:
                return None


# ----------------------------------------------------------------------------- what visitors do
async def explorer_visitor(v, plan, out):
    await v.connect()
    ready = await v.wait_for(lambda: "start" in v.buttons and not v.buttons["start"][1], 120)
    if ready is None:
        v.errors.append("Start never became available")
        return
    await asyncio.sleep(max(0.0, plan["press_at"](v) - now()))
    v.t_start = now()
    await v.press("start")
    if await v.wait_for(lambda: v.t_live is not None, plan["live_timeout"]) is None:
        v.errors.append(f"not live {plan['live_timeout']:.0f} s after Start"
                        + (f" (queued: {v.queued[:100]})" if v.queued else ""))
    await asyncio.sleep(max(0.0, plan["presses_at"] - now()) + (v.index % 10) * 0.25)
    for what in PRESSES * plan["cycles"]:
        if v.closed or v.t_live is None:  # (no run of its own: nothing to press)
            break
        before = v.status.done()
        sent = now()
        if what == "pause":
            await v.press("pause")
            ok = lambda: v.status.states() and all(s == "paused" for s in v.status.states())  # noqa: E731
        elif what == "resume":
            await v.press("resume")
            ok = lambda: "running" in v.status.states()  # noqa: E731
        else:
            await v.press("step")
            ok = lambda: v.status.done() is not None and before is not None and v.status.done() > before  # noqa
        seen = await v.wait_for(ok, 15)
        if seen is None:
            v.errors.append(f"{what}: no change within 15 s")
        v.presses.append((what, (seen - sent) if seen is not None else math.inf))
        await asyncio.sleep(1.0)


async def lesson_visitor(v, plan, out):
    await v.connect()
    if await v.wait_for(lambda: "lesson_next" in v.buttons and v.heading, 120) is None:
        v.errors.append("the Lesson never showed")
        return
    step, forward = 1, True
    while now() < plan["end"] and not v.closed:
        await asyncio.sleep(plan["lesson_every"])
        if step >= LESSON_STEPS:
            forward = False
        elif step <= 1:
            forward = True
        key = "lesson_next" if forward else "lesson_prev"
        if key not in v.buttons or v.buttons[key][1]:
            continue
        step += 1 if forward else -1
        before, sent = v.heading, now()
        await v.press(key)
        seen = await v.wait_for(lambda: v.heading.startswith(f"{step}.") and (v.full_runs or [0])[-1] > sent,
                                30)
        if seen is None:
            v.errors.append(f"lesson step {step}: no change within 30 s")
        v.presses.append(("next" if forward else "previous", (seen - sent) if seen is not None else math.inf))


# ----------------------------------------------------------------------------- the server and its probe
PROBE_SECONDS = 0.5
SAMPLING = {"cpu": 0.0}  # (in the server process) the live chains' threads' CPU seconds so far


def count_sampling():
    """(In the server process.) Count the live chains' threads' CPU time into SAMPLING: their kernel calls and their
    own bookkeeping between calls (taking a compute slot, recording each call's sweeps), whichever the app's version.
    A chain's thread records after every kernel call (LiveChain._record): there its CPU time since its last record
    is added (threads come and go faster than a probe can look at each)."""
    from pcrp.app import live_chain

    record = live_chain.LiveChain._record
    lock = threading.Lock()
    last = threading.local()

    def counted(self, *args, **kwargs):
        try:
            return record(self, *args, **kwargs)
        finally:
            now = time.thread_time()
            spent, last.cpu = now - getattr(last, "cpu", 0.0), now
            with lock:
                SAMPLING["cpu"] += spent

    live_chain.LiveChain._record = counted


def probe(path):
    """(In the server process.) Every PROBE_SECONDS, append a JSON line to ``path``: time, RSS, threads, CPU seconds
    so far: the process's, the chains' (sampling and its bookkeeping: see count_sampling) and the event loop's
    (MainThread: receiving, serialising and sending messages); the rest ("pages") is the script runs (page and
    fragment reruns, callbacks, figures: drawing) and a little housekeeping. Also live chain threads and the run
    registry's counts."""
    import psutil

    proc = psutil.Process()
    parent = os.getppid()
    registry = None
    main = threading.main_thread().native_id
    while True:
        names = [t.name for t in threading.enumerate()]
        times = proc.cpu_times()
        total = times.user + times.system
        loop = next((t.user_time + t.system_time for t in proc.threads() if t.id == main), 0.0)
        if registry is None:
            shared = sys.modules.get("app_pages.shared")
            if shared is not None:
                try:
                    registry = shared.registry()
                except Exception:
                    registry = None
        runs = live = chains = queued = 0
        capacity = None
        if registry is not None:
            stats = registry.stats() if hasattr(registry, "stats") else None
            if stats is not None:
                runs, live, chains, queued = stats["runs"], stats["live_runs"], stats["live_chains"], \
                    stats.get("queued", 0)
                capacity = stats.get("capacity")
            else:
                with registry._lock:
                    held = list(registry._runs.values())
                runs, live = len(held), sum(r.live for r in held)
                chains = sum(r.live_chains() for r in held)
        sampling = SAMPLING["cpu"]
        line = {"t": time.time(), "rss": proc.memory_info().rss, "threads": proc.num_threads(),
                "chain_threads": sum(n.startswith("pcrp-live-chain") for n in names),
                "runs": runs, "live_runs": live, "live_chains": chains, "queued": queued, "capacity": capacity,
                "cpu": total, "sampling": sampling, "loop": loop, "pages": max(0.0, total - sampling - loop)}
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps(line) + "\n")
        if os.getppid() != parent:  # the client has gone: so does its server
            os._exit(0)
        time.sleep(PROBE_SECONDS)


def time_callbacks(path):
    """(In the server process.) Wrap the Explorer's button callbacks so that each call's wall time is appended to
    ``path`` ("name seconds" a line): how much of a press's delay is its callback (a pause waits for the chains'
    calls in flight) and how much is drawing."""
    try:
        from app_pages.explorer_parts import controls
    except Exception:  # (another app's layout)
        return
    lock = threading.Lock()

    def timed(name, callback):
        def wrapper(*args, **kwargs):
            began = time.perf_counter()
            try:
                return callback(*args, **kwargs)
            finally:
                with lock, open(path, "a", encoding="utf-8") as f:
                    f.write(f"{name} {time.perf_counter() - began:.4f}\n")
        return wrapper

    for name in ("on_start", "on_pause", "on_resume", "on_step"):
        if hasattr(controls, name):
            setattr(controls, name, timed(name, getattr(controls, name)))


def serve_with_probe(out, args):
    """(The server process's entry point: ``load_client.py --serve-with-probe OUT -- run serve.py ...``.)"""
    sys.path.insert(0, os.getcwd())
    count_sampling()
    time_callbacks(out + ".callbacks")
    threading.Thread(target=probe, args=(out,), daemon=True, name="load-client-probe").start()
    from streamlit.web.cli import main as streamlit_main

    sys.argv = ["streamlit", *args]
    streamlit_main()


def start_server(port, app_root, probe_file, env):
    from live_browser import wait_for_server

    proc = subprocess.Popen(
        [sys.executable, str(Path(__file__).resolve()), "--serve-with-probe", str(probe_file), "--", "run",
         "serve.py", "--server.port", str(port), "--server.headless", "true", "--server.address", "127.0.0.1"],
        cwd=app_root, env={**os.environ, **env, "PYTHONPATH": str(app_root)}, stdout=subprocess.DEVNULL,
        stderr=open(str(probe_file) + ".log", "w"))
    wait_for_server(port, proc)
    return proc


def read_probe(path):
    lines = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            try:
                lines.append(json.loads(line))
            except json.JSONDecodeError:
                pass
    return lines


def between(lines, a, b):
    """Probe lines from wall time a to b (seconds since the epoch)."""
    return [x for x in lines if a <= x["t"] <= b]


def cores(lines, kind):
    """Cores used by ``kind`` threads over ``lines`` (their first to last)."""
    if len(lines) < 2:
        return float("nan")
    return (lines[-1][kind] - lines[0][kind]) / (lines[-1]["t"] - lines[0]["t"])


# ----------------------------------------------------------------------------- one case
def percentile(values, q):
    """The q-th percentile of ``values`` (linear between ranks; inf where it falls on or next to an inf)."""
    values = sorted(values)
    if not values:
        return float("nan")
    position = (len(values) - 1) * q / 100
    low, high = math.floor(position), math.ceil(position)
    if math.isinf(values[high]):
        return values[high] if position > low or math.isinf(values[low]) else values[low]
    return values[low] + (values[high] - values[low]) * (position - low)


def window_rates(changes, a, b):
    """Changes per second over [a, b), and per one-second bin."""
    bins = [0] * max(1, int(b - a))
    for t in changes:
        if a <= t < a + len(bins):
            bins[int(t - a)] += 1
    return sum(a <= t < b for t in changes) / (b - a), bins


async def warm(host, port):
    """One visitor runs a short Explorer run and walks the Lesson: the kernels' compile and the Lesson's cached steps
    are done once per server process, before any measurement."""
    v = Visitor(-1, host, port, "192.0.2.250", "", "sweeps=200&burn_in=50&pace=full+speed")
    await v.connect()
    await v.wait_for(lambda: "start" in v.buttons and not v.buttons["start"][1], 300)
    v.t_start = now()
    await v.press("start")
    await v.wait_for(lambda: v.ended, 300)
    await v.close()
    lesson = Visitor(-2, host, port, "192.0.2.251", "lesson", "step=1")
    await lesson.connect()
    await lesson.wait_for(lambda: "lesson_next" in lesson.buttons and lesson.heading, 300)
    for step in range(2, LESSON_STEPS + 1):
        sent = now()
        await lesson.press("lesson_next")
        await lesson.wait_for(
            lambda: lesson.heading.startswith(f"{step}.") and (lesson.full_runs or [0])[-1] > sent, 900)
    await lesson.close()


async def run_case(args, port, probe_file):
    host = "127.0.0.1"
    t0 = now()
    n = args.visitors
    lessons = {i for i in range(n) if i % 3 == 2}  # a third of them
    explorers = [i for i in range(n) if i not in lessons]
    arrive = {i: t0 + i * args.arrive for i in range(n)}
    last_arrival = t0 + (n - 1) * args.arrive
    window_start = last_arrival + args.settle
    window_end = window_start + args.window
    presses_at = window_end
    end = presses_at + args.press_seconds
    plan = {"press_at": lambda v: arrive[v.index] + 0.5, "live_timeout": args.live_timeout, "presses_at": presses_at,
            "cycles": args.cycles, "end": end, "lesson_every": args.lesson_every}
    visitors = []
    for i in range(n):
        address = ONE_ADDRESS if args.one_address else f"198.18.{i // 250}.{i % 250 + 1}"
        if i in lessons:
            visitors.append(Visitor(i, host, port, address, "lesson", "step=1"))
        else:
            visitors.append(Visitor(i, host, port, address, "", args.query))
    out = {}

    async def one(v):
        await asyncio.sleep(max(0.0, arrive[v.index] - now()))
        try:
            if v.page == "lesson":
                await lesson_visitor(v, plan, out)
            else:
                await explorer_visitor(v, plan, out)
        except Exception as err:
            v.errors.append(f"{type(err).__name__}: {err}")
        await asyncio.sleep(max(0.0, end - now()))

    wall = {"start": time.time() + (t0 - now()), "probe": str(probe_file)}
    tasks = [asyncio.create_task(one(v)) for v in visitors]
    await asyncio.gather(*tasks)
    for v in visitors:
        v.status.advance(now())
    closed_at, closed_mono = time.time(), now()
    for v in visitors:
        await v.close()
    wall.update(window_start=wall["start"] + (window_start - t0), window_end=wall["start"] + (window_end - t0),
                closed=closed_at, closed_mono=closed_mono)
    await asyncio.sleep(args.after)
    return visitors, wall, (window_start, window_end), explorers


def report(args, visitors, wall, window, explorers, lines, baseline, client_cpu):
    """Print the case (per visitor unless --summary) and return its summary for the final table."""
    a, b = window
    say = (lambda *_: None) if args.summary else print
    say(f"  {'visitor':>7} {'page':8} {'live s':>7} {'changes/s':>9} {'med':>4} {'p5':>4} {'press p95 s':>11} "
        f"{'KB/s':>6} errors")
    rates, meds, p5s, lives, press_all, kbs, errors, queued = [], [], [], [], [], [], 0, 0
    for v in visitors:
        errors += len(v.errors)
        queued += v.queued is not None
        p95 = percentile([s for _, s in v.presses], 95) if v.presses else float("nan")
        press_all += [s for _, s in v.presses]
        seconds = max(1e-9, wall["closed_mono"] - v.t_connected) if v.t_connected else float("nan")
        kb = v.bytes / 1024 / seconds if v.t_connected else float("nan")
        kbs.append(kb)
        if v.page == "lesson":
            say(f"  {v.index:>7} {'lesson':8} {'':>7} {'':>9} {'':>4} {'':>4} {p95:>11.2f} {kb:>6.1f} "
                f"{'; '.join(v.errors[:2])}")
            continue
        rate, bins = window_rates(v.status.changes, a, b)
        rates.append(rate)
        meds.append(statistics.median(bins))
        p5s.append(percentile(bins, 5))
        live = (v.t_live - v.t_start) if v.t_live and v.t_start else math.inf
        lives.append(live)
        say(f"  {v.index:>7} {'explorer':8} {live:>7.2f} {rate:>9.1f} {meds[-1]:>4.0f} {p5s[-1]:>4.0f} "
            f"{p95:>11.2f} {kb:>6.1f} {'(queued first) ' if v.queued else ''}{'; '.join(v.errors[:2])}")
    finite = [x for x in lives if math.isfinite(x)]
    out = {"visitors": len(visitors), "explorers": len(explorers), "live": len(finite), "queued": queued,
           "live_median": statistics.median(finite) if finite else math.nan, "live_max": max(lives, default=math.nan),
           "rate_median": statistics.median(rates) if rates else math.nan, "rate_min": min(rates, default=math.nan),
           "rate_p5": percentile(rates, 5), "press_p95": percentile(press_all, 95), "presses": len(press_all),
           "errors": errors, "kbs": statistics.median(kbs) if kbs else math.nan}
    print(f"  Explorer visitors {len(explorers)}: live {len(finite)} ({queued} queued first), first live median "
          f"{out['live_median']:.2f} s, max {out['live_max']:.2f} s; status changes/s over the {b - a:.0f} s window: "
          f"median {out['rate_median']:.1f}, 5th percentile {out['rate_p5']:.1f}, lowest {out['rate_min']:.1f}; "
          f"per-second bins: median of medians {statistics.median(meds) if meds else 0:.0f}, lowest 5th percentile "
          f"{min(p5s) if p5s else 0:.0f}")
    kinds = {}
    for v in visitors:
        for what, seconds in v.presses:
            kinds.setdefault(what, []).append(seconds)
    print(f"  button to change: p95 {out['press_p95']:.2f} s, max {max(press_all, default=0):.2f} s over "
          f"{len(press_all)} presses (p95 by button: "
          + ", ".join(f"{k} {percentile(x, 95):.2f} s" for k, x in sorted(kinds.items()))
          + f"); errors {errors}; KB/s received per visitor, median {out['kbs']:.1f}")
    mib = 2**20
    during = between(lines, wall["window_start"], wall["window_end"])
    if len(during) >= 2:
        total, chains, pages, loop = (cores(during, k) for k in ("cpu", "sampling", "pages", "loop"))
        live_runs = statistics.median(x["live_runs"] for x in during)
        n = len(visitors)
        out.update(cores=total, sampling=chains, drawing=pages + loop, live_runs=live_runs)
        print(f"  server in the window: cores in use {total:.2f} (sampling {chains:.2f}, script runs {pages:.2f}, "
              f"event loop {loop:.2f}); {live_runs:.0f} live runs, "
              f"{statistics.median(x['live_chains'] for x in during):.0f} chains, "
              f"queued {max(x['queued'] for x in during)}, capacity "
              f"{', '.join(sorted({str(x.get('capacity')) for x in during}))}")
        print(f"  per visitor: drawing {1000 * (pages + loop) / n:.1f} ms CPU per second (script runs and event loop, "
              f"{n} visitors), sampling {1000 * chains / max(live_runs, 1):.1f} ms per second per live run")
    this_class = [x for x in lines if x["t"] >= wall["start"]]  # (with --classes, the earlier classes' lines too)
    peak = max(this_class, key=lambda x: x["rss"]) if this_class else None
    if peak:
        out.update(rss_before=baseline["rss"] / mib, rss_peak=peak["rss"] / mib,
                   rss_per_visitor=(peak["rss"] - baseline["rss"]) / mib / len(visitors))
        print(f"  RSS before {baseline['rss'] / mib:.0f} MiB, peak {peak['rss'] / mib:.0f} MiB "
              f"({out['rss_per_visitor']:.1f} MiB per visitor); threads before {baseline['threads']}, peak "
              f"{max(x['threads'] for x in this_class)}")
    timeline = this_class
    if timeline and not args.summary:
        step = max(1, len(timeline) // 12)
        print("  over time (s: cores, RSS MiB, live runs): " + ", ".join(
            f"{x['t'] - wall['start']:.0f}: {cores(timeline[max(0, i - 4):i + 1], 'cpu'):.2f}, "
            f"{x['rss'] / mib:.0f}, {x['live_runs']}" for i, x in enumerate(timeline) if i % step == 0 and i))
    after = [x for x in lines if x["t"] >= wall["closed"]]
    if after:
        def first(pred):
            hit = next((x for x in after if pred(x)), None)
            return hit["t"] - wall["closed"] if hit else math.inf

        def words(seconds):
            if math.isfinite(seconds):
                return f"{seconds:.1f} s"
            return f"not within {after[-1]['t'] - wall['closed']:.0f} s"

        freed = {"chains": first(lambda x: x["chain_threads"] == 0), "live": first(lambda x: x["live_runs"] == 0),
                 "threads": first(lambda x: x["threads"] <= baseline["threads"]),
                 "registry": first(lambda x: x["runs"] == 0)}
        out["freed"] = max(freed.values())
        out["rss_after"] = after[-1]["rss"] / mib
        print(f"  after every visitor closed: chain threads 0 after {words(freed['chains'])}, no live run after "
              f"{words(freed['live'])}, threads back to {baseline['threads']} after {words(freed['threads'])}, "
              f"registry empty (buffers freed) after {words(freed['registry'])}; RSS "
              f"{after[-1]['rss'] / mib:.0f} MiB {after[-1]['t'] - wall['closed']:.0f} s after")
        if peak:
            half = baseline["rss"] + (peak["rss"] - baseline["rss"]) / 2
            out["rss_halved"] = first(lambda x: x["rss"] <= half)
            print(f"  RSS below half its rise ({half / mib:.0f} MiB) after {words(out['rss_halved'])}")
        marks = range(0, int(after[-1]["t"] - wall["closed"]) + 1, 10)
        print("  RSS after they closed (s: MiB): " + ", ".join(
            f"{m}: {next(x for x in after if x['t'] - wall['closed'] >= m)['rss'] / mib:.0f}" for m in marks))
    callbacks = {}
    try:
        with open(wall["probe"] + ".callbacks", encoding="utf-8") as f:
            for line in f:
                name, seconds = line.split()
                callbacks.setdefault(name, []).append(float(seconds))
    except OSError:
        pass
    if callbacks:
        print("  the buttons' callbacks in the server (p95, max): " + ", ".join(
            f"{name[3:]} {percentile(x, 95):.2f} s, {max(x):.2f} s" for name, x in sorted(callbacks.items())))
    print(f"  this client's own CPU {client_cpu:.1f} s")
    return out


def table(rows):
    """The final table: one line per case."""
    print("\n  visitors  from       live  first live s   status changes/s   button   errors  server  sampling  "
          "drawing  RSS MiB before / peak / after  freed")
    print("                         (queued)  median / max  median / p5 / min  p95 s            cores   cores     "
          "cores    (after: --after s after they left)  after s")
    for (visitors, one), r in rows:
        print(f"  {visitors:>8}  {'one' if one else 'distinct':9} {r['live']:>3}/{r['explorers']:<3} ({r['queued']:>2})"
              f"  {r['live_median']:>5.2f} / {r['live_max']:<5.2f}  {r['rate_median']:>5.1f} / {r['rate_p5']:>4.1f} / "
              f"{r['rate_min']:>4.1f}  {r['press_p95']:>6.2f}  {r['errors']:>6}  {r.get('cores', math.nan):>6.2f}  "
              f"{r.get('sampling', math.nan):>8.2f}  {r.get('drawing', math.nan):>7.2f}  "
              f"{r.get('rss_before', math.nan):>6.0f} / {r.get('rss_peak', math.nan):>4.0f} / "
              f"{r.get('rss_after', math.nan):>4.0f}                {r.get('freed', math.nan):>6.1f}")
    per_visitor = [r["cores"] / r["visitors"] for _, r in rows if "cores" in r]
    if per_visitor:
        worst = max(per_visitor)
        print("  server CPU per visitor (a case's cores in use / its visitors, two Explorer pages to one Lesson "
              f"page): {min(per_visitor):.3f} to {worst:.3f} of a core: {1 / worst:.0f} visitors per core at the "
              "most costly case")


def case(args, one_address, visitors):
    from live_browser import free_port

    args = argparse.Namespace(**{**vars(args), "one_address": one_address, "visitors": visitors})
    port = free_port()
    scratch = Path(args.scratch)
    scratch.mkdir(parents=True, exist_ok=True)
    probe_file = scratch / f"probe-{visitors}-{'one' if one_address else 'many'}-{os.getpid()}.jsonl"
    probe_file.unlink(missing_ok=True)
    Path(str(probe_file) + ".callbacks").unlink(missing_ok=True)
    env = dict(kv.split("=", 1) for kv in args.env)
    server = start_server(port, args.app_root, probe_file, env)
    try:
        asyncio.run(warm("127.0.0.1", port))
        time.sleep(5)
        summaries = []
        for number in range(1, args.classes + 1):
            baseline = read_probe(probe_file)[-1]
            again = f" (class {number} of {args.classes} on this server)" if args.classes > 1 else ""
            print(f"\n{visitors} visitors from {'one address' if one_address else 'distinct addresses'} "
                  f"({visitors - visitors // 3} Explorer, {visitors // 3} Lesson), arriving {args.arrive:g} s apart; "
                  f"Explorer at ?{args.query}{again}; load average before "
                  f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
            cpu0 = sum(os.times()[:2])
            visitors_, wall, window, explorers = asyncio.run(run_case(args, port, probe_file))
            client_cpu = sum(os.times()[:2]) - cpu0
            lines = read_probe(probe_file)
            summaries.append(report(args, visitors_, wall, window, explorers, lines, baseline, client_cpu))
            print(f"  load average after {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
        return summaries
    finally:
        server.terminate()
        try:
            server.wait(15)
        except subprocess.TimeoutExpired:
            server.kill()


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "--serve-with-probe":
        serve_with_probe(sys.argv[2], sys.argv[sys.argv.index("--") + 1:])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--visitors", type=int, nargs="*", default=[10, 30, 60])
    parser.add_argument("--one-address", action="store_true", help="only the one-address cases")
    parser.add_argument("--distinct", action="store_true", help="only the distinct-address cases")
    parser.add_argument("--arrive", type=float, default=1.0, help="seconds between visitors' arrivals")
    parser.add_argument("--settle", type=float, default=10.0, help="seconds after the last arrival before the window")
    parser.add_argument("--window", type=float, default=30.0, help="seconds of the measurement window")
    parser.add_argument("--press-seconds", type=float, default=25.0, help="seconds for the button presses")
    parser.add_argument("--cycles", type=int, default=2, help="Pause, One sweep x2, Resume cycles per visitor")
    parser.add_argument("--lesson-every", type=float, default=3.0)
    parser.add_argument("--live-timeout", type=float, default=60.0)
    parser.add_argument("--sweeps", type=int, default=30000)
    parser.add_argument("--after", type=float, default=40.0, help="seconds to watch the server after the visitors left")
    parser.add_argument("--app-root", default=str(ROOT))
    parser.add_argument("--env", nargs="*", default=[], help="NAME=VALUE for the server's environment")
    parser.add_argument("--summary", action="store_true", help="a case's summary lines only, not each visitor's")
    parser.add_argument("--classes", type=int, default=1,
                        help="classes that come one after the other to each case's server (each after the last left "
                             "and --after passed): whether what a class leaves behind is used again by the next")
    parser.add_argument("--scratch", default=os.environ.get("TMPDIR", "/tmp") + "/pcrp-load-client")
    args = parser.parse_args()
    args.query = f"sweeps={args.sweeps}"
    from provenance import machine

    print(f"load client: {machine()}; app of {args.app_root}")
    addresses = [True] if args.one_address else [False] if args.distinct else [True, False]
    rows = []
    for visitors in args.visitors:
        for one_address in addresses:
            rows.extend(((visitors, one_address), summary) for summary in case(args, one_address, visitors))
    table(rows)


if __name__ == "__main__":
    main()

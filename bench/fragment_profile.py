"""Serve the app with the Explorer's live fragment under cProfile: where the server's thread spends a frame.

    python bench/fragment_profile.py OUT.prof -- run serve.py --server.port 8501 ...   (cwd: the app's checkout)

Everything after ``--`` goes to Streamlit's command line. Each run of the live fragment
(app_pages/explorer_parts/live_panel.live_panel) is profiled in the script thread that runs it; the statistics of
all runs so far are written to OUT.prof every 20 runs, with OUT.prof.txt: the runs, their mean wall and thread CPU
time, and the functions with the most cumulative time; OUT.prof.runs.txt gets a line per run: its end (seconds since
the epoch) and its wall time (ms). The buttons' callbacks (Pause, Resume, Stop, One sweep) write their wall time to
OUT.prof.callbacks.txt, a line per press. bench/live_browser.py --profile-fragment starts the server
this way.
"""

import cProfile
import functools
import io
import pstats
import sys
import time

DUMP_EVERY = 20  # fragment runs between writes of the statistics


def profiled(function, out):
    """``function`` run under one shared cProfile.Profile, its statistics written to ``out`` now and then."""
    profile = cProfile.Profile()
    totals = {"runs": 0, "wall": 0.0, "cpu": 0.0}

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        wall, cpu = time.perf_counter(), time.thread_time()
        profile.enable()
        try:
            return function(*args, **kwargs)
        finally:
            profile.disable()
            totals["runs"] += 1
            totals["wall"] += time.perf_counter() - wall
            with open(out + ".runs.txt", "a", encoding="utf-8") as f:  # each run: its end (s) and wall time (ms)
                f.write(f"{time.time():.3f} {1000 * (time.perf_counter() - wall):.1f}\n")
            totals["cpu"] += time.thread_time() - cpu
            if totals["runs"] % DUMP_EVERY == 0:
                dump(profile, totals, out)

    return wrapper


def timed(callback, out):
    """``callback`` with its wall time appended to the file ``out``, a line per call (a press's wait for the chains)."""

    @functools.wraps(callback)
    def wrapper(*args, **kwargs):
        began = time.perf_counter()
        try:
            return callback(*args, **kwargs)
        finally:
            with open(out, "a", encoding="utf-8") as f:
                f.write(f"{callback.__name__} {1000 * (time.perf_counter() - began):.1f} ms\n")

    return wrapper


def dump(profile, totals, out):
    profile.dump_stats(out)
    text = io.StringIO()
    runs = totals["runs"]
    text.write(f"{runs} fragment runs: mean wall {1000 * totals['wall'] / runs:.1f} ms, mean thread CPU "
               f"{1000 * totals['cpu'] / runs:.1f} ms\n")
    pstats.Stats(profile, stream=text).sort_stats("cumulative").print_stats(45)
    with open(out + ".txt", "w", encoding="utf-8") as f:
        f.write(text.getvalue())


def main():
    out = sys.argv[1]
    rest = sys.argv[sys.argv.index("--") + 1:]
    sys.path.insert(0, ".")
    from app_pages.explorer_parts import live_panel

    live_panel.live_panel = profiled(live_panel.live_panel, out)
    from app_pages.explorer_parts import controls

    for name in ("on_pause", "on_resume", "on_stop", "on_step"):
        setattr(controls, name, timed(getattr(controls, name), out + ".callbacks.txt"))
    from streamlit.web.cli import main as streamlit_main

    sys.argv = ["streamlit", *rest]
    streamlit_main()


if __name__ == "__main__":
    main()

"""Compiling only what the work at hand uses, in separate processes that cannot go astray (pcrp.runs.compiling and
its entry point pcrp.runs.compile_worker): the same pcrp as the parent whatever the working directory holds,
failures read and said, progress as data."""

import io
import json
import os
import subprocess
import sys
import textwrap
import time

import pytest

from pcrp.runs import compiling

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def worker_events(argv, cwd):
    """(exit status, the JSON events of its stdout, its stderr) of a separate compile run as compiling.Apart runs it."""
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=600)
    return done.returncode, [json.loads(line) for line in done.stdout.splitlines()], done.stderr


def test_the_separate_process_imports_its_parents_pcrp_not_the_working_directorys(tmp_path):
    """From a folder holding another pcrp/ (a clone beside an installed package), the separate compile still
    imports the parent's package: `python -m` or `-c` would put the folder first on sys.path."""
    decoy = tmp_path / "pcrp"
    decoy.mkdir()
    (decoy / "__init__.py").write_text("raise SystemExit('the decoy pcrp was imported')\n")
    (decoy / "runs").mkdir()
    (decoy / "runs" / "__init__.py").write_text("")
    code, events, err = worker_events(compiling.worker_command(parts=["search"]), cwd=tmp_path)
    assert code == 0, err
    assert events[0]["event"] == "started" and events[0]["package"] == compiling.package_file()
    done = [e for e in events if e["event"] == "done"]
    assert [e["part"] for e in done] == ["search"] and done[0]["seconds"] >= 0 and "kernels" in done[0]
    assert events[-1]["event"] == "finished"


def test_a_worker_that_imported_another_pcrp_says_so_and_fails(tmp_path):
    argv = compiling.worker_command(parts=["search"])
    argv[argv.index("--package") + 1] = str(tmp_path / "elsewhere" / "pcrp" / "__init__.py")
    code, events, _ = worker_events(argv, cwd=tmp_path)
    assert code == 2 and events[-1]["event"] == "failed"
    assert events[-1]["error"].startswith(f"imported pcrp from {compiling.package_file()}, not ")


def test_a_failing_part_is_reported_as_data_with_its_traceback_on_stderr(tmp_path):
    code, events, err = worker_events(compiling.worker_command(parts=["seating:tied"]), cwd=tmp_path)
    assert code == 1
    assert events[-1] == {"event": "failed", "part": "seating:tied", "error": "ValueError: not a covariance type: 'tied'"}
    assert "Traceback (most recent call last)" in err and "ValueError" in err


def test_when_the_separate_compile_fails_the_run_says_what_failed_and_compiles_it_here(monkeypatch):
    """The separate process dies before the search (here: a part it cannot compile comes first): the caller reads
    its exit status and events, says what failed, and makes the search ready in its own process."""
    out, events = io.StringIO(), []
    monkeypatch.setattr(compiling, "_READY", set())
    session = compiling.Session(out, events.append, ["seating:tied", "search"])  # no part waits
    session.start_apart("sweep:full")
    session.finish("search")
    said = out.getvalue()
    assert ("the separate compile failed (exit status 1: ValueError: not a covariance type: 'tied'); compiling the "
            "point estimate's search here") in said
    assert {"event": "failed", "group": "search", "apart": True,
            "error": "exit status 1: ValueError: not a covariance type: 'tied'"} in events
    assert events[-1] == {"event": "ready", "group": "search", "seconds": events[-1]["seconds"]}
    assert session.apart.process.returncode == 1


def test_a_run_plans_its_own_type_here_and_the_search_beside_it():
    """What each caller compiles: a run its type's sweep (the seating and the sweep here; the split-merge move, of the
    same type as what compiles here meanwhile, then the search in the separate process); pcrp compile and the app's
    warm-up every group, the full type's sweep first, each type split the same way (the separate process's move of
    the next type waits for this process's word that the sweep before is done)."""
    assert compiling.plan("diag") == (["seating:diag", "sweep:diag"], ["moves:diag", "search"], [])
    here, away, waits = compiling.plan(None)
    assert here == ["seating:full", "sweep:full", "seating:diag", "sweep:diag", "seating:spherical", "sweep:spherical"]
    assert away == ["moves:full", "search", "moves:diag", "moves:spherical"]
    assert waits == ["moves:diag", "moves:spherical"]  # each after this process's word that the sweep before is done
    assert {compiling.group_of(part) for part in here + away} == set(compiling.GROUPS)


SWEEP_PARTS = textwrap.dedent("""
    import json, sys
    from pcrp.runs.compiling import timed_part
    reports = [timed_part(part) for part in sys.argv[1:]]
    print(json.dumps({r["part"]: sorted(name.rsplit(".", 1)[1] for name in r["kernels"] if name.startswith("pcrp."))
                      for r in reports}))  # pcrp's kernels (numba's own, such as np.empty's, come with each)
""")


@pytest.mark.slow
def test_the_sweeps_parts_split_its_compile_and_a_run_compiles_only_its_type(tmp_path):
    """On an empty cache: the seating and the move, compiled apart (as two processes do), leave the sweep only
    run_sweeps to compile (the parts compile the kernels with the types run_sweeps passes them); a later process
    loads the full type's sweep and compiles nothing, and the diagonal type's sweep is still to compile (a run
    compiled its own type's only)."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": ROOT}

    def parts(*names):
        done = subprocess.run([sys.executable, "-c", SWEEP_PARTS, *names], env=env, cwd=tmp_path,
                              capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout.splitlines()[-1])

    assert "seat_points" in parts("seating:full")["seating:full"]
    assert {"split_merge", "seat_exactly", "frozen_seating"} <= set(parts("moves:full")["moves:full"])
    assert parts("sweep:full") == {"sweep:full": ["run_sweeps"]}
    again = parts("sweep:full", "moves:diag")
    assert again["sweep:full"] == [] and "split_merge" in again["moves:diag"]


@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="reads a process's state from Linux's /proc")
def test_a_compile_in_a_separate_process_ends_when_its_parent_ends(tmp_path):
    """A server stopped during its warm-up (or a run interrupted) leaves no compile behind: the worker polls its
    parent (pcrp.runs.compile_worker.PARENT_POLL_SECONDS) and ends when it is gone. Without it the worker went on
    writing numba's cache into a folder CI was removing ("Directory not empty")."""
    import signal

    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}  # empty: the worker compiles for a while
    parent = subprocess.Popen(
        [sys.executable, "-c", "import subprocess, sys, time\n"
         "from pcrp.runs.compiling import worker_command\n"
         "child = subprocess.Popen(worker_command(everything=True), stdout=subprocess.DEVNULL)\n"
         "print(child.pid, flush=True)\ntime.sleep(300)\n"], env=env, stdout=subprocess.PIPE, text=True)
    child = int(parent.stdout.readline())
    time.sleep(2.0)  # (it has started compiling)
    os.kill(parent.pid, signal.SIGKILL)
    parent.wait()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{child}/stat") as stat:
                if stat.read().rsplit(")", 1)[1].split()[0] == "Z":  # ended, not yet reaped by its new parent
                    break
        except FileNotFoundError:
            break
        time.sleep(0.2)
    else:
        os.kill(child, signal.SIGKILL)
        raise AssertionError("the compile's process outlived its parent by 20 s")

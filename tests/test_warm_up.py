"""The kernels compiled out of the way: ``pcrp compile`` covers every kernel that runs, their summaries and the app
use (after it, nothing compiles); the app runs the same compile in a separate process, follows its progress as data,
and a Start pressed before the sweep it needs is ready waits for that sweep, saying what it waits for, then runs
(pcrp.app.warm_up)."""

import json
import os
import subprocess
import sys
import textwrap
import time

import pytest
from streamlit.testing.v1 import AppTest

from pcrp.app import warm_up
from explorer_support import current_run, explorer_state

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# What a run, its summaries and the app's pages compute, on small problems: every kernel they reach.
EVERY_USE = textwrap.dedent("""
    import numpy as np
    from pcrp.runs.compiling import watching_compiles
    with watching_compiles() as compiled:
        from pcrp.analyses.cv import cross_validate
        from pcrp.analyses.posterior import summarise
        from pcrp.analyses.run_summary import summarise_run
        from pcrp.data import old_faithful, simulation
        from pcrp.model import make_prior, resolve_niw
        from pcrp.runs.chains import run_chain, run_chains
        from pcrp.runs.run_spec import make_run_spec
        from pcrp.summaries.partition import point_estimate
        X = old_faithful().X
        spec = make_run_spec(X, prior="pcrp", iters=60, seed=1, n_chains=2)
        chains = run_chains(X, spec)
        summarise_run(chains, loss="vi", seed=1)
        summarise(chains, X, resolve_niw(X), seed=1, scale=True)
        for name in ("crp", "py", "mfm", "sfm"):
            run_chain(X, make_prior(name), resolve_niw(X), iters=20, burn_in=10, seed=1, init="random:3")
        wide = np.random.default_rng(0).normal(size=(40, 7))
        run_chain(wide, make_prior("crp"), resolve_niw(wide), iters=20, burn_in=10, seed=1, split_merge=2)
        for covariance_type in ("diag", "spherical"):
            for data in (X, wide):
                niw = resolve_niw(data, covariance_type=covariance_type)
                run_chain(data, make_prior("pcrp"), niw, iters=20, burn_in=10, seed=1, split_merge=2)
            typed = make_run_spec(X, prior="pcrp", niw={"covariance_type": covariance_type}, iters=40, seed=1,
                                  n_chains=2)
            summarise(run_chains(X, typed), X, typed.niw, seed=1, scale=True)
        cross_validate(simulation("sim2", 120, seed=0).X, r_grid=[1.05, 1.3], folds=2, repeats=1, iters=40,
                       burn_in=20, thin=5, seed=0, n_jobs=1)
        big = np.random.default_rng(1).integers(0, 3, size=(3, 25_000))
        point_estimate(big, seed=0)
    print("COMPILED", sorted(set(compiled)))
""")


@pytest.mark.slow
def test_pcrp_compile_covers_every_kernel_a_run_and_the_app_use(tmp_path):
    """In an empty numba cache, `pcrp compile` compiles (part of it in a separate process at the same time) and says
    so with measured seconds; afterwards a process that samples every prior at d = 2 and d = 7 (and the diagonal
    and spherical covariance types), summarises, cross-validates and searches a large point estimate compiles
    nothing (a kernel reached with new types, or one left out of the groups, fails here), and a second `pcrp
    compile` loads everything from the cache."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": ROOT}
    first = subprocess.run([sys.executable, "-m", "pcrp.cli", "compile"], env=env, cwd=tmp_path,
                           capture_output=True, text=True, timeout=900)
    assert first.returncode == 0, first.stderr
    assert "compiling the sweep and its split-merge moves (once per installation) ..." in first.stdout
    assert ("  part of it, the point estimate's search and part of the other covariance types' sweeps in a separate "
            "process meanwhile" in first.stdout)
    assert "compiling the diagonal covariance type's sweep and its moves (once per installation) ..." in first.stdout
    assert "the point estimate's search: compiled in the separate process in " in first.stdout
    assert "compiled (" in first.stdout and "every kernel is ready" in first.stdout
    used = subprocess.run([sys.executable, "-c", EVERY_USE], env=env, cwd=tmp_path, capture_output=True, text=True,
                          timeout=900)
    assert used.returncode == 0, used.stderr
    assert "COMPILED []" in used.stdout, used.stdout
    again = subprocess.run([sys.executable, "-m", "pcrp.cli", "compile"], env=env, cwd=tmp_path,
                           capture_output=True, text=True, timeout=300)
    assert "compiling" not in again.stdout and again.stdout.count("ready (from numba's cache)") == 4, again.stdout


def fake_compile(events, status=0, stderr=""):
    """The argv of a stand-in for the compile's process (pcrp.runs.compile_worker --all): prints ``events`` (a dict
    as a JSON line, pause in seconds after it), then ``stderr`` on its stderr, and exits with ``status``."""
    script = ("import sys, time\n" + "".join(f"print({json.dumps(event)!r}, flush=True); time.sleep({pause})\n"
                                             for event, pause in events)
              + f"print({stderr!r}, file=sys.stderr, flush=True)\nsys.exit({status})\n")
    return [sys.executable, "-c", script]


FULL_SWEEP_READY = [({"event": "compiling", "group": "sweep:full", "apart": False}, 0.0),
                    ({"event": "compiling", "group": "search", "apart": True}, 0.6),
                    ({"event": "ready", "group": "sweep:full", "seconds": 6.1}, 0.6)]
EVERY_GROUP_READY = [({"event": "ready", "group": group, "seconds": 1.0}, 0.0)
                     for group in ("search", "sweep:diag", "sweep:spherical")]


@pytest.fixture
def fresh_compile(monkeypatch):
    """A compile of this process that has not started yet (the real one has finished: tests/conftest.py)."""
    from pcrp.kernels import apart

    monkeypatch.setattr(warm_up, "_COMPILE", warm_up._Compile())
    monkeypatch.setattr(apart, "_PENDING", {})  # (what the compile registers there is this test's)
    return warm_up


def test_the_compile_state_follows_its_progress_as_data(fresh_compile):
    """The page's line follows the compile's JSON events: what compiles, in this process and the other, how many
    groups are done; the Explorer's full sweep is ready (and loaded here) before the other groups are."""
    assert not warm_up.state().started and not warm_up.state().ready
    warm_up.start(fake_compile(FULL_SWEEP_READY + EVERY_GROUP_READY))
    deadline = time.monotonic() + 10
    while "sweep" not in warm_up.state().compiling and time.monotonic() < deadline:
        time.sleep(0.05)
    doing = warm_up.state("full")
    assert doing.started and not doing.ready and doing.groups_done == 0 and doing.n_groups == 4
    assert doing.describe().startswith("Preparing the sampler, once per installation, in separate processes: "
                                       "compiling the sweep and its split-merge moves, the point estimate's search "
                                       "(0 of 4 parts done), ")
    full = warm_up.wait_until_ready(timeout=30, need="full")
    assert full.ready and "(1 of 4 parts done)" in warm_up.state().describe()
    final = warm_up.wait_until_ready(timeout=30)
    assert final.ready and not final.error and final.describe() == "The sampler is ready."
    assert final.groups_done == 4


def test_a_summary_before_the_search_is_compiled_waits_for_it(fresh_compile):
    """A first run can end before the separate compile has reached the point estimate's search (the Explorer's Start
    waits only for its sweep): its summaries wait for the search (sleeping) instead of compiling it in the server's
    process, which would hold the GIL from every visitor for seconds."""
    from pcrp.kernels import apart

    search_later = [({"event": "compiling", "group": "search", "apart": True}, 3.0),
                    ({"event": "ready", "group": "search", "seconds": 5.0}, 0.0)]
    warm_up.start(fake_compile(FULL_SWEEP_READY + search_later))
    assert warm_up.wait_until_ready(timeout=30, need="full").ready
    assert not warm_up.state("search").ready  # (the stand-in reports it at least 3.6 s after the sweep)
    apart.wait_for("search")  # what pcrp.summaries.partition calls before the search's first use
    assert warm_up.state("search").ready


def test_a_failed_compile_says_why(fresh_compile):
    warm_up.start(fake_compile([({"event": "compiling", "group": "sweep:full", "apart": False}, 0.0)], status=1,
                               stderr="numba.core.errors.TypingError: something broke"))
    final = warm_up.wait_until_ready(timeout=30)
    assert not final.ready and "exited with status 1" in final.error and "something broke" in final.error
    assert final.describe().startswith("The sampler could not be prepared: the compile exited with status 1")


def test_a_compile_that_ends_without_a_group_says_which(fresh_compile):
    """Exit status 0 but a group never reported ready: the page says which, instead of waiting for ever."""
    warm_up.start(fake_compile(FULL_SWEEP_READY))
    assert warm_up.wait_until_ready(timeout=30, need="full").ready  # what the Explorer needs came
    final = warm_up.wait_until_ready(timeout=30)
    assert not final.ready and final.error == "the compile ended without search, sweep:diag, sweep:spherical"


def test_a_start_pressed_during_the_compile_waits_for_it_then_runs(fresh_compile):
    """The Explorer's Start before the kernels are ready: the page says what it waits for, where the class sees it,
    and the run starts by itself once its sweep is ready, whatever else still compiles."""
    warm_up.start(fake_compile([({"event": "compiling", "group": "sweep:full", "apart": False}, 3.0),
                                ({"event": "ready", "group": "sweep:full", "seconds": 3.0}, 60.0)]))
    deadline = time.monotonic() + 30
    while not warm_up.state().compiling and time.monotonic() < deadline:  # its first line read (a busy machine)
        time.sleep(0.05)
    at = AppTest.from_file(os.path.join(ROOT, "app_pages", "explorer.py"), default_timeout=60)
    at.run()
    at.select_slider(key="w_pace").set_value("full speed")
    at.run()
    at.button(key="start").click().run()
    assert not at.exception, at.exception
    assert explorer_state(at).start_pending and current_run(at) is None
    waiting = " ".join(e.value for e in at.info)
    assert ("Preparing the sampler, once per installation, in separate processes: compiling the sweep and its "
            "split-merge moves" in waiting)
    deadline = time.monotonic() + 30
    while current_run(at) is None and time.monotonic() < deadline:
        time.sleep(0.5)
        at.run()
    assert not at.exception, at.exception
    assert current_run(at).groups and not explorer_state(at).start_pending
    current_run(at).stop("the test ended")


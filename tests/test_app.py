"""AppTest of every page: start runs, read charts and state, upload good and bad CSVs."""

import time

import pytest
from streamlit.testing.v1 import AppTest

TIMEOUT = 120  # numba compiles on first use


def explorer():
    at = AppTest.from_file("../pages/explorer.py", default_timeout=TIMEOUT)
    at.run()
    assert not at.exception, at.exception
    return at


def wait_for_sweeps(at, minimum, seconds=60):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        snaps = [c.snapshot() for c in at.session_state["chains"].values()]
        if all(s.sweeps_done >= minimum for s in snaps):
            return snaps
        time.sleep(0.2)
    raise AssertionError(f"chains did not reach {minimum} sweeps: {[s.sweeps_done for s in snaps]}")


def test_explorer_runs_crp_and_pcrp_on_old_faithful():
    at = explorer()
    assert at.session_state["dataset"].n == 272
    at.button(key="start").click().run()
    assert not at.exception, at.exception
    chains = at.session_state["chains"]
    assert set(chains) == {"CRP", "pCRP"}
    snaps = wait_for_sweeps(at, 300)
    at.run()
    assert not at.exception, at.exception
    assert len(at.get("plotly_chart")) >= 8  # trace, K histogram, density, sizes per chain
    assert all(s.K.size >= 300 for s in snaps)
    at.button(key="pause").click().run()
    assert all(c.state in ("paused", "finished") for c in chains.values())
    paused = [c.snapshot().sweeps_done for c in chains.values()]
    time.sleep(0.5)
    assert [c.snapshot().sweeps_done for c in chains.values()] == paused
    at.button(key="resume").click().run()
    at.button(key="stop").click().run()
    for c in chains.values():
        c.join(2)
        assert not c.alive


def test_oracle_button_sets_crp_alpha():
    at = explorer()
    at.selectbox(key="source").set_value("Sim 1").run()
    assert at.session_state["dataset"].true_k == 3
    at.button(key="oracle").click().run()
    assert at.session_state["crp_alpha"] == pytest.approx(round(3 / __import__("math").log(300), 3))


def test_upload_good_then_bad_csv_keeps_the_good_data():
    at = explorer()
    at.selectbox(key="source").set_value("Upload a CSV").run()
    good = "a,b,cls\n" + "\n".join(f"{i % 5},{(i * 7) % 9},{'x' if i % 2 else 'y'}" for i in range(30))
    at.file_uploader(key="upload").set_value(("good.csv", good.encode(), "text/csv")).run()
    assert not at.exception, at.exception
    at.button(key="use_csv").click().run()
    assert at.session_state["dataset"].n == 30 and at.session_state["dataset"].columns == ["a", "b"]
    at.file_uploader(key="upload").set_value(("bad.csv", b"a,b\n1,2\n3\n", "text/csv")).run()
    assert not at.exception
    assert any("Row 3 has 1 fields" in e.value for e in at.error)
    assert at.session_state["dataset"].n == 30  # the previous data stay loaded


def test_rich_get_richer_page_steps_and_changes_r():
    at = AppTest.from_file("../pages/rich_get_richer.py", default_timeout=TIMEOUT)
    at.run()
    assert not at.exception, at.exception
    at.button(key="rgr_step10").click().run()
    assert at.session_state["rgr_shown"] == 11
    at.button(key="rgr_step").click().run()
    assert at.session_state["rgr_shown"] == 12
    at.slider(key="rgr_r").set_value(2.0).run()
    assert not at.exception
    assert len(at.get("plotly_chart")) == 5
    at.button(key="rgr_play").click().run()
    assert at.session_state["rgr_playing"] is True


def test_app_navigation_renders_the_explorer():
    at = AppTest.from_file("../app.py", default_timeout=TIMEOUT)
    at.run()
    assert not at.exception, at.exception
    assert any("CRP vs pCRP" in t.value for t in at.title)

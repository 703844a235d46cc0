"""AppTest of every page: start runs, read charts and state, upload good and bad CSVs."""

import time

import pytest
from streamlit.testing.v1 import AppTest

TIMEOUT = 120  # numba compiles on first use


def explorer():
    at = AppTest.from_file("../app_pages/explorer.py", default_timeout=TIMEOUT)
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
    at = AppTest.from_file("../app_pages/rich_get_richer.py", default_timeout=TIMEOUT)
    at.run()
    assert not at.exception, at.exception
    at.button(key="rgr_step10").click().run()
    assert at.session_state["rgr_shown"] == 11
    at.button(key="rgr_step").click().run()
    assert at.session_state["rgr_shown"] == 12
    at.slider(key="rgr_r").set_value(2.0).run()
    assert not at.exception
    # 4 animation panels, growth of K, 3 distributions at N, arrival orders, scatter, 2 choice panels
    assert len(at.get("plotly_chart")) == 12
    at.select_slider(key="rgr_speed").set_value("very fast (100 per second)")
    at.button(key="rgr_play").click().run()
    assert at.session_state["rgr_playing"] is True
    assert at.session_state["rgr_speed"] == "very fast (100 per second)"


def test_rich_get_richer_distributions_orders_and_one_customer():
    at = AppTest.from_file("../app_pages/rich_get_richer.py", default_timeout=TIMEOUT)
    at.run()
    at.select_slider(key="rgr_n_at").set_value(100).run()
    assert not at.exception, at.exception
    assert "K_N at N = 100" in str(at.get("plotly_chart")[5].proto.spec)
    at.text_input(key="rgr_blocks").set_value("2,x").run()
    assert "is not a list of positive block sizes" in at.error[0].value
    at.text_input(key="rgr_blocks").set_value("2,2,1").run()
    assert not at.error
    assert "the pCRP's depends on who arrives when" in " ".join(c.value for c in at.caption)
    at.button(key="rgr_pick_small").click().run()
    assert not at.exception, at.exception
    ds_n = 272
    point = at.session_state["rgr_point"]
    assert 0 <= point < ds_n
    at.radio(key="rgr_choice_data").set_value("Sim 1").run()
    assert not at.exception, at.exception
    at.slider(key="rgr_point").set_value(299).run()
    at.radio(key="rgr_choice_data").set_value("Old Faithful").run()
    assert not at.exception, at.exception
    assert at.session_state["rgr_point"] == 0  # reset: 299 is past Old Faithful's 272 points


def test_app_navigation_renders_the_explorer():
    at = AppTest.from_file("../app.py", default_timeout=TIMEOUT)
    at.run()
    assert not at.exception, at.exception
    assert any("CRP vs pCRP" in t.value for t in at.title)


def app_on(page):
    at = AppTest.from_file("../app.py", default_timeout=TIMEOUT)
    at.run()
    at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


def test_choose_r_runs_cross_validation_and_sends_r_to_the_explorer():
    at = app_on("app_pages/choose_r.py")
    at.number_input(key="cv_r_start").set_value(1.01)
    at.number_input(key="cv_r_stop").set_value(2.0)
    at.number_input(key="cv_r_step").set_value(0.5)
    at.number_input(key="cv_folds").set_value(2)
    at.number_input(key="cv_iters").set_value(60)
    at.number_input(key="cv_burn_in").set_value(30)
    at.button(key="cv_run").click().run()
    assert not at.exception, at.exception
    result = at.session_state["cv_result"]
    assert list(result.r_grid) == [1.01, 1.5, 2.0]
    assert result.loss.shape == (2, 3)
    assert len(at.get("plotly_chart")) == 1 and len(at.dataframe) == 1
    assert any("Proposed r" in m.value for m in list(at.success) + list(at.warning))
    at.number_input(key="cv_use_r").set_value(1.37)
    at.button(key="use_r").click().run()
    assert not at.exception, at.exception
    assert at.session_state["r"] == pytest.approx(1.37)  # the explorer's slider now holds it
    assert at.slider(key="r").value == pytest.approx(1.37)


def test_choose_r_rejects_a_bad_schedule_with_a_message():
    at = app_on("app_pages/choose_r.py")
    at.number_input(key="cv_iters").set_value(100)
    at.number_input(key="cv_burn_in").set_value(200)
    at.button(key="cv_run").click().run()
    assert not at.exception
    assert "Burn-in (200) must be smaller" in at.error[0].value
    assert "cv_result" not in at.session_state


def test_reproduce_page_runs_a_quick_experiment(monkeypatch):
    from pcrp import reproduce

    # a smaller "quick" protocol so the test takes seconds; the page code path is the same
    monkeypatch.setattr(reproduce, "QUICK", reproduce.Protocol(iters=100, burn_in=50, thin=10, cv_iters=40,
                                                                cv_burn_in=20, cv_thin=10, cv_folds=2))
    at = app_on("app_pages/reproduce.py")
    at.selectbox(key="repro_experiment").set_value("Old Faithful, N = 172")
    at.button(key="repro_run").click().run()
    assert not at.exception, at.exception
    mode, seed, result = at.session_state["repro_results"]["old-faithful"]
    assert mode == "quick" and set(result.methods) == {"CRP-Oracle", "CRP", "pCRP"}
    text = " ".join(m.value for m in at.markdown)
    assert "| pCRP | ours |" in text and "| CRP | paper |" in text
    assert len(at.get("plotly_chart")) >= 4


def test_choose_r_has_no_scheduler_field_and_uses_the_server_side_cluster(monkeypatch):
    """A visitor cannot type an address; the cluster comes from PCRP_DASK_SCHEDULER, set by the server."""
    import distributed

    from pcrp.dask_cluster import ENV_VAR

    monkeypatch.delenv(ENV_VAR, raising=False)
    at = app_on("app_pages/choose_r.py")
    assert not at.text_input  # the old "Dask scheduler" box is gone
    assert any("this server's cores" in c.value for c in at.caption)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=None) as cluster:
        monkeypatch.setenv(ENV_VAR, cluster.scheduler_address)
        at = app_on("app_pages/choose_r.py")
        assert any(cluster.scheduler_address in c.value for c in at.caption)
        at.number_input(key="cv_r_step").set_value(0.5)
        at.number_input(key="cv_folds").set_value(2)
        at.number_input(key="cv_iters").set_value(40)
        at.number_input(key="cv_burn_in").set_value(20)
        at.button(key="cv_run").click().run()
        assert not at.exception, at.exception
        assert at.session_state["cv_result"].settings["scheduler"] == cluster.scheduler_address

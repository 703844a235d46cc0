"""AppTest of every page: start runs, read charts and state, upload good and bad CSVs."""

import json
import math
import re
import time

import numpy as np

import pytest
from streamlit.testing.v1 import AppTest
from explorer_support import SESSION_KEY, as_browser, browser_key, current_run, explorer_state, page_session, run_view

TIMEOUT = 120  # numba compiles on first use


def explorer(query=None):
    at = AppTest.from_file("../app_pages/explorer.py", default_timeout=TIMEOUT)
    at.query_params.update(query or {})
    at.run()
    assert not at.exception, at.exception
    return at


def wait_for(condition, seconds=60):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    raise AssertionError("condition not reached in time")


def fast(at):
    """Full speed and a short run, so the tests do not wait for the teaching pace."""
    at.select_slider(key="w_pace").set_value("full speed")
    at.number_input(key="w_sweeps").set_value(400)
    at.number_input(key="w_burn_in").set_value(100)
    return at.run()


def texts(at):
    return " ".join(e.value for e in list(at.markdown) + list(at.caption) + list(at.warning) + list(at.error)
                    + list(at.info))


def test_explorer_runs_crp_and_pcrp_and_the_buttons_follow_the_state():
    at = fast(explorer())
    assert explorer_state(at).dataset.n == 272
    assert at.button(key="pause").disabled and at.button(key="reset").disabled
    at.button(key="start").click().run()
    assert not at.exception, at.exception
    run = current_run(at)
    assert run.groups == {"CRP": ["CRP", "CRP · chain 2"], "pCRP": ["pCRP", "pCRP · chain 2"]}
    assert run.dataset.n == 272
    assert run.config["runs"]["CRP"]["init"] == ["kmeans:10", "one"]  # the second chain starts unlike the first
    wait_for(lambda: not run.live)
    at.run()
    assert not at.exception, at.exception
    assert all(s.state == "finished" and s.sweeps_done == 400 for s in run.snapshots().values())
    assert "CRP** finished: 400 / 400 sweeps (2 chains)" in texts(at)
    live_charts = at.get("vega_lite_chart")
    assert len(live_charts) == 6  # per chain: trace of K | posterior of K | clusters
    assert all(at.button(key=k).disabled for k in ("pause", "resume", "step", "stop"))
    assert not at.button(key="reset").disabled


def test_pause_step_resume_stop_while_running():
    at = explorer()
    at.number_input(key="w_sweeps").set_value(100_000)
    at.select_slider(key="w_pace").set_value("100 sweeps/s").run()
    at.button(key="start").click().run()
    run = current_run(at)
    wait_for(lambda: all(c.done >= 5 for c in run.chains.values()))
    at.button(key="pause").click().run()
    assert set(run.states.values()) == {"paused"}
    assert at.button(key="pause").disabled and not at.button(key="resume").disabled
    time.sleep(0.2)
    before = [c.done for c in run.chains.values()]
    at.button(key="step").click().run()
    wait_for(lambda: [c.done for c in run.chains.values()] == [b + 1 for b in before])
    at.button(key="resume").click().run()
    wait_for(lambda: all(c.done > b + 1 for c, b in zip(run.chains.values(), before)))
    at.button(key="stop").click().run()
    assert not at.exception, at.exception
    run.join(5)
    assert all(not c.alive for c in run.chains.values())
    assert "stopped because you pressed Stop" in texts(at)


def test_start_reset_start_and_reset_during_a_run():
    """The crash the issue names: Start -> Reset -> Start, and Reset while the chains run."""
    at = explorer()
    at.number_input(key="w_sweeps").set_value(100_000).run()
    at.button(key="start").click().run()
    first = current_run(at)
    at.button(key="reset").click().run()  # during the run
    assert not at.exception, at.exception
    assert current_run(at) is None
    first.join(5)
    assert not any(c.alive for c in first.chains.values())
    at.button(key="start").click().run()
    assert not at.exception, at.exception
    second = current_run(at)
    assert second is not first and second.live
    at.button(key="start").click().run()  # Start again while running replaces the run
    assert not at.exception, at.exception
    assert current_run(at) is not second
    second.join(5)
    assert all("a new run was started" in chain.stop_reason for chain in second.chains.values())
    assert second.discarded  # a replaced run is never shown again and no reload finds it: its buffers are freed
    current_run(at).stop("test over")


def test_a_refused_start_then_a_good_one():
    at = explorer()
    at.number_input(key="w_sweeps").set_value(100)
    at.number_input(key="w_burn_in").set_value(100).run()
    at.button(key="start").click().run()
    assert not at.exception, at.exception
    # in the words of the page's widgets, not the library's parameter names
    assert any(e.value == "burn-in (100) must be smaller than sweeps (100) so that draws are kept." for e in at.error)
    assert current_run(at) is None
    fast(at)
    at.button(key="start").click().run()
    assert not at.exception, at.exception
    assert current_run(at).dataset.n == 272


def test_results_are_marked_as_the_previous_run_after_the_data_change():
    at = fast(explorer())
    at.button(key="start").click().run()
    run = current_run(at)
    wait_for(lambda: not run.live)
    at.selectbox(key="w_data").set_value("sim1").run()
    assert not at.exception, at.exception
    assert explorer_state(at).dataset.name == "sim1"
    assert current_run(at) is run  # kept, but said to be the previous run, on its own data
    warning = " ".join(w.value for w in at.warning)
    assert "Showing the previous run, on Old Faithful" in warning and "Changed since it started: data" in warning
    at.slider(key="w_r2").set_value(1.5)
    at.selectbox(key="w_data").set_value("old-faithful").run()
    warning = " ".join(w.value for w in at.warning)
    assert "Changed since it started: pCRP r." in warning


def test_settings_and_run_survive_a_visit_to_another_page():
    at = AppTest.from_file("../app.py", default_timeout=TIMEOUT)
    at.run()
    at.selectbox(key="w_data").set_value("sim2").run()
    at.number_input(key="w_sim_n").set_value(150)
    at.slider(key="w_r2").set_value(1.35)
    at.number_input(key="w_sweeps").set_value(300)
    at.number_input(key="w_burn_in").set_value(100)
    at.select_slider(key="w_pace").set_value("full speed").run()
    at.button(key="start").click().run()
    run = current_run(at)
    at.switch_page("app_pages/choose_r.py").run()
    assert not at.exception, at.exception
    assert "Sim 2" in texts(at)  # Choose r works on the Explorer's data
    at.switch_page("app_pages/explorer.py").run()
    assert not at.exception, at.exception
    assert at.selectbox(key="w_data").value == "sim2" and at.number_input(key="w_sim_n").value == 150
    assert at.slider(key="w_r2").value == pytest.approx(1.35) and at.number_input(key="w_sweeps").value == 300
    assert current_run(at) is run and not at.warning  # same run, same data and settings


def test_settings_come_from_the_address_and_bad_values_are_refused():
    at = explorer({"data": "sim1", "sim_n": "500", "r": "1.6", "sweeps": "1e9", "seed": "abc", "thin": "nan",
                   "pace": "warp", "junk": "x"})
    assert explorer_state(at).dataset.name == "sim1" and explorer_state(at).dataset.n == 500
    assert at.slider(key="w_r2").value == pytest.approx(1.6)
    assert at.number_input(key="w_sweeps").value == 2000 and at.number_input(key="w_seed").value == 0
    warnings = " ".join(w.value for w in at.warning)
    for name in ("sweeps must be at most 100000", "seed must be a number", "thin must be a whole number",
                 "pace must be one of"):
        assert name in warnings
    assert at.query_params["data"] == "sim1" and at.query_params["r2"] == "1.6"
    assert "sweeps" not in at.query_params  # defaults are left out of the address


def test_the_run_settings_widgets_have_the_declared_bounds_and_a_seed_beyond_31_bits_is_kept():
    """The Explorer's number boxes are the declarations' (the run's burn-in and thinning, the live demo's own
    sweeps, chains and seed): a seed above 2^31 - 1, which a run accepts, is taken from the address and started."""
    from pcrp.app.live_params import LIVE_PARAMS
    from pcrp.runs.run_spec import RUN_PARAMS

    at = explorer({"seed": "3000000000", "pace": "full speed", "sweeps": "200", "burn_in": "50"})
    assert not at.warning
    assert at.number_input(key="w_seed").value == 3_000_000_000
    assert at.number_input(key="w_seed").max == LIVE_PARAMS["seed"].high
    assert at.number_input(key="w_thin").max == RUN_PARAMS["thin"].high
    assert at.number_input(key="w_burn_in").max == RUN_PARAMS["burn_in"].high - 1  # its bound is open
    assert at.number_input(key="w_chains").max == LIVE_PARAMS["chains"].high
    at.button(key="start").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    run = current_run(at)
    assert all(config["seed"] == 3_000_000_000 for config in run.config["runs"].values())
    run.stop("test over")


def reloaded_in_the_same_browser(at):
    """A new session of the browser of ``at``: it sends its browser key (the pcrp_browser cookie, which
    AppTest cannot send, so the key is put where the page keeps what the cookie said)."""
    again = AppTest.from_file("../app_pages/explorer.py", default_timeout=TIMEOUT)
    as_browser(again, browser_key(at))
    again.run()
    assert not again.exception, again.exception
    return again


def test_a_run_belongs_to_its_browser_and_the_address_carries_none_of_it():
    at = fast(explorer())
    at.button(key="start").click().run()
    run = current_run(at)
    wait_for(lambda: not run.live)
    at.run()
    address = dict(at.query_params)
    assert run.token not in json.dumps(address) and "run" not in address
    assert run.browser == browser_key(at)
    # another visitor opens the projected address, even with the run's id added: a fresh page
    stranger = explorer({**address, "run": run.token})
    assert current_run(stranger) is None
    assert "Addresses no longer name runs" in texts(stranger) and "400 / 400 sweeps" not in texts(stranger)
    assert not stranger.button(key="stop").value and stranger.button(key="reset").disabled
    # the owner's reload finds the run again
    again = reloaded_in_the_same_browser(at)
    assert current_run(again) is run
    assert "finished: 400 / 400 sweeps" in texts(again)
    # the registry forgot the run while every page was away: a session still holding it lets it go
    run._owners.clear()
    run.discard()
    again.run()
    assert current_run(again) is None and "no longer kept on this server" in texts(again)


def test_reset_discards_the_run_and_no_reload_brings_it_back():
    """After Reset a reload brought the run back ("stopped because you pressed Reset", or "finished"): the reload found
    the browser's latest run. Now Reset lets the run go for good (its buffers freed), and so does Start for the run it
    replaces, so the reload after a Reset shows no run."""
    at = explorer({"sweeps": "100000", "pace": "10 sweeps/s"})
    at.button(key="start").click().run()
    first = current_run(at)
    at.button(key="start").click().run()  # a second run replaces the first
    second = current_run(at)
    at.button(key="reset").click().run()
    assert not at.exception, at.exception
    assert current_run(at) is None and first.discarded and second.discarded
    again = reloaded_in_the_same_browser(at)
    assert current_run(again) is None and again.button(key="reset").disabled
    assert "Press **Start** to run CRP and pCRP" in texts(again) and "stopped because" not in texts(again)
    finished = fast(again)  # a finished run, reset: the same
    finished.button(key="start").click().run()
    run = current_run(finished)
    wait_for(lambda: not run.live)
    finished.run()
    finished.button(key="reset").click().run()
    assert current_run(reloaded_in_the_same_browser(finished)) is None and run.discarded


def test_reset_in_one_tab_leaves_another_tab_of_the_browser_its_view_but_no_reload_finds_the_run():
    """A second tab of the same browser showing the run keeps it on its page (its memory is freed when that tab lets
    go too), but no reload of the browser finds it after a Reset."""
    at = explorer({"sweeps": "100000", "pace": "10 sweeps/s"})
    at.button(key="start").click().run()
    run = current_run(at)
    other = reloaded_in_the_same_browser(at)
    assert current_run(other) is run
    at.button(key="reset").click().run()
    assert not run.discarded and not run.live
    other.run()
    assert not other.exception and current_run(other) is run and "stopped because you pressed Reset" in texts(other)
    assert current_run(reloaded_in_the_same_browser(at)) is None


def test_oracle_button_sets_crp_alpha_with_feedback():
    at = explorer({"data": "sim1"})
    assert explorer_state(at).dataset.true_k == 3
    at.button(key="oracle").click().run()
    assert at.number_input(key="w_alpha1").value == pytest.approx(round(3 / math.log(300), 3))
    assert any("K_true / ln N" in t.value for t in at.toast)


def plain(text):
    """Markdown text as read: the backslash escapes and word joiners of app_pages.shared.inert removed."""
    return re.sub(r"\\(.)", r"\1", text).replace("\u2060", "")


def test_upload_good_then_bad_csv_leaves_no_data_in_use_and_a_second_file_gets_its_own_columns():
    at = explorer({"data": "csv"})
    good = "a,b,cls\n" + "\n".join(f"{i % 5},{(i * 7) % 9},{'x' if i % 2 else 'y'}" for i in range(30))
    at.file_uploader(key="upload").set_value(("good.csv", good.encode(), "text/csv")).run()
    assert not at.exception, at.exception
    at.button(key="use_csv").click().run()
    assert explorer_state(at).dataset.n == 30 and explorer_state(at).dataset.columns == ["a", "b"]
    line = [plain(m.value) for m in at.markdown if m.value.startswith("**Data in use:**")]
    assert len(line) == 1 and "file 'good.csv'" in line[0] and "columns a, b (d = 2" in line[0], line  # the file, what Start uses
    other = "u,v,w\n" + "\n".join(f"{i % 3},{(i * 5) % 7},{(i * 3) % 11}" for i in range(20))
    at.file_uploader(key="upload").set_value(("other.csv", other.encode(), "text/csv")).run()
    columns = [m for m in at.multiselect if m.label == "Columns to cluster"]
    assert len(columns) == 1 and columns[0].value == ["u", "v", "w"]  # not the old file's (empty) choice
    assert explorer_state(at).dataset is None  # a new file: good.csv is no longer behind Start ...
    assert any("No data in use yet" in i.value and "'other.csv'" in plain(i.value) for i in at.info)
    assert at.button(key="start").disabled
    at.button(key="use_csv").click().run()
    assert explorer_state(at).dataset.columns == ["u", "v", "w"]
    at.file_uploader(key="upload").set_value(("bad.csv", b"a,b\n1,2\n3\n", "text/csv")).run()
    assert not at.exception
    assert any("Row 3 has 1 fields" in e.value for e in at.error)
    assert explorer_state(at).dataset is None  # ... nor is other.csv once a refused file replaces it
    refused = [plain(e.value) for e in at.error if e.value.startswith("No data in use")]
    assert len(refused) == 1 and "'bad.csv' was refused: Row 3 has 1 fields" in refused[0], refused
    assert not [m for m in at.markdown if m.value.startswith("**Data in use:**")]
    assert at.button(key="start").disabled
    assert not [i for i in at.info if "Press **Start**" in i.value]  # no invitation to a disabled Start


def test_after_a_refused_upload_no_line_invites_a_press_of_the_disabled_start():
    """Issue 57: with a run on a good file shown, a refused file took the data in use away and disabled Start, while
    the previous run's note still said "Press Start to run with the current settings". The words follow the button."""
    at = fast(explorer({"data": "csv"}))
    good = "a,b\n" + "\n".join(f"{i % 5},{(i * 7) % 9}" for i in range(30))
    at.file_uploader(key="upload").set_value(("good.csv", good.encode(), "text/csv")).run()
    at.button(key="use_csv").click().run()
    at.button(key="start").click().run()
    run = current_run(at)
    wait_for(lambda: not run.live)
    at.run()
    at.file_uploader(key="upload").set_value(("bad.csv", b"a,b\n1,2\n3\n", "text/csv")).run()
    assert not at.exception, at.exception
    assert at.button(key="start").disabled
    previous = [w.value for w in at.warning if w.value.startswith("Showing the previous run")]
    assert len(previous) == 1 and "Start" in previous[0] and "Press **Start**" not in previous[0], previous
    assert "once data are in use" in previous[0]
    assert not [e for e in list(at.info) + list(at.warning) + list(at.markdown) if "Press **Start**" in e.value]
    at.file_uploader(key="upload").set_value(("good.csv", good.encode(), "text/csv")).run()
    at.button(key="use_csv").click().run()
    assert not at.button(key="start").disabled  # data in use again: the note invites Start again
    at.number_input(key="w_seed").set_value(3).run()
    assert any("Press **Start** to run with the current settings" in w.value for w in at.warning)


def test_a_column_with_a_text_cell_is_a_warning_before_and_after_use_this_csv():
    """The tester's file: two columns, one with a text cell. The column is left out with a warning that names it,
    its cell and line (not a grey caption), and the main panel says that Start clusters one column of that file."""
    at = explorer({"data": "csv"})
    rows = "\n".join(f"{i % 5}.5,{'12a' if i == 2 else (i * 7) % 9}" for i in range(30))
    at.file_uploader(key="upload").set_value(("mixed.csv", f"a,b\n{rows}".encode(), "text/csv")).run()
    assert not at.exception, at.exception
    said = "Column 'b' is not clustered: its cell '12a' on line 4 is not a number"
    assert any(said in plain(w.value) for w in at.sidebar.warning), [w.value for w in at.warning]
    assert not any(said in plain(c.value) for c in at.caption)
    at.button(key="use_csv").click().run()
    assert explorer_state(at).dataset.columns == ["a"]
    assert any(said in plain(w.value) for w in at.main.warning)
    line = [plain(m.value) for m in at.main.markdown if m.value.startswith("**Data in use:**")][0]
    assert "file 'mixed.csv'" in line and "columns a (d = 1, standardised)" in line


def test_a_csv_without_a_header_keeps_its_first_row_and_the_page_says_so():
    at = explorer({"data": "csv"})
    rows = "\n".join(f"{i % 5}.5,{(i * 7) % 9}" for i in range(30))
    at.file_uploader(key="upload").set_value(("plain.csv", rows.encode(), "text/csv")).run()
    assert not at.exception, at.exception
    shown = " ".join(c.value for c in at.caption).replace("\\", "")
    assert "No header found: the first row holds only numbers, so it is read as data and the columns are named " \
           "x1..x2." in shown
    at.button(key="use_csv").click().run()
    assert explorer_state(at).dataset.n == 30 and explorer_state(at).dataset.columns == ["x1", "x2"]


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


def choose_r_result(at):
    """The last result of the Choose r page (pcrp.app.page_session.ChooseRResult), or None."""
    return page_session(at).choose_r.result


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
    result = choose_r_result(at).cv
    assert list(result.r_grid) == [1.01, 1.5, 2.0]
    assert result.loss.shape == (2, 3)
    assert len(at.get("plotly_chart")) == 1 and len(at.dataframe) == 2  # the check's r values, the CV curve
    check = choose_r_result(at).check  # the proposal checked on the data the Explorer fits
    assert check["proposed"] == result.chosen_r and check["n"] == 272 and check["tried"][0]["r"] == result.chosen_r
    assert any(f"Checked r = {check['r']:g}" in m.value for m in list(at.success) + list(at.warning) + list(at.error))
    assert at.number_input(key="cv_use_r").value == pytest.approx(check["r"])  # the r handed on is the checked one
    at.number_input(key="cv_use_r").set_value(1.37)
    at.button(key="use_r").click().run()
    assert not at.exception, at.exception
    assert at.session_state["w_r2"] == pytest.approx(1.37)  # the explorer's slider now holds it
    assert at.slider(key="w_r2").value == pytest.approx(1.37)


def test_choose_r_offers_any_r_the_grid_could_keep():
    """A checked r above 3 (the grid runs to 6) once made the "r to use" field raise: its range was typed."""
    at = app_on("app_pages/choose_r.py")
    for key, value in (("cv_r_start", 3.5), ("cv_r_stop", 4.5), ("cv_r_step", 0.5), ("cv_folds", 2), ("cv_iters", 40),
                       ("cv_burn_in", 20)):
        at.number_input(key=key).set_value(value)
    at.button(key="cv_run").click().run()
    assert not at.exception, at.exception
    assert at.number_input(key="cv_use_r").value >= 3.5


def test_choose_r_rejects_a_bad_schedule_with_a_message():
    at = app_on("app_pages/choose_r.py")
    at.number_input(key="cv_iters").set_value(100)
    at.number_input(key="cv_burn_in").set_value(200)
    at.button(key="cv_run").click().run()
    assert not at.exception
    assert "Burn-in (200) must be smaller" in at.error[0].value.replace("\\", "")  # shown through inert()
    assert choose_r_result(at) is None


def test_reproduce_page_runs_a_quick_experiment(monkeypatch):
    from pcrp.experiments import reproduce

    # a smaller "quick" protocol so the test takes seconds; the page code path is the same
    monkeypatch.setattr(reproduce, "QUICK", reproduce.Protocol(iters=100, burn_in=50, thin=10, cv_iters=40,
                                                                cv_burn_in=20, cv_thin=10, cv_folds=2, n_seeds=2,
                                                                cv_check=False))
    at = app_on("app_pages/reproduce.py")
    at.selectbox(key="repro_experiment").set_value("Old Faithful, N = 172")
    at.button(key="repro_run").click().run()
    assert not at.exception, at.exception
    mode, seed, result = page_session(at).reproduce.results["old-faithful"]
    assert mode == "quick" and result.seeds == [0]  # Old Faithful is one data set, not simulated again
    assert list(result.methods) == ["CRP-Oracle", "CRP", "pCRP", "MFM", "SFM"]
    table = at.table[0].value.set_index("method")  # ours next to the paper's, SE in plain notation
    assert list(table.index) == ["CRP-Oracle", "CRP", "pCRP", "MFM (beyond the paper)", "SFM (beyond the paper)"]
    assert table.loc["CRP", "K, paper"] == "4" and "(MCSE" in table.loc["pCRP", "K, ours"]
    assert len(at.get("plotly_chart")) >= 4


def test_reproduce_shows_the_shipped_comparison_as_counts_against_each_method():
    """docs/compare/compare.json on the page: one row per other method with how often the pCRP won, matched and
    lost, the flagged fits in words, and the figure."""
    at = app_on("app_pages/reproduce.py")
    assert not at.exception, at.exception
    assert any(h.value.startswith("Compared with what?") for h in at.header)
    counts = at.dataframe[-1].value.set_index("against")
    assert list(counts.index) == ["CRP", "Pitman-Yor", "MFM", "SFM", "BGM"]
    assert (counts[["NMI higher", "NMI within 0.01", "NMI lower"]].sum(axis=1) == counts["labelled data sets"]).all()
    assert any(m.value.startswith("The pCRP fit was flagged") for m in at.markdown)


def test_choose_r_has_no_scheduler_field_and_uses_the_server_side_cluster(monkeypatch):
    """A visitor cannot type an address; the cluster comes from PCRP_DASK_SCHEDULER, set by the server."""
    import distributed

    from pcrp.runs.dask_cluster import ENV_VAR

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
        assert choose_r_result(at).cv.settings["scheduler"] == cluster.scheduler_address


def test_an_unexpected_error_shows_one_line_not_a_traceback(monkeypatch):
    """Visitors never see a traceback or server paths: the page guard shows one line (and logs)."""
    from pcrp.app import live_view

    def broken(K, n_bins=None):
        raise RuntimeError("/srv/secret/path exploded")

    at = fast(AppTest.from_file("../app.py", default_timeout=TIMEOUT).run())
    at.button(key="start").click().run()
    run = current_run(at)
    monkeypatch.setattr(live_view, "counts_text", broken)  # used by every row heading, live or ended
    run_view(at).parts = None  # the headings a frame may reuse (live_panel.fresh_parts): made anew
    at.run()
    assert not at.exception, at.exception
    shown = " ".join(e.value for e in at.error)
    assert "Something went wrong in the live view" in shown and "/srv/secret" not in shown
    run.stop("test over")


def test_posterior_summary_and_r_hat_show_when_chains_disagree():
    """Two chains per prior from unlike starts; with plain Gibbs at r = 2 on Old Faithful the pCRP chain
    started in one cluster stays there (docs/design.md section 1.7), so its R-hat must say the chains disagree;
    the posterior summary then shows diagnostics, the point estimate, the similarity matrix and the
    averaged density for each prior."""
    at = explorer({"r": "2", "split_merge": "0", "sweeps": "600", "burn_in": "200", "pace": "full speed"})
    at.button(key="start").click().run()
    run = current_run(at)
    wait_for(lambda: not run.live)
    at.run()
    assert not at.exception, at.exception
    headings = texts(at)
    assert "chains disagree" in headings
    assert run.config["runs"]["pCRP"]["init"] == ["kmeans:10", "one"]
    at.button(key="summarise").click().run()
    assert not at.exception, at.exception
    specs = [str(c.proto.spec) for c in at.get("plotly_chart")]
    for what in ("MCMC diagnostics", "P(two points share a cluster)", "posterior predictive density (mean over draws)",
                 "point estimate (faint = unsure)"):
        for prior in ("CRP", "pCRP"):  # one figure per prior
            assert sum(f'"{prior}: {what}' in spec for spec in specs) == 1, (prior, what)
    assert any("R-hat on K" in w.value for w in at.warning)
    assert any("Point estimate:" in m.value for m in at.markdown)
    labels = [b.label for b in at.get("download_button")]
    for name in ("chains (RESULT.npz)", "traces (NetCDF)", "point estimate (CSV)", "similarity matrix (.npy)"):
        assert labels.count(name) == 2, name


def test_an_obvious_label_column_is_preselected_and_not_clustered():
    """An iris-like file: the integer 'species' codes are class labels, not a feature to cluster."""
    at = explorer({"data": "csv"})
    rows = "\n".join(f"{1 + (i % 3) * 2 + 0.1 * (i % 5)},{3 + (i % 3) + 0.2 * (i % 4)},{i % 3}" for i in range(45))
    at.file_uploader(key="upload").set_value(("iris.csv", f"length,width,species\n{rows}".encode(), "text/csv")).run()
    assert not at.exception, at.exception
    label = [s for s in at.selectbox if s.label == "True labels (optional)"][0]
    assert label.value == "species"
    columns = [m for m in at.multiselect if m.label == "Columns to cluster"][0]
    assert columns.value == ["length", "width"]
    at.button(key="use_csv").click().run()
    ds = explorer_state(at).dataset
    assert ds.columns == ["length", "width"] and ds.true_k == 3


HOSTILE_HEADER = ["![t](http://198.51.100.7/t.png)", "[Click to re-login](http://198.51.100.7/login)",
                  "<img src=http://198.51.100.7/i.png>", ":red[alert] $x^2$ www.example.org"]


def markdown_texts(at):
    """Every element whose text Streamlit renders as Markdown."""
    return [e.value for e in list(at.markdown) + list(at.caption) + list(at.warning) + list(at.error)
            + list(at.info) + list(at.toast) + list(at.success)]


def assert_inert(at):
    """No link, image, tag, colour directive or formula can form from the visitor's strings."""
    import re

    for text in markdown_texts(at):
        assert not re.search(r"(?<!\\)\]\(", text), text  # [text](url) or ![alt](url)
        assert not re.search(r"(?<!\\)<img", text) and not re.search(r"(?<!\\):red\[alert", text), text
        assert not re.search(r"(?<!\\)\$x", text) and "www.example" not in text, text


def test_a_hostile_header_and_file_name_are_shown_as_literal_text():
    at = explorer({"data": "csv"})
    rows = "\n".join(f"{i % 4},{(i * 3) % 7},{i % 5 * 0.5},{(i * 5) % 11},{'ab'[i % 2]}" for i in range(40))
    header = ",".join(HOSTILE_HEADER) + ",species"
    name = "[re-login](http://198.51.100.7/x) ![i](http://198.51.100.7/i.png).csv"
    at.file_uploader(key="upload").set_value((name, f"{header}\n{rows}".encode(), "text/csv")).run()
    assert not at.exception, at.exception
    assert_inert(at)
    at.button(key="use_csv").click().run()
    assert explorer_state(at).dataset.columns == HOSTILE_HEADER
    assert any(r"\[re\-login\]\(http\:" in text for text in markdown_texts(at))  # shown, escaped
    assert_inert(at)
    at = fast(at)
    at.button(key="start").click().run()
    wait_for(lambda: not current_run(at).live)
    at.run()
    assert_inert(at)
    at.number_input(key="w_seed").set_value(1).run()  # the "previous run" warning names the data
    assert any("Showing the previous run" in w.value for w in at.warning)
    assert_inert(at)
    # a bad file with a hostile name: the error names it literally
    at.file_uploader(key="upload").set_value(("[x](http://198.51.100.7/).csv", b"a,b\n1,2\n3\n", "text/csv")).run()
    assert any("Row 3 has 1 fields" in e.value for e in at.error)
    assert_inert(at)


def test_hostile_columns_with_text_and_missing_cells_get_inert_one_line_messages():
    """Markdown and HTML column names, one of them with a text cell, a 5,000-character name, NaN cells and a text
    column: every message the page shows is one line of bounded length, and nothing in it can link or render."""
    at = explorer({"data": "csv"})
    huge = "W" * 5000
    header = ",".join(HOSTILE_HEADER[:2] + [huge, "notes", HOSTILE_HEADER[2]])
    rows = "\n".join(f"{i % 4}.5,{(i * 3) % 7},{'nan' if i % 6 == 0 else (i * 5) % 11},word{i % 3},"
                      f"{'<b>x</b>' if i == 7 else i % 5}" for i in range(40))
    at.file_uploader(key="upload").set_value(("<i>h</i>.csv", f"{header}\n{rows}".encode(), "text/csv")).run()
    assert not at.exception, at.exception
    warning = [plain(w.value) for w in at.sidebar.warning]
    assert len(warning) == 1 and warning[0].startswith(f"Column {HOSTILE_HEADER[2]!r} is not clustered: its cell "
                                                       "'<b>x</b>' on line 9 is not a number"), warning
    at.button(key="use_csv").click().run()
    ds = explorer_state(at).dataset
    assert ds.columns == HOSTILE_HEADER[:2] + [huge] and ds.n == 33  # the NaN rows dropped, and said so
    assert any("Dropped 7 row(s) with a missing value" in plain(c.value) for c in at.main.caption)
    line = [plain(m.value) for m in at.main.markdown if m.value.startswith("**Data in use:**")][0]
    assert "'<i>h</i>.csv'" in line and "W" * 60 + "…" in line and "W" * 61 not in line
    messages = [e.value for e in list(at.caption) + list(at.warning) + list(at.error) + list(at.info)
                + list(at.toast)] + [line]
    assert all("\n" not in t and len(t) < 1000 for t in messages), max(messages, key=len)
    assert_inert(at)


def test_the_demo_link_carries_the_settings_and_nothing_of_the_run():
    from pcrp.app import explorer_settings as es

    values = {**es.defaults(), "data": "sim1", "r2": 1.3, "pace": "full speed"}
    assert es.demo_link("http://host:8501", values) == "http://host:8501/?data=sim1&r2=1.3&pace=full+speed"
    assert es.demo_link("https://host/app/?run=abc#x", values).startswith("https://host/app/?data=sim1&")
    assert "run" not in es.demo_link("https://host/app/?run=abc#x", values)
    at = fast(explorer({"data": "sim1", "r": "1.3"}))
    at.button(key="start").click().run()
    shown = " ".join(c.value for c in at.code)
    assert "data=sim1" in shown and "r2=1.3" in shown and current_run(at).token not in shown


def test_choose_r_refuses_work_above_its_budget_and_states_the_work_before_running():
    at = app_on("app_pages/choose_r.py")
    assert any("about 9 core-seconds of sampling" in c.value and "at most 5 core-minutes" in c.value
               for c in at.caption)  # Old Faithful at the page's defaults
    at.number_input(key="cv_r_step").set_value(0.01)
    at.number_input(key="cv_folds").set_value(20)
    at.number_input(key="cv_repeats").set_value(10)
    at.number_input(key="cv_iters").set_value(50_000)
    at.button(key="cv_run").click().run()
    assert not at.exception
    assert "core-hours of sampling, more than the 5 core-minutes a run of this page may use" in \
        at.error[0].value.replace("\\", "")  # (shown through inert: Markdown escapes)
    assert choose_r_result(at) is None


def test_choose_r_counts_the_dimensions_of_the_explorers_data():
    """The same settings on 2,000 points: stated and accepted in 2-D, refused in 50-D with the estimate and the
    limit, before any fit starts."""
    from pcrp.app import explorer_settings as es
    from pcrp.app.page_session import ExplorerState, PageSession
    from pcrp.data import Dataset

    rng = np.random.default_rng(0)
    for dims, accepted in ((2, True), (50, False)):
        at = AppTest.from_file("../app_pages/choose_r.py", default_timeout=TIMEOUT)
        X = rng.normal(size=(2000, dims))
        shown = Dataset(X=X, labels=None, name="mixed", columns=[f"x{j + 1}" for j in range(dims)],
                        description=f"{dims}-D test data.")
        # the Explorer's data set, where the Explorer leaves it in the session's object
        at.session_state[SESSION_KEY] = PageSession(explorer=ExplorerState(es.defaults(), dataset=shown))
        at.run()
        caption = next(c.value for c in at.caption if c.value.startswith("This run:"))
        assert f"on all 2,000 points in {dims} dimension(s)" in caption
        if accepted:
            assert "core-seconds of sampling" in caption
            continue
        assert "core-minutes of sampling" in caption
        at.number_input(key="cv_iters").set_value(1000)
        at.button(key="cv_run").click().run()
        assert not at.exception
        assert "core-minutes of sampling, more than the 5 core-minutes" in at.error[0].value.replace("\\", "")
        assert choose_r_result(at) is None


def test_reproduce_states_its_work_and_refuses_more_than_its_budget_before_running(monkeypatch):
    from pcrp.experiments import reproduce

    called = []
    monkeypatch.setattr(reproduce, "run_experiment", lambda *a, **k: called.append(1))
    at = app_on("app_pages/reproduce.py")
    at.selectbox(key="repro_experiment").set_value("Sim 1, N = 2000")
    at.radio(key="repro_mode").set_value("full").run()
    from pcrp.sampling.compute import describe_seconds
    from pcrp.experiments.reproduce import EXPERIMENTS, FULL, reproduce_work

    need = describe_seconds(reproduce_work(EXPERIMENTS["sim1-2000"], FULL))  # the one formula: its words here
    assert need.endswith("core-minutes") or need.endswith("core-hours")
    assert any(f"about {need} of sampling" in c.value and "at most 15 core-minutes" in c.value for c in at.caption)
    at.button(key="repro_run").click().run()
    assert not at.exception, at.exception
    assert f"needs about {need} of sampling, more than the 15 core-minutes" in at.error[0].value
    assert "pcrp reproduce" in at.error[0].value and not called and not page_session(at).reproduce.results


def test_a_run_nobody_watched_is_shown_as_paused_by_the_server_and_its_owners_resume_takes_it_back():
    from app_pages.shared import registry

    at = explorer()
    at.select_slider(key="w_pace").set_value("10 sweeps/s")
    at.number_input(key="w_sweeps").set_value(100_000)
    at.run()
    at.button(key="start").click().run()
    run = current_run(at)
    try:
        run._watched -= registry().reclaim_seconds + 1  # its page has not drawn it for over 2 minutes
        registry().sweep()
        assert run.reclaimed
        at.run()
        assert not at.exception, at.exception
        assert any("Paused by the server: nobody watched this run for 2 minutes" in i.value for i in at.info)
        assert not at.button(key="resume").disabled
        at.button(key="resume").click().run()
        assert not at.exception, at.exception
        assert not run.reclaimed and run.running
        assert not any("Paused by the server" in i.value for i in at.info)
    finally:
        run.stop("test over")


def test_a_start_beyond_the_browsers_share_says_why_and_when():
    """A second tab of the same browser at the Explorer's largest run (2 priors x 4 chains) already holds the
    browser's 8 chains: this tab's Start is refused with the limit, its reason and the wait, not a bare 'busy'."""
    first = explorer({"chains": "4", "sweeps": "100000", "pace": "10 sweeps/s"})
    first.button(key="start").click().run()
    held = current_run(first)
    try:
        second = reloaded_in_the_same_browser(first)
        explorer_state(second).show(None)  # another tab: same browser key, no run of its own
        second.run()
        second.button(key="start").click().run()
        assert not second.exception, second.exception
        text = " ".join(e.value for e in second.error)
        assert "This browser's other tabs already run 8 chains" in text and "one browser may hold at most 8" in text
        assert re.search(r"end in about [\d.,]+ (s|min|h): try again then", text)  # at the chains' present speed
        assert current_run(second) is None and held.running
    finally:
        held.stop("test over")


def _light_choose_r(at, covariance):
    for key, value in (("cv_r_start", 1.01), ("cv_r_stop", 2.0), ("cv_r_step", 0.5), ("cv_folds", 2),
                       ("cv_iters", 60), ("cv_burn_in", 30)):
        at.number_input(key=key).set_value(value)
    at.radio(key="cv_covariance").set_value(covariance)
    at.button(key="cv_run").click().run()
    assert not at.exception, at.exception


def test_choose_r_chooses_r_for_the_covariance_type_picked_and_says_which():
    """Diagonal covariances picked: the cross validation, the chains per r, the merge path and the check all run
    with them, the figure's title names them, and the r handed to the Explorer says it is for them while the
    Explorer's rows run with full ones."""
    at = app_on("app_pages/choose_r.py")
    assert at.radio(key="cv_covariance").value == "full"  # the Explorer's rows' type, full by default
    _light_choose_r(at, "diag")
    result = choose_r_result(at).cv
    assert result.settings["niw_fixed"] == {"covariance_type": "diag"}
    assert all(niw["covariance_type"] == "diag" for niw in result.settings["niw_per_split"])
    assert choose_r_result(at).path.config["covariance_type"] == "diag"
    assert choose_r_result(at).covariance_type == "diag" and choose_r_result(at).types is None
    assert "with diagonal covariances" in choose_r_result(at).check["reference_from"]
    assert any("This r was chosen for diagonal covariances; the Explorer's rows run with full covariances" in c.value
               for c in at.caption)


def test_choose_r_compares_the_three_covariance_types_and_shows_which_the_data_support():
    """Compare all three: r cross-validated and checked for each type on the same folds, a table of each type's
    held-out log predictive (with SE and how far behind the best), loss and mean K, and the sentence naming the type
    the data support; the curve, chains and path shown are that type's. The work stated counts the three."""
    at = app_on("app_pages/choose_r.py")
    one = next(c.value for c in at.caption if c.value.startswith("This run:"))
    _light_choose_r(at, "compare")
    choice = choose_r_result(at).types
    assert set(choice.scores) == {"full", "diag", "spherical"} and choice.chosen == choose_r_result(at).covariance_type
    assert choose_r_result(at).cv.settings["niw_fixed"] == {"covariance_type": choice.chosen}
    table = next(d.value for d in at.dataframe if "behind the best" in d.value.columns)
    assert list(table["covariance"]) == ["Spherical", "Diagonal", "Full"]
    assert list(table[""]).count("chosen") == 1
    assert any(m.value.startswith("The data support ") for m in at.markdown)
    three = next(c.value for c in at.caption if c.value.startswith("This run:"))
    assert three.startswith("This run: for each of the 3 covariance types") and three != one


def test_choose_r_has_present_mode_from_the_switch_or_the_address():
    """Present, as the Explorer's and the Lesson's: the Explorer's presentation styles (no sidebar, larger text),
    the page's explanation folded under the results' controls, and ?present=1 in the address; a bad value is said."""
    from app_pages.explorer_parts.header import EXPLORER_PRESENT_TEXT
    from app_pages.shared import PRESENT_RULES

    PRESENT_CSS = PRESENT_RULES + EXPLORER_PRESENT_TEXT
    at = app_on("app_pages/choose_r.py")
    assert at.toggle(key="choose_r_present").value is False and not at.expander
    assert not any(PRESENT_CSS in h.proto.body for h in at.get("html"))
    at.toggle(key="choose_r_present").set_value(True).run()
    assert not at.exception, at.exception
    assert any(PRESENT_CSS in h.proto.body for h in at.get("html")) and at.query_params["present"] in ("1", ["1"])
    assert [e.label for e in at.expander] == ["What r does, how cross validation chooses it, and which covariance"]
    at.toggle(key="choose_r_present").set_value(False).run()
    assert "present" not in at.query_params
    address = AppTest.from_file("../app_pages/choose_r.py", default_timeout=TIMEOUT)
    address.query_params["present"] = "1"
    address.run()
    assert address.toggle(key="choose_r_present").value is True
    bad = AppTest.from_file("../app_pages/choose_r.py", default_timeout=TIMEOUT)
    bad.query_params["present"] = "maybe"
    bad.run()
    assert bad.toggle(key="choose_r_present").value is False
    assert any("presentation mode must be true or false" in w.value for w in bad.warning)

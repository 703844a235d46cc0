"""Every page's state is its part of the session's one object (pcrp.app.page_session): after a visit to every page
and its main action, st.session_state holds the object and the keys of the widgets and components on the page shown,
nothing else; each page's widgets and its address are drawn from its part's settings (so a visit to another page
keeps them, and an address the visitor brings is read into them); the Explorer and Choose r meet in the object;
what each part holds is bounded as pcrp.app.page_session states; and one call, Streamlit's release of the session,
lets go of it and cancels the session's fits (tests/test_explorer_session.py: the Explorer's part)."""

import pathlib

import pytest
from streamlit.runtime import caching
from streamlit.testing.v1 import AppTest

from pcrp.app.page_session import ChooseRState, LessonState, PageSession, ReproduceState, RichGetRicherState
from pcrp.sampling.compute import WorkTicket
from pcrp.teaching import lesson
from tests.test_app import fast, wait_for

from explorer_support import SESSION_KEY, current_run, page_session

TIMEOUT = 300  # a fresh process compiles the kernels and computes the lesson's cached steps
ROOT = pathlib.Path(__file__).resolve().parent.parent
LIGHT_CV = {"cv_r_start": 1.01, "cv_r_stop": 2.0, "cv_r_step": 0.5, "cv_folds": 2, "cv_iters": 60, "cv_burn_in": 30}


def on_the_page(at):
    """The keys of the widgets and components on the page shown (an element's key, a component's id ends with its
    key), whether Streamlit keeps a state for them or not."""
    keys = set()

    def walk(node):
        if getattr(node, "key", None):
            keys.add(node.key)
        children = getattr(node, "children", None)
        for child in (children.values() if isinstance(children, dict) else ()):
            walk(child)

    walk(at._tree)
    return keys | {e.proto.id.split("-", 2)[2] for e in at.get("bidi_component") if e.proto.id.count("-") >= 2}


def loose_keys(at):
    """What st.session_state holds beside the one object and the keys of the page's widgets and components."""
    assert not at.exception, at.exception
    return set(at.session_state.keys()) - on_the_page(at) - {SESSION_KEY}


def small_quick_protocol(monkeypatch):
    """A smaller "quick" protocol, so that Reproduce's Run takes seconds (the page's code path is the same)."""
    from pcrp.experiments import reproduce

    monkeypatch.setattr(reproduce, "QUICK", reproduce.Protocol(iters=100, burn_in=50, thin=10, cv_iters=40,
                                                                cv_burn_in=20, cv_thin=10, cv_folds=2, n_seeds=2,
                                                                cv_check=False))


def light_choose_r(at):
    for key, value in LIGHT_CV.items():
        at.number_input(key=key).set_value(value)
    at.button(key="cv_run").click().run()
    assert not at.exception, at.exception


def test_every_page_keeps_its_state_in_the_one_object_and_nothing_else_in_the_session(monkeypatch):
    """Each page visited and its main action done (a run, a cross validation and its r sent to the Explorer, an
    experiment, the restaurant played and the growth of K shown, the lesson stepped and its restaurant seated): at
    every point st.session_state holds the one PageSession and the keys of the widgets and components shown, and the
    session's object holds a typed part per page."""
    small_quick_protocol(monkeypatch)
    at = AppTest.from_file("../app.py", default_timeout=TIMEOUT)
    at.query_params.update({"data": "sim1", "sim_n": "300"})
    at.run()
    at = fast(at)
    at.button(key="start").click().run()
    run = current_run(at)
    wait_for(lambda: not run.live)
    at.run()
    assert loose_keys(at) == set()

    at.switch_page("app_pages/choose_r.py").run()
    assert loose_keys(at) == set()
    light_choose_r(at)
    assert page_session(at).choose_r.result.cv.settings["n"] == 300  # the Explorer's data set, from the object
    assert loose_keys(at) == set()
    at.number_input(key="cv_use_r").set_value(1.37)
    at.button(key="use_r").click().run()
    assert at.slider(key="w_r2").value == pytest.approx(1.37)  # the Explorer took the r sent ...
    assert page_session(at).sent_r is None  # ... once
    assert loose_keys(at) == set()

    at.switch_page("app_pages/reproduce.py").run()
    at.selectbox(key="repro_experiment").set_value("Old Faithful, N = 172")
    at.button(key="repro_run").click().run()
    assert "old-faithful" in page_session(at).reproduce.results
    assert loose_keys(at) == set()

    at.switch_page("app_pages/rich_get_richer.py").run()
    at.button(key="rgr_step10").click().run()
    at.select_slider(key="rgr_speed").set_value("very fast (100 per second)")
    at.button(key="rgr_play").click().run()
    at.run()
    at.button(key="rgr_play").click().run()
    at.segmented_control(key="rgr_further").set_value("growth").run()
    assert page_session(at).rich_get_richer.shown > 11 and not page_session(at).rich_get_richer.playing
    assert loose_keys(at) == set()

    at.switch_page("app_pages/lesson.py").run()
    at.button(key="lesson_seat").click().run()
    at.button(key="lesson_next").click().run()
    assert page_session(at).lesson.settings["step"] == 2
    assert loose_keys(at) == set()
    assert "lesson_keys" in on_the_page(at)  # the keys' component (its state is a widget's)

    session = page_session(at)
    assert isinstance(at.session_state[SESSION_KEY], PageSession)
    assert [type(part).__name__ for part in session.parts()] == [
        "ExplorerState", "LessonState", "RichGetRicherState", "ChooseRState", "ReproduceState"]
    run.stop("test over")


def test_widgets_and_the_address_are_drawn_from_the_lessons_part():
    """The step has one copy (LessonState.settings): a button changes it and the address follows; an address
    without a step (the sidebar's link) shows the session's step; an address the visitor brings (a link, the
    browser's Back) is read into it; a bad value is said once and left at its default."""
    at = AppTest.from_file("../app.py", default_timeout=TIMEOUT)
    at.run()
    at.query_params["step"] = "2"
    at.switch_page("app_pages/lesson.py").run()
    part = page_session(at).lesson
    assert isinstance(part, LessonState) and part.settings["step"] == 2
    at.button(key="lesson_next").click().run()
    assert part.settings["step"] == 3 and at.query_params["step"] in ("3", ["3"])
    at.query_params.clear()  # the sidebar's link
    at.run()
    assert part.settings["step"] == 3 and at.query_params["step"] in ("3", ["3"])
    at.query_params["step"] = "2"  # the browser's Back
    at.run()
    assert part.settings["step"] == 2 and at.header[0].value.startswith("2. ")
    at.toggle(key="lesson_present").set_value(True).run()
    assert part.settings["present"] is True and at.query_params["present"] in ("1", ["1"])
    at.query_params["present"] = "maybe"
    at.run()
    assert part.settings["present"] is False and "present" not in at.query_params
    assert any("presentation mode must be true or false" in w.value for w in at.warning)
    at.run()
    assert not at.warning  # said once: the address is the page's own again
    assert at.toggle(key="lesson_present").value is False


def test_a_visit_to_another_page_keeps_each_pages_settings(monkeypatch):
    """The widgets are drawn from the parts: Rich get richer's customers and its "Go further" part, Choose r's form and
    Reproduce's experiment (whose result then shows again) come back as the visitor left them (Streamlit forgets the
    state of a widget that a page run does not draw)."""
    small_quick_protocol(monkeypatch)
    at = AppTest.from_file("../app.py", default_timeout=TIMEOUT)
    at.run()
    at.switch_page("app_pages/rich_get_richer.py").run()
    at.number_input(key="rgr_n").set_value(50).run()
    at.segmented_control(key="rgr_further").set_value("exchangeability").run()
    at.switch_page("app_pages/reproduce.py").run()
    at.selectbox(key="repro_experiment").set_value("Old Faithful, N = 172")
    at.button(key="repro_run").click().run()
    at.switch_page("app_pages/choose_r.py").run()
    at.number_input(key="cv_folds").set_value(3)
    at.number_input(key="cv_iters").set_value(20)  # fewer than the burn-in (500): refused at once, settings kept
    at.button(key="cv_run").click().run()
    assert page_session(at).choose_r.settings["folds"] == 3 and at.error
    at.switch_page("app_pages/lesson.py").run()

    at.switch_page("app_pages/rich_get_richer.py").run()
    assert at.number_input(key="rgr_n").value == 50 and at.segmented_control(key="rgr_further").value == \
        "exchangeability"
    assert page_session(at).rich_get_richer.settings["n"] == 50
    at.switch_page("app_pages/choose_r.py").run()
    assert at.number_input(key="cv_folds").value == 3 and at.number_input(key="cv_iters").value == 20
    at.switch_page("app_pages/reproduce.py").run()
    assert at.selectbox(key="repro_experiment").value == "Old Faithful, N = 172"
    assert any(h.value.startswith("Old Faithful, N = 172 (quick protocol") for h in at.subheader)


def test_choose_r_follows_the_explorers_covariance_until_the_visitor_runs_with_another():
    """The covariance's radio starts at the Explorer's rows' type (read from the Explorer's part), follows it while the
    visitor keeps it, and stays the visitor's once Run was pressed with another."""
    at = AppTest.from_file("../app.py", default_timeout=TIMEOUT)
    at.query_params["covariance"] = "diag"
    at.run()
    at.switch_page("app_pages/choose_r.py").run()
    assert at.radio(key="cv_covariance").value == "diag"
    at.switch_page("app_pages/explorer.py").run()
    at.selectbox(key="w_covariance").set_value("spherical").run()
    at.switch_page("app_pages/choose_r.py").run()
    assert at.radio(key="cv_covariance").value == "spherical"
    at.radio(key="cv_covariance").set_value("full")
    at.number_input(key="cv_iters").set_value(20)  # refused before any fit: only the settings are kept
    at.button(key="cv_run").click().run()
    at.switch_page("app_pages/explorer.py").run()
    at.selectbox(key="w_covariance").set_value("diag").run()
    at.switch_page("app_pages/choose_r.py").run()
    assert at.radio(key="cv_covariance").value == "full"


def test_what_each_part_holds_is_bounded_and_another_run_replaces_it(monkeypatch):
    """Choose r keeps one result (the next replaces it) of a few KB; Reproduce one result per experiment (another
    run of it replaces it), within ReproduceState.result_bytes; the Lesson and Rich get richer hold no arrays."""
    from pcrp.experiments import reproduce
    from pcrp.experiments.reproduce import EXPERIMENTS, extra_methods, METHODS, N_CHAINS

    small_quick_protocol(monkeypatch)
    at = AppTest.from_file("../app.py", default_timeout=TIMEOUT)
    at.run()
    at.switch_page("app_pages/choose_r.py").run()
    light_choose_r(at)
    part = page_session(at).choose_r
    first = part.result
    assert 0 < part.nbytes() <= 64 * 2**10, part.nbytes()
    at.button(key="cv_run").click().run()
    assert part.result is not first and part.result.cv is not first.cv

    at.switch_page("app_pages/reproduce.py").run()
    at.selectbox(key="repro_experiment").set_value("Old Faithful, N = 172")
    at.button(key="repro_run").click().run()
    repro = page_session(at).reproduce
    stored = repro.results["old-faithful"]
    at.button(key="repro_run").click().run()
    assert list(repro.results) == ["old-faithful"] and repro.results["old-faithful"][2] is not stored[2]
    e, p = EXPERIMENTS["old-faithful"], reproduce.QUICK
    bound = ReproduceState.result_bytes(e.n, e.n_cv, 2, 1, len(METHODS + extra_methods()), N_CHAINS, p.iters,
                                        p.burn_in, p.thin)
    assert 0 < repro.nbytes() <= bound, (repro.nbytes(), bound)

    for name in ("app_pages/lesson.py", "app_pages/rich_get_richer.py"):
        at.switch_page(name).run()
    assert page_session(at).lesson.nbytes() < 2**10 and page_session(at).rich_get_richer.nbytes() < 2**10


def test_the_sessions_release_lets_go_of_every_part_and_cancels_its_fits(monkeypatch):
    """Streamlit releases a session's resources when it disconnects; that release is the object's close: Choose r's
    and Reproduce's results go, a fit in progress is cancelled (its loop stops within about a second: the browser
    test closes a tab during a cross validation), the animation pauses, and the settings stay for a session that
    comes back."""
    small_quick_protocol(monkeypatch)
    at = AppTest.from_file("../app.py", default_timeout=TIMEOUT)
    at.run()
    at.switch_page("app_pages/choose_r.py").run()
    light_choose_r(at)
    at.switch_page("app_pages/reproduce.py").run()
    at.selectbox(key="repro_experiment").set_value("Old Faithful, N = 172")
    at.button(key="repro_run").click().run()
    at.switch_page("app_pages/rich_get_richer.py").run()
    at.button(key="rgr_play").click().run()
    session = page_session(at)
    assert session.choose_r.result is not None and session.reproduce.results and session.rich_get_richer.playing
    fit = session.work.start(WorkTicket())  # a fit the page started and has not finished
    caching.clear_session_resource_cache("test session id")  # what Streamlit calls at a disconnect (AppTest's id)
    assert fit.cancelled and "closed" in fit.reason
    assert session.choose_r.result is None and session.reproduce.results == {}
    assert not session.rich_get_richer.playing and session.explorer.dataset is None
    assert session.choose_r.settings["r_start"] == pytest.approx(1.01)  # the settings stay
    at.run()  # the session comes back
    assert not at.exception, at.exception
    assert page_session(at) is session


def test_no_page_script_reaches_into_another_window():
    """The pages' scripts are components.v2 components in the page's own document (the Lesson's keys as the
    Explorer's): no script of the app reaches into window.parent, and no page draws an iframe."""
    scripts = [p for p in (ROOT / "app_pages").rglob("*") if p.suffix in (".py", ".js")]
    assert scripts
    for path in scripts:
        text = path.read_text(encoding="utf-8")
        assert "window.parent" not in text and "st.iframe" not in text and "components.v1" not in text, path

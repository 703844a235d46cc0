"""The guided lesson (pcrp.teaching.lesson and app_pages/lesson.py): each step's numbers are the library's (or a shipped
file's, which names its command), bad addresses fall back to step 1 with a message, every step renders, and in a
real browser the arrow keys move between the steps."""

import json
import re
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from pcrp.teaching import lesson
from pcrp.app import explorer_settings as es
from pcrp.model import PRIORS

ROOT = Path(__file__).resolve().parent.parent
COMPARISON = ROOT / "docs" / "compare" / "compare.json"
TIMEOUT = 120  # numba compiles on first use


def numbers(text):
    """Every number written in ``text`` (thousands separators dropped), as floats."""
    return [float(m.replace(",", "")) for m in re.findall(r"\d[\d,]*(?:\.\d+)?", text)]


# ----------------------------------------------------------------------------- the address
@pytest.mark.parametrize("value, step", [(None, 1), ("", 1), ("1", 1), ("3", 3), (" 7 ", 7), (["2", "5"], 5)])
def test_a_good_step_is_read(value, step):
    assert lesson.parse_step(value) == (step, None)


@pytest.mark.parametrize("value", ["0", "8", "-1", "abc", "1e3", "2.0", "3; drop", "9" * 40, "<b>2</b>", []])
def test_a_bad_step_falls_back_to_step_1_with_a_message(value):
    step, problem = lesson.parse_step(value)
    assert step == 1
    if value == []:
        assert problem is None
    else:
        assert problem.startswith(f"step must be a whole number from 1 to {len(lesson.STEPS)}")
        assert len(problem) < 100  # a long value is cut, not echoed whole


def test_a_bad_setting_is_refused_with_its_bounds():
    with pytest.raises(lesson.LessonError, match=r"customers must be a whole number >= 1 .*got 0"):
        lesson.restaurant(customers=0)
    with pytest.raises(lesson.LessonError, match=r"burn_in \(600\) must be smaller than sweeps \(600\)"):
        lesson.old_faithful(sweeps=600, burn_in=600)


def test_the_steps_are_six_to_eight_and_numbered_in_order():
    assert 6 <= len(lesson.STEPS) <= 8
    assert [s.number for s in lesson.STEPS] == list(range(1, len(lesson.STEPS) + 1))
    assert set(lesson.SENTENCES) == {s.key for s in lesson.STEPS}


# ----------------------------------------------------------------------------- each step's numbers
def test_the_restaurant_is_the_libraries_seating():
    from pcrp.model.seating import seat_prior, seating_probabilities_prior

    facts = lesson.restaurant(customers=30, seed=4)
    crp = lesson.reference_prior()
    assert PRIORS[crp.name].reference
    sizes = np.bincount(seat_prior(crp, 30, np.random.default_rng(4).random(30)))
    probs = seating_probabilities_prior(crp, sizes)
    np.testing.assert_array_equal(facts.sizes, sizes)
    np.testing.assert_allclose(facts.probs, probs)
    text = lesson.sentence(1, facts)
    assert f"After 30 customers the CRP has opened {sizes.size} tables" in text
    assert f"largest seats {sizes.max() / 30:.0%}" in text
    assert f"probability {probs[np.argmax(sizes)]:.0%}" in text and f"probability {probs[-1]:.1%}" in text


def test_the_growth_of_k_is_measured_by_seating_simulations():
    from pcrp.model.seating import crp_expected_k, simulate_k_growth_prior

    facts = lesson.k_growth(growth_customers=60, seatings=6, seed=2)
    r, _, entry = lesson.shipped_r()
    assert facts.r == r == entry["r"]
    crp_k = simulate_k_growth_prior(lesson.reference_prior(), 60, 6, seed=2)
    pcrp_k = simulate_k_growth_prior(lesson.tuned_prior(r), 60, 6, seed=2)
    np.testing.assert_allclose(facts.means[0], crp_k.mean(axis=0))
    np.testing.assert_allclose(facts.means[1], pcrp_k.mean(axis=0))
    np.testing.assert_allclose(facts.exact, crp_expected_k(1.0, 60))
    text = lesson.sentence(2, facts)
    assert (f"the CRP opened {crp_k.mean(axis=0)[-1]:.1f} tables on average (exact {crp_expected_k(1.0, 60)[-1]:.1f}, "
            f"about alpha log N = {np.log(60):.1f})") in text
    gain = pcrp_k.mean(axis=0)[-1] - pcrp_k.mean(axis=0)[29]
    assert f"the pCRP at r = {r:g} opened {pcrp_k.mean(axis=0)[-1]:.1f} and only {gain:.2f} more after N = 30" in text


def test_old_faithful_steps_are_the_chains_of_the_library():
    from pcrp.runs.chains import run_chain
    from pcrp.data import load
    from pcrp.model import resolve_niw

    facts = lesson.old_faithful(sweeps=120, burn_in=20, seed=3)
    ds = load("old-faithful")
    niw = resolve_niw(ds.X)
    crp = run_chain(ds.X, lesson.reference_prior(), niw, iters=120, burn_in=119, seed=3)
    pcrp = run_chain(ds.X, lesson.tuned_prior(facts.r), niw, iters=120, burn_in=119, seed=3)
    np.testing.assert_array_equal(facts.crp.K, crp.K)
    np.testing.assert_array_equal(facts.pcrp.last, pcrp.labels[-1])
    assert facts.crp.mean_k == pytest.approx(crp.K[20:].mean())
    sizes = sorted(np.bincount(crp.labels[-1])[np.bincount(crp.labels[-1]) > 0].tolist(), reverse=True)
    assert facts.crp.sizes == sizes
    three, four = lesson.sentence(3, facts), lesson.sentence(4, facts)
    assert f"held {crp.K[20:].mean():.1f} clusters on average" in three
    assert lesson.points_text(sizes) in three
    assert f"At r = {facts.r:g}" in four and f"held {pcrp.K[20:].mean():.1f} clusters on average" in four
    assert f"against the CRP's {crp.K[20:].mean():.1f}" in four
    colours = lesson.matched_colours(facts.pcrp, facts.crp)
    assert colours.shape == (ds.n,)


def test_a_real_merge_is_one_of_two_clusters_above_the_share():
    from pcrp.analyses.path import Merge, MergePath

    path = MergePath(np.r_[np.zeros(50), np.ones(45), np.full(5, 2), [3]].astype(int),
                     [Merge(0.3, (0, 3), (50, 1), -1.0, 1.0), Merge(0.9, (1, 2), (45, 5), -1.0, 1.0),
                      Merge(1.4, (4, 5), (51, 50), -1.0, 1.0)])
    assert lesson.real_merge_r(path, 0.02) == pytest.approx(path.effective_r()[1])
    assert lesson.real_merge_r(path, 0.10) == pytest.approx(path.effective_r()[2])
    assert lesson.real_merge_r(path, 0.60) == float("inf")


@pytest.mark.slow  # two CRP fits and their point estimates (about 3 s)
def test_the_threshold_is_the_exact_merge_path_of_a_crp_fit():
    from pcrp.analyses.collapse import MIN_SHARE
    from pcrp.data import load
    from pcrp.model import resolve_niw
    from pcrp.analyses.path import crp_start, merge_path

    facts = lesson.merge_threshold(seed=0)
    assert tuple(facts.paths) == lesson.PATH_SIZES
    for n in lesson.PATH_SIZES:
        ds = load("sim1", n=n)
        niw = resolve_niw(ds.X)
        start = crp_start(ds.X, niw, n_chains=lesson.PATH_CHAINS, iters=lesson.PATH_SWEEPS,
                          burn_in=lesson.PATH_BURN_IN, thin=lesson.PATH_THIN, seed=0, n_jobs=1)
        path = merge_path(ds.X, start.labels, niw)
        assert facts.r_star[n] == pytest.approx(lesson.real_merge_r(path, MIN_SHARE))
        assert f"r* = {facts.r_star[n]:.2f} at N = {n:,}" in lesson.sentence(5, facts)
    assert facts.above > max(facts.r_star.values())


def test_choosing_r_reads_the_shipped_file_which_names_its_command():
    from pcrp.analyses.cv import BUILTIN_R_COMMAND, builtin_r_table

    facts = lesson.cv_choice()
    entry = builtin_r_table()["old-faithful"]
    assert facts.command == entry["command"] == BUILTIN_R_COMMAND and lesson.CV_FILE in facts.command
    np.testing.assert_allclose(facts.loss, [c["loss"] for c in entry["curve"]])
    assert facts.proposed == entry["cv_r"] and facts.used == entry["r"]
    text = lesson.sentence(6, facts)
    assert f"{entry['cv']['folds']}-fold cross validation repeated {entry['cv']['repeats']} times" in text
    assert f"loss at {facts.loss[facts.at]:.2f} up to r = {entry['cv_r']:g}" in text
    assert f"jump to {facts.loss[facts.at + 1]:.2f} at r = {facts.r_grid[facts.at + 1]:g}" in text


def test_the_comparison_reads_the_shipped_report_which_names_its_command():
    from pcrp.experiments.compare import prior_methods, read_report

    methods = prior_methods()

    payload = json.loads(COMPARISON.read_text())
    facts = lesson.comparison(read_report(COMPARISON))
    assert payload["command"] in facts.command
    assert list(facts.against) == [row["against"] for row in payload["counts"]]
    assert list(facts.nearer) == [row["K nearer the truth"] for row in payload["counts"]]
    text = lesson.sentence(7, facts)
    assert f"Over {payload['counts'][0]['labelled data sets']} labelled data sets" in text
    for row in payload["counts"]:
        assert f"the {row['against']}'s on {row['K nearer the truth']}" in text
    rival = lesson.closest_rival(facts)
    fewest = min((row["K nearer the truth"], row["against"]) for row in payload["counts"]
                 if row["against"] in methods)[1]
    assert rival == methods[fewest].name


def test_no_sentence_carries_a_number_its_facts_do_not():
    """A typed figure would show up as a number that changes nowhere when the facts change: the restaurant's
    sentence with other customers and seed has other numbers."""
    a = lesson.sentence(1, lesson.restaurant(customers=12, seed=0))
    b = lesson.sentence(1, lesson.restaurant(customers=40, seed=9))
    assert numbers(a) != numbers(b)
    assert "12" in a and "40" in b


# ----------------------------------------------------------------------------- the Explorer's settings
@pytest.mark.parametrize("step", [s.number for s in lesson.STEPS])
def test_each_step_opens_the_explorer_in_settings_it_accepts(step):
    values = lesson.explorer_values(step, r=1.15, rival="mfm", present=True)
    link = es.demo_link("http://example.org/base/", values)
    assert link.startswith("http://example.org/base/?")
    from urllib.parse import parse_qs, urlsplit

    parsed, problems = es.from_query(parse_qs(urlsplit(link).query))
    assert problems == []
    assert parsed.get("present") is True
    key = lesson.STEPS[step - 1].key
    assert parsed.get("data", "old-faithful") == ("sim1" if key in ("growth", "threshold", "compare")
                                                   else "old-faithful")
    if key in ("pcrp", "threshold", "choose", "growth", "crp", "restaurant"):
        assert parsed.get("r2") == 1.15
    if key == "compare":
        assert parsed["prior1"] == "mfm"


def test_the_explorer_is_the_apps_root():
    assert lesson.explorer_address("http://h:8501/lesson?step=3") == "http://h:8501/"
    assert lesson.explorer_address("https://h/base/lesson") == "https://h/base/"
    assert lesson.explorer_address(None) == ""


# ----------------------------------------------------------------------------- the page
def page(step=None, present=None):
    at = AppTest.from_file("../app_pages/lesson.py", default_timeout=TIMEOUT)
    if step is not None:
        at.query_params["step"] = step
    if present is not None:
        at.query_params["present"] = present
    at.run()
    assert not at.exception, at.exception
    return at


def headers(at):
    return [h.value for h in at.header]


def test_a_bad_step_in_the_address_shows_step_1_and_says_so():
    at = page(step="<img src=x onerror=alert(1)>")
    assert headers(at) == [f"1. {lesson.STEPS[0].title}"]
    (warning,) = at.warning
    assert "step must be a whole number" in warning.value
    assert "\\<img" in warning.value and "<img" not in warning.value.replace("\\<", "")  # escaped: text, never markup
    assert not at.error


def test_the_buttons_move_between_steps_and_the_address_follows():
    at = page(step="6")
    assert headers(at) == [f"6. {lesson.STEPS[5].title}"]
    at.button(key="lesson_next").click().run()
    assert headers(at) == [f"7. {lesson.STEPS[6].title}"] and at.query_params["step"] == "7"
    assert at.button(key="lesson_next").disabled
    at.button(key="lesson_prev").click().run()
    assert headers(at) == [f"6. {lesson.STEPS[5].title}"] and at.query_params["step"] == "6"


def test_the_lesson_comes_back_to_its_step_after_a_visit_to_another_page():
    at = AppTest.from_file("../app.py", default_timeout=TIMEOUT)
    at.run()
    at.switch_page("app_pages/lesson.py").run()
    at.button(key="lesson_next").click().run()
    assert headers(at) == [f"2. {lesson.STEPS[1].title}"]
    at.switch_page("app_pages/reproduce.py").run()
    at.query_params.clear()  # the sidebar's link carries no step
    at.switch_page("app_pages/lesson.py").run()
    assert not at.exception, at.exception
    assert headers(at) == [f"2. {lesson.STEPS[1].title}"] and at.query_params["step"] == "2"


def test_the_first_step_seats_ten_more_on_request():
    at = page()
    assert at.button(key="lesson_prev").disabled
    at.button(key="lesson_seat").click().run()
    assert not at.exception
    assert at.session_state["lesson_customers"] == lesson.LESSON_PARAMS["customers"].default + 10
    text = " ".join(h.proto.body for h in at.get("html"))
    assert f"After {lesson.LESSON_PARAMS['customers'].default + 10} customers" in text


def test_present_mode_is_read_from_the_address():
    at = page(step="6", present="1")
    assert at.toggle(key="lesson_present").value is True
    at = page(step="6", present="maybe")
    assert at.toggle(key="lesson_present").value is False
    assert "presentation mode must be true or false" in at.warning[0].value


def test_the_app_lists_the_lesson_after_rich_get_richer_and_runs_it_in_its_shell():
    import importlib.util

    spec = importlib.util.spec_from_file_location("app_shell", ROOT / "app.py")
    shell = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(shell)  # defines PAGES and run(); runs nothing (not __main__)
    files = [path for path, _ in shell.PAGES]
    assert files.index("app_pages/lesson.py") == files.index("app_pages/rich_get_richer.py") + 1
    at = AppTest.from_file("../app.py", default_timeout=TIMEOUT)
    at.run()
    at.switch_page("app_pages/lesson.py").run()
    assert not at.exception, at.exception
    assert headers(at) == [f"1. {lesson.STEPS[0].title}"]


@pytest.mark.slow  # every step, chains and merge paths included (about 15 s)
def test_every_step_renders_with_its_sentence_chart_and_explorer_link():
    for step in lesson.STEPS:
        at = page(step=str(step.number))
        assert headers(at) == [f"{step.number}. {step.title}"]
        assert not at.error and not at.warning
        sentence = " ".join(h.proto.body for h in at.get("html") if "lesson-say" in h.proto.body)
        assert sentence, step
        charts = at.get("plotly_chart") + at.get("vega_lite_chart")
        assert len(charts) == 1, step
        links = at.get("link_button")
        assert len(links) == 1 and links[0].proto.label == "Open in the Explorer"
        assert links[0].proto.url.startswith("/")


# ----------------------------------------------------------------------------- a real browser
@pytest.mark.browser
@pytest.mark.slow
def test_the_arrow_keys_move_between_the_steps_in_a_browser():
    from browser_support import chromium, require_chromium, streamlit_app

    require_chromium()
    from playwright.sync_api import expect

    with streamlit_app() as (url, _), chromium() as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.goto(url + "/lesson?step=5&present=1")
        expect(page.get_by_role("heading", name=f"5. {lesson.STEPS[4].title}")).to_be_visible(timeout=120_000)
        assert not page.locator("section[data-testid='stSidebar']").is_visible()
        page.wait_for_function("() => window.pcrpLessonKeys === true", timeout=30_000)
        page.keyboard.press("ArrowRight")
        expect(page.get_by_role("heading", name=f"6. {lesson.STEPS[5].title}")).to_be_visible(timeout=60_000)
        expect(page).to_have_url(re.compile(r"step=6"))
        page.keyboard.press("ArrowLeft")
        expect(page.get_by_role("heading", name=f"5. {lesson.STEPS[4].title}")).to_be_visible(timeout=60_000)
        link = page.get_by_role("link", name="Open in the Explorer")
        expect(link).to_have_attribute("href", re.compile(r"^http://127\.0\.0\.1:\d+/\?.*data=sim1"))
        expect(link).to_have_attribute("href", re.compile(r"present=1"))
        page.close()

"""The guided lesson: seven steps a teacher runs in about five minutes, with the arrow keys or the buttons, each
with one live element, one sentence to say and a link that opens the Explorer in that step's settings.

The step is in the address (``?step=3``; ``&present=1`` for a projector). The numbers and sentences are
:mod:`pcrp.teaching.lesson`'s, the figures :mod:`pcrp.plots.lesson`'s; this page arranges them.
"""

import html
import json
from pathlib import Path

import streamlit as st

from app_pages.shared import guarded, inert, sampler_ready
from pcrp.teaching import lesson
from pcrp.app import explorer_settings as es
from pcrp.app.live_view import TINY_SHARE
from pcrp.plots import lesson as lplots

state = st.session_state
COMPARISON = Path(__file__).resolve().parent.parent / "docs" / "compare" / "compare.json"  # `pcrp compare`'s run
NO_TOOLBAR = {"displayModeBar": False}

# Large type for the sentence a teacher reads out; presentation mode also hides the sidebar and the header.
LESSON_CSS = """<style>
.lesson-say {font-size: 24px; line-height: 1.35; margin: 0 0 0.3rem 0;}
.lesson-source {font-size: 16px; color: #555;}
[data-testid='stMainBlockContainer'] h2 {padding: 0.2rem 0 0.2rem 0;}
[data-testid='stMainBlockContainer'] {padding-top: 3.8rem;}
</style>"""
PRESENT_CSS = """<style>
section[data-testid='stSidebar'], [data-testid='stSidebarCollapsedControl'], header[data-testid='stHeader'],
[data-testid='stElementToolbar'], [data-testid='stToolbar'] {display: none !important;}
[data-testid='stMainBlockContainer'] {padding: 0.6rem 1.5rem 0.5rem 1.5rem !important; max-width: 100% !important;}
[data-testid='stMainBlockContainer'] p, [data-testid='stMainBlockContainer'] a,
[data-testid='stCaptionContainer'] {font-size: 20px !important;}
[data-testid='stMainBlockContainer'] p.lesson-say {font-size: 27px !important;}
</style>"""

# Keys: the right arrow (or Page Down, as a presenter's clicker sends) = Next, the left arrow (or Page Up) =
# Previous. A listener added once to the page clicks the enabled button, so keys and buttons do the same; keys typed
# into a field are the field's. (The Explorer's own keys, Space, the right arrow and R, click its buttons, which this
# page does not have.)
KEYS = {"ArrowRight": "lesson_next", "PageDown": "lesson_next", "ArrowLeft": "lesson_prev", "PageUp": "lesson_prev"}
KEYS_CODE = """
(() => {
  const doc = document;
  const keys = %s;
  doc.addEventListener('keydown', (e) => {
    const t = e.target;
    if (e.ctrlKey || e.metaKey || e.altKey || e.shiftKey) return;
    if (t && (['INPUT', 'TEXTAREA', 'SELECT'].includes(t.tagName) || t.isContentEditable ||
              (t.getAttribute && t.getAttribute('role') === 'slider'))) return;
    const b = keys[e.key] && doc.querySelector('.st-key-' + keys[e.key] + ' button');
    if (!b || b.disabled) return;
    e.preventDefault();
    b.click();
  }, true);
  window.pcrpLessonKeys = true;
})();
""" % json.dumps(KEYS)
KEYS_SCRIPT = ("<script>const host = window.parent; if (!host.pcrpLessonKeys) { "
               "const s = host.document.createElement('script'); s.textContent = " + json.dumps(KEYS_CODE) + "; "
               "host.document.head.appendChild(s); }</script>")


# ----------------------------------------------------------------------------- the address
def address():
    """(step number, presentation mode, problems [sentence]) read from the address; a bad value is reported and
    left at its default, never used. An address without a step (the page chosen in the sidebar after a visit to
    another page) comes back to the step this session last showed."""
    if "step" not in st.query_params and "lesson_step" in state:
        st.query_params["step"] = str(state.lesson_step)
    step, problem = lesson.parse_step(st.query_params.get_all("step") or None)
    state.lesson_step = step
    problems = [problem] if problem else []
    present = False
    if "present" in st.query_params:
        try:
            present = es.BY_NAME["present"].parse(st.query_params["present"])
        except ValueError as err:
            problems.append(str(err))
    return step, present, problems


def go_to(step):
    st.query_params["step"] = str(step)


def toggle_present():
    if state.lesson_present:
        st.query_params["present"] = "1"
    elif "present" in st.query_params:
        del st.query_params["present"]


# ----------------------------------------------------------------------------- each step's numbers, cached
# Pure functions of their arguments (safe to share between visitors): a step shown twice is not computed twice.
@st.cache_data(max_entries=32, show_spinner=False)
def restaurant(customers, seed):
    return lesson.restaurant(customers, seed)


@st.cache_data(max_entries=4, show_spinner=False)
def k_growth(seed):
    return lesson.k_growth(seed=seed)


@st.cache_data(max_entries=4, show_spinner=False)
def old_faithful(seed):
    return lesson.old_faithful(seed=seed)


@st.cache_data(max_entries=4, show_spinner=False)
def merge_threshold(seed):
    return lesson.merge_threshold(seed=seed)


@st.cache_data(max_entries=2, show_spinner=False)
def comparison(path):
    from pcrp.experiments.compare import read_report

    return lesson.comparison(read_report(path))


# ----------------------------------------------------------------------------- the steps
def seat_more():
    state.lesson_customers = min(state.lesson_customers + 10, lesson.LESSON_PARAMS["customers"].high)


def empty_restaurant():
    state.lesson_customers = lesson.LESSON_PARAMS["customers"].default


def step_restaurant(seed):
    """Step 1: returns (facts, Explorer values)."""
    state.setdefault("lesson_customers", lesson.LESSON_PARAMS["customers"].default)
    facts = restaurant(state.lesson_customers, seed)
    say(lesson.sentence(1, facts))
    c = st.columns([1.6, 1.3, 5])
    c[0].button("Seat 10 more", key="lesson_seat", on_click=seat_more, icon=":material/group_add:",
                disabled=state.lesson_customers >= lesson.LESSON_PARAMS["customers"].high)
    c[1].button("Empty it", key="lesson_empty", on_click=empty_restaurant, icon=":material/restart_alt:")
    st.vega_lite_chart(lplots.restaurant(facts.sizes, facts.probs,
                                         f"{facts.label}, alpha = {facts.alpha:g}: {facts.customers} customers"),
                       key="lesson-restaurant", width="content")
    st.caption("Each circle is a table, its area its customers; under it, the chance that the next customer sits "
               "there (the dashed circle: a new table).")
    return lesson.explorer_values(1)


def step_growth(seed):
    facts = k_growth(seed)
    say(lesson.sentence(2, facts))
    st.plotly_chart(lplots.k_growth(facts.labels, range(1, facts.n + 1), facts.means, facts.ses, facts.exact,
                                    f"K_N: mean of {facts.seatings} seatings ± 2 SE; {facts.labels[0]} exact "
                                    "dashed"),
                    key="lesson-growth", width="stretch", config=NO_TOOLBAR, theme=None)
    return lesson.explorer_values(2)


def step_crp(seed):
    if not sampler_ready():  # chains: the kernels' separate compile first (once per installation)
        return None
    facts = old_faithful(seed)
    say(lesson.sentence(3, facts))
    crp = facts.crp
    st.plotly_chart(lplots.partitions(facts.X, facts.columns, [
        (f"{crp.label}: last of {facts.sweeps} sweeps", lesson.matched_colours(crp, crp))]),
        key="lesson-crp", width="stretch", config=NO_TOOLBAR, theme=None)
    source(f"Run now: one {crp.label} chain, {facts.sweeps} sweeps, seed {facts.seed}, on the standardised data; "
           f"grey points: clusters under {TINY_SHARE:.0%} of the points.")
    return lesson.explorer_values(3, lesson.settings(seed=seed))


def step_pcrp(seed):
    if not sampler_ready():  # chains: the kernels' separate compile first (once per installation)
        return None
    facts = old_faithful(seed)
    say(lesson.sentence(4, facts))
    crp, pcrp = facts.crp, facts.pcrp
    st.plotly_chart(lplots.partitions(facts.X, facts.columns, [
        (f"{crp.label}: {lesson.points_text(crp.sizes)}", lesson.matched_colours(crp, crp)),
        (f"{pcrp.label}, r = {facts.r:g}: {lesson.points_text(pcrp.sizes)}", lesson.matched_colours(pcrp, crp))]),
        key="lesson-pcrp", width="stretch", config=NO_TOOLBAR, theme=None)
    _, _, entry = lesson.shipped_r()
    source(f"Same seed, start and {facts.sweeps} sweeps; one colour, one cluster in both panels. r = {facts.r:g} "
           f"from pcrp/datasets/cv_r.json, made by `{entry['command']}` ({entry['date']}).")
    return lesson.explorer_values(4, lesson.settings(seed=seed), r=facts.r)


def step_threshold(seed):
    if not sampler_ready():  # chains: the kernels' separate compile first (once per installation)
        return None
    facts = merge_threshold(seed)
    say(lesson.sentence(5, facts))
    st.plotly_chart(lplots.kept_over_r(facts.r_axis, facts.kept(), facts.r_star,
                                       "Sim 1: clusters the pCRP prefers on the exact merge path"),
                    key="lesson-threshold", width="stretch", config=NO_TOOLBAR, theme=None)
    source(f"Run now: a CRP fit ({lesson.PATH_CHAINS} chains, {lesson.PATH_SWEEPS} sweeps) of Sim 1 at each N, then "
           "pcrp.analyses.path.merge_path; r* compares single partitions, not posterior mass.")
    return lesson.explorer_values(5, r=facts.above)


def step_choose(seed):
    facts = lesson.cv_choice()
    say(lesson.sentence(6, facts))
    st.plotly_chart(lplots.cv_loss(facts.r_grid, facts.loss, facts.loss_se, facts.proposed,
                                   f"Old Faithful: held-out loss, mean ± 1 SE over {facts.folds} folds × "
                                   f"{facts.repeats} repeats"),
                    key="lesson-choose", width="stretch", config=NO_TOOLBAR, theme=None)
    source(f"From {lesson.CV_FILE}, made by `{facts.command}` ({facts.date}); the Choose r page runs it on your "
           "data.")
    return lesson.explorer_values(6, r=facts.used)


def step_compare(seed):
    if not COMPARISON.is_file():
        st.info("The shipped comparison (docs/compare/compare.json) is not in this installation: run "
                "`pcrp compare --out docs/compare` to make it.")
        return lesson.explorer_values(7)
    facts = comparison(str(COMPARISON))
    say(lesson.sentence(7, facts))
    st.plotly_chart(lplots.compare_counts(facts.against, facts.nearer, facts.as_near, facts.farther,
                                          f"the pCRP's mean K against each method's, {facts.data_sets} labelled "
                                          "data sets"),
                    key="lesson-compare", width="stretch", config=NO_TOOLBAR, theme=None)
    source(f"From docs/compare/compare.json, made by {facts.command}; the table: the Reproduce page.")
    return lesson.explorer_values(7, rival=lesson.closest_rival(facts))


STEP_PAGES = {"restaurant": step_restaurant, "growth": step_growth, "crp": step_crp, "pcrp": step_pcrp,
              "threshold": step_threshold, "choose": step_choose, "compare": step_compare}


# ----------------------------------------------------------------------------- the frame
def say(text):
    """The sentence to say, in large type (escaped: it is text, never markup)."""
    st.html(f"<p class='lesson-say'>{html.escape(text)}</p>")


def source(text):
    """Where a step's numbers come from (the command of a shipped file, or what ran now)."""
    st.caption(text)


def navigation(step, present):
    """Previous / Next, where we are and the Present switch; returns the place of the Explorer link (filled once the
    step knows its settings)."""
    c = st.columns([1.3, 1.1, 1.5, 2.4, 1.5], vertical_alignment="center")
    c[0].button("Previous", key="lesson_prev", on_click=go_to, args=(step - 1,), disabled=step <= 1,
                icon=":material/arrow_back:")
    c[1].button("Next", key="lesson_next", on_click=go_to, args=(step + 1,), disabled=step >= len(lesson.STEPS),
                icon=":material/arrow_forward:", type="primary")
    c[2].markdown(f"**Step {step} of {len(lesson.STEPS)}**", help="The → and ← keys (or Page Down and Page Up, as a "
                  "presenter's clicker sends) move between the steps.")
    state.lesson_present = present
    c[4].toggle("Present", key="lesson_present", on_change=toggle_present,
                help="Hide the sidebar and the header, for a projector (or add &present=1 to the address).")
    return c[3].empty()


def explorer_link(place, values, present):
    """The Explorer in this step's settings, in a new tab (an address carries settings only, never a run)."""
    values["present"] = present
    url = es.demo_link(lesson.explorer_address(st.context.url) or "/", values)
    place.link_button("Open in the Explorer", url, icon=":material/open_in_new:")


def page():
    """The lesson: the address, the frame, then the step."""
    step, present, problems = address()
    st.html(LESSON_CSS)
    if present:
        st.html(PRESENT_CSS)
    link = navigation(step, present)
    for problem in problems:
        st.warning(f"Ignored a setting in the address bar: {inert(problem)}.")
    info = lesson.STEPS[step - 1]
    st.header(f"{step}. {info.title}", anchor=False)
    seed = lesson.LESSON_PARAMS["seed"].default
    with guarded(f"step {step} of the lesson"):
        with st.spinner("Computing this step's numbers…"):
            values = STEP_PAGES[info.key](seed)
        if values is not None:  # None: the step could not compute (the reason is on the page)
            explorer_link(link, values, present)
    st.iframe(KEYS_SCRIPT, height=1)  # same-origin: may reach the page (see KEYS_CODE)


page()

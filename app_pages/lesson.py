"""The guided lesson: seven steps a teacher runs in about five minutes, with the arrow keys or the buttons, each
with one live element, one sentence to say and a link that opens the Explorer in that step's settings.

The page's settings (the step, the first step's customers, Present) are its part of the session's one object
(pcrp.app.page_session.LessonState); the address is written from them (``?step=3``; ``&present=1`` for a projector),
and an address the visitor brings (a link, a reload, the browser's Back) is read into them. The numbers and
sentences are :mod:`pcrp.teaching.lesson`'s, the figures :mod:`pcrp.plots.lesson`'s; this page arranges them.
"""

import html
from pathlib import Path

import streamlit as st

from app_pages.lesson_parts.keys import lesson_keys
from app_pages.shared import (follow_address, guarded, inert, page_part, present_style, present_switch, present_text,
                              read_present, sampler_ready, write_address)
from pcrp.app.page_session import LessonState
from pcrp.basics.shares import percent_text
from pcrp.teaching import lesson, lesson_links, lesson_results, lesson_words
from pcrp.app import explorer_settings as es
from pcrp.plots import lesson as lplots

COMPARISON = Path(__file__).resolve().parent.parent / "docs" / "compare" / "compare.json"  # `pcrp compare`'s run
NO_TOOLBAR = {"displayModeBar": False}

# Large type for the sentence a teacher reads out, smaller for the terms beside the figure; presentation mode
# (app_pages/shared.py's, with these rules for the sentence and the terms) also hides the sidebar and the header. The
# step (its title and content) is in a container keyed STEP_KEY, whose class (.st-key-<key>, Streamlit's public way
# to address an element) the rules name; the main block's top padding has no public way (Streamlit 1.67).
STEP_KEY = "lesson_step"
LESSON_CSS = """<style>
.lesson-say {font-size: 24px; line-height: 1.35; margin: 0 0 0.3rem 0;}
.lesson-terms {border-left: 3px solid #ddd; padding-left: 0.6rem;}
.lesson-term {font-size: 15px; line-height: 1.3; margin: 0 0 0.45rem 0; color: #333;}
.lesson-source {font-size: 16px; color: #555;}
.st-key-lesson_step h2 {padding: 0.2rem 0 0.2rem 0;}
[data-testid='stMainBlockContainer'] {padding-top: 3.8rem;}
</style>"""
PRESENT_EXTRA = """
.st-key-lesson_step p.lesson-say {font-size: 25px !important; line-height: 1.3 !important;}
.st-key-lesson_step p.lesson-term {font-size: 17px !important;}
"""

# ----------------------------------------------------------------------------- the address
def part():
    """This session's part of the Lesson (pcrp.app.page_session.LessonState), made on its first visit: step 1, the
    lesson's declared customers, Present off."""
    return page_part("lesson", lambda: LessonState({"step": 1, "customers": lesson.LESSON_PARAMS["customers"].default,
                                                    "present": False}))


def read_step(values):
    """(step, problem) from the address's ``step`` values (pcrp.teaching.lesson.parse_step); absent: None, the step
    this session last showed (the page chosen in the sidebar after a visit to another page comes back to it)."""
    return (None, None) if values is None else lesson.parse_step(values)


def address():
    """(step number, presentation mode, problems [sentence]): the part's settings, after what the address brings (a
    bad value is reported once and left at its default, never used); then the address is written from them."""
    settings = part().settings
    problems = follow_address(part(), {"step": read_step, "present": read_present})
    write_address(part(), {"step": str(settings["step"]), "present": present_text(settings["present"])})
    return settings["step"], settings["present"], problems


def go_to(step):
    part().settings["step"] = step


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

    return lesson_results.comparison(read_report(path))


def compare_facts(seed):
    return comparison(str(COMPARISON)) if COMPARISON.is_file() else None


def restaurant_facts(seed):
    return restaurant(part().settings["customers"], seed)


# ----------------------------------------------------------------------------- the steps
def seat_more():
    settings = part().settings
    settings["customers"] = min(settings["customers"] + 10, lesson.LESSON_PARAMS["customers"].high)


def empty_restaurant():
    part().settings["customers"] = lesson.LESSON_PARAMS["customers"].default


FIGURE_PX = 390  # a figure under a sentence of four lines at 1280 x 800 (Present on), its source line included


def legend(post, true_k, r=None):
    """A prior's legend entry beside its posterior of K: mean K ± 2 MCSE and the share of draws above K_true."""
    name = post.label if r is None else f"{post.label}, r = {r:g}"
    return (f"{name}: mean K {post.mean_k:.2f} ± {2 * post.mcse:.2f} (◆), K = {true_k} in {percent_text(post.p_true)}, "
            f"K > {true_k} in {percent_text(post.p_above)}")


def sizes_title(sizes):
    """A panel's short list of cluster sizes: '168, 95, 9 points'."""
    return ", ".join(f"{n:,}" for n in sizes) + " points"


def panes():
    """(the figure's place, the terms' place): side by side on a projector (Present), where the page is wide; else
    the terms under the figure, which then has the width the sidebar leaves."""
    if part().settings["present"]:
        return st.columns([3.2, 1])
    return st.container(), st.container()


def figure(fig, key):
    st.plotly_chart(fig, key=key, width="stretch", config=NO_TOOLBAR, theme=None)


def show_restaurant(step, facts, seed):
    """Step 1: returns the Explorer's values."""
    say(lesson_words.sentence(step, facts))
    left, right = panes()
    with left:
        c = st.columns([1.6, 1.3, 4])
        c[0].button("Seat 10 more", key="lesson_seat", on_click=seat_more, icon=":material/group_add:",
                    disabled=part().settings["customers"] >= lesson.LESSON_PARAMS["customers"].high)
        c[1].button("Empty it", key="lesson_empty", on_click=empty_restaurant, icon=":material/restart_alt:")
        st.vega_lite_chart(lplots.restaurant(facts.sizes, facts.probs,
                                             f"{facts.label}, alpha = {facts.alpha:g}: {facts.customers} customers"),
                           key="lesson-restaurant", width="content")
    terms(right, step, facts)
    source("Each circle is a table, its area its customers; under it, the chance that the next customer sits there "
           "(the dashed circle: a new table).")
    return lesson_links.explorer_values(step, r=lesson.shipped_r()[0])


def show_growth(step, facts, seed):
    say(lesson_words.sentence(step, facts))
    left, right = panes()
    with left:
        figure(lplots.k_growth(facts.labels, range(1, facts.n + 1), facts.means, facts.ses, facts.exact,
                               f"K_N: mean of {facts.seatings} seatings ± 2 SE; {facts.labels[0]} exact dashed"),
               "lesson-growth")
    terms(right, step, facts)
    source(f"Run now: {facts.seatings} seatings of {facts.n:,} customers per prior (pcrp.model.seating); r = "
           f"{facts.r:g} from {lesson.CV_FILE}.")
    return lesson_links.explorer_values(step, r=facts.r)


def partition_panels(facts, key):
    """The step's partitions beside its posterior of K: [(title, colours)] (:meth:`OldFaithful.panels`)."""
    return [(f"{which}: {sizes_title(sizes)}", colours) for which, sizes, colours in facts.panels(key)]


def show_crp(step, facts, seed):
    say(lesson_words.sentence(step, facts))
    crp = facts.crp
    left, right = panes()
    with left:
        figure(lplots.posterior_and_partitions(
            facts.X, facts.columns, [(legend(crp, facts.true_k), *crp.k_posterior(), crp.mean_k, 2 * crp.mcse)],
            partition_panels(facts, "crp"), facts.true_k, height=FIGURE_PX), "lesson-crp")
    terms(right, step, facts)
    source(f"Run now: {crp.chains} {crp.label} chains of {facts.sweeps} sweeps (seed {facts.seed}) on the "
           "standardised data; the draw is the first chain's last kept one.")
    return lesson_links.explorer_values(step, lesson.settings(seed=seed), r=facts.r)


def show_pcrp(step, facts, seed):
    say(lesson_words.sentence(step, facts))
    crp, pcrp = facts.crp, facts.pcrp
    left, right = panes()
    with left:
        figure(lplots.posterior_and_partitions(
            facts.X, facts.columns, [(legend(crp, facts.true_k), *crp.k_posterior(), crp.mean_k, 2 * crp.mcse),
                                     (legend(pcrp, facts.true_k, facts.r), *pcrp.k_posterior(), pcrp.mean_k,
                                      2 * pcrp.mcse)],
            partition_panels(facts, "pcrp"), facts.true_k, height=FIGURE_PX), "lesson-pcrp")
    terms(right, step, facts)
    _, _, entry = lesson.shipped_r()
    source(f"Same seed, starts and {facts.sweeps} sweeps; one colour, one cluster in both draws. r = {facts.r:g} "
           f"from {lesson.CV_FILE}, made by `{entry['command']}` ({entry['date']}).")
    return lesson_links.explorer_values(step, lesson.settings(seed=seed), r=facts.r)


def show_threshold(step, facts, seed):
    say(lesson_words.sentence(step, facts))
    sizes = facts.sizes
    left, right = panes()
    with left:
        post = facts.posterior
        figure(lplots.merge_and_posterior(
            post[sizes[0]].r_grid, {n: post[n].mean_k for n in sizes}, facts.r_axis, facts.kept(), facts.r_star,
            {n: facts.just_above(n) for n in sizes}, {n: facts.merge_r(n) for n in sizes}, facts.line, facts.true_k,
            facts.shipped, "Sim 1: one partition against the posterior", height=FIGURE_PX + 20),
            "lesson-threshold")
    terms(right, step, facts)
    source(f"Run now at each N: a CRP fit ({lesson.PATH_CHAINS} chains, {lesson.PATH_SWEEPS} sweeps) and its merge "
           f"path (pcrp.analyses.path), and one pCRP chain of {lesson.K_SWEEPS} sweeps per r "
           f"(pcrp.analyses.k_over_r); Sim 1's r from {lesson.CV_FILE}.")
    return lesson_links.explorer_values(step, r=facts.merge_r(max(sizes)))


def show_choose(step, facts, seed):
    say(lesson_words.sentence(step, facts))
    left, right = panes()
    with left:
        figure(lplots.cv_curves(facts.r_grid, facts.loss, facts.loss_se, facts.log_pred, facts.log_pred_se,
                                facts.proposed, float(facts.r_grid[0]),
                                None if facts.next_at is None else float(facts.r_grid[facts.next_at])),
               "lesson-choose")
    terms(right, step, facts)
    source(f"Mean ± 1 SE over {facts.folds} folds × {facts.repeats} repeats, from {lesson.CV_FILE}, made by "
           f"`{facts.command}` ({facts.date}); the Choose r page runs it on your data.")
    return lesson_links.explorer_values(step, r=facts.used)


def show_compare(step, facts, seed):
    if facts is None:
        st.info("The shipped comparison (docs/compare/compare.json) is not in this installation: run "
                "`pcrp compare --out docs/compare` to make it.")
        return lesson_links.explorer_values(step, r=lesson.shipped_r(lesson.SIM1)[0])
    say(lesson_words.sentence(step, facts))
    left, right = panes()
    with left:
        figure(lplots.compare_counts(facts.against, (facts.nearer, facts.as_near, facts.farther),
                                     (facts.nmi_higher, facts.nmi_within, facts.nmi_lower), facts.nmi_margin,
                                     facts.data_sets), "lesson-compare")
    terms(right, step, facts)
    source(f"From docs/compare/compare.json, made by `{facts.made_by}`; the table and how long it took: the "
           "Reproduce page.")
    return lesson_links.explorer_values(step, rival=lesson_results.closest_rival(facts),
                                        r=lesson.shipped_r(lesson.SIM1)[0])


def waiting_old_faithful():
    s = lesson.settings()
    return (f"Running {s['chains']} CRP and {s['chains']} pCRP chains of {s['sweeps']} sweeps on Old Faithful, then "
            "each prior's point estimate")


def waiting_threshold():
    from pcrp.model import PRIORS

    grid = PRIORS[lesson.tuned_name()].tune_grid
    sizes = " and ".join(f"{n:,}" for n in lesson.PATH_SIZES)
    return (f"Fitting the CRP to Sim 1 at N = {sizes} for the merge path, then one pCRP chain for each of "
            f"{len(grid)} values of r at each N")


def waiting_growth():
    s = lesson.settings()
    return f"Seating {s['seatings']} × {s['growth_customers']} customers under the CRP and under the pCRP"


class StepPage:
    """A step of the page: ``facts(seed)`` (cached), ``show(step, facts, seed)`` (returns the Explorer's values),
    ``waiting()``: what the class is told while the facts are computed (None: nothing to wait for), ``sampler``:
    whether the facts run chains (the kernels' separate compile first)."""

    def __init__(self, facts, show, waiting=None, sampler=False):
        self.facts, self.show, self.waiting, self.sampler = facts, show, waiting, sampler


STEP_PAGES = {"restaurant": StepPage(restaurant_facts, show_restaurant),
              "growth": StepPage(k_growth, show_growth, waiting_growth),
              "crp": StepPage(old_faithful, show_crp, waiting_old_faithful, sampler=True),
              "pcrp": StepPage(old_faithful, show_pcrp, waiting_old_faithful, sampler=True),
              "threshold": StepPage(merge_threshold, show_threshold, waiting_threshold, sampler=True),
              "choose": StepPage(lambda seed: lesson_results.cv_choice(), show_choose),
              "compare": StepPage(compare_facts, show_compare)}


# ----------------------------------------------------------------------------- the frame
def say(text):
    """The sentence to say, in large type (escaped: it is text, never markup)."""
    st.html(f"<p class='lesson-say'>{html.escape(text)}</p>")


def terms(place, step, facts):
    """The terms this step uses first, defined, in ``place`` (escaped text)."""
    items = "".join(f"<p class='lesson-term'><b>{html.escape(term)}</b>: {html.escape(text)}</p>"
                    for term, text in lesson_words.terms(step, facts))
    if items:
        place.html(f"<div class='lesson-terms'>{items}</div>")


def source(text):
    """Where a step's numbers come from (the command of a shipped file, or what ran now)."""
    st.caption(text)


def navigation(step, present):
    """Previous / Next, where we are and the Present switch; returns the place of the Explorer link (filled once the
    step knows its settings)."""
    c = st.columns([1.3, 1.1, 1.5, 2.6, 1.3], vertical_alignment="center")
    c[0].button("Previous", key="lesson_prev", on_click=go_to, args=(step - 1,), disabled=step <= 1,
                icon=":material/arrow_back:")
    c[1].button("Next", key="lesson_next", on_click=go_to, args=(step + 1,), disabled=step >= len(lesson.STEPS),
                icon=":material/arrow_forward:", type="primary")
    c[2].markdown(f"**Step {step} of {len(lesson.STEPS)}**", help="The → and ← keys (or Page Down and Page Up, as a "
                  "presenter's clicker sends) move between the steps, also right after a click on a switch or button.")
    present_switch(c[4], part(), "lesson_present")
    return c[3].empty()


def explorer_link(place, step, values, present):
    """The Explorer in this step's settings, in a new tab (an address carries settings only, never a run); the label
    names the r the step talks about, from the step that defines r on (:func:`pcrp.teaching.lesson_links.names_r`)."""
    values["present"] = present
    url = es.demo_link(lesson_links.explorer_address(st.context.url) or "/", values)
    r = values.get(lesson_links.explorer_r_key())
    named = lesson_links.names_r(step) and r is not None and r == r
    label = "Open in the Explorer" + (f" at r = {r:g}" if named else "")
    place.link_button(label, url, icon=":material/open_in_new:")


def step_body(step, info, seed, body):
    """The step under its title, in ``body`` (an st.empty, emptied before the title changed) that the step's own
    content replaces as a whole: while its numbers are computed the place says what is computed (never the previous
    step's content, greyed); returns the Explorer's values, or None when the step could not compute (the reason is
    on the page)."""
    page_of = STEP_PAGES[info.key]
    if page_of.sampler:
        with body.container():
            if not sampler_ready("full"):  # chains (full covariances): their sweep's separate compile first
                return None
    if page_of.waiting is not None:
        body.info(f"Step {step}: {page_of.waiting()}…", icon=":material/hourglass_top:")
    try:
        facts = page_of.facts(seed)
    except BaseException:
        body.empty()  # the guard's message, not a wait that never ends
        raise
    with body.container():
        return page_of.show(step, facts, seed)


def page():
    """The lesson: the address, the frame, then the step."""
    step, present, problems = address()
    st.html(LESSON_CSS)
    present_style(present, PRESENT_EXTRA)
    link = navigation(step, present)
    for problem in problems:
        st.warning(f"Ignored a setting in the address bar: {inert(problem)}.")
    info = lesson.STEPS[step - 1]
    # The title and the step's place are both emptied before the new title is written: the browser draws each
    # change as it arrives, and a new title written first stood for a moment over the previous step's content.
    with st.container(key=STEP_KEY):
        title, body = st.empty(), st.empty()
    title.header(f"{step}. {info.title}", anchor=False)
    seed = lesson.LESSON_PARAMS["seed"].default
    with guarded(f"step {step} of the lesson"):
        values = step_body(step, info, seed, body)
        if values is not None:
            explorer_link(link, step, values, present)
    lesson_keys()


page()

"""The guided lesson (pcrp.teaching.lesson and app_pages/lesson.py): each step's numbers are the library's (or a shipped
file's, which names its command), each step's sentence says the word its numbers call for (one number changed, the
word changes), bad addresses fall back to step 1 with a message, every step renders with the r it talks about in its
Explorer link, and in a real browser the arrow keys move between the steps (the whole lesson, Present toggled in the
middle: tests/test_browser_lesson.py)."""

import json
import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from explorer_support import page_session
from pcrp.teaching import lesson, lesson_links, lesson_results, lesson_words
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
    with pytest.raises(lesson.LessonError, match=r"burn_in \(598\) must leave at least 5 sweeps of the 600"):
        lesson.old_faithful(sweeps=600, burn_in=598)
    with pytest.raises(lesson.LessonError, match=r"chains must be a whole number >= 2 .*got 1"):
        lesson.old_faithful(chains=1)
    with pytest.raises(lesson.LessonError, match=r"chains must be at most 8"):
        lesson.old_faithful(chains=9)


def test_the_steps_are_six_to_eight_and_numbered_in_order():
    assert 6 <= len(lesson.STEPS) <= 8
    assert [s.number for s in lesson.STEPS] == list(range(1, len(lesson.STEPS) + 1))
    assert set(lesson_words.SENTENCES) == {s.key for s in lesson.STEPS}


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
    text = lesson_words.sentence(1, facts)
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
    text = lesson_words.sentence(2, facts)
    assert (f"the CRP opened {crp_k.mean(axis=0)[-1]:.1f} tables on average (exact {crp_expected_k(1.0, 60)[-1]:.1f}, "
            f"about alpha log N = {np.log(60):.1f})") in text
    late = [int(np.sum(k[:, -1] > k[:, 29])) for k in (crp_k, pcrp_k)]
    assert facts.late == tuple(late)
    crp_gain = crp_k.mean(axis=0)[-1] - crp_k.mean(axis=0)[29]
    assert f"{lesson_words.amount(crp_gain)} more after N = 30 (in {late[0]} of its 6 seatings)" in text
    assert f"the pCRP at r = {r:g} opened {pcrp_k.mean(axis=0)[-1]:.1f} and " in text
    if late[1] == 0:
        assert "no more after N = 30 in any of its 6 seatings." in text


def fake_growth(crp_late_k, pcrp_late_k, seatings=40):
    """A Growth of n = 4 customers whose mean K at N = 2 is 1 and at N = 4 is given, with ``late`` seatings each."""
    means = tuple(np.array([1.0, 1.0, 1.0, k]) for k in (crp_late_k[0], pcrp_late_k[0]))
    return lesson.Growth(4, seatings, 1.7, ("CRP", "pCRP"), means, tuple(np.zeros(4) for _ in means), np.ones(4),
                         1.0, (crp_late_k[1], pcrp_late_k[1]))


def test_step_2_never_says_zero_more_for_a_gain_and_says_none_only_for_none():
    """The pCRP's tables after N / 2: a mean gain under 0.005 is written with two significant digits (not "0.00"),
    with how many seatings opened one; none opened is said as none."""
    text = lesson_words.sentence(2, fake_growth((1.7, 22), (1.0, 0)))
    assert "was still opening them, 0.7 more after N = 2 (in 22 of its 40 seatings)" in text
    assert "the pCRP at r = 1.7 opened 1.0 and no more after N = 2 in any of its 40 seatings." in text
    text = lesson_words.sentence(2, fake_growth((1.7, 22), (1.004, 1)))
    assert not re.search(r"\b0\.0+ more", text) and "and only 0.004 more after N = 2 (in 1 of its 40 seatings)." in text
    text = lesson_words.sentence(2, fake_growth((1.0, 0), (1.0, 0)))
    assert "had stopped opening them, no more after N = 2 in any of its 40 seatings" in text and "only" not in text
    assert [lesson_words.amount(v) for v in (0.725, 0.1, 0.025, 0.0041)] == ["0.7", "0.1", "0.025", "0.0041"]


def test_old_faithful_steps_are_the_chains_of_the_library():
    from pcrp.data import load
    from pcrp.model import resolve_niw
    from pcrp.runs.chains import run_chains
    from pcrp.runs.run_spec import make_run_spec
    from pcrp.summaries.partition import point_estimate
    from pcrp.summaries.summary import mean_and_mcse

    facts = lesson.old_faithful(sweeps=120, burn_in=20, chains=2, seed=3)
    ds = load("old-faithful")
    niw = resolve_niw(ds.X)
    assert facts.r == lesson.shipped_r()[0] and facts.true_k == lesson.OLD_FAITHFUL_TRUE_K == 2
    for prior, post in ((lesson.reference_prior(), facts.crp), (lesson.tuned_prior(facts.r), facts.pcrp)):
        spec = make_run_spec(ds.X, prior=prior, niw=niw, n_chains=2, iters=120, burn_in=20, thin=lesson.OF_THIN,
                             seed=3, n_jobs=1)
        chains = run_chains(ds.X, spec)
        np.testing.assert_array_equal(post.K, chains.K)
        np.testing.assert_array_equal(post.draw, chains.labels[0, -1])
        assert lesson.same_partition(post.point, point_estimate(chains.labels, seed=3, n_jobs=1).labels)
        kept = chains.K[:, 20:]
        assert post.mean_k == pytest.approx(kept.mean())
        assert post.mcse == pytest.approx(mean_and_mcse(kept)[1])
        assert post.p_true == pytest.approx(np.mean(kept == 2)) and post.p_above == pytest.approx(np.mean(kept > 2))
        values, shares = post.k_posterior()
        assert shares.sum() == pytest.approx(1.0) and set(values) == set(np.unique(kept))
    three, four = lesson_words.sentence(3, facts), lesson_words.sentence(4, facts)
    crp, pcrp = facts.crp, facts.pcrp
    assert (f"{crp.chains} CRP chains put {crp.p_true:.0%} of their draws on K = 2 and hold {crp.mean_k:.2f} "
            f"clusters on average (± {2 * crp.mcse:.2f})") in three
    assert f"point estimate under VI loss has {crp.point_k} cluster" in three
    assert lesson_words.points_text(crp.point_sizes) in three
    assert f"At r = {facts.r:g}" in four and f"put {pcrp.p_true:.0%} of their draws on K = 2" in four
    assert f"hold {pcrp.mean_k:.2f} clusters on average against {crp.mean_k:.2f}" in four
    colours = lesson.matched_colours(pcrp.draw, crp.point)
    assert colours.shape == (ds.n,)


# ----------------------------------------------------------------------------- each sentence follows its numbers
def fake_posterior(K, point, label="CRP", true_k=2, draw=None):
    """A Posterior of one chain with the K trace ``K`` and point estimate ``point`` (labels)."""
    point = np.asarray(point)
    return lesson.Posterior(label, np.asarray([K]), 0, point if draw is None else np.asarray(draw), point, true_k)


def fake_old_faithful(crp, pcrp):
    return lesson.OldFaithful(np.zeros((crp.point.size, 2)), ("eruptions", "waiting"), 600, 0, 1.7, crp, pcrp)


TWO = np.r_[np.zeros(175), np.ones(97)].astype(int)  # a point estimate of two clusters, 175 and 97 points
THREE = np.r_[np.zeros(170), np.ones(97), np.full(5, 2)].astype(int)


def test_step_3_says_over_clusters_only_when_most_draws_hold_extra_clusters():
    over = fake_old_faithful(fake_posterior([3, 4, 3, 2], TWO), fake_posterior([2, 2, 2, 2], TWO, "pCRP"))
    text = lesson_words.sentence(3, over)
    assert "the posterior over-clusters, with extra clusters in 75% of the draws" in text
    assert ("has 2 clusters (175 and 97 points), the true number: a loss-based summary drops the extra clusters "
            "that 75% of the draws hold") in text and "most of the extra" not in text
    fewer = replace(over, crp=replace(over.crp, K=np.asarray([[3, 2, 2, 2]])))  # extra clusters in 25%
    text = lesson_words.sentence(3, fewer)
    assert "over-clusters" not in text and "does not over-cluster, with extra clusters in only 25%" in text
    assert "as its draws do" in text and "loss-based" not in text
    merged = replace(over, crp=replace(over.crp, K=np.asarray([[1, 1, 1, 2]])))
    assert "merges the real clusters in 75% of the draws" in lesson_words.sentence(3, merged)
    kept = replace(over, crp=replace(over.crp, point=THREE))  # the point estimate keeps an extra cluster
    text = lesson_words.sentence(3, kept)
    assert "has 3 clusters (170, 97 and 5 points): more than the 2 true ones" in text and "loss-based" not in text


def test_step_4_says_what_the_power_did_as_the_numbers_say():
    crp = fake_posterior([3, 4, 3, 3], TWO)
    facts = fake_old_faithful(crp, fake_posterior([2, 2, 2, 3], TWO, "pCRP"))
    text = lesson_words.sentence(4, facts)
    assert "the power empties the extra tables in the draws themselves (extra clusters in 25% of them against 100%)" \
        in text
    assert "both point estimates under VI loss are the same partition (175 and 97 points)" in text
    some = replace(facts, pcrp=replace(facts.pcrp, K=np.asarray([[3, 3, 3, 2]])))
    assert "empties some extra tables, but 75% of the draws still hold extra clusters" in lesson_words.sentence(4, some)
    none = replace(facts, pcrp=replace(facts.pcrp, K=np.asarray([[3, 3, 4, 3]])))
    assert "does not empty the extra tables here" in lesson_words.sentence(4, none)
    few = replace(facts, crp=replace(crp, K=np.asarray([[2, 2, 2, 3]])))  # the CRP holds as few extra as the pCRP
    assert "does not empty the extra tables here (extra clusters in 25% of the draws against 25%)" \
        in lesson_words.sentence(4, few)
    merged = replace(facts, pcrp=replace(facts.pcrp, K=np.asarray([[1, 1, 1, 2]])))
    assert "the power merges the real clusters in most draws" in lesson_words.sentence(4, merged)
    other = replace(facts, pcrp=replace(facts.pcrp, point=THREE))
    text = lesson_words.sentence(4, other)
    assert "same partition" not in text and "the point estimates under VI loss differ" in text
    # the same partition under other cluster numbers is the same partition
    assert lesson.same_partition(TWO, 1 - TWO) and not lesson.same_partition(TWO, THREE)


def fake_threshold(mean_300, mean_2000, r_star=(1.09, 1.12), shipped=1.1, shipped_k=3.75):
    from pcrp.analyses.k_over_r import KOverR

    grid = np.array([1.01, 1.05, 1.1, 1.15, 1.2, 1.25, 1.3])
    posterior = {n: KOverR(grid, np.arange(1, 6), np.zeros((grid.size, 5)), np.asarray(m, dtype=float))
                 for n, m in ((300, mean_300), (2000, mean_2000))}
    return lesson.Threshold({300: None, 2000: None}, dict(zip((300, 2000), r_star)), 0.02, posterior, 3, 0.5,
                            shipped, 300, lesson.simulation_facts("sim1"), np.zeros(0), shipped_k, 4, 2000)


MEAN_300 = [4.8, 4.2, 3.8, 2.8, 2.3, 2.2, 2.1]  # below 2.5 from r = 1.2
MEAN_2000 = [5.2, 3.9, 3.5, 3.3, 3.2, 2.1, 2.0]  # below 2.5 from r = 1.25


def test_step_5_sets_r_star_of_single_partitions_beside_the_posterior():
    facts = fake_threshold(MEAN_300, MEAN_2000)
    assert [facts.just_above(n) for n in (300, 2000)] == [1.1, 1.15]
    assert [facts.merge_r(n) for n in (300, 2000)] == [1.2, 1.25] and facts.merged_from() == 1.25
    text = lesson_words.sentence(5, facts)
    assert "prefers two real clusters merged above r* = 1.09 and 1.12, but the posterior does not follow it" in text
    assert "just above r*, at r = 1.1 and 1.15, its mean K is 3.8 and 3.3" in text
    assert "and falls below 2.5 (3 true less 0.5) only at r = 1.2 and 1.25" in text
    assert "Sim 1's cross-validated r, 1.1, lies below that at every N" in text
    assert ("but leaves extra clusters at N = 300, where it was chosen: its shipped check's chains hold 3.75 on "
            "average.") in text
    # what the shipped r leaves, by its check's mean K against K_true +- 0.5
    assert "and keeps the 3 true clusters at N = 300, where it was chosen: its shipped check's chains hold 3.20" in \
        lesson_words.sentence(5, fake_threshold(MEAN_300, MEAN_2000, shipped_k=3.2))
    assert "but merges real clusters at N = 300" in lesson_words.sentence(5, fake_threshold(MEAN_300, MEAN_2000,
                                                                                            shipped_k=2.4))
    assert "shipped check" not in lesson_words.sentence(5, fake_threshold(MEAN_300, MEAN_2000, shipped_k=np.nan))
    # the posterior merges just above r* at both N: it follows r*
    follows = fake_threshold([4.8, 4.2, 2.4, 2.3, 2.3, 2.2, 2.1], [5.2, 3.9, 3.5, 2.3, 2.2, 2.1, 2.0])
    assert "and the posterior follows it:" in lesson_words.sentence(5, follows)
    half = fake_threshold([4.8, 4.2, 2.4, 2.3, 2.3, 2.2, 2.1], MEAN_2000)
    assert "the posterior follows it at N = 300 only" in lesson_words.sentence(5, half)
    # a shipped r at or above where the posterior merges is said so
    assert "lies at or above that" in lesson_words.sentence(5, fake_threshold(MEAN_300, MEAN_2000, shipped=1.3))
    assert "lies below that at N = 2,000 only" in lesson_words.sentence(5, fake_threshold(MEAN_300, MEAN_2000,
                                                                                        shipped=1.2))
    # a posterior that climbs back above the line at the grid's end merges from no r on
    assert np.isnan(fake_threshold(MEAN_300, MEAN_2000[:-1] + [2.6]).merged_from())
    never = fake_threshold(MEAN_300, [5.0] * 7)
    assert "does not fall below 2.5 at every N on the grid" in lesson_words.sentence(5, never)


REASON = ("the smallest of the 3 repeats' proposals (1.7, 1.75, 1.75) and the lower quartile of the 15 splits' own "
          "proposals (1.75): r past it merges real clusters in some splits")


def fake_choice(loss, loss_se, log_pred, used=1.7, log_pred_se=0.03, mean_k=(3.3, 2.1, 2.02, 1.92)):
    grid = np.array([1.01, 1.5, 1.7, 1.75])
    return lesson_results.Choice(grid, np.asarray(loss, float), np.asarray(loss_se, float), np.asarray(log_pred, float),
                         np.full(4, log_pred_se), 1.7, used, 5, 3, "cmd", "2026-01-01", np.asarray(mean_k, float),
                         REASON, 272, 4)


LOSS, LOSS_SE, LOG_PRED = [5.36, 5.40, 5.43, 5.91], [0.12, 0.12, 0.12, 0.3], [-1.465, -1.48, -1.491, -1.54]


def test_step_6_judges_the_loss_and_the_log_predictive_by_one_yardstick():
    """Both curves, from the grid's first r to the proposal, are judged by one standard error (the larger of the two
    ends'): a move within it is said to be within it for either curve, a move beyond it beyond it for either."""
    facts = fake_choice(LOSS, LOSS_SE, LOG_PRED)
    text = lesson_words.sentence(6, facts)
    assert ("from r = 1.01 to 1.7 the held-out loss rises from 5.36 to 5.43 and the log predictive falls from "
            "-1.465 to -1.491, each within one standard error (0.12, 0.030): neither tells those r apart") in text
    assert "gets worse" not in text and "cost" not in text
    steep = lesson_words.sentence(6, replace(facts, loss=np.array([5.0, 5.2, 5.43, 5.91])))
    assert ("the loss by more than one standard error (0.12) and the log predictive within one (0.030)" in steep
            and "neither" not in steep)
    worse = lesson_words.sentence(6, replace(facts, log_pred=np.array([-1.40, -1.45, -1.491, -1.54])))
    assert "the loss within one standard error (0.12) and the log predictive by more than one (0.030)" in worse
    both = lesson_words.sentence(6, replace(facts, loss=np.array([5.0, 5.2, 5.43, 5.91]),
                                            log_pred=np.array([-1.40, -1.45, -1.491, -1.54])))
    assert "each by more than one standard error (0.12, 0.030)" in both
    assert "the held-out loss falls from 5.50 to 5.43" in \
        lesson_words.sentence(6, replace(facts, loss=np.array([5.5, 5.45, 5.43, 5.91])))
    # the yardstick is the same function for both curves
    assert facts.within_se == lesson_results.within_one_se(facts.loss, facts.loss_se, 0, facts.at)
    assert facts.log_pred_within_se == lesson_results.within_one_se(facts.log_pred, facts.log_pred_se, 0, facts.at)


def test_step_6_says_the_shipped_rule_as_the_code_applied_it():
    """The jump is the shipped rule's (find_blow_up on the mean curve), the proposal the smallest of the repeats' and
    the splits' lower quartile as the rule's own reason names them, and the check with chains keeps or steps down."""
    facts = fake_choice(LOSS, LOSS_SE, LOG_PRED)
    text = lesson_words.sentence(6, facts)
    assert "at r = 1.75 the loss jumps to 5.91 as the fits' mean K falls below 2 (1.92)" in text
    assert ("the rule takes the smallest of the repeats' last r before a jump (1.7, 1.75, 1.75) and the splits' lower "
            "quartile (1.75): r = 1.7, kept by the check with chains.") in text
    assert "the last r before the jump" not in text
    stepped = lesson_words.sentence(6, replace(facts, used=1.5))
    assert "r = 1.7, which the check with chains steps down to 1.5." in stepped
    flat = replace(facts, loss=np.array([5.36, 5.40, 5.43, 5.50]))  # no blow-up at 1.75 by the rule's yardstick
    assert flat.jump_at is None and "the loss moves to 5.50" in lesson_words.sentence(6, flat)
    kept = replace(facts, mean_k=np.array([3.3, 2.1, 2.02, 2.01]))
    assert "as the fits' mean K falls from 2.02 to 2.01" in lesson_words.sentence(6, kept)
    other = replace(facts, reason="the loss never blows up in a quarter of the splits")
    assert other.rule_parts() is None
    assert "the rule proposes r = 1.7 (the loss never blows up in a quarter of the splits)" in \
        lesson_words.sentence(6, other)


def test_step_6_reads_the_real_curve_and_the_rule_s_reason():
    from pcrp.analyses.cv import builtin_r_table
    from pcrp.analyses.cv.blow_up import find_blow_up

    facts = lesson_results.cv_choice()
    entry = builtin_r_table()["old-faithful"]
    np.testing.assert_allclose(facts.log_pred, [c["log_pred"] for c in entry["curve"]])
    np.testing.assert_allclose(facts.mean_k, [c["mean_k"] for c in entry["curve"]])
    text = lesson_words.sentence(6, facts)
    assert f"the log predictive falls from {facts.log_pred[0]:.3f} to {facts.log_pred[facts.at]:.3f}" in text
    assert f"rises from {facts.loss[0]:.2f} to {facts.loss[facts.at]:.2f}" in text
    # the mean curve's own blow-up is where the shipped file's mean rule proposed (the r before it)
    jump = find_blow_up(facts.loss, facts.loss_se).index
    assert facts.r_grid[jump - 1] == entry["mean_rule_r"]
    repeats, quartile, splits = facts.rule_parts()
    assert min(min(repeats), quartile) == facts.proposed == entry["cv_r"]
    assert len(repeats) == entry["cv"]["repeats"] and splits == entry["cv"]["folds"] * entry["cv"]["repeats"]
    assert facts.checked_n == entry["check"]["n"] == entry["n"]


OUTCOME_WORDS = {"k": ("nearer", "as near", "farther"), "nmi": ("higher", "within", "lower")}


def said_outcomes(text, facts):
    """{(measure, method): (first word of the group that names the method, count said)} read back from a step 7
    sentence."""
    k_part, _, nmi_part = text.partition(", and its NMI was ")
    out = {}
    for measure, part in (("k", k_part.split(" mean K was ", 1)[1]), ("nmi", nmi_part)):
        for group in part.rstrip(".").split("; "):
            for method in facts.against:
                found = re.search(rf"the {re.escape(method)}'s on (\d+)", group)
                if found:
                    word = next(w for w in OUTCOME_WORDS[measure] if group.startswith(w))
                    out[(measure, method)] = (word, int(found.group(1)))
    return out


def test_step_7_words_match_the_largest_count_of_each_measure():
    from pcrp.experiments.compare import read_report

    facts = lesson_results.comparison(read_report(COMPARISON))
    assert facts.nmi_margin == 0.01 and facts.nmi_higher
    said = said_outcomes(lesson_words.sentence(7, facts), facts)
    for i, method in enumerate(facts.against):
        for measure, counts in (("k", facts.k_counts(i)), ("nmi", facts.nmi_counts(i))):
            top = int(np.argmax(counts))
            assert said[(measure, method)] == (OUTCOME_WORDS[measure][top], counts[top]), (measure, method)
    assert "no better" not in lesson_words.sentence(7, facts)


def test_step_7_changes_its_word_when_a_count_changes():
    comp = lesson_results.Comparison(("CRP", "MFM"), (15, 2), (2, 2), (0, 13), 17, "`pcrp compare`, 1 min", (14, 3), (2, 13),
                             (1, 1), 0.01, 0.1)
    text = lesson_words.sentence(7, comp)
    assert "nearer the true number of clusters than the CRP's on 15 of 17; farther from it than the MFM's on 13" in text
    assert "within 0.01 of the MFM's on 13 of 17" in text
    flipped = replace(comp, nearer=(15, 13), farther=(0, 2))
    text = lesson_words.sentence(7, flipped)
    assert "than the CRP's on 15 of 17 and the MFM's on 13" in text and "farther" not in text
    split = replace(comp, nearer=(15, 6), as_near=(2, 4), farther=(0, 7))  # the MFM: 7 of 17 farther, not most
    assert "farther from it than the MFM's on 7 of 17 (short of a majority)" in lesson_words.sentence(7, split)
    assert comp.made_by == "pcrp compare"


def test_a_real_merge_is_one_of_two_clusters_above_the_share():
    from pcrp.analyses.path import Merge, MergePath

    path = MergePath(np.r_[np.zeros(50), np.ones(45), np.full(5, 2), [3]].astype(int),
                     [Merge(0.3, (0, 3), (50, 1), -1.0, 1.0), Merge(0.9, (1, 2), (45, 5), -1.0, 1.0),
                      Merge(1.4, (4, 5), (51, 50), -1.0, 1.0)])
    assert lesson.real_merge_r(path, 0.02) == pytest.approx(path.effective_r()[1])
    assert lesson.real_merge_r(path, 0.10) == pytest.approx(path.effective_r()[2])
    assert lesson.real_merge_r(path, 0.60) == float("inf")


@pytest.mark.slow  # two CRP fits, their merge paths and a pCRP chain per r at each N
def test_the_threshold_is_the_exact_merge_path_beside_the_sampled_posterior():
    from pcrp.analyses.collapse import FALL, MIN_SHARE
    from pcrp.analyses.cv import builtin_r_table
    from pcrp.analyses.k_over_r import k_over_r
    from pcrp.data import load
    from pcrp.model import resolve_niw
    from pcrp.analyses.path import crp_start, merge_path

    facts = lesson.merge_threshold(seed=0)
    assert tuple(facts.paths) == lesson.PATH_SIZES and facts.true_k == 3 and facts.fall == FALL
    assert facts.shipped == builtin_r_table()["sim1"]["r"] and facts.shipped_n == builtin_r_table()["sim1"]["data"]["n"]
    text = lesson_words.sentence(5, facts)
    for n in lesson.PATH_SIZES:
        ds = load("sim1", n=n)
        niw = resolve_niw(ds.X)
        start = crp_start(ds.X, niw, n_chains=lesson.PATH_CHAINS, iters=lesson.PATH_SWEEPS,
                          burn_in=lesson.PATH_BURN_IN, thin=lesson.PATH_THIN, seed=0, n_jobs=1)
        path = merge_path(ds.X, start.labels, niw)
        assert facts.r_star[n] == pytest.approx(lesson.real_merge_r(path, MIN_SHARE))
        post = k_over_r(ds.X, niw, np.asarray(PRIORS["pcrp"].tune_grid), iters=lesson.K_SWEEPS,
                        burn_in=lesson.K_BURN_IN, seed=0, n_jobs=1)
        np.testing.assert_allclose(facts.posterior[n].mean_k, post.mean_k)
        merged = post.r_grid[post.mean_k < 3 - FALL]
        assert facts.merge_r(n) == merged[0]
        assert f"{facts.mean_k_at(n, facts.just_above(n)):.1f}" in text
    assert f"r* = {facts.r_star[300]:.2f} and {facts.r_star[2000]:.2f}" in text
    assert f"only at r = {facts.merge_r(300):g} and {facts.merge_r(2000):g}" in text


@pytest.mark.slow  # a pCRP chain per r of the grid at each N, for two more seeds
def test_where_the_posterior_merges_moves_at_most_one_grid_step_with_the_seed():
    """Step 5's r where the posterior's mean K falls below K_true - 0.5 comes from one chain per r: its Monte Carlo
    error is this, that another seed moves it by at most one step of the grid (the step says the grid's r)."""
    from pcrp.analyses.k_over_r import k_over_r
    from pcrp.data import load
    from pcrp.model import resolve_niw

    facts = lesson.merge_threshold(seed=0)
    grid = np.asarray(PRIORS["pcrp"].tune_grid)
    for n in lesson.PATH_SIZES:
        ds = load("sim1", n=n)
        niw = resolve_niw(ds.X)
        for seed in (1, 2):
            post = k_over_r(ds.X, niw, grid, iters=lesson.K_SWEEPS, burn_in=lesson.K_BURN_IN, seed=seed, n_jobs=1)
            other = post.r_grid[post.mean_k < facts.line][0]
            steps = abs(int(np.searchsorted(grid, other)) - int(np.searchsorted(grid, facts.merge_r(n))))
            assert steps <= 1, (n, seed, other, facts.merge_r(n))


def test_choosing_r_reads_the_shipped_file_which_names_its_command():
    from pcrp.analyses.cv import BUILTIN_R_COMMAND, builtin_r_table

    facts = lesson_results.cv_choice()
    entry = builtin_r_table()["old-faithful"]
    assert facts.command == entry["command"] == BUILTIN_R_COMMAND and lesson.CV_FILE in facts.command
    np.testing.assert_allclose(facts.loss, [c["loss"] for c in entry["curve"]])
    assert facts.proposed == entry["cv_r"] and facts.used == entry["r"]
    text = lesson_words.sentence(6, facts)
    assert f"On Old Faithful ({entry['cv']['folds']} folds × {entry['cv']['repeats']} repeats)" in text
    assert f"from r = {facts.r_grid[0]:g} to {entry['cv_r']:g}" in text
    assert f"at r = {facts.r_grid[facts.at + 1]:g} the loss jumps to {facts.loss[facts.at + 1]:.2f}" in text


def test_the_comparison_reads_the_shipped_report_which_names_its_command():
    from pcrp.experiments.compare import prior_methods, read_report

    methods = prior_methods()

    payload = json.loads(COMPARISON.read_text())
    facts = lesson_results.comparison(read_report(COMPARISON))
    assert payload["command"] in facts.command and facts.made_by == payload["command"]
    assert list(facts.against) == [row["against"] for row in payload["counts"]]
    assert list(facts.nearer) == [row["K nearer the truth"] for row in payload["counts"]]
    assert list(facts.nmi_lower) == [row["NMI lower"] for row in payload["counts"]]
    text = lesson_words.sentence(7, facts)
    assert f"Over {payload['counts'][0]['labelled data sets']} labelled data sets" in text
    assert len(said_outcomes(text, facts)) == 2 * len(payload["counts"])  # every method, on both measures
    rival = lesson_results.closest_rival(facts)
    fewest = min((row["K nearer the truth"], row["against"]) for row in payload["counts"]
                 if row["against"] in methods)[1]
    assert rival == methods[fewest].name


def test_every_term_a_step_uses_first_is_defined_there():
    from pcrp.experiments.compare import read_report

    facts = {1: lesson.restaurant(), 6: lesson_results.cv_choice(), 7: lesson_results.comparison(read_report(COMPARISON)),
             5: fake_threshold(MEAN_300, MEAN_2000)}
    growth = fake_growth((1.7, 22), (1.0, 0))
    of = fake_old_faithful(fake_posterior([3, 4, 3, 2], TWO), fake_posterior([2, 2, 2, 2], TWO, "pCRP"))
    facts.update({2: growth, 3: of, 4: of})
    defined = {step: {term for term, _ in lesson_words.terms(step, f)} for step, f in facts.items()}
    assert {"CRP", "table", "alpha"} <= defined[1]
    assert {"K_N", "pCRP", "cross validation"} <= defined[2] and "n^r" in dict(lesson_words.terms(2, growth))["pCRP"]
    assert {"K_true", "posterior of K", "mean K", "point estimate (VI loss)"} <= defined[3]
    assert {"Sim 1", "merge path", "r*", "posterior mean K", "shipped check"} <= defined[5]
    assert {"held-out loss", "log predictive", "one standard error", "jump, rule"} <= defined[6]
    assert {"BGM", "MFM", "SFM", "Pitman-Yor", "NMI", "as near"} <= defined[7]
    # every term is defined once, at the first step that uses it
    firsts = [term for step in sorted(defined) for term in defined[step]]
    assert len(firsts) == len(set(firsts)), firsts


def test_r_is_named_only_from_the_step_that_defines_it():
    """Step 1's Explorer link does not name r (defined at step 2, the pCRP's n^r); every later step's may."""
    assert not lesson_links.names_r(1) and all(lesson_links.names_r(s.number) for s in lesson.STEPS[1:])
    assert "n^r" in dict(lesson_words.terms(2, fake_growth((1.7, 22), (1.0, 0))))["pCRP"]
    assert not any("r" == term or "n^r" in text for term, text in lesson_words.terms(1, lesson.restaurant()))


def test_grey_points_are_defined_where_a_figure_shows_them_and_only_there():
    """Steps 3 and 4 draw partitions coloured against the CRP's point estimate; a cluster under the tiny share is
    grey. The term is defined beside a figure that has grey points, never beside one that has none."""
    plain = fake_old_faithful(fake_posterior([3, 4, 3, 2], TWO), fake_posterior([2, 2, 2, 2], TWO, "pCRP"))
    assert not plain.shows_tiny("crp") and not plain.shows_tiny("pcrp")
    assert all("grey points" not in dict(lesson_words.terms(step, plain)) for step in (3, 4))
    tiny = np.r_[np.zeros(175), np.ones(96), [2]].astype(int)  # one point alone: under 2% of 272
    grey_draw = replace(plain, crp=replace(plain.crp, draw=tiny))
    assert grey_draw.shows_tiny("crp") and grey_draw.shows_tiny("pcrp")  # the CRP's draw is in both figures
    assert all("grey points" in dict(lesson_words.terms(step, grey_draw)) for step in (3, 4))
    grey_pcrp = replace(plain, pcrp=replace(plain.pcrp, draw=tiny))
    assert not grey_pcrp.shows_tiny("crp") and grey_pcrp.shows_tiny("pcrp")
    assert "grey points" not in dict(lesson_words.terms(3, grey_pcrp))
    assert "grey points" in dict(lesson_words.terms(4, grey_pcrp))
    assert any(bool(np.any(c < 0)) for _, _, c in grey_pcrp.panels("pcrp"))


def test_sim_1_is_described_by_its_own_means_and_spread():
    """Step 5's Sim 1: the declared means and sds, each neighbour's gap in sds of the wider, and the share of points
    the true mixture itself puts in another component, checked against 400,000 draws of the mixture classified by
    the largest weighted density (Monte Carlo SE of a share near 0.03: 0.0003; tolerance 0.002, over 6 SE)."""
    from scipy.stats import norm

    from pcrp.data.builtin_sets import SIMULATIONS

    sim = lesson.simulation_facts("sim1")
    spec = SIMULATIONS["sim1"]
    assert sim.means == tuple(sorted(spec["means"])) and sim.sds == tuple(spec["sds"])
    assert sim.gaps == pytest.approx([(-8 + 17.6) / 1.5, (1 + 8) / 3.6])
    rng = np.random.default_rng(0)
    k = rng.choice(3, size=400_000, p=spec["weights"])
    x = rng.normal(np.take(spec["means"], k), np.take(spec["sds"], k))
    dens = np.asarray(spec["weights"])[:, None] * norm.pdf(x[None], np.asarray(spec["means"])[:, None],
                                                             np.asarray(spec["sds"])[:, None])
    assert sim.misassigned == pytest.approx(np.mean(dens.argmax(axis=0) != k), abs=0.002)
    text = dict(lesson_words.terms(5, fake_threshold(MEAN_300, MEAN_2000)))["Sim 1"]
    assert "1-D Gaussians at -17.6, -8, 1 with sds 0.675, 1.5, 3.6" in text
    assert f"neighbours {sim.gaps[0]:.1f} and {sim.gaps[1]:.1f} sds (of the wider) apart" in text
    assert f"the true mixture itself misplaces {sim.misassigned:.1%} of points" in text
    assert "poorly" not in text


def test_no_sentence_carries_a_number_its_facts_do_not():
    """A typed figure would show up as a number that changes nowhere when the facts change: the restaurant's
    sentence with other customers and seed has other numbers."""
    a = lesson_words.sentence(1, lesson.restaurant(customers=12, seed=0))
    b = lesson_words.sentence(1, lesson.restaurant(customers=40, seed=9))
    assert numbers(a) != numbers(b)
    assert "12" in a and "40" in b


# ----------------------------------------------------------------------------- the Explorer's settings
@pytest.mark.parametrize("step", [s.number for s in lesson.STEPS])
def test_each_step_opens_the_explorer_in_settings_it_accepts(step):
    values = lesson_links.explorer_values(step, r=1.15, rival="mfm", present=True)
    link = es.demo_link("http://example.org/base/", values)
    assert link.startswith("http://example.org/base/?")
    from urllib.parse import parse_qs, urlsplit

    parsed, problems = es.from_query(parse_qs(urlsplit(link).query))
    assert problems == []
    assert parsed.get("present") is True
    key = lesson.STEPS[step - 1].key
    assert parsed.get("data", "old-faithful") == ("sim1" if key in ("threshold", "compare") else "old-faithful")
    assert parsed.get("r2") == 1.15 and lesson_links.explorer_r_key() == "r2"
    if key == "threshold":
        assert parsed["sim_n"] == max(lesson.PATH_SIZES)
    if key == "compare":
        assert parsed["prior1"] == "mfm"
    if key in ("crp", "pcrp"):
        assert parsed["chains"] == lesson.LESSON_PARAMS["chains"].default


def test_the_explorer_is_the_apps_root():
    assert lesson_links.explorer_address("http://h:8501/lesson?step=3") == "http://h:8501/"
    assert lesson_links.explorer_address("https://h/base/lesson") == "https://h/base/"
    assert lesson_links.explorer_address(None) == ""


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
    assert page_session(at).lesson.settings["customers"] == lesson.LESSON_PARAMS["customers"].default + 10
    text = " ".join(h.proto.body for h in at.get("html"))
    assert f"After {lesson.LESSON_PARAMS['customers'].default + 10} customers" in text


def test_present_mode_is_read_from_the_address():
    from app_pages.shared import PRESENT_RULES, PROJECTOR_TEXT

    at = page(step="6", present="1")
    assert at.toggle(key="lesson_present").value is True
    styles = " ".join(h.proto.body for h in at.get("html"))
    assert PRESENT_RULES in styles and PROJECTOR_TEXT in styles  # the page's own rules add to them
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


@pytest.mark.slow  # every step, chains and merge paths included
def test_every_step_renders_with_its_sentence_chart_terms_and_the_explorer_at_its_r():
    from urllib.parse import parse_qs, urlsplit

    shipped, sim1 = lesson.shipped_r()[0], lesson.shipped_r(lesson.SIM1)[0]
    merge = lesson.merge_threshold(seed=lesson.LESSON_PARAMS["seed"].default).merge_r(max(lesson.PATH_SIZES))
    expected = {"threshold": merge, "compare": sim1}
    for step in lesson.STEPS:
        at = page(step=str(step.number))
        assert headers(at) == [f"{step.number}. {step.title}"]
        assert not at.error and not at.warning and not at.info  # no wait left on the page
        bodies = [h.proto.body for h in at.get("html")]
        sentence = " ".join(b for b in bodies if "lesson-say" in b)
        assert sentence, step
        assert any("lesson-term" in b for b in bodies), step
        charts = at.get("plotly_chart") + at.get("vega_lite_chart")
        assert len(charts) == 1, step
        links = at.get("link_button")
        r = expected.get(step.key, shipped)
        label = f"Open in the Explorer at r = {r:g}" if lesson_links.names_r(step.number) else "Open in the Explorer"
        assert len(links) == 1 and links[0].proto.label == label, step
        assert links[0].proto.url.startswith("/")
        query = parse_qs(urlsplit(links[0].proto.url).query)
        data = query.get("data", [es.defaults()["data"]])[0]
        assert float(query.get("r2", [es.data_r({"data": data})])[0]) == r, step  # left out: the data set's r


# ----------------------------------------------------------------------------- the figures
def test_each_mean_k_is_a_marker_above_every_share_written_on_a_bar():
    """Steps 3 and 4: a prior's mean K is a diamond (with its ± 2 MCSE) in a row of its own above the bars, never a
    line through them, so that it cannot cross a share written above a bar (step 4's "98%" at K = 2 beside a mean K of
    2.02). The gap from the 100% line to the first row, in pixels, exceeds a label's height (its font and 4 px), on
    a plot area of at least half the figure's height."""
    from pcrp.plots import lesson as lplots

    X = np.zeros((4, 2))
    bars = [("CRP", [2, 3], [0.09, 0.91], 3.66, 0.1), ("pCRP", [2, 3], [0.98, 0.02], 2.02, 0.01)]
    fig = lplots.posterior_and_partitions(X, ("a", "b"), bars, [("p", [0, 0, 1, 1])], 2, height=390)
    assert not fig.layout.shapes  # no line across the bars
    marks = [t for t in fig.data if t.type == "scatter" and t.marker.symbol == "diamond"]
    assert [(m.x[0], m.error_x.value) for m in marks] == [(3.66, 0.1), (2.02, 0.01)]
    top = fig.layout.yaxis.range[1]
    label_px = lplots.FONT_PX - 3 + 4
    px_per_unit = 0.5 * 390 / top
    assert min(m.y[0] for m in marks) - lplots.BARS_TOP >= label_px / px_per_unit
    assert max(m.y[0] for m in marks) < top and len({m.y[0] for m in marks}) == 2
    assert fig.layout.yaxis.ticktext[-1] == "mean K" and fig.layout.yaxis.tickvals[-2] == lplots.BARS_TOP


def test_the_cross_validation_figure_claims_no_better_side_it_does_not_use():
    """The rule reads where the loss jumps, not its lowest value: the panel says so instead of "lower is better"
    (r = 1.7's loss is above r = 1.01's)."""
    from pcrp.plots import lesson as lplots

    facts = lesson_results.cv_choice()
    fig = lplots.cv_curves(facts.r_grid, facts.loss, facts.loss_se, facts.log_pred, facts.log_pred_se,
                           facts.proposed, float(facts.r_grid[0]), float(facts.r_grid[facts.next_at]))
    titles = " ".join(a.text for a in fig.layout.annotations)
    assert "better" not in titles and "where does it jump?" in titles

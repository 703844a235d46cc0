"""The lesson's words: the one sentence of each step (:func:`sentence`) and the terms it defines (:func:`terms`),
written from the plain facts the step functions of :mod:`pcrp.teaching.lesson` return. Each word that states a
comparison or a verdict is chosen by the numbers of those facts (tests/test_lesson.py changes one number and
watches the word change); no figure is typed into a sentence.
"""

import numpy as np

from ..basics.shares import percent_text
from .lesson import CV_FILE, K_BURN_IN, K_SWEEPS, OLD_FAITHFUL, STEPS, TRUE_K_SOURCE
from .lesson_results import one_se, outcome

MOST = 0.5  # "most draws": a share of the pooled draws above one half
# The words of each outcome (better, equal, worse), as the first group says them and as the later ones do.
K_WORDS = (("nearer the true number of clusters than", "nearer it than"),
           ("as near the true number of clusters as", "as near it as"),
           ("farther from the true number of clusters than", "farther from it than"))
NMI_WORDS = (("higher than",) * 2, ("within {margin:g} of",) * 2, ("lower than",) * 2)


# ----------------------------------------------------------------------------- the sentences
def _and(items):
    items = list(items)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def points_text(sizes):
    """"162, 95, 8 and 7 points": cluster sizes in words."""
    return _and(f"{s:,}" for s in sizes) + " points"


def _restaurant_sentence(facts):
    return (f"After {facts.customers} customers the {facts.label} has opened {facts.tables} "
            f"table{'s' if facts.tables != 1 else ''} and the largest seats {percent_text(facts.largest_share)} of them; "
            f"the next customer joins that table with probability {percent_text(facts.p_largest)} and opens a new one with "
            f"probability {percent_text(facts.p_new, 1)}: the fuller a table, the likelier the next customer sits there.")


def amount(value):
    """A mean count of tables as written: one decimal from 0.1 on, else two significant digits ("0.025"), so that
    a gain above 0 never reads "0.0" or "0.00"."""
    return f"{value:.1f}" if abs(value) >= 0.1 else f"{value:.2g}"


def _late_clause(facts, i):
    """"0.72 more after N = 250 (in 22 of its 40 seatings)", or "none after N = 250 in any of its 40 seatings"."""
    late = facts.late[i] if facts.late else None
    if late == 0 or (late is None and facts.gain(i) == 0):
        return f"no more after N = {facts.half:,} in any of its {facts.seatings} seatings"
    text = f"{amount(facts.gain(i))} more after N = {facts.half:,}"
    return text + (f" (in {late} of its {facts.seatings} seatings)" if late is not None else "")


def _growth_sentence(facts):
    crp, pcrp = facts.labels
    still = facts.gain(0) > 0
    text = (f"Over {facts.seatings} seatings of {facts.n:,} customers the {crp} opened {facts.means[0][-1]:.1f} "
            f"tables on average (exact {facts.exact[-1]:.1f}, about alpha log N = {facts.alpha_log_n:.1f}) and "
            + ("was still opening them, " if still else "had stopped opening them, ") + _late_clause(facts, 0))
    fewer = facts.gain(1) < facts.gain(0)
    return (text + f"; the {pcrp} at r = {facts.r:g} opened {facts.means[1][-1]:.1f} and "
            + ("only " if fewer and facts.gain(1) > 0 else "") + _late_clause(facts, 1) + ".")


def _point_clause(v, true_k):
    """What the point estimate of ``v`` says beside its draws."""
    where = f"its point estimate under VI loss has {v.point_k} cluster{'s' if v.point_k != 1 else ''} " \
            f"({points_text(v.point_sizes)})"
    if v.point_k == true_k:
        return (f"{where}, the true number: a loss-based summary drops the extra clusters that "
                f"{percent_text(v.p_above)} of the draws hold" if v.p_above > MOST else f"{where}, as its draws do")
    return f"{where}: {'more' if v.point_k > true_k else 'fewer'} than the {true_k} true ones"


def _crp_sentence(facts):
    v, k = facts.crp, facts.true_k
    text = (f"On Old Faithful's {facts.X.shape[0]} eruptions (K_true = {k}), {v.chains} {v.label} chains put "
            f"{percent_text(v.p_true)} of their draws on K = {k} and hold {v.mean_k:.2f} clusters on average "
            f"(± {2 * v.mcse:.2f})")
    if v.p_above > MOST:
        text += (f": the posterior over-clusters, with extra clusters in {percent_text(v.p_above)} of the draws (the one shown: "
                 f"{points_text(v.draw_sizes)})")
    elif v.p_below > MOST:
        text += f": the posterior merges the real clusters in {percent_text(v.p_below)} of the draws"
    else:
        text += (f": the posterior does not over-cluster, with extra clusters in only {percent_text(v.p_above)} of the "
                 "draws")
    return text + "; " + _point_clause(v, k) + "."


def _pcrp_sentence(facts):
    v, c, k = facts.pcrp, facts.crp, facts.true_k
    text = (f"At r = {facts.r:g}, cross validation's r for Old Faithful, {v.chains} {v.label} chains on the same data, "
            f"starts and sweeps put {percent_text(v.p_true)} of their draws on K = {k} against the {c.label}'s {percent_text(c.p_true)} "
            f"and hold {v.mean_k:.2f} clusters on average against {c.mean_k:.2f}: ")
    if v.p_below > MOST:
        text += f"the power merges the real clusters in most draws"
    elif v.p_above < c.p_above and v.p_above <= MOST:
        text += (f"the power empties the extra tables in the draws themselves (extra clusters in {percent_text(v.p_above)} of "
                 f"them against {percent_text(c.p_above)})")
    elif v.p_above < c.p_above:
        text += (f"the power empties some extra tables, but {percent_text(v.p_above)} of the draws still hold extra clusters "
                 f"(against {percent_text(c.p_above)})")
    else:
        text += (f"the power does not empty the extra tables here (extra clusters in {percent_text(v.p_above)} of the draws "
                 f"against {percent_text(c.p_above)})")
    if facts.same_point:
        text += (f"; both point estimates under VI loss are the same partition ({points_text(v.point_sizes)}), so the "
                 "power changes the draws more than that summary")
    else:
        text += (f"; the point estimates under VI loss differ ({c.label}: {points_text(c.point_sizes)}; {v.label}: "
                 f"{points_text(v.point_sizes)})")
    return text + "."


def _threshold_sentence(facts):
    sizes = facts.sizes
    n_text = _and(f"{n:,}" for n in sizes)
    stars = _and(f"{facts.r_star[n]:.2f}" for n in sizes)
    above = [facts.just_above(n) for n in sizes]
    merge = [facts.merge_r(n) for n in sizes]
    follows = [np.isfinite(m) and np.isfinite(a) and m <= a for m, a in zip(merge, above)]
    text = (f"On Sim 1 at N = {n_text} the merge path's single partition prefers two real clusters merged above "
            f"r* = {stars}, ")
    if not any(follows):
        text += "but the posterior does not follow it: "
    elif all(follows):
        text += "and the posterior follows it: "
    else:
        text += f"and the posterior follows it at N = {_and(f'{n:,}' for n, f in zip(sizes, follows) if f)} only: "
    text += (f"just above r*, at r = {_and(f'{a:g}' for a in above)}, its mean K is "
             f"{_and(f'{facts.mean_k_at(n, a):.1f}' for n, a in zip(sizes, above))}, ")
    if all(np.isfinite(merge)):
        text += (f"and falls below {facts.line:g} ({facts.true_k} true less {facts.fall:g}) only at "
                 f"r = {_and(f'{m:g}' for m in merge)}")
    else:
        text += f"and does not fall below {facts.line:g} at every N on the grid"
    shipped = facts.shipped
    below = [np.isfinite(m) and shipped < m for m in merge]
    text += (f"; Sim 1's cross-validated r, {shipped:g}, lies "
             + ("below that at every N" if all(below) else
                "at or above that" if not any(below) else
                f"below that at N = {_and(f'{n:,}' for n, b in zip(sizes, below) if b)} only"))
    return text + _shipped_clause(facts) + "."


def _shipped_clause(facts):
    """What the shipped r leaves on the data it was chosen on, by its shipped check's chains: extra clusters (mean
    K above K_true + fall), merged ones (below K_true - fall) or the true ones."""
    k = facts.shipped_k
    if not np.isfinite(k):
        return ""
    at = f"at N = {facts.shipped_n:,}"
    if k > facts.true_k + facts.fall:
        verdict = f"but leaves extra clusters {at}"
    elif k < facts.true_k - facts.fall:
        verdict = f"but merges real clusters {at}"
    else:
        verdict = f"and keeps the {facts.true_k} true clusters {at}"
    return f", {verdict}, where it was chosen: its shipped check's chains hold {k:.2f} on average"


def _moved(values, i, j, digits):
    """"rises from 5.36 to 5.43", "falls from ...", "stays at ...": how a curve moved from index i to j."""
    a, b = float(values[i]), float(values[j])
    verb = "rises" if round(b, digits) > round(a, digits) else "falls" if round(b, digits) < round(a, digits) else None
    return f"{verb} from {a:.{digits}f} to {b:.{digits}f}" if verb else f"stays at {a:.{digits}f}"


def _choice_sentence(facts):
    """Step 6: both curves judged by one yardstick (one standard error, :func:`pcrp.teaching.lesson_results.within_one_se`)
    from the grid's first r to the proposal, the loss at the next r, and the shipped rule as the code applied it (its
    parts' proposals, read from the rule's own reason) with the check with chains."""
    lo, at = 0, facts.at
    loss_se, pred_se = one_se(facts.loss_se, lo, at), one_se(facts.log_pred_se, lo, at)
    text = (f"On Old Faithful ({facts.folds} folds × {facts.repeats} repeats), from "
            f"r = {facts.r_grid[lo]:g} to {facts.proposed:g} the held-out loss {_moved(facts.loss, lo, at, 2)} and "
            f"the log predictive {_moved(facts.log_pred, lo, at, 3)}, ")
    within = (facts.within_se, facts.log_pred_within_se)
    if all(within):
        text += f"each within one standard error ({loss_se:.2f}, {pred_se:.3f}): neither tells those r apart"
    elif not any(within):
        text += f"each by more than one standard error ({loss_se:.2f}, {pred_se:.3f})"
    else:
        text += (f"the loss {'within' if within[0] else 'by more than'} one standard error ({loss_se:.2f}) and the "
                 f"log predictive {'within' if within[1] else 'by more than'} one ({pred_se:.3f})")
    nxt = facts.next_at
    if nxt is not None:
        jumps = facts.jump_at == nxt
        text += (f"; at r = {facts.r_grid[nxt]:g} the loss {'jumps' if jumps else 'moves'} to {facts.loss[nxt]:.2f}")
        if facts.mean_k.size:
            k0, k1 = float(facts.mean_k[at]), float(facts.mean_k[nxt])
            below = k1 < facts.true_k <= k0
            text += (f" as the fits' mean K falls below {facts.true_k} ({k1:.2f})"
                     if below else f" as the fits' mean K {'falls' if k1 < k0 else 'goes'} from {k0:.2f} to {k1:.2f}")
    parts = facts.rule_parts()
    if parts is not None:
        repeats, quartile, splits = parts
        text += (f"; the rule takes the smallest of the repeats' last r before a jump "
                 f"({', '.join(f'{r:g}' for r in repeats)}) and the splits' lower quartile ({quartile:g}): "
                 f"r = {facts.proposed:g}")
    else:
        text += f"; the rule proposes r = {facts.proposed:g} ({facts.reason})"
    if facts.used == facts.proposed:
        text += ", kept by the check with chains"
    else:
        text += f", which the check with chains steps down to {facts.used:g}"
    return text + "."


def _measure_clause(facts, counts_of, words):
    """"nearer ... than the CRP's (15 of 17) and the Pitman-Yor's (15), farther ... than the MFM's (13)": the
    methods grouped by the outcome most of their data sets had."""
    groups = {}
    for i, method in enumerate(facts.against):
        counts = counts_of(i)
        which, most = outcome(counts)
        groups.setdefault(which, []).append((method, counts[which], most))
    parts = []
    for which in sorted(groups):
        phrase = words[which][1 if parts else 0].format(margin=facts.nmi_margin)
        names = []
        for j, (method, count, most) in enumerate(groups[which]):
            of = f" of {facts.data_sets}" if not names else ""
            names.append(f"the {method}'s on {count}{of}" + ("" if most else " (short of a majority)"))
        parts.append(f"{phrase} {_and(names)}")
    return "; ".join(parts)


def _compare_sentence(facts):
    text = (f"Over {facts.data_sets} labelled data sets the pCRP's mean K was "
            f"{_measure_clause(facts, facts.k_counts, K_WORDS)}")
    if facts.nmi_higher:
        text += f", and its NMI was {_measure_clause(facts, facts.nmi_counts, NMI_WORDS)}"
    return text + "."


SENTENCES = {"restaurant": _restaurant_sentence, "growth": _growth_sentence, "crp": _crp_sentence,
             "pcrp": _pcrp_sentence, "threshold": _threshold_sentence, "choose": _choice_sentence,
             "compare": _compare_sentence}


def sentence(step, facts):
    """The one sentence a teacher says at step number ``step``, its numbers from ``facts`` (the result of the step's
    function: :func:`pcrp.teaching.lesson.restaurant`, ``k_growth``, ``old_faithful`` (steps 3 and 4),
    ``merge_threshold``, :func:`pcrp.teaching.lesson_results.cv_choice`, ``comparison``)."""
    return SENTENCES[STEPS[step - 1].key](facts)


# ----------------------------------------------------------------------------- the terms of each step
def terms(step, facts):
    """[(term, definition)] of the terms a student meets first at step number ``step`` (shown beside its
    figure). The definitions' numbers, if any, come from ``facts`` or the library."""
    key = STEPS[step - 1].key
    if key == "restaurant":
        return [("CRP", "the Chinese restaurant process: the prior on clusterings of a Dirichlet-process mixture"),
                ("table", "a cluster; a customer is a data point"),
                ("alpha", f"the weight of a new table (here {facts.alpha:g}); a table of n customers weighs n")]
    if key == "growth":
        return [("K_N", "the number of tables after N customers"),
                ("pCRP", f"the powered CRP: a table of n customers weighs n^r (r = {facts.r:g} here, cross "
                         "validation's r for Old Faithful)"),
                ("cross validation", "for each r, fit on part of the data and score the part left out, in "
                                     "turn: how r is chosen (step 6)")]
    if key == "crp":
        v = facts.crp
        out = [("K_true", f"{facts.true_k}: {TRUE_K_SOURCE}"),
               ("posterior of K", f"the share of the draws with each number of clusters: {v.chains} chains from "
                                  f"unlike starts, {facts.sweeps - v.burn_in:,} sweeps each after burn-in"),
               ("mean K", "the number of clusters averaged over the draws (the diamond above the bars), ± two Monte "
                          "Carlo standard errors (chains pooled)"),
               ("point estimate (VI loss)", "the one partition whose expected variation of information to the "
                                            "posterior's draws is smallest (pcrp.summaries.partition)")]
        return out + ([("grey points", _tiny_text())] if facts.shows_tiny(key) else [])
    if key == "pcrp":
        out = [("r", "the pCRP's power: a table of n customers weighs n^r, so a tiny table is much lighter "
                     "beside a large one than under the CRP (r = 1)"),
               ("cross validation's r", f"{facts.r:g}, shipped in {CV_FILE} (step 6 shows how it is chosen)")]
        return out + ([("grey points", _tiny_text())] if facts.shows_tiny(key) else [])
    if key == "threshold":
        return [("Sim 1", f"the paper's first simulation (K_true = {facts.true_k}), calibrated: "
                          f"{_about_sim(facts.about)}"),
                ("merge path", "a CRP fit's point estimate, merged pair by pair, first the pair the pCRP merges at "
                               "the smallest r"),
                ("r*", f"the r above which that one partition prefers two real clusters (each {facts.share:.0%} of the "
                       "points or more) merged; not posterior mass"),
                ("posterior mean K", f"one pCRP chain's mean K at each r of the grid, {K_SWEEPS - K_BURN_IN:,} "
                                     "sweeps after burn-in"),
                ("shipped check", f"{facts.shipped_chains} pCRP chains of {facts.shipped_sweeps:,} sweeps at the "
                                  "shipped r on the data it was chosen on")]
    if key == "choose":
        return [("held-out loss", "the paper's eq. (5): per held-out cluster, the square root of its points' summed "
                                  "squared distances to its mean, summed; read for where it jumps, not its lowest"),
                ("log predictive", "the log density the fit puts on a held-out point, per point: higher predicts "
                                   "better"),
                ("one standard error", f"of the mean over the {facts.folds * facts.repeats} splits (the band): a "
                                       "change within it is fold-to-fold noise"),
                ("jump, rule", _jump_text())]
    if key == "compare":
        from ..experiments.compare import BGM, COMPARE_PARAMS, prior_methods

        methods = prior_methods()
        seen = {m for m, spec in methods.items() if spec.reference or spec.tuned}  # the CRP and pCRP: steps 1, 2
        out = [(m, methods[m].help) for m in facts.against if m in methods and m not in seen]
        if BGM in facts.against:
            out.append((BGM, "scikit-learn's BayesianGaussianMixture: a variational Dirichlet-process mixture of "
                             f"{COMPARE_PARAMS['bgm_components'].default} components"))
        out.append(("NMI", "normalised mutual information with the true labels (1: the same partition)"))
        out.append(("as near", f"distances of the mean Ks to the truth within {facts.k_margin:g}"))
        return out
    return []


def _decimals(values, fmt="{:g}"):
    return _and(fmt.format(v) for v in values)


def _about_sim(sim):
    """A simulation in words from its declared mixture and what follows from it (:class:`SimulationFacts`):
    "1-D Gaussians at -17.6, -8, 1 with sds 0.675, 1.5, 3.6; neighbours 6.4 and 2.5 sds (of the wider) apart; the true
    mixture itself misplaces 2.7% of points" (its Bayes error)."""
    gaps = _and(f"{g:.1f}" for g in sim.gaps)
    means, sds = (", ".join(f"{v:g}" for v in values) for values in (sim.means, sim.sds))
    return (f"1-D Gaussians at {means} with sds {sds}; "
            f"neighbours {gaps} sds (of the wider) apart; the true mixture itself misplaces {percent_text(sim.misassigned, 1)} of "
            "points")


def _jump_text():
    """The shipped rule's yardstick of a jump, from its declared constants (pcrp.analyses.cv.blow_up)."""
    from ..analyses.cv.blow_up import NOISE_MULT, REL_JUMP, SPLIT_QUANTILE

    quantile = "quartile" if SPLIT_QUANTILE == 0.25 else f"{SPLIT_QUANTILE:.0%} quantile"
    return (f"a rise above the lowest loss so far of more than {REL_JUMP:.0%} of it, {NOISE_MULT:g} x the noise of "
            f"the steps before and the fold-to-fold noise; the rule takes the smallest of each repeat's last r "
            f"before a jump and the splits' lower {quantile}")


def _tiny_text():
    from ..app.live_view import TINY_SHARE

    return f"clusters under {TINY_SHARE:.0%} of the points"

"""The lesson's words: the one sentence of each step (:func:`sentence`) and the terms it defines (:func:`terms`),
written from the plain facts the step functions of :mod:`pcrp.teaching.lesson` return. Each word that states a
comparison or a verdict is chosen by the numbers of those facts (tests/test_lesson.py changes one number and
watches the word change); no figure is typed into a sentence.
"""

import numpy as np

from .lesson import CV_FILE, K_BURN_IN, K_SWEEPS, STEPS, TRUE_K_SOURCE, outcome

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
            f"table{'s' if facts.tables != 1 else ''} and the largest seats {facts.largest_share:.0%} of them; "
            f"the next customer joins that table with probability {facts.p_largest:.0%} and opens a new one with "
            f"probability {facts.p_new:.1%}: the fuller a table, the likelier the next customer sits there.")


def _growth_sentence(facts):
    crp, pcrp = facts.labels
    return (f"Over {facts.seatings} seatings of {facts.n:,} customers the {crp} opened {facts.means[0][-1]:.1f} "
            f"tables on average (exact {facts.exact[-1]:.1f}, about alpha log N = {facts.alpha_log_n:.1f}) and was "
            f"still opening them, {facts.gain(0):.1f} more after N = {facts.half:,}; the {pcrp} at r = {facts.r:g} "
            f"opened {facts.means[1][-1]:.1f} and only {facts.gain(1):.2f} more after N = {facts.half:,}.")


def _point_clause(v, true_k):
    """What the point estimate of ``v`` says beside its draws."""
    where = f"its point estimate under VI loss has {v.point_k} cluster{'s' if v.point_k != 1 else ''} " \
            f"({points_text(v.point_sizes)})"
    if v.point_k == true_k:
        return (f"{where}, so a loss-based summary already removes most of the extra clusters; the draws keep them"
                if v.p_above > MOST else f"{where}, as its draws do")
    return f"{where}: {'more' if v.point_k > true_k else 'fewer'} than the {true_k} true ones"


def _crp_sentence(facts):
    v, k = facts.crp, facts.true_k
    text = (f"On Old Faithful's {facts.X.shape[0]} eruptions (K_true = {k}), {v.chains} {v.label} chains put "
            f"{v.p_true:.0%} of their draws on K = {k} and hold {v.mean_k:.2f} clusters on average "
            f"(± {2 * v.mcse:.2f})")
    if v.p_above > MOST:
        text += (f": the posterior over-clusters, with extra clusters in {v.p_above:.0%} of the draws (the one shown: "
                 f"{points_text(v.draw_sizes)})")
    elif v.p_below > MOST:
        text += f": the posterior merges the real clusters in {v.p_below:.0%} of the draws"
    else:
        text += (f": the posterior does not over-cluster, with extra clusters in only {v.p_above:.0%} of the "
                 "draws")
    return text + "; " + _point_clause(v, k) + "."


def _pcrp_sentence(facts):
    v, c, k = facts.pcrp, facts.crp, facts.true_k
    text = (f"At r = {facts.r:g}, cross validation's r for Old Faithful, {v.chains} {v.label} chains on the same data, "
            f"starts and sweeps put {v.p_true:.0%} of their draws on K = {k} against the {c.label}'s {c.p_true:.0%} "
            f"and hold {v.mean_k:.2f} clusters on average against {c.mean_k:.2f}: ")
    if v.p_below > MOST:
        text += f"the power merges the real clusters in most draws"
    elif v.p_above < c.p_above and v.p_above <= MOST:
        text += (f"the power empties the extra tables in the draws themselves (extra clusters in {v.p_above:.0%} of "
                 f"them against {c.p_above:.0%})")
    elif v.p_above < c.p_above:
        text += (f"the power empties some extra tables, but {v.p_above:.0%} of the draws still hold extra clusters "
                 f"(against {c.p_above:.0%})")
    else:
        text += (f"the power does not empty the extra tables here (extra clusters in {v.p_above:.0%} of the draws "
                 f"against {c.p_above:.0%})")
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
    text = (f"On Sim 1 at N = {n_text}, the merge path's single partition prefers two real clusters merged above "
            f"r* = {stars}, ")
    if not any(follows):
        text += "but the posterior does not follow it: "
    elif all(follows):
        text += "and the posterior follows it: "
    else:
        text += f"and the posterior follows it at N = {_and(f'{n:,}' for n, f in zip(sizes, follows) if f)} only: "
    text += (f"at r = {_and(f'{a:g}' for a in above)}, just above r*, the pCRP's draws hold "
             f"{_and(f'{facts.mean_k_at(n, a):.1f}' for n, a in zip(sizes, above))} clusters on average, ")
    if all(np.isfinite(merge)):
        text += (f"and their mean K falls below {facts.line:g} (the {facts.true_k} true clusters less "
                 f"{facts.fall:g}) only at r = {_and(f'{m:g}' for m in merge)}")
    else:
        text += f"and their mean K does not fall below {facts.line:g} at every N on the grid"
    shipped = facts.shipped
    below = [np.isfinite(m) and shipped < m for m in merge]
    text += (f"; Sim 1's cross-validated r, {shipped:g} (chosen at N = {facts.shipped_n:,}), lies "
             + ("below that at every N" if all(below) else
                "at or above that" if not any(below) else
                f"below that at N = {_and(f'{n:,}' for n, b in zip(sizes, below) if b)} only"))
    start = facts.merged_from()
    if np.isfinite(start):
        text += f", and from r = {start:g} on every N merges real clusters"
    return text + "."


def _choice_sentence(facts):
    lo, at = 0, facts.at
    verb = "rises" if facts.rise > 0 else ("falls" if facts.rise < 0 else "stays")
    text = (f"{facts.folds}-fold cross validation repeated {facts.repeats} times on Old Faithful scores the held-out "
            f"loss of the paper's eq. (5): it {verb} from {facts.loss[lo]:.2f} at r = {facts.r_grid[lo]:g} to "
            f"{facts.loss[at]:.2f} at r = {facts.proposed:g}, ")
    se = max(float(np.nan_to_num(facts.loss_se[lo])), float(np.nan_to_num(facts.loss_se[at])))
    text += (f"within one standard error ({se:.2f})" if facts.within_se else
             f"by more than one standard error ({se:.2f})")
    if facts.next_at is not None:
        text += (f", and jumps to {facts.loss[facts.next_at]:.2f} at r = {facts.r_grid[facts.next_at]:g}, "
                 "where real clusters start to merge")
    text += f", so it proposes r = {facts.proposed:g}, the last r before the jump"
    if facts.used != facts.proposed:
        text += f" (the check with chains steps down to r = {facts.used:g})"
    change = float(facts.log_pred[at] - facts.log_pred[lo])
    if change < 0:
        text += (f"; the held-out log predictive density gets worse meanwhile, from {facts.log_pred[lo]:.3f} to "
                 f"{facts.log_pred[at]:.3f} per point: fewer clusters cost a little fit")
    else:
        text += (f"; the held-out log predictive density does not get worse meanwhile ({facts.log_pred[lo]:.3f} to "
                 f"{facts.log_pred[at]:.3f} per point)")
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
    function: :func:`restaurant`, :func:`k_growth`, :func:`old_faithful` (steps 3 and 4), :func:`merge_threshold`,
    :func:`cv_choice`, :func:`comparison`)."""
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
                         "validation's r for Old Faithful, step 6)")]
    if key == "crp":
        v = facts.crp
        return [("K_true", f"{facts.true_k}: {TRUE_K_SOURCE}"),
                ("posterior of K", f"the share of the draws with each number of clusters: {v.chains} chains from "
                                   f"unlike starts, {facts.sweeps - v.burn_in:,} sweeps each after burn-in"),
                ("±", "two Monte Carlo standard errors of the mean K (chains pooled)"),
                ("point estimate (VI loss)", "the one partition whose expected variation of information to the "
                                             "posterior's draws is smallest (pcrp.summaries.partition)"),
                ("grey points", _tiny_text())]
    if key == "pcrp":
        return [("r", "the pCRP's power: a table of n customers weighs n^r, so a tiny table is much lighter "
                      "beside a large one than under the CRP (r = 1)"),
                ("cross validation's r", f"{facts.r:g}, shipped in {CV_FILE} (step 6 shows how it is chosen)")]
    if key == "threshold":
        return [("Sim 1", f"the paper's first simulation, K_true = {facts.true_k}: {_about_sim(facts.about)}"),
                ("merge path", "start from a CRP fit's point estimate and merge, again and again, the pair of "
                               "clusters the pCRP would merge at the smallest r (pcrp.analyses.path)"),
                ("r*", f"for one fixed partition, the r above which the pCRP prefers a pair merged; a real merge "
                       f"joins two clusters of at least {facts.share:.0%} of the points each. It compares single "
                       "partitions, not posterior mass"),
                ("mean K", f"clusters per draw, averaged over one pCRP chain per r ({K_SWEEPS - K_BURN_IN:,} "
                           "sweeps after burn-in, pcrp.analyses.k_over_r)")]
    if key == "choose":
        return [("the loss, eq. (5)", "the sum over the held-out points' clusters of the square root of their "
                                      "sum of squared distances to the cluster mean: lower when the held-out points "
                                      "fall into compact groups"),
                ("held-out log predictive", "the log density the fitted mixture puts on a held-out point, averaged "
                                            "over the points: higher is better"),
                ("cross validation", f"fit on {facts.folds - 1} of {facts.folds} folds, score the fold left out, "
                                     "each fold in turn")]
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


def _about_sim(description):
    """Sim 1's description (:func:`pcrp.data.load`) without its leading name."""
    head, sep, rest = description.partition(": ")
    return rest if sep and head.startswith("Sim") else description


def _tiny_text():
    from ..app.live_view import TINY_SHARE

    return f"clusters under {TINY_SHARE:.0%} of the points"

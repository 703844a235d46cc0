"""What the Explorer's rows say about each other: a row that merges true classes another keeps apart, and a tuned
row (the pCRP's) that keeps fewer clusters than the reference row (the CRP's) shows to be real, judged like with like
(the same covariance type; pcrp.analyses.collapse). Which row is which is read from the registry's fields
(``reference``, ``tuned``), never a prior's name."""

import numpy as np

from app_pages.explorer_parts.session import explorer
from pcrp.app import live_view
from pcrp.analyses.collapse import MIN_SHARE, covariance_words, judge
from pcrp.model import PRIORS
from pcrp.plots.palette import COLOUR_NAMES

def merge_notes(run, shown):
    """{group: text} for each row that merges true classes which another row keeps apart (by the partitions
    shown), naming the classes by their colours ("merges true green + blue"); empty without true labels."""
    truth = run.dataset.labels
    if truth is None:
        return {}
    reference = live_view.reference_colours(truth)
    merged = {group: live_view.merged_true_clusters(truth, labels) for group, labels in shown.items()}
    notes = {}
    for group, groups in merged.items():
        others = [g for g in merged if g != group and not merged[g]]
        if groups and others:
            names = [" + ".join(sorted(COLOUR_NAMES[int(reference[truth == c][0]) % len(COLOUR_NAMES)]
                                       for c in classes)) for classes in groups]
            notes[group] = (f":orange[**merges true {' and '.join(names)}**], which {' and '.join(others)} "
                            "keeps apart")
    return notes


def group_prior(run, group):
    """The registry entry (pcrp.model.PriorSpec) of one group's prior."""
    return PRIORS[run.config["priors"][group]["prior"]]


def reference_group(run):
    """The run's reference row (the first whose prior is the over-clustering reference, the CRP), or None."""
    return next((g for g in run.groups if group_prior(run, g).reference), None)


REFERENCE_FRAMES = 50  # the CRP row's latest replay frames after burn-in that the live collapse note reads


def builtin_name(run):
    """The built-in data set a run clusters ("old-faithful", ...), or None (an uploaded file)."""
    source = run.dataset.source or {}
    return source.get("name") if source.get("kind") == "builtin" else None


def live_crp_reference(run, crp_snaps):
    """What the CRP row shows to be real so far, a pcrp.analyses.collapse.Reference
    (pcrp.analyses.run_summary.live_data_reference): the clusters of at least 2% of the points in the point estimate of
    its first chain's latest replay frames after burn-in (and its partition now), with this run's covariance type,
    backed by what is known of these data (their true classes; for a built-in data set the covariance type its
    shipped comparison supports, under which the CRP's pieces of one cluster are joined, and the clusters cross
    validation of r for this type keeps at these settings); None before the burn-in ends. Cached per run and frame
    count: it changes only when a frame is added. None too while the server's warm-up still compiles the point
    estimate's search (pcrp.app.warm_up): a redraw does not wait for it."""
    from pcrp.analyses.run_summary import live_data_reference
    from pcrp.app import warm_up

    search = warm_up.state("search")
    if search.started and not search.ready and not search.error:
        return None  # the point estimate's search still compiles apart: a redraw does not wait for it (a note later)
    first = crp_snaps[0]
    after = [frame for frame, sweep in zip(first.replay, first.replay_sweeps) if sweep > run.plan.burn_in]
    if not after:
        return None
    key = (len(after), run.live)
    view = explorer().view(run)
    if view.crp_reference is not None and view.crp_reference[0] == key:
        return view.crp_reference[1]
    reference = live_data_reference(np.stack(after[-REFERENCE_FRAMES:] + [first.labels]), run.dataset.X,
                                    crp_from="the CRP row", covariance_type=run.niw.covariance_type,
                                    name=builtin_name(run), data=run.dataset, true_labels=run.dataset.labels)
    view.crp_reference = (key, reference)
    return reference


def fit_words(run, group):
    """"the pCRP row (r = 1.7, diagonal covariances)": a row's fit in words, its tuned parameter and covariance type."""
    spec = group_prior(run, group)
    params = run.config["priors"][group]
    about = [f"{spec.tuned} = {params[spec.tuned]:g}"] if spec.tuned and spec.tuned in params else []
    about.append(covariance_words(run.niw.covariance_type))
    return f"the {group} row ({', '.join(about)})"


def collapse_notes(run, groups):
    """{group: text} for each tuned row (the pCRP's) that keeps fewer clusters than the CRP row shows to be real
    (pcrp.analyses.collapse.judge: a chain's mean K after burn-in more than half a cluster below the reference of
    :func:`live_crp_reference`): red where the reference is backed by the truth or by cross validation of this very
    covariance type (collapsed), orange where it is the CRP's count alone (fewer clusters than the CRP, which by itself
    shows no merge); and on the CRP row, when a note cites its point estimate's count, that count (the number a note
    cites is shown beside it, not only the CRP's clusters now). Empty without a CRP row or before the burn-in ends.
    Disagreeing chains are the R-hat badge's to say."""
    crp = reference_group(run)
    if crp is None:
        return {}
    reference = live_crp_reference(run, groups[crp])
    if reference is None:
        return {}
    notes, cites_crp = {}, False
    for group, snaps in groups.items():
        after = [s.K[run.plan.burn_in:] for s in snaps]
        if group_prior(run, group).tuned is None or not all(a.size for a in after):
            continue
        verdict = judge([a.mean() for a in after], reference=reference, what=fit_words(run, group),
                        prior=run.config["priors"][group]["prior"])
        if verdict.collapsed:
            notes[group] = f":red[**{verdict.short}**]"
        elif verdict.fewer:
            notes[group] = f":orange[{verdict.short}]"
        else:
            continue
        cites_crp = cites_crp or (reference.crp is not None and reference.truth != reference.clusters
                                  and reference.cv != reference.clusters)
    if cites_crp:
        notes[crp] = crp_count_words(reference)
    return notes


def crp_count_words(reference):
    """The CRP row's count that a note cites (a Reference counted from its point estimate), in the words of the
    note: "its point estimate so far: 3 clusters of 2%+ of the points" (and the count once the pieces that the
    covariance type the data support would join are joined, where that is the count cited)."""
    words = (f"its point estimate so far: {reference.crp} cluster{'s' if reference.crp != 1 else ''} of "
             f"{MIN_SHARE:.0%}+ of the points")
    if reference.crp_joined is not None and reference.crp_joined != reference.crp:
        words += (f", {reference.crp_joined} once joined as {covariance_words(reference.supported)} (the type these "
                  "data support) would join them")
    return words

"""What the Explorer's rows say about each other: a row that merges true classes another keeps apart, and a tuned
row (the pCRP's) that has collapsed below the clusters the reference row (the CRP's) keeps. Which row is which is read
from the registry's fields (``reference``, ``tuned``), never a prior's name."""

import numpy as np

from app_pages.explorer_parts.session import explorer
from pcrp.app import explorer_settings as es, live_view
from pcrp.analyses.collapse import judge, live_reference
from pcrp.model import PRIORS
from pcrp.plots.palette import COLOUR_NAMES

# What to watch for on each built-in data set, for the default pair of rows (the CRP over the pCRP), with figures
# measured at the data set's shipped r and data settings (pcrp/datasets/cv_r.json; "{r}" is filled from it):
# bench/default_demo.py, 2,000 sweeps = 20 s at 100 sweeps/s, seeds 0-3, k-means start: Old Faithful CRP more
# coloured clusters in 62% of sweeps, Sim 2 tiny clusters CRP 1.32, pCRP 0.37 (2026-12-04); MNIST: 2 chains of 2,000
# sweeps, run seeds 0-1, at r = 1.1 and 1.5: python bench/mnist_demo.py --settings spectral:2 --seeds 2 --r 1.1,1.5
# (docs/records/mnist_demo.md). WATCH_FOR_R: the r each line's figures were measured at; a test holds it to the
# shipped r, so a new cv_r.json asks for the figures to be measured again.
WATCH_FOR = {
    "old-faithful": "two eruption types. The CRP keeps opening extra clusters beside them (grey = tiny); in the "
                    "first 20 s it shows more coloured clusters than the pCRP at r = {r} in about 6 sweeps of 10.",
    "sim1": "three true clusters, one narrow and one wide. The CRP splits them into about 5 clusters; the pCRP at "
            "r = {r} keeps about 3 + 1 tiny. At r = 1.3 the pCRP merges two true clusters (its row says which).",
    "sim2": "three equal, well-separated clusters. Both rows find them; the CRP adds about 1.3 tiny clusters in "
            "the tails at any moment, the pCRP at r = {r} about a quarter as many.",
    "mnist": "digits 1-4 in a 2-D spectral embedding. At the cross-validated r = {r} the pCRP keeps only about one "
             "cluster fewer than the CRP (about 6.5 against 7.5) at about the same NMI (0.65 against 0.63): a "
             "digit's cloud is not one Gaussian, and cross validation keeps the splits that predict held-out digits. "
             "At r = 1.5 the pCRP keeps about 4 clusters, about 3 of them big: it merges digits (NMI 0.61).",
}
WATCH_FOR_R = {"old-faithful": 1.7, "sim1": 1.1, "sim2": 1.2, "mnist": 1.1}


def watch_for(values):
    """The "What to watch for" line of the data set and rows in ``values`` (the Explorer's settings), or None where
    there is none (a CSV, rows other than the CRP over the pCRP). Its r is the data set's shipped one
    (pcrp.analyses.cv.builtin_r, the same as the pCRP row's caption and the Lesson's), and where the pCRP row runs at
    another r, or the data differ from those r was chosen on, or the clusters' covariance is not full (the type the
    figures and r are for), the line says that its figures are not this row's."""
    from pcrp.analyses.cv import builtin_r_table

    from app_pages.explorer_parts.model_sidebar import builtin_r_matches

    name = values["data"]
    rows = es.active_rows(values)
    default_pair = tuple(es.ROW_DEFAULT_PRIORS[row] for row in es.ROWS[:2])
    if name not in WATCH_FOR or tuple(values[es.prior_key(row)] for row in rows) != default_pair:
        return None
    shipped = float(builtin_r_table()[name]["r"])
    text = WATCH_FOR[name].format(r=f"{shipped:g}")
    tuned = [es.tuned_key(values, row) for row in rows if es.tuned_key(values, row) is not None]
    row_r = float(values[tuned[0]]) if tuned else shipped
    notes = []
    if not builtin_r_matches(name, values):
        chosen = builtin_r_table()[name]["data"]
        where = (f"N = {chosen['n']}, data seed {chosen['seed']}" if name in ("sim1", "sim2") else
                 "the default data settings")
        notes.append(f"these figures are for {es.SOURCE_LABELS[name]} at {where}")
    if abs(row_r - shipped) > 1e-9:
        notes.append(f"the pCRP row runs at r = {row_r:g}, not the cross-validated {shipped:g}, so expect other "
                     "figures")
    if values.get("covariance", "full") != "full":
        notes.append(f"these figures are for full covariances; the rows run with {values['covariance']} ones")
    if notes:
        text += " Note: " + "; ".join(notes) + "."
    return text



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


def live_crp_reference(run, crp_snaps):
    """The clusters the CRP row keeps so far: pcrp.analyses.collapse.live_reference of its first chain's latest replay frames
    after burn-in (and its partition now); None before the burn-in ends. Cached per run and frame count: it
    changes only when a frame is added."""
    first = crp_snaps[0]
    after = [frame for frame, sweep in zip(first.replay, first.replay_sweeps) if sweep > run.plan.burn_in]
    if not after:
        return None
    key = (len(after), run.live)
    view = explorer().view(run)
    if view.crp_reference is not None and view.crp_reference[0] == key:
        return view.crp_reference[1]
    reference = live_reference(np.stack(after[-REFERENCE_FRAMES:] + [first.labels]))
    view.crp_reference = (key, reference)
    return reference


def collapse_notes(run, groups):
    """{group: text} for each tuned row (the pCRP's) that has collapsed below the clusters the CRP row keeps on the same data
    (pcrp.analyses.collapse: a chain's mean K after burn-in more than half a cluster below the clusters of the point
    estimate of the CRP row's latest frames, :func:`live_crp_reference`, counting clusters of at least 2% of the
    points); empty without a CRP row or before the burn-in ends. Disagreeing chains are the R-hat badge's to say."""
    crp = reference_group(run)
    if crp is None:
        return {}
    reference = live_crp_reference(run, groups[crp])
    if reference is None:
        return {}
    notes = {}
    for group, snaps in groups.items():
        after = [s.K[run.plan.burn_in:] for s in snaps]
        if group_prior(run, group).tuned is None or not all(a.size for a in after):
            continue
        verdict = judge([a.mean() for a in after], reference=reference, reference_name="the CRP row")
        if verdict.collapsed:
            notes[group] = f":red[**COLLAPSED** below the CRP's {reference} clusters]"
    return notes

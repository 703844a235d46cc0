"""What the Explorer's rows say about each other: a row that merges true classes another keeps apart, and a tuned
row (the pCRP's) that has collapsed below the clusters the reference row (the CRP's) keeps. Which row is which is read
from the registry's fields (``reference``, ``tuned``), never a prior's name."""

import numpy as np
import streamlit as st

from pcrp.app import live_view
from pcrp.analyses.collapse import judge, live_reference
from pcrp.model import PRIORS
from pcrp.plots.palette import COLOUR_NAMES

state = st.session_state



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
    key = (run.token, len(after), run.live)
    cached = state.get("live_crp_reference")
    if cached is not None and cached[0] == key:
        return cached[1]
    reference = live_reference(np.stack(after[-REFERENCE_FRAMES:] + [first.labels]))
    state.live_crp_reference = (key, reference)
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

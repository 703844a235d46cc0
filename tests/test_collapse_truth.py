"""A verdict that would call the truth collapsed is a bug (issue 57): on data sets of known truth, fitted with each
covariance type, a pCRP fit that keeps the true number of clusters is never called collapsed, whatever the CRP
keeps beside it.

The cases are generated: well-separated Gaussian clusters of each type's own shape (round, axis-aligned elongated,
tilted), each fitted with every covariance type (the tilted ones with diagonal or spherical covariances are the Old
Faithful case: the CRP keeps pieces of a tilted cluster, or points between two, as clusters of their own), at
N = 150 (where 2% of the points is 3 of them, so the CRP's small clusters count) and N = 300. The reference is made
as every front end makes it (pcrp.analyses.run_summary.reference_fit, then backed_reference with or without the true
labels), and the fit "that keeps the true number of clusters" is a set of chains whose mean K is that number.
"""

import numpy as np
import pytest

from pcrp.analyses.collapse import FALL, judge
from pcrp.analyses.run_summary import reference_fit, with_truth
from pcrp.model import COVARIANCE_TYPES, make_prior
from pcrp.runs.run_spec import make_run_spec

SHAPES = ("round", "elongated", "tilted")


def mixture(shape, k, n, seed):
    """(X (n, 2), labels): k clusters of ``shape`` (round: sd 1; elongated: sd 1.6 and 0.4 along the axes; tilted:
    the same, turned 45 degrees), their centres on a circle far enough apart that no cluster touches another."""
    rng = np.random.default_rng(seed)
    angles = 2 * np.pi * (np.arange(k) / k + rng.uniform(0, 1 / k))
    centres = 9.0 * np.c_[np.cos(angles), np.sin(angles)]
    scale = np.diag([1.0, 1.0]) if shape == "round" else np.diag([1.6, 0.4])
    if shape == "tilted":
        c = s = np.sqrt(0.5)
        scale = np.array([[c, -s], [s, c]]) @ scale
    labels = np.arange(n) % k
    X = centres[labels] + rng.normal(size=(n, 2)) @ scale.T
    return X, labels


CASES = [(shape, k, n, seed) for shape in SHAPES for (k, n) in ((2, 150), (3, 300)) for seed in (0, 1)]


@pytest.fixture(scope="module")
def references():
    """{(case, covariance type): the CRP's Reference on that case's data}: one CRP fit per case and type (pcrp run's
    reference fit, 400 sweeps at most)."""
    out = {}
    for case in CASES:
        X, _ = mixture(*case)
        for covariance_type in COVARIANCE_TYPES:
            spec = make_run_spec(X, prior=make_prior("pcrp", r=1.5), niw={"covariance_type": covariance_type},
                                 iters=400, seed=0, n_jobs=2)
            out[case, covariance_type] = reference_fit(X, spec, 400)
    return out


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-k{c[1]}-n{c[2]}-seed{c[3]}")
def test_a_fit_that_keeps_the_truth_is_never_called_collapsed(references, case):
    """Whatever the CRP keeps (its pieces of a tilted cluster with diagonal covariances, a few stray points at
    N = 150), chains at the true K are never collapsed: against the CRP's count alone they may keep fewer clusters
    than the CRP, said as such; with the true labels the count is the truth's."""
    X, labels = mixture(*case)
    k = case[1]
    fewer_seen = []
    for covariance_type in COVARIANCE_TYPES:
        crp = references[case, covariance_type]
        assert crp is not None and crp.covariance_type == covariance_type
        for given in (None, labels):
            ref = with_truth(crp, given)
            verdict = judge([k] * 4, reference=ref, what="the pCRP")
            assert not verdict.collapsed and not verdict.flagged, (covariance_type, verdict.text)
            assert "COLLAPSED" not in verdict.text and "are merged" not in verdict.text
            assert verdict.fewer == (crp.crp > k + FALL and given is None)
            if verdict.fewer:
                fewer_seen.append(covariance_type)
                assert f"fewer than the {crp.crp} clusters of at least 2% of the points" in verdict.text
            if given is not None:
                assert ref.truth == k and ref.clusters <= k
        # one cluster fewer than the truth, with the labels known, is a collapse that names the true classes
        below = judge([k - 1] * 4, reference=with_truth(crp, labels), what="the pCRP")
        assert below.collapsed and "true classes are merged" in below.text
    # the CRP with its own shape keeps the clusters apart without pieces: the comparison is with what it keeps
    own = {"round": "spherical", "elongated": "diag", "tilted": "full"}[case[0]]
    assert references[case, own].crp >= k


def pair(n, seed):
    """(X (n, 2), labels): Old Faithful's shape, two tilted clusters (sd 1.6 and 0.4, turned 45 degrees) lying along
    the line that joins their centres, the gap between them shorter than either."""
    rng = np.random.default_rng(seed)
    c = s = np.sqrt(0.5)
    scale = np.array([[c, -s], [s, c]]) @ np.diag([1.6, 0.4])
    labels = np.arange(n) % 2
    return np.array([[-2.75, -2.75], [2.75, 2.75]])[labels] + rng.normal(size=(n, 2)) @ scale.T, labels


CV_CASES = [(shape, 3, 300, seed) for shape in SHAPES for seed in (0, 1)] + [("pair", 2, 300, seed) for seed in (0, 1)]


@pytest.mark.slow
@pytest.mark.parametrize("case", CV_CASES, ids=lambda c: f"{c[0]}-k{c[1]}-seed{c[3]}")
def test_a_count_cross_validation_backs_never_calls_the_truth_collapsed(case):
    """The count that can make a collapse without labels: the CRP's clusters (joined where the type the data support
    joins them) capped by what cross validation of r for the fit's type keeps, where the comparison of the types
    says which the data support (pcrp.analyses.cv.compare_covariance_types, light settings). On two tilted clusters
    lying end to end (Old Faithful's shape) diagonal and spherical covariances cut each into pieces, and the CRP and
    cross validation of those types both count the pieces (4-5 for 2); the type the data support (full) joins them,
    so chains at the true K are never called collapsed, and one cluster fewer is."""
    from pcrp.analyses.collapse import make_reference
    from pcrp.analyses.cv import compare_covariance_types, cv_kept_clusters
    from pcrp.model import make_prior
    from pcrp.runs.chains import run_chains
    from pcrp.summaries.partition import point_estimate

    X, _ = pair(case[2], case[3]) if case[0] == "pair" else mixture(*case)
    k = case[1]
    choice, runs = compare_covariance_types(X, r_grid=[1.01, 1.1, 1.3, 1.5, 1.8, 2.0], folds=3, repeats=1, iters=400,
                                            burn_in=200, thin=10, seed=case[3], n_jobs=2, check=False)
    if case[0] == "pair":
        assert choice.chosen == "full"  # the comparison sees the tilt
    for covariance_type in COVARIANCE_TYPES:
        chains = run_chains(X, make_run_spec(X, prior=make_prior("crp"), niw={"covariance_type": covariance_type},
                                             n_chains=2, iters=600, burn_in=300, thin=5, seed=0, n_jobs=2))
        labels = point_estimate(chains.pooled_labels(), seed=0).labels
        result = runs[covariance_type][0]
        ref = make_reference(labels, X=X, crp_from="the CRP", covariance_type=covariance_type,
                             supported=choice.chosen, cv_mean_k=cv_kept_clusters(result, result.chosen_r),
                             cv_from="cross validation")
        assert ref.shown
        verdict = judge([k] * 4, reference=ref, what="the pCRP")
        assert not verdict.collapsed and not verdict.fewer, (covariance_type, ref, verdict.text)
        assert judge([k - 1] * 4, reference=ref).collapsed, (covariance_type, ref)


def test_the_type_the_data_support_joins_old_faithfuls_pieces_and_a_richer_one_is_not_assumed():
    """Old Faithful's CRP with diagonal covariances keeps a third cluster of 7 points between the eruption types; a
    CRP with full covariances, the type these data support, joins it (2). On four 20-D blobs of 100 points the full
    type joins real blobs (a pairwise merge raises its posterior), which is why a join is only ever made with the
    type the data support, never with a richer one by default."""
    from sklearn.datasets import make_blobs

    from pcrp import data as data_mod
    from pcrp.analyses.collapse import joined_clusters, kept_clusters
    from pcrp.runs.chains import run_chains
    from pcrp.summaries.partition import point_estimate

    X = data_mod.load("old-faithful").X
    chains = run_chains(X, make_run_spec(X, prior=make_prior("crp"), niw={"covariance_type": "diag"}, n_chains=2,
                                         iters=600, burn_in=300, thin=5, seed=0, n_jobs=2))
    labels = point_estimate(chains.pooled_labels(), seed=0).labels
    assert kept_clusters(labels) == 3 and joined_clusters(X, labels, "full") == 2
    assert joined_clusters(X, labels, "diag") == 3  # its own type joins nothing it keeps
    blobs, truth = make_blobs(n_samples=400, centers=4, n_features=20, random_state=0)
    blobs = (blobs - blobs.mean(axis=0)) / blobs.std(axis=0)
    assert joined_clusters(blobs, truth, "full") < 4 and joined_clusters(blobs, truth, "spherical") == 4

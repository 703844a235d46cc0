"""One customer's choice in a real posterior: the inner loop of Algorithm 1 made visible.

Point i is taken out of its cluster; for each remaining cluster k and for a new
one the collapsed Gibbs sampler weighs the prior's seating weight -- W(N_k + 1) / W(N_k)
for cluster k, W(1) V_N(K + 1) / V_N(K) for a new one (docs/design.md section 1.1: g(N_k) and
alpha for the CRP and pCRP) -- by the posterior predictive p(x_i | X_k) (the prior
predictive for a new cluster) and samples from the normalised products.

The pCRP's r in the page's seatings is a data set's own: the r cross-validated for it and shipped
(pcrp/datasets/cv_r.json, :func:`pcrp.analyses.cv.builtin_r`), one r per data set and size from one source. The
one-customer view uses the r of the data set it shows (:data:`CHOICE_DATA` at the settings its r was chosen at); the
restaurant, which has no data, uses Old Faithful's (:data:`RESTAURANT_DATA`), as the lesson does.
"""

from dataclasses import dataclass

import numpy as np
from scipy.special import logsumexp

from ..model.niw_math import log_predictive
from ..model.seating import seating_log_probabilities

# The data sets of the one-customer view: the page's label -> built-in name, loaded at its defaults
# (pcrp.data.load(name): the settings its shipped r was cross-validated at).
CHOICE_DATA = {"Old Faithful": "old-faithful", "Sim 1": "sim1"}
# Whose r the restaurant's pCRP starts at (it seats customers without data): Old Faithful's, as in the lesson.
RESTAURANT_DATA = "old-faithful"


def choice_data(label):
    """The data set of the one-customer view called ``label`` (a key of :data:`CHOICE_DATA`)."""
    from .. import data

    return data.load(CHOICE_DATA[label])


def data_r(name):
    """(r, provenance): the pCRP power cross-validated for built-in data set ``name`` at its default settings and
    shipped with pcrp (:func:`pcrp.analyses.cv.builtin_r`), with the sentence that says how it was chosen."""
    from ..analyses.cv import builtin_r

    return builtin_r(name)


def with_data_r(priors, name):
    """``priors`` with the tuned parameter of the cross-validated prior (the pCRP's r; :data:`pcrp.model
    .DEFAULT_PRIOR`) at :func:`data_r` of built-in data set ``name``; every other prior as given."""
    from ..model import DEFAULT_PRIOR, make_prior

    r = data_r(name)[0]
    out = []
    for prior in priors:
        tuned = prior.spec.tuned
        if prior.name == DEFAULT_PRIOR and tuned is not None:
            prior = make_prior(prior.name, **{**prior.get_params(), tuned: r})
        out.append(prior)
    return out


@dataclass
class Choice:
    """Options for point i: clusters (sizes without i, largest first) then "new".

    All arrays have length K + 1: sizes (int, 0 for new), prior (normalised seating
    weights), log_predictive (log p(x_i | X_k), in log density units of X),
    likelihood_share (predictive densities normalised to sum to 1) and posterior.
    ``cluster_ids`` holds the label of each existing cluster (-1 for new).
    """

    cluster_ids: np.ndarray
    sizes: np.ndarray
    prior: np.ndarray
    log_predictive: np.ndarray
    likelihood_share: np.ndarray
    posterior: np.ndarray


def seating_choice(X, labels, i, niw, prior):
    """Algorithm 1's full conditional for point i of X (N, d) given the other labels (N,)."""
    X = np.asarray(X, dtype=float)
    others = np.arange(X.shape[0]) != i
    ids, sizes = np.unique(np.asarray(labels)[others], return_counts=True)
    order = np.argsort(-sizes, kind="stable")
    ids, sizes = ids[order], sizes[order]
    log_pred = np.array(
        [log_predictive(X[i], X[others & (labels == k)], niw.m0, niw.kappa0, niw.nu0, niw.S0) for k in ids]
        + [log_predictive(X[i], X[:0], niw.m0, niw.kappa0, niw.nu0, niw.S0)])
    log_prior = seating_log_probabilities(prior, sizes)  # point i is customer N, the others seated
    log_post = log_prior + log_pred
    return Choice(
        cluster_ids=np.append(ids, -1),
        sizes=np.append(sizes, 0),
        prior=np.exp(log_prior),
        log_predictive=log_pred,
        likelihood_share=np.exp(log_pred - logsumexp(log_pred)),
        posterior=np.exp(log_post - logsumexp(log_post)),
    )


def contrast(X, labels, niw, priors, points=None):
    """How differently ``priors`` (two or more) seat each point: for every point i of X (N, d) given the other
    labels (N,), the largest total-variation distance between two priors' full conditionals (Choice.posterior),
    and the lowest top probability among them (1: every prior is certain where i goes). Returns (tv, top),
    arrays (len(points),) for ``points`` (default: all N)."""
    points = np.arange(np.asarray(X).shape[0]) if points is None else np.asarray(points)
    tv = np.empty(points.size)
    top = np.empty(points.size)
    for j, i in enumerate(points):
        post = [seating_choice(X, labels, i, niw, p).posterior for p in priors]
        tv[j] = max(0.5 * np.abs(a - b).sum() for a_i, a in enumerate(post) for b in post[a_i + 1:])
        top[j] = min(p.max() for p in post)
    return tv, top


def informative_point(X, labels, niw, priors):
    """The point whose full conditional differs most between ``priors`` (largest total-variation distance, see
    :func:`contrast`; ties to the lowest index): a default for the one-customer view that shows the priors
    disagreeing, where a random point is usually seated with probability about 1 under every prior."""
    tv, _ = contrast(X, labels, niw, priors)
    return int(np.argmax(tv))

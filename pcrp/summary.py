"""Summaries of chains: clustering metrics, posterior of K, posterior density.

Metric conventions (stated in the app next to every number):
- NMI = I(U; V) / sqrt(H(U) H(V)) ("geometric" normalisation, the authors' choice and
  scikit-learn's ``average_method="geometric"``); 1 for identical partitions.
- VI = H(U | V) + H(V | U) in bits (log base 2, the authors' choice); 0 for identical partitions.
"""

import numpy as np

from scipy import stats
from sklearn.metrics import mutual_info_score, normalized_mutual_info_score

from .niw_math import student_t_params


def nmi(true, pred):
    """Normalised mutual information, geometric normalisation (1 when both are one cluster).

    scikit-learn's ``normalized_mutual_info_score(average_method="geometric")``; true, pred (N,) labels.
    """
    return float(normalized_mutual_info_score(true, pred, average_method="geometric"))


def vi(true, pred, base=2.0):
    """Variation of information H(U|V) + H(V|U) = H(U) + H(V) - 2 I(U; V), in bits by default.

    true, pred (N,) labels. The mutual information is scikit-learn's (from a sparse contingency table,
    so a draw with thousands of clusters needs no dense K x K table).
    """
    _, counts_u = np.unique(true, return_counts=True)
    _, counts_v = np.unique(pred, return_counts=True)
    nats = stats.entropy(counts_u) + stats.entropy(counts_v) - 2.0 * mutual_info_score(true, pred)
    return float(max(nats, 0.0) / np.log(base))


def metric_summary(true, label_draws):
    """Mean and standard error of NMI and VI over label draws (n_draws, N)."""
    out = {}
    for name, fn in (("NMI", nmi), ("VI", vi)):
        values = np.array([fn(true, z) for z in label_draws])
        se = values.std(ddof=1) / np.sqrt(len(values)) if len(values) > 1 else np.nan
        out[name] = (float(values.mean()), float(se))
    return out


def k_posterior(K):
    """(values, probabilities) of the number of clusters over the given sweeps."""
    values, counts = np.unique(np.asarray(K), return_counts=True)
    return values, counts / counts.sum()


def oracle_alpha(k_true, n):
    """CRP-Oracle concentration: alpha = K_true / ln N, so that alpha ln N matches K_true."""
    return float(k_true) / float(np.log(n))


def posterior_density_1d(grid, X, labels, niw):
    """Mixture density on ``grid`` (G,) for 1-D data given one labelling.

    Each cluster contributes weight N_k / N times its posterior predictive (Student-t).
    Returns (density (G,), components (K, G)) in the units of X.
    """
    X = np.asarray(X).reshape(-1, 1)
    N = X.shape[0]
    comps = []
    for k in np.unique(labels):
        block = X[labels == k]
        comps.append(block.shape[0] / N * _predictive_many(np.asarray(grid).reshape(-1, 1), block, niw))
    comps = np.array(comps)
    return comps.sum(axis=0), comps


def averaged_density_1d(grid, X, label_draws, niw, max_draws=50):
    """Posterior density on ``grid`` (G,) averaged over up to ``max_draws`` evenly spaced draws (S, N)."""
    label_draws = np.asarray(label_draws)
    picks = np.unique(np.linspace(0, len(label_draws) - 1, min(max_draws, len(label_draws))).astype(int))
    return np.mean([posterior_density_1d(grid, X, label_draws[s], niw)[0] for s in picks], axis=0)


def posterior_density_2d(xx, yy, X, labels, niw):
    """2-D mixture density on a mesh (xx, yy of equal shape): sum_k N_k / N * predictive_k."""
    points = np.column_stack([xx.ravel(), yy.ravel()])
    N = X.shape[0]
    total = np.zeros(points.shape[0])
    for k in np.unique(labels):
        block = X[labels == k]
        total += block.shape[0] / N * _predictive_many(points, block, niw)
    return total.reshape(xx.shape)


def _predictive_many(points, block, niw):
    df, loc, scale = student_t_params(block, niw.m0, niw.kappa0, niw.nu0, niw.S0)
    return np.atleast_1d(stats.multivariate_t(loc=loc, shape=scale, df=df).pdf(points))

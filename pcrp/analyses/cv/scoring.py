"""Scoring a split's fits on its held-out points (paper Sec. 2.3, eq. 5): the splits, each split's training and
held-out parts prepared with nothing learnt from the held-out rows, one pCRP fit per (split, r) and its scores.

- **Loss of eq. (5)**: every held-out point joins the existing cluster k that maximises its posterior seating
  probability (the prior's seating weight times the Student-t predictive, new tables excluded), and the loss is
  sum_k sqrt(sum_{j in C_k} ||x_j - xbar_k||^2) over the held-out points, with xbar_k the mean of the held-out
  points in cluster k. It is averaged over draws.
- **Held-out log predictive density** per point: log of the posterior predictive density of the held-out point,
  averaged over draws inside the log (log mean_s p(x | draw s)), new table included; higher is better.
"""

from dataclasses import dataclass

import numpy as np

from ...model import NIW, resolve_niw
from ..path import FIT_INIT, tuned_prior
from .settings import CVError


def within_cluster_loss(X, labels):
    """Eq. (5): sum over clusters of sqrt(within-cluster sum of squares).

    X (n, d); labels (n,) any integer codes. Returns a float in the units of X.
    """
    X = np.asarray(X, dtype=float).reshape(len(labels), -1)
    total = 0.0
    for k in np.unique(labels):
        block = X[labels == k]
        total += np.sqrt(((block - block.mean(axis=0)) ** 2).sum())
    return float(total)


def score_held_out(X_train, label_draws, X_test, prior, niw):
    """Score draws of a training partition on held-out points.

    X_train (n, d); label_draws (S, n) int; X_test (m, d). Returns
    (loss (S,), log_pred_density (m,)): the eq. (5) loss of the seating of the
    held-out points under each draw, and for each held-out point
    log mean_s p(x | draw s). A held-out point is seated by the prior's rule as customer n + 1
    (:func:`pcrp.analyses.density.seating_log_predictive`): for the loss it joins the existing cluster of highest
    posterior seating probability (new tables excluded); its predictive density includes a new table.
    """
    from scipy.special import logsumexp  # here: importing pcrp.analyses.cv for a run's r loads no SciPy

    from ..density import seating_log_predictive

    X_test = np.ascontiguousarray(X_test, dtype=float)
    losses = np.empty(len(label_draws))
    per_draw = np.empty((len(label_draws), X_test.shape[0]))
    for s, labels in enumerate(label_draws):
        seat = seating_log_predictive(X_test, X_train, labels, prior, niw)  # (m, K + 1), last: a new cluster
        losses[s] = within_cluster_loss(X_test, seat[:, :-1].argmax(axis=1))
        per_draw[s] = logsumexp(seat, axis=1)
    lpd = logsumexp(per_draw, axis=0) - np.log(len(label_draws))
    return losses, lpd


@dataclass
class SplitScore:
    """What one (split, r) fit returns."""

    split: int
    r_index: int
    loss: float  # mean over kept draws of the eq. (5) loss
    log_pred: float  # mean over held-out points of log mean_s p(x | draw s)
    mean_k: float  # mean K of the training chain after burn-in


@dataclass
class PreparedSplit:
    """One split as its fits see it: X_train (n, d) and X_test (m, d) in the training part's units, and
    the NIW prior resolved on the training part."""

    X_train: np.ndarray
    X_test: np.ndarray
    niw: NIW


def prepare_split(X, train, test, niw=None, standardize=False):
    """The training and held-out parts of X (N, d) with nothing learnt from the held-out rows.

    standardize: z-score both parts with the training part's column means and standard deviations.
    niw: None (every NIW setting from the documented defaults of the training part), a dict of
        fixed settings {m0, kappa0, nu0, S0} (the others from the training part), or an NIW used
        as given. Z-scoring data that were already z-scored on all rows gives exactly the
        training-part z-scores of the raw data, so callers may pass either.
    """
    X_train, X_test = X[train], X[test]
    if standardize:
        center, scale = X_train.mean(axis=0), X_train.std(axis=0)
        if not np.all(scale > 0):
            column = int(np.flatnonzero(~(scale > 0))[0])
            raise CVError(f"Column {column + 1} is constant on a training fold, so it cannot be standardised: "
                          "use fewer folds or drop that column.")
        X_train, X_test = (X_train - center) / scale, (X_test - center) / scale
    if not isinstance(niw, NIW):
        niw = resolve_niw(X_train, **(niw or {}))
    return PreparedSplit(np.ascontiguousarray(X_train), np.ascontiguousarray(X_test), niw)


def fit_and_score(part, split, r_index, r, alpha, iters, burn_in, thin, seed, split_merge, work=None):
    """Fit a chain of the tuned prior (the pCRP at ``r``) from :data:`pcrp.analyses.path.FIT_INIT` on a :class:`PreparedSplit`'s training part and score its held-out part
    (top level so it pickles). ``work``: a :class:`pcrp.sampling.compute.WorkTicket` (see :func:`pcrp.runs.chains.run_chains`)."""
    from ...runs.chains import run_chains
    from ...runs.run_spec import make_run_spec

    prior = tuned_prior(alpha, r)
    spec = make_run_spec(part.X_train, prior=prior, niw=part.niw, n_chains=1, init=FIT_INIT, iters=iters,
                         burn_in=burn_in, thin=thin, seed=seed, split_merge=split_merge, n_jobs=1)
    chain = run_chains(part.X_train, spec, work=work)
    losses, lpd = score_held_out(part.X_train, chain.labels[0], part.X_test, prior, part.niw)
    return SplitScore(split, r_index, float(losses.mean()), float(lpd.mean()),
                      float(chain.K_after_burn_in.mean()))


def make_splits(n, folds, repeats, seed):
    """[(train indices, test indices)] for ``repeats`` shuffled ``folds``-fold partitions of range(n)."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(repeats):
        order = rng.permutation(n)
        for part in np.array_split(order, folds):
            test = np.sort(part)
            out.append((np.setdiff1d(np.arange(n), test), test))
    return out

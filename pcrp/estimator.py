"""A scikit-learn style estimator: ``PCRPMixture().fit(X)``.

>>> model = PCRPMixture(prior="pcrp", r=1.3, random_state=0).fit(X)
>>> model.labels_, model.n_clusters_        # point-estimate partition (expected VI by default)
>>> model.predict_proba(X_new)              # (M, K + 1): each cluster of the point estimate, and a new one
>>> model.chains_.diagnostics()["K"]["rhat"]

Follows scikit-learn's conventions: keyword-only parameters stored as given and checked at fit
against a declarative constraint table; everything resolved at fit has a trailing underscore.
The data are used as given (standardise them first, e.g. in a Pipeline with StandardScaler); the
NIW defaults are resolved from them (:func:`pcrp.model.resolve_niw`, stored in ``niw_``).
"""

from numbers import Integral, Real

import numpy as np
from scipy.special import logsumexp
from sklearn.base import BaseEstimator, ClusterMixin, _fit_context
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from .chains import run_chains
from .density import seating_log_predictive
from .model import DEFAULT_R, make_prior, resolve_niw
from .partition import LOSSES, point_estimate, similarity_matrix


class PCRPMixture(ClusterMixin, BaseEstimator):
    """Infinite Gaussian mixture with a CRP or powered-CRP prior, fitted by several collapsed Gibbs chains.

    Parameters
    ----------
    prior : {"pcrp", "crp"}, default="pcrp"
        Seating prior: existing cluster of size n has weight n^r (pCRP) or n (CRP); a new one alpha.
    alpha : float > 0, default=1.0
        Concentration (new-table weight).
    r : float > 0, default=pcrp.model.DEFAULT_R (1.1, the registry's default)
        pCRP power (ignored for the CRP); choose it for your data with :func:`pcrp.cv.cross_validate`.
    n_chains : int >= 1, default=4
        Chains from the starts in ``init`` (R-hat needs two or more).
    iters, burn_in, thin : int, default=2000, 1000, 5
        Sweeps per chain, sweeps discarded, and keep every thin-th sweep after burn-in.
    split_merge : bool or int >= 0, default=True
        Split-merge moves per sweep (False = the paper's plain Gibbs).
    init : str, list of str, or None, default=None
        Starts per chain, cycled ('one', 'random:K', 'kmeans:K'); None = :data:`pcrp.chains.DEFAULT_INITS`.
    loss : {"vi", "binder"}, default="vi"
        Loss whose posterior expectation the point estimate ``labels_`` minimises.
    m0, kappa0, nu0, S0 : NIW hyperparameters, default None = the data-driven defaults.
    n_predict_draws : int >= 1, default=200
        Kept draws (evenly spaced over all chains) averaged by predict_proba and score_samples.
    n_jobs : int or None, default=None
        Threads for the chains (joblib semantics: None = 1 unless in a joblib context, -1 = all cores).
    random_state : int, RandomState instance or None, default=None
        Seed of the chains and of the point-estimate search.

    Attributes
    ----------
    labels_ : (N,) int64, the point-estimate partition, clusters numbered by size (0 = largest).
    n_clusters_ : int, clusters in ``labels_``.
    expected_loss_ : float, posterior expected loss of ``labels_`` (bits for VI, share of pairs for Binder).
    psm_ : (N, N) float32, posterior similarity (co-clustering) matrix.
    chains_ : :class:`pcrp.chains.ChainSet`, the chains (diagnostics, InferenceData, save).
    niw_ : :class:`pcrp.model.NIW`, the resolved NIW hyperparameters; prior_: the seating prior.
    seed_ : int or None, the seed the chains were spawned from.
    n_features_in_ : int.
    """

    _parameter_constraints = {
        "prior": [StrOptions({"pcrp", "crp"})],
        "alpha": [Interval(Real, 0, None, closed="neither")],
        "r": [Interval(Real, 0, None, closed="neither")],
        "n_chains": [Interval(Integral, 1, None, closed="left")],
        "iters": [Interval(Integral, 1, None, closed="left")],
        "burn_in": [Interval(Integral, 0, None, closed="left")],
        "thin": [Interval(Integral, 1, None, closed="left")],
        "split_merge": ["boolean", Interval(Integral, 0, None, closed="left")],
        "init": [str, list, tuple, None],
        "loss": [StrOptions(set(LOSSES))],
        "m0": ["array-like", None],
        "kappa0": [Interval(Real, 0, None, closed="neither"), None],
        "nu0": [Real, None],
        "S0": ["array-like", Interval(Real, 0, None, closed="neither"), None],
        "n_predict_draws": [Interval(Integral, 1, None, closed="left")],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
    }

    def __init__(self, *, prior="pcrp", alpha=1.0, r=DEFAULT_R, n_chains=4, iters=2000, burn_in=1000, thin=5,
                 split_merge=True, init=None, loss="vi", m0=None, kappa0=None, nu0=None, S0=None,
                 n_predict_draws=200, n_jobs=None, random_state=None):
        self.prior = prior
        self.alpha = alpha
        self.r = r
        self.n_chains = n_chains
        self.iters = iters
        self.burn_in = burn_in
        self.thin = thin
        self.split_merge = split_merge
        self.init = init
        self.loss = loss
        self.m0 = m0
        self.kappa0 = kappa0
        self.nu0 = nu0
        self.S0 = S0
        self.n_predict_draws = n_predict_draws
        self.n_jobs = n_jobs
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Run the chains on X (N, d) and summarise them. ``y`` is ignored."""
        X = validate_data(self, X, dtype=np.float64)
        X = np.require(X, np.float64, ["C", "W"])  # the kernels take writable C arrays (one compiled signature)
        self.seed_ = self._seed()
        self.prior_ = make_prior(self.prior, alpha=self.alpha, r=self.r)
        self.niw_ = resolve_niw(X, m0=self.m0, kappa0=self.kappa0, nu0=self.nu0, S0=self.S0)
        init = list(self.init) if isinstance(self.init, (list, tuple)) else self.init
        self.chains_ = run_chains(X, self.prior_, self.niw_, n_chains=self.n_chains, init=init, iters=self.iters,
                                  burn_in=self.burn_in, thin=self.thin, seed=self.seed_, n_jobs=self.n_jobs,
                                  split_merge=self.split_merge)
        draws = self.chains_.pooled_labels()
        self.psm_ = similarity_matrix(draws)
        estimate = point_estimate(draws, self.loss, psm=self.psm_, seed=self.seed_)
        self.labels_ = estimate.labels
        self.n_clusters_ = estimate.n_clusters
        self.expected_loss_ = estimate.expected_loss
        self._X = X
        return self

    def _seed(self):
        if self.random_state is None:
            return None
        if isinstance(self.random_state, Integral):
            return int(self.random_state)
        return int(check_random_state(self.random_state).randint(np.iinfo(np.int32).max))

    def _draw_terms(self, X):
        """Per-draw log p_s(x) (S, M) and p_s(cluster k of labels_ | x) (S, M, K + 1)."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        draws = self.chains_.pooled_labels()
        picks = np.unique(np.linspace(0, len(draws) - 1, min(self.n_predict_draws, len(draws))).round().astype(int))
        K = self.n_clusters_
        log_px = np.empty((picks.size, X.shape[0]))
        cond = np.empty((picks.size, X.shape[0], K + 1))
        for j, s in enumerate(picks):
            _, z = np.unique(draws[s], return_inverse=True)
            log_seat = seating_log_predictive(X, self._X, z, self.prior_, self.niw_)  # (M, K_s + 1)
            log_px[j] = logsumexp(log_seat, axis=1)
            p = np.exp(log_seat - log_px[j][:, None])
            # a block of the draw is spread over the point estimate's clusters by its members' share
            overlap = np.zeros((z.max() + 1, K))
            np.add.at(overlap, (z, self.labels_), 1.0)
            overlap /= overlap.sum(axis=1, keepdims=True)
            cond[j, :, :K] = p[:, :-1] @ overlap
            cond[j, :, K] = p[:, -1]
        return log_px, cond

    def score_samples(self, X):
        """(M,) log posterior predictive density log p(x | data), averaged over kept draws inside the log."""
        log_px, _ = self._draw_terms(X)
        return logsumexp(log_px, axis=0) - np.log(log_px.shape[0])

    def score(self, X, y=None):
        """Mean log posterior predictive density per point of X."""
        return float(self.score_samples(X).mean())

    def predict_proba(self, X):
        """(M, K + 1) posterior probabilities that a new point x joins each cluster of ``labels_`` (columns
        0..K-1) or opens a new one (column K), given x and the data.

        For each kept draw, x is seated by the pCRP rule (weights N_l^r and alpha, times each block's
        Student-t predictive); a block of the draw is mapped to the point estimate's clusters in proportion
        to its members in each. Draws are weighted by how well they predict x: P(k | x) =
        sum_s p_s(x) P_s(k | x) / sum_s p_s(x).
        """
        log_px, cond = self._draw_terms(X)
        weights = np.exp(log_px - logsumexp(log_px, axis=0))  # (S, M), each column sums to 1
        return np.einsum("sm,smk->mk", weights, cond)

    def predict(self, X):
        """(M,) the most probable existing cluster of ``labels_`` for each point (new clusters excluded)."""
        return np.argmax(self.predict_proba(X)[:, :-1], axis=1)

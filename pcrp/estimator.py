"""A scikit-learn style estimator: ``PCRPMixture().fit(X)``, with the same defaults as ``pcrp run``.

>>> model = PCRPMixture(random_state=0).fit(X)          # pCRP (r = 1.1), 4 chains on all cores, standardised
>>> model.labels_, model.n_clusters_        # point-estimate partition (expected VI by default)
>>> model.weights_, model.means_, model.covariances_    # its clusters, in the units of X
>>> model.predict_proba(X_new)              # (M, K + 1): each cluster of the point estimate, and a new one
>>> model.chains_.diagnostics()["K"]["rhat"]; model.modes_  # do the chains agree? modes if they do not
>>> PCRPMixture(prior="mfm", gamma=1.0, lam=2.0)           # any prior of pcrp.model.PRIORS

Follows scikit-learn's conventions: keyword-only parameters stored as given and checked at fit against a
declarative constraint table (the prior parameters' table is generated from the registry
:data:`pcrp.model.PRIORS`); everything resolved at fit has a trailing underscore. Defaults are those of
``pcrp run`` and come from the same constants (:data:`pcrp.model.DEFAULT_PRIOR` and each parameter's registry
default; :data:`pcrp.chains.DEFAULT_CHAINS`, ``DEFAULT_ITERS``, ``DEFAULT_BURN_IN``, ``DEFAULT_THIN``,
``DEFAULT_INITS``, ``DEFAULT_N_JOBS``; :data:`pcrp.partition.DEFAULT_LOSS`). The data are z-scored by default
(``standardize=True``, as ``pcrp run`` does for CSV files) with :func:`pcrp.data.standardize`; the NIW
defaults are resolved from the data the sampler sees (:func:`pcrp.model.resolve_niw`, stored in ``niw_``, in
those units), while every attribute and prediction is in the units of X.
"""

import sys
import time
from numbers import Integral, Real

import numpy as np
from scipy.special import logsumexp
from sklearn.base import BaseEstimator, ClusterMixin, _fit_context
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from .chains import (DEFAULT_BURN_IN, DEFAULT_CHAINS, DEFAULT_ITERS, DEFAULT_N_JOBS, DEFAULT_THIN, resolve_inits,
                     run_chains)
from .memory_plan import check_run_memory, run_memory_plan
from .density import seating_log_predictive
from .model import DEFAULT_PRIOR, PRIORS, make_prior, resolve_niw
from .partition import DEFAULT_LOSS, LOSSES, point_estimate, similarity_matrix
from .summary import preload_in_background


def _prior_parameter_names():
    """Every prior parameter name in the registry, in first-seen order."""
    names = []
    for spec in PRIORS.values():
        names += [p.name for p in spec.params if p.name not in names]
    return names


PRIOR_PARAMETERS = tuple(_prior_parameter_names())  # ("alpha", "r", "sigma", "gamma", "lam", "k_max")


def _loosest_interval(name):
    """The widest interval of parameter ``name`` over the priors that have it (each prior checks its own bounds
    at fit through :func:`pcrp.model.make_prior`)."""
    params = [p for spec in PRIORS.values() for p in spec.params if p.name == name]
    lows = [p.low for p in params]
    highs = [p.high for p in params]
    low = None if None in lows else min(lows)
    high = None if None in highs else max(highs)
    low_closed = low is not None and any(p.low == low and p.low_closed for p in params)
    high_closed = high is not None and any(p.high == high and p.high_closed for p in params)
    closed = {(True, True): "both", (True, False): "left", (False, True): "right", (False, False): "neither"}
    return Interval(Real, low, high, closed=closed[(low_closed, high_closed)])


class PCRPMixture(ClusterMixin, BaseEstimator):
    """Infinite Gaussian mixture under a Gibbs-type prior (CRP, powered CRP, Pitman-Yor, MFM, sparse finite
    mixture), fitted by several collapsed Gibbs chains from different starts.

    Parameters
    ----------
    prior : {"pcrp", "crp", "py", "mfm", "sfm"}, default=pcrp.model.DEFAULT_PRIOR ("pcrp")
        Seating prior, a key of :data:`pcrp.model.PRIORS`.
    alpha, r, sigma, gamma, lam, k_max : float or None, default=None
        The prior's parameters (crp: alpha; pcrp: alpha, r; py: alpha, sigma; mfm: gamma, lam; sfm: gamma,
        k_max). None takes the registry default of the chosen prior (pcrp: alpha 1, r 1.1). A parameter the
        chosen prior does not have, given a value, is a ValueError naming the prior's parameters. Choose the
        pCRP's r for your data with :func:`pcrp.cv.cross_validate`.
    standardize : bool, default=True
        Z-score every column before sampling (as ``pcrp run`` does for CSV files); False uses X as given.
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
    m0, kappa0, nu0, S0 : NIW hyperparameters in the units the sampler sees (standardised units when
        ``standardize``), default None = the data-driven defaults.
    n_predict_draws : int >= 1, default=200
        Kept draws (evenly spaced over all chains) averaged by predict_proba and score_samples.
    psm : bool, default=False
        Also compute ``psm_``, the N x N similarity matrix (4 N^2 bytes: 40 MB at N = 3,162; 37 GiB at
        N = 100,000). The point estimate never needs it.
    n_jobs : int or None, default=-1
        Threads for the chains (joblib semantics: -1 = all cores, as ``pcrp run``; None = 1).
    verbose : int, default=0
        0 silent; 1 a progress bar of the sweeps (on stderr, when it is a terminal) and one line with the
        sampling and summary times.
    random_state : int, RandomState instance or None, default=None
        Seed of the chains and of the point-estimate search (``pcrp run --seed S`` = ``random_state=S``).

    Attributes
    ----------
    labels_ : (N,) int64, the point-estimate partition, clusters numbered by size (0 = largest).
    n_clusters_ : int, clusters in ``labels_`` (K).
    expected_loss_ : float, posterior expected loss of ``labels_`` (bits for VI, share of pairs for Binder).
    weights_ : (K,) float, the prior's seating weights of the point estimate's clusters, W(n_k + 1) / W(n_k)
        normalised over the K clusters (n_k / N for the CRP, n_k^r / sum n_l^r for the pCRP).
    weight_new_ : float, the probability that a new point opens a new cluster under the point estimate.
    means_ : (K, d) posterior mean of each cluster's mean given its members (NIW posterior m_n), units of X.
    covariances_ : (K, d, d) posterior mean of each cluster's covariance, S_n / (nu_n - d - 1), units of X.
    psm_ : (N, N) float32 similarity matrix, or None unless ``psm=True``.
    modes_ : list of :class:`pcrp.modes.Mode`; one entry when the chains agree. ``modes_warning_``: a sentence
        when they do not (pooled figures then depend on the starts), else "".
    chains_ : :class:`pcrp.chains.ChainSet`, the chains (diagnostics, InferenceData, save).
    niw_ : :class:`pcrp.model.NIW`, resolved NIW hyperparameters (sampler units); prior_: the seating prior.
    center_, scale_ : (d,) the standardisation, X_sampler = (X - center_) / scale_ (0 and 1 when off).
    n_iter_ : int, sweeps run per chain. seed_ : int or None, the seed the chains were spawned from.
    timing_ : {"sampling": s, "summaries": s}, wall-clock seconds of fit's two stages.
    n_features_in_ : int.
    """

    _parameter_constraints = {
        "prior": [StrOptions(set(PRIORS))],
        **{name: [_loosest_interval(name), None] for name in PRIOR_PARAMETERS},
        "standardize": ["boolean"],
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
        "psm": ["boolean"],
        "n_jobs": [Integral, None],
        "verbose": ["verbose"],
        "random_state": ["random_state"],
    }

    def __init__(self, *, prior=DEFAULT_PRIOR, alpha=None, r=None, sigma=None, gamma=None, lam=None, k_max=None,
                 standardize=True, n_chains=DEFAULT_CHAINS, iters=DEFAULT_ITERS, burn_in=DEFAULT_BURN_IN,
                 thin=DEFAULT_THIN, split_merge=True, init=None, loss=DEFAULT_LOSS, m0=None, kappa0=None, nu0=None,
                 S0=None, n_predict_draws=200, psm=False, n_jobs=DEFAULT_N_JOBS, verbose=0, random_state=None):
        self.prior = prior
        self.alpha = alpha
        self.r = r
        self.sigma = sigma
        self.gamma = gamma
        self.lam = lam
        self.k_max = k_max
        self.standardize = standardize
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
        self.psm = psm
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.random_state = random_state

    def _make_prior(self):
        """The prior from ``prior`` and the parameters given (None = the registry default)."""
        given = {name: getattr(self, name) for name in PRIOR_PARAMETERS if getattr(self, name) is not None}
        return make_prior(self.prior, **given)

    def _standardise(self, X):
        """(center, scale): :func:`pcrp.data.standardize` on the non-constant columns; a constant column
        (or a single row) is only centred."""
        from .data import standardize

        if not self.standardize:
            return np.zeros(X.shape[1]), np.ones(X.shape[1])
        center, scale = X.mean(axis=0), np.ones(X.shape[1])
        varying = np.flatnonzero(np.ptp(X, axis=0) > 0)
        if varying.size:
            _, center[varying], scale[varying] = standardize(X[:, varying], [str(j) for j in varying])
        return center, scale

    def _to_sampler_units(self, X):
        return np.require((X - self.center_) / self.scale_, np.float64, ["C", "W"])

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Run the chains on X (N, d) and summarise them. ``y`` is ignored."""
        from .modes import find_modes

        X = validate_data(self, X, dtype=np.float64)
        self.prior_ = self._make_prior()
        self.center_, self.scale_ = self._standardise(X)
        Z = self._to_sampler_units(X)  # the kernels take writable C arrays (one compiled signature)
        self.seed_ = self._seed()
        self.niw_ = resolve_niw(Z, m0=self.m0, kappa0=self.kappa0, nu0=self.nu0, S0=self.S0)
        init = list(self.init) if isinstance(self.init, (list, tuple)) else self.init
        inits = resolve_inits(init, self.n_chains)
        N, d = Z.shape
        plan = run_memory_plan(N, d, n_chains=self.n_chains, iters=self.iters, burn_in=self.burn_in, thin=self.thin,
                               inits=inits, n_jobs=self.n_jobs, similarity=self.psm)
        check_run_memory(plan, f"This fit of {self.n_chains} chain(s) of {self.iters:,} sweeps keeping "
                               f"{(self.iters - self.burn_in) // self.thin:,} draws each of {N:,} labels, with "
                               "its summaries", advice="Keep fewer draws (a larger thin), run fewer chains at once "
                                                "(n_jobs), or use fewer points.")
        preload_in_background()  # the summaries' imports load while the chains run
        started = time.perf_counter()
        with self._progress() as advance:
            self.chains_ = run_chains(Z, self.prior_, self.niw_, n_chains=self.n_chains, init=init,
                                      iters=self.iters, burn_in=self.burn_in, thin=self.thin, seed=self.seed_,
                                      n_jobs=self.n_jobs, split_merge=self.split_merge, callback=advance)
        self.chains_.config["standardize"] = bool(self.standardize)
        self.chains_.config["loss"] = self.loss
        sampled = time.perf_counter()
        draws = self.chains_.pooled_labels()
        self.psm_ = similarity_matrix(draws) if self.psm else None
        estimate = point_estimate(draws, self.loss, seed=self.seed_)
        self.labels_ = estimate.labels
        self.n_clusters_ = estimate.n_clusters
        self.expected_loss_ = estimate.expected_loss
        self.modes_, self.modes_warning_ = find_modes(self.chains_, loss=self.loss, seed=self.seed_,
                                                      pooled=estimate)
        self._Z = Z
        self._cluster_parameters()
        self.n_iter_ = int(self.chains_.K.shape[1])
        self.timing_ = {"sampling": sampled - started, "summaries": time.perf_counter() - sampled}
        if self.verbose:
            print(f"time: sampling {self.timing_['sampling']:.2f} s, summaries {self.timing_['summaries']:.2f} s",
                  file=sys.stderr)
            if self.modes_warning_:
                print(f"warning: {self.modes_warning_}", file=sys.stderr)
        return self

    def _progress(self):
        """A context giving the chains' callback: a tqdm bar of sweeps when ``verbose``, else a no-op."""
        from contextlib import contextmanager

        @contextmanager
        def bar():
            if not self.verbose:
                yield None
                return
            from tqdm import tqdm

            done = [0] * self.n_chains
            with tqdm(total=self.n_chains * self.iters, unit="sweep", desc=self.prior_.label(), file=sys.stderr,
                      disable=None) as progress:
                def advance(chain_index, sweeps_done):  # from the chains' threads; tqdm's update is thread-safe
                    progress.update(sweeps_done - done[chain_index])
                    done[chain_index] = sweeps_done
                yield advance
        return bar()

    def _cluster_parameters(self):
        """weights_, weight_new_, means_, covariances_ of the point estimate's clusters (units of X)."""
        from .niw_math import posterior_params

        Z, labels, niw = self._Z, self.labels_, self.niw_
        N, d = Z.shape
        K = self.n_clusters_
        sizes = np.bincount(labels, minlength=K)
        log_w = np.append(self.prior_.log_weight(sizes), self.prior_.log_new_weight(N + 1, [K]))
        w = np.exp(log_w - logsumexp(log_w))
        self.weights_ = w[:K] / w[:K].sum()
        self.weight_new_ = float(w[K])
        means = np.empty((K, d))
        covs = np.empty((K, d, d))
        for k in range(K):
            m_n, _, nu_n, S_n = posterior_params(Z[labels == k], niw.m0, niw.kappa0, niw.nu0, niw.S0)
            means[k] = m_n
            # E[Sigma] = S_n / (nu_n - d - 1) exists for nu_n > d + 1 (always with the default nu0 = d + 3);
            # otherwise the posterior mode S_n / (nu_n + d + 1)
            covs[k] = S_n / (nu_n - d - 1) if nu_n > d + 1 else S_n / (nu_n + d + 1)
        self.means_ = means * self.scale_ + self.center_
        self.covariances_ = covs * np.outer(self.scale_, self.scale_)

    def sample(self, n_samples=1):
        """Draw (X (n_samples, d), y (n_samples,)) from the mixture of the point estimate's clusters with
        ``weights_``, ``means_`` and ``covariances_`` (a plug-in of the posterior means, as scikit-learn's
        mixtures sample; the new-cluster mass ``weight_new_`` is left out)."""
        check_is_fitted(self)
        if isinstance(n_samples, bool) or not isinstance(n_samples, Integral) or n_samples < 1:
            raise ValueError(f"n_samples must be a whole number >= 1 (got {n_samples!r}).")
        rng = check_random_state(self.random_state)
        counts = rng.multinomial(n_samples, self.weights_)
        X = np.vstack([rng.multivariate_normal(self.means_[k], self.covariances_[k], int(c))
                       for k, c in enumerate(counts)])
        y = np.repeat(np.arange(self.n_clusters_), counts)
        return X, y

    def _seed(self):
        if self.random_state is None:
            return None
        if isinstance(self.random_state, Integral):
            return int(self.random_state)
        return int(check_random_state(self.random_state).randint(np.iinfo(np.int32).max))

    def _draw_terms(self, X):
        """Per-draw log p_s(x) (S, M) in sampler units and p_s(cluster k of labels_ | x) (S, M, K + 1)."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        Z = self._to_sampler_units(X)
        draws = self.chains_.pooled_labels()
        picks = np.unique(np.linspace(0, len(draws) - 1, min(self.n_predict_draws, len(draws))).round().astype(int))
        K = self.n_clusters_
        log_px = np.empty((picks.size, Z.shape[0]))
        cond = np.empty((picks.size, Z.shape[0], K + 1))
        for j, s in enumerate(picks):
            _, z = np.unique(draws[s], return_inverse=True)
            log_seat = seating_log_predictive(Z, self._Z, z, self.prior_, self.niw_)  # (M, K_s + 1)
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
        """(M,) log posterior predictive density log p(x | data) in the units of X, averaged over kept draws
        inside the log (the standardisation's Jacobian, -sum log scale_, included)."""
        log_px, _ = self._draw_terms(X)
        return logsumexp(log_px, axis=0) - np.log(log_px.shape[0]) - np.log(self.scale_).sum()

    def score(self, X, y=None):
        """Mean log posterior predictive density per point of X."""
        return float(self.score_samples(X).mean())

    def predict_proba(self, X):
        """(M, K + 1) posterior probabilities that a new point x joins each cluster of ``labels_`` (columns
        0..K-1) or opens a new one (column K), given x and the data.

        For each kept draw, x is seated by the prior's rule (weights W(N_l + 1) / W(N_l) and the new-cluster
        weight, times each block's Student-t predictive); a block of the draw is mapped to the point estimate's
        clusters in proportion to its members in each. Draws are weighted by how well they predict x:
        P(k | x) = sum_s p_s(x) P_s(k | x) / sum_s p_s(x).
        """
        log_px, cond = self._draw_terms(X)
        weights = np.exp(log_px - logsumexp(log_px, axis=0))  # (S, M), each column sums to 1
        return np.einsum("sm,smk->mk", weights, cond)

    def predict(self, X):
        """(M,) the most probable existing cluster of ``labels_`` for each point (new clusters excluded)."""
        return np.argmax(self.predict_proba(X)[:, :-1], axis=1)

    def to_inference_data(self):
        """The chains as ArviZ InferenceData (:meth:`pcrp.chains.ChainSet.to_inference_data`) with the data the
        sampler saw (sampler units) as ``observed_data``."""
        check_is_fitted(self)
        return self.chains_.to_inference_data(observed=self._Z)

"""A scikit-learn style estimator: ``PCRPMixture().fit(X)``, with the same defaults as ``pcrp run``.

>>> model = PCRPMixture(random_state=0).fit(X)          # pCRP (r = 1.1), 4 chains, the automatic budget
>>> model.labels_, model.n_clusters_        # point-estimate partition (expected VI by default)
>>> model.weights_, model.means_, model.covariances_    # its clusters' mixing proportions and parameters
>>> model.predict_proba(X_new)              # (M, K): which of the K clusters each new point belongs to
>>> model.predict_new_cluster_proba(X_new)  # (M,): the probability that it would open a new cluster
>>> model.chains_.diagnostics()["K"]["rhat"]; model.modes_; model.converged_, model.stop_reason_
>>> PCRPMixture(prior=PowerCRP(r=1.7))                  # a prior object: its parameters nest as prior__r
>>> PCRPMixture(prior=make_prior("mfm", gamma=1.0, lam=2.0))   # any prior of pcrp.model.PRIORS
>>> PCRPMixture().set_params(prior__r=1.5)              # the default prior is PowerCRP() too
>>> GridSearchCV(PCRPMixture(), {"prior__r": [1.1, 1.5]})

Follows scikit-learn's conventions: keyword-only parameters stored as given, nothing else in ``__init__``; an
object-valued parameter nests its own parameters (``prior__r``, as GaussianProcessRegressor's
``kernel__length_scale``); everything resolved at fit has a trailing underscore. The parameters are checked at fit
by pcrp's own declarations (:data:`pcrp.runs.run_spec.RUN_PARAMS`, :data:`ESTIMATOR_PARAMS`, the NIW's and each
prior's), the same checks ``pcrp run`` makes, with its messages. ``fit`` builds a
:class:`pcrp.runs.run_spec.RunSpec` through :func:`pcrp.runs.run_spec.make_run_spec`, as ``pcrp run`` does, and
runs it with :func:`pcrp.runs.chains.run_chains`. The data are z-scored by default (``standardize=True``, as
``pcrp run`` does for CSV files) with :func:`pcrp.data.standardize`; the NIW defaults are resolved from the data the
sampler sees (stored in ``niw_``, in those units), while every attribute and prediction is in the units of X.
"""

import sys
import warnings
from numbers import Integral

import numpy as np
from scipy.special import logsumexp
from sklearn.base import BaseEstimator, ClusterMixin
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from .analyses.density import seating_log_predictive
from .basics.errors import SettingError
from .basics.params import Declarations, Param
from .model import DEFAULT_PRIOR, PRIORS, GibbsPrior, check_covariance_type, make_prior
from .summaries.partition import DEFAULT_LOSS, LOSSES
from .runs.run_spec import CORES, MAX_SWEEPS, RUN_PARAMS, check_setting, make_run_spec
from .runs.compiling import compile_kernels


# The run settings the estimator takes, checked by their declarations (seed is random_state, scikit-learn's name).
RUN_SETTINGS = ("n_chains", "iters", "burn_in", "max_iters", "thin", "split_merge", "n_jobs")
# The estimator's own numeric parameters (its booleans, loss, init and random_state are checked by kind in fit).
ESTIMATOR_PARAMS = Declarations(
    "PCRPMixture",
    Param("n_predict_draws", "draws averaged by the predictions", 200, 1, MAX_SWEEPS, True, True,
          "Kept draws, evenly spaced over all chains, that predict_proba and score_samples average (all of them "
          "when fewer are kept).", integer=True,
          why_high="more draws than a chain's cap of sweeps are never kept; each draw costs a pass over the data."),
    Param("verbose", "verbosity", 0, 0, 10, True, True,
          "0 silent (nothing on stdout or stderr); 1 or more the kernels' compile message on a first fit, the run's "
          "header, a progress bar and its summary, on stderr.", integer=True,
          why_high="there is one level of detail: every value from 1 prints the same."),
    error=SettingError,
)
# The default prior, an object (the registry's default prior at its defaults: the pCRP, alpha 1, r 1.1), so that its
# parameters nest on the default estimator too: PCRPMixture().set_params(prior__r=1.5), a grid over prior__r. A prior
# is an immutable value (a frozen dataclass, compared with ==, its clone itself), so every estimator may share it:
# set_params replaces it, never changes it.
DEFAULT_PRIOR_OBJECT = make_prior(DEFAULT_PRIOR)


class PCRPMixture(ClusterMixin, BaseEstimator):
    """Infinite Gaussian mixture under a Gibbs-type prior (CRP, powered CRP, Pitman-Yor, MFM, sparse finite
    mixture), fitted by several collapsed Gibbs chains from different starts.

    Parameters
    ----------
    prior : prior object or str, default=PowerCRP()
        The seating prior. A prior object carries its parameters: the default, ``pcrp.model.PowerCRP()`` (the
        registry's default prior :data:`pcrp.model.DEFAULT_PRIOR` at its defaults, alpha 1 and r 1.1),
        ``PowerCRP(alpha=1.0, r=1.7)``, or ``pcrp.model.make_prior("mfm", gamma=1.0, lam=2.0)`` for any prior of
        :data:`pcrp.model.PRIORS` ("crp", "pcrp", "py", "mfm", "sfm", or one registered with
        :func:`pcrp.register_prior` / :func:`pcrp.register_gcrp`, at any time). Its parameters nest, as a kernel's
        do in GaussianProcessRegressor: ``get_params(deep=True)`` shows ``prior__alpha`` and ``prior__r``, and
        ``set_params(prior__r=1.3)`` and ``GridSearchCV(..., {"prior__r": [1.1, 1.5]})`` change them, on the default
        estimator too. This is the one route for a prior's parameters. A prior's name ("crp") is accepted as well and
        takes that prior's registry defaults, but has no parameters to set.

        A prior is an immutable value (a frozen dataclass, compared with ``==``, hashed; scikit-learn's ``clone``
        returns it as it is), so the default object is shared by every estimator safely: ``set_params(prior__r=v)``
        replaces it with ``make_prior(prior.name, **{**prior.get_params(), "r": v})``, a copy checked against the
        declared bounds at once (a value out of bounds, or a parameter the prior does not have, is a ValueError
        naming the prior's parameters; a grid with such a value stops there, before any fit). On a prior given by
        name, ``set_params(prior__r=...)`` is a ValueError saying to give a prior object. Why an object rather than
        a ``prior_params`` dict: the parameters are then single parameters to scikit-learn (a grid over
        ``prior__r`` alone, ``cv_results_["param_prior__r"]``), the prior and its values cannot disagree (an object
        is checked when built), and the estimator's signature stays fixed whatever is registered. Choose the
        pCRP's r for your data with :func:`pcrp.analyses.cv.cross_validate`.
    standardize : bool, default=True
        Z-score every column before sampling (as ``pcrp run`` does for CSV files); False uses X as given.
    n_chains : int, default=4
        Chains from the starts in ``init`` (R-hat needs two or more); at most 8 per core.
    iters : int or None, default=None
        None: the automatic budget (:mod:`pcrp.runs.budget`): sample until split R-hat <= 1.01 and bulk ESS >= 400 for
        K and the log joint with one mode, or ``max_iters`` sweeps. An int: exactly that many sweeps per chain.
    burn_in : int or None, default=None
        Sweeps discarded with a fixed ``iters`` (None: half of them).
    max_iters : int or None, default=None
        The automatic budget's cap (None: 20,000 sweeps).
    thin : int, default=5
        Keep the labels of every thin-th sweep after burn-in (the automatic budget thins more to keep at most
        1,000 per chain).
    split_merge : bool or int >= 0, default=1
        Split-merge moves per sweep (False = the paper's plain Gibbs).
    init : str, list of str, or None, default=None
        Starts per chain, cycled ('one', 'random:K', 'kmeans:K'); None = :data:`pcrp.runs.run_spec.DEFAULT_INITS`.
    loss : {"vi", "binder"}, default="vi"
        Loss whose posterior expectation the point estimate ``labels_`` minimises.
    covariance_type : {"full", "diag", "spherical"}, default="full"
        Each cluster's covariance, with BayesianGaussianMixture's names and meanings: "full" its own d x d matrix
        (Normal-Inverse-Wishart), "diag" its own variance per column (a Normal-Gamma per column), "spherical" its
        own single variance (Normal-Inverse-Gamma). The priors of "diag" and "spherical" give each column's
        variance the prior the NIW gives it (docs/model.md). "tied" (one covariance shared by all clusters) is
        refused: a collapsed sampler needs the data's likelihood to be one marginal per cluster. With
        ``standardize``, "spherical" divides every column by one common scale (the columns' pooled standard
        deviation), so that a cluster's single variance in the sampler's units is a single variance in X's.
    m0 : array-like of shape (d,) or None, default=None
        NIW prior mean of the cluster means, in the units the sampler sees (standardised units when
        ``standardize``); None: the data's mean.
    kappa0 : float or None, default=None
        NIW prior strength of m0, in pseudo-points; None: the data-driven default (0.25).
    nu0 : float or None, default=None
        Inverse-Wishart degrees of freedom, > d - 1; None: d + 3.
    S0 : float, array-like of shape (d, d), or None, default=None
        Inverse-Wishart scale (a float means that times the identity), sampler units; None: the data-driven
        default.
    n_predict_draws : int >= 1, default=200
        Kept draws (evenly spaced over all chains) averaged by predict_proba and score_samples.
    psm : bool, default=False
        Also compute ``psm_``, the N x N similarity matrix (4 N^2 bytes: 40 MB at N = 3,162; 37 GiB at
        N = 100,000). The point estimate never needs it.
    n_jobs : int, default=-1
        Threads for the chains (-1 = all cores, as ``pcrp run``). More than this machine's cores runs on all of them,
        with a UserWarning at fit, never an error (a script written on a bigger machine still runs; the chains are
        CPU-bound, so more threads would only slow them); 0 and values below -1 are refused.
    verbose : int, default=0
        0 silent: nothing on stdout or stderr, not even the message of numba compiling the kernels on a first fit
        (warnings aside: a clamped ``n_jobs``). 1: the compile message when the kernels compile, the run's header,
        a progress bar of the sweeps (tqdm: a terminal bar, or a notebook widget in Jupyter) and the summary
        ``pcrp run`` prints (:func:`pcrp.analyses.run_summary.summary_lines`: why the chains stopped, each chain's K
        and log joint, the point estimate, the modes, the sampling and summary times), on stderr.
    random_state : int, RandomState instance or None, default=None
        Seed of the chains and of the point-estimate search (``pcrp run --seed S`` = ``random_state=S``); None
        draws a fresh seed, recorded in ``seed_``.

    Every parameter is checked when ``fit`` starts, by the declarations ``pcrp run`` checks too (each bound is
    declared once: :data:`pcrp.runs.run_spec.RUN_PARAMS`, :data:`ESTIMATOR_PARAMS`, the NIW's and the prior's), with
    pcrp's messages: a value out of bounds is a ValueError naming the parameter, the value, the range and why; a
    value of the wrong kind (``standardize="yes"``, ``prior=3``) a TypeError.

    Attributes
    ----------
    labels_ : (N,) int64, the point-estimate partition, clusters numbered by size (0 = largest).
    n_clusters_ : int, clusters in ``labels_`` (K).
    expected_loss_ : float, posterior expected loss of ``labels_`` (bits for VI, share of pairs for Binder).
    weights_ : (K,) float, the mixing proportions of the point estimate's clusters (sum to 1), as
        BayesianGaussianMixture's ``weights_``: their posterior mean given the partition, n_k / N (under the CRP
        the weights of the occupied clusters given z are Dirichlet(n_1, .., n_K, alpha); renormalised over the K
        clusters, their mean is n_k / N).
    seating_weights_ : (K + 1,) float, the prior's seating probabilities of a new point under the point estimate
        (sum to 1): W(n_k + 1) / W(n_k) for each cluster (n_k^r for the pCRP) and, last, a new cluster.
    means_ : (K, d) posterior mean of each cluster's mean given its members (NIW posterior m_n), units of X.
    covariances_ : posterior mean of each cluster's covariance in units of X, in BayesianGaussianMixture's shapes:
        (K, d, d) for "full" (S_n / (nu_n - d - 1)), (K, d) the variances per column for "diag", (K,) the one
        variance for "spherical" (beta_n / (2 a_n - 2)); where the mean does not exist, the posterior mode.
    psm_ : (N, N) float32 similarity matrix, or None unless ``psm=True``.
    modes_ : list of :class:`pcrp.summaries.modes.Mode`; one entry when the chains agree. ``modes_warning_``: a sentence
        when they do not (pooled figures then depend on the starts), else "".
    chains_ : :class:`pcrp.runs.chains.ChainSet`, the chains (diagnostics, InferenceData, save).
    spec_ : :class:`pcrp.runs.run_spec.RunSpec`, the run as specified (rerun it with ``run_chains(X_sampler, spec_)``).
    stop_reason_ : str, why the chains stopped (converged, the cap, or a fixed budget) with the R-hat and ESS.
    converged_ : bool, whether the chains met the automatic budget's targets (split R-hat <= 1.01 and bulk ESS
        >= 400 for K and the log joint, or both settled, with one mode) when they stopped. With the automatic
        budget False means the cap (``max_iters``) came first. With a fixed ``iters`` there is no stopping rule, so
        the same targets are judged on the draws after burn-in at the last sweep: True only when they are met, so
        that ``converged_`` never vouches for chains nobody checked (``stop_reason_`` gives the figures).
    niw_ : :class:`pcrp.model.NIW`, resolved NIW hyperparameters (sampler units).
    prior_ : the seating prior the chains ran with (the prior object, or the named prior at its defaults).
    center_, scale_ : (d,) the standardisation, X_sampler = (X - center_) / scale_ (0 and 1 when off).
    n_iter_ : int, sweeps run per chain. seed_ : int, the seed the chains were spawned from.
    timing_ : {"sampling": s, "summaries": s}, wall-clock seconds of fit's two stages.
    summary_ : :class:`pcrp.analyses.run_summary.RunSummary`, the run's summary as ``pcrp run`` makes it (diagnostics
        included).
    n_features_in_ : int.

    Examples
    --------
    >>> from pcrp.model import PowerCRP
    >>> from sklearn.model_selection import GridSearchCV
    >>> search = GridSearchCV(PCRPMixture(prior=PowerCRP(r=1.1), iters=100, random_state=0),
    ...                       {"prior__r": [1.1, 1.5]}, cv=3).fit(X)   # scored by the predictive density
    >>> search.best_params_, search.best_estimator_.prior_
    """

    def __init__(self, *, prior=DEFAULT_PRIOR_OBJECT, standardize=True, n_chains=RUN_PARAMS["n_chains"].default,
                 iters=RUN_PARAMS["iters"].default, burn_in=RUN_PARAMS["burn_in"].default, max_iters=None,
                 thin=RUN_PARAMS["thin"].default, split_merge=RUN_PARAMS["split_merge"].default, init=None,
                 loss=DEFAULT_LOSS, covariance_type="full", m0=None, kappa0=None, nu0=None, S0=None,
                 n_predict_draws=ESTIMATOR_PARAMS["n_predict_draws"].default, psm=False,
                 n_jobs=RUN_PARAMS["n_jobs"].default, verbose=ESTIMATOR_PARAMS["verbose"].default,
                 random_state=None):
        self.prior = prior
        self.standardize = standardize
        self.n_chains = n_chains
        self.iters = iters
        self.burn_in = burn_in
        self.max_iters = max_iters
        self.thin = thin
        self.split_merge = split_merge
        self.init = init
        self.loss = loss
        self.covariance_type = covariance_type
        self.m0 = m0
        self.kappa0 = kappa0
        self.nu0 = nu0
        self.S0 = S0
        self.n_predict_draws = n_predict_draws
        self.psm = psm
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.random_state = random_state

    def set_params(self, **params):
        """Set parameters, scikit-learn's way; ``prior__NAME=value`` replaces ``prior`` with
        a copy of it with NAME = value (a prior is immutable; see ``prior``), after the other parameters are set (so
        ``set_params(prior=PowerCRP(), prior__r=1.5)`` works, as scikit-learn orders nested parameters)."""
        nested = {key.partition("__")[2]: value for key, value in params.items() if key.startswith("prior__")}
        super().set_params(**{key: value for key, value in params.items() if not key.startswith("prior__")})
        if nested:
            self.prior = _prior_with(self.prior, nested)
        return self

    def __repr__(self, N_CHAR_MAX=700):
        """scikit-learn's representation (the parameters given), and once fitted a line with the prior, N, K,
        R-hat and why the chains stopped."""
        text = super().__repr__(N_CHAR_MAX)
        if hasattr(self, "chains_"):
            text += "\n  fitted: " + "; ".join(f"{k} {v}" for k, v in self._fitted_overview())
        return text

    def _fitted_overview(self):
        rows = dict(self.chains_.overview())
        return [("prior", self.prior_.label()), ("N", rows["N"]), ("K", str(self.n_clusters_)),
                ("chains", rows["chains"]), ("R-hat", rows["R-hat"]), ("stopped", rows["stopped"])]

    def _checked_prior(self):
        """The prior the chains will run with: the named prior at its registry defaults, or the prior object
        given (registered now: a prior registered at any time works; one removed since is refused by name)."""
        prior = self.prior
        if isinstance(prior, str):
            return make_prior(prior)  # a ModelError naming the registered priors when it is not one
        if not isinstance(prior, GibbsPrior):
            raise TypeError(f"prior must be the name of a registered prior ({', '.join(PRIORS)}) or a prior object "
                            f"such as pcrp.model.PowerCRP(r=1.3) or pcrp.model.make_prior('mfm', lam=2.0) (got "
                            f"{prior!r}).")
        spec = prior.spec  # a ModelError naming the prior when it is no longer registered
        if not isinstance(prior, spec.cls):
            raise SettingError(f"The prior {prior.name!r} was registered anew since this prior object was built: "
                               f"build it again (pcrp.model.make_prior({prior.name!r}, ...)).")
        return prior

    def _check_params(self):
        """Check every parameter against pcrp's declarations, before the data are read: ValueError (pcrp's
        SettingError, naming the parameter, the value, the range and why) or TypeError. The prior's parameters
        were checked when the prior was built; the NIW's are checked against the data by make_run_spec."""
        for name in ("standardize", "psm"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise TypeError(f"{name} must be True or False (got {getattr(self, name)!r}).")
        for name in RUN_SETTINGS:
            value = getattr(self, name)
            if name == "split_merge" and isinstance(value, (bool, np.bool_)):
                value = int(value)
            if name == "n_jobs" and isinstance(value, Integral) and not isinstance(value, (bool, np.bool_)):
                value = min(int(value), CORES)  # above the cores: clamped at fit, with a warning (_threads)
            if value is not None:
                check_setting(name, value)
        if self.random_state is not None and not isinstance(self.random_state, np.random.RandomState):
            RUN_PARAMS.check("seed", self.random_state, shown="random_state")
        ESTIMATOR_PARAMS.check("n_predict_draws", self.n_predict_draws)
        verbose = self.verbose
        ESTIMATOR_PARAMS.check("verbose", int(verbose) if isinstance(verbose, (bool, np.bool_)) else verbose)
        check_covariance_type(self.covariance_type)  # a ModelError (a ValueError) naming the types, or "tied"'s why
        if not isinstance(self.loss, str) or self.loss not in LOSSES:
            raise ValueError(f"loss must be one of {', '.join(LOSSES)} (got {self.loss!r}).")
        if not (self.init is None or isinstance(self.init, str)
                or (isinstance(self.init, (list, tuple)) and all(isinstance(i, str) for i in self.init))):
            raise TypeError(f"init must be a start ('one', 'random:K', 'kmeans:K'), a list of them, or None (got "
                            f"{self.init!r}).")
        return self._checked_prior()

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
            if check_covariance_type(self.covariance_type) == "spherical":  # one scale keeps a variance single
                scale[varying] = np.sqrt(np.mean(scale[varying] ** 2))
        return center, scale

    def _to_sampler_units(self, X):
        return np.require((X - self.center_) / self.scale_, np.float64, ["C", "W"])

    def _spec(self, Z, prior=None):
        """The :class:`pcrp.runs.run_spec.RunSpec` of a fit on Z (the data as the sampler sees them)."""
        niw = {k: v for k, v in dict(m0=self.m0, kappa0=self.kappa0, nu0=self.nu0, S0=self.S0,
                                     covariance_type=self.covariance_type).items() if v is not None}
        init = list(self.init) if isinstance(self.init, (list, tuple)) else self.init
        settings = {name: getattr(self, name) for name in RUN_SETTINGS}
        settings["n_jobs"] = self._threads()
        return make_run_spec(Z, prior=self._checked_prior() if prior is None else prior, niw=niw, init=init,
                             seed=self._seed(), standardize=bool(self.standardize), similarity=bool(self.psm),
                             data={"data": "X given to PCRPMixture.fit"}, **settings)

    def _threads(self):
        """``n_jobs`` as the run takes it: more than this machine's cores is clamped to the cores, with a
        UserWarning saying so (the parameter itself is left as given); anything else is checked by the run's
        declaration as given."""
        n_jobs = self.n_jobs
        if isinstance(n_jobs, Integral) and not isinstance(n_jobs, (bool, np.bool_)) and n_jobs > CORES:
            warnings.warn(f"n_jobs={int(n_jobs)} is more than this machine's {CORES} cores: running {CORES} threads "
                          "(the chains are CPU-bound; more threads only slow them).", UserWarning, stacklevel=4)
            return CORES
        return n_jobs

    def fit(self, X, y=None):
        """Run the chains on X (N, d) and summarise them (:func:`pcrp.analyses.run_summary.summarise_run`, as ``pcrp run``
        does). ``y`` is ignored. The parameters are checked first (see the class's notes)."""
        from .runs.chains import run_chains
        from .analyses.run_summary import summarise_run, summary_lines

        prior = self._check_params()
        X = validate_data(self, X, dtype=np.float64)
        self.center_, self.scale_ = self._standardise(X)
        Z = self._to_sampler_units(X)  # the kernels take writable C arrays (one compiled signature)
        self.spec_ = self._spec(Z, prior)
        self.prior_, self.niw_, self.seed_ = self.spec_.prior, self.spec_.niw, self.spec_.seed
        if self.verbose:
            print("\n".join(self.spec_.describe()), file=sys.stderr)
        # a first fit compiles what it uses, and says so when verbose
        compile_kernels(sys.stderr if self.verbose else None, self.spec_.niw.covariance_type)
        with self._progress() as advance:
            self.chains_ = run_chains(Z, self.spec_, callback=advance)
        self.stop_reason_ = self.chains_.stop["reason"]
        self.converged_ = bool(self.chains_.stop["verdict"]["passed"])  # the fixed budget's too (see converged_)
        summary = summarise_run(self.chains_, loss=self.loss, seed=self.seed_, similarity=self.psm)
        self.summary_ = summary
        self.psm_ = summary.psm
        self.labels_ = summary.estimate.labels
        self.n_clusters_ = summary.estimate.n_clusters
        self.expected_loss_ = summary.estimate.expected_loss
        self.modes_, self.modes_warning_ = summary.modes, summary.modes_warning
        self._Z = Z
        self._cluster_parameters()
        self.n_iter_ = int(self.chains_.K.shape[1])
        self.timing_ = summary.timing
        if self.verbose:  # the summary `pcrp run` prints, on stderr
            lines, warnings = summary_lines(self.chains_, summary)
            print("\n".join(lines), file=sys.stderr)
            for line in warnings:
                print(f"warning: {line}", file=sys.stderr)
        return self

    def _progress(self):
        """A context giving the chains' callback: when ``verbose``, a tqdm bar of sweeps (tqdm.auto: a widget in a
        notebook, a text bar on a terminal; up to the automatic budget's cap), else a no-op."""
        from contextlib import contextmanager

        @contextmanager
        def bar():
            if not self.verbose:
                yield None
                return
            from tqdm.auto import tqdm

            spec = self.spec_
            done = [0] * spec.n_chains
            with tqdm(total=spec.n_chains * spec.max_sweeps, unit="sweep", desc=spec.prior.label(), file=sys.stderr,
                      disable=None) as progress:
                def advance(chain_index, sweeps_done):  # from the chains' threads; tqdm's update is thread-safe
                    progress.update(sweeps_done - done[chain_index])
                    done[chain_index] = sweeps_done
                yield advance
        return bar()

    def _cluster_parameters(self):
        """weights_, seating_weights_, means_, covariances_ of the point estimate's clusters (units of X)."""
        from .model.niw_math import covariance_mean
        from .model.seating import seating_log_probabilities

        Z, labels, niw = self._Z, self.labels_, self.niw_
        N, d = Z.shape
        K = self.n_clusters_
        sizes = np.bincount(labels, minlength=K)
        self.weights_ = sizes / N
        self.seating_weights_ = np.exp(seating_log_probabilities(self.prior_, sizes))  # customer N + 1's
        means = np.empty((K, d))
        covs = np.empty((K, d, d))
        for k in range(K):
            # E[Sigma] (for "full" it exists for nu_n > d + 1, always with the default nu0 = d + 3), else the mode
            means[k], covs[k] = covariance_mean(Z[labels == k], niw.m0, niw.kappa0, niw.nu0, niw.S0,
                                                niw.covariance_type)
        self.means_ = means * self.scale_ + self.center_
        covs = covs * np.outer(self.scale_, self.scale_)
        # scikit-learn's shapes: (K, d, d), (K, d) the diagonals, (K,) the one variance
        if niw.covariance_type == "diag":
            covs = np.diagonal(covs, axis1=1, axis2=2).copy()
        elif niw.covariance_type == "spherical":
            covs = covs[:, 0, 0].copy()
        self.covariances_ = covs

    def _full_covariances(self):
        """(K, d, d) the covariance matrices that ``covariances_`` holds in the covariance type's shape."""
        covs = np.asarray(self.covariances_)
        d = self.means_.shape[1]
        if covs.ndim == 3:
            return covs
        if covs.ndim == 2:
            return np.stack([np.diag(c) for c in covs])
        return covs[:, None, None] * np.eye(d)

    def sample(self, n_samples=1):
        """Draw (X (n_samples, d), y (n_samples,)) from the mixture of the point estimate's clusters with
        ``weights_``, ``means_`` and ``covariances_`` (a plug-in of the posterior means, as scikit-learn's
        mixtures sample; a new cluster is never drawn)."""
        check_is_fitted(self)
        if isinstance(n_samples, bool) or not isinstance(n_samples, Integral) or n_samples < 1:
            raise ValueError(f"n_samples must be a whole number >= 1 (got {n_samples!r}).")
        rng = check_random_state(self.random_state)
        counts = rng.multinomial(n_samples, self.weights_)
        covariances = self._full_covariances()
        X = np.vstack([rng.multivariate_normal(self.means_[k], covariances[k], int(c))
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

    def _cluster_and_new(self, X):
        """(M, K + 1): P(x joins cluster k of ``labels_``) for k < K and P(x opens a new cluster) last (sum 1).

        For each kept draw, x is seated by the prior's rule (weights W(N_l + 1) / W(N_l) and the new-cluster
        weight, times each block's Student-t predictive); a block of the draw is mapped to the point estimate's
        clusters in proportion to its members in each. Draws are weighted by how well they predict x:
        P(k | x) = sum_s p_s(x) P_s(k | x) / sum_s p_s(x).
        """
        log_px, cond = self._draw_terms(X)
        weights = np.exp(log_px - logsumexp(log_px, axis=0))  # (S, M), each column sums to 1
        return np.einsum("sm,smk->mk", weights, cond)

    def predict_proba(self, X):
        """(M, K) posterior probability that each point of X belongs to each of the K clusters of ``labels_``
        (rows sum to 1), as BayesianGaussianMixture's ``predict_proba``: the probability of joining cluster k
        given that the point joins one of them. The probability that it would instead open a new cluster is
        :meth:`predict_new_cluster_proba`."""
        joint = self._cluster_and_new(X)[:, :-1]
        return joint / joint.sum(axis=1, keepdims=True)

    def predict_new_cluster_proba(self, X):
        """(M,) posterior probability that each point of X would open a new cluster rather than join one of
        ``labels_`` (the prior's new-cluster weight times the prior predictive, averaged over the draws)."""
        return self._cluster_and_new(X)[:, -1]

    def predict(self, X):
        """(M,) the most probable cluster of ``labels_`` for each point (``predict_proba``'s arg max)."""
        return np.argmax(self.predict_proba(X), axis=1)

    def to_inference_data(self):
        """The chains as ArviZ InferenceData (:meth:`pcrp.runs.chains.ChainSet.to_inference_data`) with the data the
        sampler saw (sampler units) as ``observed_data``."""
        check_is_fitted(self)
        return self.chains_.to_inference_data(observed=self._Z)



def _prior_with(prior, params):
    """``prior`` with the nested parameters {name: value} of ``set_params(prior__name=value)`` changed: a checked
    copy, built and checked by :func:`pcrp.model.make_prior` (each value against its declared bounds; a parameter
    the prior does not have is a ModelError naming its parameters; None takes the registry default). A prior given
    by name has none to change."""
    if isinstance(prior, str):
        given = ", ".join(f"{key}={value!r}" for key, value in params.items())
        raise ValueError(f"prior is the name {prior!r}, which has no parameters to set ({', '.join(params)}): give "
                         f"a prior object instead, set_params(prior=pcrp.model.make_prior({prior!r}, {given})), or "
                         f"PCRPMixture(prior=pcrp.model.make_prior({prior!r}, {given})).")
    if not isinstance(prior, GibbsPrior):
        raise TypeError(f"prior must be a prior object to set its parameters ({', '.join(params)}); got {prior!r}.")
    return make_prior(prior.name, **{**prior.get_params(), **params})

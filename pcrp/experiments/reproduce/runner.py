"""Running the paper's experiments: cross validation of r, then every method's chains on the same data, on one data
set (:func:`run_experiment`) or on several drawn with different seeds (:func:`run_over_seeds`).

Every method runs ``n_chains`` chains from different starts (:data:`pcrp.runs.run_spec.DEFAULT_INITS`, cycled); our sampler
adds split-merge moves by default (the paper's plain Gibbs is ``Protocol(split_merge=False)``). A method's numbers
are means over the kept draws of all chains, with Monte Carlo standard errors (ArviZ's MCSE); K max is the largest K
after burn-in in any chain. The pCRP's fit is judged against the CRP's on the same data (:mod:`pcrp.analyses.collapse`).
"""

from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass, field

import numpy as np

from ...runs.chains import run_chains
from ...analyses.cv import DEFAULT_GRID, cross_validate
from ...model import resolve_niw
from ...runs.run_spec import RUN_PARAMS, check_setting, data_description, make_run_spec
from ...summaries.summary import chains_agree, k_posterior, mean_and_mcse, metric_summary
from .methods import (METHODS, REFERENCE, TUNED, check_methods, extra_methods, method_prior, prior_settings,
                      tuned_value)
from .paper import DATA_DIMS, Experiment, data_seeds, load_experiment_data
from .protocol import FULL, REPRODUCE_PARAMS, Protocol


@dataclass
class MethodResult:
    """One method's chains on one experiment.

    chains: :class:`pcrp.runs.chains.ChainSet` (K (C, T), labels (C, S, N), ...).
    metrics: name -> (mean over the kept draws of every chain, MCSE or None); "K max" has no SE.
    p_k: {k: P(K = k)} over the kept draws of every chain.
    diagnostics: :meth:`ChainSet.diagnostics` (R-hat, ESS, MCSE of K and the log joint).
    """

    method: str
    alpha: float
    r: float
    chains: object
    metrics: dict
    p_k: dict
    diagnostics: dict
    settings: str = ""  # the prior and its parameters in words, e.g. "MFM: gamma 1, lam 1"
    verdict: object = None  # the pCRP's pcrp.analyses.collapse.Verdict against the CRP on the same data (None for the others)
    prior: object = None  # the prior the chains ran (pcrp.model)

    @property
    def flagged(self):
        """The pCRP fit collapsed (fell below the CRP's clusters) or its chains disagree (pcrp.analyses.collapse)."""
        return bool(self.verdict is not None and self.verdict.flagged)

    @property
    def K(self):
        return self.chains.K

    @property
    def labels(self):
        return self.chains.labels

    @property
    def seconds_per_sweep(self):
        return float(np.mean(self.chains.seconds_per_sweep))

    @property
    def rhat(self):
        """{"K": R-hat, "log joint": R-hat} across the chains (nan where undefined, e.g. a constant K)."""
        return {"K": self.diagnostics["K"]["rhat"], "log joint": self.diagnostics["log_joint"]["rhat"]}

    @property
    def chains_agree(self):
        """False when the chains disagree on K or on the log joint (:func:`pcrp.summaries.summary.chains_agree`: R-hat above
        RHAT_THRESHOLD, or settled chains holding different values)."""
        return chains_agree(self.diagnostics["K"]) and chains_agree(self.diagnostics["log_joint"])


@dataclass
class ExperimentResult:
    experiment: Experiment
    data: object
    niw: object
    cv: object
    methods: dict = field(default_factory=dict)
    protocol: Protocol = FULL
    seed: int = 0
    reference: int | None = None  # clusters the CRP's point estimate keeps (pcrp.analyses.collapse.kept_clusters)


def summarize_chains(chains, true_labels=None):
    """Table entries for one method: NMI, VI (mean, MCSE) if labels are known; K (mean, MCSE), K max,
    and the posterior of K, all over the kept draws of every chain."""
    out = {}
    if true_labels is not None:
        out.update(metric_summary(true_labels, chains.labels))
    kept_k = chains.kept_K
    out["K"] = mean_and_mcse(kept_k)
    out["K max"] = (int(chains.K[:, chains.burn_in:].max()), None)
    values, probs = k_posterior(kept_k.ravel())
    return out, {int(k): float(p) for k, p in zip(values, probs)}


def _declared(name, value):
    """``value`` checked against its declaration in REPRODUCE_PARAMS, or the declared default when None."""
    return REPRODUCE_PARAMS.resolve(**{name: value})[name]


def _n_jobs(n_jobs):
    """``n_jobs`` checked against the run's declaration, or every core when None."""
    return RUN_PARAMS["n_jobs"].default if n_jobs is None else check_setting("n_jobs", n_jobs)


def reproduce_work(experiment, protocol=None, n_seeds=None, *, extra=True, n_chains=None, r_grid=DEFAULT_GRID):
    """Estimated core-seconds of :func:`run_over_seeds` with these arguments (:func:`pcrp.sampling.compute.work_cost`): per
    data set, the cross validation of r, its check on the compared data at its most (its CRP reference and every
    value of r it may try) and every method's chains. None: the declared default (the paper's protocol, its
    chains)."""
    from ...sampling.compute import work_cost
    from ...analyses.cv import check_work, cv_work

    protocol, n_chains = protocol or FULL, _declared("n_chains", n_chains)
    e, d = experiment, DATA_DIMS[experiment.data]
    methods = len(METHODS + (extra_methods() if extra else ()))
    per_set = (cv_work(e.n_cv, d, len(r_grid), protocol.cv_folds, protocol.cv_repeats, protocol.cv_iters)
               + (check_work(e.n, d, len(r_grid), protocol.check_iters) if protocol.cv_check else 0.0)
               + work_cost(e.n, d, protocol.iters, chains=n_chains * methods))
    return per_set * len(data_seeds(experiment, 0, n_seeds, protocol))


def run_experiment(experiment, protocol=None, seed=None, n_jobs=None, scheduler=None, progress=None,
                   r_grid=DEFAULT_GRID, n_chains=None, methods=METHODS, work=None):
    """CV of r on the CV data, then the methods on the compared data, ``n_chains`` chains each.

    protocol, seed, n_chains: None for the declared defaults (the paper's protocol, seed 0, 4 chains;
    :data:`REPRODUCE_PARAMS`); n_jobs: None for every core. methods: a subsequence of
    :func:`pcrp.experiments.reproduce.methods.all_methods` (the paper's three by default).
    ``progress(stage, fraction)`` is called, from the calling thread only, with stage "cross validation" or a
    method's name. work: a :class:`pcrp.sampling.compute.WorkTicket` (the app's: budget, compute slots, cancellation), or
    None.
    """
    methods = check_methods(methods)
    protocol, seed, n_chains, n_jobs = (protocol or FULL, _declared("seed", seed), _declared("n_chains", n_chains),
                                        _n_jobs(n_jobs))
    ds, cv_ds = load_experiment_data(experiment, seed)
    report = progress or (lambda stage, fraction: None)
    cv = cross_validate(cv_ds.X, standardize=cv_ds.standardized, r_grid=r_grid, alpha=protocol.alpha,
                        folds=protocol.cv_folds,
                        repeats=protocol.cv_repeats, rule=protocol.cv_rule,
                        iters=protocol.cv_iters, burn_in=protocol.cv_burn_in, thin=protocol.cv_thin, seed=seed,
                        split_merge=protocol.split_merge, n_jobs=n_jobs, scheduler=scheduler,
                        progress=lambda done, total: report("cross validation", done / total), work=work)
    r = cv.chosen_r
    niw = resolve_niw(ds.X)
    if protocol.cv_check:
        from ...analyses.cv import check_with_chains, cv_kept_clusters

        report("cross validation", 1.0)
        # on the data the pCRP is then fitted to, at their own N (not on the CV sample: docs/reproduce/cv_robustness.md)
        r, check = check_with_chains(ds.X, r, r_grid, niw, alpha=protocol.alpha, seed=seed, n_jobs=n_jobs,
                                     iters=protocol.check_iters,
                                     cv_mean_k=cv_kept_clusters(cv, r), split_merge=protocol.split_merge, work=work)
        cv.settings["chain_check"] = check
    result = ExperimentResult(experiment, ds, niw, cv, protocol=protocol, seed=seed)
    for method in methods:
        prior = method_prior(method, protocol, k_true=experiment.k_true, n=ds.n, tuned_value=r)
        done = np.zeros(n_chains)  # sweeps per chain, written by the chains' threads

        def record(chain, sweeps, done=done):
            done[chain] = sweeps

        # The chains report from their own threads; progress is only ever called from this one
        # (a Streamlit page may update its widgets only from the thread running the script).
        with ThreadPoolExecutor(max_workers=1) as pool:
            spec = make_run_spec(ds.X, prior=prior, niw=niw, n_chains=n_chains, iters=protocol.iters,
                                 burn_in=protocol.burn_in, thin=protocol.thin, seed=seed, n_jobs=n_jobs,
                                 split_merge=protocol.split_merge, standardize=ds.standardized,
                                 data=data_description(ds))
            running = pool.submit(run_chains, ds.X, spec, callback=record, work=work)
            while not wait([running], timeout=0.25).done:
                report(method, done.sum() / (n_chains * protocol.iters))
            chains = running.result()
        report(method, 1.0)
        metrics, p_k = summarize_chains(chains, ds.labels)
        diagnostics = chains.diagnostics()
        result.methods[method] = MethodResult(method, getattr(prior, "alpha", None), tuned_value(prior), chains,
                                              metrics, p_k, diagnostics, prior_settings(prior), prior=prior)
        if method == REFERENCE:
            from ...analyses.collapse import kept_clusters
            from ...summaries.partition import point_estimate

            result.reference = kept_clusters(point_estimate(chains.labels, seed=seed).labels)
        if method == TUNED:
            from ...analyses.collapse import judge_chains

            reference = result.reference
            if reference is None and "chain_check" in cv.settings:
                reference = cv.settings["chain_check"]["reference"]
            result.methods[method].verdict = judge_chains(chains, reference, diagnostics, what="the pCRP")
    return result


# ----------------------------------------------------------------------------- over data sets

@dataclass
class SeedsResult:
    """One experiment on several data sets drawn with different seeds.

    runs: one :class:`ExperimentResult` per data seed, in seed order. The first keeps its chains whole (the
        figures are drawn from it); the others keep their K and log-joint traces, metrics and diagnostics but
        only the last kept draw of each chain's labels (memory: a full run on ten data sets would otherwise
        hold ten sets of label draws).
    margins: {seed: nats} for the pCRP (experiments with true labels): :func:`true_partition_margin` at that
        data set's r.
    """

    experiment: Experiment
    runs: list
    protocol: Protocol = FULL
    margins: dict = field(default_factory=dict)

    @property
    def seeds(self):
        return [run.seed for run in self.runs]

    @property
    def first(self):
        return self.runs[0]

    @property
    def methods(self):
        return self.first.methods


def true_partition_margin(X, labels, r, alpha=None, niw=None):
    """Nats by which the true partition's pCRP log joint at power r (concentration ``alpha``, None: the declared
    alpha) beats the best state with fewer clusters on the exact merge path from it (:func:`pcrp.analyses.path.merge_path`);
    negative when the pCRP prefers merging true clusters at r. X (N, d), labels (N,) the true classes. Compares
    single partitions, not posterior mass."""
    from ...analyses.path import merge_path

    path = merge_path(X, labels, niw if niw is not None else resolve_niw(X), alpha=_declared("alpha", alpha))
    L = np.cumsum([m.L for m in path.merges])
    G = np.cumsum([m.G for m in path.merges])
    return float(-np.max(L + r * G)) if len(path.merges) else float("inf")


def _lighten(result):
    """The result with each method's label draws cut to the last kept draw of each chain, copied: a slice would be a
    view that keeps every draw's memory."""
    from dataclasses import replace as dc_replace

    for m in result.methods.values():
        m.chains = dc_replace(m.chains, labels=m.chains.labels[:, -1:].copy(),
                              kept_sweeps=np.array(m.chains.kept_sweeps[-1:]),
                              split_merge_history=m.chains.split_merge_history[:, -1:].copy())
    return result


def run_over_seeds(experiment, protocol=None, seed=None, n_seeds=None, *, extra=True, n_jobs=None, scheduler=None,
                   progress=None, r_grid=DEFAULT_GRID, n_chains=None, work=None):
    """:func:`run_experiment` on each data seed of :func:`pcrp.experiments.reproduce.paper.data_seeds` (CV of r on each data
    set's own CV data). protocol, seed, n_seeds, n_chains: None for the declared defaults (:data:`REPRODUCE_PARAMS`;
    n_seeds: the protocol's).

    extra: also run the priors beyond the paper (:func:`pcrp.experiments.reproduce.methods.extra_methods`: MFM, SFM and any
    prior registered since), labelled so.
    ``progress(text, fraction)``: called from the calling thread with e.g. "data set 2 of 3: pCRP" and the
    fraction of the whole job done (0..1). work: a :class:`pcrp.sampling.compute.WorkTicket` (the app's), or None; with a
    budget, :func:`reproduce_work` is counted against it before anything runs (WorkOverBudget).
    """
    protocol, seed = protocol or FULL, _declared("seed", seed)
    seeds = data_seeds(experiment, seed, n_seeds, protocol)
    methods = METHODS + (extra_methods() if extra else ())
    stages = ("cross validation",) + methods
    report = progress or (lambda text, fraction: None)
    runs, margins = [], {}
    if work is not None and work.budget is not None:  # the whole job, before any of it starts
        from ...sampling.compute import WorkOverBudget, describe_seconds

        need = reproduce_work(experiment, protocol, n_seeds, extra=extra, n_chains=n_chains, r_grid=r_grid)
        if need > work.budget:
            raise WorkOverBudget(f"{experiment.title} on {len(seeds)} data set(s) needs about "
                                 f"{describe_seconds(need)} of sampling, more than the {describe_seconds(work.budget)} "
                                 "this action may use")
    for i, s in enumerate(seeds):
        def stage_progress(stage, fraction, i=i):
            done = (i + (stages.index(stage) + fraction) / len(stages)) / len(seeds)
            report(f"data set {i + 1} of {len(seeds)}: {stage}", done)

        res = run_experiment(experiment, protocol, seed=s, n_jobs=n_jobs, scheduler=scheduler,
                             progress=stage_progress, r_grid=r_grid, n_chains=n_chains, methods=methods)
        if res.data.labels is not None:
            margins[s] = true_partition_margin(res.data.X, res.data.labels, res.methods[TUNED].r, protocol.alpha,
                                               res.niw)
        runs.append(res if i == 0 else _lighten(res))
    return SeedsResult(experiment, runs, protocol, margins)

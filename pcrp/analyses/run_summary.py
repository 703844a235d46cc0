"""The summary of a finished run, one for ``pcrp run`` and :class:`pcrp.estimator.PCRPMixture`: the same figures
and the same text.

:func:`summarise_run` turns a :class:`pcrp.runs.chains.ChainSet` into a :class:`RunSummary` (point estimate, diagnostics,
modes, metrics against true labels, and for a prior that is judged against the reference prior the collapse
verdict); :func:`summary_lines` writes it as the lines ``pcrp run`` prints (and ``PCRPMixture(verbose=1)``).
:func:`reference_fit` is the reference a collapse is judged against (docs/design.md section 1.6).
"""

import time
from dataclasses import dataclass, field

import numpy as np

# The reference fit runs this many chains (the fewest that R-hat, and so the automatic budget, can judge), from the
# first default starts: half the sampling of a four-chain fit, for a number (the clusters of at least 2% of the
# points in its point estimate) that does not need more.
REFERENCE_CHAINS = 2


def judged_against_reference(prior_name):
    """Whether a fit under the prior ``prior_name`` (a key of :data:`pcrp.model.PRIORS`) is judged against the
    reference prior's clusters: a prior with a tuned parameter (the pCRP's r), which at too large a value merges
    real clusters."""
    from ..model import PRIORS

    return PRIORS[prior_name].tuned is not None


def reference_spec():
    """The registry entry of the reference prior (``reference``: the CRP)."""
    from ..model import PRIORS

    return next(spec for spec in PRIORS.values() if spec.reference)


def reference_fit(X, spec, sweeps, *, work=None):
    """The :class:`pcrp.analyses.collapse.Reference` of the reference prior's fit on X (N, d), or None when its
    chains kept no draw (a run of a sweep or two): the clusters a collapse of the run ``spec`` (a
    :class:`pcrp.runs.run_spec.RunSpec`) is judged against (:func:`pcrp.analyses.collapse.judge`), with what backs
    its count where the run's data are a built-in data set whose r and covariance types were cross-validated and
    shipped (:func:`data_reference`); :func:`summarise_run` adds the true classes.

    The reference prior (the CRP, with the parameters it shares with the judged prior: alpha, and the judged run's
    NIW, its covariance type included) runs :data:`REFERENCE_CHAINS` chains from the first default starts
    (:data:`pcrp.runs.run_spec.DEFAULT_INITS`) and the judged run's seed, under the automatic budget
    (:mod:`pcrp.runs.budget`: it stops when its chains agree) capped at ``sweeps``, the sweeps per chain the judged
    run took: the reference never costs more sweeps per chain than the fit it judges. It runs on at most
    :data:`pcrp.analyses.cv.REFERENCE_POINTS` points (a random subset above that). Its point estimate's clusters of
    at least 2% of the points are the reference (:func:`pcrp.analyses.collapse.kept_clusters`).
    """
    from types import SimpleNamespace

    from ..runs.chains import run_chains
    from .cv import REFERENCE_POINTS
    from ..model import make_prior
    from ..summaries.partition import point_estimate
    from ..runs.run_spec import RUN_PARAMS, make_run_spec

    ref = reference_spec()
    shared = {p.name: getattr(spec.prior, p.name) for p in ref.params if hasattr(spec.prior, p.name)}
    X = np.ascontiguousarray(X, dtype=float)
    rows = X.shape[0]
    if rows > REFERENCE_POINTS:
        X = X[np.sort(np.random.default_rng(spec.seed).choice(rows, size=REFERENCE_POINTS, replace=False))]
    # thinned as the judged run (the point estimate's search costs by the draw), but never so much that the half of
    # the sweeps after burn-in keeps no draw (a cap of a few sweeps)
    sweeps = int(sweeps)
    thin = max(RUN_PARAMS["thin"].low, min(spec.thin, sweeps - sweeps // 2))
    ref_spec = make_run_spec(X, prior=make_prior(ref.name, **shared), niw=spec.niw,
                             n_chains=min(REFERENCE_CHAINS, spec.n_chains), max_iters=sweeps, thin=thin,
                             seed=spec.seed, n_jobs=spec.n_jobs, split_merge=spec.split_merge)
    chains = run_chains(X, ref_spec, work=work)
    if chains.n_kept == 0:
        return None
    labels = point_estimate(chains.pooled_labels(), seed=spec.seed).labels
    where = "these data" if rows <= REFERENCE_POINTS else f"a random {REFERENCE_POINTS:,} of the {rows:,} points"
    ran = int(chains.K.shape[1])
    described = spec.data or {}
    data = (SimpleNamespace(source=described["data_source"], standardized=bool(spec.standardize))
            if described.get("data_source") is not None else None)
    return data_reference(labels, X, crp_from=f"a {ref.label} fit of {chains.n_chains} chains x {ran:,} sweeps (the "
                                              f"automatic budget, capped at the sweeps of this fit) on {where}",
                          covariance_type=spec.niw.covariance_type, name=described.get("data"), data=data)


def supported_type(name, data, covariance_type, dims):
    """The covariance type the data support where it is known without computing anything: at d = 1 the fit's own
    (the types are one model), else the shipped comparison of the types for built-in data set ``name`` at the
    settings ``data`` (:func:`pcrp.analyses.cv.shipped_covariance_choice`), else None."""
    from .cv import shipped_covariance_choice

    if int(dims) == 1:
        return covariance_type
    if name is None or data is None:
        return None
    choice = shipped_covariance_choice(name, data)
    return None if choice is None else choice.chosen


def data_reference(crp_labels, X, *, crp_from, covariance_type, name=None, data=None, supported=None,
                   true_labels=None):
    """The :class:`pcrp.analyses.collapse.Reference` of a CRP fit's point estimate ``crp_labels`` (N,) on X (N, d)
    (the data as the sampler sees them) with clusters of ``covariance_type``, named ``crp_from``, backed by what is
    known of these data: the type they support (``supported``, or :func:`supported_type` from the shipped comparison
    for built-in data set ``name`` at settings ``data``, a pcrp.data.Dataset or anything with its ``source`` and
    ``standardized``), under which the CRP's pieces of one cluster are joined
    (:func:`pcrp.analyses.collapse.joined_clusters`); the clusters that cross validation of r for this type keeps
    on them where it was shipped (:func:`pcrp.analyses.cv.shipped_r`); the true classes of ``true_labels``. Nothing
    here samples; the join is the exact merge path of the CRP's clusters (K^2 closed forms)."""
    from .collapse import make_reference
    from .cv import shipped_r

    X = np.asarray(X, dtype=float)
    if supported is None:
        supported = supported_type(name, data, covariance_type, X.shape[1])
    cv_mean_k, cv_from = None, ""
    if name is not None and data is not None and covariance_type is not None:
        kept = shipped_r(name, covariance_type, data).cv_kept
        if kept is not None:
            cv_mean_k, cv_from = kept
    return make_reference(crp_labels, X=X, crp_from=crp_from, covariance_type=covariance_type, supported=supported,
                          cv_mean_k=cv_mean_k, cv_from=cv_from, true_labels=true_labels)


def live_data_reference(draws, X, *, crp_from, covariance_type, name=None, data=None, true_labels=None,
                        max_points=None, seed=0):
    """:func:`data_reference` of a running CRP chain's recent draws ``draws`` (S, N) on X (N, d): the point estimate
    of the draws on at most ``max_points`` of the points (a fixed random subset, as
    :func:`pcrp.analyses.collapse.live_reference` reads them; None: its LIVE_REFERENCE_POINTS), judged with that
    subset of X and of ``true_labels``. For a page that redraws while chains run (the Explorer's CRP row)."""
    from .collapse import LIVE_REFERENCE_POINTS
    from ..summaries.partition import point_estimate

    draws = np.asarray(draws)
    if draws.ndim != 2 or draws.shape[0] == 0 or draws.shape[1] == 0:
        raise ValueError(f"draws must be a non-empty (S, N) array of labels (got shape {draws.shape}).")
    max_points = LIVE_REFERENCE_POINTS if max_points is None else max_points
    keep = np.arange(draws.shape[1])
    if draws.shape[1] > max_points:
        keep = np.sort(np.random.default_rng(seed).choice(draws.shape[1], size=max_points, replace=False))
    labels = point_estimate(draws[:, keep], seed=seed, n_jobs=1).labels  # one thread: it runs in a page redraw
    return data_reference(labels, np.asarray(X)[keep], crp_from=crp_from, covariance_type=covariance_type, name=name,
                          data=data, true_labels=None if true_labels is None else np.asarray(true_labels)[keep])


def with_truth(reference, true_labels):
    """``reference`` (a :class:`pcrp.analyses.collapse.Reference`) with the true classes of ``true_labels`` (N,)
    added (None: unchanged)."""
    from .collapse import make_reference

    if true_labels is None:
        return reference
    return make_reference(crp_kept=reference.crp, crp_from=reference.crp_from,
                          covariance_type=reference.covariance_type, supported=reference.supported,
                          crp_joined=reference.crp_joined, cv_mean_k=reference.cv, cv_from=reference.cv_from,
                          true_labels=true_labels)


@dataclass
class RunSummary:
    """What a finished run says.

    estimate: the point estimate (:class:`pcrp.summaries.partition.PointEstimate`); diagnostics: the chains' diagnostics of K
    and the log joint; modes, modes_warning: :func:`pcrp.summaries.modes.find_modes`; psm: the (N, N) similarity matrix or
    None; metrics: NMI and VI against the true labels ({"NMI": (mean, MCSE), "VI": ..., "point": (NMI, VI)}) or
    None; verdict: the collapse verdict (:class:`pcrp.analyses.collapse.Verdict`) or None; reference: what it was judged
    against (a :class:`pcrp.analyses.collapse.Reference`, or (clusters, phrase) from a check of r), or None; timing:
    {"sampling": s, "summaries": s}.
    """

    estimate: object
    diagnostics: dict
    modes: list
    modes_warning: str
    psm: object = None
    metrics: dict | None = None
    verdict: object = None
    reference: tuple | None = None
    timing: dict = field(default_factory=dict)


def summarise_run(chains, *, loss, seed, similarity=False, true_labels=None, reference=None):
    """The :class:`RunSummary` of ``chains`` (a :class:`pcrp.runs.chains.ChainSet`): point estimate under ``loss``
    (searched with ``seed``), diagnostics, modes, the similarity matrix when ``similarity``, NMI and VI against
    ``true_labels`` (N,) when given, and the collapse verdict against ``reference`` when given: a
    :class:`pcrp.analyses.collapse.Reference` as :func:`reference_fit` returns it (:func:`with_truth` adds the true
    classes to it), (clusters, phrase) of a check of r that vouches for its count
    (``pcrp run --r cv``), or a function of no arguments that makes either (timed with the summaries). Records
    ``loss`` in the chains' config."""
    from .collapse import Reference, judge_chains
    from ..summaries.modes import find_modes
    from ..summaries.partition import point_estimate, similarity_matrix
    from ..summaries.summary import metric_summary, nmi_vi

    started = time.perf_counter()
    chains.config["loss"] = loss
    draws = chains.pooled_labels()
    psm = similarity_matrix(draws) if similarity else None
    estimate = point_estimate(draws, loss, seed=seed)
    diagnostics = chains.diagnostics()
    modes, modes_warning = find_modes(chains, loss=loss, seed=seed, pooled=estimate, diagnostics=diagnostics)
    metrics = None
    if true_labels is not None:
        metrics = metric_summary(true_labels, chains.labels)
        metrics["point"] = nmi_vi(true_labels, estimate.labels)
    verdict = None
    if callable(reference):
        reference = reference()
    if isinstance(reference, Reference):
        reference = with_truth(reference, true_labels)
    if reference is not None:
        verdict = judge_chains(chains, reference if isinstance(reference, Reference) else reference[0], diagnostics,
                               what=fit_words(chains.config), reference_name=f"the {reference_spec().label}")
    timing = {"sampling": chains.wall_seconds, "summaries": time.perf_counter() - started}
    return RunSummary(estimate, diagnostics, modes, modes_warning, psm, metrics, verdict, reference, timing)


def fit_words(config):
    """"this pCRP fit (r = 1.7, diagonal covariances)": a run's fit in words, from its configuration."""
    from .collapse import covariance_words
    from ..model import PRIORS

    spec = PRIORS[config["prior"]]
    about = [f"{spec.tuned} = {config[spec.tuned]:g}"] if spec.tuned and spec.tuned in config else []
    if config.get("covariance_type"):
        about.append(covariance_words(config["covariance_type"]))
    return f"this {spec.label} fit" + (f" ({', '.join(about)})" if about else "")


def saved_arrays(summary, true_labels=None):
    """The arrays a RESULT.npz of ``pcrp run`` holds beside the chains: {name: array}."""
    from ..basics.json_text import dumps
    from ..summaries.modes import modes_json

    out = {
        "point_labels": summary.estimate.labels,
        "point_expected_loss": np.float64(summary.estimate.expected_loss),
        "diagnostics": np.array(dumps(summary.diagnostics)),
        "modes": np.array(modes_json(summary.modes)),
    }
    if summary.psm is not None:
        out["psm"] = summary.psm
    if true_labels is not None:
        out["true_labels"] = true_labels
    return out


def summary_lines(chains, summary):
    """(lines, warnings): the summary of a run as ``pcrp run`` prints it (stdout lines), and its warnings (stderr,
    without the "warning: " prefix)."""
    from ..summaries.summary import rhat_warnings

    lines = []
    ms = chains.seconds_per_sweep * 1e3
    T, burn_in = int(chains.K.shape[1]), chains.burn_in
    lines.append(f"stopped: {chains.stop.get('reason', '')}")
    lines.append(f"{chains.n_chains} chain(s) x {T:,} sweeps (burn-in {burn_in:,}; labels kept every "
                 f"{chains.config.get('thin')}: {chains.n_kept} draws each) at {ms.min():.3f}-{ms.max():.3f} ms/sweep")
    k_diag, lj_diag = summary.diagnostics["K"], summary.diagnostics["log_joint"]
    after = chains.K_after_burn_in
    for c in range(chains.n_chains):
        kc, lc = k_diag["per_chain"][c], lj_diag["per_chain"][c]
        lines.append(f"  chain {c + 1} ({chains.inits[c]}): mean K {kc['mean']:.2f} (MCSE {kc['mcse']:.2f}), "
                     f"max K {after[c].max()}, mean log joint {lc['mean']:.1f} (MCSE {lc['mcse']:.2f}); "
                     f"ESS bulk/tail K {kc['ess_bulk']:.0f}/{kc['ess_tail']:.0f}, log joint "
                     f"{lc['ess_bulk']:.0f}/{lc['ess_tail']:.0f}")
    lines.append(f"  all chains: mean K {k_diag['mean']:.2f} (MCSE {k_diag['mcse']:.2f}), max K {after.max()}; "
                 f"R-hat K {k_diag['rhat']:.3f}, log joint {lj_diag['rhat']:.3f}; ESS bulk/tail K "
                 f"{k_diag['ess_bulk']:.0f}/{k_diag['ess_tail']:.0f}, log joint "
                 f"{lj_diag['ess_bulk']:.0f}/{lj_diag['ess_tail']:.0f}")
    if summary.verdict is not None:  # a fit against the reference prior on the same data (pcrp.analyses.collapse)
        judged, reference = summary.verdict, summary.reference
        name = reference_spec().label
        if judged.text:
            lines.append(f"  against the {name}: {judged.text}")
        elif isinstance(reference, tuple):
            lines.append(f"  against the {name}: no collapse; every chain keeps the {reference[0]} clusters that "
                         f"{reference[1]} keeps (clusters of at least 2% of the points in its point estimate), and "
                         "the chains agree")
        else:
            lines.append(f"  against the {name}: no collapse; every chain keeps {reference.words()}, and the chains "
                         "agree")
    estimate, modes = summary.estimate, summary.modes
    sizes = ", ".join(str(n) for n in np.bincount(estimate.labels))
    unit = "bits" if estimate.loss == "vi" else "of pairs"
    used = (f" (search over {estimate.n_draws} evenly spaced of the {estimate.n_draws_total} draws)"
            if estimate.n_draws < estimate.n_draws_total else "")
    pooled = " pooled over modes" if len(modes) > 1 else ""
    lines.append(f"  point estimate{pooled} ({estimate.loss.upper() if estimate.loss == 'vi' else 'Binder'} loss): "
                 f"{estimate.n_clusters} clusters of sizes {sizes}; expected loss {estimate.expected_loss:.4f} "
                 f"{unit}{used}")
    if summary.metrics is not None:
        (nmi_mean, nmi_se), (vi_mean, vi_se) = summary.metrics["NMI"], summary.metrics["VI"]
        nmi_point, vi_point = summary.metrics["point"]
        lines.append(f"  against the true labels: NMI {nmi_mean:.3f} (MCSE {nmi_se:.3f}), VI {vi_mean:.3f} bits "
                     f"(MCSE {vi_se:.3f}) over the kept draws; point estimate NMI {nmi_point:.3f}, VI "
                     f"{vi_point:.3f} bits (NMI: geometric normalisation; VI: log base 2)")
    if len(modes) > 1:
        lines.append(f"  modes ({len(modes)}; pooled figures above depend on the starts):")
        for m in modes:
            msizes = ", ".join(str(n) for n in np.bincount(m.point.labels))
            lines.append(f"    chains {', '.join(str(c + 1) for c in m.chains)}: mean K {m.mean_K:.2f}, mean log "
                         f"joint {m.mean_log_joint:.1f} (MCSE {m.mcse_log_joint:.2f}); its point estimate "
                         f"{m.point.n_clusters} clusters of sizes {msizes}")
    if summary.timing:
        lines.append(f"time: sampling {summary.timing['sampling']:.1f} s, summaries "
                     f"{summary.timing['summaries']:.1f} s")
    warnings = rhat_warnings({"K": k_diag, "the log joint": lj_diag})
    if summary.modes_warning:
        warnings.append(summary.modes_warning)
    return lines, warnings

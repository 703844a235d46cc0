"""The honest comparison: does the pCRP fix over-clustering, compared with what?

`pcrp compare` runs, on the same data, every prior of the registry (:data:`pcrp.model.PRIORS`, a prior registered at
run time too) at its registry defaults: the CRP (alpha = 1), the pCRP (the registry's tuned prior) at the r that
:func:`pcrp.analyses.cv.choose_r` chooses for each data set (cross validation, then the check on all of the data with its
margin), the Pitman-Yor process, the MFM and the sparse finite mixture; and scikit-learn's
BayesianGaussianMixture (Dirichlet process, 20 components) as an outside reference; every prior with 4 chains from
unlike starts and the automatic budget (:mod:`pcrp.runs.budget`). Data: Sim 1 and Sim 2 at N = 300 and 2,000 on
several fresh data seeds, Old Faithful, MNIST digits 1-4 (N = 1,000), and the labelled data sets scikit-learn ships
(iris, wine, breast cancer, digits after PCA to 10 dimensions), all standardised except the 1-D simulations.

Per data set and method: NMI and VI (bits) of the kept draws against the true labels (posterior means, with
their Monte Carlo standard errors; BGM's of its one labelling), mean K (MCSE), wall seconds, and whether the chains
agreed (for the pCRP, whether it collapsed below the CRP's clusters, :mod:`pcrp.analyses.collapse`). Over data seeds:
means and the spread between seeds. :func:`write_report` writes compare.md (one table, sentences that say where the
pCRP wins and where it does not, counted), compare.csv, compare.json and one figure (HTML).

Settings (data seeds, the verdict's margins, BGM's components) are declared once in :data:`COMPARE_PARAMS`.
Fits run through joblib in threads locally (``n_jobs`` fits at once, each with one thread) and, with a Dask
scheduler address, on that cluster through joblib's dask backend, as cross validation does.
"""

import math
import time
from dataclasses import dataclass, field, replace

import numpy as np

from ..model import PRIORS
from ..basics.params import Declarations, Param
from .reports import method_name
from ..runs.run_spec import RUN_PARAMS

SIMULATED = ("sim1-300", "sim1-2000", "sim2-300", "sim2-2000")
REAL = ("old-faithful", "mnist-1000", "iris", "wine", "breast-cancer", "digits-pca")
DATA_SETS = SIMULATED + REAL
DIGITS_PCA_DIMS = 10
BGM = "BGM"  # scikit-learn's BayesianGaussianMixture, the outside reference

COMPARE_PARAMS = Declarations(
    "the comparison",
    Param("n_seeds", "data seeds per simulation", 3, 1, 1000, True, True,
          "Fresh data sets drawn per simulation (each data seed counted once in the verdict).", integer=True,
          cli="--seeds", why_high="each data seed is a whole comparison of every prior; ten already show the spread."),
    replace(RUN_PARAMS["seed"], default=1000,
            help="First data seed of the simulations (1000 and on: seeds nothing was tuned on)."),
    # A pCRP result "wins" or "loses" against another method's when their NMIs differ by more than this: about twice
    # the spread between data seeds of one method's NMI on the simulations (docs/compare/compare.md shows both).
    Param("nmi_margin", "NMI margin", 0.01, 0.0, 1.0, True, True,
          "NMIs closer than this count as equal in the verdict."),
    Param("k_margin", "K margin", 0.1, 0.0, 100.0, True, True,
          "Mean K nearer the truth by less than this counts as as near in the verdict."),
    Param("bgm_components", "BGM components", 20, 1, 1000, True, True,
          "Components of scikit-learn's BayesianGaussianMixture (Dirichlet process), the outside reference.",
          integer=True, why_high="a truncation at 1,000 components is far beyond any data set here."),
)
# docs/compare was made with the declared defaults (`pcrp compare --seeds 3`); the quick check draws one data set
# per simulation.
SHIPPED = COMPARE_PARAMS.preset(n_seeds=3, seed=1000)
QUICK_CHECK = COMPARE_PARAMS.preset(n_seeds=1)
NMI_MARGIN = COMPARE_PARAMS["nmi_margin"].default


def prior_methods():
    """{method name: :class:`pcrp.model.PriorSpec`} of every registered prior, in registry order, as the registry is
    now (a prior registered at run time included): "CRP", "pCRP", "Pitman-Yor", "MFM", "SFM"."""
    return {method_name(spec): spec for spec in PRIORS.values()}


def compare_methods():
    """Every method compared, now: the registered priors, then BGM."""
    return tuple(prior_methods()) + (BGM,)


def reference_method():
    """The method whose fits are the over-clustering reference (the registry's ``reference`` prior: the CRP)."""
    return next(name for name, spec in prior_methods().items() if spec.reference)


def tuned_method():
    """The method the verdict is about (the registry's first tuned prior: the pCRP)."""
    return next(name for name, spec in prior_methods().items() if spec.tuned is not None)


METHODS = compare_methods()  # as registered when compare was imported; compare_methods() reads the registry now


@dataclass
class Data:
    """One data set as the methods see it: X (N, d), true labels (N,) or None, its key and seed, and the true K
    (None when unknown: Old Faithful's two eruption types are not labels)."""

    key: str
    seed: int
    X: np.ndarray
    labels: np.ndarray | None
    true_k: int | None
    title: str


def load(key, seed=0):
    """The :class:`Data` of ``key`` (one of DATA_SETS); ``seed`` draws the simulated data and the MNIST subset."""
    from .. import data as data_mod

    if key in SIMULATED:
        name, n = key.split("-")
        ds = data_mod.simulation(name, int(n), seed=seed)
        return Data(key, seed, ds.X, ds.labels, ds.true_k, f"{name.title().replace('Sim', 'Sim ')}, N = {int(n):,}")
    if key == "old-faithful":
        ds = data_mod.old_faithful()
        return Data(key, 0, ds.X, None, None, "Old Faithful, N = 272")
    if key == "mnist-1000":
        ds = data_mod.mnist(n=1000, seed=seed)
        return Data(key, seed, ds.X, ds.labels, ds.true_k, "MNIST digits 1-4, N = 1,000")
    from sklearn import datasets
    from sklearn.decomposition import PCA

    loaders = {"iris": datasets.load_iris, "wine": datasets.load_wine, "breast-cancer": datasets.load_breast_cancer,
               "digits-pca": datasets.load_digits}
    if key not in loaders:
        raise ValueError(f"unknown data set {key!r}; choose from {', '.join(DATA_SETS)}")
    bunch = loaders[key]()
    X = bunch.data.astype(float)
    if key == "digits-pca":
        X = PCA(n_components=DIGITS_PCA_DIMS, random_state=0).fit_transform(X)
    X = data_mod.standardize(X, [str(j) for j in range(X.shape[1])])[0]
    labels = np.asarray(bunch.target, dtype=np.int64)
    title = {"iris": "iris", "wine": "wine", "breast-cancer": "breast cancer",
             "digits-pca": f"digits (PCA to {DIGITS_PCA_DIMS} dimensions)"}[key]
    return Data(key, 0, np.ascontiguousarray(X), labels, int(np.unique(labels).size), f"{title}, N = {X.shape[0]:,}")


@dataclass
class Fit:
    """One method on one data set: metrics as (mean, MCSE or None), mean K, seconds and what to say of it."""

    key: str
    seed: int
    method: str
    true_k: int | None = None
    nmi: tuple = (math.nan, None)
    vi: tuple = (math.nan, None)
    k: tuple = (math.nan, None)
    seconds: float = math.nan
    sweeps: int | None = None
    converged: bool | None = None
    settings: str = ""
    flag: str = ""  # a collapse or disagreeing chains, in words ("" when healthy)
    extra: dict = field(default_factory=dict)

    def as_dict(self):
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in self.__dict__.items()}


def fit_prior(d, method, seed=None, n_jobs=1, reference=None, covariance_type="full"):
    """Fit ``method`` (a key of :func:`prior_methods`) to :class:`Data` ``d`` (drawn with ``seed``, None: ``d.seed``)
    with 4 chains and the automatic budget, at the prior's registry defaults. A tuned prior (the pCRP) first
    chooses its tuned parameter with :func:`pcrp.analyses.cv.choose_r` (its time is counted in its fit's). reference: the
    clusters a fit of the reference prior (the CRP) keeps on the same data (:func:`pcrp.analyses.collapse.reference_clusters`),
    for the collapse flag: a fit below it is flagged when the data's true classes back the count (below the CRP's
    clusters alone, the fit keeps fewer than the CRP, which is what r is for); the reference's own fit records it in
    ``extra["reference"]``. covariance_type: the
    clusters' covariance ("full", "diag", "spherical"; :class:`pcrp.model.NIW`)."""
    from ..runs.chains import run_chains
    from ..analyses.collapse import judge_chains, make_reference, reference_clusters
    from ..analyses.cv import choose_r
    from ..model import make_prior
    from ..summaries.partition import point_estimate
    from ..runs.run_spec import make_run_spec
    from ..summaries.summary import mean_and_mcse, metric_summary

    methods = prior_methods()
    if method not in methods:
        raise ValueError(f"unknown prior method {method!r}; choose from {', '.join(methods)}")
    spec = methods[method]
    seed = d.seed if seed is None else seed
    started = time.perf_counter()
    params, extra = {}, {}
    if spec.tuned is not None:
        r, details = choose_r(d.X, niw={"covariance_type": covariance_type}, seed=seed, n_jobs=n_jobs)
        params = {spec.tuned: r}
        extra = {"r": r, "cv_r": details["cv_r"], "r_text": details["text"]}
    prior = make_prior(spec.name, **params)
    chains = run_chains(d.X, make_run_spec(d.X, prior=prior, niw={"covariance_type": covariance_type}, seed=seed,
                                           n_jobs=n_jobs, data={"data": d.key}))
    seconds = time.perf_counter() - started
    metrics = metric_summary(d.labels, chains.labels) if d.labels is not None else {}
    flag = ""
    if spec.reference:
        extra["reference"] = reference_clusters(point_estimate(chains.labels, seed=seed).labels)
    else:
        # the CRP's count is evidence of a collapse only with the truth beside it (pcrp.analyses.collapse.Reference)
        backed = make_reference(crp_kept=reference, covariance_type=covariance_type, true_labels=d.labels)
        verdict = judge_chains(chains, reference=backed, what=f"the {method}")
        flag = verdict.text if verdict.flagged else ""
    return Fit(d.key, d.seed, method, d.true_k, nmi=tuple(metrics.get("NMI", (math.nan, None))),
               vi=tuple(metrics.get("VI", (math.nan, None))), k=mean_and_mcse(chains.K_after_burn_in),
               seconds=seconds, sweeps=int(chains.K.shape[1]), converged=bool(chains.stop.get("converged")),
               settings=prior.label() + _covariance_words(covariance_type), flag=flag, extra=extra)


def _covariance_words(covariance_type):
    return "" if covariance_type == "full" else f", {covariance_type} covariances"


def fit_bgm(d, seed=None, covariance_type="full"):
    """scikit-learn's BayesianGaussianMixture (Dirichlet process, the declared number of components, ``seed``, None:
    ``d.seed``, the same ``covariance_type`` as the priors) on :class:`Data` ``d``."""
    from sklearn.mixture import BayesianGaussianMixture

    from ..summaries.summary import nmi_vi

    components = COMPARE_PARAMS["bgm_components"].default
    started = time.perf_counter()
    labels = BayesianGaussianMixture(n_components=components, weight_concentration_prior_type="dirichlet_process",
                                     covariance_type=covariance_type, random_state=d.seed if seed is None else seed,
                                     max_iter=1000).fit(d.X).predict(d.X)
    seconds = time.perf_counter() - started
    nmi, vi = nmi_vi(d.labels, labels) if d.labels is not None else (math.nan, math.nan)
    return Fit(d.key, d.seed, BGM, d.true_k, nmi=(nmi, None), vi=(vi, None), k=(float(np.unique(labels).size), None),
               seconds=seconds, settings=f"BayesianGaussianMixture (Dirichlet process, {components} components"
                                         f"{_covariance_words(covariance_type)})")


def fit_data_set(key, seed, methods=None, n_jobs=1, covariance_type="full"):
    """Every method (None: :func:`compare_methods`) on data set ``key`` drawn with ``seed``, every one with clusters
    of ``covariance_type``: [Fit]. The reference prior (the CRP) runs first, whether asked for or not: the other
    priors' collapse flag compares with the clusters it keeps."""
    methods = compare_methods() if methods is None else methods
    d = load(key, seed)
    reference = reference_method()
    first = fit_prior(d, reference, seed, n_jobs, covariance_type=covariance_type)
    fits = [first] if reference in methods else []
    for method in methods:
        if method != reference:
            fits.append(fit_bgm(d, seed, covariance_type) if method == BGM
                        else fit_prior(d, method, seed, n_jobs, first.extra["reference"], covariance_type))
    return fits


def run_comparison(data_sets=DATA_SETS, n_seeds=None, seed=None, methods=None, n_jobs=None, scheduler=None,
                   progress=None, covariance_type="full"):
    """Every method (None: :func:`compare_methods`) on every data set (the simulations on ``n_seeds`` data seeds
    from ``seed``; None: the declared defaults of :data:`COMPARE_PARAMS`, 3 seeds from 1000): a list of
    :class:`Fit`. Data sets are fitted in parallel through joblib (``n_jobs`` at once, threads; None: every core),
    or on the Dask cluster at ``scheduler`` (:func:`pcrp.runs.dask_cluster.parallel_results`). ``progress(done, total)``
    as data sets finish. covariance_type: every prior's and BGM's clusters ("full", "diag", "spherical")."""
    import joblib

    from ..model import check_covariance_type

    covariance_type = check_covariance_type(covariance_type)

    settings = COMPARE_PARAMS.resolve(n_seeds=n_seeds, seed=seed)
    n_seeds, seed = settings["n_seeds"], settings["seed"]
    methods = compare_methods() if methods is None else tuple(methods)
    n_jobs = RUN_PARAMS["n_jobs"].default if n_jobs is None else n_jobs
    jobs = [(key, seed + i if key in SIMULATED else 0) for key in data_sets
            for i in range(n_seeds if key in SIMULATED else 1)]
    tasks = [joblib.delayed(fit_data_set)(key, s, methods, 1, covariance_type) for key, s in jobs]
    fits = []

    from ..analyses.cv import CVError
    from ..runs.dask_cluster import collect_results

    collect_results(tasks, fits.extend, n_jobs=n_jobs, scheduler=scheduler, progress=progress, error=CVError)
    order = {(key, method): i for i, (key, method) in enumerate((k, m) for k in data_sets for m in methods)}
    return sorted(fits, key=lambda f: (order[(f.key, f.method)], f.seed))


def _mean_spread(values):
    values = np.array([v for v in values if v is not None and not math.isnan(v)], dtype=float)
    if values.size == 0:
        return math.nan, math.nan
    return float(values.mean()), (float(values.std(ddof=1)) if values.size > 1 else math.nan)


def _rms(values):
    values = np.array([v for v in values if v is not None and not math.isnan(v)], dtype=float)
    return float(np.sqrt(np.mean(values ** 2))) if values.size else math.nan


def table_rows(fits, data_sets=DATA_SETS, methods=None):
    """One row per (data set, method; None: :func:`compare_methods`): means over data seeds, their spread (SD between
    seeds), the RMS of the within-run MCSEs, seconds, the seeds, how many fits were flagged, and the tuned values
    ("r") of a tuned prior's fits."""
    methods = compare_methods() if methods is None else methods
    rows = []
    for key in data_sets:
        for method in methods:
            group = [f for f in fits if f.key == key and f.method == method]
            if not group:
                continue
            row = {"data": key, "method": method, "seeds": [f.seed for f in group],
                   "settings": sorted({f.settings for f in group}), "flagged": sum(bool(f.flag) for f in group),
                   "unconverged": sum(f.converged is False for f in group)}
            for name in ("nmi", "vi", "k"):
                row[name], row[f"{name} spread"] = _mean_spread([getattr(f, name)[0] for f in group])
                row[f"{name} mcse"] = _rms([getattr(f, name)[1] for f in group])
            row["seconds"] = _mean_spread([f.seconds for f in group])[0]
            row["true_k"] = group[0].true_k
            if any("r" in f.extra for f in group):
                row["r"] = [f.extra.get("r") for f in group]
            rows.append(row)
    return rows


def counts(fits, margin=None):
    """{other method: {"nmi": (pCRP better, about equal, worse), "k": (nearer the truth, as near, farther)}} over the
    data sets (each data seed counted) that have both fits and true labels. margin: NMIs closer than this are equal
    (None: the declared nmi_margin); mean K within the declared k_margin is as near."""
    margin = COMPARE_PARAMS.resolve(nmi_margin=margin)["nmi_margin"]
    k_margin = COMPARE_PARAMS["k_margin"].default
    pivot = tuned_method()
    out = {}
    by = {(f.key, f.seed, f.method): f for f in fits}
    for method in compare_methods():
        if method == pivot:
            continue
        nmi, k = [0, 0, 0], [0, 0, 0]
        for (key, seed, m), p in by.items():
            if m != pivot or (key, seed, method) not in by:
                continue
            o = by[(key, seed, method)]
            if not math.isnan(p.nmi[0]) and not math.isnan(o.nmi[0]):
                diff = p.nmi[0] - o.nmi[0]
                nmi[0 if diff > margin else (2 if diff < -margin else 1)] += 1
            if p.true_k:
                dp, do = abs(p.k[0] - p.true_k), abs(o.k[0] - p.true_k)
                k[0 if dp < do - k_margin else (2 if dp > do + k_margin else 1)] += 1
        out[method] = {"nmi": tuple(nmi), "k": tuple(k)}
    return out


def counts_table(fits, margin=None):
    """:func:`counts` as one row per other method, for a table: against, labelled data sets, then NMI higher /
    within ``margin`` / lower and mean K nearer the truth / as near / farther (the pCRP's, data set by data set)."""
    margin = COMPARE_PARAMS.resolve(nmi_margin=margin)["nmi_margin"]
    return [{"against": method, "labelled data sets": sum(c["nmi"]),
             "NMI higher": c["nmi"][0], f"NMI within {margin:g}": c["nmi"][1], "NMI lower": c["nmi"][2],
             "K nearer the truth": c["k"][0], "K as near": c["k"][1], "K farther": c["k"][2]}
            for method, c in counts(fits, margin).items()]


def flagged_sentence(fits):
    """Which pCRP fits were flagged, in one sentence."""
    pivot = tuned_method()
    flagged = [f for f in fits if f.method == pivot and f.flag]
    return (f"The pCRP fit was flagged (collapsed below both the CRP's clusters and the true classes, or its chains "
            f"disagreed) on "
            f"{len(flagged)} of {sum(f.method == pivot for f in fits)} data sets (each data seed counted once)"
            + (": " + "; ".join(f"{f.key} seed {f.seed}" for f in flagged) if flagged else "") + ".")


def verdict_sentences(fits, margin=None):
    """Where the pCRP wins and where it does not, counted over data sets (each data seed counted once)."""
    margin = COMPARE_PARAMS.resolve(nmi_margin=margin)["nmi_margin"]
    k_margin = COMPARE_PARAMS["k_margin"].default
    out = []
    for method, c in counts(fits, margin).items():
        (b, e, w), (kn, ke, kf) = c["nmi"], c["k"]
        out.append(f"Against the {method}, over {b + e + w} labelled data sets (each data seed of a simulation "
                   f"counted once): the pCRP's NMI is higher by more than {margin:g} on {b}, within {margin:g} "
                   f"on {e} and lower on {w}; its mean K is nearer the true number of clusters on {kn}, "
                   f"as near (within {k_margin:g}) on {ke} and farther on {kf}.")
    out.append(flagged_sentence(fits))
    return out


def markdown(fits, *, command, seconds, load, machine, data_sets=DATA_SETS, methods=None):
    """compare.md: how it was made, the verdict in counts, and one table (mean over data seeds, their spread,
    the RMS within-run MCSE)."""
    def cell(row, name, digits):
        mean, spread, mcse = row[name], row[f"{name} spread"], row[f"{name} mcse"]
        if math.isnan(mean):
            return "-"
        text = f"{mean:.{digits}f}"
        if not math.isnan(spread):
            text += f" ± {spread:.{digits}f}"
        if not math.isnan(mcse):
            text += f" ({mcse:.{digits}f})"
        return text

    truth = {f.key: f.true_k for f in fits}
    lines = [f"Made by `{command}` in {seconds / 60:.0f} min on {machine}, load average {load[0]:.2f} before and "
             f"{load[1]:.2f} after.", "",
             "Every prior with 4 chains from unlike starts and the automatic budget; the pCRP at the r chosen on each "
             "data set by `pcrp.analyses.cv.choose_r` (cross validation, then the check on all the data, with its margin). "
             "Cells: mean over data seeds ± their spread (SD), and in brackets the within-run Monte Carlo standard "
             "error (RMS over seeds); NMI (geometric) and VI (bits) are posterior means over the kept draws against "
             "the true labels (BGM: of its one labelling). Seconds include the pCRP's choice of r.", "",
             "## Where the pCRP wins and where it does not", ""]
    lines += [f"- {sentence}" for sentence in verdict_sentences(fits)]
    lines += ["", "## The table", "",
              "| data | true K | method | NMI | VI (bits) | mean K | seconds | flagged |", "|---|---|---|---|---|---|---|---|"]
    for row in table_rows(fits, data_sets, methods):
        flagged = f"{row['flagged']} of {len(row['seeds'])}" if row["flagged"] else ""
        if row["unconverged"]:
            flagged += f"{'; ' if flagged else ''}{row['unconverged']} at the cap"
        powers = [r for r in row.get("r", []) if r is not None]
        method = row["method"] + (f" (r {', '.join(f'{r:g}' for r in powers)})" if powers else "")
        lines.append(f"| {row['data']} ({len(row['seeds'])} seed{'s' if len(row['seeds']) > 1 else ''}) | "
                     f"{truth.get(row['data']) or '-'} | {method} | {cell(row, 'nmi', 3)} | {cell(row, 'vi', 3)} | "
                     f"{cell(row, 'k', 2)} | {row['seconds']:.1f} | {flagged} |")
    flagged = [f for f in fits if f.flag]
    if flagged:
        lines += ["", "## Flagged fits, in words", ""]
        lines += [f"- {f.key} seed {f.seed}, {f.method}: {f.flag}" for f in flagged]
    return "\n".join(lines) + "\n"


def write_report(fits, out_dir, *, command, seconds, load, machine):
    """Write compare.md, compare.csv, compare.json and compare.html (the figure) into ``out_dir`` (each file whole
    or not at all); returns the path of compare.md."""
    from pathlib import Path

    from ..basics.json_text import dumps
    from ..plots.compare import compare_figure
    from .reports import csv_text, write_figure, write_text

    out = Path(out_dir)
    write_text(out / "compare.md", markdown(fits, command=command, seconds=seconds, load=load, machine=machine))
    rows = table_rows(fits)
    write_text(out / "compare.csv", csv_text(rows, [k for k in rows[0] if k not in ("seeds", "settings", "r")]))
    payload = {"command": command, "seconds": seconds, "load": list(load), "machine": machine,
               "fits": [f.as_dict() for f in fits], "rows": rows, "verdict": verdict_sentences(fits),
               "counts": counts_table(fits), "flagged": flagged_sentence(fits)}
    write_text(out / "compare.json", dumps(payload, indent=1))
    write_figure(compare_figure(rows), out / "compare.html")
    return out / "compare.md"


def read_report(path):
    """What a page shows of a compare.json written by :func:`write_report`: {"rows": the table's rows, "counts":
    :func:`counts_table`, "flagged": :func:`flagged_sentence`, "verdict": the sentences, "provenance": how it was
    made, in words}."""
    import json

    with open(path, encoding="utf-8") as f:
        payload = json.load(f)
    provenance = (f"`{payload['command']}`, {payload['seconds'] / 60:.0f} min on {payload['machine']}, load "
                  f"{payload['load'][0]:.2f} / {payload['load'][1]:.2f}")
    return {"rows": payload["rows"], "counts": payload["counts"], "flagged": payload["flagged"],
            "verdict": payload["verdict"], "provenance": provenance}

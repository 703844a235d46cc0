"""The paper's experiments: CV of r, then CRP-Oracle, CRP and pCRP on the same data.

Each :class:`Experiment` names the data compared on, the separate data r is
cross-validated on, the true number of clusters (for the CRP-Oracle's
alpha = K_true / ln N) and the numbers the paper publishes. :func:`run_experiment`
does one experiment; :func:`write_report` writes Table 1 / Table 2 style
tables (Markdown and CSV, ours next to the paper's) and the figures (HTML,
sharing one plotly.js).

Protocol (paper Sec. 3): 20,000 sweeps, burn-in 10,000, thin 5, alpha = 1 for
CRP and pCRP. Every method runs :data:`N_CHAINS` chains from different starts
(:data:`pcrp.chains.DEFAULT_INITS`, cycled); a row's R-hat (rank-normalised,
split, ArviZ) compares them, and a row whose R-hat on K or on the log joint
exceeds :data:`pcrp.summary.RHAT_THRESHOLD` is flagged: its chains disagree, so
its numbers depend on where the chains started. Our sampler adds split-merge
moves by default (the paper's plain Gibbs is ``split_merge=False``). Numbers
are means over the kept draws of all chains; their standard errors are Monte
Carlo standard errors (ArviZ's MCSE, which accounts for autocorrelation). K max
is the largest K after burn-in in any chain.
"""

import json
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import data as data_mod
from .chains import run_chains
from .cv import DEFAULT_GRID, cross_validate
from .model import CRP, PowerCRP, resolve_niw
from .summary import RHAT_THRESHOLD, k_posterior, mean_and_mcse, metric_summary, oracle_alpha

N_CHAINS = 4
# A gap between our number and the paper's larger than this is explained on the page and in the report.
TOLERANCE = {"NMI": 0.03, "VI": 0.1, "K": 0.5}
METHODS = ("CRP-Oracle", "CRP", "pCRP")


@dataclass(frozen=True)
class Protocol:
    """Sweeps for the compared chains and for each cross-validation fit."""

    iters: int = 20000
    burn_in: int = 10000
    thin: int = 5
    cv_iters: int = 2000
    cv_burn_in: int = 1000
    cv_thin: int = 10
    cv_folds: int = 5
    split_merge: bool = True


FULL = Protocol()
QUICK = Protocol(iters=2000, burn_in=1000, thin=5, cv_iters=400, cv_burn_in=200, cv_thin=10, cv_folds=3)


@dataclass(frozen=True)
class Experiment:
    key: str
    title: str
    table: str
    k_true: int
    data: str  # "sim1", "sim2", "mnist" or "old-faithful"
    n: int
    n_cv: int
    paper: dict  # method -> {"NMI", "VI", "K", "K max"}; a missing entry is not legible / not published
    paper_note: str = ""
    gap_note: str = ""  # why our numbers may differ from the paper's


def _paper(nmi, vi, k, kmax):
    return {name: v for name, v in (("NMI", nmi), ("VI", vi), ("K", k), ("K max", kmax)) if v is not None}


_NOT_LEGIBLE = "pCRP rows are set in bold in the paper and did not survive its text extraction."
_SIM_TRUTH = ("The paper's Table 1 gives Sim 2's ground truth as K = 2, while its Fig. 2 shows three components and "
              "its oracle alpha (0.52 = 3 / ln 300) implies three; we use three. ")
_SIM_GAPS = ("The paper prints no simulation parameters. Ours are calibrated (see pcrp/datasets/README.md) so that our "
             "CRP-Oracle and CRP rows match the paper's within 0.03 NMI, 0.1 VI and 0.5 K on average over data "
             "sets; a larger gap here is the luck of this one data set of N points.")
_MNIST_GAPS = ("Our MNIST pipeline is not the authors': a 2-D spectral embedding (scikit-learn) of our bundled "
               "5,000-digit subset, and our NIW defaults; the number of clusters depends strongly on both, so our "
               "CRP and CRP-Oracle find more clusters than the paper's.")
EXPERIMENTS = {
    e.key: e for e in [
        Experiment("sim1-300", "Sim 1, N = 300", "Table 1", 3, "sim1", 300, 200,
                   {"CRP-Oracle": _paper(0.800, 0.669, 4.2, 8), "CRP": _paper(0.773, 0.795, 5.3, 12)}, _NOT_LEGIBLE,
                   _SIM_GAPS),
        Experiment("sim2-300", "Sim 2, N = 300", "Table 1", 3, "sim2", 300, 200,
                   {"CRP-Oracle": _paper(0.937, 0.210, 4.0, 9), "CRP": _paper(0.917, 0.287, 4.8, 12)},
                   _SIM_TRUTH + _NOT_LEGIBLE, _SIM_GAPS),
        Experiment("sim1-2000", "Sim 1, N = 2000", "Table 1", 3, "sim1", 2000, 200,
                   {"CRP-Oracle": _paper(0.812, 0.610, 4.0, 10), "CRP": _paper(0.782, 0.732, 5.8, 12)},
                   _NOT_LEGIBLE, _SIM_GAPS),
        Experiment("sim2-2000", "Sim 2, N = 2000", "Table 1", 3, "sim2", 2000, 200,
                   {"CRP-Oracle": _paper(0.962, 0.122, 4.1, 8), "CRP": _paper(0.940, 0.205, 5.6, 13)},
                   _SIM_TRUTH + _NOT_LEGIBLE, _SIM_GAPS),
        Experiment("mnist-1000", "MNIST digits 1-4, N = 1000", "Table 2", 4, "mnist", 1000, 1000,
                   {"CRP-Oracle": _paper(None, None, 4.37, 7), "CRP": _paper(None, 1.386, 4.58, 8)},
                   "Only these CRP numbers are legible in our copy of the paper. " + _NOT_LEGIBLE, _MNIST_GAPS),
        Experiment("mnist-2000", "MNIST digits 1-4, N = 2000", "Table 2", 4, "mnist", 2000, 1000,
                   {"CRP-Oracle": _paper(0.651, 1.400, 5.17, 8), "CRP": _paper(0.651, 1.402, 5.44, 9)},
                   "The paper's numbers are for N = 3000; the bundled subset has 2000 digits 1-4. " + _NOT_LEGIBLE,
                   _MNIST_GAPS),
        Experiment("old-faithful", "Old Faithful, N = 172", "Old Faithful", 2, "old-faithful", 172, 100,
                   {"CRP-Oracle": {"K": 2}, "CRP": {"K": 4}, "pCRP": {"K": 2}},
                   "The paper reports the number of components found (its Fig. 8b), not a posterior mean; "
                   "there are no true labels, so no NMI or VI.",
                   "The paper's K is the number of components of one fit (its Fig. 8b), a whole number; ours is "
                   "the posterior mean over draws, so a method whose draws have 2, 3 or 4 clusters shows a "
                   "mean in between."),
    ]
}


def load_experiment_data(experiment, seed=0):
    """(data compared on, data r is cross-validated on) as :class:`pcrp.data.Dataset`.

    Simulations: fresh draws (the CV set with another seed). MNIST: two random
    subsets of the bundled digits (they overlap when N = 2000: the bundled
    file has 2000 images of digits 1-4). Old Faithful: a random 100 for CV and
    the other 172 compared, as in the paper.
    """
    e = experiment
    if e.data in data_mod.SIMULATIONS:
        return (data_mod.simulation(e.data, e.n, seed=seed),
                data_mod.simulation(e.data, e.n_cv, seed=seed + 1000))
    if e.data == "mnist":
        return data_mod.mnist(n=e.n, seed=seed), data_mod.mnist(n=e.n_cv, seed=seed + 1000)
    full = data_mod.old_faithful()
    order = np.random.default_rng(seed).permutation(full.n)
    return _subset(full, np.sort(order[e.n_cv:])), _subset(full, np.sort(order[:e.n_cv]))


def _subset(ds, rows):
    return data_mod.Dataset(name=ds.name, X=ds.X[rows], columns=ds.columns, description=ds.description,
                            standardized=ds.standardized, center=ds.center, scale=ds.scale,
                            source={**ds.source, "rows": rows.tolist()})


@dataclass
class MethodResult:
    """One method's chains on one experiment.

    chains: :class:`pcrp.chains.ChainSet` (K (C, T), labels (C, S, N), ...).
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
        """False when R-hat on K or on the log joint exceeds RHAT_THRESHOLD."""
        return not any(value > RHAT_THRESHOLD for value in self.rhat.values())


@dataclass
class ExperimentResult:
    experiment: Experiment
    data: object
    niw: object
    cv: object
    methods: dict = field(default_factory=dict)
    protocol: Protocol = FULL
    seed: int = 0


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


def run_experiment(experiment, protocol=FULL, seed=0, n_jobs=-1, scheduler=None, progress=None, r_grid=DEFAULT_GRID,
                   n_chains=N_CHAINS):
    """CV of r on the CV data, then the three methods on the compared data, ``n_chains`` chains each.

    ``progress(stage, fraction)`` is called, from the calling thread only, with stage in
    {"cross validation", "CRP-Oracle", "CRP", "pCRP"}.
    """
    ds, cv_ds = load_experiment_data(experiment, seed)
    report = progress or (lambda stage, fraction: None)
    cv = cross_validate(cv_ds.X, standardize=cv_ds.standardized, r_grid=r_grid, folds=protocol.cv_folds,
                        iters=protocol.cv_iters, burn_in=protocol.cv_burn_in, thin=protocol.cv_thin, seed=seed,
                        split_merge=protocol.split_merge, n_jobs=n_jobs, scheduler=scheduler,
                        progress=lambda done, total: report("cross validation", done / total))
    niw = resolve_niw(ds.X)
    result = ExperimentResult(experiment, ds, niw, cv, protocol=protocol, seed=seed)
    priors = {
        "CRP-Oracle": CRP(oracle_alpha(experiment.k_true, ds.n)),
        "CRP": CRP(1.0),
        "pCRP": PowerCRP(1.0, cv.chosen_r),
    }
    for method, prior in priors.items():
        done = np.zeros(n_chains)  # sweeps per chain, written by the chains' threads

        def record(chain, sweeps, done=done):
            done[chain] = sweeps

        # The chains report from their own threads; progress is only ever called from this one
        # (a Streamlit page may update its widgets only from the thread running the script).
        with ThreadPoolExecutor(max_workers=1) as pool:
            running = pool.submit(run_chains, ds.X, prior, niw, n_chains=n_chains, iters=protocol.iters,
                                  burn_in=protocol.burn_in, thin=protocol.thin, seed=seed, n_jobs=n_jobs,
                                  split_merge=protocol.split_merge, callback=record)
            while not wait([running], timeout=0.25).done:
                report(method, done.sum() / (n_chains * protocol.iters))
            chains = running.result()
        report(method, 1.0)
        metrics, p_k = summarize_chains(chains, ds.labels)
        result.methods[method] = MethodResult(method, prior.alpha, getattr(prior, "r", 1.0), chains, metrics, p_k,
                                              chains.diagnostics())
    return result


COLUMNS = ("NMI", "VI", "K", "K max")


def plain(value, se=None, digits=3):
    """'0.616 ± 0.002': the value, and its standard error to one significant digit, in plain decimals."""
    if value is None or (isinstance(value, float) and not np.isfinite(value)):
        return ""
    if isinstance(value, (int, np.integer)):
        return str(value)
    if se is None or not np.isfinite(se) or se <= 0:
        return f"{value:.{digits}f}"
    places = max(digits, int(-np.floor(np.log10(se))))
    return f"{value:.{places}f} ± {se:.{places}f}"


def comparison_rows(result):
    """One row per method, ours next to the paper's: {method, alpha, r, "<col>", "<col> SE", "<col> paper",
    "R-hat K", "R-hat log joint", "chains agree"} (ground truth first when the labels are known)."""
    e = result.experiment
    rows = []
    if result.data.labels is not None:
        row = dict(method="Ground truth", NMI=1.0, VI=0.0, K=result.data.true_k)
        if e.table == "Table 1":  # the paper's Table 1 has ground-truth rows (Sim 2's K printed as 2)
            row.update({"NMI paper": 1.0, "VI paper": 0.0, "K paper": 2 if e.data == "sim2" else e.k_true})
        rows.append(row)
    for method in METHODS:
        m = result.methods[method]
        row = dict(method=method, alpha=m.alpha, r=m.r, **{"R-hat K": m.rhat["K"],
                                                         "R-hat log joint": m.rhat["log joint"],
                                                         "chains agree": m.chains_agree})
        for col in COLUMNS:
            if col in m.metrics:
                row[col], row[col + " SE"] = m.metrics[col]
            if col in e.paper.get(method, {}):
                row[col + " paper"] = e.paper[method][col]
        rows.append(row)
    return rows


def gaps(result):
    """[(method, column, ours, paper)] where ours and the paper's differ by more than TOLERANCE."""
    out = []
    for row in comparison_rows(result):
        for col, tol in TOLERANCE.items():
            ours, paper = row.get(col), row.get(col + " paper")
            if row["method"] != "Ground truth" and ours is not None and paper is not None \
                    and abs(ours - paper) > tol:
                out.append((row["method"], col, float(ours), float(paper)))
    return out


def display_rows(result):
    """comparison_rows as strings for a table: 'ours' and 'paper' columns side by side."""
    out = []
    for row in comparison_rows(result):
        shown = {"method": row["method"],
                 "alpha": plain(row.get("alpha"), digits=2), "r": plain(row.get("r"), digits=2)}
        for col in COLUMNS:
            digits = 2 if col == "K" else 3
            shown[f"{col}, ours"] = plain(row.get(col), row.get(col + " SE"), digits)
            paper = row.get(col + " paper")
            shown[f"{col}, paper"] = ("" if paper is None else f"{paper:.3f}" if col in ("NMI", "VI")
                                      else f"{paper:g}")  # as printed in the paper
        if row["method"] == "Ground truth":
            shown["R-hat (K / log joint)"] = ""
        else:
            flag = "" if row["chains agree"] else " — chains disagree"
            shown["R-hat (K / log joint)"] = (f"{_rhat(row['R-hat K'])} / {_rhat(row['R-hat log joint'])}{flag}")
        out.append(shown)
    return out


def _rhat(value):
    return "n/a" if not np.isfinite(value) else f"{value:.3f}"


def markdown_table(result):
    """One Markdown table: our numbers (± MCSE) next to the paper's, R-hat per method."""
    rows = display_rows(result)
    header = list(rows[0])
    lines = ["| " + " | ".join(header) + " |", "|---" * len(header) + "|"]
    lines += ["| " + " | ".join(row[h] for h in header) + " |" for row in rows]
    return "\n".join(lines)


def gap_lines(result):
    """Plain sentences for the gaps beyond TOLERANCE, and why (empty when there are none)."""
    found = gaps(result)
    if not found:
        return []
    cells = "; ".join(f"{m} {c} {o:.3g} against {p:.3g}" for m, c, o, p in found)
    return [f"Gaps beyond 0.03 NMI, 0.1 VI or 0.5 K: {cells}. {result.experiment.gap_note}"]


def disagreement_lines(result):
    """One sentence per method whose chains disagree (R-hat above the threshold)."""
    out = []
    for m in result.methods.values():
        if not m.chains_agree:
            k_means = [f"{k:.2f}" for k in m.chains.kept_K.mean(axis=1)]
            out.append(f"{m.method}: the {len(k_means)} chains disagree (R-hat {_rhat(m.rhat['K'])} on K, "
                       f"{_rhat(m.rhat['log joint'])} on the log joint; mean K per chain {', '.join(k_means)}): "
                       "its numbers depend on where the chains started.")
    return out


def figures(result):
    """{name: plotly Figure} for one experiment."""
    from . import plots

    e, ds, p = result.experiment, result.data, result.protocol
    figs = {"cv": plots.cv_curves(result.cv, f"{e.title}: cross validation of r (on {result.cv.settings['n']} points)")}
    k_max = max(int(m.K.max()) for m in result.methods.values())
    figs["k_traces"] = plots.k_traces_by_method({m: r.K for m, r in result.methods.items()}, p.burn_in,
                                               f"{e.title}: K over sweeps, one line per chain",
                                               y_range=[0, k_max + 1])
    figs["k_posterior"] = plots.k_posterior_compare({m: r.K[:, p.burn_in:].ravel() for m, r in result.methods.items()},
                                                   f"{e.title}: posterior of K")
    pooled = {m: r.chains.pooled_labels() for m, r in result.methods.items()}
    last = {m: r.labels[0, -1] for m, r in result.methods.items()}
    if ds.dim == 1:
        figs["density"] = plots.density_side_by_side(ds.X, pooled, result.niw, f"{e.title}: posterior density")
    else:
        figs["clusters"] = plots.scatter_side_by_side(ds.X, last, ds.columns, f"{e.title}: last kept draw (chain 1)")
    if e.data == "old-faithful":
        figs["cluster_sizes"] = plots.cluster_sizes_compare(last, f"{e.title}: cluster sizes (last kept draw, chain 1)")
    return figs


def claims(results):
    """The paper's claim about Sim 1 checked on our runs: P(K = 3) under pCRP at N = 300 and N = 2000
    ("rises from 0.55 to 0.68") and P(K = 4) under CRP-Oracle ("around 0.37 and 0.38"). Lines of text."""
    by_key = {res.experiment.key: res for res in results}
    if not {"sim1-300", "sim1-2000"} <= set(by_key):
        return []
    small, large = by_key["sim1-300"].methods, by_key["sim1-2000"].methods
    p3 = [m["pCRP"].p_k.get(3, 0.0) for m in (small, large)]
    p4 = [m["CRP-Oracle"].p_k.get(4, 0.0) for m in (small, large)]
    return [f"Sim 1, P(K = 3) under pCRP from N = 300 to N = 2000: ours {p3[0]:.2f} to {p3[1]:.2f} "
            f"(r = {small['pCRP'].r:g} and {large['pCRP'].r:g}); the paper: 0.55 to 0.68.",
            f"Sim 1, P(K = 4) under CRP-Oracle: ours {p4[0]:.2f} and {p4[1]:.2f}; the paper: about 0.37 and 0.38."]


def write_report(results, out_dir, command=""):
    """Write tables.md, tables.csv, cv_<key>.csv, summary.json and figures/<key>_<name>.html (with the
    figures' shared figures/plotly.min.js). Each file is written whole or not at all
    (:func:`pcrp.files.atomic_write`): an OSError (a full disk) leaves every earlier file as it was."""
    from .files import atomic_write

    out_dir = Path(out_dir)
    (out_dir / "figures").mkdir(parents=True, exist_ok=True)
    md = ["# Reproducing Lu, Li & Dunson: our numbers next to the paper's", ""]
    if command:
        md += ["Made by:", "", "```", command, "```", ""]
    if results:
        p = results[0].protocol
        md += [f"Protocol: {N_CHAINS} chains per method from different starts, each {p.iters:,} sweeps, burn-in "
               f"{p.burn_in:,}, thin {p.thin}; split-merge {'on' if p.split_merge else 'off'}; r by {p.cv_folds}-fold "
               f"CV ({p.cv_iters:,} sweeps per fit, burn-in {p.cv_burn_in:,}). NMI geometric, VI in bits; "
               "ours: mean over the kept draws of every chain ± its Monte Carlo standard error (MCSE); R-hat "
               f"compares the chains (above {RHAT_THRESHOLD} they disagree).", ""]
    all_rows = []
    for res in results:
        e = res.experiment
        md += [f"## {e.title} ({e.table})", "",
               f"CV on {res.cv.settings['n']} points proposed r = {res.cv.chosen_r:.2f}: {res.cv.blow_up.reason}.",
               "", markdown_table(res), ""]
        for line in disagreement_lines(res) + gap_lines(res):
            md += [line, ""]
        if e.paper_note:
            md += [f"Note: {e.paper_note}", ""]
        all_rows += [{"experiment": e.title, **row} for row in comparison_rows(res)]
        atomic_write(out_dir / f"cv_{e.key}.csv", lambda f, res=res: _write_csv(f, res.cv.table()))
        for name, fig in figures(res).items():
            _write_figure(fig, out_dir / "figures" / f"{e.key}_{name}.html")
    if claims(results):
        md += ["## The paper's claims about the posterior of K", ""] + [f"- {line}" for line in claims(results)] + [""]
    atomic_write(out_dir / "tables.md", lambda f: f.write("\n".join(md)))
    fields = ["experiment", "method", "alpha", "r"] + [c for col in COLUMNS for c in (col, col + " SE", col + " paper")]
    fields += ["R-hat K", "R-hat log joint", "chains agree"]
    atomic_write(out_dir / "tables.csv", lambda f: _write_csv(f, all_rows, fields))
    summary = {
        res.experiment.key: {
            "chosen_r": res.cv.chosen_r,
            "cv": res.cv.settings,
            "niw": res.niw.as_dict(),
            "methods": {m: {"alpha": r.alpha, "r": r.r, "seconds_per_sweep": r.seconds_per_sweep,
                            **{k: v[0] for k, v in r.metrics.items()},
                            **{f"{k} MCSE": v[1] for k, v in r.metrics.items() if v[1] is not None},
                            "P(K)": r.p_k, "diagnostics": r.diagnostics, "chains_agree": r.chains_agree,
                            "config": r.chains.config}
                        for m, r in res.methods.items()},
        }
        for res in results
    }
    atomic_write(out_dir / "summary.json", lambda f: json.dump(summary, f, indent=2, default=_json_default))
    return out_dir / "tables.md"


def _write_csv(f, rows, fields=None):
    """``rows`` (dicts) as CSV into the open text file ``f``; columns ``fields`` (default: the first row's keys)."""
    import csv

    writer = csv.DictWriter(f, fieldnames=fields or list(rows[0]), extrasaction="ignore")
    writer.writeheader()
    writer.writerows(rows)


def _write_figure(fig, path):
    """A Plotly figure as a full HTML page at ``path`` that loads plotly.min.js from its own folder (written there
    once, as Plotly's ``include_plotlyjs="directory"`` does); both written whole or not at all."""
    from plotly.offline import get_plotlyjs

    from .files import atomic_write

    atomic_write(path, lambda f: f.write(fig.to_html(include_plotlyjs="directory", full_html=True)))
    bundle = path.parent / "plotly.min.js"
    if not bundle.exists():
        atomic_write(bundle, lambda f: f.write(get_plotlyjs()))


def _json_default(value):
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")

"""The paper's experiments: CV of r, then CRP-Oracle, CRP and pCRP on the same data.

Each :class:`Experiment` names the data compared on, the separate data r is
cross-validated on, the true number of clusters (for the CRP-Oracle's
alpha = K_true / ln N) and the numbers the paper publishes. :func:`run_experiment`
does one experiment; :func:`write_report` writes Table 1 / Table 2 style
tables (Markdown and CSV) and the figures (HTML, sharing one plotly.js).

Protocol (paper Sec. 3): 20,000 sweeps, burn-in 10,000, thin 5, alpha = 1 for
CRP and pCRP. Our sampler adds split-merge moves by default (the paper's plain
Gibbs is ``split_merge=False``); without them pCRP chains keep their start.
Standard errors of NMI, VI and K are over kept draws (std / sqrt(draws), as
in the paper); successive draws are correlated, so they are optimistic.
K max is the largest K after burn-in.
"""

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import data as data_mod
from .cv import DEFAULT_GRID, cross_validate
from .model import CRP, PowerCRP, resolve_niw
from .sampler import run
from .summary import metric_summary, oracle_alpha

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


def _paper(nmi, vi, k, kmax):
    return {name: v for name, v in (("NMI", nmi), ("VI", vi), ("K", k), ("K max", kmax)) if v is not None}


_NOT_LEGIBLE = "pCRP rows are set in bold in the paper and did not survive its text extraction."
EXPERIMENTS = {
    e.key: e for e in [
        Experiment("sim1-300", "Sim 1, N = 300", "Table 1", 3, "sim1", 300, 200,
                   {"CRP-Oracle": _paper(0.800, 0.669, 4.2, 8), "CRP": _paper(0.773, 0.795, 5.3, 12)}, _NOT_LEGIBLE),
        Experiment("sim2-300", "Sim 2, N = 300", "Table 1", 3, "sim2", 300, 200,
                   {"CRP-Oracle": _paper(0.937, 0.210, 4.0, 9), "CRP": _paper(0.917, 0.287, 4.8, 12)}, _NOT_LEGIBLE),
        Experiment("sim1-2000", "Sim 1, N = 2000", "Table 1", 3, "sim1", 2000, 200,
                   {"CRP-Oracle": _paper(0.812, 0.610, 4.0, 10), "CRP": _paper(0.782, 0.732, 5.8, 12)},
                   _NOT_LEGIBLE),
        Experiment("sim2-2000", "Sim 2, N = 2000", "Table 1", 3, "sim2", 2000, 200,
                   {"CRP-Oracle": _paper(0.962, 0.122, 4.1, 8), "CRP": _paper(0.940, 0.205, 5.6, 13)},
                   _NOT_LEGIBLE),
        Experiment("mnist-1000", "MNIST digits 1-4, N = 1000", "Table 2", 4, "mnist", 1000, 1000,
                   {"CRP-Oracle": _paper(None, None, 4.37, 7), "CRP": _paper(None, 1.386, 4.58, 8)},
                   "Only these CRP numbers are legible in our copy of the paper. " + _NOT_LEGIBLE),
        Experiment("mnist-2000", "MNIST digits 1-4, N = 2000", "Table 2", 4, "mnist", 2000, 1000,
                   {"CRP-Oracle": _paper(0.651, 1.400, 5.17, 8), "CRP": _paper(0.651, 1.402, 5.44, 9)},
                   "The paper's numbers are for N = 3000; the bundled subset has 2000 digits 1-4. " + _NOT_LEGIBLE),
        Experiment("old-faithful", "Old Faithful, N = 172", "Old Faithful", 2, "old-faithful", 172, 100,
                   {"CRP-Oracle": {"K": 2}, "CRP": {"K": 4}, "pCRP": {"K": 2}},
                   "The paper reports the number of components found (its Fig. 8b), not a posterior mean; "
                   "there are no true labels, so no NMI or VI."),
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
    method: str
    alpha: float
    r: float
    K: np.ndarray  # (iters,)
    labels: np.ndarray  # (n_kept, N)
    metrics: dict  # name -> (mean, SE); NMI / VI only with true labels
    seconds_per_sweep: float


@dataclass
class ExperimentResult:
    experiment: Experiment
    data: object
    niw: object
    cv: object
    methods: dict = field(default_factory=dict)
    protocol: Protocol = FULL
    seed: int = 0


def summarize_chain(K, labels, burn_in, true_labels=None):
    """Table entries for one chain: NMI, VI (mean, SE) if labels are known; K (mean, SE) and K max."""
    kept_k = np.array([len(np.unique(z)) for z in labels])
    out = {}
    if true_labels is not None:
        out.update(metric_summary(true_labels, labels))
    se = kept_k.std(ddof=1) / np.sqrt(kept_k.size) if kept_k.size > 1 else float("nan")
    out["K"] = (float(kept_k.mean()), float(se))
    out["K max"] = (int(np.max(K[burn_in:])), None)
    return out


def run_experiment(experiment, protocol=FULL, seed=0, n_jobs=-1, scheduler=None, progress=None, r_grid=DEFAULT_GRID):
    """CV of r on the CV data, then the three methods on the compared data.

    ``progress(stage, fraction)`` is called with stage in {"cross validation",
    "CRP-Oracle", "CRP", "pCRP"}.
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
        chain = run(ds.X, prior, niw, iters=protocol.iters, burn_in=protocol.burn_in, thin=protocol.thin,
                    seed=seed, split_merge=protocol.split_merge,
                    callback=lambda sampler, done, m=method: report(m, done / protocol.iters))
        result.methods[method] = MethodResult(
            method, prior.alpha, getattr(prior, "r", 1.0), chain.K, chain.labels,
            summarize_chain(chain.K, chain.labels, protocol.burn_in, ds.labels), chain.seconds_per_sweep)
    return result


COLUMNS = ("NMI", "VI", "K", "K max")


def table_rows(result):
    """Rows for one experiment: ours for each method, then the paper's where published."""
    e = result.experiment
    rows = []
    if result.data.labels is not None:
        rows.append(dict(experiment=e.title, method="Ground truth", source="ours", NMI=1.0, VI=0.0,
                         K=float(len(np.unique(result.data.labels))), **{"K max": None}))
    for method in METHODS:
        m = result.methods[method]
        row = dict(experiment=e.title, method=method, source="ours", alpha=m.alpha, r=m.r)
        for col in COLUMNS:
            if col in m.metrics:
                row[col], row[col + " SE"] = m.metrics[col]
        rows.append(row)
    for method in METHODS:
        if method in e.paper:
            rows.append(dict(experiment=e.title, method=method, source="paper", **e.paper[method]))
    return rows


def _fmt(value, se=None, digits=3):
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return ""
    text = f"{value:.{digits}f}" if isinstance(value, float) else str(value)
    return f"{text} ({se:.1e})" if se is not None and np.isfinite(se) else text


def markdown_table(result):
    """One Markdown table: our rows (value (SE)) next to the paper's."""
    lines = ["| method | source | alpha | r | NMI (SE) | VI (SE) | K (SE) | K max |", "|---" * 8 + "|"]
    for row in table_rows(result):
        alpha = _fmt(row.get("alpha"), digits=2) if "alpha" in row else ""
        r = _fmt(row.get("r"), digits=2) if "r" in row else ""
        cells = [_fmt(row.get(c), row.get(c + " SE"), digits=2 if c == "K" else 3) for c in ("NMI", "VI", "K")]
        lines.append(f"| {row['method']} | {row['source']} | {alpha} | {r} | " + " | ".join(cells)
                     + f" | {_fmt(row.get('K max'))} |")
    return "\n".join(lines)


def figures(result):
    """{name: plotly Figure} for one experiment."""
    from . import plots

    e, ds, p = result.experiment, result.data, result.protocol
    figs = {"cv": plots.cv_curves(result.cv, f"{e.title}: cross validation of r (on {result.cv.settings['n']} points)")}
    k_max = max(int(m.K.max()) for m in result.methods.values())
    figs["k_traces"] = plots.k_traces_side_by_side({m: r.K for m, r in result.methods.items()}, p.burn_in,
                                                  f"{e.title}: K over sweeps", y_range=[0, k_max + 1])
    figs["k_posterior"] = plots.k_posterior_compare({m: r.K[p.burn_in:] for m, r in result.methods.items()},
                                                   f"{e.title}: posterior of K")
    last = {m: r.labels[-1] for m, r in result.methods.items()}
    if ds.dim == 1:
        figs["density"] = plots.density_side_by_side(ds.X, {m: r.labels for m, r in result.methods.items()},
                                                     result.niw, f"{e.title}: posterior density")
    else:
        figs["clusters"] = plots.scatter_side_by_side(ds.X, last, ds.columns, f"{e.title}: last kept draw")
    if e.data == "old-faithful":
        figs["cluster_sizes"] = plots.cluster_sizes_compare(last, f"{e.title}: cluster sizes (last kept draw)")
    return figs


def write_report(results, out_dir, command=""):
    """Write tables.md, tables.csv, cv_<key>.csv, summary.json and figures/<key>_<name>.html."""
    import csv

    out_dir = Path(out_dir)
    (out_dir / "figures").mkdir(parents=True, exist_ok=True)
    md = ["# Reproducing Lu, Li & Dunson: our numbers next to the paper's", ""]
    if command:
        md += ["Made by:", "", "```", command, "```", ""]
    if results:
        p = results[0].protocol
        md += [f"Protocol: {p.iters:,} sweeps, burn-in {p.burn_in:,}, thin {p.thin}; split-merge "
               f"{'on' if p.split_merge else 'off'}; r by {p.cv_folds}-fold CV ({p.cv_iters:,} sweeps per fit, "
               f"burn-in {p.cv_burn_in:,}). NMI geometric, VI in bits; SE over kept draws.", ""]
    all_rows = []
    for res in results:
        e = res.experiment
        md += [f"## {e.title} ({e.table})", "",
               f"CV on {res.cv.settings['n']} points proposed r = {res.cv.chosen_r:.2f}: {res.cv.blow_up.reason}.",
               "", markdown_table(res), ""]
        if e.paper_note:
            md += [f"Note: {e.paper_note}", ""]
        all_rows += table_rows(res)
        with open(out_dir / f"cv_{e.key}.csv", "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(res.cv.table()[0]))
            writer.writeheader()
            writer.writerows(res.cv.table())
        for name, fig in figures(res).items():
            fig.write_html(out_dir / "figures" / f"{e.key}_{name}.html", include_plotlyjs="directory",
                           full_html=True)
    (out_dir / "tables.md").write_text("\n".join(md))
    fields = ["experiment", "method", "source", "alpha", "r"] + [c for col in COLUMNS for c in (col, col + " SE")]
    with open(out_dir / "tables.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(all_rows)
    summary = {
        res.experiment.key: {
            "chosen_r": res.cv.chosen_r,
            "cv": res.cv.settings,
            "niw": res.niw.as_dict(),
            "methods": {m: {"alpha": r.alpha, "r": r.r, "seconds_per_sweep": r.seconds_per_sweep,
                            **{k: v[0] for k, v in r.metrics.items()}} for m, r in res.methods.items()},
        }
        for res in results
    }
    (out_dir / "summary.json").write_text(json.dumps(summary, indent=2, default=float))
    return out_dir / "tables.md"

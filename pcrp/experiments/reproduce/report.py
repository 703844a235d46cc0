"""Reproduce's report: tables.md, tables.csv, tables_by_seed.csv, cv_<key>.csv, summary.json and the figures (HTML,
sharing one plotly.js), written through :mod:`pcrp.experiments.reports`; and :func:`figures`, the page's figures of one run.
"""

from pathlib import Path

from ...basics.json_text import dumps
from ..reports import write_csv, write_figure
from ...summaries.summary import RHAT_THRESHOLD
from .aggregate import COLUMNS, GROUND_TRUTH, MARGIN_NATS, SPREAD_MULT, comparison_rows, seed_rows, versus_crp
from .methods import REFERENCE, TUNED
from .protocol import N_CHAINS
from .text import (_as_seeds, _r_text, claims, extra_lines, markdown_seed_table, seed_disagreement_lines,
                   seed_gap_lines, versus_lines)


def figures(result):
    """{name: plotly Figure} for one experiment."""
    from ... import plots

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
        from ...model import prior_of

        priors = {m: prior_of(r.chains.config) for m, r in result.methods.items()}
        figs["density"] = plots.density_side_by_side(ds.X, pooled, result.niw, f"{e.title}: posterior density",
                                                     priors=priors)
    else:
        figs["clusters"] = plots.scatter_side_by_side(ds.X, last, ds.columns, f"{e.title}: last kept draw (chain 1)")
    if e.data == "old-faithful":
        figs["cluster_sizes"] = plots.cluster_sizes_compare(last, f"{e.title}: cluster sizes (last kept draw, chain 1)")
    return figs


def write_report(results, out_dir, command="", seconds=None, pending=()):
    """Write tables.md, tables.csv (one row per method over data sets), tables_by_seed.csv (one row per method and
    data set), cv_<key>.csv (first data set), summary.json and figures/<key>_<name>.html (first data set; with the
    figures' shared figures/plotly.min.js). ``results``: SeedsResults (or ExperimentResults, one data set each).
    seconds: the wall time of the run, stated in tables.md when given. pending: titles of experiments still to
    run (a report written part way through a run says so at its top). Each file is written whole or not at all
    (:func:`pcrp.basics.files.atomic_write`): an OSError (a full disk) leaves every earlier file as it was."""
    from ...basics.files import atomic_write

    results = [_as_seeds(res) for res in results]
    out_dir = Path(out_dir)
    (out_dir / "figures").mkdir(parents=True, exist_ok=True)
    md = ["# Reproducing Lu, Li & Dunson: our numbers next to the paper's", ""]
    if command:
        md += ["Made by:", "", "```", command, "```", ""]
    if seconds is not None:
        md += [f"Wall time: {seconds / 60:.1f} min" + (" so far." if pending else "."), ""]
    if pending:
        md += [f"**Incomplete: still to run when this was written: {', '.join(pending)}.**", ""]
    if results:
        p = results[0].protocol
        n_sim = max(len(res.runs) for res in results)
        md += [f"Protocol: {N_CHAINS} chains per method from different starts, each {p.iters:,} sweeps, burn-in "
               f"{p.burn_in:,}, thin {p.thin}; split-merge {'on' if p.split_merge else 'off'}; r by {p.cv_folds}-fold "
               f"CV repeated {p.cv_repeats} time(s) ({p.cv_iters:,} sweeps per fit, burn-in {p.cv_burn_in:,}; "
               f"{p.cv_rule} change-point rule, pcrp.analyses.cv) on each data set's own CV sample. "
               f"Simulated experiments run on {n_sim} data set(s) drawn with different seeds; MNIST and Old "
               "Faithful on one. NMI geometric, VI in bits. Ours: mean over data sets ± the standard deviation "
               "between data sets (the spread), then (MCSE ...) the within-run Monte Carlo standard error (root "
               "mean square over data sets). The paper's numbers come from one data set each, so they are compared "
               f"with the spread: '(outside)' marks a paper number more than {SPREAD_MULT:g} SDs from our mean. "
               f"'chains' gives the largest R-hat on K / on the log joint over data sets (above {RHAT_THRESHOLD} the "
               f"chains disagree) and, for the pCRP, the data sets where the true clusters beat the best merged state "
               f"on the exact merge path by under {MARGIN_NATS:g} nats at the CV r. Rows marked 'beyond the paper' "
               "are priors the paper does not run (pcrp.model.PRIORS defaults), on the same data and chains.", ""]
    all_rows, seed_table = [], []
    for res in results:
        e, first = res.experiment, res.first
        rs = ", ".join(f"{run.cv.chosen_r:.2f}" for run in res.runs)
        used = ", ".join(f"{run.methods[TUNED].r:.2f}" for run in res.runs)
        md += [f"## {e.title} ({e.table})", "",
               (f"Data sets (seeds): {', '.join(map(str, res.seeds))}. CV proposed r = {rs}" if len(res.runs) > 1
                else f"CV proposed r = {rs}")
               + (f"; after the check on the data fitted (pcrp.analyses.cv.check_with_chains: chains at their own N, a one-step "
                  f"margin) the pCRP ran at r = {used}. "
                  if "chain_check" in first.cv.settings else ". ")
               + f"On data set {first.seed}, CV on {first.cv.settings['n']} points: {first.cv.blow_up.reason}.",
               "", markdown_seed_table(res), ""]
        for line in versus_lines(res) + seed_disagreement_lines(res) + seed_gap_lines(res) + extra_lines(res):
            md += [line, ""]
        if e.paper_note:
            md += [f"Note: {e.paper_note}", ""]
        for row in seed_rows(res):
            flat = {k: v for k, v in row.items() if not isinstance(v, (list, dict))}
            flat["r"] = _r_text(row.get("r", [])) if row["method"] != GROUND_TRUTH else ""
            all_rows.append({"experiment": e.title, **flat})
        for run in res.runs:
            versus = versus_crp(run, e.k_true) if {TUNED, REFERENCE} <= set(run.methods) else {}
            seed_table += [{"experiment": e.title, "data seed": run.seed, "cv r": run.cv.chosen_r, **row,
                            **({"pCRP vs CRP: NMI": versus.get("NMI"), "pCRP vs CRP: K": versus.get("K")}
                               if row["method"] == TUNED else {})}
                           for row in comparison_rows(run)]
        atomic_write(out_dir / f"cv_{e.key}.csv", lambda f, res=first: write_csv(f, res.cv.table()))
        for name, fig in figures(first).items():
            write_figure(fig, out_dir / "figures" / f"{e.key}_{name}.html")
    if claims(results):
        md += ["## The paper's claims about the posterior of K", ""] + [f"- {line}" for line in claims(results)] + [""]
    atomic_write(out_dir / "tables.md", lambda f: f.write("\n".join(md)))
    fields = ["experiment", "method", "beyond_paper", "settings", "r", "n_sets"]
    fields += [c for col in ("NMI", "VI", "K") for c in (col, col + " spread", col + " MCSE", col + " paper",
                                                            col + " within spread")]
    fields += ["K max", "K max paper", "R-hat K max", "R-hat log joint max"]
    atomic_write(out_dir / "tables.csv", lambda f: write_csv(f, all_rows, fields))
    fields = ["experiment", "data seed", "cv r", "method", "alpha", "r"]
    fields += [c for col in COLUMNS for c in (col, col + " SE", col + " paper")]
    fields += ["R-hat K", "R-hat log joint", "chains agree", "collapse", "pCRP vs CRP: NMI", "pCRP vs CRP: K"]
    atomic_write(out_dir / "tables_by_seed.csv", lambda f: write_csv(f, seed_table, fields))
    summary = {
        res.experiment.key: {
            "seeds": res.seeds,
            "chosen_r": [run.cv.chosen_r for run in res.runs],
            "pcrp_r": [run.methods[TUNED].r for run in res.runs if TUNED in run.methods],
            "cv": [run.cv.settings for run in res.runs],
            "niw": [run.niw.as_dict() for run in res.runs],
            "pcrp_true_partition_margin_nats": res.margins,
            "over_data_sets": {row["method"]: {k: v for k, v in row.items() if k != "method"}
                               for row in seed_rows(res)},
            "methods": [{m: {"alpha": r.alpha, "r": r.r, "prior": r.settings,
                             "seconds_per_sweep": r.seconds_per_sweep,
                             **{k: v[0] for k, v in r.metrics.items()},
                             **{f"{k} MCSE": v[1] for k, v in r.metrics.items() if v[1] is not None},
                             "P(K)": r.p_k, "diagnostics": r.diagnostics, "chains_agree": r.chains_agree,
                             "config": r.chains.config,
                             **({"collapse": {"flagged": r.verdict.flagged, "collapsed": r.verdict.collapsed,
                                              "disagree": r.verdict.disagree, "reference": r.verdict.reference,
                                              "text": r.verdict.text},
                                 "versus_crp": versus_crp(run, res.experiment.k_true) if REFERENCE in run.methods
                                 else None} if r.verdict is not None else {})}
                         for m, r in run.methods.items()} for run in res.runs],
        }
        for res in results
    }
    atomic_write(out_dir / "summary.json", lambda f: f.write(dumps(summary, indent=2)))
    return out_dir / "tables.md"

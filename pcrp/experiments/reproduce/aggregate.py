"""Aggregation of reproduce's runs into table rows: per data set (:func:`comparison_rows`, :func:`gaps`), over data
sets (:func:`seed_rows`: the mean, the spread between data sets and the within-run MCSE) and the pCRP against the CRP
data set by data set (:func:`versus_crp`).

Over data sets, the paper's number comes from one data set, so it is compared with our spread: it is "within the
spread" when it lies within :data:`SPREAD_MULT` standard deviations of our mean (or within :data:`TOLERANCE`).
A pCRP fit that collapsed or whose chains disagree (:mod:`pcrp.analyses.collapse`) is never pooled with the others.
"""

import numpy as np

from .methods import METHODS, REFERENCE, TUNED
from .paper import TOLERANCE

# The paper's number is "outside our spread" when |paper - our mean over data sets| exceeds both SPREAD_MULT x the
# between-data-set standard deviation (about a 95% range for one data set's value if the values are roughly
# normal) and the calibration's TOLERANCE (with 3 data sets the SD itself is uncertain and can be tiny by luck).
SPREAD_MULT = 2.0

# Below this many nats between the true partition and the best merged state on the exact merge path (at the pCRP's
# r), a pCRP row is flagged: chains that start from, or wander into, the merged state can stay there.
MARGIN_NATS = 10.0

# The row of the pCRP's flagged data sets (collapsed or chains disagree), reported apart from the others.
FLAGGED_PCRP = "pCRP (flagged)"

# A difference between the pCRP and the CRP on one data set within MATCH_SE combined Monte Carlo standard errors
# (sqrt(MCSE_pCRP^2 + MCSE_CRP^2)) counts as a match.
MATCH_SE = 2.0

COLUMNS = ("NMI", "VI", "K", "K max")
GROUND_TRUTH = "Ground truth"  # the row of the true labels, first when they are known


def _spread(values):
    values = np.asarray(values, dtype=float)
    return float(values.std(ddof=1)) if values.size > 1 else float("nan")


def seed_rows(result):
    """One row per method over data sets: {method, beyond_paper, settings, r values, seeds, n_sets, "<col>" (mean over
    data sets), "<col> spread" (SD between data sets), "<col> MCSE" (RMS of the within-run MCSEs), "<col> paper",
    "<col> within spread" (None without a paper value or a spread), "R-hat K max", "R-hat log joint max",
    "disagree seeds", "P(K)" (mean over data sets), and for the pCRP "margins" {seed: nats} and "flagged seeds"};
    ground truth first when labels are known.

    A pCRP fit that collapsed or whose chains disagree (:mod:`pcrp.analyses.collapse`, against the CRP on the same data) is
    never pooled with the others: the "pCRP" row is over the data sets where it held, and a row "pCRP (flagged)"
    follows with the flagged ones (when there are any)."""
    e = result.experiment
    runs = result.runs
    rows = []
    if result.first.data.labels is not None:
        row = dict(method=GROUND_TRUTH, beyond_paper=False, NMI=1.0, VI=0.0, K=result.first.data.true_k)
        if e.table == "Table 1":
            row.update({"NMI paper": 1.0, "VI paper": 0.0, "K paper": 2 if e.data == "sim2" else e.k_true})
        rows.append(row)
    for method in result.first.methods:
        if method != TUNED:
            rows.append(_method_row(result, method, runs, method))
            continue
        flagged = [run for run in runs if run.methods[method].flagged]
        held = [run for run in runs if not run.methods[method].flagged]
        if len(runs) == 1:  # nothing is pooled: one row, its flag in the chains column
            rows.append(_method_row(result, method, runs, method, flagged=[run.seed for run in flagged]))
            continue
        if held:
            rows.append(_method_row(result, method, held, method, flagged=[run.seed for run in flagged]))
        if flagged:
            rows.append(_method_row(result, method, flagged, FLAGGED_PCRP, flagged=[run.seed for run in flagged]))
    return rows


def _method_row(result, method, runs, name, flagged=None):
    """seed_rows' row of ``method`` over ``runs`` (some of result.runs), named ``name``."""
    e = result.experiment
    per = [run.methods[method] for run in runs]
    seeds = [run.seed for run in runs]
    row = dict(method=name, beyond_paper=method not in METHODS, settings=per[0].settings,
               alpha=[m.alpha for m in per], r=[m.r for m in per], n_sets=len(per), n_all=len(result.runs),
               seeds=seeds,
               **{"R-hat K max": float(np.nanmax([m.rhat["K"] for m in per] + [-np.inf])),
                  "R-hat log joint max": float(np.nanmax([m.rhat["log joint"] for m in per] + [-np.inf])),
                  "disagree seeds": [run.seed for run, m in zip(runs, per) if not m.chains_agree]})
    if flagged is not None:
        row["flagged seeds"] = list(flagged)
    for col in ("NMI", "VI", "K"):
        if col not in per[0].metrics:
            continue
        means = [m.metrics[col][0] for m in per]
        mcse = np.array([m.metrics[col][1] for m in per], dtype=float)
        row[col], row[col + " spread"] = float(np.mean(means)), _spread(means)
        row[col + " MCSE"] = float(np.sqrt(np.nanmean(mcse ** 2))) if np.any(np.isfinite(mcse)) else float("nan")
        row[col + " per set"] = [float(v) for v in means]
        paper = e.paper.get(method, {}).get(col) if name == method else None
        if paper is not None:
            row[col + " paper"] = paper
            spread = row[col + " spread"]
            gap = abs(paper - row[col])
            row[col + " within spread"] = (bool(gap <= SPREAD_MULT * spread or gap <= TOLERANCE[col])
                                           if np.isfinite(spread) else None)
    row["K max"] = max(m.metrics["K max"][0] for m in per)
    if "K max" in e.paper.get(method, {}) and name == method:
        row["K max paper"] = e.paper[method]["K max"]
    ks = sorted({k for m in per for k in m.p_k})
    row["P(K)"] = {k: float(np.mean([m.p_k.get(k, 0.0) for m in per])) for k in ks}
    if method == TUNED and result.margins:
        row["margins"] = {s: v for s, v in result.margins.items() if s in seeds}
    return row


def versus_crp(run, k_true):
    """The pCRP against the CRP on one data set (an ExperimentResult holding both): {"NMI": "higher" | "matched" |
    "lower" | None (no true labels), "K": "nearer" | "as near" | "farther" (its mean K against the true number of
    clusters ``k_true``), "flag": the pCRP's collapse verdict in a few words ('' when it held)}. A difference within
    MATCH_SE combined MCSEs is a match."""
    p, c = run.methods[TUNED], run.methods[REFERENCE]

    def compare(a, b, se_a, se_b, words):
        tol = MATCH_SE * np.sqrt(np.nan_to_num(se_a) ** 2 + np.nan_to_num(se_b) ** 2)
        return words[1] if abs(a - b) <= tol else words[0] if a > b else words[2]

    out = {"flag": p.verdict.short if p.verdict is not None else ""}
    if "NMI" in p.metrics and "NMI" in c.metrics:
        out["NMI"] = compare(p.metrics["NMI"][0], c.metrics["NMI"][0], p.metrics["NMI"][1], c.metrics["NMI"][1],
                             ("higher", "matched", "lower"))
    else:
        out["NMI"] = None
    kp, kc = p.metrics["K"], c.metrics["K"]
    out["K"] = compare(-abs(kp[0] - k_true), -abs(kc[0] - k_true), kp[1], kc[1], ("nearer", "as near", "farther"))
    return out


def comparison_rows(result):
    """One row per method, ours next to the paper's: {method, alpha, r, "<col>", "<col> SE", "<col> paper",
    "R-hat K", "R-hat log joint", "chains agree"} (ground truth first when the labels are known)."""
    e = result.experiment
    rows = []
    if result.data.labels is not None:
        row = dict(method=GROUND_TRUTH, NMI=1.0, VI=0.0, K=result.data.true_k)
        if e.table == "Table 1":  # the paper's Table 1 has ground-truth rows (Sim 2's K printed as 2)
            row.update({"NMI paper": 1.0, "VI paper": 0.0, "K paper": 2 if e.data == "sim2" else e.k_true})
        rows.append(row)
    for method, m in result.methods.items():
        row = dict(method=method, alpha=m.alpha, r=m.r, **{"R-hat K": m.rhat["K"],
                                                         "R-hat log joint": m.rhat["log joint"],
                                                         "chains agree": m.chains_agree,
                                                         "collapse": m.verdict.short if m.verdict else ""})
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
            if row["method"] != GROUND_TRUTH and ours is not None and paper is not None \
                    and abs(ours - paper) > tol:
                out.append((row["method"], col, float(ours), float(paper)))
    return out

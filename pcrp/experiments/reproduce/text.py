"""Reproduce's results in words: tables of text (ours next to the paper's), Markdown tables and the sentences a
report or the page shows under them (gaps, disagreeing chains, the pCRP against the CRP, the paper's claims, the
priors beyond the paper).
"""

import numpy as np

from ..reports import markdown_table as _markdown
from .aggregate import (COLUMNS, FLAGGED_PCRP, GROUND_TRUTH, MARGIN_NATS, MATCH_SE, SPREAD_MULT, comparison_rows,
                        gaps, seed_rows, versus_crp)
from .methods import BEYOND_PAPER, METHODS, ORACLE, REFERENCE, TUNED, prior_values
from .runner import SeedsResult


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


def _rhat(value):
    return "n/a" if not np.isfinite(value) else f"{value:.3f}"


def _r_text(values):
    values = [v for v in values if v is not None]
    if not values:
        return ""
    low, high = min(values), max(values)
    return f"{low:.2f}" if low == high else f"{low:.2f}-{high:.2f}"


def _g_text(values):
    """Distinct values, shortest form, joined by '/' ('1' for [1.0, 1.0])."""
    return "/".join(f"{v:g}" for v in sorted({v for v in values if v is not None}))


def display_rows(result):
    """comparison_rows as strings for a table: 'ours' and 'paper' columns side by side."""
    out = []
    for row in comparison_rows(result):
        beyond = row["method"] not in METHODS + (GROUND_TRUTH,)
        shown = {"method": row["method"] + (BEYOND_PAPER if beyond else ""),
                 "alpha": plain(row.get("alpha"), digits=2), "r": plain(row.get("r"), digits=2)}
        for col in COLUMNS:
            digits = 2 if col == "K" else 3
            shown[f"{col}, ours"] = plain(row.get(col), row.get(col + " SE"), digits)
            paper = row.get(col + " paper")
            shown[f"{col}, paper"] = ("" if paper is None else f"{paper:.3f}" if col in ("NMI", "VI")
                                      else f"{paper:g}")  # as printed in the paper
        if row["method"] == GROUND_TRUTH:
            shown["R-hat (K / log joint)"] = ""
        else:
            flag = (f" — {row['collapse']}" if row.get("collapse") else "" if row["chains agree"]
                    else " — chains disagree")
            shown["R-hat (K / log joint)"] = (f"{_rhat(row['R-hat K'])} / {_rhat(row['R-hat log joint'])}{flag}")
        out.append(shown)
    return out


def markdown_table(result):
    """One Markdown table: our numbers (± MCSE) next to the paper's, R-hat per method."""
    return _markdown(display_rows(result))


def display_seed_rows(result):
    """seed_rows as strings: 'mean ± spread' (between data sets), the within-run MCSE, the paper's number with
    whether it lies within the spread, and R-hat flags."""
    out = []
    n = len(result.runs)
    for row in seed_rows(result):
        beyond = BEYOND_PAPER if row["beyond_paper"] else ""
        shown = {"method": row["method"] + beyond}
        if row["method"] == FLAGGED_PCRP:  # the pCRP's data sets reported apart from its mean
            shown["method"] = f"pCRP, flagged ({row['n_sets']} of {row['n_all']} data sets)"
        elif row.get("flagged seeds") and row["n_all"] > 1:
            shown["method"] += f" ({row['n_sets']} of {row['n_all']} data sets)"
        if row["method"] == GROUND_TRUTH:
            shown["prior"] = ""
        elif row["method"] in (TUNED, FLAGGED_PCRP):
            shown["prior"] = (f"pCRP: alpha {_g_text(row['alpha'])}, r {_r_text(row['r'])} (CV per data set, checked "
                              "on the data fitted)")
        elif row["method"] == ORACLE:
            shown["prior"] = f"CRP: alpha {_r_text(row['alpha'])} (K_true / ln N)"
        else:
            shown["prior"] = row["settings"]
        for col in ("NMI", "VI", "K"):
            digits = 2 if col == "K" else 3
            value = row.get(col)
            if value is None:
                shown[f"{col}, ours"] = ""
            elif row["method"] == GROUND_TRUTH:
                shown[f"{col}, ours"] = plain(value, digits=digits)
            else:
                spread = row[col + " spread"]
                text = f"{value:.{digits}f}"
                if n > 1 and np.isfinite(spread):
                    text += f" ± {spread:.{digits}f}"
                mcse = row[col + " MCSE"]
                if np.isfinite(mcse):
                    text += f" (MCSE {mcse:.{max(digits, int(-np.floor(np.log10(mcse))) if mcse > 0 else digits)}f})"
                shown[f"{col}, ours"] = text
            paper = row.get(col + " paper")
            if paper is None:
                shown[f"{col}, paper"] = ""
            else:
                shown[f"{col}, paper"] = f"{paper:.3f}" if col in ("NMI", "VI") else f"{paper:g}"
                within = row.get(col + " within spread")
                if within is False:
                    shown[f"{col}, paper"] += " (outside)"
        shown["K max, ours"] = "" if row.get("K max") is None or row["method"] == GROUND_TRUTH else str(row["K max"])
        paper = row.get("K max paper")
        shown["K max, paper"] = "" if paper is None else f"{paper:g}"
        if row["method"] == GROUND_TRUTH:
            shown["chains"] = ""
        else:
            bad = row["disagree seeds"]
            worst = f"R-hat max {_rhat(row['R-hat K max'])} / {_rhat(row['R-hat log joint max'])}"
            if not bad:
                shown["chains"] = f"agree ({worst})"
            else:
                shown["chains"] = (f"DISAGREE on data set{'s' if len(bad) > 1 else ''} "
                                   f"{', '.join(map(str, bad))} ({worst})")
            if row["method"] == FLAGGED_PCRP or (row["method"] == TUNED and row.get("flagged seeds")
                                                 and row["n_all"] == 1):
                shown["chains"] = "; ".join(
                    f"data set {seed}: {result.runs[result.seeds.index(seed)].methods[TUNED].verdict.short}"
                    for seed in row["seeds"]) + f" ({worst})"
            low = {s: m for s, m in row.get("margins", {}).items() if m < MARGIN_NATS}
            if low:
                shown["chains"] += "; true partition vs best merged: " + ", ".join(
                    f"{m:+.1f}" for m in low.values()) + " nats"
        out.append(shown)
    return out


def markdown_seed_table(result):
    """The over-data-sets table in Markdown: ours (mean ± spread between data sets, within-run MCSE) next to the
    paper's."""
    return _markdown(display_seed_rows(result))


def gap_lines(result):
    """Plain sentences for the gaps beyond TOLERANCE, and why (empty when there are none)."""
    found = gaps(result)
    if not found:
        return []
    cells = "; ".join(f"{m} {c} {o:.3g} against {p:.3g}" for m, c, o, p in found)
    return [f"Gaps beyond 0.03 NMI, 0.1 VI or 0.5 K: {cells}. {result.experiment.gap_note}"]


def seed_gap_lines(result):
    """Sentences for the paper's numbers outside our spread between data sets (empty when none)."""
    found = []
    for row in seed_rows(result):
        for col in ("NMI", "VI", "K"):
            if row.get(col + " within spread") is False:
                found.append(f"{row['method']} {col} {row[col]:.3g} ± {row[col + ' spread']:.2g} "
                             f"against {row[col + ' paper']:.3g}")
    if not found:
        return []
    return [f"The paper's number lies more than {SPREAD_MULT:g} between-data-set SDs from our mean: "
            f"{'; '.join(found)}. {result.experiment.gap_note}"]


def disagreement_lines(result):
    """One sentence per method whose chains disagree (R-hat above the threshold), and the pCRP's collapse verdict
    when it is flagged (pcrp.analyses.collapse)."""
    out = []
    for m in result.methods.values():
        if m.verdict is not None and m.verdict.collapsed:
            out.append(m.verdict.text)
        if not m.chains_agree:
            k_means = [f"{k:.2f}" for k in m.chains.K_after_burn_in.mean(axis=1)]
            out.append(f"{m.method}: the {len(k_means)} chains disagree (R-hat {_rhat(m.rhat['K'])} on K, "
                       f"{_rhat(m.rhat['log joint'])} on the log joint; mean K per chain {', '.join(k_means)}): "
                       "its numbers depend on where the chains started.")
    return out


def seed_disagreement_lines(result):
    """Sentences for rows whose chains disagree on some data set, and for pCRP runs at an r where the true
    partition beats the merged states on its exact path by less than MARGIN_NATS."""
    out = []
    for row in seed_rows(result):
        if row["method"] == GROUND_TRUTH:
            continue
        method = TUNED if row["method"] == FLAGGED_PCRP else row["method"]
        alone = row["method"] == TUNED and row.get("flagged seeds") and row["n_all"] == 1  # one data set, flagged
        if row["method"] == FLAGGED_PCRP or alone:
            for seed in row["seeds"]:
                verdict = result.runs[result.seeds.index(seed)].methods[TUNED].verdict
                out.append(f"{'Data set ' + str(seed) + ': ' if len(result.runs) > 1 else ''}{verdict.text}"
                           + (" This data set is reported apart from the pCRP's mean (row 'pCRP, flagged')."
                              if not alone else ""))
        cells = []
        for seed in row["disagree seeds"] if row["method"] != FLAGGED_PCRP and not alone else []:  # said above
            m = result.runs[result.seeds.index(seed)].methods[method]
            k_means = ", ".join(f"{k:.2f}" for k in m.chains.K_after_burn_in.mean(axis=1))
            cells.append(f"{'data set ' + str(seed) + ': ' if len(result.runs) > 1 else ''}R-hat {_rhat(m.rhat['K'])} "
                         f"on K, {_rhat(m.rhat['log joint'])} on the log joint; mean K per chain {k_means}")
        if cells:
            where = (f"on {len(cells)} of {len(result.runs)} data sets " if len(result.runs) > 1 else "")
            out.append(f"{row['method']}: the chains disagree {where}({'; '.join(cells)}): there its numbers depend "
                       "on where the chains started.")
        low = {s: v for s, v in row.get("margins", {}).items() if v < MARGIN_NATS}
        if low:
            k = result.experiment.k_true

            def cell(s, v):
                run = result.runs[result.seeds.index(s)]
                below = int(np.sum(run.methods[TUNED].chains.K_after_burn_in.mean(axis=1) < k - 0.5))
                return (f"data set {s} at r = {row['r'][row['seeds'].index(s)]:.2f}: {v:+.1f} nats, "
                        f"{below} of {run.methods[TUNED].chains.n_chains} chains below {k} clusters on average")

            cells = "; ".join(cell(s, v) for s, v in low.items())
            settled = any(np.any(result.runs[result.seeds.index(s)].methods[TUNED].chains.K_after_burn_in.mean(axis=1)
                                 < k - 0.5) for s in low)
            out.append(f"pCRP: at the r it ran at, the true partition beats the best merged state on the exact merge "
                       f"path from the true labels by less than {MARGIN_NATS:g} nats ({cells}; negative: the merged "
                       "partition has the higher joint). "
                       + ("There chains can settle on fewer clusters than the truth, and some did."
                          if settled else
                          "These are single partitions, not posterior mass: no chain settled below the truth here, "
                          "because the many partitions near the true one outweigh the merged one (true classes "
                          "that overlap, as Sim 1's two close components)."))
    return out


def versus_lines(result):
    """One sentence: on how many data sets the pCRP beat, matched or lost to the CRP (NMI, and K nearer the truth),
    and on how many its fit was flagged; empty when the experiment did not run both."""
    runs = [run for run in result.runs if {TUNED, REFERENCE} <= set(run.methods)]
    if not runs:
        return []
    k_true = result.experiment.k_true
    outcomes = [versus_crp(run, k_true) for run in runs]
    n = len(outcomes)

    def count(key, words):
        return ", ".join(f"{w} on {sum(o[key] == w for o in outcomes)}" for w in words)

    parts = []
    if all(o["NMI"] is not None for o in outcomes):
        parts.append(f"NMI {count('NMI', ('higher', 'matched', 'lower'))}")
    parts.append(f"mean K against the true {k_true}: {count('K', ('nearer', 'as near', 'farther'))} than the CRP's")
    flagged = [run.seed for run, o in zip(runs, outcomes) if o["flag"]]
    tail = (f"; flagged (collapsed below the CRP's clusters, or chains disagree) on {len(flagged)} "
            f"(data set{'s' if len(flagged) > 1 else ''} {', '.join(map(str, flagged))})" if flagged
            else "; flagged (collapsed, or chains disagree) on none")
    sets = f"{n} data set{'s' if n > 1 else ''}"
    return [f"pCRP against the CRP, data set by data set ({sets}; a difference within {MATCH_SE:g} combined Monte "
            f"Carlo standard errors is a match): {'; '.join(parts)}{tail}."]


def _as_seeds(result):
    """A SeedsResult for an ExperimentResult (one data set) or a SeedsResult as given."""
    if isinstance(result, SeedsResult):
        return result
    return SeedsResult(result.experiment, [result], result.protocol)


def claims(results):
    """The paper's claim about Sim 1 checked on our runs: P(K = 3) under pCRP at N = 300 and N = 2000
    ("rises from 0.55 to 0.68") and P(K = 4) under CRP-Oracle ("around 0.37 and 0.38"), each the mean over data
    sets (with the range over data sets when there are several). ``results``: ExperimentResults or SeedsResults.
    Lines of text."""
    by_key = {res.experiment.key: _as_seeds(res) for res in results}
    if not {"sim1-300", "sim1-2000"} <= set(by_key):
        return []
    small, large = by_key["sim1-300"], by_key["sim1-2000"]

    def prob(res, method, k):
        values = [run.methods[method].p_k.get(k, 0.0) for run in res.runs]
        text = f"{np.mean(values):.2f}"
        return text + (f" (data sets {min(values):.2f}-{max(values):.2f})" if len(values) > 1 else "")

    r_small = _r_text([run.methods[TUNED].r for run in small.runs])
    r_large = _r_text([run.methods[TUNED].r for run in large.runs])
    return [f"Sim 1, P(K = 3) under pCRP from N = 300 to N = 2000: ours {prob(small, TUNED, 3)} to "
            f"{prob(large, TUNED, 3)} (r = {r_small} and {r_large}); the paper: 0.55 to 0.68.",
            f"Sim 1, P(K = 4) under CRP-Oracle: ours {prob(small, ORACLE, 4)} and "
            f"{prob(large, ORACLE, 4)}; the paper: about 0.37 and 0.38."]


def extra_lines(result):
    """One sentence on how the priors beyond the paper (MFM, SFM) compare with the pCRP on this experiment (empty
    when they were not run), from the means over the data sets where the pCRP held (every data set when it was
    flagged on all; the sentence says which)."""
    result = _as_seeds(result)
    rows = {row["method"]: row for row in seed_rows(result)}
    extras = [m for m, row in rows.items() if row["beyond_paper"]]
    pcrp = rows.get(TUNED) or rows.get(FLAGGED_PCRP)
    if not extras or pcrp is None:
        return []
    seeds = pcrp["seeds"] if TUNED in rows else result.seeds
    has_vi = "VI" in pcrp

    def mean(method, col):
        return float(np.mean([run.methods[method].metrics[col][0] for run in result.runs if run.seed in seeds]))

    def cell(m):
        text = f"{m} K {mean(m, 'K'):.2f}"
        return text + (f", VI {mean(m, 'VI'):.3f}" if has_vi else "")

    truth = result.experiment.k_true
    fewer = [m for m in extras if abs(mean(m, "K") - truth) < abs(mean(TUNED, "K") - truth)]
    verdict = (f"{' and '.join(fewer)} end{'s' if len(fewer) == 1 else ''} nearer the true K = {truth} than the pCRP"
               if fewer else f"the pCRP ends nearer the true K = {truth} than {' and '.join(extras)}")
    if has_vi:
        better = [m for m in extras if mean(m, "VI") < mean(TUNED, "VI")]
        verdict += (f"; {' and '.join(better)} ha{'s' if len(better) == 1 else 've'} a lower VI than the pCRP"
                    if better else "; the pCRP has the lowest VI of the three")
    flagged = pcrp.get("flagged seeds", [])
    where = ("" if not flagged else " (the pCRP's fit is flagged: read it with its flag)" if len(result.runs) == 1
             else f" (on the {len(seeds)} data sets where the pCRP held; it was flagged on {len(flagged)})"
             if TUNED in rows else " (over every data set: the pCRP was flagged on all of them)")
    settings = "; ".join(f"{m}: {prior_values(result.first.methods[m].prior)}" for m in extras)
    return [f"Beyond the paper ({settings}; no tuning, no CV){where}: "
            f"{'; '.join(cell(m) for m in [TUNED] + extras)}: {verdict}."]

"""Does the r the tool ends with keep the true clusters on the data it is fitted to? (docs/reproduce/cv_robustness.md)

Subcommands (run from the repository root):

    python docs/reproduce/cv_robustness.py design OUT.json SIMS SEEDS [NS]
        For each simulation of SIMS (e.g. sim2,sim1) and data seed of SEEDS (e.g. 101,...,110): cross validation of r
        on the CV sample as reproduce draws it (N = 200, seed + 1000; 5 folds x 3 repeats, 2,000 sweeps per fit, the
        robust rule, pcrp.analyses.cv.DEFAULT_GRID), then on the fitted data (N of NS, default 300,2000; seed): 4 CRP chains
        and 4 pCRP chains at every grid r up to 1.45 (2,000 sweeps, burn-in 1,000, thin 5, reproduce's starts), the
        CRP's point estimate and its exact merge path, and the true labels' merge path. Resumable (the file is
        rewritten after each data set); minutes per data set.
    python docs/reproduce/cv_robustness.py diagnose DESIGN.json
        Why the CV r does not hold on the fitted data: per Sim 2 data set, the CV r, the critical power r* of the
        CV sample's and of the fitted data's true clusters (the exact merge path), the r from which the chains
        collapse at N = 300 and 2,000, and the chain started from one cluster at r = 1.30, N = 2,000.
    python docs/reproduce/cv_robustness.py rules DESIGN.json
        The margin rules compared on the design runs (the 2,000-sweep chains at each r stand for both the check's
        chains and the outcome).
    python docs/reproduce/cv_robustness.py thresholds
        The critical power r* at which the exact merge path from the true labels first merges two of the three true
        clusters, over 60 data sets (seeds 100-159) per simulation and N (160: a CV training part; 200: the CV
        sample; 300; 2,000; 20,000): mean, SD and range.
    python docs/reproduce/cv_robustness.py fresh OUT_DIR
        The target, from a `pcrp reproduce` output folder (tables_by_seed.csv): per experiment, on how many data sets
        the pCRP at the r the tool ended with kept the true clusters (not flagged: chains agree and none collapsed;
        NMI no worse than the CRP's) and had a mean K nearer 3 than the CRP's.
"""

import csv
import json
import os
import sys
import time
from collections import defaultdict

import numpy as np

FIT_GRID_TOP = 1.4501


def _path_dict(path):
    return dict(eff=path.effective_r().tolist(), G=[m.G for m in path.merges], L=[m.L for m in path.merges],
                sizes=[list(m.sizes) for m in path.merges])


def _chains_summary(chains, truth):
    from pcrp.summaries.summary import metric_summary, nmi_vi

    d = chains.diagnostics()
    return dict(mean_K=chains.K_after_burn_in.mean(axis=1).tolist(), p_k3=(chains.kept_K >= 3).mean(axis=1).tolist(),
                rhat_K=d["K"]["rhat"], rhat_lj=d["log_joint"]["rhat"], agree_K=d["K"]["agree"],
                agree_lj=d["log_joint"]["agree"], settled_K=d["K"]["settled"],
                nmi=metric_summary(truth, chains.labels)["NMI"][0],
                nmi_chain=[float(np.mean([nmi_vi(truth, z)[0] for z in c])) for c in chains.labels])


def design(out_path, sims, seeds, ns=(300, 2000)):
    from pcrp import data as dm
    from pcrp.runs.chains import run_chains
    from pcrp.analyses.cv import DEFAULT_GRID, cross_validate
    from pcrp.model import CRP, PowerCRP, resolve_niw
    from pcrp.summaries.partition import point_estimate
    from pcrp.analyses.path import merge_path
    from pcrp.runs.run_spec import make_run_spec

    try:
        with open(out_path) as f:
            out = json.load(f)
    except FileNotFoundError:
        out = {}
    started = time.time()

    def fit(X, prior, niw, seed):
        return run_chains(X, make_run_spec(X, prior=prior, niw=niw, n_chains=4, iters=2000, burn_in=1000, thin=5,
                                           seed=seed, n_jobs=2))

    for sim in sims:
        for seed in seeds:
            key = f"{sim}-{seed}"
            entry = out.get(key) or {}
            if "cv" not in entry:
                cvd = dm.simulation(sim, 200, seed=seed + 1000)
                cv = cross_validate(cvd.X, standardize=cvd.standardized, r_grid=DEFAULT_GRID, folds=5, repeats=3,
                                    iters=2000, burn_in=1000, thin=10, seed=seed, n_jobs=2)
                entry["cv"] = dict(loss=cv.loss.tolist(), mean_k=cv.mean_k.tolist(), chosen_r=cv.chosen_r,
                                   true_path=_path_dict(merge_path(cvd.X, cvd.labels, resolve_niw(cvd.X))))
                entry["fits"] = {}
            for n in ns:
                if str(n) in entry["fits"]:
                    continue
                ds = dm.simulation(sim, n, seed=seed)
                niw = resolve_niw(ds.X)
                crp = fit(ds.X, CRP(1.0), niw, seed)
                point = point_estimate(crp.labels, seed=seed)
                result = dict(crp=_chains_summary(crp, ds.labels), crp_sizes=np.bincount(point.labels).tolist(),
                              crp_path=_path_dict(merge_path(ds.X, point.labels, niw)),
                              true_path=_path_dict(merge_path(ds.X, ds.labels, niw)), pcrp={})
                for r in (g for g in DEFAULT_GRID if g <= FIT_GRID_TOP):
                    result["pcrp"][f"{r:.2f}"] = _chains_summary(fit(ds.X, PowerCRP(1.0, float(r)), niw, seed),
                                                                 ds.labels)
                entry["fits"][str(n)] = result
                print(key, n, round(time.time() - started), flush=True)
            out[key] = entry
            with open(out_path + ".tmp", "w") as f:
                json.dump(out, f)
            os.replace(out_path + ".tmp", out_path)


def _grid():
    return [1.01] + [round(x, 2) for x in np.arange(1.05, FIT_GRID_TOP, 0.05)]


def _collapsed(s, reference=3, rhat_limit=1.05):
    """The check's verdict on a design fit (pcrp.analyses.collapse.judge with the check's R-hat limit): a chain's mean K more
    than half a cluster below the reference, or the chains disagree."""
    from pcrp.analyses.collapse import judge

    agree = ((s["settled_K"] and s["agree_K"]) or (not s["settled_K"] and not s["rhat_K"] > rhat_limit)) \
        and not s["rhat_lj"] > rhat_limit
    return judge(s["mean_K"], agree=agree, reference=reference).flagged


def _reference(fit):
    from pcrp.analyses.collapse import kept_clusters

    return kept_clusters(np.repeat(np.arange(len(fit["crp_sizes"])), fit["crp_sizes"]))


def final_r(entry, fit, rule):
    """The r a rule ends with on one design data set, its check read from the design fits."""
    grid = _grid()
    ref = _reference(fit)
    ok = {r: not _collapsed(fit["pcrp"][f"{r:.2f}"], ref) for r in grid}
    proposal = min(entry["cv"]["chosen_r"], grid[-1])
    if rule == "cv":
        return proposal
    i = grid.index(round(proposal, 2))
    while i > 0 and not ok[grid[i]]:
        i -= 1
    if rule == "none":
        return grid[i]
    if rule == "verified":  # as pcrp.analyses.cv.check_with_chains: the largest r <= the proposal holding at r and one above
        i = grid.index(round(proposal, 2))
        while i > 0:
            if ok[grid[i]] and (i + 1 >= len(grid) or ok[grid[i + 1]]):
                break
            i -= 1
        return grid[i]
    if rule == "step":
        return grid[max(i - 1, 0)]
    if rule == "frac0.8":
        return max([g for g in grid if g <= 1 + 0.8 * (grid[i] - 1) + 1e-9] or [grid[0]])
    if rule.startswith("path"):
        eff = fit["crp_path"]["eff"]
        cap = eff[len(eff) + 1 - ref] if len(eff) + 1 - ref < len(eff) else np.inf
        return max([g for g in grid if g <= min(grid[i], cap - float(rule[4:])) + 1e-9] or [grid[0]])
    raise ValueError(rule)


RULES = {"cv": "CV r alone (before: no check on the fitted data)",
         "none": "check on the fitted data, no margin",
         "verified": "check + one verified grid step (the rule)",
         "step": "check, then always one grid step lower",
         "frac0.8": "check, then 1 + 0.8 (r - 1)",
         "path0.05": "check, capped at the CRP path's r* - 0.05",
         "path0.1": "check, capped at the CRP path's r* - 0.1"}


def rules(design_path):
    with open(design_path) as f:
        d = json.load(f)
    lines = ["| rule | Sim 2, N = 300 | Sim 2, N = 2,000 | Sim 1, N = 300 | Sim 1, N = 2,000 |", "|---|---|---|---|---|"]
    for rule, name in RULES.items():
        cells = []
        for sim in ("sim2", "sim1"):
            for n in ("300", "2000"):
                rows = []
                for key, entry in d.items():
                    if not key.startswith(sim + "-"):
                        continue
                    fit = entry["fits"][n]
                    r = final_r(entry, fit, rule)
                    s, crp = fit["pcrp"][f"{r:.2f}"], fit["crp"]
                    collapsed = _collapsed(s)
                    kept = not collapsed and s["nmi"] >= crp["nmi"]
                    nearer = abs(np.mean(s["mean_K"]) - 3) < abs(np.mean(crp["mean_K"]) - 3)
                    rows.append((r, collapsed, kept, nearer, np.mean(s["mean_K"]), np.mean(crp["mean_K"])))
                a = np.array(rows, dtype=float)
                cells.append(f"r {a[:, 0].mean():.3f}: kept {int(a[:, 2].sum())} of {len(a)} ({int(a[:, 1].sum())} "
                             f"collapsed); K {a[:, 4].mean():.2f} (CRP {a[:, 5].mean():.2f})")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def diagnose(design_path):
    with open(design_path) as f:
        d = json.load(f)
    grid = _grid()

    def first_collapse(fit):
        return next((r for r in grid[1:] if _collapsed(fit["pcrp"][f"{r:.2f}"], _reference(fit))), None)

    lines = ["| data seed | CV r | r* of the CV sample's clusters | N = 300: r* | collapse from | N = 2,000: r* | "
             "collapse from | N = 2,000, r = 1.30: one-cluster chain's mean K | 3 clusters beat 1 by (nats) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for key, entry in d.items():
        if not key.startswith("sim2-"):
            continue
        small, large = entry["fits"]["300"], entry["fits"]["2000"]
        path = large["true_path"]
        gap = -(sum(path["L"]) + 1.30 * sum(path["G"]))  # joint of the true partition minus one cluster's
        lines.append(f"| {key.split('-')[1]} | {entry['cv']['chosen_r']:.2f} | {entry['cv']['true_path']['eff'][0]:.3f} "
                     f"| {small['true_path']['eff'][0]:.3f} | {first_collapse(small)} | {path['eff'][0]:.3f} | "
                     f"{first_collapse(large)} | {large['pcrp']['1.30']['mean_K'][1]:.2f} | {gap:+.0f} |")
    return "\n".join(lines)


def thresholds():
    from pcrp import data as dm
    from pcrp.model import resolve_niw
    from pcrp.analyses.path import merge_path

    lines = ["| simulation | N | r* mean | SD | min | max |", "|---|---|---|---|---|---|"]
    for sim in ("sim2", "sim1"):
        for n in (160, 200, 300, 2000, 20000):
            values = np.array([merge_path(ds.X, ds.labels, resolve_niw(ds.X)).effective_r()[0]
                               for ds in (dm.simulation(sim, n, seed=seed) for seed in range(100, 160))])
            lines.append(f"| {sim} | {n:,} | {values.mean():.3f} | {values.std(ddof=1):.3f} | {values.min():.3f} | "
                         f"{values.max():.3f} |")
    return "\n".join(lines)


def fresh(out_dir):
    from pcrp.experiments.reproduce import EXPERIMENTS

    with open(os.path.join(out_dir, "tables_by_seed.csv")) as f:
        rows = list(csv.DictReader(f))
    with open(os.path.join(out_dir, "summary.json")) as f:
        summary = json.load(f)
    by = defaultdict(dict)
    for row in rows:
        by[(row["experiment"], row["data seed"])][row["method"]] = row
    lines = ["| experiment | data sets | CV proposed r | collapsed at that r (check's chains) | r after the check | "
             "r stepped down on | kept the clusters | "
             "NMI within 2 MCSE of the CRP's or above | flagged | mean K nearer 3 than the CRP's | mean K, pCRP (range) "
             "| mean K, CRP (range) |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for key, entry in summary.items():
        title = EXPERIMENTS[key].title
        sets = [by[(title, str(seed))] for seed in entry["seeds"]]
        p, c = [m["pCRP"] for m in sets], [m["CRP"] for m in sets]
        flagged = [bool(x["collapse"]) or x["chains agree"] != "True" for x in p]
        nmi_ok = [float(a["NMI"]) >= float(b["NMI"]) for a, b in zip(p, c)]
        nmi_close = [float(a["NMI"]) >= float(b["NMI"]) - 2 * np.hypot(float(a["NMI SE"]), float(b["NMI SE"]))
                     for a, b in zip(p, c)]
        kept = [not f and ok for f, ok in zip(flagged, nmi_ok)]
        kept_close = [not f and ok for f, ok in zip(flagged, nmi_close)]
        nearer = [abs(float(a["K"]) - 3) < abs(float(b["K"]) - 3) for a, b in zip(p, c)]
        proposed, used = entry["chosen_r"], entry["pcrp_r"]
        stepped = sum(u < q for q, u in zip(proposed, used))
        at_proposal = sum(bool(cv["chain_check"]["tried"][0]["collapsed"] or cv["chain_check"]["tried"][0]["disagree"])
                          for cv in entry["cv"])
        kp, kc = [float(x["K"]) for x in p], [float(x["K"]) for x in c]
        lines.append(f"| {title} | {len(p)} | {min(proposed):.2f}-{max(proposed):.2f} | {at_proposal} | "
                     f"{min(used):.2f}-{max(used):.2f} "
                     f"| {stepped} | {sum(kept)} of {len(p)} | {sum(kept_close)} of {len(p)} | {sum(flagged)} | "
                     f"{sum(nearer)} of {len(p)} | {np.mean(kp):.2f} ({min(kp):.2f}-{max(kp):.2f}) | "
                     f"{np.mean(kc):.2f} ({min(kc):.2f}-{max(kc):.2f}) |")
    return "\n".join(lines)


if __name__ == "__main__":
    command = sys.argv[1]
    if command == "design":
        ns = [int(n) for n in sys.argv[5].split(",")] if len(sys.argv) > 5 else (300, 2000)
        design(sys.argv[2], sys.argv[3].split(","), [int(s) for s in sys.argv[4].split(",")], ns)
    elif command == "diagnose":
        print(diagnose(sys.argv[2]))
    elif command == "rules":
        print(rules(sys.argv[2]))
    elif command == "thresholds":
        print(thresholds())
    elif command == "fresh":
        print(fresh(sys.argv[2]))
    else:
        sys.exit(__doc__)

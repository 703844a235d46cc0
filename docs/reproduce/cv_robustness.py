"""How often does the cross-validated r keep the true clusters? The mean-curve rule against the robust rule.

For each simulation (Sim 1, Sim 2) and data seed s: CV of r on a fresh CV sample (N = 200, seed s + 1000; 5 folds
repeated 3 times, 2,000 sweeps per fit, burn-in 1,000, thin 10, r from 1.01 to 1.6), then on the compared data
(N = 300, seed s) 4 pCRP chains (the reproduce starts: k-means, one cluster, 20 random, k-means; 2,000 sweeps,
burn-in 1,000) at every r of the grid, and the exact merge path from the true labels. "Keeps the true clusters"
at r: every chain has P(K >= 3) >= 0.5 over its kept draws (no chain settles below the truth). A rule's r is read
from the saved curves, so every rule is judged on the same fits:

- mean (before): pcrp.cv.find_blow_up on the mean of the first repeat's 5 splits (pcrp cv's defaults until now);
- robust, 1 repeat: pcrp.cv.robust_blow_up on the first repeat's 5 splits;
- robust, 3 repeats: pcrp.cv.robust_blow_up on all 15 splits;
- robust + chain check: then pcrp.cv.check_with_chains on the CV sample (4 chains of 2,000 sweeps at the proposed
  r, seed 0; while their R-hat on K exceeds 1.05, one grid value lower, at most twice): what pcrp.reproduce and
  the shipped r do.

Usage (from the repository root):
    python docs/reproduce/cv_robustness.py measure OUT.json SEEDS      # e.g. 11,12,...,20; minutes per seed
    python docs/reproduce/cv_robustness.py check CHECK.json A.json [B.json ...]
    python docs/reproduce/cv_robustness.py summarise CHECK.json A.json [B.json ...]
"""

import json
import sys
import time

import numpy as np

from pcrp import data as dm
from pcrp.chains import run_chains
from pcrp.cv import DEFAULT_GRID, cross_validate, find_blow_up, robust_blow_up
from pcrp.model import PowerCRP, resolve_niw
from pcrp.path import crp_start, merge_path

GRID = np.array([r for r in DEFAULT_GRID if r <= 1.6001])


def measure(out_path, seeds):
    out = {}
    t0 = time.time()
    for sim in ("sim1", "sim2"):
        for seed in seeds:
            cvd = dm.simulation(sim, 200, seed=seed + 1000)
            cv = cross_validate(cvd.X, r_grid=GRID, folds=5, repeats=3, iters=2000, burn_in=1000, thin=10, seed=seed,
                                n_jobs=2)
            niw_cv = resolve_niw(cvd.X)
            start = crp_start(cvd.X, niw_cv, seed=seed, n_jobs=2)
            cv_path = merge_path(cvd.X, start.labels, niw_cv)
            ds = dm.simulation(sim, 300, seed=seed)
            niw = resolve_niw(ds.X)
            true_path = merge_path(ds.X, ds.labels, niw)
            sampled = {}
            for r in GRID:
                chains = run_chains(ds.X, PowerCRP(1.0, float(r)), niw, n_chains=4, iters=2000, burn_in=1000, thin=5,
                                    seed=seed, n_jobs=2)
                sampled[float(r)] = (chains.kept_K >= 3).mean(axis=1).tolist()
            out[f"{sim}-{seed}"] = dict(
                loss=cv.loss.tolist(), mean_k=cv.mean_k.tolist(), cv_path=[m.as_dict() for m in cv_path.merges],
                cv_path_eff=cv_path.effective_r().tolist(), cv_start_sizes=np.bincount(start.labels).tolist(),
                true_path=[m.as_dict() for m in true_path.merges], true_eff=true_path.effective_r().tolist(),
                p_k3=sampled)
            print(sim, seed, round(time.time() - t0), flush=True)
            json.dump(dict(grid=GRID.tolist(), runs=out), open(out_path, "w"))


def _mean_rule(loss):
    se = loss.std(axis=0, ddof=1) / np.sqrt(len(loss))
    return find_blow_up(loss.mean(axis=0), se, r_grid=GRID).chosen_index


RULES = {
    "mean (before)": lambda loss: _mean_rule(loss[:5]),
    "robust, 1 repeat": lambda loss: robust_blow_up(loss[:5], 5, r_grid=GRID).chosen_index,
    "robust, 3 repeats": lambda loss: robust_blow_up(loss, 5, r_grid=GRID).chosen_index,
}


def kept(run, index):
    return min(run["p_k3"][str(float(GRID[index]))]) >= 0.5


def margin(run, r):
    L = np.cumsum([m["L"] for m in run["true_path"]])
    G = np.cumsum([m["G"] for m in run["true_path"]])
    return float(-np.max(L + r * G))


def check(out_path, paths):
    """The chain check of the robust r of every run, on its CV sample (regenerated from its seed)."""
    from pcrp.cv import check_with_chains

    out = {}
    for path in paths:
        for key, run in json.load(open(path))["runs"].items():
            sim, seed = key.split("-")
            cvd = dm.simulation(sim, 200, seed=int(seed) + 1000)
            start = RULES["robust, 3 repeats"](np.array(run["loss"]))
            r, detail = check_with_chains(cvd.X, float(GRID[start]), GRID, seed=0, n_jobs=2)
            out[key] = {"final": int(np.argmin(np.abs(GRID - r))), "check": detail}
            print(key, GRID[start], r, flush=True)
    json.dump(out, open(out_path, "w"))


def summarise(check_path, paths):
    checked = json.load(open(check_path))
    RULES["robust + chain check"] = None
    lines = []
    for path in paths:
        runs = json.load(open(path))["runs"]
        seeds = sorted({int(k.split("-")[1]) for k in runs})
        lines += [f"### Data seeds {seeds[0]}-{seeds[-1]} ({path.split('/')[-1]})", "",
                  "| simulation | rule | keeps the true clusters | mean r | r per data set | smallest margin (nats) |",
                  "|---|---|---|---|---|---|"]
        for sim in ("sim1", "sim2"):
            mine = {k: v for k, v in runs.items() if k.startswith(sim + "-")}
            for name, rule in RULES.items():
                idx = [checked[key]["final"] if rule is None else rule(np.array(run["loss"]))
                       for key, run in mine.items()]
                ok = [kept(run, j) for run, j in zip(mine.values(), idx)]
                rs = [GRID[j] for j in idx]
                margins = [margin(run, GRID[j]) for run, j in zip(mine.values(), idx)]
                lines.append(f"| {sim} | {name} | {sum(ok)} of {len(ok)} | {np.mean(rs):.3f} | "
                             f"{', '.join(f'{r:.2f}' for r in rs)} | {min(margins):+.1f} |")
            best = [max((GRID[i] for i in range(len(GRID)) if kept(run, i)), default=float('nan'))
                    for run in mine.values()]
            lines.append(f"| {sim} | (largest r the sampler keeps) | | {np.nanmean(best):.3f} | "
                         f"{', '.join(f'{r:.2f}' for r in best)} | |")
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    if sys.argv[1] == "measure":
        measure(sys.argv[2], [int(s) for s in sys.argv[3].split(",")])
    elif sys.argv[1] == "check":
        check(sys.argv[2], sys.argv[3:])
    else:
        print(summarise(sys.argv[2], sys.argv[3:]))

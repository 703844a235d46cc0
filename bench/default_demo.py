"""What the Explorer's default demo shows at each setting its "What to watch for" line has figures for: measures them
and, with --write, writes pcrp/app/demo_figures.json (read by pcrp.app.demo_notes; no figure of that line is typed
into prose).

For each built-in data set of the Explorer at each shipped setting (the data settings pcrp/datasets/cv_r.json
cross-validated r at, pcrp.analyses.cv.BUILTIN_R_VARIANTS: Old Faithful, MNIST at 2 and 10 dimensions, Sim 1 and Sim 2
at N = 300, data seed 0) and each covariance type r was cross-validated for there (one at d = 1, where the three are
one model), it runs what the Explorer runs when a visitor presses Start at its defaults with those settings: the CRP
(alpha 1) above the pCRP (alpha 1, r = the shipped r of these data, settings and type: pcrp.app.explorer_settings.
data_r), the live demo's run (pcrp.app.live_params.LIVE_DEMO: 2 chains from contrasting starts kmeans:10 and one,
2,000 sweeps, burn-in 500, thin 5, split-merge moves on; pcrp.app.live_runs.live_specs), the data's default cluster
prior, at run seeds 0..S-1. The settings recorded with each entry are pcrp.app.demo_notes.measured_settings of those
values, the same function the page matches them with.

Per row, after burn-in: k = mean K over every sweep of both chains and all seeds; k_chains = each chain's mean K;
big / tiny = mean clusters with at least / below pcrp.app.live_view.TINY_SHARE of the points over the kept draws (what
a row heading shows); nmi = mean NMI against the true labels over the kept draws (geometric normalisation); merged =
the share of kept draws that merge two or more true classes into one cluster (pcrp.app.live_view.
merged_true_clusters); rhat_k = R-hat of K between the chains, per seed (ArviZ's rank-normalised split R-hat). Where
CONTRASTS names one, the pCRP also runs at another r on the same data (the line's "At r = ..." sentence).

Usage: python bench/default_demo.py [--seeds 2] [--only old-faithful,mnist:10,sim1] [--write pcrp/app/demo_figures.json]
Record: docs/records/mnist_demo.md (MNIST), the JSON itself (every entry's command, date and seconds).
"""

import argparse
import datetime
import json
import os
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

from pcrp import data  # noqa: E402
from pcrp.analyses.cv import BUILTIN_R_VARIANTS, types_for  # noqa: E402
from pcrp.app import demo_notes, explorer_settings as es  # noqa: E402
from pcrp.app.live_params import LIVE_DEMO  # noqa: E402
from pcrp.app.live_runs import contrasting_starts, live_specs  # noqa: E402
from pcrp.app.live_view import cluster_counts, merged_true_clusters  # noqa: E402
from pcrp.basics.files import atomic_write  # noqa: E402
from pcrp.basics.json_text import dumps  # noqa: E402
from pcrp.model import COVARIANCE_TYPES, PRIORS, make_prior, resolve_niw  # noqa: E402
from pcrp.runs.chains import run_chains  # noqa: E402
from pcrp.summaries.summary import nmi  # noqa: E402

# The Explorer's data sets (its SOURCES) among the shipped variants: (name, load() settings).
VARIANTS = tuple((name, settings) for name, settings in BUILTIN_R_VARIANTS if name in es.SOURCES)
# (data set, its variant's settings, covariance type) -> another r the pCRP runs at, for the line's contrast: Sim 1 at
# r = 1.3 merges two true clusters; MNIST at r = 1.5 keeps about as many clusters as the paper's Table 2.
CONTRASTS = {("sim1", (), "full"): 1.3, ("mnist", (), "full"): 1.5}


def explorer_values(name, settings, covariance_type):
    """The Explorer's settings at its defaults on data set ``name`` with load() ``settings`` and the covariance
    type: the rows' r the data's shipped one (es.data_r), as the page sets it."""
    values = {**es.defaults(), "data": name, "covariance": covariance_type}
    for key, setting in es.DATA_SETTINGS.get(name, {}).items():
        if key in settings:
            values[setting] = list(settings[key]) if isinstance(settings[key], (list, tuple)) else settings[key]
    for row in es.active_rows(values):
        key = es.tuned_key(values, row)
        if key is not None:
            values[key] = es.param_default(values, row, es.ROW_PARAMS[key][1])
    return values


def load(values):
    """The data set the Explorer loads for ``values`` (app_pages/explorer_parts/data_sidebar.builtin_dataset)."""
    name = values["data"]
    return data.load(name, **es.data_settings(values))


def row_figures(ds, prior, values, seeds):
    """The figures of one row (see the module docstring) over run ``seeds``."""
    spec_args = dict(iters=int(values["sweeps"]), burn_in=int(values["burn_in"]), thin=int(values["thin"]),
                     inits=contrasting_starts(values["start"], int(values["chains"])),
                     split_merge=bool(values["split_merge"]))
    niw = resolve_niw(ds.X, covariance_type=values["covariance"])
    ks, k_chains, big, tiny, scores, merged, rhat = [], [], [], [], [], [], []
    for seed in seeds:
        spec = live_specs(ds, {"row": prior}, niw, seed=seed, **spec_args)["row"]
        chains = run_chains(ds.X, spec)
        K = chains.K_after_burn_in
        ks.append(K.reshape(-1))
        k_chains.append([round(float(k), 3) for k in K.mean(axis=1)])
        draws = chains.labels.reshape(-1, ds.n)
        counts = np.array([cluster_counts(z) for z in draws])
        big.append(counts[:, 0])
        tiny.append(counts[:, 1])
        if ds.labels is not None:
            scores.append([nmi(ds.labels, z) for z in draws])
            merged.append([bool(merged_true_clusters(ds.labels, z)) for z in draws])
        rhat.append(round(float(chains.diagnostics()["K"]["rhat"]), 4))
    spec = PRIORS[prior.name]
    out = {"prior": prior.name, "label": spec.label, "k": round(float(np.concatenate(ks).mean()), 4),
           "k_chains": k_chains, "big": round(float(np.concatenate(big).mean()), 4),
           "tiny": round(float(np.concatenate(tiny).mean()), 4),
           "nmi": round(float(np.mean(scores)), 4) if scores else None,
           "merged": round(float(np.mean(merged)), 4) if merged else None, "rhat_k": rhat}
    if spec.tuned is not None:
        out[spec.tuned] = float(getattr(prior, spec.tuned))
    return out


def measure(name, settings, covariance_type, seeds):
    """One entry of the figures file for the Explorer's defaults on (name, settings, covariance type)."""
    values = explorer_values(name, settings, covariance_type)
    ds = load(values)
    started = time.perf_counter()
    priors = es.check_rows(values)
    rows = [row_figures(ds, priors[row], values, seeds) for row in es.active_rows(values)]
    contrast = None
    r = CONTRASTS.get((name, tuple(sorted(settings.items())), covariance_type))
    if r is not None:
        row = es.active_rows(values)[-1]  # the tuned row (the pCRP's), at another r
        contrast = {"r": r, "figures": row_figures(
            ds, make_prior(values[es.prior_key(row)], **{**es.row_params(values, row), "r": r}), values, seeds)}
    served = [covariance_type] if ds.dim > 1 else list(COVARIANCE_TYPES)  # at d = 1 the types are one model
    return {"settings": demo_notes.measured_settings(values), "types": served,
            "seeds": list(seeds), "rows": rows, "contrast": contrast,
            "seconds": round(time.perf_counter() - started, 1), "command": demo_notes.WRITE_COMMAND,
            "date": datetime.date.today().isoformat()}


def line(entry):
    s = entry["settings"]
    about = ", ".join(f"{k} {v}" for k, v in s["data_settings"].items())
    cells = " | ".join(f"{f['label']}{' r ' + format(f['r'], 'g') if 'r' in f else ''}: K {f['k']:.2f} big "
                       f"{f['big']:.2f} tiny {f['tiny']:.2f}" + (f" NMI {f['nmi']:.3f}" if f["nmi"] is not None else "")
                       + f" R-hat {max(f['rhat_k']):.3f} per chain "
                       + "/".join(f"{k:.1f}" for run in f["k_chains"] for k in run) for f in entry["rows"])
    extra = ""
    if entry["contrast"]:
        q = entry["contrast"]["figures"]
        extra = (f" | at r {entry['contrast']['r']:g}: K {q['k']:.2f} big {q['big']:.2f}"
                 + (f" NMI {q['nmi']:.3f} merged {q['merged']:.0%}" if q["nmi"] is not None else ""))
    return f"{s['data']:12} {about:55} {s['covariance']:9} | {cells}{extra} | {entry['seconds']:.0f} s"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=2, help="run seeds 0..n-1 (default 2)")
    parser.add_argument("--only", default="", help="name or name:dims, comma-separated (default: every variant)")
    parser.add_argument("--write", default="", help="write the figures file here (others' entries kept)")
    args = parser.parse_args()
    wanted = [w for w in args.only.split(",") if w]
    old = []
    if args.write and os.path.exists(args.write):
        old = json.loads(open(args.write, encoding="utf-8").read()).get("entries", [])
    made = []
    print(f"run: {LIVE_DEMO['chains']} chains x {LIVE_DEMO['sweeps']:,} sweeps, burn-in {LIVE_DEMO['burn_in']}, thin "
          f"{LIVE_DEMO['thin']}, run seeds 0..{args.seeds - 1}; load average {os.getloadavg()[0]:.1f}", flush=True)
    cpu = time.process_time()
    for name, settings in VARIANTS:
        tag = name if "dims" not in settings else f"{name}:{settings['dims']}"
        if wanted and tag not in wanted and name not in wanted:
            continue
        ds_dim = load(explorer_values(name, settings, "full")).dim
        for covariance_type in types_for(ds_dim):
            entry = measure(name, settings, covariance_type, range(args.seeds))
            print(line(entry), flush=True)
            made.append(entry)
            if args.write:
                keys = {json.dumps(e["settings"], sort_keys=True) for e in made}
                kept = [e for e in old if json.dumps(e["settings"], sort_keys=True) not in keys]
                payload = {"about": "Figures of the Explorer's default demo at each shipped setting, with the settings "
                                    "they were measured at (pcrp.app.demo_notes reads them; bench/default_demo.py "
                                    "writes them).", "entries": kept + made}
                atomic_write(args.write, lambda f: f.write(dumps(payload, indent=1)))
    print(f"CPU {time.process_time() - cpu:.0f} s (this process); load average now {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

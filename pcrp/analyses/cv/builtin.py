"""The cross-validated r of each built-in data set, computed once and shipped (pcrp/datasets/cv_r.json): reading it
(:func:`builtin_r`), making it (:func:`compute_builtin_r`, run by BUILTIN_R_COMMAND) and its check on the whole
data set (:func:`check_builtin_r`). n_jobs None: the run's default (all cores).
"""

import functools

from .check import check_with_chains
from .settings import BUILTIN_R_SETTINGS
from .validate import cross_validate

# The cross-validated r of each built-in data set at its default settings (pcrp.data.load(name)), computed once
# by BUILTIN_R_COMMAND and shipped in pcrp/datasets/cv_r.json with every setting and the time it took.
BUILTIN_R_FILE = "cv_r.json"
BUILTIN_R_COMMAND = "python -m pcrp.analyses.cv --builtin-r pcrp/datasets/cv_r.json"
BUILTIN_R_DATA = ("old-faithful", "mnist", "sim1", "sim2", "demo")


def builtin_r_table():
    """{data set name: entry} from the shipped pcrp/datasets/cv_r.json (entry: r, data settings, CV settings,
    the curve, the command and date)."""
    import json
    from importlib import resources

    return json.loads((resources.files("pcrp") / "datasets" / BUILTIN_R_FILE).read_text(encoding="utf-8"))["data"]


@functools.lru_cache(maxsize=None)
def builtin_r(name):
    """(r, provenance) for a built-in data set: the cross-validated r shipped with pcrp and one sentence saying
    how it was chosen (read once per process: the Explorer asks on every frame of every live page). For a name that is not a built-in data set (a CSV file): (pcrp.model.DEFAULT_R, a sentence
    saying that it is a default, not a choice for these data, and what to do)."""
    from ...model import DEFAULT_R

    entry = builtin_r_table().get(name)
    if entry is None:
        return DEFAULT_R, (f"r = {DEFAULT_R:g} is pcrp's default, not chosen for these data: a mild power that "
                           "removes small spurious clusters on the built-in data sets; choose r for your data by "
                           "cross validation (the Choose r page, pcrp cv).")
    s = entry["cv"]
    data = entry["data"]
    about = ", ".join(f"{k} {v}" for k, v in data.items() if k not in ("kind", "name", "idx_folder") and v is not None)
    return float(entry["r"]), (
        f"r = {entry['r']:g} for {name}{f' ({about})' if about else ''} comes from {s['folds']}-fold cross validation repeated "
        f"{s['repeats']} times ({s['rule']} change-point rule, {s['iters']:,} sweeps per fit, seed {s['seed']}), "
        f"computed once with `{entry['command']}` ({entry['date']}); another N or seed may call for another r."
        + _check_text(entry))


def compute_builtin_r(names=BUILTIN_R_DATA, n_jobs=None, progress=None):
    """{name: entry} for :data:`BUILTIN_R_FILE`: :func:`cross_validate` with BUILTIN_R_SETTINGS on each built-in
    data set at its default settings (standardised as :func:`pcrp.data.load` does)."""
    import datetime
    import time

    from ... import data as data_mod

    out = {}
    for name in names:
        ds = data_mod.load(name)
        start = time.perf_counter()
        res = cross_validate(ds.X, standardize=ds.standardized, n_jobs=n_jobs, **BUILTIN_R_SETTINGS)
        seconds = time.perf_counter() - start
        out[name] = {"r": res.chosen_r, "cv_r": res.chosen_r, "reason": res.blow_up.reason,
                     "mean_rule_r": float(res.r_grid[res.mean_blow_up.chosen_index]),
                     "data": ds.source, "n": ds.n, "standardized": bool(ds.standardized),
                     "cv": {k: v for k, v in res.settings.items() if k not in ("niw_per_split",)},
                     "curve": res.table(), "seconds": round(seconds, 1), "command": BUILTIN_R_COMMAND,
                     "date": datetime.date.today().isoformat()}
        check_builtin_r(name, out[name], n_jobs=n_jobs)
        if progress is not None:
            progress(name, out[name])
    return out


def check_builtin_r(name, entry, n_jobs=None):
    """:func:`check_with_chains` of ``entry["cv_r"]`` on the whole built-in data set (the data `pcrp run NAME` fits),
    against a CRP fit on it and the clusters the cross-validation fits keep there (``entry["curve"]``); sets
    entry["r"] and entry["check"]. Modifies and returns ``entry``."""
    from ... import data as data_mod

    ds = data_mod.load(name)
    curve = {round(row["r"], 6): row["mean_k"] for row in entry["curve"]}
    grid = [row["r"] for row in entry["curve"]]
    entry["r"], entry["check"] = check_with_chains(ds.X, entry["cv_r"], grid, n_jobs=n_jobs,
                                                   cv_mean_k=curve.get(round(entry["cv_r"], 6)))
    return entry


def _check_text(entry):
    check = entry.get("check")
    return f" {check['text']}" if check and check.get("text") else ""


def write_builtin_r(path, names=BUILTIN_R_DATA, n_jobs=None):
    """Compute :func:`compute_builtin_r` and write it as JSON to ``path`` (whole or not at all)."""
    from ...basics.files import atomic_write
    from ...basics.json_text import dumps

    def show(name, entry):
        print(f"{name}: r = {entry['r']:g} ({entry['seconds']:.0f} s); {entry['reason']}", flush=True)

    table = compute_builtin_r(names, n_jobs=n_jobs, progress=show)
    payload = {"about": "The cross-validated pCRP power r of each built-in data set at its default settings "
                        "(pcrp.analyses.cv.builtin_r reads it).", "data": table}
    atomic_write(path, lambda f: f.write(dumps(payload, indent=1)))

"""The cross-validated r of each built-in data set, per covariance type, computed once and shipped
(pcrp/datasets/cv_r.json): reading it (:func:`shipped_r`, :func:`builtin_r`), making it (:func:`compute_builtin_r`,
run by BUILTIN_R_COMMAND) and its check on the whole data set (:func:`check_builtin_r`). n_jobs None: the run's
default (all cores).

One entry per data set, data settings and covariance type: an r cross-validated for full covariances is not the r of
diagonal ones (on Old Faithful the CRP needs a third cluster between the two eruption types when the clusters' axes
are the columns'). At d = 1 the three types are one model (docs/design.md section 1.2), so a 1-D data set has one
entry, which says that it serves all three. Where no r was cross-validated for the settings at hand (another N,
another MNIST embedding), :func:`shipped_r` says so, and names the settings its r was chosen at.
"""

import functools
from dataclasses import dataclass

from .check import check_with_chains
from .settings import BUILTIN_R_SETTINGS
from .validate import cross_validate

# The cross-validated r of the built-in data sets, computed once by BUILTIN_R_COMMAND and shipped in
# pcrp/datasets/cv_r.json with every setting and the time it took.
BUILTIN_R_FILE = "cv_r.json"
BUILTIN_R_COMMAND = "python -m pcrp.analyses.cv --builtin-r pcrp/datasets/cv_r.json"
BUILTIN_R_DATA = ("old-faithful", "mnist", "sim1", "sim2", "demo")
# The data settings each data set's r is cross-validated at, as pcrp.data.load takes them ({}: its defaults, the
# settings `pcrp run NAME` and the Explorer start from). MNIST also at 10 dimensions of its spectral embedding,
# which the Explorer offers. Each at every covariance type where d > 1 (types_for).
BUILTIN_R_VARIANTS = (("old-faithful", {}), ("mnist", {}), ("mnist", {"dims": 10}), ("sim1", {}), ("sim2", {}),
                      ("demo", {}))
# The type a caller that names none means: the full one, every front end's default (pcrp.model.resolve_niw).
DEFAULT_TYPE = "full"


def types_for(dims):
    """The covariance types an r is cross-validated for on data of ``dims`` columns: all three, or at d = 1, where
    they are one model, the full one alone (serving all three)."""
    from ...model import COVARIANCE_TYPES

    return tuple(COVARIANCE_TYPES) if int(dims) > 1 else (DEFAULT_TYPE,)


def covariance_words(covariance_type):
    """"full covariances", "diagonal covariances", "spherical covariances": a type in words."""
    from ..collapse import covariance_words as words

    return words(covariance_type)


def builtin_r_entries():
    """Every entry of the shipped pcrp/datasets/cv_r.json, a list of dicts: name, covariance_type, types (the types
    its r serves: all three at d = 1), data (the data set's source, as pcrp.data.Dataset.source), n, d, standardized,
    r (checked), cv_r (cross validation's proposal), reason, cv (its settings), curve, splits (each split's held-out
    scores at r), check, seconds, command and date."""
    import json

    return json.loads(_table_text())["entries"]


@functools.lru_cache(maxsize=1)
def _table_text():
    """The shipped table's text, read once per process (each reader parses its own copy)."""
    from importlib import resources

    return (resources.files("pcrp") / "datasets" / BUILTIN_R_FILE).read_text(encoding="utf-8")


def _is_default(entry):
    return entry.get("variant", {}) == {}


def builtin_r_table():
    """{data set name: entry} of each built-in data set at its default data settings with full covariances (the
    entry of :func:`builtin_r_entries` that `pcrp run NAME` and the Explorer start from)."""
    return {e["name"]: e for e in builtin_r_entries() if _is_default(e) and e["covariance_type"] == DEFAULT_TYPE}


def _settings_of(data):
    """(the data's source dict or None, its standardisation or None, the load() settings dict or None) of ``data``:
    a pcrp.data.Dataset, a dict of pcrp.data.load's settings, or None (the defaults)."""
    if data is None:
        return None, None, {}
    if isinstance(data, dict):
        return None, None, dict(data)
    return dict(getattr(data, "source", {}) or {}), bool(getattr(data, "standardized", False)), None


def _matches(entry, default, source, standardized, settings):
    """Whether ``entry`` was made on the data described by (source, standardized) or by load() ``settings`` (a
    setting not given is the data set's default, read from the ``default`` entry's data, not retyped here)."""
    if source is not None:
        keep = {k: v for k, v in source.items() if k != "idx_folder"}
        return (keep == {k: v for k, v in entry["data"].items() if k != "idx_folder"}
                and standardized == bool(entry["standardized"]))
    settings = {k: v for k, v in settings.items() if v is not None}
    std = settings.pop("standardize_data", None)
    if std is not None and bool(std) != bool(entry["standardized"]):
        return False
    known = {k: v for k, v in default["data"].items() if k not in ("kind", "name", "idx_folder")}
    if set(settings) - set(known):  # a setting the default entry was not made with (Old Faithful's columns)
        return False
    for key, base in known.items():
        value = settings.get(key, base)
        value = list(value) if isinstance(value, (tuple, list)) else value
        if value != entry["data"].get(key):
            return False
    return True


def _about(entry):
    """The data settings of an entry in words: "N 300, seed 0" or "digits [1, 2, 3, 4], N 1000, ...", or ""."""
    words = {"n": "N {}", "seed": "seed {}", "digits": "digits {}", "embedding": "{} embedding",
             "dims": "{} dimensions", "columns": "columns {}"}
    parts = []
    for key, value in entry["data"].items():
        if key in ("kind", "name", "idx_folder") or value is None:
            continue
        shown = value
        if isinstance(value, list):
            consecutive = len(value) > 2 and list(value) == list(range(value[0], value[0] + len(value)))
            shown = f"{value[0]}-{value[-1]}" if consecutive else " ".join(str(v) for v in value)
        parts.append(words.get(key, key + " {}").format(shown))
    return ", ".join(parts)


@dataclass(frozen=True)
class ShippedR:
    """The r a pCRP fit of a data set starts from, and where it came from.

    r: the value; matched: whether it was cross-validated for exactly these data settings and this covariance type
    (False: another setting's r, or pcrp's default for a CSV, and ``text`` says so); covariance_type: the type asked
    for; entry: the shipped entry it came from (None for a CSV); text: one paragraph of provenance; line: one short
    line for a caption.
    """

    r: float
    matched: bool
    covariance_type: str
    entry: dict | None
    text: str
    line: str

    @property
    def cv_kept(self):
        """(mean K, words): the clusters the cross-validation fits of a matched entry keep at the r cross validation
        proposed (their mean K over the splits, which the check of that r capped its reference with), or None."""
        if not self.matched or self.entry is None:
            return None
        cv_r = self.entry["cv_r"]
        row = next((row for row in self.entry["curve"] if abs(row["r"] - cv_r) < 1e-9), None)
        if row is None:
            return None
        return row["mean_k"], (f"cross validation of r for {covariance_words(self.covariance_type)} on these data "
                               f"(its fits' mean K {row['mean_k']:.2f} at the r it proposed, {cv_r:g}; shipped)")


def shipped_r(name, covariance_type=None, data=None):
    """The :class:`ShippedR` of data set ``name`` (a built-in name; anything else, a CSV, gets pcrp's default r,
    said to be no choice for the data) with clusters of ``covariance_type`` (None: full) on ``data``: None (the data
    set's default settings), a pcrp.data.Dataset (its source and standardisation) or a dict of pcrp.data.load's
    settings ({"n": 500}, {"dims": 10}, ...; those not given at their defaults).

    Where an r was cross-validated for these settings and type, it is that r. Where none was (another N, seed or
    embedding), it is the r cross-validated for the same type at the data set's default settings, and the text
    says that no r was cross-validated for these settings and names the ones it was."""
    from ...model import DEFAULT_R, check_covariance_type

    covariance_type = DEFAULT_TYPE if covariance_type is None else check_covariance_type(covariance_type)
    entries = [e for e in builtin_r_entries() if e["name"] == name]
    if not entries:
        text = (f"r = {DEFAULT_R:g} is pcrp's default, not chosen for these data: a mild power that removes small "
                "spurious clusters on the built-in data sets; choose r for your data by cross validation (the "
                "Choose r page, pcrp cv).")
        return ShippedR(float(DEFAULT_R), False, covariance_type, None, text,
                        f"r = {DEFAULT_R:g}: a default, not chosen for your data; the Choose r page chooses one.")
    source, standardized, settings = _settings_of(data)
    default = next(e for e in entries if _is_default(e))
    same_data = [e for e in entries if _matches(e, default, source, standardized, settings)]
    typed = [e for e in same_data if covariance_type in e["types"]]
    if typed:
        entry = typed[0]
        return ShippedR(float(entry["r"]), True, covariance_type, entry, _provenance(entry, covariance_type),
                        f"r = {entry['r']:g}: cross-validated for these data with "
                        f"{covariance_words(covariance_type)}.")
    entry = next((e for e in entries if _is_default(e) and covariance_type in e["types"]), None)
    if entry is None:  # no r of this type shipped for the data set at all
        text = (f"No r was cross-validated for {name} with {covariance_words(covariance_type)}: r = {DEFAULT_R:g} is "
                "pcrp's default, not a choice for these data; choose r for them by cross validation (the Choose r "
                "page, pcrp cv).")
        return ShippedR(float(DEFAULT_R), False, covariance_type, None, text,
                        f"r = {DEFAULT_R:g}: a default, not cross-validated for {covariance_words(covariance_type)}.")
    what = ("these data settings" if not same_data else f"{covariance_words(covariance_type)} on these data")
    about = _about(entry)
    text = (f"No r was cross-validated for {name} at {what}: r = {entry['r']:g} is the one cross-validated for "
            f"{name}{f' at {about}' if about else ''} with {covariance_words(covariance_type)}, a starting point, not "
            "a choice for these data; choose r for them by cross validation (the Choose r page, pcrp cv). "
            + _provenance(entry, covariance_type))
    return ShippedR(float(entry["r"]), False, covariance_type, entry, text,
                    f"r = {entry['r']:g}: cross-validated for {name}{f' at {about}' if about else ''}, not for these "
                    "settings.")


def builtin_r(name, covariance_type=None, data=None):
    """(r, provenance) for a data set: :func:`shipped_r`'s r and text. ``covariance_type`` None: full; ``data`` None:
    the data set's default settings (see :func:`shipped_r`). For a name that is not a built-in data set (a CSV
    file): (pcrp.model.DEFAULT_R, a sentence saying that it is a default, not a choice for these data, and what to
    do)."""
    shipped = shipped_r(name, covariance_type, data)
    return shipped.r, shipped.text


def _provenance(entry, covariance_type):
    s = entry["cv"]
    about = _about(entry)
    one_model = (" (at d = 1 the full, diagonal and spherical covariances are one model, so this r serves all three)"
                 if len(entry["types"]) > 1 else "")
    return (f"r = {entry['r']:g} for {entry['name']}{f' ({about})' if about else ''} with "
            f"{covariance_words(covariance_type)}{one_model} comes from {s['folds']}-fold cross validation repeated "
            f"{s['repeats']} times ({s['rule']} change-point rule, {s['iters']:,} sweeps per fit, seed {s['seed']}) "
            f"of the pCRP with {covariance_words(entry['covariance_type'])}, computed once with "
            f"`{entry['command']}` ({entry['date']}); another N or seed may call for another r." + _check_text(entry))


def compute_builtin_r(variants=BUILTIN_R_VARIANTS, n_jobs=None, progress=None, types=None):
    """[entry] for :data:`BUILTIN_R_FILE`: :func:`cross_validate` with BUILTIN_R_SETTINGS on each built-in data set
    variant (name, pcrp.data.load settings), at each covariance type its dimension calls for (:func:`types_for`, or
    those of ``types`` among them), then :func:`check_builtin_r`. ``variants`` may also be names (their default
    settings). progress(entry): called after each entry."""
    import datetime
    import time

    from ... import data as data_mod
    from ...model import COVARIANCE_TYPES

    out = []
    for variant in variants:
        name, settings = (variant, {}) if isinstance(variant, str) else variant
        ds = data_mod.load(name, **settings)
        for covariance_type in types_for(ds.dim):
            if types is not None and covariance_type not in types:
                continue
            start = time.perf_counter()
            res = cross_validate(ds.X, {"covariance_type": covariance_type}, standardize=ds.standardized,
                                 n_jobs=n_jobs, **BUILTIN_R_SETTINGS)
            seconds = time.perf_counter() - start
            entry = {"name": name, "variant": dict(settings), "covariance_type": covariance_type,
                     "types": list(COVARIANCE_TYPES) if ds.dim == 1 else [covariance_type],
                     "r": res.chosen_r, "cv_r": res.chosen_r, "reason": res.blow_up.reason,
                     "mean_rule_r": float(res.r_grid[res.mean_blow_up.chosen_index]),
                     "data": ds.source, "n": ds.n, "d": ds.dim, "standardized": bool(ds.standardized),
                     "cv": {k: v for k, v in res.settings.items() if k not in ("niw_per_split",)},
                     "curve": res.table(), "seconds": round(seconds, 1), "command": BUILTIN_R_COMMAND,
                     "date": datetime.date.today().isoformat()}
            check_builtin_r(entry, n_jobs=n_jobs, X=ds.X)
            entry["splits"] = split_scores(res, entry["r"])
            out.append(entry)
            if progress is not None:
                progress(entry)
    return out


def split_scores(result, r):
    """Each split's held-out scores at ``r`` (a value on the grid of ``result``, a CVResult): {r, log_pred, loss,
    mean_k}, lists over the splits in their order (pcrp.analyses.cv.make_splits: the same splits for every covariance
    type at the same N, folds, repeats and seed, so that types are compared split by split)."""
    import numpy as np

    g = int(np.argmin(np.abs(result.r_grid - r)))
    return {"r": float(result.r_grid[g]),
            **{name: [round(float(v), 9) for v in getattr(result, name)[:, g]]
               for name in ("log_pred", "loss", "mean_k")}}


def check_builtin_r(entry, n_jobs=None, X=None):
    """:func:`check_with_chains` of ``entry["cv_r"]`` on the whole built-in data set of the entry (the data `pcrp run
    NAME` fits at those settings) with its covariance type, against a CRP fit of that type on it and the clusters the
    cross-validation fits keep there (``entry["curve"]``); sets entry["r"] and entry["check"]. ``X``: the data, when
    already loaded. Modifies and returns ``entry``."""
    from ... import data as data_mod
    from ...model import resolve_niw

    if X is None:
        X = data_mod.load(entry["name"], **entry.get("variant", {})).X
    curve = {round(row["r"], 6): row["mean_k"] for row in entry["curve"]}
    grid = [row["r"] for row in entry["curve"]]
    entry["r"], entry["check"] = check_with_chains(X, entry["cv_r"], grid,
                                                   resolve_niw(X, covariance_type=entry["covariance_type"]),
                                                   n_jobs=n_jobs, cv_mean_k=curve.get(round(entry["cv_r"], 6)))
    return entry


def _check_text(entry):
    check = entry.get("check")
    return f" {check['text']}" if check and check.get("text") else ""


def _key(entry):
    return entry["name"], tuple(sorted(entry.get("variant", {}).items())), entry["covariance_type"]


def write_builtin_r(path, variants=BUILTIN_R_VARIANTS, n_jobs=None, types=None, keep_others=False):
    """Compute :func:`compute_builtin_r` and write it as JSON to ``path``, rewritten whole (atomically) after each
    entry, so that a long run keeps what it has made. ``keep_others``: keep the entries already in ``path`` that this
    call does not compute (to remake some entries only)."""
    import json
    from pathlib import Path

    from ...basics.files import atomic_write
    from ...basics.json_text import dumps

    old = []
    if keep_others and Path(path).exists():
        old = json.loads(Path(path).read_text(encoding="utf-8")).get("entries", [])
    made = {}

    def write(entry):
        print(f"{entry['name']} {entry['variant'] or ''} {entry['covariance_type']}: r = {entry['r']:g} "
              f"({entry['seconds']:.0f} s); {entry['reason']}", flush=True)
        made[_key(entry)] = entry
        remade = dict(made)
        entries = [remade.pop(_key(e), e) for e in old] + list(remade.values())
        payload = {"about": "The cross-validated pCRP power r of each built-in data set per data settings and "
                            "covariance type (pcrp.analyses.cv.shipped_r reads it).", "entries": entries}
        atomic_write(path, lambda f: f.write(dumps(payload, indent=1)))

    compute_builtin_r(variants, n_jobs=n_jobs, progress=write, types=types)

"""The Explorer's main settings: one table of names, types, bounds and defaults.

The page keeps them for the whole session (they survive visits to other pages) and mirrors them
in the URL's query string, so a teacher can bookmark a prepared demo. A URL is typed by anyone:
:func:`from_query` reads only known keys, short values, finite numbers inside the bounds and
known choices, and reports everything else instead of using it.

The two rows of the comparison each pick a prior from :data:`pcrp.model.PRIORS` (``prior1``, ``prior2``);
their parameters are generated from the registry's :class:`pcrp.model.Param` entries, one setting per
parameter name and row (``alpha1``, ``r2``, ``k_max1``, ...): a parameter's default is that of the row's
prior, its bounds those of the prior's Param within the Explorer's display range (:data:`WIDGET_RANGE`).
Addresses of older versions still work: ``crp_alpha`` -> ``alpha1``, ``pcrp_alpha`` -> ``alpha2``,
``r`` -> ``r2``.
"""

import math
from dataclasses import dataclass

from ..data import APP_MAX_ROWS
from ..model import DEFAULT_PRIOR, PRIORS, ModelError

SOURCES = ("old-faithful", "mnist", "sim1", "sim2", "csv")
SOURCE_LABELS = {"old-faithful": "Old Faithful", "mnist": "MNIST", "sim1": "Sim 1", "sim2": "Sim 2",
                 "csv": "Upload a CSV"}
STARTS = ("kmeans:10", "one", "random:10", "kmeans:3")
# Pace: target sweeps per second (None = as fast as the sampler goes).
PACES = {"2 sweeps/s": 2, "10 sweeps/s": 10, "100 sweeps/s": 100, "1,000 sweeps/s": 1000, "full speed": None}
MAX_VALUE_CHARS = 64


@dataclass(frozen=True)
class Setting:
    """One setting: kind is 'int', 'float', 'bool', 'choice' or 'digits' (a set of digits 0-9); run_key: the
    name under which a run's config records it ("" for settings that are not the run's, such as the pace)."""

    name: str
    kind: str
    default: object
    low: float = None
    high: float = None
    choices: tuple = ()
    label: str = ""
    run_key: str = ""

    def parse(self, text):
        """The value of a query-string ``text``; raises ValueError with a message for the user."""
        text = str(text).strip()
        if len(text) > MAX_VALUE_CHARS:
            raise ValueError(f"{self.label}: the value is too long")
        if self.kind == "bool":
            if text.lower() in ("1", "true", "yes", "on"):
                return True
            if text.lower() in ("0", "false", "no", "off"):
                return False
            raise ValueError(f"{self.label} must be true or false (got {text!r})")
        if self.kind == "choice":
            if text not in self.choices:
                raise ValueError(f"{self.label} must be one of {', '.join(self.choices)} (got {text!r})")
            return text
        if self.kind == "digits":
            parts = [p for p in text.split(",") if p]
            if not parts or any(not (len(p) == 1 and p.isdigit()) for p in parts):
                raise ValueError(f"{self.label} must be digits 0-9 separated by commas (got {text!r})")
            return sorted({int(p) for p in parts})
        try:
            value = float(text)
        except ValueError:
            raise ValueError(f"{self.label} must be a number (got {text!r})") from None
        if not math.isfinite(value):
            raise ValueError(f"{self.label} must be a finite number (got {text!r})")
        if self.kind == "int":
            if value != int(value):
                raise ValueError(f"{self.label} must be a whole number (got {text!r})")
            value = int(value)
        if not self.low <= value <= self.high:
            raise ValueError(f"{self.label} must be between {self.low:g} and {self.high:g} (got {text})")
        return value

    def format(self, value):
        if self.kind == "bool":
            return "1" if value else "0"
        if self.kind == "digits":
            return ",".join(str(d) for d in value)
        if self.kind == "float":
            return f"{value:g}"
        return str(value)


# ----------------------------------------------------------------------------- the rows' priors
ROWS = (1, 2)
ROW_DEFAULT_PRIORS = {1: "crp", 2: DEFAULT_PRIOR}  # CRP above, the paper's pCRP below
# The Explorer's display range of a parameter, by name (a widget needs finite bounds; the registry's may be
# open or infinite): each prior's widget takes the intersection of this and its own Param bounds. A parameter
# not named here gets its registry bounds, an open end moved inwards by OPEN_STEP, and at most FALLBACK_SPAN.
WIDGET_RANGE = {"alpha": (0.001, 100.0), "r": (0.05, 3.0), "sigma": (0.0, 0.95), "gamma": (0.001, 100.0),
                "lam": (0.01, 100.0), "k_max": (1, 50)}
SLIDERS = {"r": 0.01}  # parameters shown as a slider (with this step) rather than a number box
OPEN_STEP = 1e-3
FALLBACK_SPAN = 1000.0


@dataclass(frozen=True)
class ParamWidget:
    """What a widget of one prior's parameter needs: registry name and label, help, default, finite
    bounds inside the registry's, whether it is a whole number, and the slider step (0: a number box)."""

    name: str
    label: str
    help: str
    default: float
    low: float
    high: float
    integer: bool
    slider_step: float = 0.0


def param_widget(prior, name):
    """The :class:`ParamWidget` of parameter ``name`` of the registry prior ``prior`` ("crp", ...)."""
    p = PRIORS[prior].param(name)
    step = 1 if p.integer else OPEN_STEP
    low = -FALLBACK_SPAN if p.low is None else (p.low if p.low_closed else p.low + step)
    high = low + FALLBACK_SPAN if p.high is None else (p.high if p.high_closed else p.high - step)
    if name in WIDGET_RANGE:
        low, high = max(low, WIDGET_RANGE[name][0]), min(high, WIDGET_RANGE[name][1])
    if p.integer:
        low, high = int(math.ceil(low)), int(math.floor(high))
    default = min(max(p.default, low), high)
    return ParamWidget(name, p.label, p.help, int(default) if p.integer else float(default), low, high, p.integer,
                       SLIDERS.get(name, 0.0))


def prior_widgets(prior):
    """The :class:`ParamWidget` of every parameter of registry prior ``prior``, in the registry's order."""
    return [param_widget(prior, p.name) for p in PRIORS[prior].params]


def row_key(name, row):
    """The setting of parameter ``name`` in row ``row``: "alpha1", "r2", "k_max1"."""
    return f"{name}{row}"


def prior_key(row):
    return f"prior{row}"


def _row_settings():
    """One setting per row for its prior, and one per row and parameter name of any registry prior: bounds
    the union over the priors that have it (each prior's own bounds are checked by :func:`check_rows`)."""
    out = []
    for row in ROWS:
        out.append(Setting(prior_key(row), "choice", ROW_DEFAULT_PRIORS[row], choices=tuple(PRIORS),
                           label=f"prior of row {row}"))
    names = list(dict.fromkeys(p.name for spec in PRIORS.values() for p in spec.params))
    for row in ROWS:
        for name in names:
            widgets = [param_widget(prior, name) for prior, spec in PRIORS.items()
                       if name in {p.name for p in spec.params}]
            own = [w for w in widgets if name in {p.name for p in PRIORS[ROW_DEFAULT_PRIORS[row]].params}]
            default = param_widget(ROW_DEFAULT_PRIORS[row], name).default if own else widgets[0].default
            integer = all(w.integer for w in widgets)
            out.append(Setting(row_key(name, row), "int" if integer else "float", default,
                               min(w.low for w in widgets), max(w.high for w in widgets),
                               label=f"{name} of row {row}"))
    return tuple(out)


def row_param_names(values, row):
    """The parameter names of the prior that row ``row`` picks in ``values``."""
    return [p.name for p in PRIORS[values[prior_key(row)]].params]


def row_params(values, row):
    """{parameter: value} of row ``row``'s prior, as :func:`pcrp.model.make_prior` takes them."""
    return {name: values[row_key(name, row)] for name in row_param_names(values, row)}


def reset_row(values, row):
    """Set row ``row``'s parameters to its (new) prior's defaults, clamped into the Explorer's range."""
    for w in prior_widgets(values[prior_key(row)]):
        values[row_key(w.name, row)] = w.default


# Keys of older addresses (when the rows were always CRP and pCRP): read as their row settings.
LEGACY_KEYS = {"crp_alpha": "alpha1", "pcrp_alpha": "alpha2", "r": "r2"}

SETTINGS = (
    Setting("data", "choice", "old-faithful", choices=SOURCES, label="data set"),
    Setting("sim_n", "int", 300, 10, APP_MAX_ROWS, label="simulation N"),
    Setting("sim_seed", "int", 0, 0, 10_000, label="simulation data seed"),
    Setting("digits", "digits", [1, 2, 3, 4], label="MNIST digits"),
    Setting("mnist_n", "int", 1000, 50, 5000, label="MNIST N"),
    Setting("embedding", "choice", "spectral", choices=("spectral", "pca"), label="MNIST embedding"),
    Setting("dims", "int", 2, 1, 50, label="MNIST dimensions"),
) + _row_settings() + (
    Setting("sweeps", "int", 2000, 10, 100_000, label="sweeps", run_key="iters"),
    Setting("burn_in", "int", 500, 0, 99_999, label="burn-in", run_key="burn_in"),
    Setting("thin", "int", 5, 1, 1000, label="thin", run_key="requested_thin"),
    Setting("seed", "int", 0, 0, 2**31 - 1, label="seed", run_key="seed"),
    Setting("split_merge", "bool", True, label="split-merge moves", run_key="split_merge"),
    Setting("start", "choice", "kmeans:10", choices=STARTS, label="start", run_key="init"),
    Setting("chains", "int", 2, 1, 4, label="chains per prior", run_key="chains"),
    Setting("pace", "choice", "100 sweeps/s", choices=tuple(PACES), label="pace"),
    Setting("present", "bool", False, label="presentation mode"),
)
BY_NAME = {s.name: s for s in SETTINGS}
RUN_SETTINGS = {s.name: s.run_key for s in SETTINGS if s.run_key}  # setting -> its key in a run's config
PARAM_NAMES = tuple(dict.fromkeys(p.name for spec in PRIORS.values() for p in spec.params))
ROW_PARAMS = {row_key(name, row): (row, name) for row in ROWS for name in PARAM_NAMES}  # setting -> (row, param)


def defaults():
    """{name: default value} of every setting (fresh lists, safe to change)."""
    return {s.name: list(s.default) if isinstance(s.default, list) else s.default for s in SETTINGS}


def from_query(params):
    """Settings from a query string {key: value or [values]}: (values {name: value} for the keys that
    parse, problems [message] for those that do not). Unknown keys are ignored; the keys of older
    addresses (:data:`LEGACY_KEYS`) count when their new key is absent. A row whose prior is given takes
    that prior's defaults for the parameters the address leaves out; a parameter outside its prior's
    bounds is reported and left at its default."""
    params = dict(params)
    for old, new in LEGACY_KEYS.items():
        if old in params and new not in params:
            params[new] = params[old]
    values, problems = {}, []
    for key, raw in params.items():
        setting = BY_NAME.get(key)
        if setting is None:
            continue
        if isinstance(raw, (list, tuple)):
            raw = raw[-1] if raw else ""
        try:
            values[key] = setting.parse(raw)
        except ValueError as err:
            problems.append(str(err))
    for row in ROWS:
        prior = values.get(prior_key(row), ROW_DEFAULT_PRIORS[row])
        for w in prior_widgets(prior):
            key = row_key(w.name, row)
            if key not in values:
                if prior_key(row) in values:
                    values[key] = w.default
            elif not w.low <= values[key] <= w.high:
                problems.append(f"{w.label} of the {PRIORS[prior].label} in row {row} must be between {w.low:g} "
                                f"and {w.high:g} (got {values.pop(key):g})")
                values[key] = w.default
    return values, problems


def check_rows(values):
    """The priors of both rows built from ``values`` ({row: prior object}); raises pcrp.model.ModelError
    (whose message names the parameter and its bounds) for a value the prior refuses."""
    from ..model import make_prior

    out = {}
    for row in ROWS:
        try:
            out[row] = make_prior(values[prior_key(row)], **row_params(values, row))
        except ModelError as err:
            raise ModelError(f"Row {row}: {err}") from None
    return out


def _default_for(values, setting):
    """The value ``setting`` has when an address leaves it out, given the other ``values`` (a row's
    parameters default to those of the row's prior); None when it does not apply (another prior's)."""
    if setting.name not in ROW_PARAMS:
        return setting.default
    row, name = ROW_PARAMS[setting.name]
    prior = values.get(prior_key(row), ROW_DEFAULT_PRIORS[row])
    if name not in {p.name for p in PRIORS[prior].params}:
        return None
    return param_widget(prior, name).default


def to_query(values):
    """The query string {key: text} of the settings that differ from their defaults (a row's parameters:
    those of its prior, when they differ from that prior's defaults)."""
    out = {}
    for s in SETTINGS:
        if s.name not in values:
            continue
        default = _default_for(values, s)
        if default is None:
            continue
        if values[s.name] != default:
            out[s.name] = s.format(values[s.name])
    return out


def demo_link(page_url, values):
    """The address ``page_url`` (its query and fragment dropped) with ``values``' non-default settings as
    its query: a demo link carries settings only, never a run or data. A relative '?...' when the page's
    address is unknown."""
    from urllib.parse import urlencode, urlsplit, urlunsplit

    parts = urlsplit(page_url or "")
    path = parts.path or ("/" if parts.netloc else "")
    return urlunsplit((parts.scheme, parts.netloc, path, urlencode(to_query(values)), "")) or "?"

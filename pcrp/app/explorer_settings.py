"""The Explorer's settings as the page and its address see them, read from their declarations.

The page keeps them for the whole session (they survive visits to other pages) and mirrors them in the URL's query
string, so a teacher can bookmark a prepared demo. A URL is typed by anyone: :func:`from_query` reads only known keys,
short values, numbers its declaration accepts and known choices, and reports everything else instead of using it.

Every setting is declared once, in the declarations system (:mod:`pcrp.basics.params`): the live demo's and the
run's numbers in :data:`pcrp.app.live_params.LIVE_PARAMS` (its preset :data:`pcrp.app.live_params.LIVE_DEMO` gives
the demo's defaults), the Explorer's choices (the data set, the start, the pace, the switches) in
:data:`EXPLORER_CHOICES`, each prior's parameters in the registry (:data:`pcrp.model.PRIORS`). This module only
indexes them (:data:`SETTINGS`, :data:`BY_NAME`) and reads and writes them as an address (each declaration's
``parse`` and ``text``); it declares no bound and no kind of its own. The page shows 1 to 5 rows (``rows``; two by default: the CRP above the pCRP), each
picking a registry prior (``prior1`` ... ``prior5``); a demo link names them all at once, ``?priors=crp,pcrp,py``,
which also sets how many rows there are. Their parameters are one setting per parameter name and row (``alpha1``,
``r2``, ``k_max1``, ...), checked against the row's prior's own declaration. Addresses of older versions still work:
``crp_alpha`` -> ``alpha1``, ``pcrp_alpha`` -> ``alpha2``, ``r`` -> ``r2``.

A row's tuned parameter (the pCRP's r) has no default of its own: it is the data's r (:func:`data_r`: the r
cross-validated for that built-in data set at its data settings and the clusters' covariance type and shipped, from
:func:`pcrp.analyses.cv.shipped_r`, one source for the page, its defaults and its demo links), so an address leaves it
out exactly when it is the data's, and a visitor's r (1.1 on Old Faithful, say) is written out.
"""

import functools
import math
from dataclasses import dataclass

from ..basics.errors import SettingError
from ..basics.params import MAX_TEXT_CHARS as MAX_VALUE_CHARS, SWITCH, Choice, Declarations, Param, parse_number
from ..data import MNIST_EMBEDDINGS
from ..model import COVARIANCE_TYPES, DEFAULT_PRIOR, PRIORS, ModelError
from .live_params import DEFAULT_ROW_COUNT, LIVE_DEMO, LIVE_PARAMS, ROWS, chains_cap, default_chains

SOURCES = ("old-faithful", "mnist", "sim1", "sim2", "csv")
SOURCE_LABELS = {"old-faithful": "Old Faithful", "mnist": "MNIST", "sim1": "Sim 1", "sim2": "Sim 2",
                 "csv": "Upload a CSV"}
STARTS = ("kmeans:10", "one", "random:10", "kmeans:3")
# Pace: target sweeps per second (None = as fast as the sampler goes).
PACES = {"2 sweeps/s": 2, "10 sweeps/s": 10, "100 sweeps/s": 100, "1,000 sweeps/s": 1000, "full speed": None}
# A widget holds closed bounds: an open bound of a declaration is shown one step inside it (the number boxes show
# three decimals).
OPEN_STEP = 1e-3


@dataclass(frozen=True)
class RowParam:
    """Setting ``name`` ("alpha1", "r2"): parameter ``param`` of row ``row``'s prior, whichever prior the row picks.
    It is no declaration of its own: its declaration is the row's prior's (:func:`row_declaration`, the registry's), so
    an address's value is read as a number here and checked by that declaration once the row's prior is known
    (:func:`from_query`). label: how a message names it; default: that of the row's default prior (or of the first
    prior declaring it)."""

    name: str
    row: int
    param: str
    label: str
    default: object

    def parse(self, text, owner="the settings", error=SettingError, name=None):
        """The number a text holds (checked against the row's prior by :func:`from_query`)."""
        return parse_number(text, name or self.name, error)

    text = staticmethod(Param.text)


def widget_bounds(param):
    """(low, high): the closed bounds a widget of the declared ``param`` offers (an open bound one step inside)."""
    step = 1 if param.integer else OPEN_STEP
    low = param.low if param.low_closed else param.low + step
    high = param.high if param.high_closed else param.high - step
    if param.integer:
        low, high = int(math.ceil(low)), int(math.floor(high))
    return low, high


# ----------------------------------------------------------------------------- the rows' priors
def _row_default_priors():
    """{row: prior name} of every row: the over-clustering reference (the CRP) above the default prior (the pCRP),
    then the registry's other priors in its order (cycled when it holds fewer than the rows)."""
    first = {1: next(name for name, spec in PRIORS.items() if spec.reference), 2: DEFAULT_PRIOR}
    others = [name for name in PRIORS if name not in first.values()] or list(PRIORS)
    return {**first, **{row: others[i % len(others)] for i, row in enumerate(ROWS[2:])}}


CHOOSE_R_PRIOR = DEFAULT_PRIOR  # the prior whose tuned parameter the Choose r page cross-validates (pcrp.analyses.cv's)
SLIDER_STEP = 0.01  # a row's tuned parameter (the pCRP's r) is a slider with this step; the others number boxes
# The slider spans the tuned parameter's cross-validation grid (the registry's tune_grid) with room beyond it, from
# its lower bound to SLIDER_ROOM x the grid's top: a display span, not a bound (a value outside it, from the address
# or Choose r, widens the slider; the declaration alone decides what is allowed).
SLIDER_ROOM = 1.5


@dataclass(frozen=True)
class ParamWidget:
    """What a widget of one prior's parameter needs: registry name and label, help, default, the closed bounds of
    its declaration (:func:`widget_bounds`), whether it is a whole number, and for the prior's tuned parameter the
    slider's step and span (slider_step 0: a number box)."""

    name: str
    label: str
    help: str
    default: float
    low: float
    high: float
    integer: bool
    slider_step: float = 0.0
    slider_span: tuple = ()


def _accepted_end(prior, name, end, default, integer):
    """``end`` (a widget bound of parameter ``name``) moved towards ``default`` until the prior accepts it with its
    other parameters at their defaults: a declaration's constraint between parameters (the Pitman-Yor's alpha >
    -sigma) narrows what a widget offers at first; a value it refuses later (another sigma) gets the prior's message
    at Start."""
    from ..model import make_prior

    def accepted(value):
        try:
            make_prior(prior, **{**PRIORS[prior].defaults(), name: value})
            return True
        except ModelError:
            return False

    if accepted(end):
        return end
    good, bad = default, end
    for _ in range(60):  # bisection to the boundary, then one widget step inside it
        middle = (good + bad) / 2
        good, bad = (middle, bad) if accepted(middle) else (good, middle)
    step = 1 if integer else OPEN_STEP
    inside = math.ceil(good / step) * step if end < default else math.floor(good / step) * step
    return int(inside) if integer else round(inside, 12)


@functools.lru_cache(maxsize=None)
def param_widget(prior, name):
    """The :class:`ParamWidget` of parameter ``name`` of the registry prior ``prior`` ("crp", ...)."""
    spec = PRIORS[prior]
    p = spec.param(name)
    low, high = (_accepted_end(prior, name, end, p.default, p.integer) for end in widget_bounds(p))
    step, span = 0.0, ()
    if name == spec.tuned:
        step = SLIDER_STEP
        span = (max(low, step), min(high, SLIDER_ROOM * max(spec.tune_grid)))
    default = int(p.default) if p.integer else float(p.default)
    return ParamWidget(name, p.label, p.help, default, low, high, p.integer, step, span)


def slider_span(widget, value):
    """The span of a tuned parameter's slider holding ``value``: its display span, widened to the value."""
    return min(widget.slider_span[0], value), max(widget.slider_span[1], value)


def prior_widgets(prior):
    """The :class:`ParamWidget` of every parameter of registry prior ``prior``, in the registry's order."""
    return [param_widget(prior, p.name) for p in PRIORS[prior].params]


def row_key(name, row):
    """The setting of parameter ``name`` in row ``row``: "alpha1", "r2", "k_max1"."""
    return f"{name}{row}"


def prior_key(row):
    return f"prior{row}"


def tuned_key(values, row):
    """The setting of the tuned parameter of row ``row``'s prior ("r2"), or None when that prior tunes none."""
    tuned = PRIORS[values[prior_key(row)]].tuned
    return None if tuned is None else row_key(tuned, row)


def _row_settings(param_names):
    """One :class:`~pcrp.basics.params.Choice` per row for its prior (from the registry), and one :class:`RowParam` per
    row and parameter name of any registry prior (checked against the row's prior's declaration by
    :func:`from_query`)."""
    row_defaults = _row_default_priors()
    out = [Choice(prior_key(row), f"prior of row {row}", row_defaults[row], tuple(PRIORS),
                  "The prior of this row (a name of the prior registry).") for row in ROWS]
    for row in ROWS:
        for name in param_names:
            own = PRIORS[row_defaults[row]]
            declaring = own if name in {p.name for p in own.params} else next(
                spec for spec in PRIORS.values() if name in {p.name for p in spec.params})
            out.append(RowParam(row_key(name, row), row, name, f"{name} of row {row}", declaring.param(name).default))
    return tuple(out)


def row_declaration(values, key):
    """The declaration (:class:`pcrp.basics.params.Param`, the registry's) of row setting ``key`` ("r2") for the prior
    its row picks in ``values``, or None when that prior has no such parameter."""
    row, name = _table("ROW_PARAMS")[key]
    spec = PRIORS[values.get(prior_key(row), _table("ROW_DEFAULT_PRIORS")[row])]
    return spec.param(name) if name in {p.name for p in spec.params} else None


def row_param_names(values, row):
    """The parameter names of the prior that row ``row`` picks in ``values``."""
    return [p.name for p in PRIORS[values[prior_key(row)]].params]


def row_params(values, row):
    """{parameter: value} of row ``row``'s prior, as :func:`pcrp.model.make_prior` takes them."""
    return {name: values[row_key(name, row)] for name in row_param_names(values, row)}


def active_rows(values):
    """The rows the page shows for ``values`` (the first ``rows`` of :data:`ROWS`)."""
    return ROWS[:values.get("rows", DEFAULT_ROW_COUNT)]


# The prior whose tuned parameter the shipped table holds (pcrp.analyses.cv cross-validates the pCRP's r).
SHIPPED_R_PRIOR = "pcrp"
# The built-in data sets' own settings in ``values``, under the names pcrp.data.load and pcrp.analyses.cv.shipped_r
# take ({} for Old Faithful: it has none the Explorer offers).
DATA_SETTINGS = {"sim1": {"n": "sim_n", "seed": "sim_seed"}, "sim2": {"n": "sim_n", "seed": "sim_seed"},
                 "mnist": {"digits": "digits", "n": "mnist_n", "embedding": "embedding", "dims": "dims"}}


def setting_value(values, name):
    """The value of setting ``name`` in ``values``, or its default where ``values`` leaves it out (an address's
    partial settings)."""
    if name in values:
        return values[name]
    setting = _table("BY_NAME")[name]
    return _live_default(setting) if isinstance(setting, Param) else \
        list(setting.default) if getattr(setting, "many", False) else setting.default


def data_settings(values):
    """The settings of the built-in data set that ``values`` choose, as pcrp.data.load and
    pcrp.analyses.cv.shipped_r take them: {"n", "seed"} for the simulations, {"digits", "n", "embedding", "dims"}
    for MNIST, {} for Old Faithful and a CSV."""
    name = setting_value(values, "data")
    out = {}
    for key, setting in DATA_SETTINGS.get(name, {}).items():
        value = setting_value(values, setting)
        out[key] = [int(v) for v in value] if isinstance(value, (list, tuple)) else value
    return out


@functools.lru_cache(maxsize=64)
def _shipped(name, covariance_type, settings):
    from ..analyses.cv import shipped_r

    return shipped_r(name, covariance_type, {k: list(v) if isinstance(v, tuple) else v for k, v in settings})


def shipped(values):
    """The :class:`pcrp.analyses.cv.ShippedR` of the data, data settings and clusters' covariance type that
    ``values`` choose: the r cross-validated for exactly these (``matched``), or, where none was, the r of the data
    set's default settings with the words that say so (a CSV: pcrp's default, said to be no choice for the data)."""
    name = setting_value(values, "data")
    settings = tuple((k, tuple(v) if isinstance(v, list) else v) for k, v in data_settings(values).items())
    return _shipped(None if name == "csv" else name, setting_value(values, "covariance"), settings)


def data_r(values):
    """The r the data that ``values`` choose call for: :func:`shipped`'s (for a built-in data set the r
    cross-validated for it at these data settings and this covariance type, shipped in pcrp/datasets/cv_r.json; where
    none was, another setting's, which the page says is not a choice for these settings; for a CSV pcrp's default).
    The default of every row's tuned parameter (:func:`param_default`)."""
    return float(shipped(values).r)


def param_default(values, row, name):
    """The default of parameter ``name`` of row ``row``'s prior in ``values``: the registry's, but for the pCRP's
    tuned parameter the data set's r (:func:`data_r`), within the widget's bounds."""
    spec = PRIORS[values.get(prior_key(row), _table("ROW_DEFAULT_PRIORS")[row])]
    if name != spec.tuned or spec.name != SHIPPED_R_PRIOR:  # the shipped r is the pCRP's; another prior's is its own
        return spec.param(name).default
    w = param_widget(spec.name, name)
    return min(max(data_r(values), w.low), w.high)


def reset_row(values, row):
    """Set row ``row``'s parameters to its (new) prior's defaults (its tuned one to the data set's r)."""
    for w in prior_widgets(values[prior_key(row)]):
        values[row_key(w.name, row)] = param_default(values, row, w.name)


# Keys of older addresses (when the rows were always CRP and pCRP): read as their row settings.
LEGACY_KEYS = {"crp_alpha": "alpha1", "pcrp_alpha": "alpha2", "r": "r2"}


# The Explorer's own settings that are not numbers, declared once (the numbers are LIVE_PARAMS', the rows' parameters
# the registry's).
EXPLORER_CHOICES = Declarations(
    "the Explorer",
    Choice("data", "data set", "old-faithful", SOURCES, "The data every row clusters."),
    Choice("digits", "MNIST digits", (1, 2, 3, 4), tuple(range(10)), "The MNIST digits drawn.", many=True),
    Choice("embedding", "MNIST embedding", "spectral", MNIST_EMBEDDINGS, "How MNIST's images are embedded."),
    Choice("covariance", "clusters' covariance", "full", tuple(COVARIANCE_TYPES),
           "Each cluster's covariance: full, diagonal or spherical (scikit-learn's covariance_type)."),
    Choice("split_merge", "split-merge moves", True, SWITCH, "Off: the paper's plain Gibbs sweeps."),
    Choice("start", "start", "kmeans:10", STARTS, "The first chain's start; the others start unlike it."),
    Choice("pace", "pace", "100 sweeps/s", tuple(PACES), "Sweeps per second the chains are held to."),
    Choice("present", "presentation mode", False, SWITCH, "The comparison alone, in large type, for a projector."),
)
# The settings that a run's config records, and under which name (in the order the page names them).
RUN_KEYS = {"covariance": "covariance_type", "sweeps": "iters", "burn_in": "burn_in", "thin": "requested_thin",
            "seed": "seed", "split_merge": "split_merge", "start": "init", "chains": "chains"}


def _live_default(param):
    """The live demo's default of a LIVE_PARAMS declaration: its preset's (LIVE_DEMO), else its own."""
    return LIVE_DEMO.get(param.name, param.default)


def _build_tables():
    """The settings made from the registry as it is now: PARAM_NAMES (every prior parameter name), SETTINGS (each a
    declaration, :class:`pcrp.basics.params.Param` or :class:`~pcrp.basics.params.Choice`, or a :class:`RowParam`
    that refers to the row's prior's), BY_NAME, RUN_SETTINGS (setting -> its key in a run's config) and ROW_PARAMS
    (setting -> (row, parameter))."""
    param_names = tuple(dict.fromkeys(p.name for spec in PRIORS.values() for p in spec.params))
    live, choices = LIVE_PARAMS, EXPLORER_CHOICES
    settings = (
        choices["data"], live["sim_n"], live["sim_seed"], choices["digits"], live["mnist_n"], choices["embedding"],
        live["dims"], choices["covariance"], live["rows"],
    ) + _row_settings(param_names) + (
        live["sweeps"], live["burn_in"], live["thin"], live["seed"], choices["split_merge"], choices["start"],
        live["chains"], choices["pace"], choices["present"],
    )
    return {
        "ROW_DEFAULT_PRIORS": _row_default_priors(),
        "PARAM_NAMES": param_names,
        "SETTINGS": settings,
        "BY_NAME": {s.name: s for s in settings},
        "RUN_SETTINGS": dict(RUN_KEYS),
        "ROW_PARAMS": {row_key(name, row): (row, name) for row in ROWS for name in param_names},
    }


_tables = (None, None)  # (the registry's version, the tables made from it)


def _table(name):
    """One of the tables of :func:`_build_tables`, remade when a prior has been registered or removed since."""
    global _tables
    version = PRIORS.version
    if _tables[0] != version:
        _tables = (version, _build_tables())
    return _tables[1][name]


def __getattr__(name):
    """ROW_DEFAULT_PRIORS, PARAM_NAMES, SETTINGS, BY_NAME, RUN_SETTINGS and ROW_PARAMS follow the registry (PEP
    562): a prior registered after this module was imported is offered in the rows."""
    if name in ("ROW_DEFAULT_PRIORS", "PARAM_NAMES", "SETTINGS", "BY_NAME", "RUN_SETTINGS", "ROW_PARAMS"):
        return _table(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def number_bounds(name):
    """(low, high) of the number box of declared live setting ``name``."""
    return widget_bounds(_table("BY_NAME")[name])


def defaults():
    """{name: default value} of every setting (fresh lists, safe to change): a live setting's the demo's
    (LIVE_DEMO), each row's tuned parameter at the default data set's r (:func:`param_default`)."""
    values = {s.name: list(s.default) if getattr(s, "many", False) else
              _live_default(s) if isinstance(s, Param) else s.default for s in _table("SETTINGS")}
    for row in ROWS:
        tuned = PRIORS[values[prior_key(row)]].tuned
        if tuned is not None:
            values[row_key(tuned, row)] = param_default(values, row, tuned)
    return values


def from_query(params):
    """Settings from a query string {key: value or [values]}: (values {name: value} for the keys that
    parse, problems [message] for those that do not). Unknown keys are ignored; the keys of older
    addresses (:data:`LEGACY_KEYS`) count when their new key is absent. A row whose prior is given takes
    that prior's defaults for the parameters the address leaves out; a parameter outside its prior's
    bounds is reported and left at its default. ``priors`` (registry names separated by commas) sets the rows and
    their priors at once, over ``rows`` and ``prior1`` ...; with more than two rows and no ``chains``, each row runs
    :func:`pcrp.app.live_params.default_chains`."""
    params = dict(params)
    for old, new in LEGACY_KEYS.items():
        if old in params and new not in params:
            params[new] = params[old]
    values, problems = {}, []
    if "priors" in params:
        try:
            for row, name in zip(ROWS, parse_priors(params.pop("priors"))):
                params[prior_key(row)] = name
                params["rows"] = row
        except ValueError as err:
            problems.append(str(err))
    for key, raw in params.items():
        setting = _table("BY_NAME").get(key)
        if setting is None:
            continue
        if isinstance(raw, (list, tuple)):
            raw = raw[-1] if raw else ""
        try:
            values[key] = setting.parse(raw, LIVE_PARAMS.owner)
        except ValueError as err:
            problems.append(str(err))
    if values.get("rows", DEFAULT_ROW_COUNT) > DEFAULT_ROW_COUNT and "chains" not in values:
        values["chains"] = default_chains(values["rows"])
    n_rows = values.get("rows", DEFAULT_ROW_COUNT)
    if values.get("chains", 1) > chains_cap(n_rows):
        problems.append(f"chains must be at most {chains_cap(n_rows)} with {n_rows} rows (one browser's share of "
                        "the server)")
        values["chains"] = default_chains(n_rows)
    for row in ROWS:
        spec = PRIORS[values.get(prior_key(row), _table("ROW_DEFAULT_PRIORS")[row])]
        for p in spec.params:
            key = row_key(p.name, row)
            if key not in values:
                if prior_key(row) in values:
                    values[key] = param_default(values, row, p.name)
                continue
            try:
                values[key] = p.check(values[key], f"the {spec.label} in row {row}", ModelError, name=key)
            except ModelError as err:
                problems.append(str(err).rstrip("."))
                values[key] = param_default(values, row, p.name)
    return values, problems


def parse_priors(text):
    """The registry names of an address's ``priors`` value ("crp,pcrp,py"), one per row; raises ValueError with a
    message for the user."""
    text = str(text[-1] if isinstance(text, (list, tuple)) and text else text).strip()
    names = [name.strip() for name in text.split(",")]
    if len(text) > MAX_VALUE_CHARS or not 1 <= len(names) <= len(ROWS) or not all(names):
        raise ValueError(f"priors must be 1 to {len(ROWS)} prior names separated by commas, such as "
                         f"{','.join(list(PRIORS)[:3])}")
    unknown = [name for name in names if name not in PRIORS]
    if unknown:
        raise ValueError(f"priors: unknown prior {unknown[0]!r}; the priors are {', '.join(PRIORS)}")
    return names


def check_rows(values):
    """The priors of the rows the page shows, built from ``values`` ({row: prior object}); raises
    pcrp.model.ModelError (whose message names the parameter and its bounds) for a value the prior refuses."""
    from ..model import make_prior

    out = {}
    for row in active_rows(values):
        try:
            out[row] = make_prior(values[prior_key(row)], **row_params(values, row))
        except ModelError as err:
            raise ModelError(f"Row {row}: {err}") from None
    return out


def _default_for(values, setting):
    """The value ``setting`` has when an address leaves it out, given the other ``values`` (a row's
    parameters default to those of the row's prior); None when it does not apply (another prior's)."""
    if setting.name == "chains":
        return default_chains(values.get("rows", DEFAULT_ROW_COUNT))
    if setting.name not in _table("ROW_PARAMS"):
        return _live_default(setting) if isinstance(setting, Param) else \
            list(setting.default) if setting.many else setting.default
    row, name = _table("ROW_PARAMS")[setting.name]
    prior = values.get(prior_key(row), _table("ROW_DEFAULT_PRIORS")[row])
    if name not in {p.name for p in PRIORS[prior].params}:
        return None
    return param_default(values, row, name)


def to_query(values):
    """The query string {key: text} of the settings that differ from their defaults (a row's parameters:
    those of its prior, when they differ from that prior's defaults, its tuned one from the data set's r:
    :func:`param_default`), for the rows the page shows. Other than two
    rows are written ``priors=crp,pcrp,py`` (their number and priors at once)."""
    shown = active_rows(values)
    hidden = {prior_key(row) for row in ROWS if row not in shown} | {
        key for key, (row, _) in _table("ROW_PARAMS").items() if row not in shown}
    out = {}
    if len(shown) != DEFAULT_ROW_COUNT:
        out["priors"] = ",".join(values.get(prior_key(row), _table("ROW_DEFAULT_PRIORS")[row]) for row in shown)
        hidden |= {"rows"} | {prior_key(row) for row in shown}
    for s in _table("SETTINGS"):
        if s.name not in values or s.name in hidden:
            continue
        default = _default_for(values, s)
        if default is None:
            continue
        if values[s.name] != default:
            out[s.name] = s.text(values[s.name])
    return out


def demo_link(page_url, values):
    """The address ``page_url`` (its query and fragment dropped) with ``values``' non-default settings as
    its query: a demo link carries settings only, never a run or data. A relative '?...' when the page's
    address is unknown."""
    from urllib.parse import urlencode, urlsplit, urlunsplit

    parts = urlsplit(page_url or "")
    path = parts.path or ("/" if parts.netloc else "")
    return urlunsplit((parts.scheme, parts.netloc, path, urlencode(to_query(values), safe=","), "")) or "?"

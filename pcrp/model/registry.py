"""The prior registry: every prior pcrp knows by name (:data:`PRIORS`), building one by name (:func:`make_prior`),
and adding a prior of your own, given as its tables (docs/adding_a_prior.md):

- :func:`register_gcrp`: a g-CRP (the paper's eq. 3): an existing table of n others weighs g(n), a new table the
  new-table weight (alpha, or a function of the K occupied tables);
- :func:`register_prior`: any Gibbs-type prior, as log W(n) and log V_N(K);
- an installed package: an entry point in the group ``pcrp.priors`` naming a function (or module) that calls
  these. The entry points are loaded once, when the registry is first read; a package that fails is left out
  with a :class:`PriorPluginWarning` naming it, never a traceback.

A registered prior is validated once, when it is registered (:func:`check_prior`), and then appears wherever a
built-in one does: ``pcrp run --prior NAME`` with its parameters as flags, ``PCRPMixture(prior=NAME)``, the
Explorer's rows, Rich get richer, compare, and the exact enumeration of :mod:`pcrp.model.exact`.
"""

import keyword
import re
import threading
import warnings
from collections.abc import MutableMapping
from dataclasses import field, make_dataclass
from types import SimpleNamespace

import numpy as np

from ..basics.errors import ModelError
from .exact import log_eppf
from .gibbs_prior import SPECS, GibbsPrior, PriorSpec, _ints, log_weight_table, prior_tables
from .niw import NIW_PARAMS
from ..basics.params import Param
from .priors import BUILTIN_PRIORS

ENTRY_POINT_GROUP = "pcrp.priors"
# A normalised prior's EPPF must sum to 1 over all partitions of N items for N = 1..EPPF_CHECK_N (Bell(6) = 203
# partitions): its V_N carries the normaliser, a function of N, so a wrong one shows at small N already.
EPPF_CHECK_N = 6
EPPF_TOLERANCE = 1e-9
# The tables of a registered prior are checked for N = 1..TABLE_CHECK_N items (and once at N = 200).
TABLE_CHECK_N = 12
BUILT_IN = "pcrp (built in)"  # the source of the built-in priors
_NAME = re.compile(r"[a-z][a-z0-9_]*\Z")
# A parameter becomes an attribute of the prior and a command-line flag: these names are taken.
_TAKEN = {"name", "spec", "normalised", "max_blocks"} | {n for n in dir(GibbsPrior) if not n.startswith("__")}


class PriorPluginWarning(UserWarning):
    """An installed package's ``pcrp.priors`` entry point failed to load or registered a bad prior."""


class PriorRegistry(MutableMapping):
    """{name: :class:`PriorSpec`} of every prior, built-in first, in the order registered.

    Add priors with :func:`register_prior` / :func:`register_gcrp` (validated), remove them with
    :func:`unregister_prior`. Setting or deleting an entry directly (``monkeypatch.setitem(PRIORS, name, spec)``
    in a test) is not validated. The first read loads the installed packages' ``pcrp.priors`` entry points (once).
    """

    def __init__(self, specs):
        self._specs = SPECS  # the storage pcrp.model.gibbs_prior keeps, where each prior finds its entry
        self._sources = {}
        self._lock = threading.RLock()  # re-entrant: a package's register call reads the registry while it loads
        self._started = False  # discovery began (a read during it, from the loading package, returns at once)
        self._done = False  # discovery finished: reads need no lock
        self._loading = None  # the package whose entry point is loading now
        self.failures = []  # one sentence per package that failed to add its priors
        self.version = 0  # counts the changes: something made from the registry is stale when it has moved on
        for spec in specs:
            self._add(spec, BUILT_IN)

    def __getitem__(self, name):
        self.discover()
        return self._specs[name]

    def __iter__(self):
        self.discover()
        return iter(list(self._specs))

    def __len__(self):
        self.discover()
        return len(self._specs)

    def __contains__(self, name):
        self.discover()
        return name in self._specs

    def __setitem__(self, name, spec):
        if not isinstance(spec, PriorSpec) or spec.name != name:
            raise ModelError(f"PRIORS[{name!r}] takes the PriorSpec named {name!r} (got {spec!r}).")
        self._add(spec, "set directly")

    def __delitem__(self, name):
        self.discover()
        self._remove(name)

    def __repr__(self):
        return f"PriorRegistry({', '.join(self)})"

    def source(self, name):
        """Who registered prior ``name``: "pcrp (built in)", "run time", or the package and its entry point."""
        self.discover()
        return self._sources[name]

    def builtin(self, name):
        """Whether ``name`` is one of pcrp's own priors (they cannot be replaced or removed)."""
        return name in self._specs and self._sources[name] == BUILT_IN

    def discover(self, again=False):
        """Load the ``pcrp.priors`` entry points of the installed packages (once; ``again``: load them anew, for
        tests). A package that fails adds nothing and is named in a :class:`PriorPluginWarning`."""
        if self._done and not again:
            return
        with self._lock:  # another thread's first read waits here until the packages are loaded
            if self._started and not again:
                return
            self._started = True
            try:
                from importlib.metadata import entry_points

                found = list(entry_points(group=ENTRY_POINT_GROUP))
            except Exception as error:  # a broken installation must not stop pcrp
                self._fail(f"pcrp could not list the installed packages' priors (entry-point group "
                           f"{ENTRY_POINT_GROUP!r}): {type(error).__name__}: {error}")
                found = []
            for entry in found:
                self._load(entry)
            self._done = True

    def _load(self, entry):
        dist = getattr(entry, "dist", None)
        package = f"{dist.name} {dist.version}" if dist is not None else "an unnamed package"
        where = f"the package {package} (entry point {entry.name} = {entry.value} in group {ENTRY_POINT_GROUP!r})"
        before = set(self._specs)
        self._loading = where
        try:
            target = entry.load()
            if callable(target):
                target()
            if set(self._specs) == before:
                raise ModelError("it registered no prior (its function or module should call pcrp.register_gcrp "
                                 "or pcrp.register_prior).")
        except Exception as error:
            for name in set(self._specs) - before:
                self._remove(name)
            detail = str(error).rstrip()
            detail += "" if detail.endswith((".", "?", "!")) else "."
            self._fail(f"{where} did not add its priors: {type(error).__name__}: {detail} Its priors are left out; "
                       "fix or uninstall the package.")
        finally:
            self._loading = None

    def _fail(self, message):
        self.failures.append(message)
        warnings.warn(message, PriorPluginWarning, stacklevel=4)

    def _add(self, spec, source=None):
        with self._lock:
            self._specs[spec.name] = spec
            self.version += 1
            self._sources[spec.name] = source or self._loading or "run time"

    def _remove(self, name):
        with self._lock:
            del self._specs[name]
            del self._sources[name]
            self.version += 1


PRIORS = PriorRegistry(BUILTIN_PRIORS)


def make_prior(name, **params):
    """Build a prior from the registry: ``make_prior("py", alpha=1, sigma=0.3)``; missing parameters take their
    registry defaults, and a value of None means "not given".

    A parameter the prior does not have is a ModelError naming the prior's parameters.
    """
    spec = PRIORS.get(name)
    if spec is None:
        failed = "".join(f" ({failure})" for failure in PRIORS.failures)
        raise ModelError(f"Unknown prior {name!r}; choose one of: {', '.join(PRIORS)}.{failed}")
    own = {p.name for p in spec.params}
    kwargs = {}
    for key, value in params.items():
        if value is None:
            continue
        if key in own:
            kwargs[key] = value
            continue
        elsewhere = [s for s in PRIORS.values() if key in {p.name for p in s.params}]
        users = f" ({key} belongs to {', '.join(s.name for s in elsewhere)})" if elsewhere else ""
        have = ", ".join(f"{p.name} in {p.interval()}" for p in spec.params)
        raise ModelError(f"The {spec.label} prior ({name}) has no parameter {key}{users}; its parameters are: "
                         f"{have}. Leave {key} out.")
    return spec.cls(**kwargs)


# ---------------------------------------------------------------------------------------------------------------
# Priors given as tables. The user's functions take the prior itself as ``p`` (its parameters are attributes:
# p.theta) and arrays of sizes or counts; they return one log value per entry (a scalar is broadcast).
# ---------------------------------------------------------------------------------------------------------------


def _values(function, x, prior, *before):
    """function(*before, x, prior) as a float array of x's shape."""
    return np.array(np.broadcast_to(np.asarray(function(*before, x, prior), dtype=float), np.shape(x)))


class GCRPPrior(GibbsPrior):
    """A g-CRP (the paper's eq. 3) from its two functions: an existing table of n weighs g(n), a new table
    new(K) when K tables are occupied. Then W(n) = g(1) ... g(n - 1) (W(1) = 1) and V_N(K) = new(1) ... new(K - 1)
    up to a normaliser that is not known (so its log joint is up to a constant, as the pCRP's)."""

    _fns = None  # SimpleNamespace(log_g, log_new, max_blocks), set per registered class

    def log_weight(self, n):
        return _values(self._fns.log_g, _ints(n), self)

    def log_w1(self):
        return 0.0

    def log_v(self, N, K):
        K = _ints(K)
        steps = _values(self._fns.log_new, np.arange(1, int(K.max(initial=1))), self)
        return np.concatenate(([-np.inf, 0.0], np.cumsum(steps)))[K]

    def log_new_weight(self, N, K):
        K = _ints(K)
        return np.where(K == 0, 0.0, _values(self._fns.log_new, np.maximum(K, 1), self))

    @property
    def max_blocks(self):
        return None if self._fns.max_blocks is None else int(self._fns.max_blocks(self))


class TablePrior(GibbsPrior):
    """A Gibbs-type prior from its tables log W(n) and log V_N(K) (and, optionally, the new-block weight
    log W(1) V_N(K + 1) / V_N(K) in closed form; else it is the ratio of the V_N table)."""

    _fns = None  # SimpleNamespace(log_w, log_v, log_new, max_blocks), set per registered class

    def log_w(self, n):
        return _values(self._fns.log_w, _ints(n), self)

    def log_w1(self):
        return float(self.log_w(np.array([1]))[0])

    def log_weight(self, n):
        n = _ints(n)
        return self.log_w(n + 1) - self.log_w(n)

    def log_v(self, N, K):
        return _values(self._fns.log_v, _ints(K), self, int(N))

    def log_new_weight(self, N, K):
        if self._fns.log_new is None:
            return super().log_new_weight(N, K)
        K = _ints(K)
        return np.where(K == 0, 0.0, _values(self._fns.log_new, np.maximum(K, 1), self, int(N)))

    @property
    def max_blocks(self):
        return None if self._fns.max_blocks is None else int(self._fns.max_blocks(self))


def _rebuild(name, values):
    """Unpickle a registered prior (a worker that has the prior registered, e.g. by the package's entry point)."""
    return make_prior(name, **values)


def _post_init(self):
    self._validate()


def _reduce(self):
    return _rebuild, (self.name, {p.name: getattr(self, p.name) for p in self.spec.params})


def _prior_class(name, params, base, fns):
    """A frozen dataclass over ``base`` with one field per parameter (its default) and ``name``."""
    fields = [(p.name, int if p.integer else float, field(default=p.default)) for p in params]
    fields.append(("name", str, field(default=name, init=False, repr=False)))
    class_name = "".join(part.capitalize() for part in name.split("_")) or "Prior"
    cls = make_dataclass(class_name, fields, bases=(base,), frozen=True,
                         namespace={"__post_init__": _post_init, "__reduce__": _reduce, "_fns": fns,
                                    "__doc__": f"The registered prior {name!r} ({base.__name__})."})
    cls.__module__ = __name__
    return cls


def register_gcrp(name, label, params=(), *, log_g, log_new, help="", max_blocks=None, tuned=None, tune_grid=(),
                  replace=False):
    """Register a g-CRP (the paper's eq. 3) and return its :class:`PriorSpec`.

    name: as typed (``pcrp run --prior NAME``): lower case letters, digits and _. label: as shown ("shifted CRP").
    params: its parameters, each a :class:`pcrp.basics.params.Param` (name, label, default, bounds, help); each becomes
        an attribute of the prior (``p.theta``), a keyword of :func:`make_prior` and a flag of ``pcrp run``.
    log_g(n, p): log g(n), the weight of an existing table of n others, for an int array n >= 1 (the CRP's
        ``np.log(n)``, the pCRP's ``p.r * np.log(n)``).
    log_new(K, p): log of the new-table weight when K >= 1 tables are occupied (an int array), e.g.
        ``np.log(p.alpha)``; -inf where K + 1 tables are impossible (then give ``max_blocks``).
    help: one line on what the prior does. max_blocks(p): the largest number of tables, when there is one.
    tuned, tune_grid: the parameter cross validation and the merge path tune, and the values they try.
    replace: replace a prior registered earlier under ``name`` (never a built-in one).

    The prior is unnormalised (its normaliser over partitions is not known in general): its log joint is
    known up to a constant, as the pCRP's.
    """
    fns = SimpleNamespace(log_g=log_g, log_new=log_new, max_blocks=max_blocks)
    for what, function in (("log_g", log_g), ("log_new", log_new)):
        _check_callable(name, what, function)
    return _register(name, label, params, GCRPPrior, fns, help, False, tuned, tune_grid, False, replace)


def register_prior(name, label, params=(), *, log_w, log_v, log_new=None, help="", normalised=False,
                   max_blocks=None, tuned=None, tune_grid=(), reference=False, replace=False):
    """Register a Gibbs-type prior, p(partition) = V_N(K) prod_k W(n_k), from its tables; return its
    :class:`PriorSpec`.

    log_w(n, p): log W(n) for an int array of block sizes n >= 1 (finite: every block size is possible).
    log_v(N, K, p): log V_N(K) for N items and an int array K >= 1 (-inf where K blocks are impossible).
    log_new(N, K, p): optional, log W(1) V_N(K + 1) / V_N(K) in closed form (checked against log_v).
    normalised: True when V_N is exact, so that the EPPF sums to 1 (checked for N <= 6) and the log joint is the
        normalised log p(z, X). reference: the prior fits are compared with to flag over-clustering (one prior
        holds it: the CRP). The rest as for :func:`register_gcrp`.
    """
    fns = SimpleNamespace(log_w=log_w, log_v=log_v, log_new=log_new, max_blocks=max_blocks)
    for what, function in (("log_w", log_w), ("log_v", log_v)):
        _check_callable(name, what, function)
    if log_new is not None:
        _check_callable(name, "log_new", log_new)
    return _register(name, label, params, TablePrior, fns, help, normalised, tuned, tune_grid, reference, replace)


def unregister_prior(name):
    """Remove the prior registered as ``name`` (built-in priors stay)."""
    if name not in PRIORS:
        raise ModelError(f"No prior {name!r} is registered; the registered priors are: {', '.join(PRIORS)}.")
    if PRIORS.builtin(name):
        raise ModelError(f"{name!r} is a built-in prior of pcrp and cannot be removed.")
    PRIORS._remove(name)


def _check_callable(name, what, function):
    if not callable(function):
        raise ModelError(f"prior {name!r}: {what} must be a function (got {function!r}).")


def _register(name, label, params, base, fns, help, normalised, tuned, tune_grid, reference, replace):
    with PRIORS._lock:
        params = _check_declaration(name, label, params, tuned, tune_grid, reference, replace)
        cls = _prior_class(name, params, base, fns)
        spec = PriorSpec(name, label, cls, params, help or label, bool(normalised), tuned,
                         tuple(float(v) for v in tune_grid), bool(reference))
        previous = SPECS.get(name)
        SPECS[name] = spec  # for the check: a prior finds its parameters in its entry
        try:
            check_prior(spec)
        finally:
            if previous is None:
                del SPECS[name]
            else:
                SPECS[name] = previous
        PRIORS._add(spec)
        return spec


def _check_declaration(name, label, params, tuned, tune_grid, reference, replace):
    """The declared parameters as a tuple, else a ModelError saying what is wrong with the registration."""
    if not isinstance(name, str) or not _NAME.match(name):
        raise ModelError(f"A prior's name is typed on the command line: lower case letters, digits and _, starting "
                         f"with a letter (got {name!r}).")
    if name in PRIORS:
        if PRIORS.builtin(name):
            raise ModelError(f"{name!r} is a built-in prior of pcrp; register yours under another name.")
        if not replace:
            raise ModelError(f"A prior {name!r} is already registered (by {PRIORS.source(name)}); choose another "
                             "name, or pass replace=True to replace it.")
    if not isinstance(label, str) or not label.strip():
        raise ModelError(f"prior {name!r}: label must be the name shown to people, e.g. 'shifted CRP' "
                         f"(got {label!r}).")
    params = (params,) if isinstance(params, Param) else tuple(params)
    seen = set()
    niw = {n.lower() for n in NIW_PARAMS}
    for p in params:
        if not isinstance(p, Param):
            raise ModelError(f"prior {name!r}: each parameter must be declared as pcrp.basics.params.Param(name, label, "
                             f"default, low, high, low_closed, high_closed, help) (got {p!r}).")
        if not p.name.isidentifier() or keyword.iskeyword(p.name) or p.name.startswith("_") or p.name in _TAKEN:
            raise ModelError(f"prior {name!r}: parameter name {p.name!r} is not usable: it must be a Python name "
                             f"not starting with _ and not one of {', '.join(sorted(_TAKEN))}.")
        if p.name.lower() in niw:
            raise ModelError(f"prior {name!r}: parameter name {p.name!r} is the NIW's ({', '.join(NIW_PARAMS)}); "
                             "choose another name.")
        if p.name in seen:
            raise ModelError(f"prior {name!r}: two parameters are called {p.name!r}.")
        seen.add(p.name)
        if p.default is None:
            raise ModelError(f"prior {name!r}: parameter {p.name} needs a default.")
        p.check(p.default, f"the prior {name!r} (its declared default)", ModelError)
    if tuned is not None and tuned not in seen:
        raise ModelError(f"prior {name!r}: tuned={tuned!r} is not one of its parameters ({', '.join(seen)}).")
    if tuned is not None and not tune_grid:
        raise ModelError(f"prior {name!r}: a tuned parameter needs a tune_grid (the values to try).")
    if tuned is None and tune_grid:
        raise ModelError(f"prior {name!r}: a tune_grid needs tuned=, the parameter it tunes.")
    for value in tune_grid:
        next(p for p in params if p.name == tuned).check(value, f"the prior {name!r} (its tune_grid)", ModelError)
    holder = [s.name for s in PRIORS.values() if s.reference and s.name != name]
    if reference and holder:
        raise ModelError(f"prior {name!r}: only one prior is the over-clustering reference, and {holder[0]} is; "
                         "leave reference out.")
    return params


def check_prior(spec):
    """Check a prior's tables once, at its defaults (and its tune_grid): a ModelError naming the problem.

    For N = 1..12 items (and N = 200): log W(n) finite for every block size n (W(n) > 0), log V_N(1) finite,
    log V_N(K) and the new-block weights never NaN or +inf (-inf: K blocks impossible). A closed-form new-block
    weight must equal the ratio of the V_N table. A normalised prior's EPPF must sum to 1 over all partitions
    of N <= 6 items; for an unnormalised one (a g-CRP, the pCRP) V_N is known up to a constant, so the check
    does not apply.
    """
    priors = [spec.cls()]
    if spec.tuned is not None:
        priors += [spec.cls(**{spec.tuned: value}) for value in spec.tune_grid]
    with np.errstate(all="ignore"):  # a log of 0 or a negative number is reported below, in words
        for prior in priors:
            _check_tables(spec, prior)
        if spec.normalised:
            _check_eppf(spec, priors[0])


def _items(N):
    return "item" if N == 1 else "items"


def _first(bad):
    """The first index where the boolean array ``bad`` holds."""
    return int(np.flatnonzero(bad)[0])


def _check_tables(spec, prior):
    at = f"prior {spec.name!r} at {prior.label()}"
    for N in (*range(1, TABLE_CHECK_N + 1), 200):
        try:
            log_g = log_weight_table(prior, N)  # log W(n + 1) / W(n), n = 1..N+1 (entry 0 unused)
            log_W, log_V = prior.tables(N)  # indexed by n and K (entry 0 unused)
            log_new, _ = prior_tables(prior, N)  # indexed by K = 0..N+1
        except ModelError:
            raise
        except Exception as error:
            raise ModelError(f"{at}: its functions failed for N = {N} {_items(N)}: {type(error).__name__}: {error} "
                             "(each takes an int array and the prior p, and returns one log value per entry).") \
                from None
        given_g = isinstance(prior, GCRPPrior)  # say what was wrong in the terms the prior was given in
        pair = (("log W(n)", log_W), ("log g(n) = log W(n + 1) / W(n)", log_g))
        for what, table in pair[::-1] if given_g else pair:
            if not np.all(np.isfinite(table[1:])):
                n = 1 + _first(~np.isfinite(table[1:]))
                raise ModelError(f"{at}: {what} must be finite for every block size n >= 1 (it is {table[n]} at "
                                 f"n = {n}).")
        for what, table in (("log V_N(K)", log_V), ("the new-block weight (K tables occupied)", log_new)):
            if np.any(np.isnan(table[1:]) | (table[1:] == np.inf)):
                K = 1 + _first(np.isnan(table[1:]) | (table[1:] == np.inf))
                raise ModelError(f"{at}: {what} is {table[K]} at N = {N}, K = {K}; it must be a number, or -inf "
                                 "where K blocks are impossible.")
        if not np.isfinite(log_V[1]):
            raise ModelError(f"{at}: log V_N(1) must be finite (one block must be possible; it is {log_V[1]} at "
                             f"N = {N}).")
        with np.errstate(invalid="ignore"):
            ratio = prior.log_w1() + log_V[2:] - log_V[1:-1]  # K = 1..N
        differ = np.isfinite(ratio) & ~np.isclose(log_new[1:-1], ratio, rtol=1e-8, atol=1e-8)
        if np.any(differ):
            K = 1 + _first(differ)
            raise ModelError(f"{at}: the new-block weight log_new = {log_new[K]:.10g} disagrees with log W(1) + "
                             f"log V_N(K + 1) - log V_N(K) = {ratio[K - 1]:.10g} at N = {N}, K = {K}; fix one of them.")


def _check_eppf(spec, prior):
    for N in range(1, EPPF_CHECK_N + 1):
        total = float(np.exp(log_eppf(prior, N)[1]).sum())
        if not abs(total - 1.0) <= EPPF_TOLERANCE:
            raise ModelError(f"prior {spec.name!r} at {prior.label()} is registered as normalised, but its EPPF "
                             f"V_N(K) prod_k W(n_k) sums to {total:.12g} over the partitions of N = {N} {_items(N)}, "
                             "not 1. Fix log_v's normaliser, or register it with normalised=False.")


def prior_of(config):
    """The seating prior a run's configuration records: :func:`pcrp.model.make_prior` of its ``prior`` entry and
    that prior's parameters. A configuration without a ``prior`` entry is a ModelError saying so."""
    name = config.get("prior")
    if not name:
        raise ModelError("This run's configuration records no prior (no 'prior' entry), so its seating rule is "
                         "unknown: run it again with this version of pcrp, which records it.")
    spec = PRIORS.get(name)
    if spec is None:
        return make_prior(name)  # the ModelError naming the registered priors
    return make_prior(name, **{p.name: config[p.name] for p in spec.params if config.get(p.name) is not None})

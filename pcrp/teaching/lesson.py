"""The guided lesson: seven steps a teacher runs in about five minutes, each with one live element and one sentence.

Every number a step says is computed here when the step is shown (seating simulations, a CRP and a pCRP chain on
Old Faithful, the exact merge path of Sim 1), or read from a shipped result file that names the command that made
it (pcrp/datasets/cv_r.json through :func:`pcrp.analyses.cv.builtin_r_table`, docs/compare/compare.json through
:func:`pcrp.experiments.compare.read_report`): no figure is typed into a sentence. Each step function returns plain data (a
frozen dataclass) and :func:`sentence` turns it into the one sentence to say; the page (app_pages/lesson.py)
arranges them and the figures are in :mod:`pcrp.plots.lesson`. Each step also names the Explorer's settings that
show the same thing live (:func:`explorer_values`, written as an address by
:func:`pcrp.app.explorer_settings.demo_link`).

The CRP is the registry's over-clustering reference (``PriorSpec.reference``) and the pCRP its prior with a tuned
power (``PriorSpec.tuned``); no prior is picked by its name.
"""

from dataclasses import dataclass, field
from urllib.parse import urlsplit, urlunsplit

import numpy as np

from ..basics.errors import SettingError
from ..basics.params import Declarations, Param


class LessonError(SettingError):
    """A bad lesson setting; the message names it and its bounds."""


LESSON_PARAMS = Declarations(
    "the lesson",
    Param("customers", "customers seated", 20, 1, 300, True, True,
          "Customers in the first step's restaurant (the page's button seats ten more).", integer=True),
    Param("growth_customers", "customers per simulated seating", 500, 10, 2000, True, True,
          "N of the second step's seatings (about 0.3 s per prior for 40 seatings of 500 on one core).",
          integer=True),
    Param("seatings", "simulated seatings per prior", 40, 2, 200, True, True,
          "Seatings averaged in the second step's E[K_N] curves.", integer=True),
    Param("sweeps", "sweeps per chain", 600, 50, 5000, True, True,
          "Sweeps of the CRP and pCRP chains on Old Faithful (steps 3 and 4; about 0.1 s each once compiled).",
          integer=True),
    Param("burn_in", "burn-in sweeps", 100, 0, 4999, True, True,
          "Sweeps left out of the chains' mean K (steps 3 and 4).", integer=True),
    Param("seed", "seed", 0, 0, 10_000, True, True, "The random numbers of every live step.", integer=True),
    error=LessonError,
)

OLD_FAITHFUL = "old-faithful"  # the built-in data set of steps 3, 4 and 6 (pcrp.data.load, cv_r.json)
SIM1 = "sim1"  # the built-in simulation of step 5 (three poorly separated 1-D Gaussians, true labels known)
PATH_SIZES = (300, 2000)  # the paper's two N of Sim 1: the merge path's threshold at each (step 5)
PATH_CHAINS, PATH_SWEEPS, PATH_BURN_IN, PATH_THIN = 2, 600, 200, 5  # the CRP fit the merge path starts from
FADE_TOLERANCE = 0.05  # step 5 says r* "does not fade" unless the largest N's is lower than the smallest N's by more
CV_FILE = "pcrp/datasets/cv_r.json"  # where step 6's numbers come from (pcrp.analyses.cv.BUILTIN_R_FILE, shipped)


@dataclass(frozen=True)
class Step:
    """One step of the lesson: its number (1-based), a short key and the title shown."""

    number: int
    key: str
    title: str


STEPS = (
    Step(1, "restaurant", "The restaurant: the rich get richer"),
    Step(2, "growth", "How many tables? The CRP keeps opening them"),
    Step(3, "crp", "The CRP over-clusters Old Faithful"),
    Step(4, "pcrp", "The pCRP's power empties the tiny tables"),
    Step(5, "threshold", "Too large an r merges real clusters"),
    Step(6, "choose", "How r is chosen: cross validation"),
    Step(7, "compare", "Compared with what?"),
)
MAX_STEP_CHARS = 8


def parse_step(value):
    """(step number 1..len(STEPS), problem) from the address's ``step`` value (a string, a list of them from a
    repeated key, or None). A missing value is step 1 with no problem; anything that is not a whole number in range
    is step 1 with a sentence saying what was ignored (the value is cut to a few characters and never echoed as
    markup by the page: it passes through :func:`app_pages.shared.inert`)."""
    if isinstance(value, (list, tuple)):
        value = value[-1] if value else None
    if value is None or str(value).strip() == "":
        return 1, None
    text = str(value).strip()
    shown = text if len(text) <= MAX_STEP_CHARS else text[:MAX_STEP_CHARS] + "…"
    if len(text) > MAX_STEP_CHARS or not text.isdigit() or not 1 <= int(text) <= len(STEPS):
        return 1, f"step must be a whole number from 1 to {len(STEPS)} (got {shown}); showing step 1"
    return int(text), None


def settings(**values):
    """The lesson's settings: the given ones checked against :data:`LESSON_PARAMS` (None: the declared default)."""
    return LESSON_PARAMS.resolve(**values)


# ----------------------------------------------------------------------------- the two priors of the lesson
def reference_prior():
    """The registry's over-clustering reference (the CRP) at its declared defaults."""
    from ..model import PRIORS, make_prior

    return make_prior(next(name for name, spec in PRIORS.items() if spec.reference))


def tuned_name():
    """The registry name of the prior whose power cross validation tunes (the pCRP)."""
    from ..model import PRIORS

    return next(name for name, spec in PRIORS.items() if spec.tuned)


def tuned_prior(value):
    """The pCRP with its tuned parameter (r) at ``value``, the others at their declared defaults."""
    from ..model import PRIORS, make_prior

    name = tuned_name()
    return make_prior(name, **{PRIORS[name].tuned: value})


def shipped_r(name=OLD_FAITHFUL):
    """(r, cross validation's proposal, entry) of built-in data set ``name`` from the shipped cv_r.json (its entry
    names the command that made it)."""
    from ..analyses.cv import builtin_r_table

    entry = builtin_r_table()[name]
    return float(entry["r"]), float(entry["cv_r"]), entry


# ----------------------------------------------------------------------------- step 1: the restaurant
@dataclass(frozen=True)
class Restaurant:
    """The CRP's restaurant after ``customers`` customers: sizes (K,) per table in opening order, probs (K + 1,)
    of the next customer at each table and, last, at a new one."""

    label: str
    alpha: float
    customers: int
    sizes: np.ndarray
    probs: np.ndarray

    @property
    def tables(self):
        return int(self.sizes.size)

    @property
    def largest_share(self):
        return float(self.sizes.max() / self.sizes.sum())

    @property
    def p_largest(self):
        """The next customer's probability of joining the largest table."""
        return float(self.probs[int(np.argmax(self.sizes))])

    @property
    def p_new(self):
        return float(self.probs[-1])


def restaurant(customers=None, seed=None):
    """Step 1: the CRP seats ``customers`` one by one with uniforms from ``seed`` (:func:`pcrp.model.seating.seat_prior`)."""
    from ..model.seating import seat_prior, seating_probabilities_prior

    s = settings(customers=customers, seed=seed)
    prior = reference_prior()
    labels = seat_prior(prior, s["customers"], np.random.default_rng(s["seed"]).random(s["customers"]))
    sizes = np.bincount(labels)
    return Restaurant(prior.spec.label, float(prior.alpha), s["customers"], sizes,
                      seating_probabilities_prior(prior, sizes))


# ----------------------------------------------------------------------------- step 2: growth of K
@dataclass(frozen=True)
class Growth:
    """Simulated K_N, N = 1..n, for the CRP and the pCRP (at Old Faithful's shipped r): mean and standard error
    (n,) over ``seatings`` seatings each, and the CRP's exact E[K_N] (n,)."""

    n: int
    seatings: int
    r: float
    labels: tuple
    means: tuple
    ses: tuple
    exact: np.ndarray
    alpha: float

    @property
    def half(self):
        return self.n // 2

    def gain(self, i):
        """Tables opened on average by prior ``i`` (0: CRP, 1: pCRP) between N = n / 2 and N = n."""
        return float(self.means[i][-1] - self.means[i][self.half - 1])

    @property
    def alpha_log_n(self):
        return float(self.alpha * np.log(self.n))


def k_growth(growth_customers=None, seatings=None, seed=None):
    """Step 2: E[K_N] measured by seating simulations (:func:`pcrp.model.seating.simulate_k_growth_prior`)."""
    from ..model.seating import growth, simulate_k_growth_prior

    s = settings(growth_customers=growth_customers, seatings=seatings, seed=seed)
    n, runs = s["growth_customers"], s["seatings"]
    r, _, _ = shipped_r()
    priors = (reference_prior(), tuned_prior(r))
    sims = [simulate_k_growth_prior(p, n, runs, seed=s["seed"]) for p in priors]
    return Growth(n, runs, r, tuple(p.spec.label for p in priors), tuple(k.mean(axis=0) for k in sims),
                  tuple(k.std(axis=0, ddof=1) / np.sqrt(runs) for k in sims), growth(priors[0], n).exact,
                  float(priors[0].alpha))


# ----------------------------------------------------------------------------- steps 3 and 4: Old Faithful
@dataclass(frozen=True)
class ChainView:
    """One chain on Old Faithful: its prior's label, K after each sweep (sweeps,), the last draw's labels (N,) and
    mean K after burn-in."""

    label: str
    K: np.ndarray
    last: np.ndarray
    burn_in: int

    @property
    def mean_k(self):
        return float(self.K[self.burn_in:].mean())

    @property
    def sizes(self):
        """Cluster sizes of the last draw, largest first."""
        return sorted((int(c) for c in np.bincount(self.last) if c), reverse=True)


@dataclass(frozen=True)
class OldFaithful:
    """Steps 3 and 4: a CRP and a pCRP chain (same data, seed, start and sweeps) on the standardised Old Faithful
    X (N, 2), the pCRP at the shipped r."""

    X: np.ndarray
    columns: tuple
    sweeps: int
    seed: int
    r: float
    crp: ChainView
    pcrp: ChainView


def old_faithful(sweeps=None, burn_in=None, seed=None):
    """Steps 3 and 4: one chain of each prior (:func:`pcrp.runs.chains.run_chain`, the Explorer's default start)."""
    from ..runs.chains import run_chain
    from ..data import load
    from ..model import resolve_niw

    s = settings(sweeps=sweeps, burn_in=burn_in, seed=seed)
    if s["burn_in"] >= s["sweeps"]:
        raise LessonError(f"burn_in ({s['burn_in']}) must be smaller than sweeps ({s['sweeps']}).")
    ds = load(OLD_FAITHFUL)
    niw = resolve_niw(ds.X)
    r, _, _ = shipped_r()
    views = []
    for prior in (reference_prior(), tuned_prior(r)):
        chain = run_chain(ds.X, prior, niw, iters=s["sweeps"], burn_in=s["sweeps"] - 1, seed=s["seed"])
        views.append(ChainView(prior.spec.label, np.asarray(chain.K), np.asarray(chain.labels[-1], dtype=np.int64),
                               s["burn_in"]))
    return OldFaithful(ds.X, tuple(ds.columns), s["sweeps"], s["seed"], r, *views)


def matched_colours(view, reference):
    """(N,) colour index per point of ``view``'s last draw, its clusters matched to those of ``reference`` (the
    Explorer's rule, :func:`pcrp.app.live_view.matched_colours`: same colour, same cluster; tiny clusters -1)."""
    from ..app.live_view import matched_colours as match, reference_colours

    return match(view.last, reference_colours(reference.last))


# ----------------------------------------------------------------------------- step 5: the merge threshold
@dataclass(frozen=True)
class Threshold:
    """Sim 1's merge path at each N of PATH_SIZES: ``paths`` {N: pcrp.analyses.path.MergePath} from a CRP fit, and
    ``r_star`` {N: the r above which the pCRP prefers two real clusters (each at least ``share`` of the points)
    merged}."""

    paths: dict
    r_star: dict
    share: float
    above: float = field(default=float("nan"))  # the first r of the tuned grid above every r*: shown in the Explorer
    r_axis: np.ndarray = field(default_factory=lambda: np.zeros(0))  # (R,) powers the figure draws

    def kept(self):
        """{N: (R,) clusters the pCRP prefers on the path at each r of ``r_axis``}."""
        return {n: np.array([p.n_clusters_at(r) for r in self.r_axis]) for n, p in self.paths.items()}


def real_merge_r(path, share):
    """The power at which the path first merges two clusters that each hold at least ``share`` of the points
    (pcrp.analyses.collapse's "kept" clusters): its effective r* (:meth:`pcrp.analyses.path.MergePath.effective_r`); inf if none."""
    n = path.partition.size
    for merge, r in zip(path.merges, path.effective_r()):
        if min(merge.sizes) >= max(1.0, share * n):
            return float(r)
    return float("inf")


def merge_threshold(seed=None):
    """Step 5: the exact merge path of Sim 1 (:func:`pcrp.analyses.path.merge_path`) from a CRP fit's point estimate
    (:func:`pcrp.analyses.path.crp_start`) at each N of PATH_SIZES."""
    from ..analyses.collapse import MIN_SHARE
    from ..data import load
    from ..model import PRIORS, resolve_niw
    from ..analyses.path import crp_start, merge_path

    s = settings(seed=seed)
    paths, r_star = {}, {}
    for n in PATH_SIZES:
        ds = load(SIM1, n=n)
        niw = resolve_niw(ds.X)
        start = crp_start(ds.X, niw, n_chains=PATH_CHAINS, iters=PATH_SWEEPS, burn_in=PATH_BURN_IN, thin=PATH_THIN,
                          seed=s["seed"], n_jobs=1)
        paths[n] = merge_path(ds.X, start.labels, niw, config=start.config)
        r_star[n] = real_merge_r(paths[n], MIN_SHARE)
    grid = np.asarray(PRIORS[tuned_name()].tune_grid, dtype=float)
    higher = grid[grid > max(r_star.values())]
    axis = np.linspace(min(1.0, grid.min()), grid.max(), 300)
    return Threshold(paths, r_star, MIN_SHARE, float(higher[0]) if higher.size else float("nan"), axis)


# ----------------------------------------------------------------------------- step 6: choosing r
@dataclass(frozen=True)
class Choice:
    """The shipped cross validation of Old Faithful: r grid (G,), held-out loss and its SE (G,), cross validation's
    proposal and the r used (the proposal after the check with chains), folds, repeats, command and date."""

    r_grid: np.ndarray
    loss: np.ndarray
    loss_se: np.ndarray
    proposed: float
    used: float
    folds: int
    repeats: int
    command: str
    date: str

    @property
    def at(self):
        """Grid index of the proposal."""
        return int(np.argmin(np.abs(self.r_grid - self.proposed)))

    @property
    def next_at(self):
        """Grid index just above the proposal (None at the grid's end)."""
        return self.at + 1 if self.at + 1 < self.r_grid.size else None


def cv_choice(name=OLD_FAITHFUL):
    """Step 6: read from the shipped cv_r.json (:func:`pcrp.analyses.cv.builtin_r_table`), nothing run."""
    used, proposed, entry = shipped_r(name)
    curve = entry["curve"]
    return Choice(np.array([c["r"] for c in curve]), np.array([c["loss"] for c in curve]),
                  np.array([c["loss_se"] for c in curve]), proposed, used, int(entry["cv"]["folds"]),
                  int(entry["cv"]["repeats"]), str(entry["command"]), str(entry["date"]))


# ----------------------------------------------------------------------------- step 7: compared with what
@dataclass(frozen=True)
class Comparison:
    """The shipped comparison (:func:`pcrp.experiments.compare.read_report` of docs/compare/compare.json): per method compared
    with the pCRP, on how many labelled data sets the pCRP's mean K was nearer the truth, as near, or farther."""

    against: tuple
    nearer: tuple
    as_near: tuple
    farther: tuple
    data_sets: int
    command: str

    def beaten(self):
        """The methods the pCRP is nearer the truth than more often than farther from it."""
        return [m for m, a, b in zip(self.against, self.nearer, self.farther) if a > b]

    def not_beaten(self):
        return [m for m, a, b in zip(self.against, self.nearer, self.farther) if a <= b]


def comparison(report):
    """Step 7 from ``report`` (the dict :func:`pcrp.experiments.compare.read_report` returns; its ``provenance`` names the
    command)."""
    rows = report["counts"]
    return Comparison(tuple(r["against"] for r in rows), tuple(int(r["K nearer the truth"]) for r in rows),
                      tuple(int(r["K as near"]) for r in rows), tuple(int(r["K farther"]) for r in rows),
                      int(rows[0]["labelled data sets"]) if rows else 0, str(report["provenance"]))


def closest_rival(comp):
    """The registry name of the prior the pCRP beats least often on K (:func:`pcrp.experiments.compare.prior_methods`), or
    None."""
    from ..experiments.compare import prior_methods

    methods = prior_methods()
    priors = [(a, m) for m, a in zip(comp.against, comp.nearer) if m in methods]
    return methods[min(priors)[1]].name if priors else None


# ----------------------------------------------------------------------------- the sentences
def _and(items):
    items = list(items)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def points_text(sizes):
    """"162, 95, 8 and 7 points": cluster sizes in words."""
    return _and(f"{s:,}" for s in sizes) + " points"


def _restaurant_sentence(facts):
    return (f"After {facts.customers} customers the {facts.label} has opened {facts.tables} "
            f"table{'s' if facts.tables != 1 else ''} and the largest seats {facts.largest_share:.0%} of them; "
            f"the next customer joins that table with probability {facts.p_largest:.0%} and opens a new one with "
            f"probability {facts.p_new:.1%}: the fuller a table, the likelier the next customer sits there.")


def _growth_sentence(facts):
    crp, pcrp = facts.labels
    return (f"Over {facts.seatings} seatings of {facts.n:,} customers the {crp} opened {facts.means[0][-1]:.1f} "
            f"tables on average (exact {facts.exact[-1]:.1f}, about alpha log N = {facts.alpha_log_n:.1f}) and was "
            f"still opening them, {facts.gain(0):.1f} more after N = {facts.half:,}; the {pcrp} at r = {facts.r:g} "
            f"opened {facts.means[1][-1]:.1f} and only {facts.gain(1):.2f} more after N = {facts.half:,}.")


def _crp_sentence(facts):
    v = facts.crp
    return (f"Over {facts.sweeps - v.burn_in:,} sweeps after burn-in on Old Faithful's {facts.X.shape[0]} eruptions "
            f"the {v.label} held {v.mean_k:.1f} clusters on average, and its last draw has clusters of "
            f"{points_text(v.sizes)}: the few-point clusters are over-clustering.")


def _pcrp_sentence(facts):
    v, c = facts.pcrp, facts.crp
    return (f"At r = {facts.r:g}, Old Faithful's cross-validated power, the {v.label} on the same data, seed and "
            f"sweeps held {v.mean_k:.1f} clusters on average against the {c.label}'s {c.mean_k:.1f}, and its last "
            f"draw has clusters of {points_text(v.sizes)}: a table's weight N_k^r makes a tiny table cost more "
            "than its few points gain.")


def _threshold_sentence(facts):
    where = _and(f"r* = {facts.r_star[n]:.2f} at N = {n:,}" for n in facts.paths)
    first, last = (facts.r_star[n] for n in (min(facts.paths), max(facts.paths)))
    trend = "r* does not fade as N grows" if last >= first - FADE_TOLERANCE else "r* falls a little as N grows"
    return (f"Starting from a CRP fit of Sim 1, the pCRP prefers two real clusters (each at least {facts.share:.0%} "
            f"of the points) merged above {where}: {trend}, so a fixed r above it merges real clusters however many "
            "points there are.")


def _choice_sentence(facts):
    text = (f"{facts.folds}-fold cross validation repeated {facts.repeats} times on Old Faithful keeps the held-out "
            f"loss at {facts.loss[facts.at]:.2f} up to r = {facts.proposed:g}")
    if facts.next_at is not None:
        text += (f" and sees it jump to {facts.loss[facts.next_at]:.2f} at r = {facts.r_grid[facts.next_at]:g}, "
                 "where real clusters start to merge")
    text += f": it proposes r = {facts.proposed:g}, the last r before the jump"
    if facts.used != facts.proposed:
        text += f", and the check with chains steps down to r = {facts.used:g}"
    return text + "."


def _compare_sentence(facts):
    pairs = [f"the {m}'s on {a}" for m, a in zip(facts.against, facts.nearer)]
    text = (f"Over {facts.data_sets} labelled data sets the pCRP's mean K was nearer the true number of clusters "
            f"than {_and(pairs)}")
    if facts.beaten() and facts.not_beaten():
        text += (f": it fixes the over-clustering of the {_and(facts.beaten())}, and is no better than the "
                 f"{_and(facts.not_beaten())}")
    return text + "."


SENTENCES = {"restaurant": _restaurant_sentence, "growth": _growth_sentence, "crp": _crp_sentence,
             "pcrp": _pcrp_sentence, "threshold": _threshold_sentence, "choose": _choice_sentence,
             "compare": _compare_sentence}


def sentence(step, facts):
    """The one sentence a teacher says at step number ``step``, its numbers from ``facts`` (the result of the step's
    function: :func:`restaurant`, :func:`k_growth`, :func:`old_faithful` (steps 3 and 4), :func:`merge_threshold`,
    :func:`cv_choice`, :func:`comparison`)."""
    return SENTENCES[STEPS[step - 1].key](facts)


# ----------------------------------------------------------------------------- the Explorer's settings of a step
def explorer_values(step, lesson_settings=None, *, r=None, rival=None, present=False):
    """The Explorer's settings ({name: value}, :mod:`pcrp.app.explorer_settings`) that show step ``step`` (a
    :class:`Step` number) live: its data set, the CRP above the pCRP (or above ``rival``, a registry name, in step
    7), the pCRP at ``r`` (steps 2, 4, 5, 6; None: the data set's own r), and the lesson's seed and sweeps
    (``lesson_settings``: :func:`settings`). ``present``: the Explorer in presentation mode too."""
    from ..app import explorer_settings as es

    s = lesson_settings or settings()
    values = es.defaults()
    key = STEPS[step - 1].key
    values["data"] = OLD_FAITHFUL if key in ("restaurant", "crp", "pcrp", "choose") else SIM1
    if key == "threshold":
        values["sim_n"] = max(PATH_SIZES)
    if key in ("crp", "pcrp"):
        values.update(sweeps=s["sweeps"], burn_in=s["burn_in"], seed=s["seed"])
    rows = {1: reference_prior().name, 2: tuned_name()}
    if key == "compare" and rival is not None:
        rows[1] = rival
    for row, name in rows.items():
        values[es.prior_key(row)] = name
        es.reset_row(values, row)
    if r is not None:
        from ..model import PRIORS

        values[es.row_key(PRIORS[tuned_name()].tuned, 2)] = float(r)
    values["present"] = bool(present)
    return values


def explorer_address(lesson_url):
    """The Explorer's address (the app's default page, its root) from the lesson page's own address
    (``http://host/base/lesson?step=3`` -> ``http://host/base/``); '' when unknown."""
    parts = urlsplit(lesson_url or "")
    if not parts.netloc:
        return ""
    path = parts.path.rstrip("/").rpartition("/")[0] + "/"
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))

"""The guided lesson: seven steps a teacher runs in about five minutes, each with one live element and one sentence.

Every number a step says is computed here when the step is shown (seating simulations, CRP and pCRP chains on Old
Faithful and their point estimates, the exact merge path of Sim 1 beside the sampled posterior of K for each r),
or read from a shipped result file that names the command that made it (pcrp/datasets/cv_r.json through
:func:`pcrp.analyses.cv.builtin_r_table`, docs/compare/compare.json through
:func:`pcrp.experiments.compare.read_report`): no figure is typed into a sentence. Each step function returns plain
data (a frozen dataclass) and :func:`pcrp.teaching.lesson_words.sentence` turns it into the one sentence to say;
each word that states a comparison or a verdict is chosen by the numbers of those facts (tests/test_lesson.py
changes one number and watches the word change). :func:`pcrp.teaching.lesson_words.terms` defines every term a
student meets at the step where it first appears.
The page (app_pages/lesson.py) arranges them and the figures are in :mod:`pcrp.plots.lesson`. Steps 6 and 7 read
shipped results (:mod:`pcrp.teaching.lesson_results`). Each step also names the Explorer's settings that show the
same thing live, with the r the step talks about (:mod:`pcrp.teaching.lesson_links`).

Every r of the lesson is the shipped cross validation's (:func:`shipped_r`, the source the Explorer and the Rich get
richer page read) or is computed by the step (step 5's r* and the r where the posterior merges).

The CRP is the registry's over-clustering reference (``PriorSpec.reference``) and the pCRP its prior with a tuned
power (``PriorSpec.tuned``); no prior is picked by its name.
"""

from dataclasses import dataclass, field

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
          "N of the second step's seatings.",
          integer=True),
    Param("seatings", "simulated seatings per prior", 40, 2, 200, True, True,
          "Seatings averaged in the second step's E[K_N] curves.", integer=True),
    Param("sweeps", "sweeps per chain", 600, 50, 5000, True, True,
          "Sweeps of each CRP and pCRP chain on Old Faithful (steps 3 and 4).", integer=True),
    Param("burn_in", "burn-in sweeps", 100, 0, 4999, True, True,
          "Sweeps left out of the posterior of K and of the point estimate (steps 3 and 4).", integer=True),
    Param("chains", "chains per prior", 4, 2, 8, True, True,
          "Chains from unlike starts per prior on Old Faithful (steps 3 and 4), pooled into its posterior of K; two "
          "or more show whether they agree.", integer=True,
          why_high="each chain is run when the step is shown, for every visitor who first opens it."),
    Param("seed", "seed", 0, 0, 10_000, True, True, "The random numbers of every live step.", integer=True),
    error=LessonError,
)

OLD_FAITHFUL = "old-faithful"  # the built-in data set of steps 3, 4 and 6 (pcrp.data.load, cv_r.json)
# Old Faithful has no labels. The paper takes "a manual clustering that consists of two Gaussian components" (short
# and long eruptions) as its ground truth (Lu, Li & Dunson, Sec. 4, Old Faithful): K_true of steps 3 and 4.
OLD_FAITHFUL_TRUE_K = 2
TRUE_K_SOURCE = ("two eruption types, short and long: the paper's ground truth for these data (a manual clustering "
                 "of two Gaussian components)")
OF_THIN = 5  # kept draws of steps 3 and 4 (the point estimate's): every 5th sweep after burn-in, as the run default
SIM1 = "sim1"  # the built-in simulation of step 5 (three 1-D Gaussians, true labels known)
PATH_SIZES = (300, 2000)  # the paper's two N of Sim 1: the merge path's threshold at each (step 5)
PATH_CHAINS, PATH_SWEEPS, PATH_BURN_IN, PATH_THIN = 2, 600, 200, 5  # the CRP fit the merge path starts from
# Step 5's posterior of K for each r of the tuned grid: one pCRP chain per r on all the data
# (pcrp.analyses.k_over_r, k-means start, the seeds shared between r).
K_SWEEPS, K_BURN_IN = 600, 200
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
    Step(3, "crp", "Does the CRP over-cluster Old Faithful?"),
    Step(4, "pcrp", "What the pCRP's power does to the extra tables"),
    Step(5, "threshold", "How large an r merges real clusters?"),
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
    (n,) over ``seatings`` seatings each, the CRP's exact E[K_N] (n,), and per prior how many of its seatings opened
    a table after N = n / 2 (``late``)."""

    n: int
    seatings: int
    r: float
    labels: tuple
    means: tuple
    ses: tuple
    exact: np.ndarray
    alpha: float
    late: tuple = ()

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
    half = n // 2
    return Growth(n, runs, r, tuple(p.spec.label for p in priors), tuple(k.mean(axis=0) for k in sims),
                  tuple(k.std(axis=0, ddof=1) / np.sqrt(runs) for k in sims), growth(priors[0], n).exact,
                  float(priors[0].alpha), tuple(int(np.sum(k[:, -1] > k[:, half - 1])) for k in sims))


# ----------------------------------------------------------------------------- steps 3 and 4: Old Faithful
@dataclass(frozen=True)
class Posterior:
    """One prior's chains on Old Faithful: its label, K (C, T) after each sweep of each chain, the burn-in, the
    draw shown (N,) (the last kept draw of the first chain), the point estimate (N,) under VI loss
    (:func:`pcrp.summaries.partition.point_estimate` of every kept draw of every chain, clusters numbered by size)
    and the true number of clusters."""

    label: str
    K: np.ndarray
    burn_in: int
    draw: np.ndarray
    point: np.ndarray
    true_k: int

    @property
    def kept(self):
        """(C, T - burn_in) K after burn-in: the posterior of K, chain by chain."""
        return self.K[:, self.burn_in:]

    @property
    def chains(self):
        return int(self.K.shape[0])

    @property
    def mean_k(self):
        return float(self.kept.mean())

    @property
    def mcse(self):
        """The Monte Carlo standard error of mean K (:func:`pcrp.summaries.summary.mean_and_mcse`, chains pooled)."""
        from ..summaries.summary import mean_and_mcse

        return float(mean_and_mcse(self.kept)[1])

    def k_posterior(self):
        """(values (M,), shares (M,)): the posterior of K, every sweep after burn-in of every chain pooled."""
        values, counts = np.unique(self.kept, return_counts=True)
        return values, counts / counts.sum()

    def p(self, k):
        """P(K = k): the share of the draws with ``k`` clusters."""
        return float(np.mean(self.kept == k))

    @property
    def p_true(self):
        return self.p(self.true_k)

    @property
    def p_above(self):
        """P(K > K_true): the share of the draws holding extra clusters."""
        return float(np.mean(self.kept > self.true_k))

    @property
    def p_below(self):
        """P(K < K_true): the share of the draws that merged real clusters."""
        return float(np.mean(self.kept < self.true_k))

    @property
    def draw_sizes(self):
        """Cluster sizes of the draw shown, largest first."""
        return _sizes(self.draw)

    @property
    def point_sizes(self):
        return _sizes(self.point)

    @property
    def point_k(self):
        return len(self.point_sizes)


def _sizes(labels):
    return sorted((int(c) for c in np.bincount(np.asarray(labels)) if c), reverse=True)


def same_partition(a, b):
    """Whether label vectors ``a`` and ``b`` (N,) make the same partition, whatever their cluster numbers."""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return False
    pairs = np.unique(np.stack([a, b]), axis=1)
    return np.unique(pairs[0]).size == pairs.shape[1] == np.unique(pairs[1]).size


@dataclass(frozen=True)
class OldFaithful:
    """Steps 3 and 4: CRP and pCRP chains (same data, seeds, starts and sweeps) on the standardised Old Faithful X
    (N, 2), the pCRP at the shipped r, with the true number of clusters (:data:`OLD_FAITHFUL_TRUE_K`)."""

    X: np.ndarray
    columns: tuple
    sweeps: int
    seed: int
    r: float
    crp: Posterior
    pcrp: Posterior

    @property
    def true_k(self):
        return self.crp.true_k

    @property
    def chains(self):
        return self.crp.chains

    @property
    def same_point(self):
        """Whether the two priors' point estimates are the same partition."""
        return same_partition(self.crp.point, self.pcrp.point)

    def panels(self, step_key):
        """[(which, sizes, colours (N,))] of the partitions step ``step_key`` ("crp" or "pcrp") draws beside the
        posterior of K, coloured against the CRP's point estimate (:func:`matched_colours`; -1: a tiny cluster,
        grey). which: "draw" or "point estimate" of the CRP (step 3), or the CRP's and the pCRP's draw (step 4)."""
        crp, pcrp = self.crp, self.pcrp
        if step_key == "crp":
            return [("a draw", crp.draw_sizes, matched_colours(crp.draw, crp.point)),
                    ("point estimate", crp.point_sizes, matched_colours(crp.point, crp.point))]
        return [(f"{crp.label} draw", crp.draw_sizes, matched_colours(crp.draw, crp.point)),
                (f"{pcrp.label} draw", pcrp.draw_sizes, matched_colours(pcrp.draw, crp.point))]

    def shows_tiny(self, step_key):
        """Whether a partition step ``step_key`` draws has a tiny cluster (grey points)."""
        return any(bool(np.any(colours < 0)) for _, _, colours in self.panels(step_key))


def posterior_of(X, prior, niw, s):
    """:class:`Posterior` of ``prior`` on X: ``s["chains"]`` chains from the run's unlike starts
    (:func:`pcrp.runs.chains.run_chains`, one thread), their kept draws' point estimate under VI loss."""
    from ..runs.chains import run_chains
    from ..runs.run_spec import make_run_spec
    from ..summaries.partition import point_estimate

    spec = make_run_spec(X, prior=prior, niw=niw, n_chains=s["chains"], iters=s["sweeps"], burn_in=s["burn_in"],
                         thin=OF_THIN, seed=s["seed"], n_jobs=1)
    chains = run_chains(X, spec)
    point = point_estimate(chains.labels, seed=s["seed"], n_jobs=1)
    return Posterior(prior.spec.label, np.asarray(chains.K), s["burn_in"],
                     np.asarray(chains.labels[0, -1], dtype=np.int64), np.asarray(point.labels, dtype=np.int64),
                     OLD_FAITHFUL_TRUE_K)


def old_faithful(sweeps=None, burn_in=None, chains=None, seed=None):
    """Steps 3 and 4: ``chains`` chains of each prior, the CRP and the pCRP at Old Faithful's shipped r
    (:func:`posterior_of`)."""
    from ..data import load
    from ..model import resolve_niw

    s = settings(sweeps=sweeps, burn_in=burn_in, chains=chains, seed=seed)
    if s["burn_in"] + OF_THIN > s["sweeps"]:
        raise LessonError(f"burn_in ({s['burn_in']}) must leave at least {OF_THIN} sweeps of the {s['sweeps']} "
                          "(one kept draw) for the point estimate.")
    ds = load(OLD_FAITHFUL)
    niw = resolve_niw(ds.X)
    r, _, _ = shipped_r()
    crp, pcrp = (posterior_of(ds.X, prior, niw, s) for prior in (reference_prior(), tuned_prior(r)))
    return OldFaithful(ds.X, tuple(ds.columns), s["sweeps"], s["seed"], r, crp, pcrp)


def matched_colours(labels, reference):
    """(N,) colour index per point of partition ``labels`` (N,), its clusters matched to those of ``reference`` (N,)
    (the Explorer's rule, :func:`pcrp.app.live_view.matched_colours`: same colour, same cluster; tiny clusters -1)."""
    from ..app.live_view import matched_colours as match, reference_colours

    return match(np.asarray(labels), reference_colours(np.asarray(reference)))


# ----------------------------------------------------------------------------- step 5: the merge threshold
@dataclass(frozen=True)
class Threshold:
    """Sim 1 at each N of PATH_SIZES: the exact merge path of a CRP fit (``paths`` {N: pcrp.analyses.path.MergePath})
    with ``r_star`` {N: the r above which that single partition prefers two real clusters (each at least ``share``
    of the points) merged}, beside the sampled posterior of K for each r of the tuned grid (``posterior`` {N:
    pcrp.analyses.k_over_r.KOverR}). ``fall``: a fit has merged real clusters when its mean K is more than this below
    ``true_k`` (:data:`pcrp.analyses.collapse.FALL`). ``shipped``: Sim 1's cross-validated r and the N it was chosen
    at (:func:`shipped_r`). ``about``: what Sim 1 is (:func:`simulation_facts`). ``shipped_k``: the mean K of the
    shipped check's chains at the shipped r on the N it was chosen at (the mean over chains of their mean K), with
    ``shipped_chains`` chains of ``shipped_sweeps`` sweeps."""

    paths: dict
    r_star: dict
    share: float
    posterior: dict
    true_k: int
    fall: float
    shipped: float
    shipped_n: int
    about: "SimulationFacts"
    r_axis: np.ndarray = field(default_factory=lambda: np.zeros(0))  # (R,) powers the merge path is drawn at
    shipped_k: float = float("nan")
    shipped_chains: int = 0
    shipped_sweeps: int = 0

    @property
    def sizes(self):
        return tuple(self.paths)

    @property
    def line(self):
        """The mean K below which the posterior has merged real clusters."""
        return self.true_k - self.fall

    def kept(self):
        """{N: (R,) clusters the merge path's partition has at each r of ``r_axis``}."""
        return {n: np.array([p.n_clusters_at(r) for r in self.r_axis]) for n, p in self.paths.items()}

    def mean_k_at(self, n, r):
        """The posterior's mean K at N = ``n`` and the grid's r nearest ``r``."""
        post = self.posterior[n]
        return float(post.mean_k[int(np.argmin(np.abs(post.r_grid - r)))])

    def just_above(self, n):
        """The first r of the grid at or above r* at N = ``n`` (nan if none)."""
        grid = self.posterior[n].r_grid
        higher = grid[grid >= self.r_star[n] - 1e-9]
        return float(higher[0]) if higher.size else float("nan")

    def merge_r(self, n):
        """The first r of the grid at which the posterior's mean K at N = ``n`` falls below :attr:`line` (nan if
        none): where the merge shows in the posterior."""
        post = self.posterior[n]
        below = np.flatnonzero(post.mean_k < self.line)
        return float(post.r_grid[below[0]]) if below.size else float("nan")

    def merged_from(self):
        """The r from which every r of the grid has the posterior merged at every N (nan if there is none)."""
        starts = []
        for n in self.sizes:
            post = self.posterior[n]
            held = post.mean_k >= self.line
            if held[-1]:
                return float("nan")
            last_held = np.flatnonzero(held)
            starts.append(float(post.r_grid[last_held[-1] + 1]) if last_held.size else float(post.r_grid[0]))
        return max(starts)


@dataclass(frozen=True)
class SimulationFacts:
    """What a built-in 1-D simulation is, from its declared mixture (:data:`pcrp.data.builtin_sets.SIMULATIONS`):
    weights, means and sds (K,) in the order of the means; ``gaps``: each pair of neighbours' distance in sds of the
    wider of the two (K - 1,); ``misassigned``: the share of the points that the true mixture itself would put in
    another component (its Bayes error: 1 - the integral of the largest weighted component density)."""

    name: str
    weights: tuple
    means: tuple
    sds: tuple
    gaps: tuple
    misassigned: float

    @property
    def widest(self):
        """Index of the widest component."""
        return int(np.argmax(self.sds))


def simulation_facts(name=SIM1):
    """:class:`SimulationFacts` of built-in simulation ``name``, computed from its declared weights, means and sds
    (the misassigned share by the trapezoid rule over the means +- 12 of the largest sd, 200,001 points)."""
    from scipy.stats import norm

    from ..data.builtin_sets import SIMULATIONS

    spec = SIMULATIONS[name]
    order = np.argsort(spec["means"])
    w, m, sd = (np.asarray(spec[key], dtype=float)[order] for key in ("weights", "means", "sds"))
    gaps = tuple(float((m[i + 1] - m[i]) / max(sd[i], sd[i + 1])) for i in range(m.size - 1))
    x = np.linspace(m.min() - 12 * sd.max(), m.max() + 12 * sd.max(), 200_001)
    dens = w[:, None] * norm.pdf(x[None, :], m[:, None], sd[:, None])
    misassigned = float(np.trapezoid(dens.sum(axis=0) - dens.max(axis=0), x))
    return SimulationFacts(name, tuple(w), tuple(m), tuple(sd), gaps, misassigned)


def shipped_check_k(entry):
    """(mean K, chains, sweeps) of the shipped check's chains at the shipped r (``entry``: a cv_r.json entry): the
    mean over its chains of their mean K; (nan, 0, 0) when the entry has no check at that r."""
    check = entry.get("check") or {}
    for tried in check.get("tried", []):
        if abs(float(tried["r"]) - float(entry["r"])) < 1e-9:
            per_chain = np.asarray(tried["mean_K_per_chain"], dtype=float)
            return float(per_chain.mean()), int(per_chain.size), int(check.get("iters", 0))
    return float("nan"), 0, 0


def real_merge_r(path, share):
    """The power at which the path first merges two clusters that each hold at least ``share`` of the points
    (pcrp.analyses.collapse's "kept" clusters): its effective r* (:meth:`pcrp.analyses.path.MergePath.effective_r`); inf if none."""
    n = path.partition.size
    for merge, r in zip(path.merges, path.effective_r()):
        if min(merge.sizes) >= max(1.0, share * n):
            return float(r)
    return float("inf")


def merge_threshold(seed=None):
    """Step 5 at each N of PATH_SIZES: the exact merge path of Sim 1 (:func:`pcrp.analyses.path.merge_path`) from a
    CRP fit's point estimate (:func:`pcrp.analyses.path.crp_start`), and the sampled posterior of K for each r of the
    tuned grid (:func:`pcrp.analyses.k_over_r.k_over_r`)."""
    from ..analyses.collapse import FALL, MIN_SHARE
    from ..analyses.k_over_r import k_over_r
    from ..data import load
    from ..model import PRIORS, resolve_niw
    from ..analyses.path import crp_start, merge_path

    s = settings(seed=seed)
    grid = np.asarray(PRIORS[tuned_name()].tune_grid, dtype=float)
    paths, r_star, posterior = {}, {}, {}
    for n in PATH_SIZES:
        ds = load(SIM1, n=n)
        niw = resolve_niw(ds.X)
        start = crp_start(ds.X, niw, n_chains=PATH_CHAINS, iters=PATH_SWEEPS, burn_in=PATH_BURN_IN, thin=PATH_THIN,
                          seed=s["seed"], n_jobs=1)
        paths[n] = merge_path(ds.X, start.labels, niw, config=start.config)
        r_star[n] = real_merge_r(paths[n], MIN_SHARE)
        posterior[n] = k_over_r(ds.X, niw, grid, iters=K_SWEEPS, burn_in=K_BURN_IN, seed=s["seed"], n_jobs=1)
        true_k = int(ds.true_k)
    shipped, _, entry = shipped_r(SIM1)
    axis = np.linspace(min(1.0, grid.min()), grid.max(), 300)
    return Threshold(paths, r_star, MIN_SHARE, posterior, true_k, float(FALL), shipped, int(entry["data"]["n"]),
                     simulation_facts(SIM1), axis, *shipped_check_k(entry))

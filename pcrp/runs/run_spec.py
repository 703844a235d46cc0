"""One run specification: everything that decides a run of the sampler, validated once.

>>> spec = make_run_spec(X, prior="pcrp", prior_params={"r": 1.3}, seed=0)   # the defaults of `pcrp run`
>>> spec.budget.describe(); spec.memory.total; spec.describe()
>>> chains = run_chains(X, spec)                 # pcrp.runs.chains: the spec is its only description of the run
>>> RunSpec.from_dict(chains.config) == spec     # saved with the results; a saved run reruns exactly

A :class:`RunSpec` holds the prior (a :data:`pcrp.model.PRIORS` entry with its parameters), the NIW
hyper-parameters (resolved on the data the sampler sees), the data's shape and description (whether it was
standardised; a fingerprint of the numbers), the chains and their starts, the budget (:class:`pcrp.runs.budget.Budget`),
the thinning of the label draws, the seed (a fresh one is drawn and recorded when none is given), the threads
and the split-merge moves, and the memory plan (:func:`pcrp.runs.memory_plan.run_memory_plan`), computed once here.

Every setting is declared once, in :data:`RUN_PARAMS` (name, default, bounds, meaning; the priors' parameters
are declared in the registry). The command line's flags, :class:`pcrp.estimator.PCRPMixture`'s parameters, the
app's widgets, cross validation, the r path and reproduce all build a spec through :func:`make_run_spec` and
never retype a default, a bound or a parameter name. Different defaults for a different purpose (a live demo,
the paper's fixed protocol) are passed as values; the bounds are the same everywhere.
"""

import hashlib
from dataclasses import dataclass, field, replace

import numpy as np

from .budget import AUTO_MAX_ITERS, Budget, max_kept, storage_rows
from ..sampling.compute import usable_cpus
from ..basics.json_text import jsonable
from ..model import DEFAULT_PRIOR, NIW, PRIORS, GibbsPrior, make_prior, resolve_niw
from ..basics.params import Declarations, Param
from ..basics.dtypes import label_dtype
from ..basics.errors import SamplerError
from ..sampling.starts import parse_init
# Starts used per chain when none is given, cycled: k-means++ (a good start), everything in one cluster
# (under-dispersed in K) and 20 random clusters (over-dispersed). Chains from such different starts show start
# dependence instead of hiding it.
DEFAULT_INITS = ("kmeans:10", "one", "random:20")
CORES = usable_cpus()
CHAINS_PER_CORE = 8
MAX_SWEEPS = 10_000_000
MAX_THIN = 1_000_000
MAX_SPLIT_MERGE = 100
MAX_SEED = 2**128 - 1  # numpy's SeedSequence entropy is 128 bits

_SWEEPS_WHY = (f"the per-sweep traces of K and the log joint and the sampler's time grow with the sweeps; "
               f"{MAX_SWEEPS:,} sweeps is days of sampling. The paper's protocol is 20,000.")
RUN_PARAMS = Declarations(
    "the run",
    Param("n_chains", "chains", 4, 1, CHAINS_PER_CORE * CORES, True, True,
          "Chains from unlike starts, run in parallel threads; R-hat needs two or more, and four from different "
          "starts is the usual check that the result does not depend on where the sampler started.",
          integer=True, cli="--chains",
          why_high=(f"at most {CHAINS_PER_CORE} chains per core of this machine ({CORES} cores): more only queue "
                    "behind each other and multiply the memory of the kept draws.")),
    Param("iters", "sweeps per chain", None, 1, MAX_SWEEPS, True, True,
          "A fixed budget of Gibbs sweeps per chain; leave it out for the automatic budget, which stops when the "
          "chains agree and have enough effective draws.", integer=True, why_high=_SWEEPS_WHY),
    Param("burn_in", "burn-in", None, 0, MAX_SWEEPS, True, False,
          "Sweeps discarded before draws are kept (default: half of the sweeps).", integer=True,
          constraint="burn_in < iters"),
    Param("thin", "thinning", 5, 1, MAX_THIN, True, True,
          "Keep the labels of every thin-th sweep after burn-in (K and the log joint are kept at every sweep).",
          integer=True, why_high="a larger thinning keeps next to no draws; use fewer sweeps instead."),
    Param("max_iters", "cap of the automatic budget", AUTO_MAX_ITERS, 1, MAX_SWEEPS, True, True,
          "The most sweeps per chain the automatic budget may run before it stops unconverged.", integer=True,
          why_high=_SWEEPS_WHY),
    Param("seed", "seed", None, 0, MAX_SEED, True, True,
          "Seed of the run; each chain gets its own stream spawned from it. None draws a fresh one, recorded "
          "with the results.", integer=True, why_high="numpy's SeedSequence takes 128-bit seeds."),
    Param("n_jobs", "threads", -1, -1, CORES, True, True,
          "Threads running chains at once: 1 to this machine's cores, or -1 for all of them.", integer=True,
          constraint="n_jobs != 0",
          why_high=f"this machine has {CORES} cores; the chains are CPU-bound, so more threads only slow them."),
    Param("split_merge", "split-merge moves per sweep", 1, 0, MAX_SPLIT_MERGE, True, True,
          "Sequentially-allocated split-merge moves after each sweep (0: the paper's plain Gibbs).", integer=True,
          why_high="a hundred moves per sweep already cost more than the sweep; mixing comes from the sweeps too."),
    error=SamplerError,
)
DEFAULTS = RUN_PARAMS.defaults()


def check_setting(name, value):
    """``value`` of run setting ``name`` checked against its declaration (a SamplerError naming the setting, the
    value, its range and what to do), and n_jobs against its constraint (0 threads runs nothing)."""
    value = RUN_PARAMS.check(name, value)
    if name == "n_jobs" and value == 0:
        raise SamplerError("n_jobs must be -1 (all cores) or a whole number from 1 to the cores (got 0).")
    return value


def check_schedule(iters, burn_in, thin):
    """A fixed schedule (sweeps, burn-in, thinning) checked against the declarations, and that it keeps a draw;
    returns the three as ints. The one check of a schedule (the run specification, a single chain, a live run)."""
    iters, burn_in, thin = (check_setting(name, value) for name, value in
                            (("iters", iters), ("burn_in", burn_in), ("thin", thin)))
    if burn_in >= iters:
        raise SamplerError(f"burn_in ({burn_in}) must be smaller than iters ({iters}) so that draws are kept.")
    if burn_in + thin > iters:
        raise SamplerError(f"thin ({thin}) leaves no draws to keep: the first kept sweep, burn_in + thin = "
                           f"{burn_in + thin}, is after the last ({iters}); thin must be at most iters - burn_in "
                           f"= {iters - burn_in}.")
    return iters, burn_in, thin


def resolve_inits(init, n_chains):
    """One start per chain: ``init`` is one value ('one', 'random:K', 'kmeans:K' or an (N,) array of
    labels) used by every chain, or a list/tuple of values cycled over the chains; None means
    :data:`DEFAULT_INITS`. Checks each value and returns a list of n_chains starts."""
    if init is None:
        init = DEFAULT_INITS
    if isinstance(init, (str, np.ndarray)):
        init = [init]
    elif not isinstance(init, (list, tuple)) or len(init) == 0:
        raise SamplerError(
            "init must be one start ('one', 'random:K', 'kmeans:K' or an array of labels) or a non-empty "
            f"list of starts, one per chain (got {init!r})."
        )
    starts = [value.strip() if isinstance(value, str) else np.asarray(value) for value in init]
    for value in starts:
        parse_init(value)
    return [starts[c % len(starts)] for c in range(n_chains)]


def chain_seeds(seed, n_chains):
    """Independent per-chain seeds (ints) spawned from ``SeedSequence(seed)``."""
    children = np.random.SeedSequence(seed).spawn(n_chains)
    return [int(child.generate_state(1, dtype=np.uint64)[0]) for child in children]


def fresh_seed():
    """A fresh 128-bit seed (numpy's SeedSequence entropy), to be recorded so that the run can be rerun."""
    return int(np.random.SeedSequence().entropy)


def data_fingerprint(X):
    """The SHA-256 of the data the sampler sees (float64, C order): a rerun checks that its data are these."""
    return hashlib.sha256(np.ascontiguousarray(X, dtype=np.float64).tobytes()).hexdigest()


def data_description(dataset, name=None):
    """What a run records about a :class:`pcrp.data.Dataset`: its name as typed, standardisation, columns, shape
    and provenance (``data_source``: enough to load it again)."""
    return {
        "data": name or dataset.name,
        "standardize": bool(dataset.standardized),
        "columns": list(dataset.columns),
        "n": int(dataset.n),
        "d": int(dataset.dim),
        "data_source": dataset.source,
    }


def _describe_init(value):
    return value if isinstance(value, str) else "labels"


@dataclass(frozen=True, eq=False)  # eq: compare as_dict() (NIW and starts hold arrays)
class RunSpec:
    """Everything that decides a run, validated on construction (:func:`make_run_spec` builds one from raw
    settings and the data).

    prior: a prior of :data:`pcrp.model.PRIORS` with its parameters; niw: the NIW hyper-parameters in the units
    the sampler sees; n_points, dim: the data's shape; n_chains: chains; inits: one start per chain ('one',
    'random:K', 'kmeans:K' or an (N,) array of labels); budget: :class:`pcrp.runs.budget.Budget`; thin: keep the labels
    of every thin-th sweep after burn-in (at least this; the automatic budget may thin more to keep at most
    :data:`pcrp.runs.budget.AUTO_MAX_KEPT` per chain); seed: the run's seed (chain c uses the c-th seed spawned from
    it); n_jobs: threads (-1: all cores); split_merge: moves per sweep; standardize: whether the data were
    z-scored before sampling; data: a description of the data (:func:`data_description`, with ``data_sha256``);
    similarity: whether the N x N similarity matrix is made after sampling (counted in the memory plan).
    memory: the :class:`pcrp.runs.memory_plan.MemoryPlan` of the run and its summaries, computed here once.
    """

    prior: GibbsPrior
    niw: NIW
    n_points: int
    dim: int
    n_chains: int
    inits: tuple
    budget: Budget
    thin: int
    seed: int
    n_jobs: int = -1
    split_merge: int = 1
    standardize: bool = False
    data: dict = field(default_factory=dict)
    similarity: bool = False
    memory: object = field(init=False, repr=False)

    def __post_init__(self):
        if not isinstance(self.prior, GibbsPrior) or getattr(self.prior, "name", None) not in PRIORS:
            raise SamplerError(f"prior must be a prior of the registry ({', '.join(PRIORS)}), built with "
                               f"pcrp.model.make_prior (got {self.prior!r}).")
        if not isinstance(self.niw, NIW):
            raise SamplerError(f"niw must be a pcrp.model.NIW (got {type(self.niw).__name__}).")
        if isinstance(self.n_points, (bool, np.bool_)) or not isinstance(self.n_points, (int, np.integer)) \
                or self.n_points < 1:
            raise SamplerError(f"The data need at least one row (got {self.n_points!r}).")
        if self.niw.dim != self.dim:
            raise SamplerError(f"The NIW prior has dimension {self.niw.dim} but the data have {self.dim} columns.")
        for name in ("n_chains", "thin", "seed", "n_jobs", "split_merge"):
            object.__setattr__(self, name, check_setting(name, getattr(self, name)))
        budget = self.budget
        if not isinstance(budget, Budget):
            raise SamplerError(f"budget must be a pcrp.runs.budget.Budget (got {type(budget).__name__}).")
        if budget.auto:
            check_setting("max_iters", budget.max_iters)
        else:
            check_schedule(budget.iters, budget.burn_in_at(budget.iters), self.thin)
        inits = tuple(resolve_inits(list(self.inits), self.n_chains))
        if len(self.inits) != self.n_chains:
            raise SamplerError(f"inits must hold one start per chain ({self.n_chains}), got {len(self.inits)}.")
        object.__setattr__(self, "inits", inits)
        from .memory_plan import run_memory_plan

        object.__setattr__(self, "memory", run_memory_plan(
            self.n_points, self.dim, n_chains=self.n_chains, iters=self.max_sweeps,
            kept=storage_rows(self.budget, self.thin, self.max_kept), inits=self.inits, n_jobs=self.n_jobs,
            similarity=self.similarity))

    # ------------------------------------------------------------------ derived
    @property
    def max_sweeps(self):
        """The most sweeps a chain can run: the fixed budget, or the automatic budget's cap."""
        return self.budget.max_sweeps

    @property
    def max_kept(self):
        """The most label draws per chain the automatic budget keeps (:func:`pcrp.runs.budget.max_kept`)."""
        return max_kept(self.n_chains, self.n_points, label_dtype(self.n_points).itemsize)

    @property
    def chain_seeds(self):
        """(C,) the per-chain seeds spawned from ``seed``."""
        return chain_seeds(self.seed, self.n_chains)

    @property
    def threads(self):
        """Threads running chains at once."""
        return min(self.n_chains, CORES if self.n_jobs < 0 else self.n_jobs)

    def describe(self):
        """The header of a run, one line per item: data, prior, NIW, chains, budget, memory."""
        from ..basics.dtypes import _gib

        data = self.data.get("data", "data")
        std = "standardised" if self.standardize else "as given"
        parts = ", ".join(f"{name} {_gib(value)}" for name, value in self.memory.parts.items())
        niw = self.niw
        return [
            f"data: {data}, N = {self.n_points:,}, d = {self.dim} ({std})",
            f"prior: {self.prior.label()}; clusters' covariance {niw.covariance_type}; NIW kappa0 {niw.kappa0:g}, "
            f"nu0 {niw.nu0:g}, S0 {_matrix_words(niw.S0)}",
            f"chains: {self.n_chains} from {', '.join(_describe_init(i) for i in self.inits)}; seed {self.seed}; "
            f"{self.threads} thread(s); {self.split_merge} split-merge move(s) per sweep",
            f"budget: {self.budget.describe()}; labels kept every {self.thin} sweeps"
            + (f" or more (at most {self.max_kept:,} draws per chain)" if self.budget.auto else ""),
            f"memory plan: {_gib(self.memory.total)} ({parts})",
        ]

    # ------------------------------------------------------------------ as saved
    def as_dict(self):
        """The spec as one JSON-serialisable dict, the ``config`` of a ChainSet: the prior's name and parameters,
        the NIW, the budget as asked for (``budget``: its kind, sweeps or cap, targets and the thinning asked for),
        the schedule (``iters``, ``burn_in``, ``thin``: a fixed budget's; :func:`pcrp.runs.chains.run_chains` writes
        those the automatic budget ran), seeds and starts, the moves and the data description."""
        inits = list(self.inits)
        fixed = not self.budget.auto
        return {
            **self.prior.params(),
            **self.niw.as_dict(),
            "budget": {**self.budget.as_dict(), "thin": int(self.thin)},
            "iters": self.budget.iters if fixed else None,
            "burn_in": self.budget.burn_in_at(self.budget.iters) if fixed else None,
            "thin": int(self.thin),
            "seed": int(self.seed),
            "n_chains": self.n_chains,
            "chain_seeds": self.chain_seeds,
            "init": [_describe_init(v) for v in inits],
            "split_merge": int(self.split_merge),
            "n_jobs": int(self.n_jobs),
            "similarity": bool(self.similarity),
            **jsonable(self.data),
            "standardize": bool(self.standardize),
            "n": int(self.n_points),
            "d": int(self.dim),
        }

    @classmethod
    def from_dict(cls, config):
        """The spec a saved ``config`` (:meth:`as_dict`) records. A start given as labels cannot be rebuilt (its
        labels are not saved): a SamplerError says so."""
        if "labels" in config.get("init", []):
            raise SamplerError("This run started a chain from given labels, which the file does not hold, so it "
                               "cannot be rebuilt from the file alone.")
        spec = PRIORS.get(config.get("prior"))
        if spec is None:
            raise SamplerError(f"The file names no known prior (prior = {config.get('prior')!r}); pcrp knows "
                               f"{', '.join(PRIORS)}.")
        prior = make_prior(spec.name, **{p.name: config[p.name] for p in spec.params if p.name in config})
        niw = NIW(m0=config["m0"], kappa0=config["kappa0"], nu0=config["nu0"], S0=config["S0"],
                  covariance_type=config.get("covariance_type", "full"))  # files before the types: full
        asked = config.get("budget") or {"kind": "fixed", "iters": config["iters"], "burn_in": config["burn_in"],
                                         "thin": config.get("thin", 1)}  # files written before the budget
        if asked["kind"] == "auto":
            budget = Budget(max_iters=asked["max_iters"], rhat=asked["rhat"], ess=asked["ess"])
        else:
            budget = Budget(iters=asked["iters"], burn_in=asked["burn_in"])
        keys = ("data", "columns", "data_source", "data_sha256")
        return cls(prior=prior, niw=niw, n_points=config["n"], dim=config["d"], n_chains=config["n_chains"],
                   inits=tuple(config["init"]), budget=budget, thin=asked["thin"], seed=config["seed"],
                   n_jobs=config.get("n_jobs", -1), split_merge=int(config.get("split_merge", 1)),
                   standardize=bool(config.get("standardize", False)),
                   data={k: config[k] for k in keys if k in config}, similarity=bool(config.get("similarity", False)))

    def replace(self, **changes):
        """A copy with ``changes`` (validated again; the memory plan recomputed)."""
        return replace(self, **changes)


def _matrix_words(S):
    S = np.asarray(S)
    if np.allclose(S, S[0, 0] * np.eye(S.shape[0])):
        return f"{S[0, 0]:g} I"
    return f"a {S.shape[0]} x {S.shape[1]} matrix"


def make_run_spec(X, *, prior=DEFAULT_PRIOR, prior_params=None, niw=None, n_chains=None, init=None, iters=None,
                  burn_in=None, max_iters=None, thin=None, seed=None, n_jobs=None, split_merge=None,
                  standardize=False, data=None, similarity=False):
    """The :class:`RunSpec` of a run on X (N, d), the data as the sampler sees them.

    prior: a registry name ("pcrp", ...) with ``prior_params`` {name: value} (missing ones take the registry's
    defaults; a parameter the prior does not have is refused), or a prior object. niw: None (the data-driven
    defaults of :func:`pcrp.model.resolve_niw`), a dict of overrides {m0, kappa0, nu0, S0, covariance_type}, or an NIW.
    iters: a fixed budget of sweeps (burn_in defaults to half); None: the automatic budget (cap ``max_iters``).
    Every other setting: None takes its declared default (:data:`RUN_PARAMS`); split_merge may be True/False.
    seed None draws a fresh seed, recorded in the spec. data: a description (:func:`data_description`).
    """
    X = np.asarray(X)
    if X.ndim != 2 or X.shape[0] < 1 or X.shape[1] < 1:
        raise SamplerError(f"X must be an (N, d) array with N, d >= 1 (got shape {X.shape}).")
    if isinstance(prior, str):
        prior = make_prior(prior, **(prior_params or {}))
    elif prior_params:
        raise SamplerError("Give prior_params only with a prior's name; a prior object carries its own.")
    if not isinstance(niw, NIW):
        niw = resolve_niw(X, **(niw or {}))
    given = dict(n_chains=n_chains, thin=thin, n_jobs=n_jobs, split_merge=split_merge)
    values = {name: DEFAULTS[name] if value is None else value for name, value in given.items()}
    if isinstance(values["split_merge"], (bool, np.bool_)):
        values["split_merge"] = int(values["split_merge"])
    n_chains = check_setting("n_chains", values["n_chains"])
    if iters is None:
        if burn_in is not None:
            raise SamplerError("burn_in applies to a fixed budget: give iters too, or leave burn_in out (the "
                               "automatic budget discards the first half of the sweeps it runs).")
        budget = Budget(max_iters=DEFAULTS["max_iters"] if max_iters is None else check_setting("max_iters",
                                                                                                 max_iters))
    else:
        if max_iters is not None:
            raise SamplerError("max_iters is the automatic budget's cap; with a fixed number of sweeps (iters) "
                               "leave it out.")
        budget = Budget(iters=check_setting("iters", iters),
                        burn_in=None if burn_in is None else check_setting("burn_in", burn_in))
    seed = fresh_seed() if seed is None else seed
    description = {**(data or {}), "data_sha256": data_fingerprint(X)}
    return RunSpec(prior=prior, niw=niw, n_points=int(X.shape[0]), dim=int(X.shape[1]), n_chains=n_chains,
                   inits=tuple(resolve_inits(init, n_chains)), budget=budget, thin=values["thin"], seed=seed,
                   n_jobs=values["n_jobs"], split_merge=values["split_merge"], standardize=bool(standardize),
                   data=description, similarity=bool(similarity))

"""Several chains of the sampler, run side by side, and the container that holds them.

>>> chains = run_chains(X, PowerCRP(1, 1.4), resolve_niw(X), n_chains=4, iters=2000, burn_in=1000, thin=5,
...                     seed=0, init=["one", "kmeans:10", "random:20"])
>>> chains.K.shape, chains.labels.shape          # (4, 2000), (4, 200, N)
>>> chains.diagnostics()["K"]["rhat"]            # do the chains agree?
>>> chains.save("run.npz"); ChainSet.load("run.npz")

Chains run in threads (joblib, ``prefer="threads"``: the numba kernels release the GIL), each
with its own seed stream spawned from one ``SeedSequence(seed)``, so a run is reproducible from
its seed whatever the number of threads. Starts may differ per chain: chains from different starts
that agree (R-hat near 1) are the evidence that the results depend on the model, not on the start.

:func:`run_config` is the one shape of a run's settings (prior, NIW, schedule, seeds, moves,
starts, data) for the CLI, the app, cross validation and the reproduction.
"""

import io
import json
import os
import time
import warnings
from dataclasses import dataclass, field

import numpy as np

from .files import FileRefused, atomic_write, npz_bytes_needed, open_npz, read_npz_array
from .memory_plan import run_memory_plan
from .sampler import SamplerError, check_memory, check_schedule, keep_schedule, label_dtype, parse_init, run

# Starts used per chain when none is given, cycled: k-means++ (a good start, and the single-chain
# default), everything in one cluster (under-dispersed in K) and 20 random clusters
# (over-dispersed). Chains from such different starts show start dependence instead of hiding it.
DEFAULT_INITS = ("kmeans:10", "one", "random:20")

# The default run, defined once for `pcrp run` and PCRPMixture: four chains (R-hat needs two or more, and four
# from different starts is the usual check, Vehtari et al. 2021, that the result does not depend on the start),
# 2,000 sweeps of which the first 1,000 are burn-in, every 5th kept (200 draws per chain), all cores.
DEFAULT_CHAINS = 4
DEFAULT_ITERS = 2000
DEFAULT_BURN_IN = 1000
DEFAULT_THIN = 5
DEFAULT_N_JOBS = -1

SM_STATS = ("splits_proposed", "splits_accepted", "merges_proposed", "merges_accepted")

# Keys of a saved ChainSet (RESULT.npz may hold more: see pcrp.cli).
_ARRAYS = ("K", "log_joint", "labels", "kept_sweeps", "seconds_per_sweep", "split_merge_stats",
           "split_merge_history")


class ChainFileError(FileRefused):
    """A file :meth:`ChainSet.load` will not read: not an .npz, or arrays that disagree with each other or with
    the run's configuration. A ValueError; the message is one sentence naming the array and the problem."""


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
    starts = [value if isinstance(value, str) else np.asarray(value) for value in init]
    for value in starts:
        parse_init(value)
    return [starts[c % len(starts)] for c in range(n_chains)]


def chain_seeds(seed, n_chains):
    """Independent per-chain seeds (ints) spawned from ``SeedSequence(seed)``; seed None draws fresh entropy."""
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0):
        raise SamplerError(f"seed must be a whole number >= 0, or None for a fresh one (got {seed!r}).")
    children = np.random.SeedSequence(seed).spawn(n_chains)
    return [int(child.generate_state(1, dtype=np.uint64)[0]) for child in children]


def data_description(dataset, name=None):
    """What a run's configuration records about a :class:`pcrp.data.Dataset`."""
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


def run_config(prior, niw, *, iters, burn_in, thin, seed, chain_seeds=None, inits=None, moves=None, data=None):
    """The settings of a run as one JSON-serialisable dict: the one shape used everywhere.

    prior: a seating prior from pcrp.model.PRIORS: its ``prior.params()`` (``prior``, the registry name, and its own
        parameters only, e.g. ``alpha`` and ``r`` for the pCRP, ``gamma`` and ``lam`` for the MFM).
    niw: the resolved NIW hyperparameters (``m0``, ``kappa0``, ``nu0``, ``S0``).
    iters, burn_in, thin: the schedule; seed: the run's seed as given; chain_seeds: the per-chain seeds.
    inits: the start of each chain ('labels' for a given array); ``n_chains`` is its length.
    moves: the sampler's move options as passed to :class:`pcrp.sampler.Sampler` (``split_merge``, ...).
    data: a description of the data (:func:`data_description`, or at least ``n`` and ``d``).
    """
    inits = list(inits or [])
    config = {
        **prior.params(),
        **niw.as_dict(),
        "iters": int(iters),
        "burn_in": int(burn_in),
        "thin": int(thin),
        "seed": None if seed is None else int(seed),
        "n_chains": len(inits),
        "chain_seeds": [int(s) for s in (chain_seeds or [])],
        "init": [_describe_init(v) for v in inits],
        **_jsonable(moves or {}),
        **_jsonable(data or {}),
    }
    return config


def _jsonable(value):
    """Plain Python types for json.dumps (numpy scalars and arrays converted)."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    return value


@dataclass
class ChainSet:
    """Several chains of one run, with a leading chain axis (C chains, T sweeps, S kept draws, N points).

    K: (C, T) int64, clusters after each sweep.
    log_joint: (C, T) float64, unnormalised log p(z, X) after each sweep.
    labels: (C, S, N) kept label draws in :func:`pcrp.sampler.label_dtype`.
    kept_sweeps: (S,) int64, 1-based sweep of each kept draw (:func:`pcrp.sampler.keep_schedule`).
    seconds_per_sweep: (C,) kernel seconds per sweep of each chain.
    split_merge_stats: (C, 4) int64 totals [splits proposed, accepted, merges proposed, accepted].
    split_merge_history: (C, S, 4) int64, the same counts over the sweeps since the previous kept draw
        (the first kept draw counts from the start of the chain).
    config: :func:`run_config` of the run (holds the starts, seeds and schedule).
    wall_seconds: wall-clock seconds :func:`run_chains` spent sampling (NaN for a loaded file: not saved).
    """

    K: np.ndarray
    log_joint: np.ndarray
    labels: np.ndarray
    kept_sweeps: np.ndarray
    seconds_per_sweep: np.ndarray
    split_merge_stats: np.ndarray
    split_merge_history: np.ndarray
    config: dict = field(default_factory=dict)
    wall_seconds: float = float("nan")

    @property
    def n_chains(self):
        return self.K.shape[0]

    @property
    def n_kept(self):
        return self.kept_sweeps.shape[0]

    @property
    def n_points(self):
        return self.labels.shape[2]

    @property
    def burn_in(self):
        return int(self.config.get("burn_in", 0))

    @property
    def inits(self):
        return list(self.config.get("init", []))

    @property
    def kept_K(self):
        """(C, S) K at the kept sweeps: the draws that diagnostics and summaries use."""
        return self.K[:, self.kept_sweeps - 1]

    @property
    def kept_log_joint(self):
        """(C, S) log joint at the kept sweeps."""
        return self.log_joint[:, self.kept_sweeps - 1]

    def pooled_labels(self):
        """(C * S, N) all kept draws, chain after chain."""
        return self.labels.reshape(-1, self.n_points)

    def diagnostics(self):
        """R-hat, bulk and tail ESS and MCSE of K and of the log joint over the kept draws, pooled and
        per chain (:func:`pcrp.summary.chain_diagnostics`), as a JSON-serialisable dict."""
        from .summary import chain_diagnostics

        return {
            "K": chain_diagnostics(self.kept_K),
            # rounded to 1e-6 nats: the same partition's log joint differs in its last bits between the
            # rank-one updates and a recomputation, and rank-normalised R-hat would rank that rounding noise
            "log_joint": chain_diagnostics(np.round(self.kept_log_joint, 6)),
            "draws": f"{self.n_kept} kept draws per chain (sweeps {self.burn_in + 1}-{int(self.K.shape[1])}, "
                     f"thin {self.config.get('thin', 1)}), {self.n_chains} chain(s)",
        }

    def to_inference_data(self, observed=None, labels=True):
        """The kept draws as ArviZ InferenceData.

        posterior: ``K`` and ``log_joint`` (chain, draw), the draw coordinate = the 1-based sweep of each kept
        draw, so ``az.summary(idata)`` lists exactly these two; labels (when ``labels``): ``labels`` (chain, draw,
        point) in a group of its own, ``idata.labels`` (cluster codes are arbitrary per draw: R-hat or ESS of a
        label means nothing); sample_stats: split-merge proposals and acceptances since the previous kept draw
        (chain, draw); observed_data: ``X`` (point, feature), the data the sampler saw, when ``observed`` (N, d)
        is given; attrs: the run configuration as JSON.
        """
        import arviz as az
        import xarray as xr

        coords = {"chain": np.arange(self.n_chains), "draw": self.kept_sweeps}
        history = self.split_merge_history
        attrs = {"config": json.dumps(self.config), "inference_library": "pcrp"}
        groups = {}
        if observed is not None:
            observed = np.asarray(observed, dtype=float)
            if observed.ndim != 2 or observed.shape[0] != self.n_points:
                raise ValueError(f"observed must be the ({self.n_points}, d) data of the run (got shape "
                                 f"{observed.shape}).")
            groups["observed_data"] = {"X": observed}
        idata = az.from_dict(
            posterior={"K": self.kept_K, "log_joint": self.kept_log_joint},
            sample_stats={name: history[:, :, j] for j, name in enumerate(SM_STATS)},
            coords={**coords, "point": np.arange(self.n_points),
                    "feature": np.arange(0 if observed is None else observed.shape[1])},
            dims={"X": ["point", "feature"]},
            attrs=attrs,
            **groups,
        )
        if labels:
            dataset = xr.Dataset({"labels": (("chain", "draw", "point"), self.labels)},
                                 coords={**coords, "point": np.arange(self.n_points)}, attrs=attrs)
            with warnings.catch_warnings():  # "labels" is not one of ArviZ's standard group names, on purpose
                warnings.simplefilter("ignore", UserWarning)
                idata.add_groups(labels=dataset)
        return idata

    def save(self, path, extra=None):
        """Write an .npz file (exactly at ``path``) that :meth:`load` reads without unpickling.

        extra: further named arrays to store alongside (the CLI adds psm, point_labels, ...).
        The file is replaced only once complete (:func:`pcrp.files.atomic_write`): on a full disk or any other
        error an earlier file at ``path`` is left as it was, and the OSError is raised.
        """
        atomic_write(path, lambda f: self._write(f, extra), "wb")

    def netcdf_bytes(self):
        """K and the log joint at the kept draws as a NetCDF (version 3) file, as ``bytes`` (for a download).

        Variables ``K`` (int32) and ``log_joint`` (float64), both (chain, draw) with C chains and S kept draws;
        coordinates ``chain`` (0..C-1) and ``draw`` (the 1-based sweep of each kept draw, as in
        :meth:`to_inference_data`); attribute ``config``, the run configuration as JSON. Read it back with
        ``xarray.open_dataset(path)``; ``arviz.convert_to_inference_data(xarray.open_dataset(path))`` makes it
        the posterior group of an InferenceData.
        """
        import xarray as xr

        dataset = xr.Dataset(
            {"K": (("chain", "draw"), self.kept_K.astype(np.int32)),
             "log_joint": (("chain", "draw"), self.kept_log_joint.astype(np.float64))},
            coords={"chain": np.arange(self.n_chains, dtype=np.int32), "draw": self.kept_sweeps.astype(np.int32)},
            attrs={"config": json.dumps(self.config), "inference_library": "pcrp"},
        )
        return bytes(dataset.to_netcdf(engine="scipy"))  # without a path xarray returns a memoryview

    def npz_bytes(self, extra=None):
        """The file :meth:`save` writes, as bytes (for a download)."""
        buffer = io.BytesIO()
        self._write(buffer, extra)
        return buffer.getvalue()

    def _write(self, f, extra):
        arrays = {name: getattr(self, name) for name in _ARRAYS}
        arrays["config"] = np.array(json.dumps(self.config))
        arrays.update(extra or {})
        np.savez_compressed(f, **arrays)

    @classmethod
    def load(cls, path):
        """Read a file written by :meth:`save` (``path``: a path or an open binary file), never unpickling.

        A single-chain file of the old layout (K of shape (T,)) gets a chain axis of length one. Every array is
        checked (:func:`check_result_arrays`) before a ChainSet is made: its dtype, its shape against the others
        and against the configuration, and its values. Raises :class:`ChainFileError` (a ValueError) with one
        sentence for a file that is not an .npz (or is cut short, or holds Python objects) or whose arrays are
        not a run's; SamplerError when the arrays would not fit in memory; OSError when the file cannot be read.
        """
        name = str(path) if isinstance(path, (str, os.PathLike)) else str(getattr(path, "name", "the file"))
        what = "a pcrp result file"
        try:
            with open_npz(path, name, what) as zf:
                keys = _ARRAYS + ("config",)
                # the arrays, and the sorted copy of the labels that the K / labels check makes
                need = npz_bytes_needed(zf, keys, name, what) + npz_bytes_needed(zf, ("labels",), name, what)
                check_memory(need, f"Reading {name}", "Free memory, or read it on a machine with more.")
                present = {f"{key}.npy" for key in keys} & set(zf.namelist())
                missing = [key for key in ("K", "log_joint", "labels", "kept_sweeps", "config")
                           if f"{key}.npy" not in present]
                if missing:
                    raise ChainFileError(f"{name} is not a pcrp result file: it lacks {', '.join(missing)}.")
                data = {key: read_npz_array(zf, key, name, what) for key in keys if f"{key}.npy" in present}
        except ChainFileError:
            raise
        except FileRefused as err:
            raise ChainFileError(f"{err}.") from None
        config = _read_config(data.pop("config"), name)
        data = check_result_arrays(data, config, name)
        return cls(config=config, **data)


# What each array of a result file holds: dtype kinds, in words, and its axes (C chains, T sweeps, S kept draws,
# N points); the sizes come from K (C, T), kept_sweeps (S) and labels (N).
_LAYOUT = {
    "K": ("iu", "whole numbers", ("C", "T")),
    "log_joint": ("f", "floating-point numbers", ("C", "T")),
    "labels": ("iu", "whole numbers (cluster codes)", ("C", "S", "N")),
    "kept_sweeps": ("iu", "whole numbers (sweep numbers)", ("S",)),
    "seconds_per_sweep": ("f", "floating-point numbers", ("C",)),
    "split_merge_stats": ("iu", "whole numbers (counts)", ("C", 4)),
    "split_merge_history": ("iu", "whole numbers (counts)", ("C", "S", 4)),
}
_AXES = {"C": ("chains", "K"), "T": ("sweeps", "K"), "S": ("kept draws", "kept_sweeps"), "N": ("points", "labels")}

# Rows of label draws counted at once by the K / labels check (bounds its working memory).
_DISTINCT_CHUNK = 2**22


def _read_config(array, name):
    """The run configuration: a JSON object stored as a 0-d string array."""
    if array.shape != () or array.dtype.kind != "U":
        raise ChainFileError(f"{name} is not a pcrp result file: config must be one JSON string, but it holds "
                             f"{array.dtype} of shape {array.shape}.")
    try:
        config = json.loads(str(array))
    except ValueError as err:
        raise ChainFileError(f"{name} is not a pcrp result file: config is not valid JSON ({err}).") from None
    if not isinstance(config, dict):
        raise ChainFileError(f"{name} is not a pcrp result file: config must be a JSON object of settings, "
                             f"not {type(config).__name__}.")
    return config


def _distinct_per_row(rows):
    """(R,) the number of distinct values in each row of ``rows`` (R, N), in chunks of rows."""
    out = np.empty(rows.shape[0], dtype=np.int64)
    step = max(1, _DISTINCT_CHUNK // max(rows.shape[1], 1))
    for start in range(0, rows.shape[0], step):
        block = np.sort(rows[start:start + step], axis=1)
        out[start:start + step] = 1 + np.count_nonzero(block[:, 1:] != block[:, :-1], axis=1)
    return out


def check_result_arrays(arrays, config, name="the file"):
    """The arrays of a result file as a ChainSet holds them, or ChainFileError saying what is wrong in one sentence.

    arrays: {name: array} of the names in ``_ARRAYS`` (K, log_joint, labels and kept_sweeps at least); a
    single-chain file of the old layout (K (T,), labels (S, N), ...) gets a chain axis of length one and the
    optional arrays their defaults (seconds_per_sweep NaN, split-merge counts 0).
    Checks, in this order: each dtype (K, labels, kept_sweeps and the split-merge counts integer, log_joint and
    seconds_per_sweep floating point); the number of dimensions; the sizes against the configuration (``n_chains``
    chains of K, ``n`` points of labels, at most ``iters`` sweeps of K); every shape against K (C, T),
    kept_sweeps (S) and labels (N); kept_sweeps increasing, within 1..T, after ``burn_in`` and the start of the
    configuration's schedule (:func:`pcrp.sampler.keep_schedule`; a stopped live run keeps a prefix of it);
    K from 1 to N, labels from 0 to N - 1, counts >= 0; and K at each kept sweep equal to the number of distinct
    labels of that draw.
    """
    def refuse(problem):
        raise ChainFileError(f"{name} is not a pcrp result file: {problem}.")

    data = dict(arrays)
    for key, array in data.items():
        kinds, words, axes = _LAYOUT[key]
        if array.dtype.kind not in kinds:
            refuse(f"{key} must hold {words}, but it holds {array.dtype}")
    single = data["K"].ndim == 1
    for key, array in data.items():
        axes = _LAYOUT[key][2]
        if single and axes[0] == "C" and array.ndim == len(axes) - 1:
            array = data[key] = array[None]
        if array.ndim != len(axes):
            words = ", ".join(_AXES[a][0] if isinstance(a, str) else str(a) for a in axes)
            refuse(f"{key} must have {len(axes)} dimension{'s' if len(axes) > 1 else ''} ({words}), "
                   f"but it has {array.ndim}")
    (C, T), S, N = data["K"].shape, data["kept_sweeps"].shape[0], data["labels"].shape[2]
    sizes = {"C": C, "T": T, "S": S, "N": N}
    for axis, size in sizes.items():
        if size == 0:
            refuse(f"{_AXES[axis][1]} has no {_AXES[axis][0]}")

    settings = {}
    for key in ("n_chains", "n", "iters", "burn_in", "thin"):
        value = config.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
            refuse(f"the config's {key} must be a whole number >= 0 (got {value!r})")
        settings[key] = value
    if settings["n_chains"] and settings["n_chains"] != C:
        refuse(f"K has {C} chains but the config says n_chains = {settings['n_chains']}")
    if settings["n"] is not None and settings["n"] != N:
        refuse(f"labels has {N} points per draw but the config says n = {settings['n']}")
    if settings["iters"] is not None and T > settings["iters"]:
        refuse(f"K has {T} sweeps but the config says iters = {settings['iters']}")

    for key, array in data.items():
        axes = _LAYOUT[key][2]
        expected = tuple(sizes[a] if isinstance(a, str) else a for a in axes)
        if array.shape != expected:
            words = ", ".join(_AXES[a][0] if isinstance(a, str) else "4 counts" for a in axes)
            sources = " and ".join(dict.fromkeys(_AXES[a][1] for a in axes if isinstance(a, str) and _AXES[a][1] != key))
            refuse(f"{key} has shape {array.shape}, but ({words}) must be {expected} to match {sources}")

    kept = data["kept_sweeps"].astype(np.int64)
    if np.any(np.diff(kept) <= 0):
        at = int(np.argmax(np.diff(kept) <= 0))
        refuse(f"kept_sweeps must increase, but sweep {kept[at + 1]} follows sweep {kept[at]}")
    if kept[0] < 1 or kept[-1] > T:
        refuse(f"kept_sweeps must be sweeps from 1 to {T} (K's sweeps), but they run from {kept[0]} to {kept[-1]}")
    burn_in, thin, iters = settings["burn_in"], settings["thin"], settings["iters"]
    if burn_in is not None and kept[0] <= burn_in:
        refuse(f"kept_sweeps starts at sweep {kept[0]}, within the config's burn-in of {burn_in} sweeps")
    if None not in (iters, burn_in, thin):
        schedule = keep_schedule(iters, burn_in, thin) if thin > 0 else np.zeros(0, np.int64)
        if S > schedule.size or not np.array_equal(kept, schedule[:S]):
            refuse(f"kept_sweeps ({S} draws from sweep {kept[0]}) is not the config's schedule (iters {iters}, "
                   f"burn_in {burn_in}, thin {thin}: {schedule.size} draws from sweep "
                   f"{schedule[0] if schedule.size else 'none'})")

    K, labels = data["K"], data["labels"]
    if K.min() < 1 or K.max() > N:
        refuse(f"K must count clusters from 1 to the {N} points, but it holds {K.min() if K.min() < 1 else K.max()}")
    if labels.min() < 0 or labels.max() >= N:
        refuse(f"labels must be cluster codes from 0 to {N - 1} (one less than the {N} points), but they hold "
               f"{labels.min() if labels.min() < 0 else labels.max()}")
    for key in ("split_merge_stats", "split_merge_history"):
        if key in data and data[key].size and data[key].min() < 0:
            refuse(f"{key} must be counts >= 0, but it holds {data[key].min()}")
    distinct = _distinct_per_row(labels.reshape(C * S, N)).reshape(C, S)
    kept_K = K[:, kept - 1]
    if not np.array_equal(distinct, kept_K):
        c, s = np.argwhere(distinct != kept_K)[0]
        refuse(f"K disagrees with labels (at sweep {kept[s]} of chain {c + 1} K is {kept_K[c, s]}, but the labels "
               f"of that draw form {distinct[c, s]} clusters)")

    data.setdefault("seconds_per_sweep", np.full(C, np.nan))
    data.setdefault("split_merge_stats", np.zeros((C, 4), dtype=np.int64))
    data.setdefault("split_merge_history", np.zeros((C, S, 4), dtype=np.int64))
    return data


def _check_sampler_options(options):
    import inspect

    from .sampler import Sampler

    known = [name for name, p in inspect.signature(Sampler).parameters.items()
             if p.kind == p.KEYWORD_ONLY and name not in ("init", "seed")]
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise SamplerError(f"unknown sampler option {', '.join(unknown)}; the sampler accepts: {', '.join(known)}.")


def _run_one(X, prior, niw, iters, burn_in, thin, seed, init, index, callback, sampler_options, work=None,
             labels_out=None):
    def report(sampler, done):
        if callback is not None:
            callback(index, done)

    chain = run(X, prior, niw, iters=iters, burn_in=burn_in, thin=thin, seed=seed, init=init, callback=report,
                work=work, labels_out=labels_out, **sampler_options)
    history = np.diff(chain.split_merge_at_kept, axis=0, prepend=np.zeros((1, 4), dtype=np.int64))
    return chain, history


def run_chains(X, prior, niw, *, n_chains=4, init=None, iters, burn_in=0, thin=1, seed=None, n_jobs=-1,
               data=None, callback=None, work=None, **sampler_options):
    """Run ``n_chains`` chains of the sampler in threads; returns a :class:`ChainSet`.

    X: (N, d) data; prior: a seating prior; niw: resolved NIW hyperparameters.
    init: one start for every chain or a list cycled over the chains (:func:`resolve_inits`);
        None cycles :data:`DEFAULT_INITS`.
    iters, burn_in, thin: the schedule; draws are kept at :func:`pcrp.sampler.keep_schedule`.
    seed: int >= 0 or None; chain c uses the c-th seed spawned from it (:func:`chain_seeds`).
    n_jobs: threads (joblib semantics: -1 = all cores, None = 1 unless inside a joblib context).
    data: description of the data for the configuration (:func:`data_description`); default n and d.
    callback(chain_index, sweeps_done): called from the worker threads after each chunk of sweeps.
    work: a :class:`pcrp.compute.WorkTicket` (the app's): the chains' work_cost counts against its budget,
        their kernel calls take its compute slots, and its cancellation stops them (see :func:`pcrp.sampler.run`).
    sampler_options: passed to :class:`pcrp.sampler.Sampler` (``split_merge=...`` and other moves)
        and recorded in the configuration.
    """
    import joblib

    if isinstance(n_chains, bool) or not isinstance(n_chains, (int, np.integer)) or n_chains < 1:
        raise SamplerError(f"n_chains must be a whole number >= 1 (got {n_chains!r}).")
    if n_jobs is not None and (isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)) or n_jobs == 0):
        raise SamplerError(f"n_jobs must be a whole number: threads to use, or -1 for all cores (got {n_jobs!r}).")
    iters, burn_in, thin = check_schedule(iters, burn_in, thin)  # also refuses a schedule that keeps no draw
    inits = resolve_inits(init, n_chains)
    seeds = chain_seeds(seed, n_chains)
    X = np.ascontiguousarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise SamplerError(f"X must be an (N, d) array (got shape {X.shape}).")
    N, d = X.shape
    threads = min(n_jobs, n_chains) if n_jobs is not None and n_jobs > 0 else n_jobs
    # every chain's kept draws and the samplers running at once, before any is allocated
    plan = run_memory_plan(N, d, n_chains=n_chains, iters=iters, burn_in=burn_in, thin=thin, inits=inits,
                           n_jobs=n_jobs)
    check_memory(plan.parts["draws"] + plan.parts["samplers"],
                 f"This run of {n_chains} chain(s) ({iters:,} sweeps, {(iters - burn_in) // thin:,} kept "
                 f"draws of {N:,} labels each)", "Use fewer sweeps (iters) or keep fewer draws (a larger thin).")
    # the chains write their kept draws straight into one (C, kept, N) array: no stacking copy at the end
    all_labels = np.empty((n_chains, keep_schedule(iters, burn_in, thin).size, N), dtype=label_dtype(N))
    sampler_options.setdefault("split_merge", True)
    _check_sampler_options(sampler_options)
    if work is not None:
        from .compute import work_cost  # (issue 32: the one cost formula of every work budget)

        work.reserve(work_cost(N, d, iters, chains=n_chains), f"{n_chains} chain(s) of {iters:,} sweeps")
    tasks = [joblib.delayed(_run_one)(X, prior, niw, iters, burn_in, thin, seeds[c], inits[c], c, callback,
                                      sampler_options, work, all_labels[c]) for c in range(n_chains)]
    started = time.perf_counter()
    results = joblib.Parallel(n_jobs=threads, prefer="threads")(tasks)
    wall_seconds = time.perf_counter() - started
    chains = [chain for chain, _ in results]
    moves = dict(sampler_options)
    moves["split_merge"] = int(moves["split_merge"])
    if data is None:
        data = {"n": int(X.shape[0]), "d": int(X.shape[1])}
    config = run_config(prior, niw, iters=iters, burn_in=burn_in, thin=thin, seed=seed, chain_seeds=seeds,
                        inits=inits, moves=moves, data=data)
    N = X.shape[0]
    return ChainSet(
        K=np.stack([c.K for c in chains]),
        log_joint=np.stack([c.log_joint for c in chains]),
        labels=all_labels,
        kept_sweeps=chains[0].kept_sweeps.copy(),
        seconds_per_sweep=np.array([c.seconds_per_sweep for c in chains]),
        split_merge_stats=np.stack([np.asarray(c.split_merge_stats[:4], dtype=np.int64) for c in chains]),
        split_merge_history=np.stack([history for _, history in results]),
        config=config,
        wall_seconds=wall_seconds,
    )

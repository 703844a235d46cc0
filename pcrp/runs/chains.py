"""Several chains of the sampler, run side by side, and the container that holds them.

>>> spec = make_run_spec(X, prior="pcrp", prior_params={"r": 1.4}, seed=0)   # pcrp.runs.run_spec
>>> chains = run_chains(X, spec)                 # 4 chains from unlike starts, the automatic budget
>>> chains.stop["reason"]                        # why it stopped: converged, or the cap
>>> chains.K.shape, chains.labels.shape          # (4, T), (4, S, N)
>>> chains.diagnostics()["K"]["rhat"]            # do the chains agree?
>>> chains.save("run.npz"); ChainSet.load("run.npz")

The :class:`pcrp.runs.run_spec.RunSpec` is :func:`run_chains`' only description of the run; it is saved as the
ChainSet's ``config`` (with why the chains stopped) and a saved run reruns exactly from it. Chains run in threads
(the numba kernels release the GIL), each with its own seed stream spawned from the spec's seed, so a run is
reproducible from its seed whatever the number of threads. Starts differ per chain: chains from different starts
that agree (R-hat near 1) are the evidence that the results depend on the model, not on the start.
"""

import io
import os
import threading
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from .budget import judge, stop_reason, storage_rows
from ..basics.files import FileRefused, atomic_write, npz_bytes_needed, open_npz, read_npz_array
from ..basics.json_text import dumps
from .memory_plan import check_run_memory
from ..basics.dtypes import check_memory, label_dtype
from .result_file import (ARRAYS, ChainFileError, check_result_arrays, narrowest_labels, read_config,
                          write_npz)
from ..sampling.recorder import Chain, ChainRecorder, ChainStopped, keep_schedule
from ..sampling.sampler import Sampler, warm_up_sweeps
from ..basics.errors import SamplerError

SM_STATS = ("splits_proposed", "splits_accepted", "merges_proposed", "merges_accepted")

@dataclass(repr=False)
class ChainSet:
    """Several chains of one run, with a leading chain axis (C chains, T sweeps, S kept draws, N points).

    K: (C, T) int64, clusters after each sweep.
    log_joint: (C, T) float64, unnormalised log p(z, X) after each sweep.
    labels: (C, S, N) kept label draws in :func:`pcrp.sampling.sampler.label_dtype`.
    kept_sweeps: (S,) int64, 1-based sweep of each kept draw (:func:`pcrp.sampling.sampler.keep_schedule`).
    seconds_per_sweep: (C,) kernel seconds per sweep of each chain.
    split_merge_stats: (C, 4) int64 totals [splits proposed, accepted, merges proposed, accepted].
    split_merge_history: (C, S, 4) int64, the same counts over the sweeps since the previous kept draw
        (the first kept draw counts from the start of the chain).
    config: the run's specification (:meth:`pcrp.runs.run_spec.RunSpec.as_dict`), with the schedule it ran (``iters``,
        ``burn_in``, ``thin``) and why it stopped (``stop``: :func:`pcrp.runs.budget.stop_reason` and the verdict).
    wall_seconds: wall-clock seconds :func:`run_chains` spent sampling (NaN for a loaded file: not saved).

    Diagnostics of K and the log joint (and their ArviZ export) use every sweep after burn-in: both are recorded
    at every sweep; only the label draws are thinned, for memory.
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
    def stop(self):
        """Why the chains stopped: {"reason": sentence, "converged": bool or None, "verdict": ...} ({} for files
        written before the automatic budget)."""
        return dict(self.config.get("stop") or {})

    @property
    def K_after_burn_in(self):
        """(C, T - burn_in) K at every sweep after burn-in: what diagnostics, mean K and modes use."""
        return self.K[:, self.burn_in:]

    @property
    def log_joint_after_burn_in(self):
        """(C, T - burn_in) log joint at every sweep after burn-in."""
        return self.log_joint[:, self.burn_in:]

    @property
    def kept_K(self):
        """(C, S) K at the kept sweeps (those whose labels were kept)."""
        return self.K[:, self.kept_sweeps - 1]

    @property
    def kept_log_joint(self):
        """(C, S) log joint at the kept sweeps."""
        return self.log_joint[:, self.kept_sweeps - 1]

    def overview(self):
        """[(label, value)] of what a reader wants first: the prior, N, chains x sweeps, mean K, R-hat of K and of
        the log joint, and why the chains stopped (the text and HTML representations show it)."""
        from ..summaries.summary import chains_agree

        from ..model import prior_of

        diag = self.diagnostics()
        agree = chains_agree(diag["K"]) and chains_agree(diag["log_joint"])
        rhat = ", ".join(f"{name} {diag[key]['rhat']:.3f}" for key, name in (("K", "K"), ("log_joint", "log joint")))
        stop = self.stop.get("reason", "")
        return [("prior", prior_of(self.config).label()), ("N", f"{self.n_points:,}"),
                ("chains", f"{self.n_chains} x {int(self.K.shape[1]):,} sweeps (burn-in {self.burn_in:,})"),
                ("mean K", f"{diag['K']['mean']:.2f}"),
                ("R-hat", f"{rhat} ({'the chains agree' if agree else 'the chains disagree'})"),
                ("stopped", stop.split(" after ")[0] if stop else "not recorded")]

    def __repr__(self):
        return "ChainSet(" + "; ".join(f"{k}: {v}" for k, v in self.overview()) + ")"

    def _repr_html_(self):
        import html

        rows = "".join(f"<tr><th style='text-align:left'>{html.escape(k)}</th><td style='text-align:left'>"
                       f"{html.escape(v)}</td></tr>" for k, v in self.overview())
        return f"<table><caption>pcrp ChainSet</caption>{rows}</table>"

    def pooled_labels(self):
        """(C * S, N) all kept draws, chain after chain."""
        return self.labels.reshape(-1, self.n_points)

    def diagnostics(self):
        """R-hat, bulk and tail ESS and MCSE of K and of the log joint over every sweep after burn-in, pooled and
        per chain (:func:`pcrp.summaries.summary.chain_diagnostics`), as a JSON-serialisable dict: the numbers that
        ``arviz.summary(self.to_inference_data())`` prints. (The log joint is recorded rounded to 1e-6 nats:
        :data:`pcrp.sampling.sampler.LOG_JOINT_DECIMALS`.)"""
        from ..summaries.summary import chain_diagnostics

        T = int(self.K.shape[1])
        return {
            "K": chain_diagnostics(self.K_after_burn_in),
            "log_joint": chain_diagnostics(self.log_joint_after_burn_in),
            "draws": f"{T - self.burn_in:,} sweeps per chain after burn-in (sweeps {self.burn_in + 1:,}-{T:,}; "
                     f"labels kept every {self.config.get('thin', 1)}: {self.n_kept:,} draws), {self.n_chains} chain(s)",
        }

    def to_inference_data(self, observed=None, labels=True):
        """The chains as ArviZ InferenceData.

        posterior: ``K`` and ``log_joint`` (chain, draw) at every sweep after burn-in, the draw coordinate = the
        1-based sweep, so ``az.summary(idata)`` lists exactly these two and prints the R-hat and ESS of
        :meth:`diagnostics`; sample_stats: split-merge proposals and acceptances since the previous kept draw
        (chain, draw) at the kept sweeps; labels (when ``labels``): ``labels`` (chain, draw, point) at the kept
        sweeps in a group of its own, ``idata.labels`` (cluster codes are arbitrary per draw: R-hat or ESS of a
        label means nothing); observed_data: ``X`` (point, feature), the data the sampler saw, when ``observed``
        (N, d) is given; attrs: the run configuration as JSON.
        """
        import arviz as az
        import xarray as xr

        sweeps = np.arange(self.burn_in + 1, int(self.K.shape[1]) + 1)
        chain = np.arange(self.n_chains)
        kept = {"chain": chain, "draw": self.kept_sweeps}
        attrs = {"config": dumps(self.config), "inference_library": "pcrp"}
        groups = {}
        if observed is not None:
            observed = np.asarray(observed, dtype=float)
            if observed.ndim != 2 or observed.shape[0] != self.n_points:
                raise ValueError(f"observed must be the ({self.n_points}, d) data of the run (got shape "
                                 f"{observed.shape}).")
            groups["observed_data"] = {"X": observed}
        idata = az.from_dict(
            posterior={"K": self.K_after_burn_in, "log_joint": self.log_joint_after_burn_in},
            coords={"chain": chain, "draw": sweeps, "point": np.arange(self.n_points),
                    "feature": np.arange(0 if observed is None else observed.shape[1])},
            dims={"X": ["point", "feature"]},
            attrs=attrs,
            **groups,
        )
        history = self.split_merge_history
        extra = {"sample_stats": xr.Dataset({name: (("chain", "draw"), history[:, :, j])
                                             for j, name in enumerate(SM_STATS)}, coords=kept, attrs=attrs)}
        if labels:  # "labels" is not one of ArviZ's standard group names, on purpose
            extra["labels"] = xr.Dataset({"labels": (("chain", "draw", "point"), self.labels)},
                                         coords={**kept, "point": np.arange(self.n_points)}, attrs=attrs)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            idata.add_groups(extra)
        return idata

    def save(self, path, extra=None):
        """Write an .npz file (exactly at ``path``) that :meth:`load` reads without unpickling.

        extra: further named arrays to store alongside (the CLI adds psm, point_labels, ...).
        The file is replaced only once complete (:func:`pcrp.basics.files.atomic_write`): on a full disk or any other
        error an earlier file at ``path`` is left as it was, and the OSError is raised.
        """
        atomic_write(path, lambda f: self._write(f, extra), "wb")

    def netcdf_bytes(self):
        """K and the log joint at every sweep after burn-in as a NetCDF (version 3) file, as ``bytes`` (for a
        download): the posterior group of :meth:`to_inference_data`.

        Variables ``K`` (int32) and ``log_joint`` (float64), both (chain, draw) with C chains and T - burn_in sweeps;
        coordinates ``chain`` (0..C-1) and ``draw`` (the 1-based sweep, as in :meth:`to_inference_data`);
        attribute ``config``, the run configuration as JSON. Read it back with
        ``xarray.open_dataset(path)``; ``arviz.convert_to_inference_data(xarray.open_dataset(path))`` makes it
        the posterior group of an InferenceData.
        """
        import xarray as xr

        dataset = xr.Dataset(
            {"K": (("chain", "draw"), self.K_after_burn_in.astype(np.int32)),
             "log_joint": (("chain", "draw"), self.log_joint_after_burn_in.astype(np.float64))},
            coords={"chain": np.arange(self.n_chains, dtype=np.int32),
                    "draw": np.arange(self.burn_in + 1, int(self.K.shape[1]) + 1, dtype=np.int32)},
            attrs={"config": dumps(self.config), "inference_library": "pcrp"},
        )
        return bytes(dataset.to_netcdf(engine="scipy"))  # without a path xarray returns a memoryview

    def npz_bytes(self, extra=None):
        """The file :meth:`save` writes, as bytes (for a download)."""
        buffer = io.BytesIO()
        self._write(buffer, extra)
        return buffer.getvalue()

    def _write(self, f, extra):
        arrays = {name: getattr(self, name) for name in ARRAYS}
        arrays["labels"] = narrowest_labels(self.labels)
        arrays["config"] = np.array(dumps(self.config))
        arrays.update(extra or {})
        write_npz(f, arrays)

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
                keys = ARRAYS + ("config",)
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
        config = read_config(data.pop("config"), name)
        data = check_result_arrays(data, config, name)
        N = data["labels"].shape[2]
        if data["labels"].dtype.itemsize < label_dtype(N).itemsize:  # stored narrower (narrowest_labels)
            data["labels"] = data["labels"].astype(label_dtype(N))
        return cls(config=config, **data)


@dataclass(frozen=True)
class Progress:
    """What :func:`run_chains` tells ``on_block`` at a checkpoint: sweeps per chain so far, the most the budget
    allows, seconds since sampling began, and the :class:`pcrp.runs.budget.Verdict` of the sweeps after burn-in (None
    while every sweep so far is burn-in)."""

    sweeps: int
    max_sweeps: int
    seconds: float
    verdict: object


class _LabelStore:
    """The label draws the chains keep, in (C, capacity, N) buffers: rows hold the same sweeps for every chain.

    A fixed budget stores exactly its keep schedule (burn_in + thin, burn_in + 2 thin, ...). The automatic budget
    stores the multiples of the current thinning and, at each checkpoint, drops the draws that burn-in has passed
    and, when the thinning doubles, those that are not multiples of it; so the multiples of the final thinning
    after the final burn-in are all there when the chains stop.
    """

    def __init__(self, spec):
        self.budget = spec.budget
        self.thin, self.most = spec.thin, spec.max_kept
        C, N = spec.n_chains, spec.n_points
        rows = storage_rows(spec.budget, spec.thin, self.most)
        self.labels = np.empty((C, rows, N), dtype=label_dtype(N))
        self.sm = np.empty((C, rows, 4), dtype=np.int64)
        self.sweeps = np.empty(rows, dtype=np.int64)
        self.rows = 0
        self.fixed_schedule = None if spec.budget.auto else keep_schedule(
            spec.budget.iters, spec.budget.burn_in_at(spec.budget.iters), spec.thin)

    def burn_in(self, sweeps):
        return self.budget.burn_in_at(sweeps, self.thin)

    def prepare(self, done, until):
        """Before the chains run from ``done`` to ``until`` sweeps: (automatic budget) raise the thinning so that
        at ``until`` at most ``most`` draws follow burn-in, and drop what neither that nor the burn-in keeps.
        Returns the (until - done,) mask of the sweeps to store."""
        span = np.arange(done + 1, until + 1)
        if self.fixed_schedule is not None:
            return np.isin(span, self.fixed_schedule)
        while (until - self.burn_in(until)) // self.thin > self.most:
            self.thin *= 2
        keep = (self.sweeps[:self.rows] > self.burn_in(done)) & (self.sweeps[:self.rows] % self.thin == 0)
        n = int(keep.sum())
        self.labels[:, :n], self.sm[:, :n] = self.labels[:, :self.rows][:, keep], self.sm[:, :self.rows][:, keep]
        self.sweeps[:n] = self.sweeps[:self.rows][keep]
        self.rows = n
        return span % self.thin == 0

    def stored(self, mask, start):
        """Record that the sweeps ``mask`` marks (of those after ``start``) were stored in the next rows."""
        new = start + 1 + np.flatnonzero(mask)
        self.sweeps[self.rows:self.rows + new.size] = new
        self.rows += new.size

    def kept(self, sweeps):
        """(burn_in, thin, rows) of the draws kept when the chains stop after ``sweeps``: rows is a slice, since the
        stored sweeps increase and the kept ones are those after burn-in (so the kept draws are a view of the
        buffers, never a copy beside them: the memory plan counts the buffers once)."""
        burn_in = self.burn_in(sweeps)
        first = int(np.searchsorted(self.sweeps[:self.rows], burn_in, side="right"))
        return burn_in, self.thin, slice(first, self.rows)


def run_chains(X, spec, *, callback=None, on_block=None, work=None):
    """Run the chains that ``spec`` (a :class:`pcrp.runs.run_spec.RunSpec`) describes on X (N, d), in threads; returns
    a :class:`ChainSet` whose config is the spec, the schedule it ran and why it stopped.

    A fixed budget runs its sweeps; the automatic budget judges the chains (:func:`pcrp.runs.budget.judge`) at each of
    its checkpoints, the first half of the sweeps being burn-in, and stops at the first that passes, or at its
    cap (:mod:`pcrp.runs.budget`). The memory plan (``spec.memory``) is checked against the memory available before
    anything is allocated.
    callback(chain_index, sweeps_done): from the chains' threads, after each kernel call.
    on_block(progress): from this thread at each checkpoint, a :class:`Progress` (for progress lines).
    work: a :class:`pcrp.sampling.compute.WorkTicket` (the app's): the chains' point-sweeps (at the budget's most) count
        against its budget, their kernel calls take its compute slots, and its cancellation stops them.
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape != (spec.n_points, spec.dim):
        raise SamplerError(f"X must be the ({spec.n_points}, {spec.dim}) data the run was specified for "
                           f"(got shape {X.shape}).")
    C, N = spec.n_chains, spec.n_points
    check_run_memory(spec.memory, f"This run of {C} chain(s) of up to {spec.max_sweeps:,} sweeps of {N:,} points, "
                                  "with its summaries")
    if work is not None:
        from ..sampling.compute import work_cost  # the one cost formula of every work budget

        work.reserve(work_cost(N, spec.dim, spec.max_sweeps, chains=C),
                     f"{C} chain(s) of up to {spec.max_sweeps:,} sweeps")
    warm_up_sweeps(spec.niw.covariance_type)  # compile (or load from the cache) once, before the chains' threads start
    stop = threading.Event()
    started = time.perf_counter()
    store = _LabelStore(spec)

    def make(c):
        sampler = Sampler(X, spec.prior, spec.niw, split_merge=spec.split_merge, init=spec.inits[c],
                          seed=spec.chain_seeds[c])
        return ChainRecorder(sampler, spec.max_sweeps)

    def advance(c, mask, until):
        report = None if callback is None else (lambda sweeps: callback(c, sweeps))
        recorders[c].advance(until, mask, store.labels[c, store.rows:], store.sm[c, store.rows:], work=work,
                             callback=report, stop=stop)

    def all_chains(fn, *args):
        futures = [pool.submit(fn, c, *args) for c in range(C)]
        try:
            return [f.result() for f in futures]
        except BaseException:
            stop.set()  # the other chains end at their next kernel call
            for f in futures:
                try:
                    f.result()
                except (ChainStopped, Exception):
                    pass
            raise

    done = 0
    with ThreadPoolExecutor(max_workers=spec.threads, thread_name_prefix="pcrp-chain") as pool:
        recorders = all_chains(lambda c: make(c))
        for sweep in spec.budget.checkpoints():
            mask = store.prepare(done, sweep)
            all_chains(advance, mask, sweep)
            store.stored(mask, done)
            done = sweep
            burn_in = store.burn_in(sweep)
            verdict = None
            if sweep > burn_in and (spec.budget.auto or on_block is not None or sweep == spec.max_sweeps):
                verdict = judge(np.stack([r.K[burn_in:sweep] for r in recorders]),
                                np.stack([r.log_joint[burn_in:sweep] for r in recorders]), spec.budget, sweep,
                                burn_in)
            if on_block is not None:
                on_block(Progress(sweep, spec.max_sweeps, time.perf_counter() - started, verdict))
            if spec.budget.auto and verdict is not None and verdict.passed:
                break
    wall_seconds = time.perf_counter() - started
    T = done
    burn_in, thin, rows = store.kept(T)
    labels, sm = store.labels[:, rows], store.sm[:, rows]  # views: the kept rows of the buffers
    history = np.diff(sm, axis=1, prepend=np.zeros((C, 1, 4), dtype=np.int64))
    config = spec.as_dict()
    config.update(iters=int(T), burn_in=int(burn_in), thin=int(thin),
                  stop={"reason": stop_reason(spec.budget, verdict),
                        "converged": bool(verdict.passed) if spec.budget.auto else None,
                        "verdict": verdict.as_dict()})
    return ChainSet(
        K=np.stack([r.K[:T] for r in recorders]),
        log_joint=np.stack([r.log_joint[:T] for r in recorders]),
        labels=labels,
        kept_sweeps=keep_schedule(T, burn_in, thin),
        seconds_per_sweep=np.array([r.kernel_seconds / T for r in recorders]),
        split_merge_stats=np.stack([r.sampler.move_totals.copy() for r in recorders]),
        split_merge_history=history,
        config=config,
        wall_seconds=wall_seconds,
    )


def run_chain(X, prior, niw, *, iters, burn_in=0, thin=1, seed=None, split_merge=True, init="kmeans:10",
              callback=None, work=None):
    """One chain of a fixed ``iters`` sweeps, as a :class:`pcrp.sampling.sampler.Chain`: a thin call of the one way in (a
    one-chain :func:`pcrp.runs.run_spec.make_run_spec` run by :func:`run_chains`), for tests, teaching pages and
    benchmarks that want one chain's arrays without a chain axis.

    Draws are kept at sweeps burn_in + thin, burn_in + 2 thin, ... <= iters (1-based). The chain's seed is the
    first spawned from ``seed`` (:func:`pcrp.runs.run_spec.chain_seeds`). ``callback(sweeps_done)`` after each kernel
    call; ``work``: see :func:`run_chains`.
    """
    from .run_spec import make_run_spec

    spec = make_run_spec(X, prior=prior, niw=niw, n_chains=1, init=init, iters=iters, burn_in=burn_in, thin=thin,
                         seed=seed, n_jobs=1, split_merge=split_merge)
    chains = run_chains(X, spec, work=work, callback=None if callback is None else (lambda c, done: callback(done)))
    return Chain(K=chains.K[0], log_joint=chains.log_joint[0], labels=chains.labels[0],
                 kept_sweeps=chains.kept_sweeps, seconds_per_sweep=float(chains.seconds_per_sweep[0]),
                 config=chains.config, split_merge_stats=chains.split_merge_stats[0],
                 split_merge_at_kept=np.cumsum(chains.split_merge_history[0], axis=0))

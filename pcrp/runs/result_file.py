"""The result file of a run (RESULT.npz, written by :meth:`pcrp.runs.chains.ChainSet.save`): how it is written
(labels in the narrowest integer type, zlib level 1, large arrays stored) and how its arrays are checked against
each other and the run's configuration when it is read. No pickle: every array is plain numbers or one JSON string.
"""

import json
import zipfile

import numpy as np

from ..basics.files import FileRefused
from ..sampling.recorder import keep_schedule
# Keys of a saved ChainSet (RESULT.npz may hold more: see pcrp.cli).
ARRAYS = ("K", "log_joint", "labels", "kept_sweeps", "seconds_per_sweep", "split_merge_stats",
          "split_merge_history")


class ChainFileError(FileRefused):
    """A file :meth:`pcrp.runs.chains.ChainSet.load` will not read: not an .npz, or arrays that disagree with each other
    or with the run's configuration. A ValueError; the message is one sentence naming the array and the problem."""


# How result files are compressed: zlib level 1 (numpy's savez_compressed uses 6, several times slower on label
# draws for a file about 1.4 times smaller), and an array of more than STORE_ABOVE_BYTES stored uncompressed:
# deflating 52 MB of int8 label draws (N = 1,000,000) takes seconds even at level 1, storing them a tenth of one
# (docs/records/million_points.md).
NPZ_COMPRESSION_LEVEL = 1
STORE_ABOVE_BYTES = 32 * 2**20


def narrowest_labels(labels):
    """``labels`` (any shape, integer codes >= 0) in the smallest signed integer dtype that holds their largest
    code (int8 for fewer than 128 clusters): a result file stores them so, and :meth:`ChainSet.load` widens them
    back to :func:`pcrp.basics.dtypes.label_dtype`."""
    largest = int(labels.max()) if labels.size else 0
    for dtype in (np.int8, np.int16, np.int32):
        if largest <= np.iinfo(dtype).max:
            return labels if labels.dtype == dtype else labels.astype(dtype)
    return labels


def write_npz(f, arrays):
    """Write ``arrays`` ({name: array}, no Python objects) to ``f`` (a path or binary file) as an .npz (the format
    of ``np.savez_compressed``, read by ``np.load``): each array deflated at zlib level NPZ_COMPRESSION_LEVEL, or
    stored uncompressed when it holds more than STORE_ABOVE_BYTES."""
    with zipfile.ZipFile(f, mode="w", compression=zipfile.ZIP_DEFLATED, compresslevel=NPZ_COMPRESSION_LEVEL,
                         allowZip64=True) as zf:
        for key, value in arrays.items():
            value = np.asanyarray(value)
            zf.compression = zipfile.ZIP_STORED if value.nbytes > STORE_ABOVE_BYTES else zipfile.ZIP_DEFLATED
            with zf.open(f"{key}.npy", "w", force_zip64=True) as member:
                np.lib.format.write_array(member, value, allow_pickle=False)


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


def read_config(array, name):
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
    configuration's schedule (:func:`pcrp.sampling.sampler.keep_schedule`; a stopped live run keeps a prefix of it);
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

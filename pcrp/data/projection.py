"""What the Explorer draws for data of more than two columns, and which columns it leaves out by default.

- :func:`pca_projection`: a fixed 2-D view of d > 2 data: the first two principal components of the
  standardised columns, with the share of the variance each explains (for the axis titles).
- :func:`id_like_columns`: numeric columns of a CSV that look like identifiers (distinct whole numbers that
  increase or decrease row by row, or distinct whole numbers under a name such as id, index or customer_id):
  clustering on them puts rows with neighbouring ids together, which is never what a visitor wants.

Pure numpy; nothing here knows about Streamlit.
"""

import re
from dataclasses import dataclass

import numpy as np

ID_WORDS = frozenset({"id", "ids", "index", "idx", "key", "row", "rownum", "record", "serial", "uuid"})


@dataclass(frozen=True)
class Projection:
    """A 2-D view of (N, d) data. coords: (N, 2); explained: (2,) share of the standardised data's total
    variance along each axis (0-1); titles: the axes' titles, e.g. "PC1 (45% of variance)"."""

    coords: np.ndarray
    explained: np.ndarray
    titles: tuple


def pca_projection(X):
    """The first two principal components of ``X`` (N, d), d >= 2, after standardising each column (mean 0,
    standard deviation 1; a constant column stays 0). Signs are fixed so that each axis's largest loading is
    positive (the picture does not flip between calls)."""
    X = np.asarray(X, dtype=float)
    sd = X.std(axis=0)
    Z = (X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
    _, s, vt = np.linalg.svd(Z, full_matrices=False)
    axes = vt[:2]
    axes = axes * np.sign(axes[np.arange(axes.shape[0]), np.argmax(np.abs(axes), axis=1)])[:, None]
    total = float(np.sum(s ** 2))
    explained = (s[:2] ** 2) / total if total > 0 else np.zeros(2)
    coords = Z @ axes.T
    if coords.shape[1] < 2:  # one column: a second axis of zeros
        coords = np.column_stack([coords, np.zeros(len(coords))])
        explained = np.r_[explained, 0.0]
    titles = tuple(f"PC{i + 1} ({explained[i]:.0%} of variance)" for i in range(2))
    return Projection(coords, explained, titles)


def _words(name):
    return set(re.findall(r"[a-z]+", re.sub(r"([a-z])([A-Z])", r"\1 \2", str(name)).lower()))


def id_reason(name, values):
    """Why the numeric column ``name`` with ``values`` (N,) (NaN = missing) looks like an identifier, or None:
    its values are whole numbers, all distinct (at least 3), and they run monotonically or the column is named
    like an id (a word of ID_WORDS: id, index, customer_id, rowIndex, ...)."""
    values = np.asarray(values, dtype=float)
    values = values[~np.isnan(values)]
    if values.size < 3 or not np.all(np.isfinite(values)) or not np.array_equal(values, np.round(values)):
        return None
    if np.unique(values).size != values.size:
        return None
    steps = np.diff(values)
    monotone = bool(np.all(steps > 0) or np.all(steps < 0))
    named = bool(_words(name) & ID_WORDS)
    if monotone and named:
        return "its values are distinct whole numbers in order, under an id-like name"
    if monotone:
        return "its values are distinct whole numbers in increasing or decreasing order, like row numbers"
    if named:
        return "its values are distinct whole numbers under an id-like name"
    return None


def id_like_columns(numeric):
    """{column: reason} of the columns of ``numeric`` ({name: (N,) float array}, as pcrp.data.CsvTable.numeric;
    other values are skipped) that look like identifiers (see :func:`id_reason`), in the given order."""
    out = {}
    for name, values in numeric.items():
        if isinstance(values, np.ndarray):
            reason = id_reason(name, values)
            if reason:
                out[name] = reason
    return out

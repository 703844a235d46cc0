"""What every loader returns: :class:`Dataset`, the :class:`DataError` it raises, and standardisation.

X (N, d) float64 is what the sampler sees; ``center`` and ``scale`` (d,) undo the standardisation.
"""

from dataclasses import dataclass, field

import numpy as np

# The built-in data sets by name (pcrp.data.builtin_sets loads them); here, below every loader, because the
# messages for a missing file name them too.
BUILTIN_NAMES = ("old-faithful", "mnist", "sim1", "sim2", "demo")
QUOTED_CHARS = 60  # a message quotes at most this many characters of a column name or a cell (see quoted)


class DataError(ValueError):
    """Input data cannot be used; the message says why and what to do."""


def quoted(text, limit=QUOTED_CHARS):
    """``text`` (a column name or a cell) as a message quotes it: Python's repr (control characters escaped), cut
    after ``limit`` characters with its length ("'abc…' (12,345 characters)")."""
    text = str(text)
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}… ({len(text):,} characters)"


@dataclass
class Dataset:
    """Data ready for the sampler.

    X: (N, d) float64, what the sampler sees (standardised if ``standardized``).
    columns: d column names.
    labels: (N,) int true labels, or None.
    label_names: names of the true classes (index = label), or None.
    raw: optional (N, p) extra per-row data (MNIST pixels, 28 x 28 = 784).
    center, scale: (d,) so that original = X * scale + center.
    notes: what was dropped or assumed, for the user to read.
    warnings: the notes a user must not miss, because the data are likely not what they meant (a column of numbers
        left out for its text cells), whose columns ``notes`` name too; a front end shows them as warnings.
    """

    name: str
    X: np.ndarray
    columns: list
    description: str = ""
    labels: np.ndarray = None
    label_names: list = None
    raw: np.ndarray = None
    standardized: bool = False
    center: np.ndarray = None
    scale: np.ndarray = None
    notes: list = field(default_factory=list)
    source: dict = field(default_factory=dict)
    warnings: list = field(default_factory=list)

    @property
    def n(self):
        return self.X.shape[0]

    @property
    def dim(self):
        return self.X.shape[1]

    @property
    def true_k(self):
        return None if self.labels is None else int(np.unique(self.labels).size)


def standardize(X, columns):
    """Z-scores (population sd) of ``X`` (N, d), computed without overflow or underflow.

    Returns (Z (N, d), center (d,), scale (d,)) with X = Z * scale + center.
    Each column is first divided by the power of two just above its largest
    magnitude (exact in binary floating point), so that sums and squares stay in
    range for values near 1e308 as for values near 1e-300. Raises DataError
    naming a constant column, or a column whose result is not finite.
    """
    X = np.asarray(X, dtype=np.float64)
    low, high = X.min(axis=0), X.max(axis=0)
    for j, c in enumerate(columns):
        if low[j] == high[j]:
            raise DataError(
                f"Column {quoted(c)} is constant (every value is {low[j]:g}), so it carries no clustering "
                "information and cannot be standardised: deselect it."
            )
    _, exponent = np.frexp(np.maximum(np.abs(low), np.abs(high)))
    Y = np.ldexp(X, -exponent)  # every |value| < 1
    mean, sd = Y.mean(axis=0), Y.std(axis=0)
    Z = (Y - mean) / sd
    center, scale = np.ldexp(mean, exponent), np.ldexp(sd, exponent)
    for j, c in enumerate(columns):
        if not (np.isfinite(Z[:, j]).all() and np.isfinite(center[j]) and 0 < scale[j] < np.inf):
            raise DataError(
                f"Column {quoted(c)} cannot be standardised: its values (from {low[j]:g} to {high[j]:g}) are so close "
                "to the smallest representable numbers that their spread cannot be computed; multiply the column "
                "by a power of ten or deselect it."
            )
    return Z, center, scale


def check_arithmetic_range(X, columns):
    """Raise DataError naming a column of ``X`` (N, d) whose mean or variance is not representable.

    The sampler works with column means and squared deviations of the data as
    given; for values near 1e308 these overflow, for values near 1e-300 the
    variance underflows to 0 (a non-constant column then looks constant and its
    prior scale becomes infinite). Standardised data always pass.
    """
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        mean, var = X.mean(axis=0), X.var(axis=0)
        precision = 1.0 / var
    for j, c in enumerate(columns):
        size = np.max(np.abs(X[:, j]))
        if not (np.isfinite(mean[j]) and np.isfinite(var[j])):
            raise DataError(f"Column {quoted(c)} holds values up to {size:.3g}, too large to compute with as they are "
                            "(their squares overflow): standardise the columns, or divide this one by a power of ten.")
        if X[:, j].min() < X[:, j].max() and not np.isfinite(precision[j]):
            raise DataError(f"Column {quoted(c)} holds values no larger than {size:.3g}, too small to compute with as "
                            "they are (their squares underflow to 0): standardise the columns, or multiply this one "
                            "by a power of ten.")


def finish_dataset(name, X, columns, *, standardize_data, description="", labels=None, label_names=None,
            raw=None, notes=None, source=None, warnings=None):
    X = np.ascontiguousarray(X, dtype=np.float64)
    if standardize_data:
        Z, center, scale = standardize(X, list(columns))
    else:
        check_arithmetic_range(X, list(columns))
        Z, center, scale = X, np.zeros(X.shape[1]), np.ones(X.shape[1])
    return Dataset(
        name=name, X=Z, columns=list(columns), description=description,
        labels=None if labels is None else np.asarray(labels, dtype=np.int64),
        label_names=label_names, raw=raw, standardized=standardize_data,
        center=center, scale=scale, notes=list(notes or []), source=dict(source or {}),
        warnings=list(warnings or []),
    )

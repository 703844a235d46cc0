"""Data: built-in data sets, CSV parsing with validation, standardisation and embeddings.

Every loader returns a :class:`Dataset`. Bad input raises :class:`DataError`
whose message names the problem and what to do; rows or columns that are
dropped on purpose are reported in ``Dataset.notes`` with a count.
"""

import csv
import gzip
import io
import os
import struct
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

DATASETS_DIR = Path(os.environ.get("PCRP_DATASETS", Path(__file__).resolve().parent.parent / "datasets"))

# Limits, chosen so that one sweep stays interactive on 2 cores: at N = 10,000
# rows, d = 2 and K = 10 clusters a sweep is about 10,000 x 11 x 50 ns = 6 ms;
# at the 50-column limit one point-cluster evaluation costs about 1-2 us, so
# N = 2,000 and K = 5 take about 20 ms per sweep.
MAX_BYTES = 10 * 1024 * 1024
MAX_ROWS = 10_000
MAX_FILE_COLUMNS = 500
MAX_CLUSTER_COLUMNS = 50

MISSING_TOKENS = frozenset({"", "na", "nan", "n/a", "null", "none", "missing", "?", "."})
INFINITE_TOKENS = frozenset({"inf", "+inf", "-inf", "infinity", "+infinity", "-infinity"})


class DataError(ValueError):
    """Input data cannot be used; the message says why and what to do."""


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
    """Z-scores (population sd); raises DataError naming any constant column."""
    center = X.mean(axis=0)
    scale = X.std(axis=0)
    constant = [c for c, s in zip(columns, scale) if not s > 0]
    if constant:
        raise DataError(
            f"Column {constant[0]!r} is constant (every value is {X[0, columns.index(constant[0])]:g}), "
            "so it carries no clustering information and cannot be standardised: deselect it."
        )
    return (X - center) / scale, center, scale


def _finish(name, X, columns, *, standardize_data, description="", labels=None, label_names=None,
            raw=None, notes=None, source=None):
    X = np.ascontiguousarray(X, dtype=np.float64)
    if standardize_data:
        Z, center, scale = standardize(X, list(columns))
    else:
        Z, center, scale = X, np.zeros(X.shape[1]), np.ones(X.shape[1])
    return Dataset(
        name=name, X=Z, columns=list(columns), description=description,
        labels=None if labels is None else np.asarray(labels, dtype=np.int64),
        label_names=label_names, raw=raw, standardized=standardize_data,
        center=center, scale=scale, notes=list(notes or []), source=dict(source or {}),
    )


# ----------------------------------------------------------------------------- CSV

@dataclass
class CsvTable:
    """A parsed CSV: header, string cells, and which columns are numeric.

    cells: list of rows, each a list of strings of len(header).
    numeric: column name -> (N,) float array with NaN where missing, for the
        columns whose every non-missing cell is a number; a mostly numeric column
        with a text cell maps to a _TextInNumeric record instead, so that choosing
        it gives a message naming the cell.
    """

    header: list
    cells: list
    numeric: dict
    delimiter: str
    notes: list

    @property
    def numeric_columns(self):
        """Columns that can be clustered as they are (numbers or missing cells only)."""
        return [c for c in self.header if isinstance(self.numeric.get(c), np.ndarray)]

    @property
    def n_rows(self):
        return len(self.cells)


def _decode(data, notes):
    if b"\x00" in data[:65536]:
        raise DataError("The file looks binary (it contains NUL bytes), not a CSV text file. "
                        "Export it from your spreadsheet as CSV (comma-separated values).")
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        text = data.decode("latin-1")
        notes.append(f"The file is not valid UTF-8 (byte {err.start}); it was read as Latin-1. "
                     "Check that column names look right, or re-save the file as UTF-8.")
        return text


def _sniff_delimiter(text, notes):
    sample = "\n".join(text.splitlines()[:20])
    try:
        delimiter = csv.Sniffer().sniff(sample, delimiters=",;\t|").delimiter
    except csv.Error:
        delimiter = ","
    if delimiter != ",":
        notes.append(f"Columns are separated by {'tab' if delimiter == chr(9) else repr(delimiter)}.")
    return delimiter


def _to_number(cell):
    """float for a number, NaN for a missing token, None for text, +-inf for infinities."""
    token = cell.strip()
    if token.lower() in MISSING_TOKENS:
        return np.nan
    try:
        return float(token)
    except ValueError:
        return None


def read_csv_table(source):
    """Parse CSV bytes (or a path) into a :class:`CsvTable`, validating its shape.

    Raises DataError for: a file over MAX_BYTES, an empty file, binary content,
    a header with no rows, ragged rows, duplicate or empty column names, and
    more than MAX_FILE_COLUMNS columns or MAX_ROWS rows.
    """
    if isinstance(source, (str, Path)):
        path = Path(source)
        if not path.is_file():
            raise DataError(f"No such file: {path}. Give a CSV path or a built-in data set name "
                            f"({', '.join(BUILTIN_NAMES)}).")
        size = path.stat().st_size
        if size > MAX_BYTES:
            raise DataError(f"The file is {size / 2**20:.1f} MiB; the limit is {MAX_BYTES // 2**20} MiB. "
                            "Sample rows or keep fewer columns first.")
        data = path.read_bytes()
    else:
        data = bytes(source)
    if len(data) > MAX_BYTES:
        raise DataError(f"The file is {len(data) / 2**20:.1f} MiB; the limit is {MAX_BYTES // 2**20} MiB. "
                        "Sample rows or keep fewer columns first.")
    notes = []
    text = _decode(data, notes)
    if not text.strip():
        raise DataError("The file is empty: it needs a header row and at least two rows of numbers.")
    delimiter = _sniff_delimiter(text, notes)
    try:
        rows = list(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True))
    except csv.Error as err:
        raise DataError(f"The file is not valid CSV ({err}). Check quotes and separators.") from None
    rows = [r for r in rows if any(cell.strip() for cell in r)]  # blank lines carry nothing
    if not rows:
        raise DataError("The file holds only separators and blank cells: it needs a header row and rows of numbers.")
    header = [h.strip() for h in rows[0]]
    if len(header) > MAX_FILE_COLUMNS:
        raise DataError(f"The file has {len(header)} columns; the limit is {MAX_FILE_COLUMNS}. "
                        "Keep only the columns you want to cluster.")
    if any(h == "" for h in header):
        raise DataError(f"Column {header.index('') + 1} of the header has no name: name every column.")
    seen = set()
    for h in header:
        if h in seen:
            raise DataError(f"The column name {h!r} appears more than once: give every column a different name.")
        seen.add(h)
    cells = rows[1:]
    if not cells:
        raise DataError("The file has a header but no data rows.")
    if len(cells) > MAX_ROWS:
        raise DataError(f"The file has {len(cells):,} rows; the limit is {MAX_ROWS:,} so that sweeps stay "
                        "interactive. Take a random sample of rows first.")
    for line, row in enumerate(cells, start=2):
        if len(row) != len(header):
            raise DataError(f"Row {line} has {len(row)} fields but the header has {len(header)}. "
                            "Every row needs one value per column (check separators and quotes).")
    numeric = {}
    for j, name in enumerate(header):
        values = [_to_number(row[j]) for row in cells]
        if all(v is None or np.isnan(v) for v in values) and any(v is None for v in values):
            continue  # a text column (usable as labels)
        if any(v is None for v in values):
            bad = next(i for i, v in enumerate(values) if v is None)
            numeric[name] = _TextInNumeric(line=bad + 2, cell=cells[bad][j])
            continue
        numeric[name] = np.array(values, dtype=float)
    return CsvTable(header=header, cells=cells, numeric=numeric, delimiter=delimiter, notes=notes)


@dataclass
class _TextInNumeric:
    """Marks a mostly numeric column with a text cell, to report it if selected."""

    line: int
    cell: str


def dataset_from_table(table, *, columns=None, label_column=None, standardize_data=True, name="csv"):
    """Select columns of a parsed CSV and validate the numbers.

    columns: names to cluster on (default: every numeric column except the label column).
    label_column: optional column of true labels (text or numbers) for NMI / VI.
    Rows with a missing value in a chosen column are dropped and counted in ``notes``;
    infinite values, text in a chosen column, constant columns (when standardising),
    too few rows, and too many columns raise DataError.
    """
    notes = list(table.notes)
    if label_column is not None and label_column not in table.header:
        raise DataError(f"There is no column {label_column!r} for labels; columns are: {', '.join(table.header)}.")
    if columns is None:
        columns = [c for c in table.numeric_columns if c != label_column]
        if not columns:
            raise DataError("No numeric column found: the columns to cluster must hold numbers "
                            "(use '.' as the decimal point).")
    columns = list(columns)
    if not columns:
        raise DataError("Choose at least one column to cluster.")
    for c in columns:
        if c not in table.header:
            raise DataError(f"There is no column {c!r}; columns are: {', '.join(table.header)}.")
        if c == label_column:
            raise DataError(f"Column {c!r} is the label column; it cannot also be clustered.")
        if c not in table.numeric:
            raise DataError(f"Column {c!r} holds text, not numbers; deselect it (or use it as the label column).")
        if isinstance(table.numeric[c], _TextInNumeric):
            bad = table.numeric[c]
            raise DataError(f"Column {c!r} has a non-numeric cell {bad.cell!r} on line {bad.line}; "
                            "fix or remove that cell (missing values may be left empty or written NA).")
    if len(columns) > MAX_CLUSTER_COLUMNS:
        raise DataError(f"{len(columns)} columns are selected; at most {MAX_CLUSTER_COLUMNS} can be clustered. "
                        "Choose fewer columns (or reduce them with PCA first).")
    X = np.column_stack([table.numeric[c] for c in columns])
    infinite = np.isinf(X)
    if infinite.any():
        row, col = np.argwhere(infinite)[0]
        raise DataError(f"Column {columns[col]!r} has an infinite value on line {row + 2}; "
                        "replace it with a number or leave the cell empty to drop the row.")
    has_missing = np.isnan(X).any(axis=1)
    keep = ~has_missing
    if has_missing.any():
        notes.append(f"Dropped {int(has_missing.sum())} row(s) with a missing value in the chosen columns.")
    labels = label_names = None
    if label_column is not None:
        j = table.header.index(label_column)
        raw_labels = np.array([row[j].strip() for row in table.cells], dtype=object)
        missing_label = np.array([v.lower() in MISSING_TOKENS for v in raw_labels])
        if (missing_label & keep).any():
            notes.append(f"Dropped {int((missing_label & keep).sum())} row(s) with no label in {label_column!r}.")
        keep &= ~missing_label
        label_names, labels = np.unique(raw_labels[keep].astype(str), return_inverse=True)
        label_names = list(label_names)
    X = X[keep]
    n, d = X.shape
    if n == 0:
        raise DataError("Every row has a missing value in the chosen columns; nothing is left to cluster.")
    if n < 2:
        raise DataError(f"Only {n} usable row(s); clustering needs at least 2 rows.")
    if n <= d:
        raise DataError(f"Only {n} usable rows for {d} columns; clustering needs more rows than columns. "
                        "Choose fewer columns or add rows.")
    return _finish(
        name, X, columns, standardize_data=standardize_data,
        description=f"CSV data: {n} rows, columns {', '.join(columns)}",
        labels=labels, label_names=label_names, notes=notes,
        source={"kind": "csv", "columns": columns, "label_column": label_column},
    )


def load_csv(source, *, columns=None, label_column=None, standardize_data=True, name=None):
    """Read and validate a CSV file or bytes; see :func:`dataset_from_table`."""
    table = read_csv_table(source)
    if name is None:
        name = Path(source).stem if isinstance(source, (str, Path)) else "csv"
    return dataset_from_table(table, columns=columns, label_column=label_column,
                              standardize_data=standardize_data, name=name)


# ----------------------------------------------------------------------------- built-in data

def old_faithful(standardize_data=True):
    """The 272 Old Faithful eruptions (duration and waiting time, minutes), as R's ``faithful``."""
    table = read_csv_table(DATASETS_DIR / "old_faithful.csv")
    ds = dataset_from_table(table, standardize_data=standardize_data, name="old-faithful")
    ds.description = ("Old Faithful geyser: 272 eruptions, eruption duration (min) and waiting time to "
                      "the next eruption (min); R datasets::faithful. No true labels.")
    ds.source = {"kind": "builtin", "name": "old-faithful"}
    return ds


# The paper prints no parameters for its simulations; these are ours (documented in README):
SIMULATIONS = {
    "sim1": {"weights": [0.3, 0.4, 0.3], "means": [-6.0, 0.0, 4.0], "sds": [2.0, 1.5, 1.0],
             "description": "Sim 1: three poorly separated 1-D Gaussians (means -6, 0, 4; sds 2, 1.5, 1)."},
    "sim2": {"weights": [0.3, 0.4, 0.3], "means": [-14.0, -4.0, 5.0], "sds": [1.5, 1.5, 1.5],
             "description": "Sim 2: three well separated 1-D Gaussians (means -14, -4, 5; sds 1.5)."},
    "demo": {"weights": [0.35, 0.40, 0.25], "means": [0.0, 2.0, 5.0], "sds": [0.5, 0.5, 1.0],
             "description": "The authors' demo mixture (weights .35/.40/.25, means 0/2/5, sds .5/.5/1)."},
}


def simulation(which="sim1", n=300, seed=0, standardize_data=False):
    """Draw ``n`` points of a 1-D three-component simulation with its true labels.

    Not standardised by default, so the axis matches the paper's Fig. 2 (about -20..10).
    """
    if which not in SIMULATIONS:
        raise DataError(f"Unknown simulation {which!r}; choose one of {', '.join(SIMULATIONS)}.")
    n = int(n)
    if not 2 <= n <= MAX_ROWS:
        raise DataError(f"N must be between 2 and {MAX_ROWS:,} (got {n}).")
    spec = SIMULATIONS[which]
    rng = np.random.default_rng(seed)
    labels = rng.choice(3, size=n, p=spec["weights"])
    x = rng.normal(np.take(spec["means"], labels), np.take(spec["sds"], labels))
    return _finish(which, x[:, None], ["x"], standardize_data=standardize_data,
                   description=spec["description"], labels=labels,
                   label_names=[f"component {k + 1}" for k in range(3)],
                   source={"kind": "builtin", "name": which, "n": n, "seed": seed})


MNIST_EMBEDDINGS = ("spectral", "pca")


def _bundled_mnist():
    with np.load(DATASETS_DIR / "mnist_5k.npz") as f:
        return f["images"], f["labels"]


def read_idx(path):
    """Read one IDX file (optionally .gz) into a NumPy array of its stored shape."""
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    if len(data) < 4 or data[0] != 0 or data[1] != 0 or data[2] != 0x08:
        raise DataError(f"{Path(path).name} is not an unsigned-byte IDX file (bad magic number).")
    ndim = data[3]
    dims = struct.unpack(">" + "I" * ndim, data[4:4 + 4 * ndim])
    body = np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim)
    if body.size != int(np.prod(dims)):
        raise DataError(f"{Path(path).name} is truncated: expected {int(np.prod(dims))} values, found {body.size}.")
    return body.reshape(dims)


def read_mnist_idx_folder(folder):
    """(images (n, 784) uint8, labels (n,)) from a folder with the standard MNIST training IDX files."""
    folder = Path(folder)
    found = {}
    for stem in ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"):
        for suffix in ("", ".gz"):
            if (folder / (stem + suffix)).is_file():
                found[stem] = folder / (stem + suffix)
        if stem not in found:
            raise DataError(f"{folder} has no {stem} (or {stem}.gz); it should hold the MNIST training IDX files.")
    images = read_idx(found["train-images-idx3-ubyte"])
    labels = read_idx(found["train-labels-idx1-ubyte"])
    if images.ndim != 3 or labels.ndim != 1 or images.shape[0] != labels.shape[0]:
        raise DataError("The MNIST IDX files do not match: need images (n, rows, cols) and n labels.")
    return images.reshape(images.shape[0], -1), labels


def mnist(digits=(1, 2, 3, 4), n=1000, embedding="spectral", dims=2, seed=0, idx_folder=None,
          standardize_data=True):
    """A random subset of MNIST digits, embedded in ``dims`` dimensions.

    digits: which classes; n: total points (at most 500 per digit in the bundled
    file); embedding: 'spectral' (scikit-learn SpectralEmbedding, as in the paper)
    or 'pca'; dims: 1..50. Raw pixels are kept in ``Dataset.raw`` (n, 784).
    """
    digits = sorted({int(d) for d in digits})
    if not digits or any(d < 0 or d > 9 for d in digits):
        raise DataError("Choose one or more digits between 0 and 9.")
    if embedding not in MNIST_EMBEDDINGS:
        raise DataError(f"embedding must be one of {', '.join(MNIST_EMBEDDINGS)} (got {embedding!r}).")
    dims = int(dims)
    if not 1 <= dims <= MAX_CLUSTER_COLUMNS:
        raise DataError(f"dims must be between 1 and {MAX_CLUSTER_COLUMNS} (got {dims}).")
    images, labels = read_mnist_idx_folder(idx_folder) if idx_folder else _bundled_mnist()
    pool = np.flatnonzero(np.isin(labels, digits))
    n = int(n)
    if not dims < n <= pool.size:
        raise DataError(f"N must be between {dims + 1} and {pool.size} for digits {digits} "
                        f"(the {'given' if idx_folder else 'bundled'} file has {pool.size}); got {n}.")
    rng = np.random.default_rng(seed)
    chosen = np.sort(rng.choice(pool, size=n, replace=False))
    pixels = images[chosen]
    Z = embed(pixels.astype(np.float64) / 255.0, embedding, dims, seed)
    true = labels[chosen].astype(np.int64)
    codes = np.searchsorted(digits, true)
    return _finish(
        "mnist", Z, [f"{embedding}{j + 1}" for j in range(dims)], standardize_data=standardize_data,
        description=(f"MNIST digits {', '.join(map(str, digits))}: {n} images in a {dims}-D "
                     f"{'spectral embedding' if embedding == 'spectral' else 'PCA'} of the pixels."),
        labels=codes, label_names=[str(d) for d in digits], raw=pixels,
        source={"kind": "builtin", "name": "mnist", "digits": digits, "n": n, "embedding": embedding,
                "dims": dims, "seed": seed, "idx_folder": str(idx_folder) if idx_folder else None},
    )


def embed(P, method, dims, seed=0):
    """Embed rows of ``P`` (n, p) into (n, dims) by PCA or spectral embedding (nearest-neighbour graph)."""
    if method == "pca":
        from sklearn.decomposition import PCA

        return PCA(n_components=dims, random_state=seed).fit_transform(P)
    from sklearn.manifold import SpectralEmbedding

    return SpectralEmbedding(n_components=dims, affinity="nearest_neighbors",
                             n_neighbors=max(10, P.shape[0] // 100), random_state=seed).fit_transform(P)


BUILTIN_NAMES = ("old-faithful", "mnist", "sim1", "sim2", "demo")


def load(name_or_path, *, columns=None, label_column=None, standardize_data=None, n=None, seed=0,
         digits=(1, 2, 3, 4), embedding="spectral", dims=2):
    """Load a built-in data set by name or a CSV file by path.

    standardize_data=None means the data set's default: on for Old Faithful,
    MNIST and CSV files, off for the 1-D simulations (their axis is meaningful).
    """
    if name_or_path == "old-faithful":
        return old_faithful(True if standardize_data is None else standardize_data)
    if name_or_path in SIMULATIONS:
        return simulation(name_or_path, n=300 if n is None else n, seed=seed,
                          standardize_data=bool(standardize_data))
    if name_or_path == "mnist":
        return mnist(digits=digits, n=1000 if n is None else n, embedding=embedding, dims=dims, seed=seed,
                     standardize_data=True if standardize_data is None else standardize_data)
    return load_csv(name_or_path, columns=columns, label_column=label_column,
                    standardize_data=True if standardize_data is None else standardize_data)

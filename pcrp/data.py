"""Data: built-in data sets, CSV parsing with validation, standardisation and embeddings.

Every loader returns a :class:`Dataset`. Bad input raises :class:`DataError`
whose message names the problem and what to do; rows or columns that are left
out on purpose are reported in ``Dataset.notes``, by name and count.

Every parsing step is linear in the size of the input (the delimiter is found
in a bounded prefix, rows come from the C ``csv`` reader and are checked as
they come, reading stops at the row limit), so that no file can hold the
interpreter, and a Streamlit server with it, for long.
"""

import csv
import gzip
import io
import math
import os
import re
import stat
import struct
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import numpy as np

# Limits. The library and the command line take up to MAX_ROWS rows from files of up to MAX_BYTES (a
# 1,000,000 x 2 CSV is about 20-40 MB; parsing holds every cell as a Python string for a moment, about 60 bytes
# a cell). The app takes APP_MAX_ROWS rows from uploads of up to APP_MAX_BYTES, so that one visitor's sweep stays
# interactive on 2 cores: at N = 100,000, d = 2 and K = 10 clusters a sweep is about 100,000 x 11 x 50 ns = 55 ms.
MAX_BYTES = 128 * 1024 * 1024
MAX_ROWS = 1_000_000
APP_MAX_BYTES = 10 * 1024 * 1024
APP_MAX_ROWS = 100_000
MAX_FILE_COLUMNS = 500
MAX_CLUSTER_COLUMNS = 50

MISSING_TOKENS = frozenset({"", "na", "nan", "n/a", "null", "none", "missing", "?", "."})

# The delimiter is chosen from the first SNIFF_CHARS characters (at most SNIFF_ROWS rows) of a file.
DELIMITERS = (",", ";", "\t", "|")
SNIFF_CHARS = 8192
SNIFF_ROWS = 20

# guess_label_column: words in a column name that mark class labels, and the most classes it accepts.
LABEL_WORDS = frozenset({
    "class", "classes", "label", "labels", "species", "target", "targets", "category", "categories",
    "cluster", "clusters", "group", "groups", "cultivar", "digit", "diagnosis", "outcome", "truth", "type",
})
MAX_GUESSED_CLASSES = 20


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
                f"Column {c!r} is constant (every value is {low[j]:g}), so it carries no clustering "
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
                f"Column {c!r} cannot be standardised: its values (from {low[j]:g} to {high[j]:g}) are so close "
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
            raise DataError(f"Column {c!r} holds values up to {size:.3g}, too large to compute with as they are "
                            "(their squares overflow): standardise the columns, or divide this one by a power of ten.")
        if X[:, j].min() < X[:, j].max() and not np.isfinite(precision[j]):
            raise DataError(f"Column {c!r} holds values no larger than {size:.3g}, too small to compute with as they "
                            "are (their squares underflow to 0): standardise the columns, or multiply this one "
                            "by a power of ten.")


def _finish(name, X, columns, *, standardize_data, description="", labels=None, label_names=None,
            raw=None, notes=None, source=None):
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
    )


# ----------------------------------------------------------------------------- files

def _size(n_bytes):
    return f"{n_bytes:,} bytes" if n_bytes < 2**20 else f"{n_bytes / 2**20:.1f} MiB"


def _too_big(what, limit):
    return DataError(f"The file is {what}; the limit is {_size(limit)}. Sample rows or keep fewer columns first.")


def _not_a_regular_file(mode):
    """What a file of this ``st_mode`` is, if not a regular file ('a directory', ...); None for a regular file."""
    for test, what in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a named pipe (FIFO)"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return what
    return None if stat.S_ISREG(mode) else "not a regular file"


def _refuse_kind(path, what):
    if what == "a directory":
        return DataError(f"{path} is a directory, not a CSV file: give the path of a CSV file inside it "
                         f"(or a built-in data set name: {', '.join(BUILTIN_NAMES)}).")
    return DataError(f"{path} is {what}, not a regular file: CSV data are read only from regular files "
                     "(a pipe or a device can block or never end); save the data to a .csv file and give its path.")


def read_file_bytes(path, limit):
    """The bytes of the regular file ``path``, refusing anything else with a one-line DataError.

    The file type is checked before opening, so a FIFO or a device is never
    opened (opening a FIFO blocks; some devices act on open). The file is then
    opened non-blocking, checked again on the open descriptor, and at most
    ``limit + 1`` bytes are read, so a file that grows or never ends cannot
    exhaust memory. Raises DataError for: no such file, a directory, a FIFO,
    a device or socket, no permission, a read error (e.g. /proc/self/mem), and
    more than ``limit`` bytes.
    """
    path = Path(path)
    try:
        info = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        raise DataError(f"No such file: {path}. Give a CSV path or a built-in data set name "
                        f"({', '.join(BUILTIN_NAMES)}).") from None
    except PermissionError:
        raise DataError(f"Permission denied looking up {path}: a folder on its path is not readable by you; "
                        "copy the file somewhere you can read.") from None
    except OSError as err:
        raise DataError(f"{path} cannot be read ({err.strerror}); "
                        "copy the data into a CSV file and give its path.") from None
    what = _not_a_regular_file(info.st_mode)
    if what:
        raise _refuse_kind(path, what)
    if info.st_size > limit:
        raise _too_big(_size(info.st_size), limit)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except PermissionError:
        raise DataError(f"Permission denied: you may not read {path}; make it readable (e.g. chmod u+r) "
                        "or copy it somewhere you can read.") from None
    except OSError as err:
        raise DataError(f"{path} cannot be opened ({err.strerror}); "
                        "copy the data into a CSV file and give its path.") from None
    with os.fdopen(fd, "rb") as f:
        what = _not_a_regular_file(os.fstat(f.fileno()).st_mode)  # replaced since the check above
        if what:
            raise _refuse_kind(path, what)
        try:
            data = f.read(limit + 1)
        except OSError as err:
            raise DataError(f"{path} could not be read ({err.strerror}): it is not an ordinary file on disk; "
                            "copy the data into a CSV file and give its path.") from None
    if len(data) > limit:
        raise _too_big(f"larger than {_size(limit)} (more than the size the system reported for it)", limit)
    return data


def _builtin_bytes(filename):
    """A file shipped in ``pcrp/datasets`` (package data, so that a wheel carries it)."""
    return (resources.files("pcrp") / "datasets" / filename).read_bytes()


# ----------------------------------------------------------------------------- CSV

@dataclass
class _TextInNumeric:
    """A column of numbers with some text cells: the first one (file line, cell) and how many."""

    line: int
    cell: str
    n_text: int


@dataclass
class CsvTable:
    """A parsed CSV: header, string cells, and which columns are numeric.

    cells: list of rows, each a list of strings of len(header).
    lines: the file line on which each row of ``cells`` ends (1 = the first line).
    numeric: column name -> (N,) float array with NaN where missing, for the
        columns whose every non-missing cell is a number (an array of NaN for a
        column with no value at all); a column of numbers with some text cells
        maps to a _TextInNumeric record instead, so that choosing it gives a
        message naming the cell. Columns of text only are absent.
    """

    header: list
    cells: list
    numeric: dict
    delimiter: str
    notes: list
    lines: list = field(default_factory=list)

    @property
    def numeric_columns(self):
        """Columns that can be clustered as they are: numbers or missing cells only, at least one number."""
        return [c for c in self.header
                if isinstance(self.numeric.get(c), np.ndarray) and not np.isnan(self.numeric[c]).all()]

    @property
    def n_rows(self):
        return len(self.cells)


# Byte-order marks of the wide Unicode encodings, longest first (UTF-32 LE begins like UTF-16 LE). Excel's
# "Unicode text" export is UTF-16 LE with a BOM; its NUL bytes are not binary content.
_WIDE_BOMS = ((b"\xff\xfe\x00\x00", "utf-32-le", "UTF-32"), (b"\x00\x00\xfe\xff", "utf-32-be", "UTF-32"),
              (b"\xff\xfe", "utf-16-le", "UTF-16"), (b"\xfe\xff", "utf-16-be", "UTF-16"))


def _decode_wide(data, notes):
    """The text of ``data`` when it starts with a UTF-16 / UTF-32 byte-order mark, else None."""
    for bom, codec, name in _WIDE_BOMS:
        if data.startswith(bom):
            try:
                text = data[len(bom):].decode(codec)
            except UnicodeDecodeError as err:
                raise DataError(f"The file starts with a {name} byte-order mark but byte {err.start + len(bom)} "
                                f"is not valid {name}. Re-save it as CSV UTF-8 (or as Unicode text).") from None
            if "\x00" in text:
                raise DataError(f"The file is {name} text with NUL characters in it, which a CSV file never has. "
                                "Export it from your spreadsheet as CSV UTF-8.")
            notes.append(f"The file is {name} text (as Excel's 'Unicode text' export); it was decoded as such.")
            return text
    return None


def _decode(data, notes):
    wide = _decode_wide(data, notes)
    if wide is not None:
        return wide
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


def detect_delimiter(text):
    """The delimiter of CSV ``text``: one of DELIMITERS, comma when none splits the header.

    Reads only the first SNIFF_CHARS characters (and SNIFF_ROWS non-blank rows),
    with the csv reader for each candidate, so the time is bounded whatever the
    file (csv.Sniffer is quadratic on lines like ``,"a,"a,"a...``). A candidate
    counts if it splits the header into two or more fields; among those, one that
    gives every sampled row the header's width beats one that does not, then more
    header fields win, then the order of DELIMITERS.
    """
    prefix = text[:SNIFF_CHARS]
    cut = len(text) > SNIFF_CHARS
    best, best_key = ",", None
    for rank, delimiter in enumerate(DELIMITERS):
        widths, complete = [], not cut
        try:
            for row in csv.reader(io.StringIO(prefix, newline=""), delimiter=delimiter):
                if any(cell.strip() for cell in row):
                    widths.append(len(row))
                    if len(widths) == SNIFF_ROWS:
                        complete = True
                        break
        except csv.Error:
            continue
        if not complete and len(widths) > 1:
            widths.pop()  # the prefix may end inside the last row
        if not widths or widths[0] < 2:
            continue
        key = (all(w == widths[0] for w in widths), widths[0], -rank)
        if best_key is None or key > best_key:
            best, best_key = delimiter, key
    return best


def _check_header(row):
    header = [h.strip() for h in row]
    if len(header) > MAX_FILE_COLUMNS:
        raise DataError(f"The file has {len(header)} columns; the limit is {MAX_FILE_COLUMNS}. "
                        "Keep only the columns you want to cluster.")
    if "" in header:
        raise DataError(f"Column {header.index('') + 1} of the header has no name: name every column.")
    seen = set()
    for h in header:
        if h in seen:
            raise DataError(f"The column name {h!r} appears more than once: give every column a different name.")
        seen.add(h)
    return header


def _is_number(cell):
    try:
        return math.isfinite(float(cell))
    except ValueError:
        return False


def _read_rows(text, delimiter, max_rows):
    """(header, rows, lines, named) of CSV ``text``: blank rows skipped, shape checked row by row.

    A first row whose every cell is a finite number is no header: it is the first data row, the columns are named
    x1..xd and ``named`` is False (the caller says so); otherwise ``named`` is True.

    lines[i] is the file line on which rows[i] ends (where it starts too, unless
    a quoted cell spans lines). Reading stops at the first ragged row and as soon
    as there are more than ``max_rows`` rows, or more than ``max_rows`` rows of empty
    cells, so the work is linear in the text and bounded by the limits; empty
    lines are skipped inside the C reader.
    """
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    header, rows, lines, n_blank, named = None, [], [], 0, True
    try:
        for row in filter(None, reader):  # an empty line gives [], dropped here without Python code per line
            if not any(cell.strip() for cell in row):
                n_blank += 1
                if n_blank > max_rows:
                    raise DataError(f"The file has more than {max_rows:,} rows of empty cells (lines such as ',,,'): "
                                    "delete them and try again.")
                continue
            if header is None:
                named = not all(_is_number(cell) for cell in row)
                header = _check_header(row if named else [f"x{j + 1}" for j in range(len(row))])
                if named:
                    continue
            if len(row) != len(header):
                raise DataError(f"Row {reader.line_num} has {len(row)} fields but the header has {len(header)}. "
                                "Every row needs one value per column (check separators and quotes).")
            if len(rows) == max_rows:
                raise DataError(f"The file has more than {max_rows:,} rows, the limit here. "
                                "Take a random sample of rows first.")
            rows.append(row)
            lines.append(reader.line_num)
    except csv.Error as err:
        if "field larger than field limit" in str(err):
            raise DataError(f"A cell ending on line {reader.line_num} is longer than {csv.field_size_limit():,} "
                            "characters: probably a quote (\") that is opened and never closed. "
                            "Check quotes and separators.") from None
        raise DataError(f"The file is not valid CSV (line {reader.line_num}: {err}). "
                        "Check quotes and separators.") from None
    if header is None:
        raise DataError("The file holds only separators and blank cells: it needs a header row and rows of numbers.")
    if not rows:
        raise DataError("The file has a header but no data rows.")
    return header, rows, lines, named


def _parse_column(cells):
    """(values (n,) float with NaN where missing, indices of the text cells) of one column's cells."""
    try:  # the common case, all in C: every cell a number (float() also reads nan, inf, spaces)
        return np.fromiter(map(float, cells), dtype=np.float64, count=len(cells)), []
    except ValueError:
        pass
    values = np.empty(len(cells))
    text = []
    for i, cell in enumerate(cells):
        token = cell.strip()
        if token.lower() in MISSING_TOKENS:
            values[i] = np.nan
            continue
        try:
            values[i] = float(token)
        except ValueError:
            values[i] = np.nan
            text.append(i)
    return values, text


def read_csv_table(source, *, max_rows=None, max_bytes=None):
    """Parse CSV bytes (or a path) into a :class:`CsvTable`, validating its shape.

    Raises DataError for: a path that is not a readable regular file (see
    :func:`read_file_bytes`), more than ``max_bytes``, an empty file, binary
    content, a header with no rows, ragged rows, duplicate or empty column
    names, and more than MAX_FILE_COLUMNS columns or ``max_rows`` rows.

    max_rows, max_bytes: the limits (default MAX_ROWS and MAX_BYTES, the library's; the app passes
    APP_MAX_ROWS and APP_MAX_BYTES).
    """
    max_rows = MAX_ROWS if max_rows is None else max_rows  # read at call time: tests lower the module's limits
    max_bytes = MAX_BYTES if max_bytes is None else max_bytes
    if isinstance(source, (str, os.PathLike)):
        data = read_file_bytes(source, max_bytes)
    elif isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
    else:
        raise TypeError(f"read_csv_table takes a path or bytes, not {type(source).__name__}")
    if len(data) > max_bytes:
        raise _too_big(_size(len(data)), max_bytes)
    notes = []
    text = _decode(data, notes)
    if not text.strip():
        raise DataError("The file is empty: it needs a header row and at least two rows of numbers.")
    delimiter = detect_delimiter(text)
    if delimiter != ",":
        notes.append(f"Columns are separated by {'tab' if delimiter == chr(9) else repr(delimiter)}.")
    header, cells, lines, named = _read_rows(text, delimiter, max_rows)
    if not named:
        notes.append(f"No header found: the first row holds only numbers, so it is read as data and the columns are "
                     f"named x1..x{len(header)}.")
    numeric = {}
    for j, (name, column) in enumerate(zip(header, zip(*cells))):
        values, text_cells = _parse_column(column)
        if not text_cells:
            numeric[name] = values
        elif not np.isnan(values).all():  # some numbers, some text
            first = text_cells[0]
            numeric[name] = _TextInNumeric(line=lines[first], cell=cells[first][j], n_text=len(text_cells))
        # else: a text column (usable as labels)
    return CsvTable(header=header, cells=cells, numeric=numeric, delimiter=delimiter, notes=notes, lines=lines)


def _name_words(name):
    """Lower-case words of a column name, split at non-letters and at camelCase humps."""
    return re.findall(r"[a-z]+", re.sub(r"([a-z])([A-Z])", r"\1 \2", name).lower())


def guess_label_column(table):
    """The name of a column of ``table`` that obviously holds class labels, or None.

    Contract (for callers that preselect a label column, such as the app): a
    column is taken when all of these hold:

    1. its name contains one of LABEL_WORDS (class, label, species, target,
       group, type, ...) as a word, case-insensitive; words are split at
       non-letters and camelCase humps, so ``wine_class``, ``Species`` and
       ``trueLabel`` qualify and ``subclass`` or ``y`` do not;
    2. its non-missing cells are all integers (codes such as 0, 1, 2, also
       written 1.0) or all text;
    3. they take between 2 and MAX_GUESSED_CLASSES distinct values, and at
       most half as many as there are non-missing cells (so an id column is
       never taken).

    The first such column in header order is returned. Pure: reads the table,
    changes nothing, and never fails.
    """
    for j, name in enumerate(table.header):
        if not LABEL_WORDS.intersection(_name_words(name)):
            continue
        values = table.numeric.get(name)
        if isinstance(values, _TextInNumeric):
            continue
        if isinstance(values, np.ndarray):
            values = values[~np.isnan(values)]
            if not np.array_equal(values, np.round(values)):  # also refuses inf
                continue
            present, distinct = values.size, np.unique(values).size
        else:
            tokens = [row[j].strip() for row in table.cells]
            tokens = [t for t in tokens if t.lower() not in MISSING_TOKENS]
            present, distinct = len(tokens), len(set(tokens))
        if 2 <= distinct <= MAX_GUESSED_CLASSES and 2 * distinct <= present:
            return name
    return None


def _listed(names):
    """Column names as one line of a message: "a, b, c", with control characters (a quoted header may hold a
    line break) shown as escapes such as \\n."""
    return ", ".join("".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in name)
                     for name in names)


def default_columns(table, label_column=None):
    """The columns clustered when none are chosen, and notes saying what was left out and why.

    Returns (columns, notes): every column holding numbers (missing cells
    allowed) in header order, except ``label_column``, the column
    :func:`guess_label_column` takes for labels, columns with no value at all,
    and columns of numbers with some text cells. Each exclusion of a column
    that holds numbers gets a note naming it (and, for text cells, how many and
    the first one with its line); columns of text only get one note listing them.
    """
    guessed = guess_label_column(table)
    columns, notes, text_only = [], [], []
    for c in table.header:
        values = table.numeric.get(c)
        if c == label_column:
            continue
        if values is None:
            text_only.append(c)
        elif isinstance(values, _TextInNumeric):
            others = f" and {values.n_text - 1} other cell(s)" if values.n_text > 1 else ""
            notes.append(f"Column {c!r} was not clustered: its cell {values.cell!r} on line {values.line}{others} "
                         "is not a number. Fix those cells (missing values may be left empty or written NA) "
                         "to use it.")
        elif np.isnan(values).all():
            notes.append(f"Column {c!r} was not clustered: it has no values (every cell is empty or missing).")
        elif c == guessed:
            notes.append(f"Column {c!r} was not clustered: it looks like class labels "
                         f"({np.unique(values[~np.isnan(values)]).size} integer codes). Use it as the label "
                         "column to score the clusters against it, or choose the columns yourself to cluster it.")
        else:
            columns.append(c)
    if text_only:
        notes.append(f"Column(s) holding text were not clustered: {_listed(text_only)}.")
    return columns, notes


def dataset_from_table(table, *, columns=None, label_column=None, standardize_data=True, name="csv"):
    """Select columns of a parsed CSV and validate the numbers.

    columns: names to cluster on (default: :func:`default_columns`, whose notes
        are added to the data set's notes).
    label_column: optional column of true labels (text or numbers) for NMI / VI.
    Rows with a missing value in a chosen column are dropped and counted in ``notes``;
    infinite values, text in a chosen column, a column with no value, constant
    columns (when standardising), values out of the arithmetic's range, too few
    rows, and too many columns raise DataError.
    """
    notes = list(table.notes)
    if label_column is not None and label_column not in table.header:
        raise DataError(f"There is no column {label_column!r} for labels; columns are: {_listed(table.header)}.")
    if columns is None:
        columns, left_out = default_columns(table, label_column)
        notes += left_out
        if not columns:
            found = "No numeric column found: the columns to cluster must hold numbers (use '.' as the decimal point)."
            raise DataError(" ".join([found, *left_out]))
    columns = list(columns)
    if not columns:
        raise DataError("Choose at least one column to cluster.")
    for c in columns:
        if c not in table.header:
            raise DataError(f"There is no column {c!r}; columns are: {_listed(table.header)}.")
        if c == label_column:
            raise DataError(f"Column {c!r} is the label column; it cannot also be clustered.")
        if c not in table.numeric:
            raise DataError(f"Column {c!r} holds text, not numbers; deselect it (or use it as the label column).")
        if isinstance(table.numeric[c], _TextInNumeric):
            bad = table.numeric[c]
            raise DataError(f"Column {c!r} has a non-numeric cell {bad.cell!r} on line {bad.line}; "
                            "fix or remove that cell (missing values may be left empty or written NA).")
        if np.isnan(table.numeric[c]).all():
            raise DataError(f"Column {c!r} has no values (every cell is empty or missing): deselect it.")
    if len(columns) > MAX_CLUSTER_COLUMNS:
        raise DataError(f"{len(columns)} columns are selected; at most {MAX_CLUSTER_COLUMNS} can be clustered. "
                        "Choose fewer columns (or reduce them with PCA first).")
    X = np.column_stack([table.numeric[c] for c in columns])
    infinite = np.isinf(X)
    if infinite.any():
        row, col = np.argwhere(infinite)[0]
        raise DataError(f"Column {columns[col]!r} has an infinite value on line {table.lines[row]}; "
                        "replace it with a number or leave the cell empty to drop the row.")
    missing = np.isnan(X)
    keep = ~missing.any(axis=1)
    if not keep.any():
        worst = int(np.argmax(missing.sum(axis=0)))
        raise DataError(f"Every row has a missing value in the chosen columns (most often in {columns[worst]!r}: "
                        f"{int(missing[:, worst].sum())} of {len(X)} rows); deselect that column or fill in "
                        "its missing values.")
    if not keep.all():
        notes.append(f"Dropped {int((~keep).sum())} row(s) with a missing value in the chosen columns.")
    labels = label_names = None
    if label_column is not None:
        j = table.header.index(label_column)
        raw_labels = np.array([row[j].strip() for row in table.cells], dtype=object)
        missing_label = np.array([v.lower() in MISSING_TOKENS for v in raw_labels], dtype=bool)
        if (missing_label & keep).any():
            notes.append(f"Dropped {int((missing_label & keep).sum())} row(s) with no label in {label_column!r}.")
        keep &= ~missing_label
        label_names, labels = np.unique(raw_labels[keep].astype(str), return_inverse=True)
        label_names = list(label_names)
    X = X[keep]
    n, d = X.shape
    if n == 0:
        raise DataError(f"No row has both values in the chosen columns and a label in {label_column!r}; "
                        "choose another label column (or none).")
    if n < 2:
        raise DataError(f"Only {n} usable row(s); clustering needs at least 2 rows.")
    if n <= d:
        raise DataError(f"Only {n} usable rows for {d} columns; clustering needs more rows than columns. "
                        "Choose fewer columns or add rows.")
    return _finish(
        name, X, columns, standardize_data=standardize_data,
        description=f"CSV data: {n} rows, columns {_listed(columns)}",
        labels=labels, label_names=label_names, notes=notes,
        source={"kind": "csv", "columns": columns, "label_column": label_column},
    )


def load_csv(source, *, columns=None, label_column=None, standardize_data=True, name=None):
    """Read and validate a CSV file or bytes; see :func:`read_csv_table` and :func:`dataset_from_table`."""
    table = read_csv_table(source)
    if name is None:
        name = Path(source).stem if isinstance(source, (str, os.PathLike)) else "csv"
    return dataset_from_table(table, columns=columns, label_column=label_column,
                              standardize_data=standardize_data, name=name)


# ----------------------------------------------------------------------------- built-in data

OLD_FAITHFUL_COLUMNS = ("eruptions", "waiting")


def old_faithful(standardize_data=True, columns=None):
    """The 272 Old Faithful eruptions (duration and waiting time, minutes), as R's ``faithful``.

    columns: a subset of OLD_FAITHFUL_COLUMNS to keep (default both).
    """
    table = read_csv_table(_builtin_bytes("old_faithful.csv"))
    if columns is not None:
        unknown = [c for c in columns if c not in OLD_FAITHFUL_COLUMNS]
        if unknown:
            raise DataError(f"Old Faithful has no column {unknown[0]!r}; its columns are "
                            f"{', '.join(OLD_FAITHFUL_COLUMNS)}.")
    ds = dataset_from_table(table, columns=columns, standardize_data=standardize_data, name="old-faithful")
    ds.description = ("Old Faithful geyser: 272 eruptions, eruption duration (min) and waiting time to "
                      "the next eruption (min); R datasets::faithful. No true labels.")
    if columns is not None:
        ds.description += f" Columns: {_listed(ds.columns)}."
    ds.source = {"kind": "builtin", "name": "old-faithful"}
    if columns is not None:
        ds.source["columns"] = list(ds.columns)
    return ds


# The paper prints no parameters for its simulations. Sim 1 and Sim 2 are calibrated (pcrp/datasets/README.md) so
# that our CRP and CRP-Oracle rows match the paper's Table 1 within 0.03 NMI, 0.1 VI and 0.5 K: not the paper's own.
SIMULATIONS = {
    "sim1": {"weights": [0.30, 0.26, 0.44], "means": [-17.6, -8.0, 1.0], "sds": [0.675, 1.5, 3.6],
             "description": "Sim 1 (calibrated to the paper's Table 1): three poorly separated 1-D Gaussians "
                            "(weights .30/.26/.44, means -17.6, -8, 1, sds 0.675, 1.5, 3.6)."},
    "sim2": {"weights": [0.3, 0.4, 0.3], "means": [-13.8, -5.0, 3.8], "sds": [1.6, 1.6, 1.6],
             "description": "Sim 2 (calibrated to the paper's Table 1): three well separated 1-D Gaussians "
                            "(weights .3/.4/.3, means -13.8, -5, 3.8, sds 1.6)."},
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
    with np.load(io.BytesIO(_builtin_bytes("mnist_5k.npz"))) as f:
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
    """Embed rows of ``P`` (n, p) into (n, dims) by PCA or spectral embedding (nearest-neighbour graph).

    The same (P, method, dims, seed) gives the same numbers whatever the machine's thread count: the embedding
    runs with one BLAS / OpenMP thread (threadpoolctl, a scikit-learn dependency), the nearest-neighbour search
    with one job, and the eigen-solver is fixed (ARPACK, started from ``seed``'s vector; PCA's full SVD). A
    solver's result otherwise depends on how many BLAS threads split its sums, and the chains amplify a
    difference in the last decimals into different modes.
    """
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):
        if method == "pca":
            from sklearn.decomposition import PCA

            return PCA(n_components=dims, svd_solver="full", random_state=seed).fit_transform(P)
        from sklearn.manifold import SpectralEmbedding

        return SpectralEmbedding(n_components=dims, affinity="nearest_neighbors", eigen_solver="arpack",
                                 n_neighbors=max(10, P.shape[0] // 100), random_state=seed,
                                 n_jobs=1).fit_transform(P)


BUILTIN_NAMES = ("old-faithful", "mnist", "sim1", "sim2", "demo")


def load(name_or_path, *, columns=None, label_column=None, standardize_data=None, n=None, seed=0,
         digits=(1, 2, 3, 4), embedding="spectral", dims=2):
    """Load a built-in data set by name or a CSV file by path.

    standardize_data=None means the data set's default: on for Old Faithful,
    MNIST and CSV files, off for the 1-D simulations (their axis is meaningful).
    columns applies to CSV files and old-faithful; label_column to CSV files;
    n to the simulations and mnist. Given where it does not apply, it raises
    DataError rather than being ignored.
    """
    builtin = name_or_path in BUILTIN_NAMES
    if columns is not None and builtin and name_or_path != "old-faithful":
        own = "it has one column, x" if name_or_path in SIMULATIONS else \
            "its columns are the embedding's dimensions: set dims instead"
        raise DataError(f"Choosing columns works for CSV files and old-faithful, not for {name_or_path} ({own}).")
    if label_column is not None and builtin:
        has = "has no true labels" if name_or_path == "old-faithful" else "brings its own true labels"
        raise DataError(f"A label column applies to CSV files only; {name_or_path} {has}.")
    if n is not None and (not builtin or name_or_path == "old-faithful"):
        raise DataError(f"N (the number of points to draw) applies to {', '.join(SIMULATIONS)} and mnist; "
                        f"{name_or_path} has a fixed number of rows (sample rows into a CSV file for fewer).")
    if name_or_path == "old-faithful":
        return old_faithful(True if standardize_data is None else standardize_data, columns=columns)
    if name_or_path in SIMULATIONS:
        return simulation(name_or_path, n=300 if n is None else n, seed=seed,
                          standardize_data=bool(standardize_data))
    if name_or_path == "mnist":
        return mnist(digits=digits, n=1000 if n is None else n, embedding=embedding, dims=dims, seed=seed,
                     standardize_data=True if standardize_data is None else standardize_data)
    return load_csv(name_or_path, columns=columns, label_column=label_column,
                    standardize_data=True if standardize_data is None else standardize_data)

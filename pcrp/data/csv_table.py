"""CSV text to a :class:`CsvTable`: decoding, finding the separator, reading rows, parsing columns.

Every step is linear in the size of the input (the separator is found in a bounded prefix, rows come from the C
``csv`` reader and are checked as they come, reading stops at the row limit), so that no file can hold the
interpreter, and a Streamlit server with it, for long. A plain CSV of numbers (:mod:`pcrp.data.plain_csv`) is read
by NumPy's C parser instead, to the same table.
"""

import csv
import io
import math
import os
from dataclasses import dataclass, field

import numpy as np

from . import limits
from .dataset import DataError, quoted
from .file_bytes import read_file_bytes, size_text, too_big
from .limits import MAX_FILE_COLUMNS
from .plain_csv import PlainRows, read_plain

MISSING_TOKENS = frozenset({"", "na", "nan", "n/a", "null", "none", "missing", "?", "."})

# The delimiter is chosen from the first SNIFF_CHARS characters (at most SNIFF_ROWS rows) of a file.
DELIMITERS = (",", ";", "\t", "|")
SNIFF_CHARS = 8192
SNIFF_ROWS = 20


@dataclass
class TextInNumeric:
    """A column of numbers with some text cells: the first one (file line, cell) and how many."""

    line: int
    cell: str
    n_text: int


@dataclass
class CsvTable:
    """A parsed CSV: header, string cells, and which columns are numeric.

    cells: list of rows, each a list of strings of len(header) (for a plain CSV of numbers, a
        :class:`pcrp.data.plain_csv.PlainRows` that splits its rows when read).
    lines: the file line on which each row of ``cells`` ends (1 = the first line).
    numeric: column name -> (N,) float array with NaN where missing, for the
        columns whose every non-missing cell is a number (an array of NaN for a
        column with no value at all); a column of numbers with some text cells
        maps to a TextInNumeric record instead, so that choosing it gives a
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

    def column_text(self, j):
        """(n_rows,) str array: column j's cells with surrounding whitespace stripped."""
        if isinstance(self.cells, PlainRows):
            return self.cells.column(j)
        return np.array([row[j].strip() for row in self.cells], dtype=str)


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
            raise DataError(f"The column name {quoted(h)} appears more than once: give every column a different name.")
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
            if not "".join(row).strip():  # every cell blank (one C call, not a generator per row)
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


def _parse_columns(header, cells, lines):
    """CsvTable.numeric of rows of string cells: each column's values, its first text cell, or nothing (text)."""
    numeric = {}
    for j, (name, column) in enumerate(zip(header, zip(*cells))):
        values, text_cells = _parse_column(column)
        if not text_cells:
            numeric[name] = values
        elif not np.isnan(values).all():  # some numbers, some text
            first = text_cells[0]
            numeric[name] = TextInNumeric(line=lines[first], cell=cells[first][j], n_text=len(text_cells))
        # else: a text column (usable as labels)
    return numeric


def read_csv_table(source, *, max_rows=None, max_bytes=None):
    """Parse CSV bytes (or a path) into a :class:`CsvTable`, validating its shape.

    Raises DataError for: a path that is not a readable regular file (see
    :func:`read_file_bytes`), more than ``max_bytes``, an empty file, binary
    content, a header with no rows, ragged rows, duplicate or empty column
    names, and more than MAX_FILE_COLUMNS columns or ``max_rows`` rows.

    max_rows, max_bytes: the limits (default MAX_ROWS and MAX_BYTES, the library's; the app passes
    APP_MAX_ROWS and APP_MAX_BYTES).
    """
    max_rows = limits.MAX_ROWS if max_rows is None else max_rows  # read at call time: tests lower the limits
    max_bytes = limits.MAX_BYTES if max_bytes is None else max_bytes
    if isinstance(source, (str, os.PathLike)):
        data = read_file_bytes(source, max_bytes)
    elif isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
    else:
        raise TypeError(f"read_csv_table takes a path or bytes, not {type(source).__name__}")
    if len(data) > max_bytes:
        raise too_big(size_text(len(data)), max_bytes)
    notes = []
    text = _decode(data, notes)
    if not text.strip():
        raise DataError("The file is empty: it needs a header row and at least two rows of numbers.")
    delimiter = detect_delimiter(text)
    if delimiter != ",":
        notes.append(f"Columns are separated by {'tab' if delimiter == chr(9) else repr(delimiter)}.")
    plain = read_plain(text, delimiter, max_rows, _is_number)  # numbers only, nothing to report: NumPy's parser
    if plain is not None:
        first, values, cells, first_line, named = plain
        header = _check_header(first if named else [f"x{j + 1}" for j in range(len(first))])
        lines = list(range(first_line, first_line + len(cells)))
        numeric = {name: np.ascontiguousarray(values[:, j]) for j, name in enumerate(header)}
    else:
        header, cells, lines, named = _read_rows(text, delimiter, max_rows)
        numeric = _parse_columns(header, cells, lines)
    if not named:
        notes.append(f"No header found: the first row holds only numbers, so it is read as data and the columns are "
                     f"named x1..x{len(header)}.")
    return CsvTable(header=header, cells=cells, numeric=numeric, delimiter=delimiter, notes=notes, lines=lines)

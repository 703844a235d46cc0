"""The fast path of :func:`pcrp.data.csv_table.read_csv_table`: a plain CSV of numbers read by NumPy's C parser.

A text is *plain* when it is ASCII with no quote, carriage return or control character but the tab, no blank
line, every line holding the header's number of delimiters, no more rows than the limit, and every cell a number
``np.loadtxt`` reads (no missing cell, no text). Then :func:`read_plain` gives what the csv reader's path gives --
the same header, the same float64 values (both parsers round correctly: float() and NumPy's parser give the same
double for every token both accept), the same row lines -- in a few C passes over the text instead of a Python
object per cell. Anything else returns None and the csv reader's path reads the text, with its messages: the fast
path never refuses a file and never names a problem.
"""

import io
import re

import numpy as np

# Control characters other than the tab (and the line feed, which ends lines): not plain.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
# One text column's cells are cut out as an (n, width) byte matrix at most this large; else a Python loop.
COLUMN_BYTES = 64 * 2**20


class PlainRows:
    """The rows of a plain CSV (a :attr:`CsvTable.cells` stand-in), split when read: ``len``, indexing and iteration
    give each row's list of cells as the csv reader would; :meth:`column` gives one column's cells at once.

    data: the rows' text, lines joined by line feeds, no trailing one; raw: its bytes (uint8); ends (n_rows,):
    where each line ends in it; cuts (n_rows, n_cols - 1): where its delimiters are; delimiter.
    """

    def __init__(self, data, raw, ends, cuts, delimiter):
        self._data, self._raw, self._ends, self._cuts, self._delimiter = data, raw, ends, cuts, delimiter
        self._lines = None

    def _split(self):
        if self._lines is None:
            self._lines = self._data.split("\n")
        return self._lines

    def __len__(self):
        return self._ends.size

    def __getitem__(self, i):
        lines = self._split()[i]
        if isinstance(i, slice):
            return [line.split(self._delimiter) for line in lines]
        return lines.split(self._delimiter)

    def __iter__(self):
        return (line.split(self._delimiter) for line in self._split())

    def column(self, j):
        """(n_rows,) str array: column j's cells with surrounding whitespace stripped."""
        raw, ends, cuts = self._raw, self._ends, self._cuts
        first = np.concatenate(([0], ends[:-1] + 1)) if j == 0 else cuts[:, j - 1] + 1
        last = ends if j == cuts.shape[1] else cuts[:, j]
        width = int((last - first).max())
        if width * ends.size > COLUMN_BYTES:
            return np.array([row[j].strip() for row in self], dtype=str)
        if width == 0:
            return np.full(ends.size, "", dtype="<U1")
        at = first[:, None] + np.arange(width)
        cells = np.where(at < last[:, None], raw[np.minimum(at, raw.size - 1)], 0).astype(np.uint8)
        return np.char.strip(cells.view(f"S{width}").ravel().astype(str))


def read_plain(text, delimiter, max_rows, is_number):
    """(header cells, values (n_rows, n_cols) float64, rows (:class:`PlainRows`), first row's file line, named) of
    a plain CSV ``text``, or None when it is not plain (see above) or has more than ``max_rows`` rows.
    is_number(cell): whether a first-row cell is a number (then a first row of numbers is data, not a header)."""
    if not text.isascii() or '"' in text or "\r" in text:
        return None
    body = text[:-1] if text.endswith("\n") else text
    if not body or body.startswith("\n") or "\n\n" in body:
        return None
    head_end = body.find("\n")
    first = (body if head_end < 0 else body[:head_end]).split(delimiter)
    n_cols = len(first)
    if n_cols < 2:
        return None
    named = not all(is_number(cell) for cell in first)
    data = body if not named else ("" if head_end < 0 else body[head_end + 1:])
    if not data:
        return None
    n_rows = data.count("\n") + 1
    if n_rows > max_rows or data.count(delimiter) != n_rows * (n_cols - 1):
        return None
    raw = np.frombuffer(data.encode("ascii"), dtype=np.uint8)
    controls = np.count_nonzero(raw < 32) - (n_rows - 1) - data.count("\t")  # other than line feeds and tabs
    if controls or np.count_nonzero(raw == 127) or _CONTROL.search(body if head_end < 0 else body[:head_end]):
        return None
    ends = np.append(np.flatnonzero(raw == 10), raw.size)
    cuts = np.flatnonzero(raw == ord(delimiter))
    if np.any(np.diff(np.searchsorted(cuts, ends), prepend=0) != n_cols - 1):  # each line its n_cols - 1
        return None
    try:
        values = np.loadtxt(io.StringIO(data), delimiter=delimiter, comments=None, dtype=np.float64, ndmin=2)
    except ValueError:  # a missing cell, text, a number only float() reads ("1_000"): the csv reader's path
        return None
    if values.shape != (n_rows, n_cols):
        return None
    rows = PlainRows(data, raw, ends, cuts.reshape(n_rows, n_cols - 1), delimiter)
    return first, values, rows, 2 if named else 1, named

"""Which columns of a parsed CSV are clustered and which holds class labels; a :class:`Dataset` from the choice.

:func:`guess_label_column` and :func:`default_columns` choose when the caller does not; :func:`dataset_from_table`
checks the choice and the numbers, and :func:`load_csv` reads and checks a file in one call.
"""

import os
import re
from pathlib import Path

import numpy as np

from .csv_table import MISSING_TOKENS, TextInNumeric, read_csv_table
from .dataset import QUOTED_CHARS, DataError, finish_dataset, quoted
from .limits import MAX_CLUSTER_COLUMNS
from .projection import id_reason

# guess_label_column: words in a column name that mark class labels, and the most classes it accepts.
LABEL_WORDS = frozenset({
    "class", "classes", "label", "labels", "species", "target", "targets", "category", "categories",
    "cluster", "clusters", "group", "groups", "cultivar", "digit", "diagnosis", "outcome", "truth", "type",
})
MAX_GUESSED_CLASSES = 20
# Messages quote a column name or a cell up to QUOTED_CHARS characters (pcrp.data.dataset.quoted: a longer one is
# cut, with its length) and name at most LISTED_COLUMNS columns of a kind (then "and N more"), so that every message
# stays one short line whatever the file holds.
LISTED_COLUMNS = 6


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
        if isinstance(values, TextInNumeric):
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


LISTED_NAMES = 12  # listed_names names at most this many columns, then "and N more"


def listed_names(names, limit=LISTED_NAMES):
    """Column names as one line of a message: "a, b, c", with control characters (a quoted header may hold a
    line break) shown as escapes such as \\n; a name over QUOTED_CHARS characters is cut ("abc…"), and after
    ``limit`` names the rest are counted ("and 38 more")."""
    names = list(names)

    def shown(name):
        name = "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in name)
        return name if len(name) <= QUOTED_CHARS else name[:QUOTED_CHARS] + "…"

    text = ", ".join(shown(name) for name in names[:limit])
    return text + (f" and {len(names) - limit} more" if len(names) > limit else "")


def quoted_list(names, limit=LISTED_COLUMNS):
    """Column names quoted (:func:`quoted`) and listed, at most ``limit`` of them: "'a', 'b' and 3 more"."""
    names = list(names)
    shown = ", ".join(quoted(name) for name in names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


# Why not_clustered says a column was left out, in its order.
LEFT_OUT_WHY = ("text", "no values", "class labels", "like an identifier", "not chosen")


def not_clustered(table, columns, label_column=None):
    """(warning, note) about the columns of ``table`` that are neither clustered (``columns``) nor the label
    column: each one line, or None when there is nothing to say.

    warning: the columns of numbers left out because some of their cells are not numbers, named with the first
    such cell and its line, and what to do: a reader most likely meant to cluster them, so a caller shows it as a
    warning, not a note. note: every other column left out, grouped by why (:data:`LEFT_OUT_WHY`: text only, no
    values, integer codes that look like class labels (:func:`guess_label_column`), distinct whole numbers like an
    identifier (:func:`pcrp.data.projection.id_reason`), or not chosen). Names and cells are quoted and cut
    (:func:`quoted`, :func:`quoted_list`)."""
    skip = set(columns) | {label_column}
    guessed = guess_label_column(table)
    text_cells, why = [], {w: [] for w in LEFT_OUT_WHY}
    for c in table.header:
        if c in skip:
            continue
        values = table.numeric.get(c)
        if isinstance(values, TextInNumeric):
            text_cells.append(c)
        elif values is None:
            why["text"].append(c)
        elif np.isnan(values).all():
            why["no values"].append(c)
        elif c == guessed:
            why["class labels"].append(c)
        elif id_reason(c, values):
            why["like an identifier"].append(c)
        else:
            why["not chosen"].append(c)
    warning = None
    if text_cells:
        first = table.numeric[text_cells[0]]
        if len(text_cells) == 1:
            others = f" (and {first.n_text - 1} other cell(s))" if first.n_text > 1 else ""
            warning = (f"Column {quoted(text_cells[0])} is not clustered: its cell {quoted(first.cell)} on line "
                       f"{first.line}{others} is not a number. Fix it (missing values may be left empty or written "
                       "NA) to cluster this column.")
        else:
            warning = (f"Columns {quoted_list(text_cells)} are not clustered: some of their cells are not numbers "
                       f"(the first: {quoted(first.cell)} on line {first.line} of {quoted(text_cells[0])}). Fix "
                       "those cells (missing values may be left empty or written NA) to cluster these columns.")
    groups = [f"{quoted_list(names)} ({w})" for w, names in why.items() if names]
    note = f"Not clustered: {'; '.join(groups)}." if groups else None
    return warning, note


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
        elif isinstance(values, TextInNumeric):
            others = f" and {values.n_text - 1} other cell(s)" if values.n_text > 1 else ""
            notes.append(f"Column {quoted(c)} was not clustered: its cell {quoted(values.cell)} on line {values.line}"
                         f"{others} "
                         "is not a number. Fix those cells (missing values may be left empty or written NA) "
                         "to use it.")
        elif np.isnan(values).all():
            notes.append(f"Column {quoted(c)} was not clustered: it has no values (every cell is empty or missing).")
        elif c == guessed:
            notes.append(f"Column {quoted(c)} was not clustered: it looks like class labels "
                         f"({np.unique(values[~np.isnan(values)]).size} integer codes). Use it as the label "
                         "column to score the clusters against it, or choose the columns yourself to cluster it.")
        else:
            columns.append(c)
    if text_only:
        notes.append(f"Column(s) holding text were not clustered: {listed_names(text_only)}.")
    return columns, notes


def dataset_from_table(table, *, columns=None, label_column=None, standardize_data=True, name="csv"):
    """Select columns of a parsed CSV and validate the numbers.

    columns: names to cluster on (default: :func:`default_columns`, whose notes
        are added to the data set's notes).
    label_column: optional column of true labels (text or numbers) for NMI / VI.
    With ``columns`` given, the notes begin with what :func:`not_clustered` says of the other columns; its warning
    (columns of numbers left out for their text cells) is also the data set's ``warnings``, which a reader must see.
    Rows with a missing value in a chosen column are dropped and counted in ``notes``;
    infinite values, text in a chosen column, a column with no value, constant
    columns (when standardising), values out of the arithmetic's range, too few
    rows, and too many columns raise DataError.
    """
    notes = list(table.notes)
    chosen = columns is not None
    if label_column is not None and label_column not in table.header:
        raise DataError(f"There is no column {quoted(label_column)} for labels; columns are: "
                        f"{listed_names(table.header)}.")
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
            raise DataError(f"There is no column {quoted(c)}; columns are: {listed_names(table.header)}.")
        if c == label_column:
            raise DataError(f"Column {quoted(c)} is the label column; it cannot also be clustered.")
        if c not in table.numeric:
            raise DataError(f"Column {quoted(c)} holds text, not numbers; deselect it (or use it as the label column).")
        if isinstance(table.numeric[c], TextInNumeric):
            bad = table.numeric[c]
            raise DataError(f"Column {quoted(c)} has a non-numeric cell {quoted(bad.cell)} on line {bad.line}; "
                            "fix or remove that cell (missing values may be left empty or written NA).")
        if np.isnan(table.numeric[c]).all():
            raise DataError(f"Column {quoted(c)} has no values (every cell is empty or missing): deselect it.")
    if len(columns) > MAX_CLUSTER_COLUMNS:
        raise DataError(f"{len(columns)} columns are selected; at most {MAX_CLUSTER_COLUMNS} can be clustered. "
                        "Choose fewer columns (or reduce them with PCA first).")
    X = np.column_stack([table.numeric[c] for c in columns])
    infinite = np.isinf(X)
    if infinite.any():
        row, col = np.argwhere(infinite)[0]
        raise DataError(f"Column {quoted(columns[col])} has an infinite value on line {table.lines[row]}; "
                        "replace it with a number or leave the cell empty to drop the row.")
    missing = np.isnan(X)
    keep = ~missing.any(axis=1)
    if not keep.any():
        worst = int(np.argmax(missing.sum(axis=0)))
        raise DataError(f"Every row has a missing value in the chosen columns (most often in {quoted(columns[worst])}: "
                        f"{int(missing[:, worst].sum())} of {len(X)} rows); deselect that column or fill in "
                        "its missing values.")
    if not keep.all():
        notes.append(f"Dropped {int((~keep).sum())} row(s) with a missing value in the chosen columns.")
    labels = label_names = None
    if label_column is not None:
        # each distinct label text is looked at once: the rows carry its code among the sorted distinct texts
        tokens, codes = np.unique(table.column_text(table.header.index(label_column)), return_inverse=True)
        missing_label = np.array([t.lower() in MISSING_TOKENS for t in tokens], dtype=bool)[codes.reshape(-1)]
        if (missing_label & keep).any():
            notes.append(f"Dropped {int((missing_label & keep).sum())} row(s) with no label in {quoted(label_column)}.")
        keep &= ~missing_label
        used, labels = np.unique(codes.reshape(-1)[keep], return_inverse=True)
        label_names = list(tokens[used])
    X = X[keep]
    n, d = X.shape
    if n == 0:
        raise DataError(f"No row has both values in the chosen columns and a label in {quoted(label_column)}; "
                        "choose another label column (or none).")
    if n < 2:
        raise DataError(f"Only {n} usable row(s); clustering needs at least 2 rows.")
    if n <= d:
        raise DataError(f"Only {n} usable rows for {d} columns; clustering needs more rows than columns. "
                        "Choose fewer columns or add rows.")
    warning, note = not_clustered(table, columns, label_column)
    if chosen:  # (without a choice, default_columns' notes have said what was left out)
        notes = [n for n in (warning, note) if n] + notes
    return finish_dataset(
        name, X, columns, standardize_data=standardize_data,
        description=f"CSV data: {n} rows, columns {listed_names(columns)}",
        labels=labels, label_names=label_names, notes=notes, warnings=[warning] if warning else [],
        source={"kind": "csv", "columns": columns, "label_column": label_column},
    )


def load_csv(source, *, columns=None, label_column=None, standardize_data=True, name=None):
    """Read and validate a CSV file or bytes; see :func:`read_csv_table` and :func:`dataset_from_table`."""
    table = read_csv_table(source)
    if name is None:
        name = Path(source).stem if isinstance(source, (str, os.PathLike)) else "csv"
    return dataset_from_table(table, columns=columns, label_column=label_column,
                              standardize_data=standardize_data, name=name)

"""Data: built-in data sets, CSV parsing with validation, standardisation and embeddings.

Every loader returns a :class:`Dataset`. Bad input raises :class:`DataError` whose message names the problem and
what to do; rows or columns that are left out on purpose are reported in ``Dataset.notes``, by name and count.

``pcrp.data`` is the import point; the modules behind it, lowest first:

- ``limits``: the size limits (rows, bytes, columns), read at call time.
- ``dataset``: :class:`Dataset`, :class:`DataError`, standardisation.
- ``file_bytes``: a file's bytes, refusing what is not a regular file or is too large; the bundled files.
- ``plain_csv``: the fast path of ``csv_table`` for a plain CSV of numbers (NumPy's C parser, the same table).
- ``csv_table``: CSV bytes to a :class:`CsvTable` (decoding, the separator, rows, numeric columns), in linear time.
- ``column_choice``: which columns are clustered and which hold labels; a :class:`Dataset` from a table.
- ``mnist_digits``: MNIST subsets and their embeddings.
- ``builtin_sets``: Old Faithful, the simulations, and :func:`load` (a built-in name or a CSV path).
"""

from .builtin_sets import OLD_FAITHFUL_COLUMNS, SIMULATIONS, load, old_faithful, simulation
from .column_choice import (LABEL_WORDS, MAX_GUESSED_CLASSES, dataset_from_table, default_columns,
                            guess_label_column, load_csv, not_clustered)
from .csv_table import DELIMITERS, MISSING_TOKENS, SNIFF_CHARS, SNIFF_ROWS, CsvTable, detect_delimiter, read_csv_table
from .dataset import BUILTIN_NAMES, Dataset, DataError, check_arithmetic_range, quoted, standardize
from .file_bytes import read_file_bytes
from .limits import (APP_MAX_BYTES, APP_MAX_ROWS, MAX_BYTES, MAX_CLUSTER_COLUMNS, MAX_FILE_COLUMNS, MAX_ROWS,
                     MNIST_BUNDLED, MNIST_FIRST_PER_DIGIT, MNIST_N, MNIST_PER_DIGIT, SIMULATION_N)
from .mnist_digits import MNIST_EMBEDDINGS, bundled_mnist, embed, mnist, read_idx, read_mnist_idx_folder

_bundled_mnist = bundled_mnist  # its name before the split (tests/test_reproduce_seeds.py)

__all__ = [
    "APP_MAX_BYTES", "APP_MAX_ROWS", "BUILTIN_NAMES", "DELIMITERS", "LABEL_WORDS", "MAX_BYTES", "MAX_CLUSTER_COLUMNS",
    "MAX_FILE_COLUMNS", "MAX_GUESSED_CLASSES", "MAX_ROWS",
    "MNIST_BUNDLED", "MNIST_FIRST_PER_DIGIT", "MNIST_N", "MNIST_PER_DIGIT", "SIMULATION_N", "MISSING_TOKENS",
    "MNIST_EMBEDDINGS", "OLD_FAITHFUL_COLUMNS",
    "SIMULATIONS", "SNIFF_CHARS", "SNIFF_ROWS", "CsvTable", "DataError", "Dataset", "bundled_mnist",
    "check_arithmetic_range", "dataset_from_table", "default_columns", "detect_delimiter", "embed",
    "guess_label_column", "load", "load_csv", "mnist", "not_clustered", "old_faithful", "quoted", "read_csv_table",
    "read_file_bytes",
    "read_idx", "read_mnist_idx_folder", "simulation", "standardize",
]

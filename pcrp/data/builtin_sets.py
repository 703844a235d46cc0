"""The built-in data sets (Old Faithful, the simulations; MNIST in :mod:`pcrp.data.mnist_digits`) and
:func:`load`, which takes a built-in name or a CSV path."""

import numpy as np

from . import limits
from .column_choice import dataset_from_table, listed_names, load_csv
from .csv_table import read_csv_table
from .dataset import BUILTIN_NAMES, DataError, finish_dataset
from .file_bytes import builtin_bytes
from .mnist_digits import mnist

OLD_FAITHFUL_COLUMNS = ("eruptions", "waiting")


def old_faithful(standardize_data=True, columns=None):
    """The 272 Old Faithful eruptions (duration and waiting time, minutes), as R's ``faithful``.

    columns: a subset of OLD_FAITHFUL_COLUMNS to keep (default both).
    """
    table = read_csv_table(builtin_bytes("old_faithful.csv"))
    if columns is not None:
        unknown = [c for c in columns if c not in OLD_FAITHFUL_COLUMNS]
        if unknown:
            raise DataError(f"Old Faithful has no column {unknown[0]!r}; its columns are "
                            f"{', '.join(OLD_FAITHFUL_COLUMNS)}.")
    ds = dataset_from_table(table, columns=columns, standardize_data=standardize_data, name="old-faithful")
    ds.description = ("Old Faithful geyser: 272 eruptions, eruption duration (min) and waiting time to "
                      "the next eruption (min); R datasets::faithful. No true labels.")
    if columns is not None:
        ds.description += f" Columns: {listed_names(ds.columns)}."
    ds.source = {"kind": "builtin", "name": "old-faithful"}
    if columns is not None:
        ds.source["columns"] = list(ds.columns)
    return ds


# The paper prints no parameters for its simulations. Sim 1 and Sim 2 are calibrated (pcrp/datasets/README.md) so
# that our CRP and CRP-Oracle rows match the paper's Table 1 within 0.03 NMI, 0.1 VI and 0.5 K: not the paper's own.
SIMULATIONS = {
    "sim1": {"weights": [0.30, 0.26, 0.44], "means": [-17.6, -8.0, 1.0], "sds": [0.675, 1.5, 3.6],
             "description": "Sim 1 (calibrated to the paper's Table 1): three 1-D Gaussians, narrow to wide "
                            "(weights .30/.26/.44, means -17.6, -8, 1, sds 0.675, 1.5, 3.6)."},
    "sim2": {"weights": [0.3, 0.4, 0.3], "means": [-13.8, -5.0, 3.8], "sds": [1.6, 1.6, 1.6],
             "description": "Sim 2 (calibrated to the paper's Table 1): three well separated 1-D Gaussians "
                            "(weights .3/.4/.3, means -13.8, -5, 3.8, sds 1.6)."},
    "demo": {"weights": [0.35, 0.40, 0.25], "means": [0.0, 2.0, 5.0], "sds": [0.5, 0.5, 1.0],
             "description": "The authors' demo mixture (weights .35/.40/.25, means 0/2/5, sds .5/.5/1)."},
}


def simulation(which="sim1", n=limits.SIMULATION_N, seed=0, standardize_data=False):
    """Draw ``n`` points of a 1-D three-component simulation with its true labels.

    Not standardised by default, so the axis matches the paper's Fig. 2 (about -20..10).
    """
    if which not in SIMULATIONS:
        raise DataError(f"Unknown simulation {which!r}; choose one of {', '.join(SIMULATIONS)}.")
    n = int(n)
    if not 2 <= n <= limits.MAX_ROWS:
        raise DataError(f"N must be between 2 and {limits.MAX_ROWS:,} (got {n}).")
    spec = SIMULATIONS[which]
    rng = np.random.default_rng(seed)
    labels = rng.choice(3, size=n, p=spec["weights"])
    x = rng.normal(np.take(spec["means"], labels), np.take(spec["sds"], labels))
    return finish_dataset(which, x[:, None], ["x"], standardize_data=standardize_data,
                   description=spec["description"], labels=labels,
                   label_names=[f"component {k + 1}" for k in range(3)],
                   source={"kind": "builtin", "name": which, "n": n, "seed": seed})


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
        return simulation(name_or_path, n=limits.SIMULATION_N if n is None else n, seed=seed,
                          standardize_data=bool(standardize_data))
    if name_or_path == "mnist":
        return mnist(digits=digits, n=limits.MNIST_N if n is None else n, embedding=embedding, dims=dims, seed=seed,
                     standardize_data=True if standardize_data is None else standardize_data)
    return load_csv(name_or_path, columns=columns, label_column=label_column,
                    standardize_data=True if standardize_data is None else standardize_data)

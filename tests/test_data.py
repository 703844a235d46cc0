"""Data layer: built-in sets and every kind of bad CSV, each with the message the user sees."""

import gzip
import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pcrp import data
from pcrp.data import DataError, dataset_from_table, load_csv, read_csv_table

GOOD = b"x,y,label\n1,2,a\n2,3.5,a\n3,1,b\n4,0,b\n5,2,a\n"


def test_good_csv_with_label_column():
    ds = load_csv(GOOD, label_column="label")
    assert ds.columns == ["x", "y"] and ds.X.shape == (5, 2)
    assert np.allclose(ds.X.mean(axis=0), 0) and np.allclose(ds.X.std(axis=0), 1)
    assert list(ds.labels) == [0, 0, 1, 1, 0] and ds.label_names == ["a", "b"]
    raw = load_csv(GOOD, label_column="label", standardize_data=False)
    assert np.array_equal(raw.X[:, 1], [2, 3.5, 1, 0, 2])


@pytest.mark.parametrize("content,message", [
    (b"", "The file is empty"),
    (b"  \n\n", "The file is empty"),
    (b"x,y\n", "has a header but no data rows"),
    (b"name,city\nann,paris\nbob,rome\n", "No numeric column found"),
    (b"x,y\n1,2\n3\n", "Row 3 has 1 fields but the header has 2"),
    (b"x,y\n1,2\n", "Only 1 usable row"),
    (b"a,b,c\n1,2,3\n4,5,7\n7,1,1\n", "Only 3 usable rows for 3 columns"),
    (b"x,y\n1,5\n2,5\n3,5\n", "Column 'y' is constant"),
    (b"x,x\n1,2\n3,4\n5,6\n", "The column name 'x' appears more than once"),
    (b"x,\n1,2\n3,4\n5,6\n", "Column 2 of the header has no name"),
    (b"\x00\x01\x02\x03garbage\xff", "looks binary"),
    (b"x,y\n1,2\n3,inf\n4,5\n", "infinite value on line 3"),
    (b"x,y\n1,2\n3,-Infinity\n4,5\n", "infinite value on line 3"),
    (b"x,y\nNA,1\n,2\nnan,3\n", "Every row has a missing value"),
])
def test_bad_csv_messages(content, message):
    with pytest.raises(DataError, match=message):
        load_csv(content)


def test_non_numeric_cell_in_numeric_column_is_named():
    with pytest.raises(DataError, match=r"Column 'y' has a non-numeric cell '12a' on line 4"):
        load_csv(b"x,y\n1,2\n2,3\n3,12a\n4,5\n", columns=["x", "y"])
    # without an explicit choice, the broken column is left out only if others remain: it is not silently used
    ds = load_csv(b"x,y\n1,2\n2,3\n3,12a\n4,5\n")
    assert ds.columns == ["x"]


def test_missing_values_drop_rows_with_a_count():
    ds = load_csv(b"x,y\n1,2\n2,\n3,NA\n4,5\n5,1\n6,0\n")
    assert ds.n == 4
    assert any("Dropped 2 row(s) with a missing value" in n for n in ds.notes)


@pytest.mark.parametrize("content,note", [
    (b"x;y\n1;2\n2;3\n4;1\n", "separated by ';'"),
    (b"x\ty\n1\t2\n2\t3\n4\t1\n", "separated by tab"),
])
def test_other_delimiters_are_detected_and_reported(content, note):
    ds = load_csv(content)
    assert ds.columns == ["x", "y"] and ds.n == 3
    assert any(note in n for n in ds.notes)


def test_bom_and_latin1():
    ds = load_csv(b"\xef\xbb\xbfx,y\n1,2\n2,3\n4,1\n")
    assert ds.columns == ["x", "y"] and not ds.notes
    ds = load_csv("h\xf6he,y\n1,2\n2,3\n4,1\n".encode("latin-1"))
    assert ds.columns == ["h\xf6he", "y"]
    assert any("not valid UTF-8" in n for n in ds.notes)


def test_size_row_and_width_limits(tmp_path, monkeypatch):
    monkeypatch.setattr(data, "MAX_BYTES", 100)
    with pytest.raises(DataError, match="the limit is 0 MiB|limit is"):
        load_csv(b"x,y\n" + b"1,2\n" * 60)
    big = tmp_path / "big.csv"
    big.write_bytes(b"x,y\n" + b"1,2\n" * 60)
    with pytest.raises(DataError, match="limit"):
        load_csv(big)
    monkeypatch.undo()
    monkeypatch.setattr(data, "MAX_ROWS", 10)
    with pytest.raises(DataError, match="The file has 11 rows; the limit is 10"):
        load_csv(b"x,y\n" + b"1,2\n" * 11)
    monkeypatch.undo()
    wide = ",".join(f"c{j}" for j in range(600)) + "\n" + ",".join("1" for _ in range(600)) + "\n"
    with pytest.raises(DataError, match="600 columns; the limit is 500"):
        load_csv(wide.encode())
    rng = np.random.default_rng(0)
    cols = 60
    text = ",".join(f"c{j}" for j in range(cols)) + "\n" + "\n".join(
        ",".join(f"{v:.3f}" for v in row) for row in rng.normal(size=(100, cols)))
    with pytest.raises(DataError, match="60 columns are selected; at most 50"):
        load_csv(text.encode())


def test_column_choice_errors():
    table = read_csv_table(GOOD)
    with pytest.raises(DataError, match="holds text"):
        dataset_from_table(table, columns=["x", "label"])
    with pytest.raises(DataError, match="There is no column 'z'"):
        dataset_from_table(table, columns=["z"])
    with pytest.raises(DataError, match="is the label column"):
        dataset_from_table(table, columns=["x"], label_column="x")
    with pytest.raises(DataError, match="Choose at least one column"):
        dataset_from_table(table, columns=[])


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=400))
def test_parser_never_crashes_on_arbitrary_bytes(blob):
    try:
        ds = load_csv(blob)
    except DataError as err:
        assert str(err)
    else:
        assert ds.X.ndim == 2 and np.all(np.isfinite(ds.X))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(st.one_of(st.floats(allow_nan=True, allow_infinity=True, width=32),
                                   st.sampled_from(["", "NA", "abc", "1e3", " 7 "])),
                         min_size=2, max_size=2), min_size=0, max_size=12))
def test_parser_on_structured_tables(rows):
    text = "a,b\n" + "\n".join(",".join(str(v) for v in row) for row in rows)
    try:
        ds = load_csv(text.encode())
    except DataError as err:
        assert str(err)
    else:
        assert np.all(np.isfinite(ds.X)) and ds.n >= 2


def test_builtins():
    of = data.old_faithful()
    assert of.X.shape == (272, 2) and of.columns == ["eruptions", "waiting"] and of.labels is None
    raw = data.old_faithful(standardize_data=False)
    assert raw.X[0].tolist() == [3.6, 79.0]
    s1 = data.simulation("sim1", n=500, seed=1)
    assert s1.X.shape == (500, 1) and s1.true_k == 3 and -25 < s1.X.min() and s1.X.max() < 15
    assert np.array_equal(s1.X, data.simulation("sim1", n=500, seed=1).X)
    for name in ("sim2", "demo"):
        assert data.simulation(name, n=50).n == 50
    with pytest.raises(DataError, match="Unknown simulation"):
        data.simulation("sim3")


def test_mnist_subset_with_pixels():
    ds = data.mnist(digits=(1, 2, 3, 4), n=400, embedding="pca", dims=3, seed=0)
    assert ds.X.shape == (400, 3) and ds.raw.shape == (400, 784) and ds.true_k == 4
    assert ds.label_names == ["1", "2", "3", "4"]
    with pytest.raises(DataError, match="N must be between"):
        data.mnist(n=2001)


def _write_idx(path, array, gz):
    header = struct.pack(">BBBB", 0, 0, 8, array.ndim) + struct.pack(">" + "I" * array.ndim, *array.shape)
    payload = header + array.astype(np.uint8).tobytes()
    (gzip.open if gz else open)(path, "wb").write(payload)


@pytest.mark.parametrize("gz", [False, True])
def test_mnist_idx_folder(tmp_path, gz):
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, size=(60, 28, 28))
    labels = np.repeat(np.arange(1, 5), 15)
    suffix = ".gz" if gz else ""
    _write_idx(tmp_path / f"train-images-idx3-ubyte{suffix}", images, gz)
    _write_idx(tmp_path / f"train-labels-idx1-ubyte{suffix}", labels, gz)
    ds = data.mnist(n=40, embedding="pca", dims=2, idx_folder=tmp_path)
    assert ds.X.shape == (40, 2) and ds.raw.shape == (40, 784)
    (tmp_path / f"train-labels-idx1-ubyte{suffix}").unlink()
    with pytest.raises(DataError, match="has no train-labels-idx1-ubyte"):
        data.mnist(n=40, idx_folder=tmp_path)

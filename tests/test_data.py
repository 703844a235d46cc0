"""Data layer: built-in sets and every kind of bad CSV, each with the message the user sees."""

import csv
import gzip
import os
import stat
import struct
import threading
import time

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from pcrp import data
from pcrp.data import limits
from pcrp.data.file_bytes import size_text
from pcrp.data import (
    DataError,
    dataset_from_table,
    default_columns,
    detect_delimiter,
    guess_label_column,
    load_csv,
    read_csv_table,
)

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
    (b"x,y\nNA,1\n2,\nnan,\n",
     r"Every row has a missing value in the chosen columns \(most often in 'x': 2 of 3 rows\); deselect that column"),
    (b"x,y\n1,2\n3\n", "Row 3 has 1 fields"),
    (b"x,y\n1,2\n\n\n3,4\n5\n", "Row 6 has 1 fields"),  # rows are named by their line in the file
    (b'x,y\n1,2\n3,"4\n', "cell ending on line 3 is longer|not valid CSV"),
    (b",,\n" * 5 + b"\n", "holds only separators"),
])
def test_bad_csv_messages(content, message):
    with pytest.raises(DataError, match=message):
        load_csv(content)


def test_a_first_row_of_numbers_is_data_not_a_header_and_the_note_says_so():
    """Without a header the first row used to become the column names and was lost from the data."""
    ds = load_csv(b"1.5,2\n3,4\n\n5,6.5\n7,8\n", standardize_data=False)
    assert ds.n == 4 and ds.columns == ["x1", "x2"]
    assert np.array_equal(ds.X, [[1.5, 2], [3, 4], [5, 6.5], [7, 8]])
    assert "No header found: the first row holds only numbers, so it is read as data and the columns are named " \
           "x1..x2." in ds.notes
    table = read_csv_table(b"-1e3;2\n3;4\n")  # any separator, any number format float() reads
    assert table.header == ["x1", "x2"] and table.n_rows == 2 and table.lines == [1, 2]
    with pytest.raises(DataError, match=r"Row 3 has 1 fields but the header has 2"):  # lines stay the file's
        read_csv_table(b"1,2\n3,4\n5\n")
    # a header with some numeric names, or text in the first row, is a header; so is a name like "nan" or "inf"
    for content, header in ((b"x,2020\n1,2\n3,4\n", ["x", "2020"]), (b"1,abc\n2,3\n", ["1", "abc"]),
                            (b"inf,1\n2,3\n", ["inf", "1"])):
        table = read_csv_table(content)
        assert table.header == header and table.n_rows == len(content.splitlines()) - 1
        assert not any("No header found" in note for note in table.notes)


def test_non_numeric_cell_in_numeric_column_is_named():
    with pytest.raises(DataError, match=r"Column 'y' has a non-numeric cell '12a' on line 4"):
        load_csv(b"x,y\n1,2\n2,3\n3,12a\n4,5\n", columns=["x", "y"])
    # without an explicit choice the broken column is left out, and a note says which cell keeps it out
    ds = load_csv(b"x,y\n1,2\n2,3\n3,12a\n4,5\n")
    assert ds.columns == ["x"]
    assert "Column 'y' was not clustered: its cell '12a' on line 4 is not a number." in ds.notes[0]
    ds = load_csv(b"x,y\n1,2\n\n2,n.a.\n3,12a\n4,5\n")  # blank line: line numbers are the file's
    assert "its cell 'n.a.' on line 4 and 1 other cell(s) is not a number" in ds.notes[0]


def test_all_missing_column_is_named():
    content = b"x,y,z\n1,2,\n2,3,NA\n4,1,\n5,5,?\n"
    with pytest.raises(DataError, match=r"Column 'z' has no values \(every cell is empty or missing\): deselect it"):
        load_csv(content, columns=["x", "z"])
    ds = load_csv(content)  # by default it is left out, with a note, and every row is kept
    assert ds.columns == ["x", "y"] and ds.n == 4
    assert ds.notes == ["Column 'z' was not clustered: it has no values (every cell is empty or missing)."]


def test_text_columns_are_noted_when_left_out():
    ds = load_csv(b"name,x,y,city\nann,1,2,rome\nbob,2,3,oslo\ncy,4,1,rome\n")
    assert ds.columns == ["x", "y"]
    assert ds.notes == ["Column(s) holding text were not clustered: name, city."]


def test_not_clustered_says_why_each_column_is_left_out_and_warns_of_text_cells():
    content = (b"id,x,y,name,z,class,w\n" + b"".join(
        f"{i},{i % 5}.5,{'12a' if i == 3 else i % 7},n{i},,{i % 2},{(i * 3) % 11}\n".encode() for i in range(20)))
    table = read_csv_table(content)
    warning, note = data.not_clustered(table, ["x"])
    assert warning == ("Column 'y' is not clustered: its cell '12a' on line 5 is not a number. Fix it (missing values "
                       "may be left empty or written NA) to cluster this column.")
    assert note == ("Not clustered: 'name' (text); 'z' (no values); 'class' (class labels); 'id' (like an identifier); "
                    "'w' (not chosen).")
    assert data.not_clustered(table, ["x", "w", "id"], label_column="class")[1] == ("Not clustered: 'name' (text); 'z' "
                                                                                  "(no values).")
    ds = dataset_from_table(table, columns=["x", "w"], label_column="class")
    assert ds.warnings == [warning] and ds.notes[0] == warning and ds.notes[1].startswith("Not clustered: 'name'")
    assert dataset_from_table(table, columns=["x", "w", "id"], label_column="class").notes[:2] == [
        warning, "Not clustered: 'name' (text); 'z' (no values)."]
    two = read_csv_table(b"a,b,c\n1,x,2\n2,3,y\n3,4,5\n")
    assert data.not_clustered(two, ["a"]) == (
        "Columns 'b', 'c' are not clustered: some of their cells are not numbers (the first: 'x' on line 2 of 'b'). "
        "Fix those cells (missing values may be left empty or written NA) to cluster these columns.", None)
    assert data.not_clustered(two, ["a", "b", "c"]) == (None, None)
    assert load_csv(b"x,y\n1,2\n2,3\n3,12a\n4,5\n").warnings[0].startswith("Column 'y' is not clustered")


def test_long_and_many_column_names_are_cut_in_messages():
    many = [f"c{j}" for j in range(40)]
    assert data.quoted("W" * 61) == repr("W" * 60) + "… (61 characters)" and data.quoted("a\nb") == "'a\\nb'"
    table = read_csv_table((",".join(many + ["W" * 5000]) + "\n" + ",".join(["1"] * 41) + "\n"
                            + ",".join(["2"] * 40 + ["t"]) + "\n").encode())
    warning, note = data.not_clustered(table, ["c0"])
    assert note == f"Not clustered: {', '.join(repr(c) for c in many[1:7])} and 33 more (not chosen)."
    assert warning.startswith("Column 'WWW") and "… (5,000 characters) is not clustered" in warning
    assert len(warning) < 300
    with pytest.raises(DataError) as err:
        dataset_from_table(table, columns=["nope"])
    assert str(err.value).endswith("c10, c11 and 29 more.") and len(str(err.value)) < 300


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
    monkeypatch.setattr(limits, "MAX_BYTES", 100)
    too_big = r"The file is 244 bytes; the limit is 100 bytes\. Sample rows"
    with pytest.raises(DataError, match=too_big):
        load_csv(b"x,y\n" + b"1,2\n" * 60)
    big = tmp_path / "big.csv"
    big.write_bytes(b"x,y\n" + b"1,2\n" * 60)
    with pytest.raises(DataError, match=too_big):
        load_csv(big)
    load_csv(b"x,y\n" + b"1,2\n3,4\n" * 12)  # 100 bytes: at the limit is allowed
    monkeypatch.undo()
    assert size_text(data.APP_MAX_BYTES) == "10.0 MiB"
    monkeypatch.setattr(limits, "MAX_ROWS", 10)
    with pytest.raises(DataError, match="The file has more than 10 rows, the limit"):
        load_csv(b"x,y\n" + b"1,2\n3,4\n" * 5 + b"1,2\n")
    assert load_csv(b"x,y\n" + b"1,2\n3,4\n" * 5).n == 10
    with pytest.raises(DataError, match="more than 10 rows of empty cells"):
        load_csv(b"x,y\n1,2\n2,3\n3,1\n" + b",\n" * 11)
    assert load_csv(b"x,y\n1,2\n2,3\n3,1\n" + b",\n" * 10 + b"\n" * 100).n == 3  # empty lines are free
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


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(st.one_of(st.floats(allow_nan=False, allow_infinity=False, width=32),
                                   st.sampled_from(["", "NA", "nan", " ? ", "null"])),
                         min_size=2, max_size=2), min_size=1, max_size=12))
def test_missing_cells_drop_exactly_their_rows(rows):
    text = "a,b\n" + "".join(",".join(str(v) for v in row) + "\n" for row in rows)
    rows = [row for row in rows if row != ["", ""]]  # a line of empty cells is skipped as blank
    complete = [[float(v) for v in row] for row in rows if all(isinstance(v, float) for v in row)]
    empty = [c for j, c in enumerate("ab") if not any(isinstance(row[j], float) for row in rows)]
    try:
        ds = load_csv(text.encode(), columns=["a", "b"], standardize_data=False)
    except DataError as err:
        if not rows:
            assert "a header but no data rows" in str(err)
        elif empty:
            assert f"Column {empty[0]!r} has no values" in str(err)
        else:
            assert len(complete) <= 2 and ("usable row" in str(err) or "Every row has a missing value" in str(err))
    else:
        assert not empty and len(complete) > 2
        assert np.array_equal(ds.X, np.array(complete))
        dropped = len(rows) - len(complete)
        note = f"Dropped {dropped} row(s) with a missing value in the chosen columns."
        assert ds.notes == ([note] if dropped else [])


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(data.DELIMITERS), st.sampled_from(["\n", "\r\n", "\r"]),
       st.integers(1, 5), st.integers(3, 25), st.data())
def test_numeric_tables_round_trip_with_any_delimiter(delimiter, line_end, n_cols, n_rows, draw):
    values = np.array(draw.draw(st.lists(st.floats(-1e9, 1e9, allow_nan=False), min_size=n_cols * n_rows,
                                         max_size=n_cols * n_rows))).reshape(n_rows, n_cols)
    # a quoted text column full of delimiters and quotes must not confuse detection or parsing
    names = [draw.draw(st.text(alphabet=',;\t|" ab', min_size=1, max_size=6)) for _ in range(n_rows)]
    header = ["note"] + [f"c{j}" for j in range(n_cols)]
    lines = [delimiter.join(header)] + [
        delimiter.join(['"' + name.replace('"', '""') + '"'] + [repr(float(v)) for v in row])
        for name, row in zip(names, values)]
    table = read_csv_table((line_end.join(lines) + line_end).encode())
    assert table.delimiter == delimiter and table.header == header and table.n_rows == n_rows
    assert [row[0] for row in table.cells] == names
    for j in range(n_cols):
        assert np.array_equal(table.numeric[f"c{j}"], values[:, j])


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=',;\t|"\r\n a1.-e?', max_size=300))
def test_parser_never_crashes_on_csv_like_text(text):
    try:
        ds = load_csv(text.encode())
    except DataError as err:
        assert str(err) and "\n" not in str(err)
    else:
        assert ds.X.ndim == 2 and np.all(np.isfinite(ds.X)) and ds.n > ds.dim


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
    with pytest.raises(DataError, match="N must be between 3 and 4000"):
        data.mnist(n=4001)  # the bundle holds 1,000 of each digit (tests/test_mnist_bundle.py)


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


# ----------------------------------------------------------------------------- parsing time

# Adversarial shapes of about 1 MB (the sniffer line is the 78 kB upload that froze the server
# for more than 30 s in issue 10). Linear parsing takes a few tens of milliseconds of CPU on
# each; any quadratic step takes minutes at this size (1e12 character steps), and csv.Sniffer
# took over 30 s on the 78 kB file alone. The bound is 1 s of this thread's CPU time (not wall
# time, so other work on a shared machine does not count): generous for linear code, far
# below what quadratic code needs. The files are parsed under the app's limits (what a visitor can upload).
ADVERSARIAL = {
    "sniffer line (issue 10)": b"x,y\n" + b',"a' * 26_000,
    "sniffer line, 1 MB": b"x,y\n" + b',"a' * 350_000,
    "sniffer line as header": b',"a' * 350_000,
    "one huge line": b"x\n" + b"1.5," * 260_000,
    "one huge header": b"c," * 500_000,
    "many tiny rows": b"x\n" + b"1\n" * 500_000,
    "many empty lines": b"x,y\n1,2\n2,3\n3,1\n" + b"\n" * 1_000_000,
    "many rows of empty cells": b"x,y\n1,2\n2,3\n3,1\n" + b",\n" * 500_000,
    "deep quote nesting": b'x\n"' + b'""' * 500_000 + b'"\n',
    "unclosed quote": b'x,y\n1,"' + b"2\n" * 500_000,
    "quotes only": b'"' * 1_000_000,
    "\\r-only line ends": b"x,y\r" + b"1.5,2.5\r" * 9_999,
    "\\r-only, 1 MB": b"x,y\r" + b"1.5,2.5\r" * 130_000,
}


@pytest.mark.parametrize("content", ADVERSARIAL.values(), ids=ADVERSARIAL.keys())
def test_parsing_is_fast_on_adversarial_files(content):
    start = time.thread_time()
    try:
        table = read_csv_table(content, max_rows=data.APP_MAX_ROWS, max_bytes=data.APP_MAX_BYTES)
    except DataError as err:
        assert str(err)
    else:
        assert table.n_rows >= 1
    assert time.thread_time() - start < 1.0


def test_delimiter_detection_reads_a_bounded_prefix(monkeypatch):
    seen = []
    real_reader = csv.reader

    def spy(stream, **kwargs):
        seen.append(len(stream.getvalue()))
        return real_reader(stream, **kwargs)

    monkeypatch.setattr(csv, "reader", spy)
    assert detect_delimiter("a;b\n" + "1;2\n" * 100_000) == ";"
    assert seen and max(seen) <= data.SNIFF_CHARS


# ----------------------------------------------------------------------------- delimiters

@pytest.mark.parametrize("text,delimiter", [
    ("x,y\n1,2\n", ","),
    ("x;y\n1,5;2,5\n3,1;4\n", ";"),                    # decimal commas under semicolons
    ("name\tv\nSmith, J\t1\nLee, K\t2\n", "\t"),        # commas inside tab-separated text
    ('"a,b";c\n"1,2";3\n', ";"),                       # a quoted comma is not a separator
    ("a|b,c\n1,2\n3,4\n", ","),                        # '|' splits the header but not the rows
    ("x\n1\n2\n", ","),                                # one column
    ("x,y\r1,2\r3,4\r", ","),                          # \r line ends
    ("a,b,c\n" + "1,2,3\n" * 10_000, ","),
    ("a;b\n" + "1;2\n" * 3 + "1,1;2\n", ";"),
], ids=["comma", "semicolon over decimal commas", "tab over commas in text", "quoted comma", "bar only in header",
        "one column", "carriage returns", "long file", "decimal comma late"])
def test_detect_delimiter(text, delimiter):
    assert detect_delimiter(text) == delimiter


def test_carriage_return_line_ends_and_real_line_numbers():
    ds = load_csv(b"x,y\r1,2\r3,4\r5,1\r")
    assert ds.n == 3 and ds.columns == ["x", "y"]
    with pytest.raises(DataError, match="non-numeric cell 'b' on line 5"):
        load_csv(b"x,y\r\n1,2\r\n\r\n3,4\r\n5,b\r\n6,1\r\n", columns=["y"])
    with pytest.raises(DataError, match="infinite value on line 4"):
        load_csv(b"x,y\r1,2\r\r3,inf\r5,1\r")


# ----------------------------------------------------------------------------- files

def _message(path):
    with pytest.raises(DataError) as info:
        load_csv(path)
    message = str(info.value)
    assert "\n" not in message
    return message


def test_missing_file_and_directory(tmp_path):
    assert _message(tmp_path / "nope.csv").startswith(f"No such file: {tmp_path / 'nope.csv'}. Give a CSV path")
    assert _message(tmp_path / "nope" / "x.csv").startswith("No such file")
    assert _message(tmp_path) == (f"{tmp_path} is a directory, not a CSV file: give the path of a CSV file inside it "
                                  "(or a built-in data set name: old-faithful, mnist, sim1, sim2, demo).")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes on this platform")
def test_fifo_is_refused_without_opening_it(tmp_path):
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    result = []
    # Opening a FIFO for reading blocks until a writer comes: run in a daemon thread so that a
    # loader that opens it fails this test instead of hanging it.
    worker = threading.Thread(target=lambda: result.append(_message(fifo)), daemon=True)
    worker.start()
    worker.join(10)
    assert not worker.is_alive(), "the loader opened the FIFO and waits for a writer"
    assert result == [(f"{fifo} is a named pipe (FIFO), not a regular file: CSV data are read only from regular "
                       "files (a pipe or a device can block or never end); save the data to a .csv file and give "
                       "its path.")]


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_device_is_refused():
    assert _message("/dev/zero").startswith("/dev/zero is a character device, not a regular file:")


@pytest.mark.skipif(not os.path.exists("/proc/self/mem"), reason="needs Linux /proc")
def test_proc_self_mem_gives_a_read_error():
    # a 'regular' file of size 0 whose read at offset 0 fails with EIO
    assert _message("/proc/self/mem") == ("/proc/self/mem could not be read (Input/output error): it is not an "
                                          "ordinary file on disk; copy the data into a CSV file and give its path.")


@pytest.mark.skipif(not os.path.exists("/proc/self/maps"), reason="needs Linux /proc")
def test_read_stops_at_the_limit_whatever_the_listed_size(monkeypatch):
    # /proc files list size 0 but hold more: the reader must stop at MAX_BYTES + 1, not trust st_size
    assert os.stat("/proc/self/maps").st_size == 0
    monkeypatch.setattr(limits, "MAX_BYTES", 100)
    assert _message("/proc/self/maps").startswith(
        "The file is larger than 100 bytes (more than the size the system reported for it); the limit is 100 bytes.")


def test_unreadable_file(tmp_path, monkeypatch):
    path = tmp_path / "secret.csv"
    path.write_bytes(GOOD)
    path.chmod(0)
    if os.geteuid() == 0:
        # root reads a chmod-000 file anyway: make the open fail as it does for other users
        real_open = os.open

        def refuse(p, flags, *args, **kwargs):
            if os.fspath(p) == os.fspath(path):
                raise PermissionError(13, "Permission denied", os.fspath(p))
            return real_open(p, flags, *args, **kwargs)

        monkeypatch.setattr(os, "open", refuse)
    assert _message(path) == (f"Permission denied: you may not read {path}; make it readable (e.g. chmod u+r) "
                              "or copy it somewhere you can read.")
    path.chmod(stat.S_IRUSR | stat.S_IWUSR)


# ----------------------------------------------------------------------------- number range

def test_values_near_the_float_limits():
    values = np.array([1.0, -1.7, 1.7, 0.5, 0.25])
    text = b"x,y\n" + b"".join(f"{float(v)!r},{k}\n".encode() for k, v in enumerate(values * 1e308))
    ds = load_csv(text)  # plain arithmetic overflows: mean and variance of these are inf
    reference = load_csv(b"x,y\n" + b"".join(f"{float(v)!r},{k}\n".encode() for k, v in enumerate(values)))
    assert np.all(np.isfinite(ds.X)) and np.allclose(ds.X, reference.X, rtol=1e-12, atol=1e-12)
    assert ds.scale[0] == pytest.approx(reference.scale[0] * 1e308, rel=1e-12)
    with pytest.raises(DataError, match=r"Column 'x' holds values up to 1.7e\+308, too large to compute with as "
                                        r"they are \(their squares overflow\): standardise the columns"):
        load_csv(text, standardize_data=False)


@pytest.mark.parametrize("scale", [1e-300, 1e-310, 2.0**-1060])
def test_tiny_values_are_not_constant(scale):
    values = np.array([1.0, 2.0, 3.0, 5.0, 8.0])
    text = b"x\n" + b"".join(f"{float(v * scale)!r}\n".encode() for v in values)
    ds = load_csv(text)
    exact = (values - values.mean()) / values.std()
    # subnormal inputs (below 2.2e-308) carry fewer digits: compare to the digits they keep
    kept = np.array([float(v * scale) for v in values]) / scale
    assert np.allclose(ds.X[:, 0], (kept - kept.mean()) / kept.std(), rtol=1e-9, atol=1e-9)
    assert np.allclose(ds.X[:, 0], exact, atol=1e-3)
    with pytest.raises(DataError, match="Column 'x' holds values no larger than .* too small to compute with"):
        load_csv(text, standardize_data=False)


def test_constant_column_is_still_named():
    with pytest.raises(DataError, match=r"Column 'x' is constant \(every value is 1e-300\)"):
        load_csv(b"x,y\n1e-300,1\n1e-300,2\n1e-300,3\n")


def test_spread_below_the_smallest_subnormal_is_refused():
    # 5e-324 is the smallest float above 0: the standard deviation of these (2.5e-324) rounds to 0
    with pytest.raises(DataError, match=r"Column 'x' cannot be standardised: its values \(from 4.94066e-324 to "
                                        r"9.88131e-324\) are so close to the smallest representable numbers"):
        load_csv(b"x\n5e-324\n1e-323\n5e-324\n")


@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=2, max_size=30).filter(lambda v: len(set(v)) > 1),
       st.integers(-1000, 1000))
@example(values=[0.0, 0.0, 2.225073858507e-311], power=10)  # subnormal input: Z exact, scale not comparable
@example(values=[0.0, 5e-324], power=0)  # a spread too small to standardise: refused with a message
def test_standardize_is_exactly_scale_invariant_for_powers_of_two(values, power):
    X = np.array(values)[:, None]
    scaled = np.ldexp(X, power)
    if not np.array_equal(np.ldexp(scaled, -power), X):
        return  # overflow, or bits lost below the normal range: the scaled data are other numbers
    try:
        Z, center, scale = data.standardize(X, ["x"])
    except DataError as err:  # a spread among the smallest subnormals is refused by design (test further up)
        assert "cannot be standardised" in str(err) and np.ptp(X) < 1e-300
        return
    Zs, center_s, scale_s = data.standardize(scaled, ["x"])
    assert np.array_equal(Z, Zs)
    # centre and scale are the same unit-range numbers moved by 2**power: exact unless one of them is
    # subnormal (below 2.2e-308, where a float carries fewer bits)
    def normal(a):
        return np.all((np.abs(a) >= np.finfo(float).tiny) | (a == 0))

    for a, b in ((center, center_s), (scale, scale_s)):
        if normal(a) and normal(b):
            assert np.array_equal(b, np.ldexp(a, power))
    assert np.allclose(Z.mean(), 0, atol=1e-9) and Z.std() == pytest.approx(1, rel=1e-9)
    assert np.allclose(Z * scale + center, X, rtol=1e-9, atol=1e-9 * np.abs(X).max())


# ----------------------------------------------------------------------------- label columns

IRIS_LIKE = (b"sepal_length,sepal_width,species\n"
             + b"".join(f"{5 + (k % 7) / 10},{3 + (k % 5) / 10},{k % 3}\n".encode() for k in range(30)))


def test_numeric_label_column_is_guessed_and_not_clustered():
    table = read_csv_table(IRIS_LIKE)
    assert guess_label_column(table) == "species"
    columns, notes = default_columns(table)
    assert columns == ["sepal_length", "sepal_width"]
    assert notes == [("Column 'species' was not clustered: it looks like class labels (3 integer codes). Use it as "
                      "the label column to score the clusters against it, or choose the columns yourself to "
                      "cluster it.")]
    ds = dataset_from_table(table)
    assert ds.columns == ["sepal_length", "sepal_width"] and ds.notes == notes and ds.labels is None
    ds = dataset_from_table(table, label_column="species")  # chosen as the label: used, and not clustered
    assert ds.columns == ["sepal_length", "sepal_width"] and ds.true_k == 3 and ds.notes == []
    assert dataset_from_table(table, columns=["sepal_length", "species"]).dim == 2  # an explicit choice wins


@pytest.mark.parametrize("header,values,guess", [
    ("Class", [1, 2, 3] * 10, "Class"),                      # UCI wine's first column
    ("wine_class", [1.0, 2.0] * 15, "wine_class"),          # integer codes written with .0
    ("trueLabel", ["a", "b"] * 15, "trueLabel"),            # text labels, camelCase name
    ("target", [0, 1, None] * 10, "target"),                 # missing labels allowed
    ("subclass", [1, 2, 3] * 10, None),                      # the word must stand alone
    ("y", [0, 1] * 15, None),                                # a coordinate name
    ("group", list(range(30)), None),                        # an id: one value per row
    ("target", [0.5, 1.5, 2.5] * 10, None),                  # not integers
    ("class", [k % 21 for k in range(42)], None),            # more than MAX_GUESSED_CLASSES
    ("class", [k % 20 for k in range(40)], "class"),         # exactly MAX_GUESSED_CLASSES
    ("class", [1] * 30, None),                               # one value: no classes to score
    ("label", [1, 2, "x"] * 10, None),                       # numbers with text: not obvious
])
def test_guess_label_column(header, values, guess):
    text = f"a,{header}\n" + "".join(f"{k * 0.37},{'' if v is None else v}\n" for k, v in enumerate(values))
    assert guess_label_column(read_csv_table(text.encode())) == guess


def test_first_label_like_column_is_guessed():
    text = "species,x,class\n" + "".join(f"s{k % 2},{k},{k % 3}\n" for k in range(12))
    table = read_csv_table(text.encode())
    assert guess_label_column(table) == "species"
    # the guessed label holds text, so the numeric 'class' codes are clustered unless a label says otherwise
    assert default_columns(table)[0] == ["x", "class"]


def test_label_guess_leaves_nothing_to_cluster():
    with pytest.raises(DataError, match="No numeric column found.* Column 'class' was not clustered: it looks like "
                                        "class labels"):
        load_csv(b"class\n1\n2\n1\n2\n")


# ----------------------------------------------------------------------------- data.load options

def test_load_uses_or_refuses_every_option():
    assert data.load("old-faithful", columns=["waiting"]).columns == ["waiting"]
    with pytest.raises(DataError, match="Old Faithful has no column 'x'; its columns are eruptions, waiting"):
        data.load("old-faithful", columns=["x"])
    with pytest.raises(DataError, match=r"Choosing columns works for CSV files and old-faithful, not for sim1 "
                                        r"\(it has one column, x\)"):
        data.load("sim1", columns=["x"])
    with pytest.raises(DataError, match="not for mnist .*set dims instead"):
        data.load("mnist", columns=["pca1"])
    with pytest.raises(DataError, match="A label column applies to CSV files only; old-faithful has no true labels"):
        data.load("old-faithful", label_column="waiting")
    with pytest.raises(DataError, match="sim2 brings its own true labels"):
        data.load("sim2", label_column="x")
    with pytest.raises(DataError, match="old-faithful has a fixed number of rows"):
        data.load("old-faithful", n=100)
    assert data.load("sim1", n=40).n == 40


def test_load_csv_path_options(tmp_path):
    path = tmp_path / "d.csv"
    path.write_bytes(GOOD)
    ds = data.load(str(path), columns=["y"], label_column="label")
    assert ds.columns == ["y"] and ds.true_k == 2 and ds.name == "d"
    with pytest.raises(DataError, match=f"{path.name} has a fixed number of rows"):
        data.load(str(path), n=3)


@pytest.mark.parametrize("encoding, bom", [("utf-16-le", b"\xff\xfe"), ("utf-16-be", b"\xfe\xff"),
                                           ("utf-32-le", b"\xff\xfe\x00\x00"), ("utf-32-be", b"\x00\x00\xfe\xff")])
def test_utf16_and_utf32_with_a_byte_order_mark_are_decoded_not_refused_as_binary(encoding, bom):
    # Excel's "Unicode text" export: UTF-16 LE with a BOM, tab-separated; the NUL bytes are not binary content
    text = GOOD.decode().replace(",", "\t").replace("x\t", "größe\t", 1)
    ds = load_csv(bom + text.encode(encoding), label_column="label")
    assert ds.columns == ["größe", "y"]
    np.testing.assert_allclose(ds.X[:, 1], load_csv(GOOD, label_column="label").X[:, 1])
    assert any(("UTF-16" if "16" in encoding else "UTF-32") in note for note in ds.notes)


def test_a_wide_byte_order_mark_with_broken_text_is_named():
    with pytest.raises(DataError, match="UTF-16 byte-order mark but byte 6 is not valid UTF-16"):
        read_csv_table(b"\xff\xfe" + "a,".encode("utf-16-le") + b"\x00\xdc")  # a lone low surrogate


def test_the_app_limit_is_tighter_than_the_library_limit():
    """A file one row over the app's limit is refused with the app's limits (what the Explorer passes) and read
    whole with the library's (the command line's), which take up to 1,000,000 rows."""
    assert data.APP_MAX_ROWS < data.MAX_ROWS == 1_000_000
    content = b"x\n" + b"1\n2\n" * (data.APP_MAX_ROWS // 2) + b"3\n"
    with pytest.raises(DataError, match=f"more than {data.APP_MAX_ROWS:,} rows, the limit here"):
        read_csv_table(content, max_rows=data.APP_MAX_ROWS, max_bytes=data.APP_MAX_BYTES)
    assert read_csv_table(content).n_rows == data.APP_MAX_ROWS + 1
    assert data.simulation("sim1", n=data.MAX_ROWS).n == 1_000_000
    with pytest.raises(DataError, match="N must be between 2 and 1,000,000"):
        data.simulation("sim1", n=data.MAX_ROWS + 1)

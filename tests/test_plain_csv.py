"""The plain-CSV fast path (pcrp.data.plain_csv): the same table as the csv reader's path, or no answer at all."""

import numpy as np
import pytest

from pcrp.data import DataError, csv_table, dataset_from_table, read_csv_table
from pcrp.data.csv_table import _is_number
from pcrp.data.plain_csv import read_plain

# tokens both float() and NumPy's parser read (surrounding blanks, signs, exponents, nan and inf in any case,
# overflow and underflow, more digits than a double holds)
TOKENS = [" 1.5 ", "1e3", "+1", "-0", ".5", "5.", "nan", "NaN", "-inf", "Infinity", "inFINity", "1e400", "1e-400",
          "0.1", "123456789.123456789", "2.2250738585072011e-308", "\t7", "-3.000000000000000044"]


def _by_csv_reader(content, monkeypatch, **kwargs):
    with monkeypatch.context() as patch:
        patch.setattr(csv_table, "read_plain", lambda *args: None)
        return read_csv_table(content, **kwargs)


def _same_bits(a, b):
    return a.shape == b.shape and np.array_equal(a.view(np.int64), b.view(np.int64))  # -0.0, NaN bits too


def _plain_files(rng):
    for delimiter in (",", ";", "\t", "|"):
        for named in (True, False):
            rows, tokens = [], [token for token in TOKENS if delimiter not in token]
            for i in range(40):
                cells = [str(rng.choice(tokens)), repr(float(rng.normal() * 10.0 ** rng.integers(-5, 5))),
                         f"{rng.normal():.6f}", f" {int(rng.integers(0, 3))}"]
                rows.append(delimiter.join(cells))
            header = [delimiter.join(["x", " y ", "z", "label"])] if named else []
            yield delimiter, ("\n".join(header + rows) + ("\n" if delimiter != "|" else "")).encode()


def test_a_plain_file_gives_the_csv_readers_table_to_the_bit(monkeypatch):
    """Header, rows, lines, every value (bit for bit), each column's text and the data set made with a label column
    are those of the csv reader's path; and the fast path did read these files."""
    rng = np.random.default_rng(0)
    for delimiter, content in _plain_files(rng):
        assert read_plain(content.decode(), delimiter, 10**6, _is_number) is not None
        fast, slow = read_csv_table(content), _by_csv_reader(content, monkeypatch)
        assert (fast.header, fast.delimiter, fast.notes, fast.lines, fast.n_rows) == \
               (slow.header, slow.delimiter, slow.notes, slow.lines, slow.n_rows)
        assert list(fast.cells) == list(slow.cells) and fast.cells[3] == slow.cells[3]
        assert fast.cells[1:4] == slow.cells[1:4]
        assert fast.numeric.keys() == slow.numeric.keys()
        assert all(_same_bits(fast.numeric[c], slow.numeric[c]) for c in fast.header)
        for j in range(len(fast.header)):
            assert fast.column_text(j).tolist() == slow.column_text(j).tolist()
        label = fast.header[-1]
        for columns in (None, fast.header[1:3]):  # every column (an infinite value refused, naming its line), two
            a, b = _dataset_or_message(fast, columns, label), _dataset_or_message(slow, columns, label)
            if isinstance(a, str) or isinstance(b, str):
                assert a == b
                continue
            assert _same_bits(a.X, b.X) and np.array_equal(a.labels, b.labels)
            assert a.label_names == b.label_names and a.notes == b.notes


def _dataset_or_message(table, columns, label):
    try:
        return dataset_from_table(table, columns=columns, label_column=label)
    except DataError as err:
        return str(err)


@pytest.mark.parametrize("content", [
    b'x,y\n1,"2"\n3,4\n',              # a quote
    b"x,y\r\n1,2\r\n3,4\r\n",          # carriage returns
    b"x,y\n1,2\n\n3,4\n",              # a blank line
    b"x,y\n1,\n3,4\n",                 # a missing cell
    b"x,y\n1,NA\n3,4\n",               # a missing token
    b"x,y\n1,abc\n3,4\n",              # text
    b"x,y\n1,1_000\n3,4\n",            # a number float() reads and NumPy's parser does not
    b"x,y\n1,2,3\n3,4\n",              # a ragged row
    b"x,y\n1,2\n3\n",                  # a short row
    b"x,y\n1,2\x0c\n3,4\n",            # a control character
    "x,é\n1,2\n3,4\n".encode(),        # not ASCII
    b"x\n1\n2\n",                      # one column
    b"x,y\n1,2\n3,4\n  \n",            # a line of blanks
])
def test_anything_not_plain_is_left_to_the_csv_reader(content, monkeypatch):
    """No answer (None) from the fast path; read_csv_table then gives the csv reader's table or message."""
    text = content.decode()
    assert read_plain(text, ",", 10**6, _is_number) is None
    try:
        slow = _by_csv_reader(content, monkeypatch)
    except Exception as err:  # the same message
        with pytest.raises(type(err), match=str(err)[:40].replace("(", r"\(").replace(")", r"\)")):
            read_csv_table(content)
        return
    fast = read_csv_table(content)
    assert fast.header == slow.header and fast.cells == slow.cells and fast.lines == slow.lines


def test_the_row_limit_is_left_to_the_csv_reader():
    assert read_plain("x,y\n1,2\n3,4\n", ",", 1, _is_number) is None
    assert read_plain("x,y\n1,2\n3,4\n", ",", 2, _is_number) is not None

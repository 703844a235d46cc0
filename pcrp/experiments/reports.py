"""Report writers shared by the experiments (:mod:`pcrp.experiments.reproduce`, :mod:`pcrp.experiments.compare`): Markdown tables, CSV
and figures as HTML, each file written whole or not at all (:func:`pcrp.basics.files.atomic_write`), and the short name a
prior goes by in their tables.

Nothing here knows an experiment: callers pass rows (dicts) and figures (Plotly), and choose the columns.
"""

import csv
import io

from ..basics.files import atomic_write


def method_name(spec):
    """The name a prior's rows carry in the experiments' tables: its registry label when that is one word ("CRP",
    "pCRP", "Pitman-Yor", "MFM"), else the initials of its words ("Sparse finite mixture" is "SFM"), so that a
    table's method column stays narrow. ``spec``: a :class:`pcrp.model.PriorSpec`."""
    words = spec.label.split()
    return spec.label if len(words) == 1 else "".join(w[0].upper() for w in words)


def markdown_table(rows):
    """Rows of {column: text} (the first row's keys are the header) as a Markdown table (one string)."""
    header = list(rows[0])
    lines = ["| " + " | ".join(header) + " |", "|---" * len(header) + "|"]
    lines += ["| " + " | ".join(row[h] for h in header) + " |" for row in rows]
    return "\n".join(lines)


def write_csv(f, rows, fields=None):
    """``rows`` (dicts) as CSV into the open text file ``f``; columns ``fields`` (default: the first row's keys);
    keys outside ``fields`` are left out."""
    writer = csv.DictWriter(f, fieldnames=fields or list(rows[0]), extrasaction="ignore")
    writer.writeheader()
    writer.writerows(rows)


def csv_text(rows, fields=None):
    """:func:`write_csv` into a string."""
    buffer = io.StringIO()
    write_csv(buffer, rows, fields)
    return buffer.getvalue()


def write_text(path, text):
    """``text`` into the file at ``path``, whole or not at all."""
    atomic_write(path, lambda f: f.write(text))


def write_figure(fig, path):
    """A Plotly figure as a full HTML page at ``path`` that loads plotly.min.js from its own folder (written there
    once, as Plotly's ``include_plotlyjs="directory"`` does); both written whole or not at all."""
    from plotly.offline import get_plotlyjs

    atomic_write(path, lambda f: f.write(fig.to_html(include_plotlyjs="directory", full_html=True)))
    bundle = path.parent / "plotly.min.js"
    if not bundle.exists():
        atomic_write(bundle, lambda f: f.write(get_plotlyjs()))

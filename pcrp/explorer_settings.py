"""The Explorer's main settings: one table of names, types, bounds and defaults.

The page keeps them for the whole session (they survive visits to other pages) and mirrors them
in the URL's query string, so a teacher can bookmark a prepared demo. A URL is typed by anyone:
:func:`from_query` reads only known keys, short values, finite numbers inside the bounds and
known choices, and reports everything else instead of using it.
"""

import math
from dataclasses import dataclass

from .data import MAX_ROWS
from .model import DEFAULT_R

SOURCES = ("old-faithful", "mnist", "sim1", "sim2", "csv")
SOURCE_LABELS = {"old-faithful": "Old Faithful", "mnist": "MNIST", "sim1": "Sim 1", "sim2": "Sim 2",
                 "csv": "Upload a CSV"}
STARTS = ("kmeans:10", "one", "random:10", "kmeans:3")
# Pace: target sweeps per second (None = as fast as the sampler goes).
PACES = {"2 sweeps/s": 2, "10 sweeps/s": 10, "100 sweeps/s": 100, "1,000 sweeps/s": 1000, "full speed": None}
MAX_VALUE_CHARS = 64


@dataclass(frozen=True)
class Setting:
    """One setting: kind is 'int', 'float', 'bool', 'choice' or 'digits' (a set of digits 0-9)."""

    name: str
    kind: str
    default: object
    low: float = None
    high: float = None
    choices: tuple = ()
    label: str = ""

    def parse(self, text):
        """The value of a query-string ``text``; raises ValueError with a message for the user."""
        text = str(text).strip()
        if len(text) > MAX_VALUE_CHARS:
            raise ValueError(f"{self.label}: the value is too long")
        if self.kind == "bool":
            if text.lower() in ("1", "true", "yes", "on"):
                return True
            if text.lower() in ("0", "false", "no", "off"):
                return False
            raise ValueError(f"{self.label} must be true or false (got {text!r})")
        if self.kind == "choice":
            if text not in self.choices:
                raise ValueError(f"{self.label} must be one of {', '.join(self.choices)} (got {text!r})")
            return text
        if self.kind == "digits":
            parts = [p for p in text.split(",") if p]
            if not parts or any(not (len(p) == 1 and p.isdigit()) for p in parts):
                raise ValueError(f"{self.label} must be digits 0-9 separated by commas (got {text!r})")
            return sorted({int(p) for p in parts})
        try:
            value = float(text)
        except ValueError:
            raise ValueError(f"{self.label} must be a number (got {text!r})") from None
        if not math.isfinite(value):
            raise ValueError(f"{self.label} must be a finite number (got {text!r})")
        if self.kind == "int":
            if value != int(value):
                raise ValueError(f"{self.label} must be a whole number (got {text!r})")
            value = int(value)
        if not self.low <= value <= self.high:
            raise ValueError(f"{self.label} must be between {self.low:g} and {self.high:g} (got {text})")
        return value

    def format(self, value):
        if self.kind == "bool":
            return "1" if value else "0"
        if self.kind == "digits":
            return ",".join(str(d) for d in value)
        if self.kind == "float":
            return f"{value:g}"
        return str(value)


SETTINGS = (
    Setting("data", "choice", "old-faithful", choices=SOURCES, label="data set"),
    Setting("sim_n", "int", 300, 10, MAX_ROWS, label="simulation N"),
    Setting("sim_seed", "int", 0, 0, 10_000, label="simulation data seed"),
    Setting("digits", "digits", [1, 2, 3, 4], label="MNIST digits"),
    Setting("mnist_n", "int", 1000, 50, 5000, label="MNIST N"),
    Setting("embedding", "choice", "spectral", choices=("spectral", "pca"), label="MNIST embedding"),
    Setting("dims", "int", 2, 1, 50, label="MNIST dimensions"),
    Setting("crp_alpha", "float", 1.0, 0.001, 100.0, label="CRP alpha"),
    Setting("pcrp_alpha", "float", 1.0, 0.001, 100.0, label="pCRP alpha"),
    Setting("r", "float", DEFAULT_R, 0.05, 3.0, label="pCRP power r"),
    Setting("sweeps", "int", 2000, 10, 100_000, label="sweeps"),
    Setting("burn_in", "int", 500, 0, 99_999, label="burn-in"),
    Setting("thin", "int", 5, 1, 1000, label="thin"),
    Setting("seed", "int", 0, 0, 2**31 - 1, label="seed"),
    Setting("split_merge", "bool", True, label="split-merge moves"),
    Setting("start", "choice", "kmeans:10", choices=STARTS, label="start"),
    Setting("chains", "int", 2, 1, 4, label="chains per prior"),
    Setting("pace", "choice", "100 sweeps/s", choices=tuple(PACES), label="pace"),
)
BY_NAME = {s.name: s for s in SETTINGS}


def defaults():
    """{name: default value} of every setting (fresh lists, safe to change)."""
    return {s.name: list(s.default) if isinstance(s.default, list) else s.default for s in SETTINGS}


def from_query(params):
    """Settings from a query string {key: value or [values]}: (values {name: value} for the keys that
    parse, problems [message] for those that do not). Unknown keys are ignored."""
    values, problems = {}, []
    for key, raw in dict(params).items():
        setting = BY_NAME.get(key)
        if setting is None:
            continue
        if isinstance(raw, (list, tuple)):
            raw = raw[-1] if raw else ""
        try:
            values[key] = setting.parse(raw)
        except ValueError as err:
            problems.append(str(err))
    return values, problems


def to_query(values):
    """The query string {key: text} of the settings that differ from their defaults."""
    base = defaults()
    return {s.name: s.format(values[s.name]) for s in SETTINGS
            if s.name in values and values[s.name] != base[s.name]}


def demo_link(page_url, values):
    """The address ``page_url`` (its query and fragment dropped) with ``values``' non-default settings as
    its query: a demo link carries settings only, never a run or data. A relative '?...' when the page's
    address is unknown."""
    from urllib.parse import urlencode, urlsplit, urlunsplit

    parts = urlsplit(page_url or "")
    path = parts.path or ("/" if parts.netloc else "")
    return urlunsplit((parts.scheme, parts.netloc, path, urlencode(to_query(values)), "")) or "?"

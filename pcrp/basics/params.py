"""Declared parameters: a name, a default, bounds and a one-line meaning, stated once and read everywhere.

A prior's parameters (:data:`pcrp.model.PRIORS`) and a run's settings (:mod:`pcrp.runs.run_spec`) are each a
:class:`Param`. The command line's flags, the app's widgets, the estimator's checks at fit, validation and display are all made
from these declarations, so a bound or a default is typed in one place.
Every parameter has finite bounds: a value of 1e308 is refused with the reason, never run. A setting whose value is
one of a fixed set (a data set, a start, a switch) is a :class:`Choice`, declared the same way. Both read a value
from a text (an address's, a command line's: :meth:`Param.parse`, :meth:`Choice.parse`) and write it as one
(``text``), so a page that keeps its settings in its address has no parser of its own.
"""

import math
from dataclasses import dataclass

import numpy as np

from .errors import SettingError

MAX_TEXT_CHARS = 64  # a value's text (an address's) longer than this is refused unread


def _short(text, label, error):
    text = str(text).strip()
    if len(text) > MAX_TEXT_CHARS:
        raise error(f"{label}: the value is too long")
    return text


def parse_number(text, name, error=SettingError):
    """The number a text holds: an int when written as one (a seed may exceed 2^53), else a float; ``error`` naming
    ``name`` when it holds none."""
    text = _short(text, name, error)
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        raise error(f"{name} must be a number (got {text!r})") from None


@dataclass(frozen=True)
class Param:
    """One declared parameter, as plain data.

    name: as typed in code and on the command line (``k_max`` is ``--k-max``); label: as shown ("power r").
    default: its value when not given (None: "not set", resolved by the owner, e.g. the automatic budget).
    low, high: finite bounds; low_closed / high_closed: whether the bound itself is allowed.
    integer: a whole number. help: one line, its meaning. why_high: why the upper bound exists (said when a value
    exceeds it). constraint: a condition involving other parameters (checked by the owner), or "".
    """

    name: str
    label: str
    default: object
    low: float
    high: float
    low_closed: bool
    high_closed: bool
    help: str
    integer: bool = False
    why_high: str = ""
    constraint: str = ""
    cli: str = ""  # the command-line flag when it is not --name (e.g. --chains for n_chains)

    def __post_init__(self):
        if not (math.isfinite(self.low) and math.isfinite(self.high) and self.low < self.high):
            raise ValueError(f"Param {self.name}: bounds must be finite with low < high")

    @property
    def flag(self):
        """The command-line flag: ``--k-max`` for ``k_max`` (or ``cli`` when given)."""
        return self.cli or "--" + self.name.replace("_", "-")

    def interval(self):
        """The bounds as text, e.g. "(0, 1000]"."""
        return f"{'[' if self.low_closed else '('}{self.low:g}, {self.high:g}{']' if self.high_closed else ')'}"

    def contains(self, number):
        """Whether the float ``number`` lies within the bounds."""
        return ((number > self.low or (number == self.low and self.low_closed))
                and (number < self.high or (number == self.high and self.high_closed)))

    def check(self, value, owner, error=SettingError, name=None):
        """``value`` as a float (an int if ``integer``) within the bounds, else ``error`` naming the parameter
        (as ``name``, e.g. its command-line flag, when given), the value, the bounds, the parameter's meaning and
        what to do. ``owner`` names whose parameter it is in the message ("the pCRP", "the run")."""
        where = f"{self.label} of {owner}, in {self.interval()}. {self.help}"
        name = name or self.name
        if isinstance(value, (bool, np.bool_, str, bytes)):
            raise error(f"{name} must be a number (got {value!r}): {where}")
        try:  # an integer stays exact (a seed may exceed 2^53); Python compares int and float exactly
            number = int(value) if isinstance(value, (int, np.integer)) else float(value)
        except (TypeError, ValueError, OverflowError):
            raise error(f"{name} must be a number (got {value!r}): {where}") from None
        kind = "whole number" if self.integer else "finite number"
        low = f"{'>=' if self.low_closed else '>'} {self.low:g}"
        shown = str(number) if isinstance(number, int) and abs(number) < 1e15 else f"{number:g}"
        if not math.isfinite(number) or number < self.low or (number == self.low and not self.low_closed):
            raise error(f"{name} must be a {kind} {low} (got {shown}): {where}")
        if number > self.high or (number == self.high and not self.high_closed):
            bound = "at most" if self.high_closed else "below"
            raise error(f"{name} must be {bound} {self.high:g} (got {shown}): {self.why_high or where}")
        if self.integer:
            if number != int(number):
                raise error(f"{name} must be a whole number (got {shown}): {where}")
            return int(number)
        return float(number)

    def parse(self, text, owner="the settings", error=SettingError, name=None):
        """The value a text holds (an address's), checked (:meth:`check`)."""
        name = name or self.name
        return self.check(parse_number(text, name, error), owner, error, name=name)

    @staticmethod
    def text(value):
        """``value`` as a text :meth:`parse` reads back (a float in its shortest %g form)."""
        return f"{value:g}" if isinstance(value, float) else str(value)

    def describe(self):
        """One line for help texts: label, bounds, default and meaning."""
        default = "" if self.default is None else f", default {self.default:g}"
        constraint = f", {self.constraint}" if self.constraint else ""
        return f"{self.label} in {self.interval()}{constraint}{default}{' (a whole number)' if self.integer else ''}"


SWITCH = (False, True)  # the choices of a switch (:class:`Choice`)
_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


@dataclass(frozen=True)
class Choice:
    """One declared setting whose value is one of a fixed set, as plain data: a data set, a start, a covariance type;
    a switch (choices :data:`SWITCH`); or, with ``many``, a set of them (MNIST's digits, kept as a sorted list).

    name, label, default and help as for :class:`Param`; choices: the values allowed, in the order a widget offers
    them."""

    name: str
    label: str
    default: object
    choices: tuple
    help: str = ""
    many: bool = False

    def __post_init__(self):
        if not self.choices:
            raise ValueError(f"Choice {self.name}: no choices")

    @property
    def switch(self):
        return tuple(self.choices) == SWITCH

    def _one(self, value, error, name):
        if self.switch:
            if isinstance(value, (bool, np.bool_)):
                return bool(value)
            raise error(f"{name} must be true or false (got {value!r})")
        if isinstance(value, (str, int)) and not isinstance(value, (bool, np.bool_)) and value in self.choices:
            return value
        raise error(f"{name} must be one of {', '.join(map(str, self.choices))} (got {value!r})")

    def check(self, value, owner="the settings", error=SettingError, name=None):
        """``value`` if it is one of the choices (with ``many``: a sorted list of distinct ones, at least one), else
        ``error`` naming the setting and the choices."""
        name = name or self.name
        if not self.many:
            return self._one(value, error, name)
        values = list(value) if isinstance(value, (list, tuple, set, frozenset)) else None
        if not values:
            raise error(f"{name} must be one or more of {', '.join(map(str, self.choices))} (got {value!r})")
        return sorted({self._one(v, error, name) for v in values})

    def parse(self, text, owner="the settings", error=SettingError, name=None):
        """The value a text holds (an address's): a switch's 1/0 (true/false, yes/no, on/off), a choice as written,
        ``many`` choices separated by commas; ``error`` with the label and what is allowed otherwise."""
        text = _short(text, self.label, error)
        if self.switch:
            if text.lower() in _TRUE:
                return True
            if text.lower() in _FALSE:
                return False
            raise error(f"{self.label} must be true or false (got {text!r})")
        by_text = {str(c): c for c in self.choices}
        if self.many:
            parts = [p.strip() for p in text.split(",") if p.strip()]
            if not parts or any(p not in by_text for p in parts):
                raise error(f"{self.label} must be {', '.join(by_text)} separated by commas (got {text!r})")
            return self.check([by_text[p] for p in parts], owner, error, name)
        if text not in by_text:
            raise error(f"{self.label} must be one of {', '.join(by_text)} (got {text!r})")
        return by_text[text]

    def text(self, value):
        """``value`` as a text :meth:`parse` reads back."""
        if self.switch:
            return "1" if value else "0"
        if self.many:
            return ",".join(str(v) for v in value)
        return str(value)

    def describe(self):
        """One line for help texts: label, choices and default."""
        default = self.text(self.default)
        return f"{self.label}: {'some' if self.many else 'one'} of {', '.join(map(str, self.choices))}, " \
               f"default {default}"


class Declarations(dict):
    """One owner's declared parameters, {name: :class:`Param` or :class:`Choice`} in the order declared: a prior's,
    the NIW's, a run's, cross validation's, the r path's, reproduce's, compare's, the live demo's, the Explorer's
    choices. ``owner`` names them in messages ("cross validation"); ``error`` is the SettingError subclass their
    checks raise.

    Presets (the paper's protocol, the live demo, a quick check) are :meth:`preset` dicts over these names: values,
    checked against the bounds declared here, never new bounds.
    """

    def __init__(self, owner, *params, error=SettingError):
        super().__init__((p.name, p) for p in params)
        if len(self) != len(params):
            raise ValueError(f"{owner}: two parameters share a name")
        self.owner = owner
        self.error = error

    def defaults(self):
        """{name: default} of every parameter (a ``many`` choice's as a fresh list)."""
        return {name: list(p.default) if getattr(p, "many", False) else p.default for name, p in self.items()}

    def check(self, name, value, shown=None):
        """``value`` of parameter ``name`` within its bounds (see :meth:`Param.check`); the message names it as
        ``shown`` when given (a command-line flag)."""
        if name not in self:
            raise self.error(f"{self.owner} has no setting {name!r}; its settings are: {', '.join(self)}.")
        return self[name].check(value, self.owner, self.error, name=shown)

    def resolve(self, **values):
        """Every parameter's value: the given one checked (None: not given), else its default (left as None when
        the default is None, for the owner to resolve)."""
        unknown = set(values) - set(self)
        if unknown:
            raise self.error(f"{self.owner} has no setting {', '.join(sorted(unknown))}; its settings are: "
                             f"{', '.join(self)}.")
        out = {}
        for name, p in self.items():
            value = values.get(name)
            if value is None:
                value = p.default
            out[name] = None if value is None else self.check(name, value)
        return out

    def preset(self, **values):
        """A named set of values over these declarations (checked now: a preset never carries its own bounds)."""
        return {name: value for name, value in self.resolve(**values).items() if name in values}

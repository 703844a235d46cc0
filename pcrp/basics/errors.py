"""The errors pcrp raises for a bad setting: a leaf module that every layer may import.

Each is a ValueError whose message names the setting, the value, the allowed range and what to do.
"""


class SettingError(ValueError):
    """A setting outside its declared range, or of the wrong type."""


class ModelError(SettingError):
    """A model parameter (a prior's or the NIW's) is out of range."""


class SamplerError(SettingError):
    """A sampler or run setting is invalid, or a run would not fit in memory."""

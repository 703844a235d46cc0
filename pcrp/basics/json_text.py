"""JSON that every reader accepts: the one place where pcrp turns its results into JSON."""

import json

import numpy as np


def jsonable(value):
    """``value`` in plain Python types for json.dumps: numpy scalars and arrays converted, tuples as lists, NaN as
    null and +-infinity as "inf" / "-inf" (strict JSON has neither)."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return jsonable(value.tolist())
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not np.isfinite(value):
        return None if np.isnan(value) else ("inf" if value > 0 else "-inf")
    return value


def dumps(value, **kwargs):
    """``value`` as strict JSON text (through :func:`jsonable`); keyword arguments go to json.dumps."""
    return json.dumps(jsonable(value), allow_nan=False, **kwargs)

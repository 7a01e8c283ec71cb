"""A lossless codec for checkpoint trees: JSON for the structure, numpy arrays beside it.

A checkpoint (see :meth:`flocksim.Simulation.checkpoint`) is a nested tree of dicts, lists,
tuples, numbers, strings, booleans, None, bytes, numpy scalars and numpy arrays; components
put whatever they keep in it. :func:`encode` splits such a tree into a JSON-ready tree and a
list of arrays; :func:`decode` puts them back together, so that ``decode(*encode(x))`` equals
``x`` with the same Python and numpy types, bit for bit (NaN, infinities, signed zeros and
integers of any size included).

JSON tree conventions (``$``-keys are reserved markers):

- ``{"$array": i}``: ``arrays[i]`` (a numpy array, any shape, numeric or boolean dtype);
- ``{"$scalar": i}``: a numpy scalar, stored as the 0-d array ``arrays[i]``;
- ``{"$float": "nan" | "inf" | "-inf" | "-0.0"}``: a float JSON cannot hold exactly;
- ``{"$int": "123..."}``: an int outside +-2**53 (beyond what every JSON reader keeps exact);
- ``{"$tuple": [...]}``, ``{"$bytes": "<base64>"}``;
- ``{"$dict": [[key, value], ...]}``: a dict whose keys are not all strings, or that has a key
  starting with ``$``; other dicts are plain JSON objects.
"""

from __future__ import annotations

import base64
import math
from typing import Any

import numpy as np

JSON_SAFE_INT = 2**53


class CodecError(TypeError):
    """A value that a checkpoint cannot hold; the message names where it sits."""


def encode(tree: Any) -> tuple[Any, list[np.ndarray]]:
    """(JSON-ready tree, arrays) for ``tree``; arrays are copies."""
    arrays: list[np.ndarray] = []
    return _encode(tree, arrays, "checkpoint"), arrays


def _encode(value: Any, arrays: list[np.ndarray], where: str) -> Any:
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in "biuf" or value.dtype.hasobject:
            raise CodecError(f"{where}: cannot store an array of dtype {value.dtype}; allowed: bool, int, uint, float")
        arrays.append(np.array(value, copy=True, order="C"))
        return {"$array": len(arrays) - 1}
    if isinstance(value, np.generic):  # before float/int: np.float64 is a float subclass
        if value.dtype.kind not in "biuf":
            raise CodecError(f"{where}: cannot store a numpy scalar of dtype {value.dtype}")
        arrays.append(np.array(value))
        return {"$scalar": len(arrays) - 1}
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return value if abs(value) < JSON_SAFE_INT else {"$int": str(value)}
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value) or (value == 0.0 and math.copysign(1.0, value) < 0):
            return {"$float": repr(value)}
        return value
    if isinstance(value, bytes):
        return {"$bytes": base64.b64encode(value).decode("ascii")}
    if isinstance(value, tuple):
        return {"$tuple": [_encode(v, arrays, f"{where}[{i}]") for i, v in enumerate(value)]}
    if isinstance(value, list):
        return [_encode(v, arrays, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, dict):
        if all(isinstance(k, str) and not k.startswith("$") for k in value):
            return {k: _encode(v, arrays, f"{where}.{k}") for k, v in value.items()}
        return {
            "$dict": [
                [_encode(k, arrays, f"{where} key {k!r}"), _encode(v, arrays, f"{where}[{k!r}]")]
                for k, v in value.items()
            ]
        }
    raise CodecError(
        f"{where}: cannot store a value of type {type(value).__name__}; allowed: dict, list, tuple, str, bytes, "
        "int, float, bool, None, numpy scalars and numeric or boolean numpy arrays"
    )


def decode(tree: Any, arrays: list[np.ndarray]) -> Any:
    """Inverse of :func:`encode`."""
    if isinstance(tree, list):
        return [decode(v, arrays) for v in tree]
    if not isinstance(tree, dict):
        return tree
    if len(tree) == 1:
        ((key, payload),) = tree.items()
        if key == "$array":
            return np.array(arrays[payload], copy=True)
        if key == "$scalar":
            return np.asarray(arrays[payload])[()]
        if key == "$float":
            return float(payload)
        if key == "$int":
            return int(payload)
        if key == "$bytes":
            return base64.b64decode(payload)
        if key == "$tuple":
            return tuple(decode(v, arrays) for v in payload)
        if key == "$dict":
            return {decode(k, arrays): decode(v, arrays) for k, v in payload}
    return {k: decode(v, arrays) for k, v in tree.items()}

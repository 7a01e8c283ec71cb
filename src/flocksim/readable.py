"""Numbers in messages, in readable form: counts with thousands separators below 10^15, from
there on in scientific notation with two digits (a count from a parameter such as
``cell_size = 1e-300`` can have hundreds of digits), and byte sizes in KiB, MiB or GiB."""

from __future__ import annotations

import math

LONGEST_EXACT = 10**15
"""Counts below this are written out in full (with separators), larger ones as 1.6e+305."""


def count(value: int | float, grouped: bool = True) -> str:
    """``1,048,576``; ``1.6e+305`` for a count of 10^15 or more (any size of int, truncated to two
    digits then rounded); ``grouped`` False: ``8000`` (no separators) below 10^15."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if abs(value) < LONGEST_EXACT:
        return f"{int(value):,}" if grouped else str(int(value))
    digits = len(str(abs(int(value))))  # exact for ints far beyond float's range
    mantissa = int(str(abs(int(value)))[:3]) / 100.0
    mantissa = round(mantissa, 1)
    if mantissa >= 10.0:
        mantissa, digits = mantissa / 10.0, digits + 1
    sign = "-" if value < 0 else ""
    return f"{sign}{mantissa:g}e+{digits - 1:02d}"


def nbytes(value: int | float) -> str:
    """``512 bytes``, ``3.0 KiB``, ``1.5 MiB``, ``2.9 GiB`` (larger sizes stay in GiB, readable via
    :func:`count`)."""
    if value < 1024:
        return f"{int(value)} bytes"
    for unit, scale in (("KiB", 2**10), ("MiB", 2**20)):
        if value < 1024 * scale:
            return f"{value / scale:.1f} {unit}"
    gib = value / 2**30
    return f"{gib:.1f} GiB" if gib < LONGEST_EXACT else f"{count(int(value) // 2**30)} GiB"

"""Three-component vector helpers for kernels (no allocation)."""

from __future__ import annotations

import math

from flocksim.kernels.compile import device


@device
def load(a, i, dim):
    """Row ``i`` of an (N, dim) array as (x, y, z); z = 0 in 2D."""
    if dim == 3:
        return a[i, 0], a[i, 1], a[i, 2]
    return a[i, 0], a[i, 1], 0.0


@device
def store(a, i, dim, x, y, z):
    """Write (x, y[, z]) into row ``i`` of an (N, dim) array."""
    a[i, 0] = x
    a[i, 1] = y
    if dim == 3:
        a[i, 2] = z


@device
def norm(x, y, z):
    return math.sqrt(x * x + y * y + z * z)


@device
def limit(x, y, z, max_length):
    """Scale (x, y, z) down to length ``max_length`` if it is longer."""
    n2 = x * x + y * y + z * z
    if n2 > max_length * max_length and n2 > 0.0:
        s = max_length / math.sqrt(n2)
        return x * s, y * s, z * s
    return x, y, z


@device
def normalize_or_zero(x, y, z):
    """Unit vector along (x, y, z), or zero for a zero vector."""
    n = math.sqrt(x * x + y * y + z * z)
    if n > 0.0:
        return x / n, y / n, z / n
    return 0.0, 0.0, 0.0

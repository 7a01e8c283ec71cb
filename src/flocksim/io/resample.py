"""Tracked samples onto a fixed time step: frame grids, linear resampling, velocities from positions.

Conventions (docs/field-data.md):

- A source holds S samples at strictly increasing times ``t`` of N birds; NaN marks a bird that was
  not seen. Sample s and s + 1 are *linked* when they are consecutive frames of the source (no frame
  missing between them): only linked samples are interpolated between, so a bird that disappears
  stays absent instead of being drawn along a straight line through the gap.
- :func:`resample` puts the samples on the grid t0, t0 + dt, ... (up to the last sample): a grid
  time on a sample takes that sample; one between two linked samples where the bird was seen in
  both takes the linear interpolation; anything else is NaN.
- :func:`velocity_from_positions`: central differences (p[k+1] - p[k-1]) / (t[k+1] - t[k-1]) where
  the bird is seen in both neighbouring frames, one-sided differences where only one, NaN where none
  (or backward or forward differences on request).

Every output array's size is checked against :data:`MAX_TRACK_VALUES` before it is allocated, and
the memory that reading, resampling and analysing it will take (:func:`track_memory`) against what
the process can still allocate (:func:`flocksim.budgets.check_memory`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from flocksim import readable
from flocksim.budgets import BudgetError, check_memory
from flocksim.metrics.series import frame_memory

MAX_TRACK_VALUES = 1 << 26
"""Most values (frames x birds x coordinates) of one track array (512 MiB of float64)."""
UNIFORM_RTOL = 1e-3
"""Sample times within this fraction of a frame interval of a uniform grid count as uniform."""
SNAP = 1e-9
"""A grid time within this fraction of dt of a sample time is that sample."""
TRACK_BYTES_PER_VALUE = 80
"""Peak memory per value (frames x birds x coordinates) of reading, resampling and differencing a
track [bytes]: position and velocity (float64) and the temporaries of interpolation (measured with
tracemalloc: docs/reliability.md, "Field data")."""


@dataclass
class Samples:
    """What a reader found, before resampling.

    ``time`` (S,) strictly increasing, in ``time_unit``; ``linked`` (S - 1,) bool, True where
    sample s + 1 is the frame right after sample s; ``position`` (S, N, dim) float64, NaN where a
    bird is absent; ``velocity`` the same shape [position units per time unit] or None (then it is
    computed from positions); ``ids`` (N,) the birds' names; ``time_unit`` "s" or "frames"."""

    time: np.ndarray
    linked: np.ndarray
    position: np.ndarray
    velocity: np.ndarray | None
    ids: np.ndarray
    time_unit: str


def track_memory(frames: int, birds: int, dim: int) -> int:
    """Peak memory of reading and analysing a (frames, birds, dim) track [bytes]: the track's
    arrays and temporaries, and one frame's analyses (:func:`flocksim.metrics.series.frame_memory`)."""
    return frames * birds * dim * TRACK_BYTES_PER_VALUE + frame_memory(birds, dim)


def check_track_size(frames: int, birds: int, dim: int, what: str) -> None:
    """BudgetError unless a (frames, birds, dim) track array fits :data:`MAX_TRACK_VALUES` and its
    analysis (:func:`track_memory`) fits the memory this process can still allocate."""
    values = frames * birds * dim
    size = f"{readable.count(frames)} frames x {readable.count(birds)} birds x {dim} coordinates"
    if values > MAX_TRACK_VALUES:
        raise BudgetError(
            f"{what}: {size} = {readable.count(values)} values, more than the budget of "
            f"{readable.count(MAX_TRACK_VALUES)} values per array; allowed: a larger --dt or a shorter file"
        )
    track, frame = values * TRACK_BYTES_PER_VALUE, frame_memory(birds, dim)
    check_memory(
        track + frame,
        f"{what}: {size}",
        "allowed: fewer frames or birds (a larger --dt, a shorter file), or a machine with more memory",
        parts=f"{readable.nbytes(track)} to read, resample and difference {readable.count(values)} values at about "
        f"{TRACK_BYTES_PER_VALUE} bytes each, not only their {readable.nbytes(8 * values)} as float64; "
        f"{readable.nbytes(frame)} for one frame's analyses of {readable.count(birds)} birds",
    )


def frame_interval(samples: Samples) -> float:
    """The typical time between consecutive frames: the median of the linked samples' spacings
    (of all spacings if none is linked); NaN for fewer than 2 samples."""
    if len(samples.time) < 2:
        return math.nan
    gaps = np.diff(samples.time)
    linked = gaps[samples.linked] if np.any(samples.linked) else gaps
    return float(np.median(linked))


def is_uniform(samples: Samples, dt: float) -> bool:
    """True when every sample sits on the grid t0 + k dt (within :data:`UNIFORM_RTOL` of dt) and
    consecutive samples are consecutive frames."""
    if len(samples.time) < 2:
        return True
    if not np.all(samples.linked):
        return False
    k = np.arange(len(samples.time))
    return bool(np.max(np.abs(samples.time - (samples.time[0] + k * dt))) <= UNIFORM_RTOL * dt)


def grid_length(t0: float, t1: float, dt: float) -> int:
    """Grid times t0 + k dt from t0 up to t1 (within :data:`SNAP` dt); a count beyond
    :data:`MAX_TRACK_VALUES` (or an overflow) raises BudgetError naming ``--dt``."""
    ratio = (t1 - t0) / dt + SNAP
    if not math.isfinite(ratio) or ratio >= MAX_TRACK_VALUES:
        raise BudgetError(
            f"--dt: {dt:g} over {t1 - t0:g} time units gives over {MAX_TRACK_VALUES:,} frames; allowed: a larger dt"
        )
    return math.floor(ratio) + 1


def resample(samples: Samples, dt: float) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """(time, position, velocity) on the grid t0, t0 + dt, ... by the rules of the module docstring."""
    t = samples.time
    n, dim = samples.position.shape[1:]
    count = grid_length(float(t[0]), float(t[-1]), dt)
    check_track_size(count, n, dim, "--dt")
    grid = t[0] + dt * np.arange(count)
    s = np.clip(np.searchsorted(t, grid, side="right") - 1, 0, len(t) - 1)
    nxt = np.minimum(s + 1, len(t) - 1)
    span = np.where(nxt > s, t[nxt] - t[s], 1.0)
    w = np.where(nxt > s, (grid - t[s]) / span, 0.0)
    on_next = (nxt > s) & (t[nxt] - grid <= SNAP * dt)
    s = np.where(on_next, nxt, s)
    w = np.where(on_next | (w <= SNAP * dt / span), 0.0, w)
    nxt = np.minimum(s + 1, len(t) - 1)
    between = w > 0
    linked = np.zeros(len(grid), dtype=bool)
    inner = s < len(t) - 1
    linked[inner] = samples.linked[s[inner]]

    def interpolate(values: np.ndarray) -> np.ndarray:
        a, b = values[s], values[nxt]
        out = np.where(between[:, None, None], (1.0 - w)[:, None, None] * a + w[:, None, None] * b, a)
        out[between & ~linked] = np.nan  # a gap between two frames: nobody is drawn across it
        return out

    position = interpolate(samples.position)
    velocity = None if samples.velocity is None else interpolate(samples.velocity)
    return grid, position, velocity


VELOCITY_METHODS = ("central", "backward", "forward")
"""Estimators of :func:`velocity_from_positions`."""


def velocity_from_positions(time: np.ndarray, position: np.ndarray, method: str = "central") -> np.ndarray:
    """Velocities of a uniform grid's positions (T, N, dim) by the differences of the module docstring.

    ``method``: "central" (p[k+1] - p[k-1]) / (t[k+1] - t[k-1]); "backward" (p[k] - p[k-1]) / (t[k] -
    t[k-1]); "forward" (p[k+1] - p[k]) / (t[k+1] - t[k]). Where the chosen difference is missing
    (the bird is not seen in a frame it needs) the one-sided differences stand in, forward first."""
    if method not in VELOCITY_METHODS:
        raise ValueError(f"--velocity: {method!r} is unknown; allowed: {', '.join(VELOCITY_METHODS)}")
    velocity = np.full_like(position, np.nan)
    if len(time) < 2:
        return velocity
    seen = np.all(np.isfinite(position), axis=2)
    forward = (position[1:] - position[:-1]) / np.diff(time)[:, None, None]
    has_next = seen[:-1] & seen[1:]  # frame k and k + 1
    if method == "central":
        both = seen[:-2] & seen[2:]
        central = (position[2:] - position[:-2]) / (time[2:] - time[:-2])[:, None, None]
        velocity[1:-1][both] = central[both]
    elif method == "backward":
        velocity[1:][has_next] = forward[has_next]
    # one-sided where the chosen difference is missing: forward first, then backward
    missing = ~np.all(np.isfinite(velocity), axis=2)
    use = missing[:-1] & has_next
    velocity[:-1][use] = forward[use]
    missing = ~np.all(np.isfinite(velocity), axis=2)
    use = missing[1:] & has_next
    velocity[1:][use] = forward[use]
    return velocity

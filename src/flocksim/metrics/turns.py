"""Collective turns: how often the whole flock changes direction, and how much of the time it is turning.

The flock's heading H(t) is the unit vector of the sum of its living birds' unit headings
(:func:`flock_headings`; :func:`flocksim.metrics.mean_heading` per sample). The angle between two
headings is 2 atan2(|a - b|, |a + b|) (accurate at small and large angles), in degrees.

A **turn** (:func:`collective_turns`): the heading turns by at least ``angle`` [deg] (default 45)
within ``window`` [s] (default 3 s; so at 15 deg/s on average or faster). An interval of samples
[t_i, t_j] with t_j - t_i <= window and angle(H_i, H_j) >= angle is *turning* when it holds no
shorter such interval (for each i, the first such j; kept unless a later start reaches the angle
by t_j too). Turning intervals that overlap or touch are one turn, from the first one's start to the
last one's end. A turn at a steady rate from t_a to t_b (reaching ``angle`` within ``window``) is
thus the interval [t_a, t_b] exactly, and slower drift is no turn at all. A flock circling the
whole time is one long turn: ``turned_deg_per_s`` (the heading's total rotation over the run's
length) tells it from a flock flying straight. Turns per minute count turns over the run's time
(last sample minus first); the fraction turning is the time in turns over the run's time.

With ``horizontal=True`` the vertical component (y, up) is dropped first: turns as seen from the
ground, climbs and dives left out. Collective turns in starling flocks spread from bird to bird
(Attanasi et al. 2014, Nature Physics 10:691); the murmuration-hallmarks experiment calls a sample
turning when the heading turns faster than 10 deg/s.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from flocksim.metrics.order import unit_headings
from flocksim.metrics.samples import as_alive, as_samples, as_time

ANGLE_DEG = 45.0
WINDOW_S = 3.0
VERTICAL_AXIS = 1
"""The up axis (y) of 3D runs."""


def flock_headings(velocity: np.ndarray, alive: np.ndarray | None = None) -> np.ndarray:
    """Flock heading per sample (T, dim): the unit vector of the sum of the living birds' unit headings
    (zeros where it vanishes or no bird is alive). ``velocity`` (T, N, dim), ``alive`` (T, N)."""
    v = as_samples("velocity", velocity)
    live = as_alive(alive, v.shape[:2])
    total = np.stack([unit_headings(v[t][live[t]]).sum(axis=0) for t in range(len(v))]) if len(v) else v[:, 0]
    return unit_headings(total)


def heading_angle(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Angle [deg] between unit vectors (rows of ``a`` and ``b``, broadcast): 2 atan2(|a - b|, |a + b|)."""
    return np.degrees(2.0 * np.arctan2(np.linalg.norm(a - b, axis=-1), np.linalg.norm(a + b, axis=-1)))


@dataclass(frozen=True)
class Turns:
    """Collective turns of a run. Per turn (K,): ``starts``, ``ends`` [s], ``turned`` the heading's
    rotation along it (sum of the sample-to-sample angles) [deg]. Per sample (T,): ``turning`` (the
    sample lies in a turn). Over the run: ``minutes``, ``turns_per_minute``, ``turning_fraction``
    (time in turns over the run's time), ``turned_deg_per_s`` (the heading's total rotation over
    the run's time)."""

    starts: np.ndarray
    ends: np.ndarray
    turned: np.ndarray
    turning: np.ndarray
    minutes: float
    turns_per_minute: float
    turning_fraction: float
    turned_deg_per_s: float


def collective_turns(
    time: np.ndarray,
    heading: np.ndarray,
    angle: float = ANGLE_DEG,
    window: float = WINDOW_S,
    horizontal: bool = False,
) -> Turns:
    """Turns of the flock's heading (module docstring): ``time`` (T,) [s], ``heading`` (T, dim) the
    flock's heading per sample (any length; zero rows: no heading, never part of a turn), ``angle``
    [deg] in (0, 180], ``window`` [s] > 0."""
    h = np.asarray(heading, dtype=np.float64)
    if h.ndim != 2 or h.shape[1] not in (2, 3):
        raise ValueError(f"heading: needs shape (samples, 2 or 3), got {h.shape}")
    t = as_time(time, len(h))
    if not 0.0 < angle <= 180.0:
        raise ValueError(f"angle: needs degrees in (0, 180], got {angle}")
    if not window > 0.0:
        raise ValueError(f"window: needs seconds > 0, got {window}")
    if horizontal and h.shape[1] == 3:
        h = np.delete(h, VERTICAL_AXIS, axis=1)
    h = unit_headings(h)
    known = np.any(h != 0.0, axis=1)
    steps = heading_angle(h[:-1], h[1:])
    steps[~(known[:-1] & known[1:])] = 0.0
    first = np.full(len(h), len(h), dtype=np.int64)  # per start i: the first j reaching the angle (len: none)
    for i in np.flatnonzero(known):
        last = int(np.searchsorted(t, t[i] + window, side="right"))  # samples i + 1 .. last - 1 lie within
        if last <= i + 1:
            continue
        reached = np.flatnonzero(known[i + 1 : last] & (heading_angle(h[i], h[i + 1 : last]) >= angle))
        if len(reached):
            first[i] = i + 1 + int(reached[0])
    later = np.minimum.accumulate(first[::-1])[::-1]  # later[i]: the earliest end of any start >= i
    later = np.append(later[1:], len(h))  # ... of any start > i
    marked = np.zeros(max(len(h) - 1, 0), dtype=bool)  # interval k: from sample k to k + 1
    for i in np.flatnonzero((first < len(h)) & (first < later)):
        marked[i : first[i]] = True
    starts, ends = _runs(marked)
    duration = float(t[-1] - t[0]) if len(t) else 0.0
    minutes = duration / 60.0
    turning = np.zeros(len(h), dtype=bool)
    for a, b in zip(starts, ends, strict=True):
        turning[a : b + 1] = True
    return Turns(
        starts=t[starts],
        ends=t[ends],
        turned=np.array([steps[a:b].sum() for a, b in zip(starts, ends, strict=True)]),
        turning=turning,
        minutes=minutes,
        turns_per_minute=len(starts) / minutes if minutes > 0 else math.nan,
        turning_fraction=float(np.diff(t)[marked].sum()) / duration if duration > 0 else math.nan,
        turned_deg_per_s=float(steps.sum()) / duration if duration > 0 else math.nan,
    )


def _runs(marked: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(first sample, last sample) of each maximal run of marked intervals."""
    edges = np.diff(np.concatenate([[0], marked.astype(np.int8), [0]]))
    first = np.flatnonzero(edges == 1)
    last_interval = np.flatnonzero(edges == -1) - 1
    return first, last_interval + 1

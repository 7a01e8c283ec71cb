"""Checks shared by the time-series analyses: a run's samples as plain arrays.

``position`` and ``velocity`` are (T, N, dim) [units, units/s] for T samples of N birds (the same
bird in the same column throughout); ``alive`` is (T, N) bool (None: every bird in every sample);
``time`` is (T,) [s], increasing. Birds not alive in a sample are left out of that sample's
analyses, whatever their rows hold.
"""

from __future__ import annotations

import numpy as np


def as_samples(name: str, values: np.ndarray, dims: tuple[int, ...] = (2, 3)) -> np.ndarray:
    """``values`` as a float (T, N, dim) array with dim in ``dims``; ValueError naming ``name`` otherwise."""
    a = np.asarray(values, dtype=np.float64)
    if a.ndim != 3 or a.shape[2] not in dims:
        allowed = " or ".join(str(d) for d in dims)
        raise ValueError(f"{name}: needs shape (samples, birds, {allowed}), got {a.shape}")
    return a


def as_alive(alive: np.ndarray | None, shape: tuple[int, int]) -> np.ndarray:
    """``alive`` as a (T, N) bool array (all True for None); ValueError when its shape is not ``shape``."""
    if alive is None:
        return np.ones(shape, dtype=bool)
    a = np.asarray(alive, dtype=bool)
    if a.shape != tuple(shape):
        raise ValueError(f"alive: needs shape (samples, birds) = {tuple(shape)}, got {a.shape}")
    return a


def as_time(time: np.ndarray, samples: int) -> np.ndarray:
    """``time`` as a float (T,) array, strictly increasing; ValueError otherwise."""
    t = np.asarray(time, dtype=np.float64)
    if t.shape != (samples,):
        raise ValueError(f"time: needs shape ({samples},) (one time per sample), got {t.shape}")
    if samples > 1 and not np.all(np.diff(t) > 0):
        raise ValueError("time: needs strictly increasing sample times [s]")
    return t

"""Flocks splitting and merging over a run: how many flocks, and how often they split and join.

Flocks per sample (:func:`label_flocks`): the birds alive, linked by chains of neighbours closer than
``link_nnd`` times the sample's median nearest-neighbour distance (single linkage, as the
murmuration-hallmarks experiment counts flocks: :func:`flocksim.metrics.hallmarks.flock_labels`,
4 spacings by default, so a split is a gap of several spacings whatever the units); a group of fewer
than ``min_size`` birds is not a flock (its birds get no flock).

Events between consecutive samples (:func:`flock_events`), matched by the birds the two samples'
flocks share (the same bird in the same column throughout; birds alive and in a flock at both
samples): a flock **splits** when at least ``min_size`` of its birds are in each of two or more
flocks of the next sample; flocks **merge** when a flock of the next sample holds at least
``min_size`` birds of each of two or more flocks of this one. A part smaller than ``min_size`` could
not be a flock by itself, so a few birds changing flocks is neither. One flock breaking in three is
one split, three flocks joining is one merge. Rates are per minute of the run's time
(last sample's time minus the first's).

Field: murmurations split and merge all the time, and flocks fission under attack (Storms et al. 2019,
Behavioral Ecology and Sociobiology 73:10, name 'split' as one of the collective escape patterns);
no published rate per minute is known to this module.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from flocksim.metrics.hallmarks import flock_labels
from flocksim.metrics.samples import as_alive, as_samples, as_time

LINK_NND = 4.0
"""Birds closer than this many median nearest-neighbour distances belong to the same flock."""
MIN_SIZE = 10
"""A group of fewer birds is not a flock."""


def label_flocks(position: np.ndarray, link_nnd: float = LINK_NND, min_size: int = MIN_SIZE) -> np.ndarray:
    """Flock of each bird (N,) of one sample: 0 for the largest flock, 1 for the next, ...; -1 for a
    bird in a group of fewer than ``min_size`` birds. ``position`` (N, dim) of the birds alive."""
    from scipy.spatial import cKDTree

    if link_nnd <= 0:
        raise ValueError(
            f"link_nnd: needs a positive multiple of the median nearest-neighbour distance, got {link_nnd}"
        )
    if min_size < 1:
        raise ValueError(f"min_size: needs at least 1 bird, got {min_size}")
    p = np.asarray(position, dtype=np.float64)
    n = len(p)
    out = np.full(n, -1, dtype=np.int64)
    if n < 2:
        if n == 1 and min_size <= 1:
            out[0] = 0
        return out
    nnd = cKDTree(p).query(p, k=2)[0][:, 1]
    groups = flock_labels(p, link_nnd * float(np.median(nnd)))
    sizes = np.bincount(groups)
    order = np.argsort(-sizes, kind="stable")  # largest first; ties by first label
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    big = sizes[groups] >= min_size
    out[big] = rank[groups[big]]
    return out


def transitions(before: np.ndarray, after: np.ndarray, min_size: int = MIN_SIZE) -> tuple[int, int]:
    """(splits, merges) from one sample's flock labels to the next's, (N,) each with -1 for a bird not
    in a flock (or not alive) in that sample (module docstring)."""
    a = np.asarray(before, dtype=np.int64)
    b = np.asarray(after, dtype=np.int64)
    if a.shape != b.shape:
        raise ValueError(f"before, after: need one label per bird each, got {a.shape} and {b.shape}")
    both = (a >= 0) & (b >= 0)
    if not both.any():
        return 0, 0
    shared = np.zeros((int(a[both].max()) + 1, int(b[both].max()) + 1), dtype=np.int64)
    np.add.at(shared, (a[both], b[both]), 1)
    parts = shared >= min_size
    splits = int(np.count_nonzero(parts.sum(axis=1) >= 2))
    merges = int(np.count_nonzero(parts.sum(axis=0) >= 2))
    return splits, merges


@dataclass(frozen=True)
class FlockEvents:
    """Flocks over a run. Per sample (T,): ``time`` [s], ``flocks`` the number of flocks,
    ``largest_fraction`` the share of the birds alive in the largest flock, ``splits`` and
    ``merges`` the events since the previous sample (0 at the first); ``labels`` (T, N) each bird's
    flock (-1: not alive, or in no flock). Over the run: ``minutes`` its length, ``splits_per_minute``,
    ``merges_per_minute``, ``flocks_mean``, ``flocks_max``, ``flock_count_changes`` (samples whose
    number of flocks differs from the previous one's)."""

    time: np.ndarray
    flocks: np.ndarray
    largest_fraction: np.ndarray
    splits: np.ndarray
    merges: np.ndarray
    labels: np.ndarray
    minutes: float
    splits_per_minute: float
    merges_per_minute: float
    flocks_mean: float
    flocks_max: int
    flock_count_changes: int


def flock_events(
    time: np.ndarray,
    position: np.ndarray,
    alive: np.ndarray | None = None,
    link_nnd: float = LINK_NND,
    min_size: int = MIN_SIZE,
) -> FlockEvents:
    """Flocks, splits and merges over a run: ``time`` (T,) [s], ``position`` (T, N, dim) [units],
    ``alive`` (T, N) (None: all); ``link_nnd`` and ``min_size`` as :func:`label_flocks`."""
    p = as_samples("position", position)
    t = as_time(time, len(p))
    live = as_alive(alive, p.shape[:2])
    labels = np.full(p.shape[:2], -1, dtype=np.int64)
    for k in range(len(p)):
        labels[k, live[k]] = label_flocks(p[k][live[k]], link_nnd, min_size)
    flocks = labels.max(axis=1) + 1
    largest = np.array(
        [np.count_nonzero(row == 0) / n if n else math.nan for row, n in zip(labels, live.sum(axis=1), strict=True)]
    )
    splits = np.zeros(len(p), dtype=np.int64)
    merges = np.zeros(len(p), dtype=np.int64)
    for k in range(1, len(p)):
        splits[k], merges[k] = transitions(labels[k - 1], labels[k], min_size)
    minutes = float(t[-1] - t[0]) / 60.0 if len(t) else 0.0
    rate = (lambda count: count / minutes) if minutes > 0 else (lambda count: math.nan)
    return FlockEvents(
        time=t,
        flocks=flocks,
        largest_fraction=largest,
        splits=splits,
        merges=merges,
        labels=labels,
        minutes=minutes,
        splits_per_minute=rate(int(splits.sum())),
        merges_per_minute=rate(int(merges.sum())),
        flocks_mean=float(flocks.mean()) if len(flocks) else math.nan,
        flocks_max=int(flocks.max()) if len(flocks) else 0,
        flock_count_changes=int(np.count_nonzero(np.diff(flocks))),
    )

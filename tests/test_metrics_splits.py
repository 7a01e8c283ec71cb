"""Splits and merges (flocksim.metrics.splits) on flocks that separate and rejoin at known samples."""

from __future__ import annotations

import math

import numpy as np
import pytest

from flocksim.metrics import flock_events, label_flocks
from flocksim.metrics.hallmarks import flock_count, flock_labels
from flocksim.metrics.splits import transitions


def block(nx: int, ny: int, nz: int, origin=(0.0, 0.0, 0.0)) -> np.ndarray:
    """A cubic lattice of spacing 1 (nearest-neighbour distance 1)."""
    g = np.stack(np.meshgrid(np.arange(nx), np.arange(ny), np.arange(nz), indexing="ij"), axis=-1)
    return g.reshape(-1, 3).astype(float) + origin


def separating_flock(samples: int = 15) -> np.ndarray:
    """Two halves of 100 birds (10 x 5 x 2 each) side by side (one flock) at samples 0-4 and 10-14;
    at samples 5-9 the second half is 30 units away along z (two flocks). Everything drifts +2 in x a sample."""
    a, b = block(10, 5, 2), block(10, 5, 2, origin=(0.0, 0.0, 2.0))
    out = np.empty((samples, 200, 3))
    for k in range(samples):
        gap = 30.0 if 5 <= k < 10 else 0.0
        out[k] = np.vstack([a, b + np.array([0.0, 0.0, gap])]) + np.array([2.0 * k, 50.0, 0.0])
    return out


def test_labels_are_by_size_and_small_groups_are_no_flock():
    p = np.vstack([block(4, 4, 4), block(3, 3, 3, origin=(50.0, 0, 0)), block(2, 1, 1, origin=(0, 0, 80.0))])
    labels = label_flocks(p, min_size=10)
    assert list(np.bincount(labels[labels >= 0])) == [64, 27]
    assert np.all(labels[:64] == 0) and np.all(labels[64:91] == 1) and np.all(labels[91:] == -1)
    # the pair far away is a flock once two birds make one
    assert label_flocks(p, min_size=2).max() == 2
    # link: within 4 spacings one flock, beyond it two
    near = np.vstack([block(3, 3, 3), block(3, 3, 3, origin=(6.0, 0, 0))])  # gap of 4 spacings (2 -> 6)
    far = np.vstack([block(3, 3, 3), block(3, 3, 3, origin=(6.5, 0, 0))])
    assert label_flocks(near).max() == 0 and label_flocks(far).max() == 1
    assert flock_count(far, 4.0) == 2 and len(np.unique(flock_labels(far, 4.0))) == 2


def test_one_split_and_one_merge_per_separation():
    position = separating_flock()
    time = np.arange(15) * 1.0
    out = flock_events(time, position)
    assert list(out.flocks) == [1] * 5 + [2] * 5 + [1] * 5
    assert list(np.flatnonzero(out.splits)) == [5] and out.splits[5] == 1
    assert list(np.flatnonzero(out.merges)) == [10] and out.merges[10] == 1
    assert out.minutes == pytest.approx(14 / 60)
    assert out.splits_per_minute == pytest.approx(60 / 14)
    assert out.merges_per_minute == pytest.approx(60 / 14)
    assert out.flocks_mean == pytest.approx(20 / 15) and out.flocks_max == 2 and out.flock_count_changes == 2
    np.testing.assert_allclose(out.largest_fraction, [1.0] * 5 + [0.5] * 5 + [1.0] * 5)


def test_birds_changing_flocks_are_no_split():
    # two flocks of 100 apart the whole time; 3 birds (fewer than min_size) move from the first to the second
    a, b = block(10, 5, 2), block(10, 5, 2, origin=(0.0, 0.0, 40.0))
    before = np.vstack([a, b])
    after = before.copy()
    after[:3] += [0.0, 0.0, 45.0]  # the first row of a joins b's far side
    out = flock_events(np.array([0.0, 1.0]), np.stack([before, after]))
    assert list(out.flocks) == [2, 2] and out.splits.sum() == 0 and out.merges.sum() == 0
    # the same move by 10 birds (min_size) is a split of the first flock and a merge into the second
    after[:10] = before[:10] + np.array([0.0, 0.0, 45.0])
    out = flock_events(np.array([0.0, 1.0]), np.stack([before, after]))
    assert out.splits[1] == 1 and out.merges[1] == 1


def test_a_three_way_split_is_one_event_and_dead_birds_do_not_count():
    labels_before = np.array([0] * 30 + [-1] * 2)
    labels_after = np.array([0] * 10 + [1] * 10 + [2] * 10 + [-1] * 2)
    assert transitions(labels_before, labels_after) == (1, 0)
    assert transitions(labels_after, labels_before) == (0, 1)
    # the second half dies at sample 5 instead of flying away: no split, one flock fewer birds
    position = separating_flock()
    alive = np.ones(position.shape[:2], dtype=bool)
    alive[5:10, 100:] = False
    position[5:10, 100:] = np.nan
    out = flock_events(np.arange(15.0), position, alive)
    assert out.splits.sum() == 0 and out.merges.sum() == 0 and list(out.flocks) == [1] * 15
    assert math.isnan(flock_events(np.arange(15.0), position, np.zeros((15, 200), dtype=bool)).largest_fraction[0])


def test_splits_bad_input_names_the_field():
    position = separating_flock(samples=3)
    with pytest.raises(ValueError, match="time"):
        flock_events(np.array([0.0, 2.0, 1.0]), position)
    with pytest.raises(ValueError, match="link_nnd"):
        label_flocks(position[0], link_nnd=0.0)
    with pytest.raises(ValueError, match="min_size"):
        label_flocks(position[0], min_size=0)

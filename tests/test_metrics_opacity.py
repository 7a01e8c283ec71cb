"""Projected opacity (flocksim.metrics.opacity) on lattices of discs whose covered fraction is known by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from flocksim.metrics import projected_opacity
from flocksim.metrics.opacity import view_basis

DISC = math.pi * 0.25**2  # a disc of diameter 0.5
PIXEL = 0.0234
"""Incommensurate with the lattice, so that discs fall on pixels at every phase and their area errors average out."""


def sheet(n: int = 20, height: float = 30.0, offset: float = 0.0) -> np.ndarray:
    """n x n birds on a horizontal square lattice of spacing 1 (x, z) at ``height`` (y up)."""
    x, z = (a.ravel() + offset for a in np.meshgrid(np.arange(n), np.arange(n), indexing="ij"))
    return np.c_[x, np.full(n * n, height), z].astype(float)


def test_a_lattice_seen_from_below():
    # 400 discs of diameter 0.5 at spacing 1: covered 400 pi / 16. The outline is the lattice's rounded
    # square, side 19 plus half a disc all round: 19^2 + 4 x 19 x 0.25 + pi 0.25^2, less what the closing
    # leaves open in the 76 gaps between edge birds: a disc of radius R = 5 resting on two birds 1 apart
    # sags 0.25 - (sqrt(5.25^2 - 0.5^2) - 5) = 0.0239 below their tangent mid-gap, about
    # 0.952 x 0.0239 - 0.952^3 / (12 x 2R) = 0.0156 per gap
    out = projected_opacity(sheet(), diameter=0.5, pixel=PIXEL, outline_radius=5.0)
    sag = 0.25 - (math.sqrt(5.25**2 - 0.5**2) - 5.0)
    area = 19**2 + 4 * 19 * 0.25 + DISC - 76 * (0.952 * sag - 0.952**3 / 120)
    assert out.covered_area == pytest.approx(400 * DISC, rel=0.003)
    assert out.projected_area == pytest.approx(area, rel=0.003)
    assert out.opacity == pytest.approx(400 * DISC / area, rel=0.005)
    assert out.optical_depth == pytest.approx(400 * DISC / out.projected_area, rel=1e-12)
    assert out.n == 400 and out.pixel == PIXEL and out.outline_radius == 5.0


def test_layers_hide_each_other_only_when_stacked():
    one = projected_opacity(sheet(), 0.5, pixel=PIXEL, outline_radius=5.0)
    stacked = projected_opacity(np.vstack([sheet(), sheet(height=32.0)]), 0.5, pixel=PIXEL, outline_radius=5.0)
    assert stacked.covered_area == pytest.approx(one.covered_area, rel=1e-9)  # straight above: hidden
    assert stacked.optical_depth == pytest.approx(2 * one.optical_depth, rel=1e-9)
    two = np.vstack([sheet(), sheet(height=32.0, offset=0.5)])
    shifted = projected_opacity(two, 0.5, pixel=PIXEL, outline_radius=5.0)
    assert shifted.covered_area == pytest.approx(2 * one.covered_area, rel=0.005)  # 0.71 apart: no overlap


def test_seen_from_the_side_the_sheet_is_a_line():
    # along x, the 20 birds of each row hide behind each other: 20 discs show
    out = projected_opacity(sheet(), 0.5, direction=(1.0, 0.0, 0.0), pixel=PIXEL, outline_radius=5.0)
    assert out.covered_area == pytest.approx(20 * DISC, rel=0.005)
    tilted = projected_opacity(sheet(), 0.5, direction=(0.0, 2.0, 0.0), pixel=PIXEL, outline_radius=5.0)
    assert tilted.covered_area == pytest.approx(400 * DISC, rel=0.005)  # the length of direction does not matter


def test_holes_inside_the_outline_count_as_flock():
    full = sheet()
    keep = ~((full[:, 0] >= 7) & (full[:, 0] <= 12) & (full[:, 2] >= 7) & (full[:, 2] <= 12))  # a 7 x 7 vacuole
    holed = projected_opacity(full[keep], 0.5, pixel=PIXEL, outline_radius=2.0)
    whole = projected_opacity(full, 0.5, pixel=PIXEL, outline_radius=2.0)
    assert holed.projected_area == pytest.approx(whole.projected_area, rel=1e-3)
    assert holed.covered_area == pytest.approx(364 * DISC, rel=0.005)


def test_random_birds_block_one_minus_exp_minus_depth():
    # uniformly random birds: a sightline misses each of the N discs independently, so the open sky is
    # about exp(-N disc / area) (edges aside)
    rng = np.random.default_rng(4)
    p = rng.random((6000, 3)) * [60.0, 4.0, 60.0]
    out = projected_opacity(p, 0.5)
    assert out.opacity == pytest.approx(1 - math.exp(-out.optical_depth), rel=0.03)
    assert out.projected_area == pytest.approx(60.0 * 60.0, rel=0.03)


def test_view_basis_and_bad_input():
    b = view_basis((0.0, 0.0, 3.0))
    np.testing.assert_allclose(b @ b.T, np.eye(2), atol=1e-12)
    np.testing.assert_allclose(b @ [0.0, 0.0, 1.0], [0.0, 0.0], atol=1e-12)
    with pytest.raises(ValueError, match="direction"):
        projected_opacity(sheet(), 0.5, direction=(0.0, 0.0, 0.0))
    with pytest.raises(ValueError, match="diameter"):
        projected_opacity(sheet(), 0.0)
    with pytest.raises(ValueError, match="position"):
        projected_opacity(sheet()[:, :2], 0.5)
    with pytest.raises(ValueError, match="pixel"):
        projected_opacity(sheet(), 0.5, pixel=1e-4)
    assert math.isnan(projected_opacity(np.zeros((0, 3)), 0.5).opacity)

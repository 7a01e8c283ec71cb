"""Projected opacity of a flock: how much of the sky behind it the birds hide (Pearce et al. 2014, PNAS 111:10422).

Pearce, Miller, Rowlands & Turner measure a flock's opacity from the outside as the fraction of the
sightlines through the flock that are blocked by a bird: in a photograph, the dark fraction of the
flock's projected area. Starling flocks are *marginally opaque*: an observer still sees a
substantial fraction of sky through them, whatever their size (they report a mean about 0.3 over
the flocks they photographed).

Here (:func:`projected_opacity`) each bird is a disc of ``diameter`` [units] (e.g. its wingspan)
facing the observer, and the flock is projected along ``direction`` (default: the vertical, y up,
the view of an observer on the ground straight below). The projection is rasterised on square
pixels of side ``pixel`` (a pixel is covered when its centre lies on a disc):

- covered area: the pixels covered by at least one disc [units^2];
- projected area: the flock's outline, the covered pixels closed with a disc of ``outline_radius``
  (default 3 median nearest-neighbour distances of the projected birds: gaps narrower than twice
  that between birds belong to the flock, wider ones are sky), with the holes it encloses filled
  [units^2];
- opacity = covered area / projected area, in [0, 1];
- optical depth = N x disc area / projected area: birds per disc area over the outline. Birds placed
  at random in the outline would block 1 - exp(-depth) of it; opacity below that means birds hide
  behind each other less than at random.

A closing is a dilation then an erosion, each done exactly from a Euclidean distance transform, so
the cost is linear in the number of pixels (:data:`MAX_PIXELS` at most).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

VERTICAL = (0.0, 1.0, 0.0)
"""The default line of sight: up (y), an observer on the ground below the flock."""
PIXELS_PER_DIAMETER = 6
"""Default pixel: the diameter over this (coarser when the raster would exceed :data:`MAX_PIXELS`)."""
OUTLINE_NND = 3.0
"""Default outline radius in median nearest-neighbour distances of the projected birds."""
MAX_PIXELS = 16_000_000
"""Largest raster [pixels] (about 0.4 GB while the distance transforms run)."""
CHUNK_BIRDS = 20_000


@dataclass(frozen=True)
class Opacity:
    """``opacity`` (covered / projected area), ``covered_area`` and ``projected_area`` [units^2],
    ``optical_depth`` (N disc areas / projected area), ``pixel`` and ``outline_radius`` [units] used,
    ``n`` birds."""

    opacity: float
    covered_area: float
    projected_area: float
    optical_depth: float
    pixel: float
    outline_radius: float
    n: int


def view_basis(direction: np.ndarray | tuple[float, ...]) -> np.ndarray:
    """Two orthonormal axes (2, 3) across the unit line of sight ``direction`` (any length > 0)."""
    d = np.asarray(direction, dtype=np.float64)
    norm = float(np.linalg.norm(d)) if d.shape == (3,) else 0.0
    if not norm > 0 or not math.isfinite(norm):
        raise ValueError(f"direction: needs a non-zero 3D vector, got {direction!r}")
    d = d / norm
    helper = np.eye(3)[int(np.argmin(np.abs(d)))]
    e1 = np.cross(d, helper)
    e1 /= np.linalg.norm(e1)
    return np.stack([e1, np.cross(d, e1)])


def projected_opacity(
    position: np.ndarray,
    diameter: float,
    direction: np.ndarray | tuple[float, ...] = VERTICAL,
    pixel: float | None = None,
    outline_radius: float | None = None,
) -> Opacity:
    """Opacity of one flock seen along ``direction`` (module docstring): ``position`` (N, 3) [units]
    of the birds alive, each a disc of ``diameter`` [units]; ``pixel`` [units] (default: diameter /
    :data:`PIXELS_PER_DIAMETER`, coarser if the raster would be too large); ``outline_radius``
    [units] (default :data:`OUTLINE_NND` median projected nearest-neighbour distances)."""
    from scipy.ndimage import binary_fill_holes, distance_transform_edt
    from scipy.spatial import cKDTree

    p = np.asarray(position, dtype=np.float64)
    if p.ndim != 2 or p.shape[1] != 3:
        raise ValueError(f"position: needs shape (birds, 3), got {p.shape}")
    if not diameter > 0:
        raise ValueError(f"diameter: needs a positive disc diameter [units], got {diameter}")
    n = len(p)
    if n == 0:
        return Opacity(math.nan, 0.0, 0.0, math.nan, math.nan, math.nan, 0)
    uv = p @ view_basis(direction).T
    radius = 0.5 * diameter
    if outline_radius is None:
        nnd = cKDTree(uv).query(uv, k=2)[0][:, 1] if n > 1 else np.zeros(1)
        outline_radius = OUTLINE_NND * float(np.median(nnd))
    if outline_radius < 0:
        raise ValueError(f"outline_radius: needs a distance >= 0 [units], got {outline_radius}")
    span = uv.max(axis=0) - uv.min(axis=0) + 2.0 * (radius + outline_radius)
    if pixel is None:
        pixel = max(diameter / PIXELS_PER_DIAMETER, math.sqrt(float(np.prod(span)) / MAX_PIXELS) * 1.01)
    if not pixel > 0:
        raise ValueError(f"pixel: needs a positive pixel side [units], got {pixel}")
    margin = radius + outline_radius + 2.0 * pixel
    origin = uv.min(axis=0) - margin
    shape = tuple(int(s) for s in np.ceil((uv.max(axis=0) + margin - origin) / pixel))
    if shape[0] * shape[1] > MAX_PIXELS:
        raise ValueError(
            f"pixel: {pixel:g} makes a raster of {shape[0] * shape[1]} pixels, more than {MAX_PIXELS}; "
            "allowed: a larger pixel (or the default)"
        )
    covered = rasterise_discs(uv, radius, origin, pixel, shape)
    reach = outline_radius / pixel
    dilated = distance_transform_edt(~covered) <= reach
    outline = binary_fill_holes(distance_transform_edt(dilated) > reach) | covered
    covered_area = float(covered.sum()) * pixel**2
    projected_area = float(outline.sum()) * pixel**2
    return Opacity(
        opacity=covered_area / projected_area,
        covered_area=covered_area,
        projected_area=projected_area,
        optical_depth=n * math.pi * radius**2 / projected_area,
        pixel=float(pixel),
        outline_radius=float(outline_radius),
        n=n,
    )


def rasterise_discs(
    centres: np.ndarray, radius: float, origin: np.ndarray, pixel: float, shape: tuple[int, int]
) -> np.ndarray:
    """Bool raster ``shape`` whose pixel (i, j), centred at origin + ((i, j) + 0.5) x pixel, is True when
    that centre lies within ``radius`` of one of the (M, 2) ``centres`` (all inside the raster)."""
    out = np.zeros(shape, dtype=bool)
    reach = math.ceil(radius / pixel) + 1
    offsets = np.arange(-reach, reach + 1)
    di, dj = (a.ravel() for a in np.meshgrid(offsets, offsets, indexing="ij"))
    for lo in range(0, len(centres), CHUNK_BIRDS):
        c = (centres[lo : lo + CHUNK_BIRDS] - origin) / pixel  # in pixels
        base = np.floor(c).astype(np.int64)
        i = base[:, 0:1] + di
        j = base[:, 1:2] + dj
        inside = (i + 0.5 - c[:, 0:1]) ** 2 + (j + 0.5 - c[:, 1:2]) ** 2 <= (radius / pixel) ** 2
        out[i[inside], j[inside]] = True
    return out

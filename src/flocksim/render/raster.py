"""A small software rasterizer on numpy arrays: filled triangles and alpha-blended lines.

Frames are (height, width, 3) uint8 RGB arrays. Pixel (x, y) covers [x, x+1) x [y, y+1) and is
filled when its centre (x + 0.5, y + 0.5) lies inside the triangle (edges included). A
triangle smaller than a pixel still marks the pixel under its centroid, so no agent ever
vanishes. The loops are compiled by numba like the simulation kernels; they draw in the order
given (painter's algorithm: later triangles cover earlier ones) and run on one thread, so a
frame is the same whatever the machine.
"""

from __future__ import annotations

import math

import numba
import numpy as np

import flocksim.kernels.compile  # noqa: F401  (sets numba's cache folder before anything compiles)

TRIANGLE_LENGTH = 1.0  # the triangle's length along the heading, in units of the agent size
TRIANGLE_WIDTH = 0.6  # its width at the back, in units of the agent size


def triangles(center: np.ndarray, heading: np.ndarray, size: np.ndarray) -> np.ndarray:
    """(N, 3, 2) vertices of isosceles triangles pointing along the unit screen ``heading``:
    the tip 2/3 of the length ahead of ``center``, the back edge 1/3 behind (the centroid is the
    agent's position); ``size`` (N,) pixels. A zero heading points right."""
    h = np.array(heading, dtype=np.float64, copy=True)
    still = (h * h).sum(axis=1) == 0.0
    h[still] = (1.0, 0.0)
    n = np.stack([-h[:, 1], h[:, 0]], axis=1)
    length = (TRIANGLE_LENGTH * size)[:, None]
    half = (0.5 * TRIANGLE_WIDTH * size)[:, None]
    tip = center + h * (2.0 / 3.0) * length
    back = center - h * (1.0 / 3.0) * length
    out = np.empty((len(center), 3, 2), dtype=np.float64)
    out[:, 0] = tip
    out[:, 1] = back + n * half
    out[:, 2] = back - n * half
    return out


@numba.njit(cache=True, nogil=True)
def _edge(ax, ay, bx, by, px, py):
    return (bx - ax) * (py - ay) - (by - ay) * (px - ax)


@numba.njit(cache=True, nogil=True)
def fill_triangles(img, tri, colors, order):
    """Fill triangles ``tri[order[k]]`` (pixel coordinates) with ``colors[order[k]]`` in turn."""
    height = img.shape[0]
    width = img.shape[1]
    for k in range(order.shape[0]):
        i = order[k]
        x0 = tri[i, 0, 0]
        y0 = tri[i, 0, 1]
        x1 = tri[i, 1, 0]
        y1 = tri[i, 1, 1]
        x2 = tri[i, 2, 0]
        y2 = tri[i, 2, 1]
        if not (
            math.isfinite(x0)
            and math.isfinite(y0)
            and math.isfinite(x1)
            and math.isfinite(y1)
            and math.isfinite(x2)
            and math.isfinite(y2)
        ):
            continue
        area = _edge(x0, y0, x1, y1, x2, y2)
        if area < 0.0:  # make the vertex order counter-clockwise in the edge-function sense
            x1, y1, x2, y2 = x2, y2, x1, y1
            area = -area
        lo_x = max(math.floor(min(x0, x1, x2)), 0)
        hi_x = min(math.floor(max(x0, x1, x2)), width - 1)
        lo_y = max(math.floor(min(y0, y1, y2)), 0)
        hi_y = min(math.floor(max(y0, y1, y2)), height - 1)
        r = colors[i, 0]
        g = colors[i, 1]
        b = colors[i, 2]
        drawn = False
        if area > 0.0:
            for py in range(lo_y, hi_y + 1):
                cy = py + 0.5
                for px in range(lo_x, hi_x + 1):
                    cx = px + 0.5
                    if (
                        _edge(x0, y0, x1, y1, cx, cy) >= 0.0
                        and _edge(x1, y1, x2, y2, cx, cy) >= 0.0
                        and _edge(x2, y2, x0, y0, cx, cy) >= 0.0
                    ):
                        img[py, px, 0] = r
                        img[py, px, 1] = g
                        img[py, px, 2] = b
                        drawn = True
        if not drawn:
            gx = math.floor((x0 + x1 + x2) / 3.0)
            gy = math.floor((y0 + y1 + y2) / 3.0)
            if 0 <= gx < width and 0 <= gy < height:
                img[gy, gx, 0] = r
                img[gy, gx, 1] = g
                img[gy, gx, 2] = b


@numba.njit(cache=True, nogil=True)
def blend_lines(img, start, end, colors, alpha, max_length):
    """Draw segments start[i] -> end[i] (pixel coordinates) blended over the image with
    opacity ``alpha[i]`` in [0, 1]: pixel = pixel + alpha (color - pixel). Segments longer than
    ``max_length`` pixels (a jump across a periodic edge) or with a non-finite end are skipped.
    A DDA walk from end to end, at most one pixel step per sample; each pixel is blended once."""
    height = img.shape[0]
    width = img.shape[1]
    for i in range(start.shape[0]):
        x0 = start[i, 0]
        y0 = start[i, 1]
        x1 = end[i, 0]
        y1 = end[i, 1]
        a = alpha[i]
        if a <= 0.0 or not (math.isfinite(x0) and math.isfinite(y0) and math.isfinite(x1) and math.isfinite(y1)):
            continue
        dx = x1 - x0
        dy = y1 - y0
        length = max(abs(dx), abs(dy))
        if length > max_length:
            continue
        n = math.ceil(length)
        last_x = -1
        last_y = -1
        for s in range(n + 1):
            t = s / n if n > 0 else 0.0
            px = math.floor(x0 + t * dx)
            py = math.floor(y0 + t * dy)
            if px == last_x and py == last_y:
                continue
            last_x = px
            last_y = py
            if 0 <= px < width and 0 <= py < height:
                for c in range(3):
                    v = img[py, px, c] + a * (colors[i, c] - img[py, px, c])
                    img[py, px, c] = min(max(int(v + 0.5), 0), 255)


def draw_polyline(img: np.ndarray, points: np.ndarray, color: tuple[int, int, int], alpha: float = 1.0) -> None:
    """A closed outline through ``points`` (M, 2) pixels (e.g. the world's bounds)."""
    start = np.ascontiguousarray(points, dtype=np.float64)
    end = np.roll(start, -1, axis=0)
    colors = np.tile(np.array(color, dtype=np.float64), (len(start), 1))
    blend_lines(img, start, end, colors, np.full(len(start), alpha), float(max(img.shape)) * 4.0)

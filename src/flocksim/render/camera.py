"""World -> pixel projection for offline rendering.

2D: the scene rectangle is fitted into the frame (aspect kept, 4 % padding), +y up on screen.
3D: a perspective camera with +y as the vertical axis. ``azimuth`` turns the camera about the
vertical axis through the scene centre (0 degrees: on the +z side looking toward -z, 90: on the
+x side), ``elevation`` raises it above the horizontal plane, ``distance`` is in units of the
scene radius (half the diagonal of the scene box) and ``fov`` is the vertical field of view.
``zoom`` magnifies about the view centre; ``follow`` centres the view on the flock's centroid
in every frame. Pixel coordinates: x to the right, y down, pixel (i, j) covers [i, i+1) x [j, j+1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace

import numpy as np

CAMERA_RANGES = {
    "azimuth": (-360.0, 360.0),
    "elevation": (-89.0, 89.0),
    "distance": (0.05, 100.0),
    "fov": (1.0, 170.0),
    "zoom": (0.01, 100.0),
}


class CameraError(ValueError):
    """A bad --camera specification (one line, naming the key and the allowed values)."""


@dataclass(frozen=True)
class Camera:
    azimuth: float = 35.0  # degrees
    elevation: float = 20.0  # degrees
    distance: float = 2.6  # scene radii from the scene centre
    fov: float = 40.0  # degrees, vertical
    zoom: float = 1.0
    follow: bool = False


def parse_camera(text: str | None) -> Camera:
    """``"azimuth=30,elevation=20,distance=2.5,fov=40,zoom=1,follow=true"`` (any subset)."""
    camera = Camera()
    if not text:
        return camera
    allowed = ", ".join(f.name for f in fields(Camera))
    updates: dict[str, object] = {}
    for item in text.split(","):
        key, sep, raw = item.partition("=")
        key, raw = key.strip(), raw.strip()
        if not sep or not key:
            raise CameraError(f"--camera: expected KEY=VALUE pairs separated by commas, got {item!r}; keys: {allowed}")
        if key == "follow":
            if raw.lower() not in ("true", "false", "1", "0", "yes", "no"):
                raise CameraError(f"--camera follow: must be true or false, got {raw!r}")
            updates[key] = raw.lower() in ("true", "1", "yes")
            continue
        if key not in CAMERA_RANGES:
            raise CameraError(f"--camera: unknown key {key!r}; allowed: {allowed}")
        lo, hi = CAMERA_RANGES[key]
        try:
            value = float(raw)
        except ValueError:
            raise CameraError(f"--camera {key}: not a number: {raw!r}; allowed: {lo:g} to {hi:g}") from None
        if not (math.isfinite(value) and lo <= value <= hi):
            raise CameraError(f"--camera {key}: {raw} is out of range; allowed: {lo:g} to {hi:g}")
        updates[key] = value
    return replace(camera, **updates)


@dataclass(frozen=True)
class Projection:
    """Screen coordinates of points: ``xy`` (N, 2) pixels, ``depth`` (N,) (2D: zeros), ``scale``
    (N,) pixel size factor (1 at the scene centre; larger when nearer), ``visible`` (N,)."""

    xy: np.ndarray
    depth: np.ndarray
    scale: np.ndarray
    visible: np.ndarray
    heading: np.ndarray  # (N, 2) unit screen direction of the given vectors (zero if none)


class View:
    """Projects world points for one video (fixed frame size, scene box and camera)."""

    def __init__(self, camera: Camera, width: int, height: int, lo: np.ndarray, hi: np.ndarray):
        self.camera = camera
        self.width = width
        self.height = height
        self.lo = np.asarray(lo, dtype=np.float64)
        self.hi = np.asarray(hi, dtype=np.float64)
        self.dim = len(self.lo)
        self.center = (self.lo + self.hi) / 2.0
        extent = np.maximum(self.hi - self.lo, 1e-9)
        if self.dim == 2:
            self.pixels_per_unit = camera.zoom * 0.92 * min(width / extent[0], height / extent[1])
        else:
            self.radius = 0.5 * float(np.linalg.norm(extent))
            self.focal = (height / 2.0) / math.tan(math.radians(camera.fov) / 2.0) * camera.zoom

    def project(self, position: np.ndarray, vectors: np.ndarray | None = None, center=None) -> Projection:
        """Project (N, dim) world points (NaN rows come back invisible); ``vectors`` (N, dim)
        give on-screen headings; ``center`` overrides the view centre (follow mode)."""
        p = np.asarray(position, dtype=np.float64)
        c = self.center if center is None else np.asarray(center, dtype=np.float64)
        finite = np.isfinite(p).all(axis=1)
        if self.dim == 2:
            s = self.pixels_per_unit
            xy = np.empty((len(p), 2))
            xy[:, 0] = self.width / 2.0 + (p[:, 0] - c[0]) * s
            xy[:, 1] = self.height / 2.0 - (p[:, 1] - c[1]) * s
            heading = np.zeros((len(p), 2))
            if vectors is not None:
                v = np.asarray(vectors, dtype=np.float64)
                heading[:, 0] = v[:, 0]
                heading[:, 1] = -v[:, 1]
            return Projection(xy, np.zeros(len(p)), np.ones(len(p)), finite, _unit(heading))
        eye, right, up, forward = self._basis(c)
        rel = p - eye
        x = rel @ right
        y = rel @ up
        z = rel @ forward
        near = 0.01 * self.radius
        visible = finite & (z > near)
        zs = np.where(visible, z, 1.0)
        xy = np.empty((len(p), 2))
        xy[:, 0] = self.width / 2.0 + self.focal * x / zs
        xy[:, 1] = self.height / 2.0 - self.focal * y / zs
        z_center = self.camera.distance * self.radius
        scale = np.clip(z_center / zs, 0.25, 4.0)
        heading = np.zeros((len(p), 2))
        if vectors is not None:
            v = np.asarray(vectors, dtype=np.float64)
            vx, vy, vz = v @ right, v @ up, v @ forward
            # derivative of the perspective map along v (the direction of motion on screen)
            heading[:, 0] = (vx * zs - x * vz) / (zs * zs)
            heading[:, 1] = -(vy * zs - y * vz) / (zs * zs)
        return Projection(xy, np.where(visible, z, np.inf), scale, visible, _unit(heading))

    def _basis(self, center: np.ndarray):
        cam = self.camera
        az = math.radians(cam.azimuth)
        el = math.radians(cam.elevation)
        direction = np.array([math.cos(el) * math.sin(az), math.sin(el), math.cos(el) * math.cos(az)])
        eye = center + cam.distance * self.radius * direction
        forward = -direction
        right = np.cross(forward, np.array([0.0, 1.0, 0.0]))
        right /= np.linalg.norm(right)
        up = np.cross(right, forward)
        return eye, right, up, forward

    def depth_range(self) -> tuple[float, float]:
        """Depths of the nearest and farthest points of the scene sphere (3D)."""
        d = self.camera.distance * self.radius
        return max(d - self.radius, 0.0), d + self.radius


def _unit(v: np.ndarray) -> np.ndarray:
    n = np.linalg.norm(v, axis=1, keepdims=True)
    return np.divide(v, n, out=np.zeros_like(v), where=n > 0)


def scene_box(params: dict, first_positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(lo, hi) corners of what the video shows: the world bounds (box and periodic span
    [0, L), an ellipsoid [-a, a]), or for open space the first frame's agents plus 10 %."""
    world = params.get("world", {})
    bounds = world.get("bounds", {})
    kind = bounds.get("kind", "open")
    size = np.asarray(bounds.get("size", []), dtype=np.float64)
    dim = first_positions.shape[1]
    if kind in ("box", "periodic") and len(size) == dim:
        return np.zeros(dim), size
    if kind == "ellipsoid" and len(size) == dim:
        return -size, size
    p = first_positions[np.isfinite(first_positions).all(axis=1)]
    if len(p) == 0:
        return -np.ones(dim), np.ones(dim)
    lo, hi = p.min(axis=0), p.max(axis=0)
    pad = np.maximum(0.1 * (hi - lo), 1.0)
    return lo - pad, hi + pad

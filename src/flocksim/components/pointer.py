"""Pointer attract / repel (the viewer's mouse; docs/design.md §3.10): a Simulation component.

While the pointer is active (mode ``attract`` or ``repel`` at a point), after every step
each alive agent within ``pointer.radius`` of the point (every agent when the radius is
0) turns its velocity toward the point (attract) or straight away from it (repel):

- d = point - p (attract) or p - point (repel), the minimum-image displacement in
  periodic space; planar agents (``agents.planar``, 3D) drop d's y component;
- the unit heading h = v / |v| turns toward d / |d| in the plane of the two by
  min(angle(h, d), turn_rate_deg x dt), and v = |v| h': the speed is kept exactly
  (to rounding), so speed limits and constant-speed models are respected;
- h exactly opposite d turns to its left (2D) or about the axis h x up (3D, up = +y;
  h x x when h is vertical);
- agents at rest (v = 0) or exactly at the point (d = 0) are left unchanged.

Positions are never moved: the new velocity is what the next step starts from, and the
steering rules keep acting, so the flock bends toward (or away from) the point at a
bounded rate instead of jumping. The component runs after the other components (after
predator catches), works for every model and draws no random numbers, so a run stays
reproducible. ``Simulation.set_pointer(point, mode)`` adds it on first use.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from flocksim.space import Space, displacement_array, unit_rows

if TYPE_CHECKING:
    from flocksim.host import Host

POINTER_MODES = ("attract", "repel", "off")
"""Allowed pointer modes."""
_PARALLEL = 1e-12
"""|sin| below which a heading and a direction count as (anti)parallel."""


def pointer_turn(
    position: np.ndarray,
    velocity: np.ndarray,
    alive: np.ndarray,
    point: np.ndarray,
    sign: float,
    max_angle: float,
    radius: float,
    space: Space,
    planar: bool = False,
) -> np.ndarray:
    """Turn ``velocity`` (N, dim) [units/s] in place toward (``sign`` = +1) or away from
    (``sign`` = -1) ``point`` (dim,) [units] by at most ``max_angle`` [rad], keeping every
    speed. Only alive rows within ``radius`` [units] of the point react (radius 0: all
    alive rows). Returns the rows whose velocity changed."""
    rows = np.flatnonzero(alive)
    if len(rows) == 0 or max_angle <= 0.0:
        return rows[:0]
    dim = velocity.shape[1]
    gap = displacement_array(position[rows], np.asarray(point, dtype=np.float64)[None, :], space)
    if radius > 0.0:
        near = np.einsum("ij,ij->i", gap, gap) <= radius * radius
        rows, gap = rows[near], gap[near]
    d = sign * gap
    if planar and dim == 3:
        d[:, 1] = 0.0
    v = velocity[rows]
    speed = np.sqrt(np.einsum("ij,ij->i", v, v))
    u, toward = unit_rows(d)  # scaled first: a point at 1e308 has no finite distance, yet a direction
    ok = (speed > 0.0) & toward
    rows, v, speed, u = rows[ok], v[ok], speed[ok], u[ok]
    if len(rows) == 0:
        return rows
    h = v / speed[:, None]
    cos = np.einsum("ij,ij->i", h, u)
    w = u - cos[:, None] * h  # the part of u perpendicular to h: the turn's direction
    sin = np.sqrt(np.einsum("ij,ij->i", w, w))
    angle = np.arctan2(sin, cos)  # in [0, pi]
    opposite = (sin <= _PARALLEL) & (cos < 0.0)
    if opposite.any():
        w[opposite] = _side(h[opposite], dim)
        sin[opposite] = 1.0
    turning = (sin > _PARALLEL) | opposite
    rows, h, u, w, sin, angle, speed = (a[turning] for a in (rows, h, u, w, sin, angle, speed))
    step = np.minimum(angle, max_angle)
    new = np.cos(step)[:, None] * h + (np.sin(step) / sin)[:, None] * w
    reached = angle <= max_angle
    new[reached] = u[reached]  # exactly the direction of the point (no drift)
    new /= np.sqrt(np.einsum("ij,ij->i", new, new))[:, None]
    velocity[rows] = new * speed[:, None]
    return rows


def _side(h: np.ndarray, dim: int) -> np.ndarray:
    """Unit vectors perpendicular to the unit rows of ``h``: 2D the left normal; 3D h x up
    (up = +y), or h x x where h is vertical."""
    if dim == 2:
        return np.stack([-h[:, 1], h[:, 0]], axis=1)
    side = np.cross(h, np.array([0.0, 1.0, 0.0]))
    norm = np.linalg.norm(side, axis=1)
    vertical = norm < 1e-6
    if vertical.any():
        side[vertical] = np.cross(h[vertical], np.array([1.0, 0.0, 0.0]))
        norm[vertical] = np.linalg.norm(side[vertical], axis=1)
    return side / norm[:, None]


def check_pointer(point: Any, mode: str, dim: int) -> tuple[str, np.ndarray | None]:
    """Validated (mode, point): ``point`` as float64 (dim,) [units], None with mode ``off``.
    Raises ValueError naming the field and the allowed values."""
    if not isinstance(mode, str) or mode not in POINTER_MODES:
        raise ValueError(f"pointer.mode: allowed: {', '.join(POINTER_MODES)}; got {mode!r}")
    if mode == "off":
        return mode, None
    try:
        p = np.asarray(point, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"pointer.point: needs {dim} numbers (world.dim = {dim}); got {point!r}") from None
    if p.shape != (dim,):
        raise ValueError(f"pointer.point: needs {dim} numbers (world.dim = {dim}); got shape {p.shape}")
    if not np.isfinite(p).all():
        raise ValueError(f"pointer.point: must be finite numbers; got {p.tolist()}")
    return mode, p.copy()


class PointerSteering:
    """The pointer: ``mode`` (attract | repel | off) and ``point`` (dim,) [units] or None.
    Parameters: ``params.pointer`` (turn_rate_deg [deg/s], radius [units], 0 = all)."""

    name = "pointer"

    def __init__(self, sim: Host):
        self.dim = sim.params.world.dim
        self.mode = "off"
        self.point: np.ndarray | None = None
        self.last_rows = np.zeros(0, dtype=np.int64)
        """Rows turned in the last step (for tests and the curious)."""

    def set(self, point: Any, mode: str) -> None:
        """Switch the pointer: ``mode`` attract | repel at ``point`` (dim numbers [units]), or off."""
        self.mode, self.point = check_pointer(point, mode, self.dim)

    @property
    def active(self) -> bool:
        return self.mode != "off" and self.point is not None

    # --------------------------------------------------------------- protocol

    def before_step(self, sim: Host) -> None:
        pass

    def after_step(self, sim: Host) -> None:
        if not self.active:
            self.last_rows = np.zeros(0, dtype=np.int64)
            return
        p = sim.params.pointer
        state = sim.state
        planar = bool(getattr(getattr(sim.params, "agents", None), "planar", False))
        self.last_rows = pointer_turn(
            state.position,
            state.velocity,
            state.alive,
            self.point,
            1.0 if self.mode == "attract" else -1.0,
            math.radians(p.turn_rate_deg) * sim.dt,
            p.radius,
            sim.model.space,
            planar,
        )

    def state_dict(self) -> dict[str, Any]:
        point = self.point if self.point is not None else np.zeros(0)
        return {"mode": self.mode, "point": point.copy()}

    def load_state_dict(self, data: dict[str, Any]) -> None:
        mode = str(data["mode"])
        point = np.asarray(data["point"], dtype=np.float64)
        self.mode, self.point = check_pointer(point if mode != "off" else None, mode, self.dim)

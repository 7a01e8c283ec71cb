"""FlockState: the structure-of-arrays state of a flock (docs/design.md §1.1).

Row ``r`` of every array is one agent; ``ids[r]`` is its stable id, which
never changes and is never reused. Dead agents keep their row with
``alive[r] = False`` and take no part in neighbourhoods or integration.
Positions are in world units, velocities in units/s.

``spin`` (N, 3) is the inertial-spin state s of every agent (only
its z component is used in 2D; zero unless the alignment mode is
``inertial-spin``). ``turning`` (N,) marks the agents that turned in a
spontaneous turn during the last step (the viewer paints them yellow). Both default to zeros of the right shape.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

import numpy as np


@dataclass
class FlockState:
    position: np.ndarray  # (N, dim) float64
    velocity: np.ndarray  # (N, dim) float64
    alive: np.ndarray  # (N,) bool
    mass: np.ndarray  # (N,) float64
    radius: np.ndarray  # (N,) float64, body radius
    kind: np.ndarray  # (N,) int32, group / kind label
    ids: np.ndarray  # (N,) int64, stable agent ids
    next_id: int = field(default=0)
    spin: np.ndarray | None = None  # (N, 3) float64, inertial-spin state; None -> zeros
    turning: np.ndarray | None = None  # (N,) bool, turned in a spontaneous turn last step; None -> False

    def __post_init__(self) -> None:
        if self.spin is None:
            self.spin = np.zeros((self.position.shape[0], 3))
        if self.turning is None:
            self.turning = np.zeros(self.position.shape[0], dtype=bool)

    @property
    def n(self) -> int:
        """Rows (alive or not)."""
        return int(self.position.shape[0])

    @property
    def dim(self) -> int:
        return int(self.position.shape[1])

    @property
    def n_alive(self) -> int:
        return int(self.alive.sum())

    def copy(self) -> FlockState:
        return FlockState(
            **{
                f.name: (
                    getattr(self, f.name).copy()
                    if isinstance(getattr(self, f.name), np.ndarray)
                    else getattr(self, f.name)
                )
                for f in fields(self)
            }
        )

    def check(self) -> None:
        """Raise ValueError if shapes disagree or a non-finite number entered the state."""
        n, dim = self.position.shape
        if dim not in (2, 3):
            raise ValueError(f"position must be (N, 2) or (N, 3), got {self.position.shape}")
        for name in ("velocity",):
            if getattr(self, name).shape != (n, dim):
                raise ValueError(f"{name} must have shape {(n, dim)}")
        for name in ("alive", "mass", "radius", "kind", "ids", "turning"):
            if getattr(self, name).shape != (n,):
                raise ValueError(f"{name} must have shape {(n,)}")
        if self.spin.shape != (n, 3):
            raise ValueError(f"spin must have shape {(n, 3)}")
        for name in ("position", "velocity", "spin"):
            if not np.isfinite(getattr(self, name)).all():
                raise ValueError(f"{name} holds NaN or inf")


def new_state(
    position: np.ndarray,
    velocity: np.ndarray,
    mass: np.ndarray | float = 1.0,
    radius: np.ndarray | float = 0.5,
    kind: np.ndarray | int = 0,
) -> FlockState:
    """A state of all-alive agents with ids 0..N-1."""
    position = np.array(position, dtype=np.float64, order="C", copy=True)
    n = position.shape[0]
    state = FlockState(
        position=position,
        velocity=np.ascontiguousarray(velocity, dtype=np.float64).reshape(position.shape).copy(),
        alive=np.ones(n, dtype=bool),
        mass=np.broadcast_to(np.asarray(mass, dtype=np.float64), (n,)).copy(),
        radius=np.broadcast_to(np.asarray(radius, dtype=np.float64), (n,)).copy(),
        kind=np.broadcast_to(np.asarray(kind, dtype=np.int32), (n,)).copy(),
        ids=np.arange(n, dtype=np.int64),
        next_id=n,
    )
    state.check()
    return state

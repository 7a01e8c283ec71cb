"""Level of detail (params ``detail``, docs/parameters.md "Level of detail"): a Simulation component.

Before every step it chooses the agents that refresh their steering in this step (the others keep
the acceleration they last computed and still move): an alive agent refreshes when

- it has no kept acceleration yet (the first step, a spawned agent), or
- ``(step + id) % far_every == 0`` (``step``: steps taken before this one, ``id``: its stable id;
  the far agents' work is spread evenly over the steps), or
- it is near: within ``near`` [units] of the focus and, when a view cone is set, inside the cone
  (apex at the focus, axis the view direction, full angle ``fov_deg``). Distances are plain
  differences of world coordinates (a camera lives outside any periodic image).

The engine reads the choice from ``model.detail`` (a :class:`DetailPlan`, consumed by the step:
a step without one, such as ``Simulation.warm_up``'s, refreshes every agent and keeps nothing):
the refreshing agents alone are searched and steered (engines/cpu_reynolds.py), then
:func:`~flocksim.kernels.detail.keep_or_restore` stores their accelerations and gives the others
theirs back. Each agent is computed from its own rows only, so results stay bitwise independent of
the thread count.
The kept accelerations are part of :meth:`LevelOfDetail.state_dict` (checkpoints resume bitwise).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from flocksim.kernels.detail import keep_or_restore, select_refresh  # noqa: F401  (keep_or_restore: re-exported)
from flocksim.models.reynolds import AUX_COLUMNS
from flocksim.space import unit_vector

if TYPE_CHECKING:
    from flocksim.host import Host
    from flocksim.params import Detail, World


class DetailPlan(NamedTuple):
    """One step's level of detail, for the engine: ``active`` (N,) bool marks the alive agents that
    refresh; ``acc`` (N, 3) [units/s^2] and ``aux`` (N, AUX_COLUMNS) hold every agent's kept
    acceleration and phase-two scratch; ``kept`` (N,) bool marks the rows that hold one."""

    active: np.ndarray
    acc: np.ndarray
    aux: np.ndarray
    kept: np.ndarray


def world_centre(world: World) -> np.ndarray:
    """The default focus: box and periodic: size / 2; ellipsoid and open: the origin [units]."""
    size = np.asarray(world.bounds.size, dtype=np.float64)
    return size / 2 if world.bounds.kind in ("box", "periodic") else np.zeros(world.dim)


def _vector(what: str, value: Any, dim: int) -> np.ndarray:
    v = np.asarray(value, dtype=np.float64).ravel()
    if v.shape != (dim,) or not np.isfinite(v).all():
        raise ValueError(f"set_view: {what} must be {dim} finite numbers, got {np.asarray(value).tolist()!r}")
    return v


def _unit_axis(value: Any, dim: int) -> np.ndarray:
    """The view cone's axis: ``value`` (dim finite numbers, not all zero) normalised."""
    unit = unit_vector(_vector("direction", value, dim))  # scaled first: [1e308] * 3 has no finite length
    if unit is None:
        raise ValueError(
            "set_view: direction must not be all zeros; allowed: a non-zero vector, or no direction (no view cone)"
        )
    return unit


class LevelOfDetail:
    """The ``detail`` component: the view (focus, cone) and every agent's kept acceleration."""

    name = "detail"

    def __init__(self, sim: Host):
        p: Detail = sim.params.detail
        self.dim = sim.params.world.dim
        self.near = p.near
        self.far_every = p.far_every
        self.focus = np.asarray(p.focus, dtype=np.float64) if p.focus else world_centre(sim.params.world)
        self.direction = _unit_axis(p.view_direction, self.dim) if p.view_direction else None
        self.fov_deg = p.fov_deg
        n = sim.state.n
        self.acc = np.zeros((n, 3))
        self.aux = np.zeros((n, AUX_COLUMNS))
        self.kept = np.zeros(n, dtype=bool)
        self.active = np.zeros(n, dtype=bool)
        self.refreshed = 0
        """Agents that refreshed their steering in the last step."""

    def set_view(self, position: Any, direction: Any = None, fov_deg: float | None = None) -> None:
        """Move the focus to ``position`` (world.dim numbers [units]); ``direction``: the view cone's
        axis (world.dim numbers, not all zero), None for no cone; ``fov_deg``: the cone's full angle
        (0 < fov <= 360 [deg]), None keeps the current one. Takes effect at the next step."""
        focus = _vector("position", position, self.dim)
        axis = None if direction is None else _unit_axis(direction, self.dim)
        if fov_deg is not None:
            if isinstance(fov_deg, bool) or not isinstance(fov_deg, (int, float, np.number)):
                raise ValueError(f"set_view: fov_deg must be a number > 0 and <= 360, got {fov_deg!r}")
            if not 0.0 < float(fov_deg) <= 360.0:
                raise ValueError(f"set_view: fov_deg must be > 0 and <= 360, got {fov_deg!r}")
            self.fov_deg = float(fov_deg)
        self.focus, self.direction = focus, axis

    def _fit_rows(self, n: int) -> None:
        """Grow the per-agent arrays to ``n`` rows (spawned agents have nothing kept)."""
        old = self.kept.shape[0]
        if n == old:
            return
        if n < old:  # a smaller state was put in place: nothing kept applies
            old = 0
        self.acc = np.concatenate([self.acc[:old], np.zeros((n - old, 3))])
        self.aux = np.concatenate([self.aux[:old], np.zeros((n - old, AUX_COLUMNS))])
        self.kept = np.concatenate([self.kept[:old], np.zeros(n - old, dtype=bool)])
        self.active = np.zeros(n, dtype=bool)

    def select(self, state: Any, step: int) -> np.ndarray:
        """The agents of ``state`` that refresh in step ``step`` (also left in :attr:`active`)."""
        self._fit_rows(state.n)
        cone = self.direction is not None
        axis = self.direction if cone else np.zeros(state.dim)
        cos_half = math.cos(math.radians(self.fov_deg) / 2.0)
        select_refresh(state.position, state.alive, state.ids, self.kept, np.int64(step), self.focus,
                       float(self.near) ** 2, cone, axis, cos_half, np.int64(self.far_every), self.active)  # fmt: skip
        self.refreshed = int(np.count_nonzero(self.active))
        return self.active

    def before_step(self, sim: Host) -> None:
        active = self.select(sim.state, sim.steps)
        sim.model.detail = DetailPlan(active, self.acc, self.aux, self.kept)

    def after_step(self, sim: Host) -> None:
        sim.model.detail = None  # the engine consumed it; cleared here too should a step not run

    def state_dict(self) -> dict[str, Any]:
        return {
            "focus": self.focus.copy(),
            "direction": np.zeros(0) if self.direction is None else self.direction.copy(),
            "fov_deg": float(self.fov_deg),
            "acc": self.acc.copy(),
            "aux": self.aux.copy(),
            "kept": self.kept.copy(),
        }

    def load_state_dict(self, data: dict[str, Any]) -> None:
        n = len(data["kept"])
        for key, shape in (("acc", (n, 3)), ("aux", (n, AUX_COLUMNS))):
            if np.shape(data[key]) != shape:
                raise ValueError(f"detail state: {key} must have shape {shape}, got {np.shape(data[key])}")
        self.focus = np.array(data["focus"], dtype=np.float64).reshape(self.dim)
        direction = np.array(data["direction"], dtype=np.float64).ravel()
        self.direction = direction.reshape(self.dim) if direction.size else None
        self.fov_deg = float(data["fov_deg"])
        self.acc = np.array(data["acc"], dtype=np.float64)
        self.aux = np.array(data["aux"], dtype=np.float64)
        self.kept = np.array(data["kept"], dtype=bool)
        self.active = np.zeros(n, dtype=bool)

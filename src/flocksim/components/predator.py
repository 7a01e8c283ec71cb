"""Predators (SPEC 5.2; seed 003): a Simulation component.

Each step, before the birds move, every predator (re)chooses its target,
steers toward the target's predicted position with a limited turn rate and
moves; the birds' kernels then read the predators' new positions (through
``model.predators``) and flee. After the step a predator whose target is
within ``catch_radius`` catches it: the bird is removed (``alive = False``),
so the step in flight never sees a half-removed flock (SPEC 1.5).

Rules (parameters in ``params.predator``):

- a predator without a living target takes the nearest living bird;
- after a catch it takes the nearest living bird;
- after ``retarget_after`` seconds without a catch it switches to the nearest
  living bird (the clock restarts);
- aim: the target's position + its velocity x lead, lead = min(distance /
  predator speed, lead_max); speed: predator.speed x agents.max_speed;
  the heading turns toward the aim by at most max_turn_deg x dt per step;
- nothing is caught while ``min_remaining`` birds or fewer are alive;
  several predators catching in one step are handled in predator order.

Targets are stored as stable agent ids. Predators start at uniform random
positions in the region with random headings, drawn from the simulation's
generator when the component is created.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from flocksim.initial import initial_positions
from flocksim.kernels.rotation import rotate
from flocksim.space import displacement_array, wrap_array

if TYPE_CHECKING:
    from flocksim.simulation import Simulation

NO_TARGET = -1


def turn_toward(velocity: np.ndarray, desired: np.ndarray, max_angle: float) -> np.ndarray:
    """``velocity`` turned toward ``desired`` by at most ``max_angle`` [rad], same length.

    2D or 3D vectors; a zero ``desired`` (or zero velocity) leaves it unchanged.
    Turning happens in the plane of the two vectors; exactly opposite vectors
    turn about +z (2D) or about an axis perpendicular to the velocity (3D).
    """
    v = np.zeros(3)
    d = np.zeros(3)
    v[: len(velocity)] = velocity
    d[: len(desired)] = desired
    speed = float(np.linalg.norm(v))
    dn = float(np.linalg.norm(d))
    if speed == 0.0 or dn == 0.0:
        return np.array(velocity, dtype=float)
    h = v / speed
    u = d / dn
    axis = np.cross(h, u)
    sin = float(np.linalg.norm(axis))
    cos = float(np.dot(h, u))
    angle = math.atan2(sin, cos)
    if sin == 0.0:
        if cos > 0.0:
            return np.array(velocity, dtype=float)
        helper = np.array([0.0, 0.0, 1.0]) if len(velocity) == 2 or abs(h[2]) < 0.9 else np.array([1.0, 0.0, 0.0])
        axis = np.cross(helper, h) if len(velocity) == 3 else helper
        sin = float(np.linalg.norm(axis))
    axis = axis / sin * min(angle, max_angle)
    out = rotate(v[0], v[1], v[2], axis[0], axis[1], axis[2])
    return np.array(out[: len(velocity)], dtype=float)


class Predators:
    """One or more predators chasing the flock. Counters: :attr:`caught`, :meth:`remaining`."""

    name = "predator"

    def __init__(self, sim: Simulation):
        p = sim.params.predator
        self.params = p
        self.dim = sim.params.world.dim
        self.space = sim.model.space
        count = p.count
        self.speed = p.speed * sim.params.agents.max_speed
        self.position = initial_positions(sim.params.world, count, 1.0, sim.rng)
        heading = sim.rng.standard_normal((count, self.dim))
        heading /= np.maximum(np.linalg.norm(heading, axis=1, keepdims=True), 1e-300)
        self.velocity = heading * self.speed
        self.target = np.full(count, NO_TARGET, dtype=np.int64)
        self.chase_steps = np.zeros(count, dtype=np.int64)
        self.caught = 0
        self.retarget_steps = max(1, math.ceil(p.retarget_after / sim.dt - 1e-9))
        self._publish(sim)

    # --------------------------------------------------------------- protocol

    def before_step(self, sim: Simulation) -> None:
        state = sim.state
        max_angle = math.radians(self.params.max_turn_deg) * sim.dt
        for k in range(len(self.position)):
            row = self._target_row(state, k)
            if row < 0 or self.chase_steps[k] >= self.retarget_steps:
                row = self._retarget(state, k)
            if row >= 0:
                aim = self._aim(state, k, row)
                self.velocity[k] = turn_toward(self.velocity[k], aim, max_angle)
        self.position = wrap_array(self.position + self.velocity * sim.dt, self.space)
        self.chase_steps += 1
        self._publish(sim)

    def after_step(self, sim: Simulation) -> None:
        state = sim.state
        for k in range(len(self.position)):
            row = self._target_row(state, k)
            if row < 0:
                continue
            gap = displacement_array(self.position[k], state.position[row], self.space)
            if float(np.sqrt(np.sum(gap * gap))) <= self.params.catch_radius and self.remaining(sim) > (
                self.params.min_remaining
            ):
                state.alive[row] = False
                self.caught += 1
                self._retarget(state, k)

    def state_dict(self) -> dict[str, Any]:
        return {
            "position": self.position.copy(),
            "velocity": self.velocity.copy(),
            "target": self.target.copy(),
            "chase_steps": self.chase_steps.copy(),
            "caught": int(self.caught),
        }

    def load_state_dict(self, data: dict[str, Any]) -> None:
        shape = self.position.shape
        for key in ("position", "velocity"):
            if np.shape(data[key]) != shape:
                raise ValueError(f"predator state: {key} must have shape {shape}, got {np.shape(data[key])}")
        self.position = np.array(data["position"], dtype=np.float64)
        self.velocity = np.array(data["velocity"], dtype=np.float64)
        self.target = np.array(data["target"], dtype=np.int64).reshape(shape[0])
        self.chase_steps = np.array(data["chase_steps"], dtype=np.int64).reshape(shape[0])
        self.caught = int(data["caught"])

    # --------------------------------------------------------------- helpers

    @staticmethod
    def remaining(sim: Simulation) -> int:
        """Birds still alive."""
        return sim.state.n_alive

    def positions3(self) -> np.ndarray:
        """Predator positions as (P, 3), z = 0 in 2D (the layout the kernels read)."""
        out = np.zeros((len(self.position), 3))
        out[:, : self.dim] = self.position
        return out

    def _publish(self, sim: Simulation) -> None:
        sim.model.predators = self.positions3()

    def _target_row(self, state, k: int) -> int:
        """Row of predator k's target if it is alive, else -1."""
        if self.target[k] == NO_TARGET:
            return -1
        rows = np.flatnonzero(state.ids == self.target[k])
        if len(rows) == 0 or not state.alive[rows[0]]:
            return -1
        return int(rows[0])

    def _retarget(self, state, k: int) -> int:
        """Predator k takes the nearest living bird (lowest row on a tie); its clock restarts."""
        self.chase_steps[k] = 0
        alive = np.flatnonzero(state.alive)
        if len(alive) == 0:
            self.target[k] = NO_TARGET
            return -1
        gap = displacement_array(self.position[k], state.position[alive], self.space)
        row = int(alive[np.argmin(np.einsum("ij,ij->i", gap, gap))])
        self.target[k] = state.ids[row]
        return row

    def _aim(self, state, k: int, row: int) -> np.ndarray:
        """Direction from predator k to its target's predicted position."""
        gap = displacement_array(self.position[k], state.position[row], self.space)
        lead = min(float(np.linalg.norm(gap)) / self.speed, self.params.lead_max)
        return gap + state.velocity[row] * lead

"""Predators (docs/design.md §5.2, docs/starlings.md): a Simulation component.

Each step, before the birds move, every predator (re)chooses its target,
steers toward the target's predicted position with a limited turn rate and
moves; the birds' kernels then read the predators' new positions (through
``model.predators``) and flee. After the step a predator whose target is
within ``catch_radius`` catches it: the bird is removed (``alive = False``),
so the step in flight never sees a half-removed flock.

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

Targets are stored as stable agent ids. Predators start outside the flock:
at distance R + ``detection`` from the living birds' centre, R being the
farthest living bird's distance from it, so every bird is at least
``detection`` away and none reacts at first; each predator heads at the
flock's centre. The side it starts on is the direction, from the region's
centre, of a uniform random point of the region drawn from the simulation's
generator when the component is created (with a random heading, unused). In a
periodic world (a flock there may fill the whole region) and with no living
bird, a predator starts at that random point with that heading, as every
predator did before: :meth:`Predators.start_anywhere` puts them there in any
world (the predator experiments do, so that their committed results re-make).
The draws are the same either way, so the rest of a run's random stream is too.
A component added to a running flock (the viewer switching the predator on) is
placed again around that flock (:meth:`Predators.flock_replaced`).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from flocksim.initial import initial_positions, region_centre
from flocksim.kernels.pursuit import distance_to, nearest_alive, pursue

if TYPE_CHECKING:
    from flocksim.host import Host

NO_TARGET = -1


class Predators:
    """One or more predators chasing the flock. Counters: :attr:`caught`, :meth:`remaining`."""

    name = "predator"

    def __init__(self, sim: Host):
        p = sim.params.predator
        self.params = p
        self.dim = sim.params.world.dim
        self.space = sim.model.space
        count = p.count
        self.speed = p.speed * sim.params.agents.max_speed
        self.position = initial_positions(sim.params.world, count, 1.0, sim.rng)
        heading = sim.rng.standard_normal((count, self.dim))
        length = np.sqrt(sum(heading[:, j] * heading[:, j] for j in range(self.dim)))  # no BLAS: same on every CPU
        self.velocity = heading / np.maximum(length, 1e-300)[:, None] * self.speed
        self._anywhere = (self.position.copy(), self.velocity.copy())  # the uniform random start
        self._sides = self.position - region_centre(sim.params.world)  # the directions the start outside takes
        self._periodic = sim.params.world.bounds.kind == "periodic"
        self._start_outside(sim.state)
        self.target = np.full(count, NO_TARGET, dtype=np.int64)
        self.chase_steps = np.zeros(count, dtype=np.int64)
        self.caught = 0
        self.retarget_steps = max(1, math.ceil(p.retarget_after / sim.dt - 1e-9))
        self._publish(sim)

    # --------------------------------------------------------------- protocol

    def before_step(self, sim: Host) -> None:
        state = sim.state
        max_angle = min(math.radians(self.params.max_turn_deg) * sim.dt, math.pi)
        rows = np.empty(len(self.position), dtype=np.int64)
        for k in range(len(self.position)):
            row = self._target_row(state, k)
            if row < 0 or self.chase_steps[k] >= self.retarget_steps:
                row = self._retarget(state, k)
            rows[k] = row
        pursue(self.position, self.velocity, rows, state.position, state.velocity, self.dim, self.space,
               self.speed, self.params.lead_max, math.cos(max_angle), math.sin(max_angle), sim.dt)  # fmt: skip
        self.chase_steps += 1
        self._publish(sim)

    def after_step(self, sim: Host) -> None:
        state = sim.state
        for k in range(len(self.position)):
            row = self._target_row(state, k)
            if row < 0:
                continue
            near = distance_to(self.position, k, state.position, row, self.dim, self.space) <= self.params.catch_radius
            if near and self.remaining(sim) > self.params.min_remaining:
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

    def flock_replaced(self, sim: Host) -> None:
        """The flock was replaced by another one (a running flock carried into a simulation that
        gained this component): start outside that flock, as :meth:`__init__` did outside its own."""
        self._start_outside(sim.state)
        self._publish(sim)

    def start_anywhere(self, sim: Host) -> None:
        """Put every predator back at the uniform random point of the region drawn when the
        component was created, with the random heading drawn then, possibly among the birds (the
        start of every predator before they started outside the flock). Call before the first step."""
        self.position, self.velocity = (a.copy() for a in self._anywhere)
        self._publish(sim)

    # --------------------------------------------------------------- helpers

    def _start_outside(self, state) -> None:
        """Move every predator to distance R + detection from the living birds' centre (R: the
        farthest living bird's distance from it) along its side, heading at the centre; nothing
        changes in a periodic world or without a living bird."""
        alive = state.position[state.alive]
        if self._periodic or len(alive) == 0:
            return
        centre = np.array([math.fsum(alive[:, j]) / len(alive) for j in range(self.dim)])  # exact: same on every CPU
        offset = alive - centre
        reach = float(np.sqrt(np.max(sum(offset[:, j] * offset[:, j] for j in range(self.dim)))))
        distance = reach + self.params.detection
        for k in range(len(self.position)):
            side = self._sides[k]
            length = math.sqrt(sum(float(side[j]) ** 2 for j in range(self.dim)))
            unit = side / length if length > 0.0 else np.eye(self.dim)[0]
            self.position[k] = centre + unit * distance
            self.velocity[k] = -unit * self.speed

    @staticmethod
    def remaining(sim: Host) -> int:
        """Birds still alive."""
        return sim.state.n_alive

    def positions3(self) -> np.ndarray:
        """Predator positions as (P, 3), z = 0 in 2D (the layout the kernels read)."""
        out = np.zeros((len(self.position), 3))
        out[:, : self.dim] = self.position
        return out

    def _publish(self, sim: Host) -> None:
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
        p = np.zeros(3)
        p[: self.dim] = self.position[k]
        row = nearest_alive(p[0], p[1], p[2], state.position, state.alive, self.dim, self.space)
        self.target[k] = NO_TARGET if row < 0 else state.ids[row]
        return int(row)

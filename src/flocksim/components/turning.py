"""Spontaneous collective turns (after Attanasi et al. 2014, 2015; docs/design.md §5.3): a Simulation component.

A turn ("wave") starts at random times: the waiting times are exponential with
mean ``turning.mean_interval``, drawn from the simulation's generator; a turn
that falls due while the previous wave still runs starts when it ends.

When a wave starts at time t0, from the living birds:

- mean heading H (normalised sum of unit headings) and centroid C;
- a lateral direction u perpendicular to H, on a side drawn at random: in 2D
  u = +-(H rotated by 90 degrees); in 3D +-(H x up) normalised, up = +y,
  i.e. a horizontal side (a vertical H falls back to +-(H x x)); with
  ``turning.side = "roost"`` and an active roost (``rules.roost.weight`` > 0)
  the side is instead the one with -u . (R - C) > 0, R the roost's centre
  (3D: horizontally), so that the inward turn heads the flock toward the
  roost (a centre straight ahead or behind keeps the drawn side); the draw is
  made either way, so the waiting times do not depend on the option;
- the edge bird: the largest (p - C) . u; the initiators: it and its
  ``initiators - 1`` nearest birds (lowest row on a tie);
- the turn axis n = H x (-u) normalised: rotating H about n turns it inward,
  toward -u (2D: n = +-z);
- start times: initiators t0; with ``propagation = "imposed"`` every other
  living bird t0 + |p - p_edge| / (signal_speed x max_speed); with
  ``"emergent"`` no other bird is turned (it follows through its rules, or not).

Bird i then turns about n at turn_rate_deg from its start time until it has
turned angle_deg: in the step [t, t + dt) it turns rate x |[t, t + dt) ^
[start_i, start_i + angle/rate)|, so the angles over the steps add up to
exactly angle_deg. The rotation is handed to the kernel (``model.turn``);
separation, alignment, cohesion and the walls keep acting. Birds that turn in
a step are marked in ``state.turning``. Birds born after a wave started do not
take part in it; dead birds stop. The start times are imposed, not emergent
(as in the reference starling simulator).

Centroid and distances use plain coordinates: meant for bounded (box,
ellipsoid, open) spaces, not for a flock wrapped across a periodic edge.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from flocksim.metrics.order import unit_headings

if TYPE_CHECKING:
    from flocksim.host import Host

UP_3D = np.array([0.0, 1.0, 0.0])
"""The vertical axis of 3D scenes (+y)."""


class SpontaneousTurning:
    """Imposed turning waves that start on the lateral edge of the flock."""

    name = "turning"

    def __init__(self, sim: Host):
        p = sim.params.turning
        self.params = p
        self.dim = sim.params.world.dim
        self.rate = math.radians(p.turn_rate_deg)  # [rad/s]
        self.duration = math.radians(p.angle_deg) / self.rate  # [s] one bird's turn
        self.signal_speed = p.signal_speed * sim.params.agents.max_speed
        self.next_event = float(sim.rng.exponential(p.mean_interval))
        self.start = np.full(sim.state.n, np.inf)  # per row; inf = not in the current wave
        self.axis = np.zeros(3)
        self.origin = np.zeros(3)  # the edge bird's position at the start
        self.wave_end = -np.inf  # time the last bird of the current wave finishes
        self.waves = 0
        self.initiators = np.zeros(0, dtype=np.int64)  # rows of the current wave's initiators

    # --------------------------------------------------------------- protocol

    def before_step(self, sim: Host) -> None:
        state = sim.state
        t = sim.time
        if len(self.start) < state.n:  # birds added since: not part of the current wave
            self.start = np.concatenate([self.start, np.full(state.n - len(self.start), np.inf)])
        if t >= self.next_event and t >= self.wave_end:
            self.start_wave(sim)
            self.next_event = max(self.next_event, t) + float(sim.rng.exponential(self.params.mean_interval))
        angle = self.step_angles(t, sim.dt) * state.alive
        state.turning = angle > 0.0
        if state.turning.any():
            sim.model.turn = angle[:, None] * self.axis[None, :]
        else:
            sim.model.turn = np.zeros((0, 3))

    def after_step(self, sim: Host) -> None:
        pass

    def state_dict(self) -> dict[str, Any]:
        return {
            "next_event": float(self.next_event),
            "start": self.start.copy(),
            "axis": self.axis.copy(),
            "origin": self.origin.copy(),
            "wave_end": float(self.wave_end),
            "waves": int(self.waves),
            "initiators": self.initiators.copy(),
        }

    def load_state_dict(self, data: dict[str, Any]) -> None:
        self.next_event = float(data["next_event"])
        self.start = np.array(data["start"], dtype=np.float64).reshape(-1)
        self.axis = np.array(data["axis"], dtype=np.float64).reshape(3)
        self.origin = np.array(data["origin"], dtype=np.float64).reshape(3)
        self.wave_end = float(data["wave_end"])
        self.waves = int(data["waves"])
        self.initiators = np.array(data["initiators"], dtype=np.int64).reshape(-1)

    # --------------------------------------------------------------- the wave

    def step_angles(self, t: float, dt: float) -> np.ndarray:
        """Angle [rad] each row turns in the step [t, t + dt)."""
        begin = np.maximum(self.start, t)
        end = np.minimum(self.start + self.duration, t + dt)
        with np.errstate(invalid="ignore"):  # inf - inf for rows outside the wave
            overlap = np.where(np.isfinite(self.start), np.maximum(end - begin, 0.0), 0.0)
        return self.rate * overlap

    def start_wave(self, sim: Host) -> None:
        """Start a wave now (also usable to force one, e.g. at the start of a recording)."""
        state = sim.state
        t = sim.time
        alive = np.flatnonzero(state.alive)
        self.start = np.full(state.n, np.inf)
        if len(alive) == 0:
            self.wave_end = t
            return
        p3 = np.zeros((len(alive), 3))
        p3[:, : self.dim] = state.position[alive]
        h3 = np.zeros((len(alive), 3))
        h3[:, : self.dim] = unit_headings(state.velocity[alive])
        heading = h3.sum(axis=0)
        norm = np.linalg.norm(heading)
        heading = heading / norm if norm > 0 else np.array([1.0, 0.0, 0.0])
        side = 1.0 if sim.rng.random() < 0.5 else -1.0
        centroid = p3.mean(axis=0)
        lateral = lateral_direction(heading, self.dim)
        side = self.roost_side(sim, centroid, lateral, side)
        u = side * lateral
        edge = int(np.argmax((p3 - centroid) @ u))
        d = np.linalg.norm(p3 - p3[edge], axis=1)
        k = min(self.params.initiators, len(alive))
        initiators = np.argsort(d, kind="stable")[:k]
        axis = np.cross(heading, -u)
        self.axis = axis / np.linalg.norm(axis)
        if self.dim == 2:
            self.axis[:2] = 0.0
            self.axis[2] = math.copysign(1.0, self.axis[2])
        self.origin = p3[edge].copy()
        imposed = self.params.propagation == "imposed"
        delay = d / self.signal_speed if imposed else np.full(len(alive), np.inf)  # emergent: only initiators
        delay[initiators] = 0.0
        self.start[alive] = t + delay
        self.initiators = alive[initiators]
        self.wave_end = t + float(delay[np.isfinite(delay)].max()) + self.duration
        self.waves += 1

    def roost_side(self, sim: Host, centroid: np.ndarray, lateral: np.ndarray, drawn: float) -> float:
        """The side (+-1 along ``lateral``) a turn starts on: ``drawn``, or with ``side = "roost"`` and an
        active roost the one whose inward turn (toward -side x lateral) heads toward the roost's centre."""
        if self.params.side != "roost":
            return drawn
        roost = sim.params.rules.roost
        if roost.weight <= 0.0:
            return drawn
        toward = np.zeros(3)
        toward[: self.dim] = np.asarray(roost.center, dtype=np.float64)[: self.dim] - centroid[: self.dim]
        if self.dim == 3:
            toward[1] = 0.0  # horizontally (up = +y)
        along = float(lateral @ toward)
        return drawn if along == 0.0 else (-1.0 if along > 0.0 else 1.0)


def lateral_direction(heading: np.ndarray, dim: int) -> np.ndarray:
    """A unit vector perpendicular to the unit ``heading`` (3 components): 2D its left
    (counterclockwise) normal; 3D the horizontal heading x up, or heading x x if the
    heading is vertical."""
    if dim == 2:
        return np.array([-heading[1], heading[0], 0.0]) / max(np.linalg.norm(heading[:2]), 1e-300)
    side = np.cross(heading, UP_3D)
    if np.linalg.norm(side) < 1e-6:
        side = np.cross(heading, np.array([1.0, 0.0, 0.0]))
    return side / np.linalg.norm(side)

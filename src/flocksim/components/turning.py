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
  ``"emergent"`` no other bird is turned (it follows through its rules, or not);
  with ``"copied"`` a living bird not yet in the wave starts at the step t when
  one of its ``copy_from`` nearest living birds within ``reach`` started at
  least ``latency`` before t, in an earlier step, and is still turning (the
  nearest-neighbour search of the escape waves, :func:`copied_from`), or with
  ``mutual`` also when it is one of such a bird's ``copy_from`` nearest within
  ``reach``: the start times, and the signal's speed, emerge from where the
  birds are.

Bird i then turns from its start time for angle_deg / turn_rate_deg seconds.
With ``turn_by = "axis"`` it turns about n at turn_rate_deg until it has
turned angle_deg: in the step [t, t + dt) it turns rate x |[t, t + dt) ^
[start_i, start_i + angle/rate)|, so the angles over the steps add up to
exactly angle_deg; the rotation is handed to the kernel (``model.turn``).
With ``turn_by = "bank"`` (banked flight) its urge to turn, ``state.spin[:, 2]``
(the lateral acceleration that sets its bank, as the escape waves use it), is
rate x the cruise speed toward the side of its own side vector h x up facing
the inward direction -u, taken when it joins the wave (imposed: at t0); it is
set to 0 when its turn ends. Either way separation, alignment, cohesion and the walls keep acting.
Birds that turn in a step are marked in ``state.turning``. With ``imposed``
and ``emergent``, birds born after a wave started do not take part in it;
dead birds stop. With ``imposed`` the start times are imposed, not emergent
(as in the reference starling simulator). The copy draws no random numbers.

Per finished wave, :attr:`SpontaneousTurning.spread` keeps a row (start time
[s], fraction of the living birds that turned, signal speed [units/s]): the
speed is 1 / the least-squares slope of the start delay against the distance
from the edge bird at t0, over the birds other than the initiators (NaN when
fewer than two delays differ).

Centroid and distances use plain coordinates: meant for bounded (box,
ellipsoid, open) spaces, not for a flock wrapped across a periodic edge.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from flocksim.components.escape import copied_from, side_vectors
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
        self.began = -np.inf  # start time t0 of the current wave [s]
        self.distance = np.full(sim.state.n, np.inf)  # per row: distance from the edge bird at t0 (inf: not alive then)
        self.inward = np.zeros(3)  # -u, the direction the wave turns toward
        self.bank_side = np.zeros(sim.state.n)  # turn_by = bank: +-1, the side of h x up each bird banks to
        self.spread = np.zeros((0, 3))  # per finished wave: t0 [s], fraction turned, signal speed [units/s]
        self.bank = p.turn_by == "bank"
        if self.bank:
            if not getattr(getattr(sim.model, "coefficients", None), "banked", False):
                raise ValueError("turning.turn_by = 'bank': the model has no banked flight")
            self.urge = self.rate * sim.params.rules.flight.cruise_speed  # [units/s^2] lateral acceleration

    # --------------------------------------------------------------- protocol

    def before_step(self, sim: Host) -> None:
        state = sim.state
        t = sim.time
        if len(self.start) < state.n:  # birds added since: not part of the current wave
            extra = state.n - len(self.start)
            self.start = np.concatenate([self.start, np.full(extra, np.inf)])
            self.distance = np.concatenate([self.distance, np.full(extra, np.inf)])
            self.bank_side = np.concatenate([self.bank_side, np.zeros(extra)])
        was = self.turning_at(t - sim.dt) if self.bank else None
        if t >= self.next_event and t >= self.wave_end:
            self.start_wave(sim)
            self.next_event = max(self.next_event, t) + float(sim.rng.exponential(self.params.mean_interval))
        if self.params.propagation == "copied":
            self.copy(sim)
        if self.bank:
            self.steer_banks(sim, was)
            return
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
            "began": float(self.began),
            "distance": self.distance.copy(),
            "inward": self.inward.copy(),
            "bank_side": self.bank_side.copy(),
            "spread": self.spread.copy(),
        }

    def load_state_dict(self, data: dict[str, Any]) -> None:
        self.next_event = float(data["next_event"])
        self.start = np.array(data["start"], dtype=np.float64).reshape(-1)
        self.axis = np.array(data["axis"], dtype=np.float64).reshape(3)
        self.origin = np.array(data["origin"], dtype=np.float64).reshape(3)
        self.wave_end = float(data["wave_end"])
        self.waves = int(data["waves"])
        self.initiators = np.array(data["initiators"], dtype=np.int64).reshape(-1)
        # checkpoints written before the copied turns lack these: no wave's spread, no bank sides
        n = len(self.start)
        self.began = float(data.get("began", -np.inf))
        self.distance = np.array(data.get("distance", np.full(n, np.inf)), dtype=np.float64).reshape(-1)
        self.inward = np.array(data.get("inward", np.zeros(3)), dtype=np.float64).reshape(3)
        self.bank_side = np.array(data.get("bank_side", np.zeros(n)), dtype=np.float64).reshape(-1)
        self.spread = np.array(data.get("spread", np.zeros((0, 3))), dtype=np.float64).reshape(-1, 3)

    # --------------------------------------------------------------- the wave

    def turning_at(self, t: float) -> np.ndarray:
        """(N,) whether each row is in its turn at time t [s]."""
        return (self.start <= t) & (t < self.start + self.duration)

    def copy(self, sim: Host) -> None:
        """``propagation = "copied"``: the birds that start the current wave now (module docstring)."""
        p = self.params
        t = sim.time
        earlier = self.start < t - 0.5 * sim.dt  # started in an earlier step
        waited = t - self.start >= p.latency - 1e-9 * max(sim.dt, p.latency)
        source = self.turning_at(t) & earlier & waited
        free = np.isinf(self.start) & sim.state.alive
        copiers, _ = copied_from(sim, source, free, p.copy_from, p.reach, p.mutual)
        if len(copiers) == 0:
            return
        self.start[copiers] = t
        self.set_bank_sides(sim, copiers)
        self.wave_end = max(self.wave_end, t + self.duration)

    def set_bank_sides(self, sim: Host, rows: np.ndarray) -> None:
        """The side (+-1 of h x up) toward which each of ``rows`` banks: the one facing the inward
        direction now (+1 when its side vector is perpendicular to it)."""
        if not self.bank or len(rows) == 0:
            return
        side = np.zeros((len(rows), 3))
        side[:, : self.dim] = side_vectors(sim.state.velocity[rows], self.dim)
        self.bank_side[rows] = np.where(side @ self.inward < 0.0, -1.0, 1.0)

    def steer_banks(self, sim: Host, was: np.ndarray) -> None:
        """``turn_by = "bank"``: each turning bird's urge to turn (module docstring); 0 where a turn ended."""
        state = sim.state
        now = self.turning_at(sim.time) & state.alive
        ended = was & ~now
        state.turning = now
        sim.model.turn = np.zeros((0, 3))
        if ended.any():
            state.spin[ended, 2] = 0.0
        if now.any():
            state.spin[now, 2] = self.urge * self.bank_side[now]

    def wave_spread(self) -> tuple[float, float]:
        """The current wave's (fraction of the birds living at its start that turned, signal speed
        [units/s]; NaN when fewer than two of the other birds' delays differ)."""
        known = np.isfinite(self.distance)
        if not known.any():
            return 0.0, math.nan
        started = np.isfinite(self.start) & known
        fraction = float(started.sum() / known.sum())
        others = started.copy()
        others[self.initiators] = False
        delay = self.start[others] - self.began
        d = self.distance[others]
        if len(delay) < 2 or np.ptp(delay) == 0.0:
            return fraction, math.nan
        slope = float(np.polyfit(d, delay, 1)[0])  # delay = a + d / speed
        return fraction, (1.0 / slope if slope > 0.0 else math.nan)

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
        if self.waves > 0:
            self.spread = np.vstack([self.spread, [self.began, *self.wave_spread()]])
        alive = np.flatnonzero(state.alive)
        self.start = np.full(state.n, np.inf)
        self.distance = np.full(state.n, np.inf)
        self.began = t
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
        self.inward = -u
        imposed = self.params.propagation == "imposed"
        delay = d / self.signal_speed if imposed else np.full(len(alive), np.inf)  # else only the initiators
        delay[initiators] = 0.0
        self.start[alive] = t + delay
        self.distance[alive] = d
        self.initiators = alive[initiators]
        self.set_bank_sides(sim, alive)
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

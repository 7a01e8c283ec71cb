"""The Flappy Boids game: a Simulation component (see :class:`flocksim.simulation.Component`).

Rules (parameters: ``params.game``, docs/parameters.md):

- at the start the flock is placed in a ball around (start_x, H/2, W/2) flying along +x and
  the shared seek target (``Simulation.set_target``) ``lead`` units ahead of it;
- before every step the target moves along +x at speed(d) = min(speed + speed_gain d / 1000,
  speed_max), d the distance it has flown [units], and across (y, z) at up to ``lateral_speed``
  as the pilot says: ``player`` (:meth:`FlappyGame.steer`, the viewer's keys, mouse or touch),
  ``gaps`` (scripted: toward the gap of the first wall the flock's rear has not passed) or
  ``straight`` (never turns); it stays ``GAP_EDGE`` units inside the box;
- the chunks around the target are kept (:class:`~flocksim.game.chunks.ChunkCache`) and the
  avoidance spheres of the target's chunk and its two neighbours are the engine's obstacle set,
  so the birds steer around rock with rules.avoid;
- after every step a bird is lost (removed; its stable id is never reused) when the field at its
  centre is below its body radius (it touches rock: a wall or the seabed) or it is more than
  ``max_lag`` behind the target. A bird left behind within ``avoid_range`` of rock was held back
  by the rock (the avoidance pressed it against a wall the target went through): it counts as
  lost on rock, not behind. The game is over when no bird is left: the target then stops;
- score: points earned as the target flies, ``POINTS_PER_UNIT`` per unit of distance with the
  whole flock alive, in proportion to the share of the starting flock still alive
  (score = floor(sum over steps of POINTS_PER_UNIT x step distance x alive / start count)): it
  rewards distance and survivors and never falls.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from flocksim.game.chunks import ChunkCache
from flocksim.game.course import GAP_EDGE, Course, floor_top
from flocksim.obstacles import max_body_radius

if TYPE_CHECKING:
    from flocksim.simulation import Simulation

PILOTS = ("gaps", "straight", "player")
START_BALL = 1.2
"""Start ball radius per cube root of the bird count [units]."""
REAR_QUANTILE = 50.0
"""The gaps pilot aims for the gap of the first wall that this percentile of the birds (by x) has not passed."""
POINTS_PER_UNIT = 10.0
"""Points per unit of distance flown with the whole starting flock alive."""
CAMERA_BEHIND = 32.0
"""The chase camera sits this far behind the target [units] (docs/viewer.md, "Flappy Boids") ..."""
CAMERA_BEHIND_SCHOOL = 16.0
"""... or this far behind the school's median (by x), whichever is farther back: the school in front of it [units]."""
CAMERA_UP = 9.0
"""The chase camera's height above the target [units]."""
CAMERA_CLEAR = 2.5
"""The chase camera keeps this much water between itself and the rock (and the seabed's top) [units]."""
CAMERA_TRIES = 24
LEASH_SOFT = 10.0
"""The target slows down over the last this many units before ``game.leash`` ahead of the school [units]."""


class FlappyGame:
    """Flappy Boids on ``sim`` (module docstring); needs ``params.game.enabled`` and the cpu engine."""

    name = "game"

    def __init__(self, sim: Simulation):
        params = sim.params
        if sim.engine.name != "cpu":
            raise ValueError(f"game: needs the cpu engine, got {sim.engine.name}")
        self.game = params.game
        self.dt = params.world.dt
        _, self.height, self.width = (float(s) for s in params.world.bounds.size)
        self.course = Course(self.game, self.height, self.width, params.seed)
        self.cache = ChunkCache(self.course)
        self.model = sim.model
        self.start_x = params.world.bounds.margin + 10.0
        r = params.rules.avoid
        self.model.coefficients = self.model.coefficients._replace(w_avoid=r.weight * r.strength)
        self._place_flock(sim)
        self.reset_counters()
        self._obstacle_chunk: int | None = None

    def reset_counters(self) -> None:
        """The target at its start, no bird lost, the pilot from the parameters."""
        self.target = np.array([self.start_x + self.game.lead, self.height / 2.0, self.width / 2.0])
        self.pilot = self.game.pilot
        self.steering = np.zeros(2)
        self.lost_rock = 0
        self.lost_behind = 0
        self.over = False
        self.points = 0.0
        self.start_count = 0
        self.autopilot = False  # a scripted pilot flew part of this game (the page keeps no best score then)

    def _place_flock(self, sim: Simulation) -> None:
        state = sim.state
        n = state.n
        centre = np.array([self.start_x, self.height / 2.0, self.width / 2.0])
        radius = START_BALL * max(n, 1) ** (1.0 / 3.0)
        direction = sim.rng.normal(size=(n, 3))
        direction /= np.maximum(np.linalg.norm(direction, axis=1, keepdims=True), 1e-12)
        state.position[:] = centre + direction * radius * sim.rng.random((n, 1)) ** (1.0 / 3.0)
        state.velocity[:] = [self.game.speed, 0.0, 0.0]
        sim.invalidate_queries()

    # ------------------------------------------------------------------ the rules

    @property
    def distance(self) -> float:
        """Distance the target has flown [units]."""
        return float(self.target[0] - self.start_x - self.game.lead)

    def speed(self) -> float:
        """Target speed along +x now [units/s]."""
        g = self.game
        return min(g.speed + g.speed_gain * self.distance / 1000.0, g.speed_max)

    def leash_factor(self, sim: Simulation) -> float:
        """Share of its speed the target flies at now: 1 while it is less than ``leash`` less
        ``LEASH_SOFT`` ahead of the school's median (by x), falling to 0 at ``leash`` ahead, so
        that a school the rock slows is waited for and only its stragglers fall behind [1]."""
        s = sim.state
        xs = s.position[s.alive, 0]
        if not len(xs):
            return 1.0
        ahead = float(self.target[0]) - float(np.median(xs))
        return min(max((self.game.leash - ahead) / LEASH_SOFT, 0.0), 1.0)

    def steer(self, y: float, z: float) -> None:
        """The player's steering: target velocity across the course as fractions of ``lateral_speed``
        (y up, z across; each in [-1, 1]). The pilot becomes ``player``."""
        for name, v in (("y", y), ("z", z)):
            if not (isinstance(v, (int, float)) and math.isfinite(v) and -1.0 <= v <= 1.0):
                raise ValueError(f"steer.{name}: allowed: a number from -1 to 1; got {v!r}")
        self.steering = np.array([float(y), float(z)])
        self.pilot = "player"

    def pilot_direction(self, sim: Simulation) -> np.ndarray:
        """Lateral (y, z) velocity of the target as fractions of ``lateral_speed`` (length <= 1)."""
        if self.pilot == "player":
            d = self.steering.copy()
        elif self.pilot == "straight":
            return np.zeros(2)
        else:
            s = sim.state
            xs = s.position[s.alive, 0]
            rear = float(np.percentile(xs, REAR_QUANTILE)) if len(xs) else float(self.target[0])
            g = self.game
            clear = g.wall_thickness / 2.0 + g.noise_amplitude + 2.0
            k = max(math.ceil((rear - clear - g.first_wall) / g.wall_spacing), 0)
            cy, cz, _ = self.course.gap(k)
            d = np.array([cy, cz]) - self.target[1:]
            d /= max(float(np.linalg.norm(d)), 2.0)
        length = float(np.linalg.norm(d))
        return d / length if length > 1.0 else d

    def before_step(self, sim: Simulation) -> None:
        if not self.over:
            alive = int(sim.state.n_alive)
            self.start_count = max(self.start_count, alive)
            self.autopilot |= self.pilot != "player"
            step = self.speed() * self.dt * self.leash_factor(sim)
            self.points += POINTS_PER_UNIT * step * alive / max(self.start_count, 1)
            self.target[0] += step
            self.target[1:] += self.pilot_direction(sim) * self.game.lateral_speed * self.dt
            self.target[1] = min(max(self.target[1], GAP_EDGE), self.height - GAP_EDGE)
            self.target[2] = min(max(self.target[2], GAP_EDGE), self.width - GAP_EDGE)
        sim.set_target(None, self.target)
        self.refresh_obstacles(sim)

    def refresh_obstacles(self, sim: Simulation) -> None:
        """Keep the chunks around the target and hand the engine the spheres near it."""
        x = float(self.target[0])
        changed = self.cache.update(x)
        k = int(self.course.chunk_of(x))
        if changed or k != self._obstacle_chunk:
            s = sim.state
            self.model.game_obstacles = self.cache.obstacle_set(x, max_body_radius(s.radius, s.alive))
            self._obstacle_chunk = k

    def after_step(self, sim: Simulation) -> None:
        s = sim.state
        rows = np.flatnonzero(s.alive)
        if len(rows) == 0:
            self.over = True
            return
        position = s.position[rows]
        field = self.course.field(position)
        touching = field < s.radius[rows]
        late = self.target[0] - position[:, 0] > self.game.max_lag
        hit = touching | (late & (field < self.game.avoid_range))  # touching, or held back by rock
        behind = late & ~hit
        lost = hit | behind
        if lost.any():
            sim.remove_agents(s.ids[rows[lost]])
        self.lost_rock += int(hit.sum())
        self.lost_behind += int(behind.sum())
        if lost.all():
            self.over = True

    def camera(self, sim: Simulation) -> list[float]:
        """Where the page's chase camera sits [units]: ``CAMERA_BEHIND`` behind the target (farther
        back while the school's median is less than ``CAMERA_BEHIND_SCHOOL`` ahead of it) and
        ``CAMERA_UP`` above it, inside the box sideways; never below the seabed's top plus
        ``CAMERA_CLEAR`` nor within ``CAMERA_CLEAR`` of rock: when that spot is in or near rock, the
        first clear one of the points raised above it and slid toward the target."""
        s = sim.state
        xs = s.position[s.alive, 0]
        tx, ty, tz = (float(v) for v in self.target)
        x = tx - CAMERA_BEHIND
        if len(xs):
            x = min(x, float(np.median(xs)) - CAMERA_BEHIND_SCHOOL)
        low = floor_top(self.game) + CAMERA_CLEAR
        y = max(ty + CAMERA_UP, low)
        z = min(max(tz, 0.0), self.width)
        base = np.array([x, y, z])
        toward = np.array([tx - x, 0.0, 0.0])
        # candidates: raised by up to 3 CAMERA_UP, slid up to most of the way to the target
        t = np.linspace(0.0, 1.0, CAMERA_TRIES)
        candidates = [base[None, :] + np.outer(t, [0.0, 3.0 * CAMERA_UP, 0.0])]
        candidates.append(base[None, :] + np.outer(t * 0.8, toward))
        points = np.concatenate(candidates)
        points[:, 1] = np.clip(points[:, 1], low, max(self.height, low))
        # a cheap bound first (no noise to sample): the field is at least this
        clear = np.flatnonzero(self.course.field_lower_bound(points) >= CAMERA_CLEAR)
        if len(clear):
            return [float(v) for v in points[clear[0]]]
        field = self.course.field(points)
        clear = np.flatnonzero(field >= CAMERA_CLEAR)
        best = int(clear[0]) if len(clear) else int(np.argmax(field))
        return [float(v) for v in points[best]]

    # ------------------------------------------------------------------ reporting

    def status(self, sim: Simulation) -> dict[str, Any]:
        """Score and counters (docs/protocol.md, the ``game`` message)."""
        alive = int(sim.state.n_alive)
        return {
            "distance": self.distance,
            "score": math.floor(self.points),
            "alive": alive,
            "lost": self.lost_rock + self.lost_behind,
            "lost_rock": self.lost_rock,
            "lost_behind": self.lost_behind,
            "game_over": self.over,
            "speed": self.speed(),
            "pilot": self.pilot,
            "target": [float(v) for v in self.target],
            "chunks": sorted(self.cache.chunks),
            "autopilot": self.autopilot,
            "camera": self.camera(sim),
        }

    def state_dict(self) -> dict[str, Any]:
        return {
            "target": self.target.copy(),
            "steering": self.steering.copy(),
            "pilot": self.pilot,
            "lost_rock": self.lost_rock,
            "lost_behind": self.lost_behind,
            "over": int(self.over),
            "points": self.points,
            "start_count": self.start_count,
            "autopilot": int(self.autopilot),
        }

    def load_state_dict(self, data: dict[str, Any]) -> None:
        target = np.asarray(data["target"], dtype=np.float64).reshape(3)
        steering = np.asarray(data["steering"], dtype=np.float64).reshape(2)
        if str(data["pilot"]) not in PILOTS:
            raise ValueError(f"game.pilot: allowed: {', '.join(PILOTS)}; got {data['pilot']!r}")
        self.target, self.steering, self.pilot = target.copy(), steering.copy(), str(data["pilot"])
        self.lost_rock, self.lost_behind = int(data["lost_rock"]), int(data["lost_behind"])
        self.over = bool(int(data["over"]))
        # checkpoints from before the score was earned per step: the score starts from there at 0
        self.points = float(data.get("points", 0.0))
        self.start_count = int(data.get("start_count", 0))
        self.autopilot = bool(int(data.get("autopilot", 1)))  # older checkpoints: not known to be the player's
        self._obstacle_chunk = None


def game_of(sim: Simulation) -> FlappyGame | None:
    """The game component of ``sim``, None when it plays none."""
    return next((c for c in sim.components if isinstance(c, FlappyGame)), None)


def summary_text(sim: Simulation) -> str:
    """``; game: ...`` for the one-line summary of ``flocksim run`` ("" when ``sim`` plays no game)."""
    game = game_of(sim)
    if game is None:
        return ""
    st = game.status(sim)
    return (
        f"; game: distance {st['distance']:.0f}, score {st['score']}, {st['alive']} birds kept, {st['lost']} lost "
        f"({st['lost_rock']} on rock, {st['lost_behind']} left behind){', game over' if st['game_over'] else ''}"
    )

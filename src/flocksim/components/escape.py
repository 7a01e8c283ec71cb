"""Agitation waves: an escape manoeuvre that banked birds copy from their nearest neighbours
(``params.escape``; Hemelrijk, van Zuidam & Hildenbrandt 2015, Behav. Ecol. Sociobiol. 69:755).

Before every step:

- a bird that is free (not manoeuvring, and past its ``refractory`` time since the end of its
  last manoeuvre) and closer than ``detection`` to a predator starts a zig-zag, its first half
  toward the side away from the nearest predator;
- a free bird starts when one of its ``copy_from`` nearest living birds within ``reach`` started
  at least ``latency`` ago and is still manoeuvring, on that neighbour's first side (the nearest
  such neighbour's, if several); copies within one step see only starts of earlier steps, so the
  wave never outruns one hop per ``latency``;
- every manoeuvring bird's urge to turn (``state.spin[:, 2]``, the lateral acceleration that sets
  its bank) is ``strength`` x its side, which flips every half ``period``; when its manoeuvre
  ends the urge is set to 0 (its own urge, if it has one, starts afresh).

Sides are a bird's own: +1 is its side vector h x up (up = +y; 2D: h turned by -90 degrees), as in
the banked flight kernel. The search uses SciPy's k-d tree (periodic worlds: across the edges), only
while some bird manoeuvres and only for the free birds within ``reach`` of a bird they could copy;
nothing here draws random numbers, so a run's generator is untouched.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from flocksim.space import displacement_array, tree_points

if TYPE_CHECKING:
    from flocksim.host import Host

NEVER = -np.inf
"""The start time of a bird that has never manoeuvred."""


def side_vectors(velocity: np.ndarray, dim: int) -> np.ndarray:
    """(N, dim) unit side vectors h x up of birds with velocity v (up = +y; 2D: h turned by -90
    degrees, (vy, -vx)/|v|); a bird at rest, or flying straight up or down in 3D, gets +z (3D) or
    zero (2D). Element-wise arithmetic only, so every CPU rounds alike."""
    if dim == 2:
        speed = np.sqrt(velocity[:, 0] * velocity[:, 0] + velocity[:, 1] * velocity[:, 1])
        safe = np.where(speed > 0.0, speed, 1.0)
        return np.stack([velocity[:, 1] / safe, -velocity[:, 0] / safe], axis=1) * (speed > 0.0)[:, None]
    sx = -velocity[:, 2]
    sz = velocity[:, 0].copy()
    n = np.sqrt(sx * sx + sz * sz)
    speed = np.sqrt(n * n + velocity[:, 1] * velocity[:, 1])
    level = (n > 1e-9 * speed) & (speed > 0.0)
    safe = np.where(level, n, 1.0)
    side = np.zeros_like(velocity)
    side[:, 0] = np.where(level, sx / safe, 0.0)
    side[:, 2] = np.where(level, sz / safe, 1.0)
    return side


def _search_space(position: np.ndarray, space: Any) -> tuple[np.ndarray, Any]:
    """Positions as SciPy's k-d tree takes them and a tree builder (periodic worlds: across the
    edges; :func:`flocksim.space.tree_points`)."""
    from scipy.spatial import cKDTree

    points, box = tree_points(position, space)
    return points, lambda some: cKDTree(some, boxsize=box)


def copied_from(
    sim: Host, source: np.ndarray, free: np.ndarray, copy_from: int, reach: float, mutual: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """Which ``free`` birds copy a ``source`` bird (both (N,) masks over rows; only living birds take
    part): a free bird copies when one of its ``copy_from`` nearest living birds within ``reach`` is a
    source, the nearest such one; with ``mutual`` also when it is one of a source's ``copy_from``
    nearest within ``reach`` (then the first such source by row). Returns the copying rows and, for
    each, the row it copies. SciPy's k-d tree (periodic worlds: across the edges), searched only for
    the free birds within ``reach`` of a source (and, with ``mutual``, for the sources); no random
    numbers."""
    none = np.zeros(0, dtype=np.int64)
    alive = np.flatnonzero(sim.state.alive)
    if copy_from == 0 or len(alive) < 2 or not source[alive].any() or not free[alive].any():
        return none, none
    position, tree_of = _search_space(sim.state.position[alive], sim.model.space)
    k = min(copy_from, len(alive) - 1)
    missing = len(alive)  # SciPy's index for "none within reach"
    tree = tree_of(position)

    def nearest(rows: np.ndarray) -> np.ndarray:
        """(len(rows), k) indices into ``alive`` of each row's k nearest within reach, nearest first,
        ``missing`` where there are fewer."""
        _, found = tree.query(position[rows], k=k + 1, distance_upper_bound=reach)
        found = np.asarray(found).reshape(len(rows), k + 1)
        found = np.where(found == rows[:, None], missing, found)  # the bird itself is no neighbour
        order = np.argsort(found == missing, axis=1, kind="stable")[:, :k]  # nearest first, misses last
        return np.take_along_axis(found, order, axis=1)

    # only a free bird within reach of a source can copy: search the others no further
    sources = np.flatnonzero(source[alive])
    watchers = np.flatnonzero(free[alive])
    gap, _ = tree_of(position[sources]).query(position[watchers], k=1, distance_upper_bound=reach)
    watchers = watchers[np.isfinite(gap)]
    copiers, models = none, none
    if len(watchers):
        near = nearest(watchers)
        valid = near < missing
        neighbour = alive[np.where(valid, near, 0)]
        copying = valid & source[neighbour]  # (watchers, k): nearest first
        starts = copying.any(axis=1)
        copiers = alive[watchers[starts]]
        models = neighbour[starts, np.argmax(copying[starts], axis=1)]
    if mutual:
        near = nearest(sources)
        valid = near < missing
        target = alive[np.where(valid, near, 0)]
        seen = valid & free[target]  # (sources, k): free birds a source has among its nearest
        rows, cols = np.nonzero(seen)  # source-major: the first occurrence is the first source by row
        target = target[rows, cols]
        fresh = ~np.isin(target, copiers)
        target, rows = target[fresh], rows[fresh]
        target, first = np.unique(target, return_index=True)
        copiers = np.concatenate([copiers, target])
        models = np.concatenate([models, alive[sources[rows[first]]]])
    return copiers, models


class EscapeWaves:
    """The escape manoeuvres of a banked flock (module docstring). ``start`` (N,) holds each bird's
    latest start time [s] (-inf: never), ``first_side`` (N,) its side (+1 or -1) at that start;
    :attr:`started` counts the starts so far."""

    name = "escape"

    def __init__(self, sim: Host):
        if not hasattr(sim.model, "wander"):
            raise ValueError(f"escape: model {sim.model.name!r} has no banked flight")
        self.params = sim.params.escape
        self.dim = sim.params.world.dim
        n = sim.state.n
        self.start = np.full(n, NEVER)
        self.first_side = np.ones(n)
        self.started = 0

    # ------------------------------------------------------------------ state of each bird
    def manoeuvring(self, t: float) -> np.ndarray:
        """(N,) whether each bird is in a manoeuvre at time t [s]."""
        return t - self.start < self.params.duration

    def free(self, t: float, alive: np.ndarray) -> np.ndarray:
        """(N,) living birds that may start a manoeuvre at time t [s]."""
        p = self.params
        return alive & (t - self.start >= p.duration + p.refractory)

    def _grow(self, n: int) -> None:
        if n > len(self.start):  # spawned birds (the state grew): never manoeuvred
            extra = n - len(self.start)
            self.start = np.concatenate([self.start, np.full(extra, NEVER)])
            self.first_side = np.concatenate([self.first_side, np.ones(extra)])

    # ------------------------------------------------------------------ starts
    def begin(self, birds: np.ndarray, sides: np.ndarray, t: float) -> None:
        """Start the manoeuvre of ``birds`` (indices) at time t [s] on ``sides`` (+1 or -1 each)."""
        self.start[birds] = t
        self.first_side[birds] = sides
        self.started += len(birds)

    def _see_predators(self, sim: Host, free: np.ndarray, t: float) -> None:
        predators = np.asarray(sim.model.predators, dtype=np.float64)[:, : self.dim]
        candidates = np.flatnonzero(free)
        if len(predators) == 0 or len(candidates) == 0 or self.params.detection <= 0.0:
            return
        position = sim.state.position[candidates]
        best = np.full(len(candidates), np.inf)
        away = np.zeros((len(candidates), self.dim))
        for q in predators:  # a few predators: one pass each, element-wise sums only
            d = displacement_array(q, position, sim.model.space)  # bird - predator (periodic: nearest image)
            d2 = np.sum(d * d, axis=1)
            nearer = d2 < best
            best = np.where(nearer, d2, best)
            away = np.where(nearer[:, None], d, away)
        seen = best < self.params.detection**2
        if not seen.any():
            return
        side = side_vectors(sim.state.velocity[candidates[seen]], self.dim)
        toward_away = np.sum(side * away[seen], axis=1)
        self.begin(candidates[seen], np.where(toward_away >= 0.0, 1.0, -1.0), t)

    def _copy(self, sim: Host, free: np.ndarray, t: float) -> None:
        p = self.params
        earlier = self.start < t - 0.5 * sim.dt  # started in an earlier step
        waited = t - self.start >= p.latency - 1e-9 * max(sim.dt, p.latency)
        source = self.manoeuvring(t) & earlier & waited
        copiers, models = copied_from(sim, source, free, p.copy_from, p.reach)
        if len(copiers):
            self.begin(copiers, self.first_side[models], t)

    # ------------------------------------------------------------------ the step
    def before_step(self, sim: Host) -> None:
        t = sim.time
        state = sim.state
        self._grow(state.n)
        was = self.manoeuvring(t - sim.dt)
        if len(sim.model.predators) == 0 and not (was.any() or self.manoeuvring(t).any()):
            return  # nothing to start, copy or steer: the state untouched (the GPU engine copies nothing)
        free = self.free(t, state.alive)
        self._see_predators(sim, free, t)
        self._copy(sim, self.free(t, state.alive) & free, t)
        now = self.manoeuvring(t) & state.alive
        ended = was & ~now
        if not (now.any() or ended.any()):
            return
        spin = state.spin
        spin[ended, 2] = 0.0
        half = np.floor((t - self.start[now]) / (0.5 * self.params.period))
        flip = np.where(np.mod(half, 2.0) == 0.0, 1.0, -1.0)
        spin[now, 2] = self.params.strength * self.first_side[now] * flip

    def after_step(self, sim: Host) -> None:
        return None

    def state_dict(self) -> dict[str, Any]:
        return {"start": self.start.copy(), "first_side": self.first_side.copy(), "started": self.started}

    def load_state_dict(self, data: dict[str, Any]) -> None:
        self.start = np.asarray(data["start"], dtype=np.float64).copy()
        self.first_side = np.asarray(data["first_side"], dtype=np.float64).copy()
        self.started = int(data["started"])

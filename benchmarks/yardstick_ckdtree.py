"""NumPy + scipy cKDTree yardstick: the abm-flocking step as a Python user would write it.

The same synchronous step as ``flocksim.models.abm_flocking`` (the cross-framework
Flocking benchmark of Agents.jl / Mesa / NetLogo / MASON), vectorised with NumPy, the
neighbour search done by ``scipy.spatial.cKDTree`` with a periodic box
(``boxsize=L``). No Python loop over birds. Every bird reads step t:

- neighbours j != i with minimum-image distance d <= vision (inclusive); in topological
  mode the k nearest instead (regardless of distance);
- cohere = sum(p_j - p_i); separate = -sum(p_j - p_i) over neighbours with d < separation
  (strict); match = sum(h_j) of unit headings; each multiplied by its factor and divided by
  max(count, 1);
- h <- normalize(h + cohere + separate + match), the old heading kept if that sum is zero;
- p <- wrap(p + speed * h) into [0, L); the reported velocity is speed * h / dt.

Metric mode takes the pairs from ``cKDTree.query_pairs`` with a radius a hair above
``vision`` and then keeps d^2 <= vision^2 computed with flocksim's minimum-image formula
(d if |d| < L/2, else d - L floor(d / L + 1/2)), so the neighbour sets are exactly flocksim's; the sums are
accumulated with ``np.bincount`` in a different order, so results agree to rounding
(about 1e-12 after a few steps), not bitwise.

Usable from other scripts::

    from yardstick_ckdtree import Yardstick, state_from_simulation
    pos, heading = state_from_simulation(sim)      # the same start as a flocksim Simulation
    ys = Yardstick.from_params(sim.params)         # or Yardstick(side=L, dim=2, ...)
    pos, heading = ys.step(pos, heading)

Run alone (``python benchmarks/yardstick_ckdtree.py --n 100000``) it times the yardstick
on its own and prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.spatial import cKDTree

RADIUS_SLACK = 1e-9
"""Relative slack on the tree's search radius; the exact d^2 <= vision^2 test follows."""


def min_image(d: np.ndarray, side: float) -> np.ndarray:
    """Shortest periodic image of coordinate differences (flocksim.space.min_image)."""
    return np.where(np.abs(d) < 0.5 * side, d, d - side * np.floor(d / side + 0.5))


def wrap(x: np.ndarray, side: float) -> np.ndarray:
    """Map coordinates into [0, side) (flocksim.space.wrap_coordinate, vectorised)."""
    y = x - side * np.floor(x / side)
    y += np.where(y < 0.0, side, 0.0)
    y[y >= side] = 0.0
    return y


def squared_norms(d: np.ndarray) -> np.ndarray:
    """dx*dx + dy*dy (+ dz*dz) per row, summed in flocksim's order."""
    d2 = d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1]
    if d.shape[1] == 3:
        d2 += d[:, 2] * d[:, 2]
    return d2


def normalize_rows(v: np.ndarray) -> np.ndarray:
    """Unit rows of v; zero rows stay zero."""
    norm = np.sqrt(squared_norms(v))
    out = np.zeros_like(v)
    nonzero = norm > 0.0
    out[nonzero] = v[nonzero] / norm[nonzero, None]
    return out


def state_from_simulation(sim: Any) -> tuple[np.ndarray, np.ndarray]:
    """(positions, unit headings) of a flocksim Simulation's current state, as fresh arrays."""
    state = sim.state
    if not state.alive.all():
        raise ValueError("yardstick: every bird must be alive (the benchmark never removes birds)")
    return state.position.astype(np.float64, copy=True), normalize_rows(state.velocity.astype(np.float64))


def make_state(params: Any, seed: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(positions, unit headings) of flocksim's seeded initial state for ``params``."""
    from flocksim.simulation import Simulation

    return state_from_simulation(Simulation(params, seed=seed))


@dataclass(frozen=True)
class Yardstick:
    """Parameters of one abm-flocking step in a periodic cube of side ``side``."""

    side: float
    dim: int = 2
    vision: float = 15.0
    separation: float = 1.0
    speed: float = 1.0
    cohere: float = 0.03
    separate: float = 0.015
    match: float = 0.05
    topological: bool = False
    k: int = 7

    @classmethod
    def from_params(cls, params: Any) -> Yardstick:
        """From flocksim's AbmFlockingParams (periodic world, equal sides)."""
        world, f = params.world, params.flocking
        if world.bounds.kind != "periodic" or len(set(world.bounds.size)) != 1:
            raise ValueError("yardstick: needs a periodic world with equal sides")
        return cls(
            side=float(world.bounds.size[0]),
            dim=world.dim,
            vision=f.vision,
            separation=f.separation,
            speed=f.speed,
            cohere=f.cohere_factor,
            separate=f.separate_factor,
            match=f.match_factor,
            topological=params.neighbors.mode == "topological",
            k=params.neighbors.k,
        )

    def pairs(self, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Directed neighbour pairs (i, j, d): j is a neighbour of i, d = p_j - p_i (minimum image)."""
        n, dim = pos.shape
        # rebuilt every step: the unbalanced, non-compact tree builds fastest (scipy docs)
        tree = cKDTree(pos, boxsize=self.side, balanced_tree=False, compact_nodes=False)
        if self.topological:
            k = min(self.k, n - 1)
            if k <= 0:
                return np.empty(0, np.intp), np.empty(0, np.intp), np.empty((0, dim))
            _, idx = tree.query(pos, k=k + 1)
            # drop each bird itself (normally column 0; a bird at an identical position may
            # come first instead, so mask by identity and keep the k others)
            rows = np.repeat(np.arange(n), k + 1).reshape(n, k + 1)
            others = idx != rows
            others[others.sum(axis=1) > k, -1] = False
            i, j = rows[others], idx[others]
            return i, j, min_image(pos[j] - pos[i], self.side)
        ij = tree.query_pairs(self.vision * (1.0 + RADIUS_SLACK), output_type="ndarray")
        i, j = ij[:, 0], ij[:, 1]
        d = min_image(pos[j] - pos[i], self.side)
        keep = squared_norms(d) <= self.vision * self.vision
        i, j, d = i[keep], j[keep], d[keep]
        return np.concatenate([i, j]), np.concatenate([j, i]), np.concatenate([d, -d])

    def step(self, pos: np.ndarray, heading: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """One synchronous step from (positions, unit headings); returns new arrays."""
        n, dim = pos.shape
        i, j, d = self.pairs(pos)
        close = squared_norms(d) < self.separation * self.separation
        count = np.bincount(i, minlength=n)
        inv = 1.0 / np.maximum(count, 1)
        new = np.empty_like(heading)
        for a in range(dim):
            cohere = np.bincount(i, weights=d[:, a], minlength=n)
            separate = -np.bincount(i[close], weights=d[close, a], minlength=n)
            match = np.bincount(i, weights=heading[j, a], minlength=n)
            new[:, a] = heading[:, a] + (cohere * self.cohere + separate * self.separate + match * self.match) * inv
        new = normalize_rows(new)
        zero = ~new.any(axis=1)
        new[zero] = heading[zero]
        return wrap(pos + self.speed * new, self.side), new

    def run(self, pos: np.ndarray, heading: np.ndarray, steps: int) -> tuple[np.ndarray, np.ndarray]:
        for _ in range(steps):
            pos, heading = self.step(pos, heading)
        return pos, heading


def time_steps(
    ys: Yardstick, pos: np.ndarray, heading: np.ndarray, steps: int
) -> tuple[list[float], np.ndarray, np.ndarray]:
    """Milliseconds of each of ``steps`` single steps, and the state after them."""
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        pos, heading = ys.step(pos, heading)
        times.append((time.perf_counter() - t0) * 1e3)
    return times, pos, heading


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=100_000, help="birds (default 100000)")
    parser.add_argument("--dim", type=int, choices=(2, 3), default=2)
    parser.add_argument("--neighbors", choices=("metric", "topological"), default="metric")
    parser.add_argument("--k", type=int, default=7)
    parser.add_argument("--steps", type=int, default=5, help="timed steps (default 5)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    from flocksim.bench import abm_workload

    params = abm_workload(args.dim, args.n, args.neighbors, args.k, args.seed)
    ys = Yardstick.from_params(params)
    pos, heading = make_state(params)
    i, _, _ = ys.pairs(pos)
    times, _, _ = time_steps(ys, pos, heading, args.steps)
    print(
        json.dumps(
            {
                "implementation": "numpy+scipy.cKDTree",
                "workload": "abm-flocking",
                "dim": args.dim,
                "n": args.n,
                "neighbors": args.neighbors,
                "side": ys.side,
                "steps": args.steps,
                "ms_per_step_median": statistics.median(times) if times else math.nan,
                "ms_per_step_min": min(times) if times else math.nan,
                "mean_neighbors": i.size / args.n if args.n else 0.0,
            }
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

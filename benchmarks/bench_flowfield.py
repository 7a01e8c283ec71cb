"""Flow-field recompute time on a 512 x 512 grid (docs/benchmarks.md, "Crowds"; target <= 50 ms).

A 512 x 512 occupancy grid (1 unit cells) holds ``--walls`` random wall rectangles (seeded);
the graph of free cells is built once (timed separately: it happens once per level). Then
the target moves to ``--moves`` random free cells and the field is recomputed for each:
scipy's Dijkstra over the 8-connected free cells plus the per-cell directions, i.e. what
``FlowField.update`` does when a target changes cell. Also timed: sampling the field
(bilinear) at 10 000 agent positions, which happens every step.

Usage: python benchmarks/bench_flowfield.py [--size 512] [--moves 20] [--walls 300]
Prints one JSON object (times in ms; recompute: median and max over the moves).
"""

from __future__ import annotations

import argparse
import json
import platform
import time

import numpy as np
import scipy

from flocksim import __version__
from flocksim.navigation import FlowField, OccupancyGrid, grid_graph, move_allowed


def level(size: int, walls: int, rng: np.random.Generator) -> np.ndarray:
    grid = np.zeros((size, size), dtype=bool)
    for _ in range(walls):
        r, c = rng.integers(0, size, 2)
        h, w = (rng.integers(1, 4), rng.integers(10, 60)) if rng.random() < 0.5 else (rng.integers(10, 60), 1)
        grid[r : r + h, c : c + w] = True
    return grid


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=512)
    parser.add_argument("--moves", type=int, default=20)
    parser.add_argument("--walls", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    walls = level(args.size, args.walls, rng)
    grid = OccupancyGrid(walls, 1.0, (0.0, 0.0))
    t = time.perf_counter()
    graph = grid_graph(walls)
    allowed = move_allowed(walls)
    build_ms = (time.perf_counter() - t) * 1e3
    field = FlowField(grid, graph, allowed)
    free_r, free_c = np.nonzero(~walls)
    times = []
    for k in rng.choice(len(free_r), args.moves, replace=False):
        target = np.array([free_c[k] + 0.5, free_r[k] + 0.5])
        t = time.perf_counter()
        assert field.update(target)
        times.append((time.perf_counter() - t) * 1e3)
    agents = rng.random((10_000, 2)) * args.size
    t = time.perf_counter()
    field.sample(agents, bilinear=True)
    sample_ms = (time.perf_counter() - t) * 1e3
    print(
        json.dumps(
            {
                "benchmark": "flowfield",
                "grid": [args.size, args.size],
                "wall_cells": int(walls.sum()),
                "graph_build_ms": round(build_ms, 2),
                "recompute_ms_median": round(float(np.median(times)), 2),
                "recompute_ms_max": round(float(np.max(times)), 2),
                "moves": args.moves,
                "sample_10000_agents_ms": round(sample_ms, 2),
                "flocksim": __version__,
                "scipy": scipy.__version__,
                "python": platform.python_version(),
                "machine": platform.machine(),
            }
        )
    )


if __name__ == "__main__":
    main()

"""How long the maximum-entropy estimate (``flocksim analyze --maxent``) takes on a field-sized flock.

    PYTHONPATH=src python benchmarks/bench_maxent.py --birds 5000 --frames 100 [--threads 2] [--search auto]

The flock: birds in a flat ellipsoid of proportions 1 : 2.8 : 5.6 at a nearest-neighbour distance of
about 1 m, flying along its length at 10 m/s, every bird jittering by 5 cm a frame (frames 0.04 s
apart), so each frame has its own neighbour graph; headings: the mean direction plus a Gaussian
field smoothed over the birds' 7 nearest neighbours (x = (I + 4 L)^-1 z), ordered (polarization about
0.97) and spatially correlated, as a real flock's. What is timed is
:func:`flocksim.inference.maxent.maxent_alignment` alone (the data are made first). One line per
stage on stderr; the result as one JSON line on stdout.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np
from scipy import sparse
from scipy.sparse.linalg import spsolve

from flocksim.inference.maxent import MAX_NC, SEARCHES, maxent_alignment, neighbor_table, sparse_laplacian


def flock(birds: int, frames: int, seed: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Positions [m] and velocities [m/s] of the module docstring's flock."""
    rng = np.random.default_rng(seed)
    axes = np.array([5.6, 1.0, 2.8])
    scale = (birds / (4.0 / 3.0 * np.pi * np.prod(axes))) ** (-1.0 / 3.0)  # about 1 bird per m^3
    points = rng.normal(size=(birds, 3))
    points *= (rng.random(birds) ** (1.0 / 3.0) / np.linalg.norm(points, axis=1))[:, None]
    start = points * axes * scale
    lap = sparse_laplacian(neighbor_table(start, 7), 7)
    smooth = sparse.identity(birds, format="csc") + 4.0 * lap.tocsc()
    positions, velocities = [], []
    for f in range(frames):
        field = np.stack([spsolve(smooth, rng.standard_normal(birds)) for _ in range(2)], axis=1)
        heading = np.column_stack([np.ones(birds), 1.5 * field])
        velocities.append(10.0 * heading / np.linalg.norm(heading, axis=1, keepdims=True))
        positions.append(start + np.array([0.4 * f, 0.0, 0.0]) + 0.05 * rng.standard_normal((birds, 3)))
    return positions, velocities


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--birds", type=int, default=5000)
    parser.add_argument("--frames", type=int, default=100)
    parser.add_argument("--threads", type=int, default=None, help="frames worked on at once (default: usable CPUs)")
    parser.add_argument("--search", choices=SEARCHES, default="auto")
    parser.add_argument("--max-nc", type=int, default=MAX_NC)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(f"making {args.frames} frames of {args.birds} birds", file=sys.stderr, flush=True)
    positions, velocities = flock(args.birds, args.frames, args.seed)
    polarization = float(np.mean([np.linalg.norm((v / 10.0).mean(axis=0)) for v in velocities]))
    print("estimating", file=sys.stderr, flush=True)
    wall, cpu = time.perf_counter(), time.process_time()
    estimate = maxent_alignment(positions, velocities, max_nc=args.max_nc, search=args.search, threads=args.threads)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(
        json.dumps(
            {
                "birds": args.birds,
                "frames": args.frames,
                "polarization": round(polarization, 3),
                "search": estimate.search,
                "tried": estimate.tried,
                "neighbors": estimate.neighbors,
                "coupling": round(estimate.coupling, 3),
                "threads": args.threads,
                "wall_s": round(wall, 2),
                "cpu_s": round(cpu, 2),
            }
        )
    )


if __name__ == "__main__":
    main()

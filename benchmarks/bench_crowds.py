"""Crowds benchmark (issue 5): the ``enemies`` preset scaled to many agents and obstacles.

``--n`` enemies (default 100 000) at the preset's density (side 120 x sqrt(n / 1000) m), the
preset's two kinds (mass 1 radius 0.3, mass 3 radius 0.5), ``--obstacles`` rocks (default
1 000, body radius 1..3 m, influence body + 2 m, uniform random, none within 14 m of the
player), all chasing the player at the centre with separation, alignment, obstacle avoidance
(look-ahead 0.5 s) and overlap resolution (1 pass). After ``--warmup`` untimed steps, ``--steps``
single steps are timed (median and best); then one more step is timed stage by stage: phase
one (neighbour search and steering sums: summed straight from the grid for a metric search on
the grid, else over a neighbour list), integration, overlap resolution.

``--preset crowd-maze`` times that preset instead, at its own size (2000 agents, a walled maze,
flow-field navigation, 2 overlap passes): ``--warmup`` untimed steps (the crowd leaves its start
area), then ``--steps`` single steps, each timed in wall time and in CPU time of the process
(``time.process_time``: on a busy machine it counts only the time this process ran); medians and
best, plus the same stage breakdown (with the targets component's share).

Usage: NUMBA_NUM_THREADS=2 python benchmarks/bench_crowds.py [--n 100000] [--obstacles 1000] [--steps 30]
       python benchmarks/bench_crowds.py --preset crowd-maze --threads 1 --warmup 200 --steps 300
Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import time

import numba
import numpy as np

from flocksim import Simulation, __version__, load_preset
from flocksim.config import validate
from flocksim.engines.cpu_overlap import resolve_overlaps
from flocksim.engines.cpu_reynolds import integrate_all, reynolds_accelerations
from flocksim.engines.cpu_reynolds_grid import GridSteering
from flocksim.neighbors import find_neighbors, metric_search_on_grid
from flocksim.neighbors.csr import UNLIMITED
from flocksim.simulation import Component


def scaled_params(n: int, obstacles: int, seed: int = 0):
    data = load_preset("enemies").model_dump(mode="json")
    side = 120.0 * math.sqrt(n / 1000)
    rng = np.random.default_rng(seed)
    centre = side / 2
    rocks = []
    while len(rocks) < obstacles:
        c = rng.uniform(3.0, side - 3.0, 2)
        if np.hypot(*(c - centre)) < 14.0:
            continue
        body = float(rng.uniform(1.0, 3.0))
        rocks.append({"center": c.tolist(), "body_radius": body, "influence_radius": body + 2.0})
    data["agents"]["n"] = n
    data["world"]["bounds"]["size"] = [side, side]
    data["rules"]["seek"]["target"] = [centre, centre]
    data["obstacles"]["circles"] = rocks
    return validate(data)


def stages(sim: Simulation) -> dict[str, float]:
    """One step, timed stage by stage [ms] (the same work as Simulation.step): phase one (the
    neighbour search and the steering sums: on the grid for a metric grid search, else the
    neighbour list then the sums over it), integration, overlap resolution."""
    model, s, dt = sim.model, sim.state, sim.dt
    q = model.neighbor_query()
    c = model.coefficients
    t0 = time.perf_counter()
    inputs = model.inputs(s)
    aux = model.aux(s.n)
    buf = np.zeros((s.n, 3))
    if q.mode == "metric" and metric_search_on_grid(s.position, q.radius, q.method):
        steering = GridSteering(UNLIMITED)
        steering(model, s, q.radius, inputs, buf, aux)
        pairs = steering.pairs
    else:
        nbrs = find_neighbors(s.position, s.alive, model.space, q.mode, q.radius, q.k, q.method)
        reynolds_accelerations(s.position, s.velocity, s.alive, nbrs.start, nbrs.index, s.dim, model.space, c,
                               inputs, buf, aux)  # fmt: skip
        pairs = len(nbrs.index)
    t1 = time.perf_counter()
    integrate_all(s.position, s.velocity, s.alive, buf, aux, inputs, s.dim, model.space, dt, c)
    t2 = time.perf_counter()
    resolve_overlaps(s.position, s.alive, s.radius, s.mass, model.space, model.obstacle_set(s),
                     sim.params.overlap.iterations, c.planar, out=buf)  # fmt: skip
    t3 = time.perf_counter()
    return {
        "neighbors_steering_ms": (t1 - t0) * 1e3,
        "integrate_ms": (t2 - t1) * 1e3,
        "overlap_ms": (t3 - t2) * 1e3,
        "mean_neighbors": pairs / max(s.n_alive, 1),
    }


def timed_steps(sim: Simulation, steps: int) -> tuple[list[float], list[float]]:
    """Wall and process CPU milliseconds of ``steps`` single steps."""
    wall, cpu = [], []
    for _ in range(steps):
        t, c = time.perf_counter(), time.process_time()
        sim.step()
        cpu.append((time.process_time() - c) * 1e3)
        wall.append((time.perf_counter() - t) * 1e3)
    return wall, cpu


def components_cpu_ms(sim: Simulation, components: list[Component]) -> float:
    """CPU milliseconds of one more call of every component's before_step (the work they do
    before each step: targets, flow-field waypoints). Called after the timed steps."""
    c = time.process_time()
    for component in components:
        component.before_step(sim)
    return (time.process_time() - c) * 1e3


def preset_main(args: argparse.Namespace) -> None:
    """Time a preset at its own size (see the module docstring)."""
    sim = Simulation(load_preset(args.preset), threads=args.threads)
    compile_s = sim.warm_up()
    sim.step(args.warmup)
    wall, cpu = timed_steps(sim, args.steps)
    components_ms = components_cpu_ms(sim, sim.components)
    c = time.process_time()
    breakdown = stages(sim)
    breakdown["stages_cpu_ms"] = (time.process_time() - c) * 1e3
    print(
        json.dumps(
            {
                "benchmark": "crowds-preset",
                "preset": args.preset,
                "n": sim.state.n,
                "threads": numba.get_num_threads(),
                "steps": args.steps,
                "median_ms": statistics.median(wall),
                "best_ms": min(wall),
                "median_cpu_ms": statistics.median(cpu),
                "best_cpu_ms": min(cpu),
                "components_cpu_ms": components_ms,
                **breakdown,
                "first_step_s": compile_s,
                "flocksim": __version__,
                "python": platform.python_version(),
                "machine": f"{platform.machine()}, {os.cpu_count()} CPUs",
            },
            indent=1,
        )
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--obstacles", type=int, default=1000)
    ap.add_argument("--warmup", type=int, default=30)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--preset", help="time this preset at its own size instead (e.g. crowd-maze)")
    ap.add_argument("--threads", type=int, default=None, help="CPU threads (default: numba's)")
    args = ap.parse_args()
    if args.preset:
        preset_main(args)
        return
    sim = Simulation(scaled_params(args.n, args.obstacles), threads=args.threads)
    compile_s = sim.warm_up()
    sim.step(args.warmup)
    times = []
    for _ in range(args.steps):
        t = time.perf_counter()
        sim.step()
        times.append((time.perf_counter() - t) * 1e3)
    breakdown = stages(sim)
    print(
        json.dumps(
            {
                "benchmark": "crowds",
                "n": args.n,
                "obstacles": args.obstacles,
                "threads": numba.get_num_threads(),
                "median_ms": statistics.median(times),
                "best_ms": min(times),
                "target_ms": 20.0,
                **breakdown,
                "first_step_s": compile_s,
                "flocksim": __version__,
                "python": platform.python_version(),
                "machine": f"{platform.machine()}, {os.cpu_count()} CPUs",
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()

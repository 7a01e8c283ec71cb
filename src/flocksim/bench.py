"""Benchmark workloads behind ``flocksim bench``.

``abm-flocking`` at size N keeps the large model's density: 2D side
L = 150 * sqrt(N / 400) (about 12.6 neighbours per bird at a uniform start);
3D side L with (4/3) pi 15^3 N / L^3 = 12.6. Vision 15, separation 1, speed 1,
factors 0.03 / 0.015 / 0.05, uniform random start (seeded). The topological
variant uses the k nearest instead of the vision radius.
"""

from __future__ import annotations

import math
import resource
import statistics
import time
from typing import Any, Literal

from flocksim import _threading
from flocksim.config import validate
from flocksim.params import AbmFlockingParams

WORKLOADS = ("abm-flocking",)
NEIGHBORS_PER_BIRD_3D = 12.6
VISION = 15.0


def abm_side(dim: int, n: int) -> float:
    """Side of the periodic box that keeps the large model's density [units]."""
    if dim == 2:
        return 150.0 * math.sqrt(n / 400.0)
    return ((4.0 / 3.0) * math.pi * VISION**3 * n / NEIGHBORS_PER_BIRD_3D) ** (1.0 / 3.0)


def abm_workload(
    dim: int, n: int, neighbors: Literal["metric", "topological"] = "metric", k: int = 7, seed: int = 0
) -> AbmFlockingParams:
    side = abm_side(dim, n)
    return validate(
        {
            "model": "abm-flocking",
            "seed": seed,
            "description": f"abm-flocking benchmark, {dim}D, N = {n}, {neighbors}",
            "world": {"dim": dim, "dt": 1.0, "bounds": {"kind": "periodic", "size": [side] * dim}},
            "agents": {"n": n, "init": {"kind": "random"}},
            "neighbors": {"mode": neighbors, "k": k},
            "flocking": {
                "vision": VISION,
                "separation": 1.0,
                "speed": 1.0,
                "cohere_factor": 0.03,
                "separate_factor": 0.015,
                "match_factor": 0.05,
            },
        }
    )


def peak_rss_mb() -> float:
    """Peak resident set size of this process so far [MiB] (Linux ru_maxrss is in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def run_case(
    workload: str,
    dim: int,
    n: int,
    neighbors: Literal["metric", "topological"],
    k: int = 7,
    steps: int = 20,
    warmup: int = 3,
    threads: int | None = None,
    engine: str = "cpu",
    seed: int = 0,
) -> dict[str, Any]:
    """Time ``steps`` single steps after ``warmup`` untimed ones; one JSON-ready dict."""
    import numba

    from flocksim.simulation import Simulation

    if workload not in WORKLOADS:
        raise ValueError(f"workload: unknown workload {workload!r}; allowed: {', '.join(WORKLOADS)}")
    params = abm_workload(dim, n, neighbors, k, seed)
    sim = Simulation(params, engine=engine, threads=threads)
    started = time.perf_counter()
    sim.step(1)
    compile_s = time.perf_counter() - started
    sim.step(max(warmup - 1, 0))
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        sim.step(1)
        times.append((time.perf_counter() - t0) * 1e3)
    return {
        "workload": workload,
        "dim": dim,
        "n": n,
        "neighbors": neighbors,
        "engine": engine,
        "threads": threads if threads is not None else numba.get_num_threads(),
        "threading_layer": _threading.layer_in_use(),
        "precision": "float64",
        "steps": steps,
        "ms_per_step_median": statistics.median(times) if times else float("nan"),
        "ms_per_step_min": min(times) if times else float("nan"),
        "mean_neighbors": float(sim.neighbors().counts.mean()) if n else 0.0,
        "compile_s": compile_s,
        "peak_rss_mb": peak_rss_mb(),
    }

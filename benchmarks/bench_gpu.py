"""GPU engine speed: abm-flocking steps per second on engine="cuda", one JSON object per case.

Cases (the issue's targets on an H100/H200-class GPU): 2D metric at N = 10^5, 10^6, 10^7
(target: 10^7 at <= 16 ms/step, 60 steps/s), 3D topological k = 7 at N = 10^6 (target <= 10 ms/step),
and at N = 10^6 the CPU engine with 2 threads on the same workload (target: the GPU >= 50x faster).
The workload is ``flocksim bench``'s (flocksim.bench.abm_workload: constant density, seeded random
start, periodic box). Each case builds a fresh Simulation, steps ``--warmup`` times untimed (kernel
compilation happens there), then times ``--steps`` single steps, each ended by
``cuda.synchronize()`` so that a step's time includes all its GPU work. Nothing reads the state
between steps, so no state is copied to the host (docs/gpu.md, "Sync points").

Usage (on a machine with an NVIDIA GPU and ``pip install -e '.[cuda]'``):

    python benchmarks/bench_gpu.py                          # every case above
    python benchmarks/bench_gpu.py --case 2d-metric --n 100000 --steps 20

With NUMBA_ENABLE_CUDASIM=1 it runs in numba-cuda's simulator (CPU, Python): only to check that
the script works (the test suite does that at N = 40); its times mean nothing and say so.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from typing import Any

from flocksim import Simulation
from flocksim.bench import abm_workload

CASES = {
    "2d-metric": (2, "metric", [100_000, 1_000_000, 10_000_000]),
    "3d-topological": (3, "topological", [1_000_000]),
}
TARGET_MS = {("2d-metric", 10_000_000): 16.0, ("3d-topological", 1_000_000): 10.0}
SPEEDUP_TARGET = 50.0
CPU_THREADS = 2


def device_name() -> str:
    from numba import config, cuda

    if config.ENABLE_CUDASIM:
        return "numba-cuda simulator (NUMBA_ENABLE_CUDASIM=1): times are not GPU times"
    name = cuda.get_current_device().name
    return name.decode() if isinstance(name, bytes) else str(name)


def time_steps(sim: Simulation, steps: int, warmup: int, sync: Any) -> tuple[list[float], float]:
    """Milliseconds of each timed step, and the seconds the warm-up took (compilation included)."""
    started = time.perf_counter()
    sim.step(warmup)
    sync()
    warm_s = time.perf_counter() - started
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        sim.step(1)
        sync()
        times.append((time.perf_counter() - t0) * 1e3)
    return times, warm_s


def run(case: str, n: int, k: int, steps: int, warmup: int, engine: str, threads: int | None) -> dict[str, Any]:
    from numba import cuda

    dim, mode, _ = CASES[case]
    sim = Simulation(abm_workload(dim, n, mode, k), engine=engine, threads=threads)  # type: ignore[arg-type]
    times, warm_s = time_steps(sim, steps, warmup, cuda.synchronize if engine == "cuda" else lambda: None)
    median = statistics.median(times)
    target = TARGET_MS.get((case, n)) if engine == "cuda" else None
    return {
        "case": case,
        "dim": dim,
        "neighbors": mode,
        "k": k if mode == "topological" else None,
        "n": n,
        "engine": engine,
        "device": device_name() if engine == "cuda" else f"CPU, {threads} threads",
        "steps": steps,
        "ms_per_step_median": median,
        "ms_per_step_min": min(times),
        "steps_per_second": 1e3 / median,
        "warmup_s": warm_s,
        "target_ms": target,
        "target_met": None if target is None else median <= target,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--case", choices=sorted(CASES), action="append", help="case(s) to run (default: all)")
    parser.add_argument("--n", type=int, action="append", help="agent count(s), replacing the case's defaults")
    parser.add_argument("--k", type=int, default=7, help="neighbours of the topological case")
    parser.add_argument("--steps", type=int, default=20, help="timed steps per case")
    parser.add_argument("--warmup", type=int, default=3, help="untimed steps first (compilation)")
    parser.add_argument("--cpu-n", type=int, default=1_000_000,
                        help="N of the CPU comparison (2D metric, 2 threads); 0 skips it")  # fmt: skip
    args = parser.parse_args(argv)
    if min(args.steps, args.warmup) < 1 or any(n < 1 for n in args.n or []):
        parser.error("--steps, --warmup and --n must be >= 1")
    from flocksim.kernels.cuda_runtime import cuda_problem

    problem = cuda_problem()
    if problem is not None:
        print(problem, file=sys.stderr)
        return 2
    gpu_at: dict[int, float] = {}
    for case in args.case or sorted(CASES):
        for n in args.n or CASES[case][2]:
            row = run(case, n, args.k, args.steps, args.warmup, "cuda", None)
            if case == "2d-metric":
                gpu_at[n] = row["ms_per_step_median"]
            print(json.dumps(row), flush=True)
    if args.cpu_n and (not args.case or "2d-metric" in args.case):
        row = run("2d-metric", args.cpu_n, args.k, max(3, args.steps // 4), 1, "cpu", CPU_THREADS)
        gpu_ms = gpu_at.get(args.cpu_n)
        if gpu_ms is None:
            gpu_ms = run("2d-metric", args.cpu_n, args.k, args.steps, args.warmup, "cuda", None)["ms_per_step_median"]
        row["gpu_speedup"] = row["ms_per_step_median"] / gpu_ms
        row["speedup_target"] = SPEEDUP_TARGET
        row["target_met"] = row["gpu_speedup"] >= SPEEDUP_TARGET
        print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

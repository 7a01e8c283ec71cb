"""Would float32 make the abm-flocking candidate loop faster? (issue "Fast CPU engine", item 4)

The 2D candidate loop of engines/cpu_abm.py ``sum_run_2d`` (every candidate of a cell's
block runs, squared distance, masks, fixed-point sums; the CUDA engine's loop, and the CPU
engine's until it gathered each block into one row first) compiled twice
by numba from one source: once with float64 coordinates and scalars, once with float32. The
state is the ``flocksim bench`` workload (2D, N birds, after a few steps), binned by the
engine's coherent grid. Prints one JSON object: best CPU milliseconds of each and the ratio.

Usage: python benchmarks/bench_precision.py [--n 100000] [--threads 1] [--rounds 10]
"""

from __future__ import annotations

import argparse
import json
import platform
import time

import numba
import numpy as np

from flocksim.bench import abm_workload
from flocksim.models.abm_flocking import fixed_point_scales
from flocksim.neighbors.coherent import block_runs, block_runs_scratch, build_coherent_grid
from flocksim.simulation import Simulation


@numba.njit(parallel=True)
def candidate_sums(xs, ys, qxs, qys, cell_start, g, lx, ly, r2, close2, scale, runs, shifts, out):
    """Per slot: neighbour count and fixed-point cohere/separate/match sums (x + y folded)."""
    zero = xs.dtype.type(0.0)
    for cc in numba.prange(cell_start.shape[0] - 1):
        lo = cell_start[cc]
        hi = cell_start[cc + 1]
        if hi == lo:
            continue
        tid = numba.get_thread_id()
        nruns = block_runs(cc, g, cell_start, lx, ly, 1.0, tid, runs, shifts)
        for si in range(lo, hi):
            xi = xs[si]
            yi = ys[si]
            count = 0
            cohere = 0
            separate = 0
            match = 0
            for r in range(nruns):
                sx = zero + shifts[tid, r, 0]
                sy = zero + shifts[tid, r, 1]
                for s in range(runs[tid, r, 0], runs[tid, r, 1]):
                    dx = (xs[s] - xi) - sx
                    dy = (ys[s] - yi) - sy
                    d2 = dx * dx + dy * dy
                    inside = (d2 <= r2) & (s != si)
                    near = -np.int64(inside)
                    close = -np.int64(inside & (d2 < close2))
                    ix = np.int64(dx * scale)
                    iy = np.int64(dy * scale)
                    count += np.int64(inside)
                    cohere += (ix + iy) & near
                    separate -= (ix + iy) & close
                    match += (qxs[s] + qys[s]) & near
            out[si, 0] = count
            out[si, 1] = cohere
            out[si, 2] = separate + match


def best_ms(run, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        t0 = time.process_time()
        run()
        times.append(time.process_time() - t0)
    return 1e3 * min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=10)
    args = ap.parse_args()
    numba.set_num_threads(args.threads)
    sim = Simulation(abm_workload(2, args.n, "metric", 7, 0))
    sim.step(3)
    state, space, c = sim.state, sim.engine.model.space, sim.engine.model.coefficients
    grid = build_coherent_grid(state.position, state.alive, space, c.vision2**0.5)
    scales = fixed_point_scales(c.vision2**0.5, state.n)
    heading = state.velocity[grid.order] / np.linalg.norm(state.velocity[grid.order], axis=1)[:, None]
    qxs, qys = (np.trunc(heading[:, a] * scales.heading).astype(np.int64) for a in (0, 1))
    runs, shifts = block_runs_scratch(args.threads)
    result = {}
    outs = {}
    for name, dtype in (("float64", np.float64), ("float32", np.float32)):
        xs, ys = grid.xs.astype(dtype), grid.ys.astype(dtype)
        r2, close2, scale = dtype(c.vision2), dtype(c.separation2), dtype(scales.displacement)
        out = np.zeros((xs.shape[0], 3), dtype=np.int64)

        def run(xs=xs, ys=ys, r2=r2, close2=close2, scale=scale, out=out):
            candidate_sums(xs, ys, qxs, qys, grid.cell_start, grid.geometry, space.lx, space.ly, r2, close2, scale,
                           runs, shifts, out)  # fmt: skip

        run()  # compile
        result[f"{name}_ms_best"] = round(best_ms(run, args.rounds), 3)
        outs[name] = out
    differ = int(np.count_nonzero(outs["float64"][:, 0] != outs["float32"][:, 0]))
    result.update(
        {
            "benchmark": "precision",
            "n": args.n,
            "threads": args.threads,
            "float32_over_float64": round(result["float32_ms_best"] / result["float64_ms_best"], 3),
            "birds_whose_neighbour_count_differs": differ,
            "machine": platform.processor() or platform.machine(),
            "python": platform.python_version(),
            "numba": numba.__version__,
        }
    )
    print(json.dumps(result))


if __name__ == "__main__":
    main()

"""Per-phase CPU time of flocksim's abm-flocking metric step on one thread.

Runs the ``flocksim bench`` workload (N birds, 2D or 3D, metric neighbours) for 3 steps, then
``--reps`` times calls the stepper's phases one by one on the same state, each timed with
``time.process_time`` (CPU milliseconds; steadier than wall time on a shared machine): the grid
geometry (bounds pass), the cell of each bird, the counting sort, the gather of coordinates in
cell order, the unit headings in cell order, and the fused neighbour kernel with the moves; then
the whole stepper and a whole ``Simulation.step`` on the same state. Prints the median of each
as one JSON object. Run it with ``PYTHONPATH=<checkout>/src`` to profile another checkout (the
engine before the gathered-block kernel is handled too). No timing is asserted.

Usage: python benchmarks/abm_phases.py [--dim 2] [--n 100000] [--reps 10]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

import numba
import numpy as np


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dim", type=int, choices=(2, 3), default=2)
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--reps", type=int, default=10)
    args = parser.parse_args(argv)

    from flocksim.bench import abm_workload
    from flocksim.engines import cpu_abm
    from flocksim.models.abm_flocking import AbmFlockingModel, fixed_point_scales
    from flocksim.neighbors import coherent, grid
    from flocksim.simulation import Simulation

    sim = Simulation(abm_workload(args.dim, args.n), threads=1)
    numba.set_num_threads(1)
    sim.step(3)
    model = AbmFlockingModel(sim.params)
    q = model.neighbor_query()
    c = model.coefficients
    stepper = cpu_abm.AbmStepper()
    times: dict[str, list[float]] = {}

    def timed(name: str, f: Callable[..., Any], *a: Any) -> Any:
        t0 = time.process_time()
        result = f(*a)
        times.setdefault(name, []).append((time.process_time() - t0) * 1e3)
        return result

    for _ in range(args.reps):
        st = sim.state
        scales = fixed_point_scales(q.radius, st.n)
        pos0, vel0 = st.position.copy(), st.velocity.copy()
        g = timed("geometry", grid.grid_geometry, st.position, st.alive, model.space, q.radius)
        n, dim = st.position.shape
        ncell = g.nx * g.ny * g.nz
        cell = np.empty(n, dtype=np.int64)
        timed("cell_of_agents", grid.cell_of_agents, st.position, st.alive, dim, g, cell)
        cell_start = np.empty(ncell + 1, dtype=np.int64)
        order = np.empty(n, dtype=np.int64)
        timed("counting_sort", grid.counting_sort, cell, ncell, cell_start, order)
        xs, ys, zs = np.empty(n), np.empty(n), np.empty(n)
        timed("gather_coordinates", coherent._gather, st.position, dim, order, xs, ys, zs)
        cg = coherent.CoherentGrid(g, cell_start, order, cell, xs, ys, zs)
        hxs, hys, hzs, qs = timed("headings", stepper._headings, st, cg, scales)
        fullest = int(np.diff(cell_start).max())
        if hasattr(cpu_abm, "PICKS_FLUSH"):  # the engine before the gathered-block kernel
            capacity = cpu_abm.PICKS_FLUSH + (3 * fullest if args.dim == 3 else 0) + 1
        else:
            capacity = min(cpu_abm.BLOCK_CELLS[args.dim - 2] * fullest, n)
        scratch = stepper._scratch(1, capacity)
        heading = np.empty((n, 3))
        counts = np.zeros(n, dtype=np.int64)
        timed("kernel_and_moves", cpu_abm.abm_step_cells, st.position, st.velocity, xs, ys, zs, hxs, hys, hzs, qs,
              order, cell_start, g, model.space, c, scales, *scratch, heading, counts, 1.0)  # fmt: skip
        st.position[:] = pos0
        st.velocity[:] = vel0
        timed("whole_stepper", stepper, model, st, 1.0, heading)
        st.position[:] = pos0
        st.velocity[:] = vel0
        timed("simulation_step", sim.step, 1)
    result = {name: statistics.median(v) for name, v in times.items()}
    print(json.dumps({"dim": args.dim, "n": args.n, "reps": args.reps, "cpu_ms_median": result}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

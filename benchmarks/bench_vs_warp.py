"""flocksim against NVIDIA Warp's CPU back end, one core each, side by side in one process.

Both run the abm-flocking benchmark workload of ``flocksim bench`` (periodic box of side
``flocksim.bench.abm_side(dim, n)``, vision 15, separation 1, speed 1, factors
0.03 / 0.015 / 0.05, seeded uniform start, metric neighbours) from the same initial state:
the Warp side takes flocksim's positions and unit headings.

The Warp step is what a Warp user writes for this model: ``wp.HashGrid.build`` over the
positions, then one kernel, one thread per bird, that walks ``wp.hash_grid_query`` (the
candidates of the cells the vision sphere touches), keeps those with a minimum-image
distance <= vision, sums cohesion, separation and alignment in float64, normalises the new
heading and moves the bird (into a second pair of arrays: the update is synchronous). Both
sides compute in float64 (``--dtype float32`` times a float32 Warp step too; its agreement
check then uses a looser tolerance).

Periodic box: Warp's hash grid maps a cell coordinate to a bucket modulo the grid's
dimensions, so a grid of m = floor(L / vision) cells of width L / m (>= vision) per axis
wraps exactly as the periodic box does; a query then visits 2 or 3 cells per axis (what
the vision sphere touches), wrapped, and the kernel takes the minimum image per pair.
2D: Warp has no 2D grid; positions are (x, y, 0), the grid has one cell in z, so a 2D query
visits the same 3x3 cells as flocksim's and the z terms are exact zeros. That is the
cheapest 2D Warp can do, so it is fair to Warp.

What is timed, per step: flocksim's ``Simulation.step(1)`` (binning, headings, the fused
neighbour kernel, the moves, the Python around them) with numba at one thread; Warp's
``HashGrid.build`` + kernel launch + ``wp.synchronize()`` + the buffer swap. Warp's CPU
back end runs a kernel's threads one after another on the calling thread (the generated
``*_cpu_forward_tasks`` is a plain loop over the launch's indices; ``warp_cpu_threads``
below is process CPU time over wall time of the Warp steps, about 1.0 on a quiet machine,
below 1 when other processes take the core). Both sides replay the same window of
``--steps`` steps from a common state, ``--rounds`` times, alternating flocksim's block and
Warp's; medians and minima over all timed steps, of wall time and of process CPU time
(``time.process_time``: the steadier figure on a shared, loaded machine); ``ratio`` = Warp
median / flocksim median (above 1: flocksim faster), ``ratio_cpu`` the same of CPU time.
Not timed: Warp's kernel compile (measured cold, into a fresh kernel cache, and reported as
``warp_compile_s``) and flocksim's first step (numba compile or cache load, reported as
``flocksim_compile_s``).

The common state is flocksim's after ``--start-step`` steps (default 3: where ``flocksim bench``
starts timing; the flock has begun to clump, so birds have more neighbours than at the
uniform start). Check: both advance one step from the common state; the largest position (minimum image)
and heading differences are reported and must be below ``--tolerance`` (flocksim sums in
exact fixed point, Warp in float64 in its cells' order, so they agree to rounding, not
bitwise). The exit status is 1 if they do not agree. No timing is asserted.

Usage: python benchmarks/bench_vs_warp.py [--dim 2] [--n 100000] [--steps 5] [--rounds 5]
Prints one JSON object.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import platform
import resource
import statistics
import sys
import tempfile
import time
from typing import Any

import numpy as np

from bench_vs_ckdtree import machine
from yardstick_ckdtree import min_image, state_from_simulation


def load_warp(cache_dir: str) -> tuple[Any, float]:
    """Import and initialise Warp with its kernel cache in ``cache_dir`` (empty: a cold compile)."""
    import warp as wp

    wp.config.kernel_cache_dir = cache_dir
    wp.config.quiet = True
    t0 = time.perf_counter()
    wp.init()
    return wp, time.perf_counter() - t0


def make_kernel(wp: Any, real: Any) -> Any:
    """The abm-flocking step as one Warp kernel in precision ``real`` (wp.float64 or wp.float32)."""
    vec = wp.types.vector(3, real)

    @wp.func
    def min_image_w(d: real, side: real):
        """flocksim.space.min_image."""
        if wp.abs(d) < real(0.5) * side:
            return d
        return d - side * wp.floor(d / side + real(0.5))

    @wp.func
    def wrap_w(x: real, side: real):
        """flocksim.space.wrap_coordinate."""
        y = x - side * wp.floor(x / side)
        if y < real(0.0):
            y = y + side
        if y >= side:
            y = real(0.0)
        return y

    def step(
        grid: wp.uint64,
        pos: wp.array(dtype=vec),
        head: wp.array(dtype=vec),
        side: real,
        vision: real,
        separation: real,
        speed: real,
        cohere: real,
        separate: real,
        match: real,
        new_pos: wp.array(dtype=vec),
        new_head: wp.array(dtype=vec),
    ):
        i = wp.tid()
        p = pos[i]
        h = head[i]
        vision2 = vision * vision
        separation2 = separation * separation
        count = wp.int32(0)  # a dynamic (loop-carried) variable in Warp's kernel language
        coh = vec()
        sep = vec()
        mat = vec()
        for j in wp.hash_grid_query(grid, p, vision):
            if j != i:
                q = pos[j]
                d = vec(min_image_w(q[0] - p[0], side), min_image_w(q[1] - p[1], side), min_image_w(q[2] - p[2], side))
                d2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2]
                if d2 <= vision2:
                    count += 1
                    coh = coh + d
                    mat = mat + head[j]
                    if d2 < separation2:
                        sep = sep - d
        inv = real(1.0) / real(wp.max(count, 1))
        nh = h + (coh * cohere + sep * separate + mat * match) * inv
        norm = wp.sqrt(nh[0] * nh[0] + nh[1] * nh[1] + nh[2] * nh[2])
        if norm > real(0.0):  # noqa: SIM108 (a zero sum keeps the old heading, as flocksim's rule)
            nh = nh / norm
        else:
            nh = h
        new_head[i] = nh
        moved = p + speed * nh
        new_pos[i] = vec(wrap_w(moved[0], side), wrap_w(moved[1], side), wrap_w(moved[2], side))

    step.__name__ = f"abm_flocking_step_{real.__name__}"
    return wp.kernel(step, module="unique")


class WarpFlock:
    """The Warp side: state in double buffers, the hash grid, the kernel."""

    def __init__(self, wp: Any, real: Any, params: Any, pos: np.ndarray, heading: np.ndarray) -> None:
        self.wp = wp
        self.real = real
        self.vec = wp.types.vector(3, real)
        f = params.flocking
        self.dim = params.world.dim
        self.side = float(params.world.bounds.size[0])
        self.vision = f.vision
        m = max(1, math.floor(self.side / f.vision))
        self.cell = self.side / m  # >= vision, and m cells span the box exactly
        self.grid = wp.HashGrid(m, m, m if self.dim == 3 else 1, device="cpu", dtype=real)
        self.coefficients = (f.vision, f.separation, f.speed, f.cohere_factor, f.separate_factor, f.match_factor)
        self.kernel = make_kernel(wp, real)
        self.load(pos, heading)

    def load(self, pos: np.ndarray, heading: np.ndarray) -> None:
        """Set the state from (n, dim) float64 positions and unit headings."""
        n = pos.shape[0]
        dtype = np.float64 if self.real is self.wp.float64 else np.float32
        p3 = np.zeros((n, 3), dtype=dtype)
        h3 = np.zeros((n, 3), dtype=dtype)
        p3[:, : self.dim] = pos
        h3[:, : self.dim] = heading
        wp = self.wp
        self.pos = wp.array(p3, dtype=self.vec, device="cpu")
        self.head = wp.array(h3, dtype=self.vec, device="cpu")
        self.new_pos = wp.empty(n, dtype=self.vec, device="cpu")
        self.new_head = wp.empty(n, dtype=self.vec, device="cpu")

    def state(self) -> tuple[np.ndarray, np.ndarray]:
        """(positions, unit headings) as (n, dim) float64 arrays."""
        return (self.pos.numpy()[:, : self.dim].astype(np.float64), self.head.numpy()[:, : self.dim].astype(np.float64))

    def step(self) -> None:
        wp = self.wp
        self.grid.build(self.pos, self.cell)
        wp.launch(self.kernel, dim=self.pos.shape[0], device="cpu",
                  inputs=[self.grid.id, self.pos, self.head, self.side, *self.coefficients],
                  outputs=[self.new_pos, self.new_head])  # fmt: skip
        wp.synchronize()
        self.pos, self.new_pos = self.new_pos, self.pos
        self.head, self.new_head = self.new_head, self.head


def timed(step: Any, steps: int) -> tuple[list[float], list[float]]:
    """Wall and process CPU milliseconds of each of ``steps`` calls of ``step``."""
    wall = []
    cpu = []
    for _ in range(steps):
        t0, c0 = time.perf_counter(), time.process_time()
        step()
        wall.append((time.perf_counter() - t0) * 1e3)
        cpu.append((time.process_time() - c0) * 1e3)
    return wall, cpu


def differences(side: float, a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]) -> tuple[float, float]:
    """Largest position (minimum image) and heading differences between two states."""
    return (
        float(np.max(np.abs(min_image(a[0] - b[0], side)), initial=0.0)),
        float(np.max(np.abs(a[1] - b[1]), initial=0.0)),
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.ArgumentDefaultsHelpFormatter
    )
    parser.add_argument("--n", type=int, default=100_000, help="birds")
    parser.add_argument("--dim", type=int, choices=(2, 3), default=2)
    parser.add_argument("--steps", type=int, default=5, help="timed steps per round (the same window for both)")
    parser.add_argument("--rounds", type=int, default=5, help="times each side replays the timed window")
    parser.add_argument("--start-step", type=int, default=3, help="flocksim steps before the common state")
    parser.add_argument("--tolerance", type=float, default=1e-9, help="largest allowed difference after one step")
    parser.add_argument("--dtype", choices=("float64", "float32"), default="float64", help="Warp's precision")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    import numba

    import flocksim
    from flocksim.bench import abm_workload
    from flocksim.simulation import Simulation

    params = abm_workload(args.dim, args.n, "metric", seed=args.seed)
    sim = Simulation(params, threads=1)
    numba.set_num_threads(1)
    flocksim_compile_s = sim.warm_up()  # compiles or loads the numba cache on a copy of the state
    sim.step(args.start_step)
    start_state = state_from_simulation(sim)
    with tempfile.TemporaryDirectory(prefix="warp-cache-") as cache, contextlib.redirect_stdout(sys.stderr):
        wp, init_s = load_warp(cache)
        real = wp.float64 if args.dtype == "float64" else wp.float32
        flock = WarpFlock(wp, real, params, *start_state)
        t0 = time.perf_counter()
        wp.load_module(flock.kernel.module, device="cpu")
        warp_compile_s = time.perf_counter() - t0
        flock.step()  # the first launch, untimed: it loads the compiled module

        # check: one step each from the common start
        flock.load(*start_state)
        start = sim.checkpoint()
        sim.step(1)
        flock.step()
        position_diff, heading_diff = differences(flock.side, state_from_simulation(sim), flock.state())
        tolerance = args.tolerance if args.dtype == "float64" else max(args.tolerance, 1e-3)
        agree = max(position_diff, heading_diff) <= tolerance
        mean_neighbors = float(sim.neighbors().counts.mean()) if args.n else 0.0

        f_times: list[float] = []
        f_cpu: list[float] = []
        w_times: list[float] = []
        w_cpu: list[float] = []
        for _ in range(args.rounds):
            sim.restore(start)
            wall, cpu = timed(lambda: sim.step(1), args.steps)
            f_times += wall
            f_cpu += cpu
            flock.load(*start_state)
            wall, cpu = timed(flock.step, args.steps)
            w_times += wall
            w_cpu += cpu

    f_median = statistics.median(f_times)
    w_median = statistics.median(w_times)
    result = {
        "workload": "abm-flocking",
        "dim": args.dim,
        "n": args.n,
        "neighbors": "metric",
        "start_step": args.start_step,
        "side": flock.side,
        "warp_grid": [flock.grid._dim_x, flock.grid._dim_y, flock.grid._dim_z],
        "warp_cell_width": flock.cell,
        "warp_dtype": args.dtype,
        "mean_neighbors_after_one_step": mean_neighbors,
        "flocksim_threads": numba.get_num_threads(),
        "flocksim_ms_per_step_median": f_median,
        "flocksim_ms_per_step_min": min(f_times),
        "flocksim_cpu_ms_per_step_median": statistics.median(f_cpu),
        "flocksim_compile_s": flocksim_compile_s,
        "warp_ms_per_step_median": w_median,
        "warp_ms_per_step_min": min(w_times),
        "warp_cpu_ms_per_step_median": statistics.median(w_cpu),
        "warp_compile_s": warp_compile_s,
        "warp_init_s": init_s,
        "warp_cpu_threads": sum(w_cpu) / sum(w_times),
        "flocksim_cpu_threads": sum(f_cpu) / sum(f_times),
        "steps_timed_each": len(f_times),
        "ratio": w_median / f_median,
        "ratio_cpu": statistics.median(w_cpu) / statistics.median(f_cpu),
        "max_position_diff": position_diff,
        "max_heading_diff": heading_diff,
        "tolerance": tolerance,
        "agree": agree,
        "load_average": list(os.getloadavg()),
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
        "versions": {
            "flocksim": flocksim.__version__,
            "numba": numba.__version__,
            "warp": wp.config.version,
            "numpy": np.__version__,
            "python": platform.python_version(),
        },
        "machine": machine(),
    }
    print(json.dumps(result))
    if not agree:
        print(
            f"flocksim and Warp disagree after one step: positions {position_diff:.3g}, "
            f"headings {heading_diff:.3g} > {tolerance:g}",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

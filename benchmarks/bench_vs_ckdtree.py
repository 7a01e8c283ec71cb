"""flocksim against the NumPy + scipy cKDTree yardstick, side by side in one process.

Both run the abm-flocking benchmark workload of ``flocksim bench`` (periodic box of side
``flocksim.bench.abm_side(dim, n)``, vision 15, separation 1, speed 1, factors
0.03 / 0.015 / 0.05, seeded uniform start; ``--neighbors topological``: the k nearest) from
the same initial state: the yardstick (benchmarks/yardstick_ckdtree.py) takes its positions
and headings from the flocksim Simulation.

1. Check: both advance ``--check-steps`` steps from that state; the largest position
   difference (minimum image) and heading difference must be below ``--tolerance``
   (the sums are accumulated in different orders, so the results agree to rounding, not
   bitwise). The exit status is 1 if they do not agree.
2. Time: from that common state (step ``--check-steps``) each side times the same window
   of ``--steps`` single steps, replayed ``--rounds`` times (flocksim through
   ``Simulation.checkpoint`` / ``restore``, the yardstick from a kept copy), flocksim's
   block first in each round. Medians and minima over all timed steps are reported, and
   ``ratio`` = yardstick median / flocksim median. flocksim compiles (or loads its numba
   cache) before the clock starts: ``flocksim_compile_s`` is that first step;
   ``mean_neighbors`` is that of the window's first state.

flocksim uses ``--threads`` (default: NUMBA_NUM_THREADS or all cores); the yardstick is what
NumPy and scipy do with a tree rebuilt every step (``query_pairs`` is single-threaded).
No timing is asserted.

Usage: python benchmarks/bench_vs_ckdtree.py [--n 100000] [--dim 2] [--steps 5] [--threads 2]
Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import sys
import time

import numpy as np
import scipy

from yardstick_ckdtree import Yardstick, min_image, state_from_simulation, time_steps


def machine() -> str:
    """CPU model and core count, for the record."""
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            model = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), model)
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} cores"


def time_flocksim(sim, steps: int) -> list[float]:
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        sim.step(1)
        times.append((time.perf_counter() - t0) * 1e3)
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.ArgumentDefaultsHelpFormatter
    )
    parser.add_argument("--n", type=int, default=100_000, help="birds")
    parser.add_argument("--dim", type=int, choices=(2, 3), default=2)
    parser.add_argument("--neighbors", choices=("metric", "topological"), default="metric")
    parser.add_argument("--k", type=int, default=7, help="neighbours in topological mode")
    parser.add_argument("--steps", type=int, default=5, help="timed steps per round (the same window for both)")
    parser.add_argument("--rounds", type=int, default=3, help="times each side replays the timed window")
    parser.add_argument("--check-steps", type=int, default=3, help="steps both run before comparing states")
    parser.add_argument("--tolerance", type=float, default=1e-9, help="largest allowed state difference")
    parser.add_argument("--threads", type=int, default=None, help="flocksim threads (default: numba's)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    import numba

    import flocksim
    from flocksim.bench import abm_workload
    from flocksim.simulation import Simulation

    params = abm_workload(args.dim, args.n, args.neighbors, args.k, args.seed)
    sim = Simulation(params, threads=args.threads)
    ys = Yardstick.from_params(params)
    pos, heading = state_from_simulation(sim)

    # compile (or load the numba cache) on a copy of the state, then check agreement
    compile_s = sim.warm_up()
    sim.step(args.check_steps)
    pos, heading = ys.run(pos, heading, args.check_steps)
    f_pos, f_heading = state_from_simulation(sim)
    max_position_diff = float(np.max(np.abs(min_image(f_pos - pos, ys.side)), initial=0.0))
    max_heading_diff = float(np.max(np.abs(f_heading - heading), initial=0.0))
    agree = max(max_position_diff, max_heading_diff) <= args.tolerance

    # both sides now hold the state of step check_steps; each replays the same window of
    # --steps steps from it --rounds times (flocksim via checkpoint/restore)
    mean_neighbors = float(sim.neighbors().counts.mean()) if args.n else 0.0
    start = sim.checkpoint()
    f_times: list[float] = []
    y_times: list[float] = []
    for _ in range(args.rounds):
        sim.restore(start)
        f_times += time_flocksim(sim, args.steps)
        y_times += time_steps(ys, pos, heading, args.steps)[0]

    f_median = statistics.median(f_times)
    y_median = statistics.median(y_times)
    result = {
        "workload": "abm-flocking",
        "dim": args.dim,
        "n": args.n,
        "neighbors": args.neighbors,
        **({"k": args.k} if args.neighbors == "topological" else {}),
        "side": ys.side,
        "mean_neighbors": mean_neighbors,
        "threads": args.threads if args.threads is not None else numba.get_num_threads(),
        "flocksim_ms_per_step_median": f_median,
        "flocksim_ms_per_step_min": min(f_times),
        "flocksim_steps_timed": len(f_times),
        "flocksim_compile_s": compile_s,
        "yardstick": "numpy+scipy.cKDTree",
        "yardstick_ms_per_step_median": y_median,
        "yardstick_ms_per_step_min": min(y_times),
        "yardstick_steps_timed": len(y_times),
        "ratio": y_median / f_median,
        "check_steps": args.check_steps,
        "window": [args.check_steps, args.check_steps + args.steps],
        "max_position_diff": max_position_diff,
        "max_heading_diff": max_heading_diff,
        "tolerance": args.tolerance,
        "agree": agree,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
        "versions": {
            "flocksim": flocksim.__version__,
            "numba": numba.__version__,
            "numpy": np.__version__,
            "scipy": scipy.__version__,
            "python": platform.python_version(),
        },
        "machine": machine(),
    }
    print(json.dumps(result))
    if not agree:
        print(
            f"flocksim and the yardstick disagree after {args.check_steps} steps: "
            f"positions {max_position_diff:.3g}, headings {max_heading_diff:.3g} > {args.tolerance:g}",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

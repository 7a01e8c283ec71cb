"""flocksim's k-nearest search against pykdtree and scipy's cKDTree, on one thread, same positions.

Positions: the starlings-3d-large preset (100 000 birds, open sky, k = 7 topological neighbours,
seed 0) from the preset's previous start (PREVIOUS_START: the 424 x 4 x 424 m slab, roost 300 m,
the start docs/benchmarks.md's figures were measured from; the preset now starts as a formed flock)
stepped ``--burn-in`` steps (default 600, about 10 s of flight: the slab has gathered into a
murmuration, dense clumps in a box it fills a small part of) by
flocksim's own engine; kept in ``--cache`` (an .npy file, made on the first run) so every run
and every source tree searches the same points. ``--n`` other than 100 000 sets ``agents.n``.

Timed, one call each, on one thread, rounds alternated (the order rotates every round):

- flocksim: ``flocksim.neighbors.search.knn_neighbors_grid(position, alive, space, k)``, what the
  engine calls for the preset every step (``find_neighbors`` with method auto), with numba set to
  one thread: grid build (bounds, binning, counting sort, gather) + search + the CSR list;
- pykdtree: ``KDTree(position)`` + ``query(position, k=k+1)`` (a bird is its own nearest; the
  extra column holds it), ``OMP_NUM_THREADS=1`` set before pykdtree is imported;
- cKDTree: ``cKDTree(position)`` + ``query(position, k=k+1, workers=1)``.

Every side builds its structure from the raw positions and answers the same question (the k
nearest other birds of every bird), so the comparison is build + query against build + query,
float64 throughout. flocksim's rows are exact and ordered by (distance, index); the trees do not
break ties by index, so the check compares neighbour *sets* and counts a difference only where
the k-th distances differ (a tie at the k-th distance may pick another bird). Compile time is
not timed (the first flocksim call compiles or loads the numba cache).

Reported: per side the median and best milliseconds of wall time, ``ratio_pykdtree`` = pykdtree
median / flocksim median (and the same for cKDTree); the same from the process's CPU time
(``cpu_median_ms``, ``cpu_ratio_*``: every side runs on this one thread, so on a machine shared
with other jobs the CPU time is the steadier figure); the check, the machine, the load average
before and after, the date. No timing is asserted.

Usage: python benchmarks/bench_vs_pykdtree.py [--rounds 7] [--k 7] [--burn-in 600]
Prints one JSON object.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")  # pykdtree's OpenMP: before it is imported

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from bench_vs_ckdtree import machine

DEFAULT_CACHE = Path(__file__).resolve().parent / ".cache"


PREVIOUS_START = ("agents.init.kind=aligned", "rules.roost.radius=300.0")
"""starlings-3d-large's start before agents.init.kind = "flock": birds uniform in its world.bounds slab."""


def flock_positions(n: int, burn_in: int, cache: Path) -> tuple[np.ndarray, float]:
    """Positions (n, 3) of starlings-3d-large after ``burn_in`` steps, from ``cache`` or made
    (numba's default threads while stepping: the result does not depend on the thread count).
    Returns the positions and the seconds making them took (0 when read)."""
    path = cache / f"starlings-3d-large-n{n}-steps{burn_in}.npy"
    if path.exists():
        return np.load(path), 0.0
    from flocksim.config import apply_overrides
    from flocksim.scenarios import load_preset
    from flocksim.simulation import Simulation

    t0 = time.perf_counter()
    params = apply_overrides(load_preset("starlings-3d-large"), [f"agents.n={n}", *PREVIOUS_START])
    sim = Simulation(params, seed=0)
    sim.step(burn_in)
    pos = np.ascontiguousarray(sim.state.position, dtype=np.float64)
    cache.mkdir(parents=True, exist_ok=True)
    np.save(path, pos)
    return pos, time.perf_counter() - t0


def tree_rows(idx: np.ndarray, k: int) -> np.ndarray:
    """(n, k) neighbours from a tree's (n, k+1) answer: the bird itself left out (it need not be
    in column 0 when another bird sits on the same point), else the last column."""
    n = idx.shape[0]
    own = idx == np.arange(n)[:, None]
    keep = ~own
    no_self = ~own.any(axis=1)
    keep[no_self, k] = False
    return idx[keep].reshape(n, k)


def check(pos: np.ndarray, rows: np.ndarray, other: np.ndarray) -> dict:
    """Rows whose neighbour sets differ, and those of them whose k-th distances differ too
    (a real disagreement; equal k-th distances are a tie broken another way)."""
    a = np.sort(rows, axis=1)
    b = np.sort(other, axis=1)
    differ = np.flatnonzero((a != b).any(axis=1))
    kth_a = np.max(np.sum((pos[rows[differ]] - pos[differ, None, :]) ** 2, axis=2), axis=1)
    kth_b = np.max(np.sum((pos[other[differ]] - pos[differ, None, :]) ** 2, axis=2), axis=1)
    return {"rows_differing": len(differ), "rows_differing_beyond_ties": int(np.count_nonzero(kth_a != kth_b))}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.ArgumentDefaultsHelpFormatter
    )
    parser.add_argument("--n", type=int, default=100_000, help="birds")
    parser.add_argument("--k", type=int, default=7, help="neighbours per bird")
    parser.add_argument("--burn-in", type=int, default=600, help="preset steps before the positions are taken")
    parser.add_argument("--rounds", type=int, default=7, help="timed calls per side, alternated")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="folder of the positions' .npy")
    parser.add_argument("--sides", default="flocksim,pykdtree,ckdtree", help="comma-separated sides to time")
    args = parser.parse_args(argv)

    import numba
    from pykdtree.kdtree import KDTree
    from scipy.spatial import cKDTree

    import flocksim
    from flocksim.neighbors.search import knn_neighbors_grid
    from flocksim.space import make_space

    load_before = os.getloadavg()
    started = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    pos, made_s = flock_positions(args.n, args.burn_in, args.cache)
    n = len(pos)
    alive = np.ones(n, dtype=bool)
    space = make_space("open", [424.0, 4.0, 424.0])
    k = args.k
    numba.set_num_threads(1)

    t0 = time.perf_counter()
    nbrs = knn_neighbors_grid(pos, alive, space, k)
    compile_s = time.perf_counter() - t0
    rows = nbrs.index.reshape(n, k)

    def run_flocksim() -> None:
        knn_neighbors_grid(pos, alive, space, k)

    def run_pykdtree() -> None:
        KDTree(pos).query(pos, k=k + 1)

    def run_ckdtree() -> None:
        cKDTree(pos).query(pos, k=k + 1, workers=1)

    sides = {"flocksim": run_flocksim, "pykdtree": run_pykdtree, "ckdtree": run_ckdtree}
    names = [s for s in args.sides.split(",") if s]
    times: dict[str, list[float]] = {s: [] for s in names}
    cpu: dict[str, list[float]] = {s: [] for s in names}
    for r in range(args.rounds):
        for s in names[r % len(names) :] + names[: r % len(names)]:
            t0 = time.perf_counter()
            c0 = time.process_time()
            sides[s]()
            cpu[s].append((time.process_time() - c0) * 1e3)
            times[s].append((time.perf_counter() - t0) * 1e3)
        print(f"round {r + 1}/{args.rounds}: " + ", ".join(f"{s} {times[s][-1]:.1f} ms" for s in names),
              file=sys.stderr)  # fmt: skip

    _, py_idx = KDTree(pos).query(pos, k=k + 1)
    _, ck_idx = cKDTree(pos).query(pos, k=k + 1, workers=1)
    median = {s: statistics.median(v) for s, v in times.items()}
    out = {
        "benchmark": "k-nearest search, one thread",
        "preset": "starlings-3d-large",
        "n": n,
        "k": k,
        "burn_in_steps": args.burn_in,
        "positions_made_s": round(made_s, 1),
        "flocksim_compile_s": round(compile_s, 2),
        "rounds": args.rounds,
        "median_ms": {s: round(v, 2) for s, v in median.items()},
        "best_ms": {s: round(min(v), 2) for s, v in times.items()},
        "all_ms": {s: [round(t, 2) for t in v] for s, v in times.items()},
        "cpu_median_ms": {s: round(statistics.median(v), 2) for s, v in cpu.items()},
        "cpu_best_ms": {s: round(min(v), 2) for s, v in cpu.items()},
        "check_pykdtree": check(pos, rows, tree_rows(py_idx.astype(np.int64), k)),
        "check_ckdtree": check(pos, rows, tree_rows(ck_idx.astype(np.int64), k)),
        "machine": machine(),
        "date": started,
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "flocksim_source": str(Path(flocksim.__file__).resolve().parent),
        "numba": numba.__version__,
        "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
    }
    for s in ("pykdtree", "ckdtree"):
        if s in median and "flocksim" in median:
            out[f"ratio_{s}"] = round(median[s] / median["flocksim"], 2)
            out[f"cpu_ratio_{s}"] = round(statistics.median(cpu[s]) / statistics.median(cpu["flocksim"]), 2)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

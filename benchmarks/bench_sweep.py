"""Sweep throughput: runs per second of a sweep of short runs on a local Dask cluster, against
the same runs one after another in this process.

Each run is boids-2d with ``--n`` agents for ``--steps`` steps, polarization and
nearest-neighbour distance sampled every 10 steps (the summaries of a typical sweep); the
runs differ by alignment weight (20 values) and seed. Both sides use one numba thread per
run and start warm (kernels loaded before the clock starts); the cluster's start-up time is
reported separately. The Dask side is the full ``flocksim sweep`` path: scheduling, the
Parquet journal and the final file.

Usage: python benchmarks/bench_sweep.py [--runs 200] [--workers 2] [--n 100] [--steps 300]
Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from pathlib import Path

os.environ.setdefault("NUMBA_NUM_THREADS", "1")

from flocksim import __version__
from flocksim.config import to_dict
from flocksim.sweep import expand, parse_sweep, run_sweep
from flocksim.sweep.runner import dask_client
from flocksim.sweep.task import Job, run_task

VALUES = 20


def make_sweep(runs: int, n: int, steps: int):
    if runs % VALUES:
        raise SystemExit(f"--runs must be a multiple of {VALUES}")
    weights = ", ".join(f"{0.1 * i:.1f}" for i in range(VALUES))
    text = f"""description = "sweep throughput benchmark"
base = "boids-2d"
set = ["agents.n={n}"]
seeds = {runs // VALUES}
steps = {steps}
[[axes]]
key = "rules.alignment.weight"
values = [{weights}]
[[summaries]]
metric = "polarization"
every = 10
[[summaries]]
metric = "nnd_mean"
every = 10
"""
    return parse_sweep(text, name="bench")


def serial(sweep) -> dict:
    job = Job(base=to_dict(sweep.base), steps=sweep.spec.steps, summaries=tuple(sweep.spec.summaries), threads=1)
    tasks = expand(sweep)
    run_task(job, tasks[0])  # warm: kernels loaded before the clock starts
    started = time.perf_counter()
    rows = [run_task(job, t) for t in tasks]
    elapsed = time.perf_counter() - started
    assert all(r["status"] == "ok" for r in rows)
    return {
        "seconds": elapsed,
        "runs_per_s": len(rows) / elapsed,
        "run_wall_s_mean": sum(r["wall_s"] for r in rows) / len(rows),
    }


def on_dask(sweep, workers: int) -> dict:
    started = time.perf_counter()
    with dask_client(workers=workers) as client:
        start_s = time.perf_counter() - started
        job = Job(base=to_dict(sweep.base), steps=1, summaries=tuple(sweep.spec.summaries[:1]), threads=1)
        warm = [
            client.submit(run_task, job, expand(sweep)[0], workers=[w], allow_other_workers=False, pure=False)
            for w in client.nthreads()
        ]
        client.gather(warm)
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "bench.parquet"
            t0 = time.perf_counter()
            report = run_sweep(sweep, out, client=client)
            elapsed = time.perf_counter() - t0
    assert report.ok == sweep.n_tasks, report.line()
    return {"seconds": elapsed, "runs_per_s": sweep.n_tasks / elapsed, "cluster_start_s": start_s, "workers": workers}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--steps", type=int, default=300)
    args = parser.parse_args()
    sweep = make_sweep(args.runs, args.n, args.steps)
    one = serial(sweep)
    dask = on_dask(sweep, args.workers)
    print(
        json.dumps(
            {
                "benchmark": "sweep",
                "runs": sweep.n_tasks,
                "agents": args.n,
                "steps": args.steps,
                "one_process": one,
                "dask_local": dask,
                "speedup": dask["runs_per_s"] / one["runs_per_s"],
                "cpu_count": os.cpu_count(),
                "machine": platform.machine(),
                "python": platform.python_version(),
                "flocksim": __version__,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()

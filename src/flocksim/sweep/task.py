"""What a Dask worker does for one task: build the parameters, run, summarize, return one row.

Everything here runs in the worker process. numba loads (or compiles) the kernels the
first time a kind of run (model, dimension, neighbour mode and method, region) appears in
the process, in a separate warm-up whose time goes to ``compile_s``; later tasks of that
kind in the same process reuse the loaded kernels (``compile_s`` = 0), so kernels warm
once per worker, not once per task.
"""

from __future__ import annotations

import math
import os
import socket
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from flocksim.sweep.expand import Task
from flocksim.sweep.spec import Summary, override_text

STATUS_OK = "ok"
STATUS_FAILED = "failed"  # the run itself raised: kept by --resume (it would fail again)
STATUS_LOST = "lost"  # Dask gave up on the task (workers kept dying): run again by --resume

_WARM: set[tuple[Any, ...]] = set()
_STATS = {"warm_ups": 0, "tasks": 0}


@dataclass(frozen=True)
class Job:
    """What every task of one sweep shares: base parameters (as a plain dict), steps per
    run, the summaries, the numba threads per run and the engine ("cpu" or "cuda")."""

    base: dict[str, Any]
    steps: int
    summaries: tuple[Summary, ...]
    threads: int = 1
    engine: str = "cpu"


def worker_stats() -> dict[str, int]:
    """Warm-ups and tasks run so far in this process (``client.run(worker_stats)``)."""
    return {**_STATS, "pid": os.getpid()}


def _warm(sim: Any) -> float:
    """Load or compile the kernels this kind of run needs, once per process; seconds spent."""
    p = sim.params
    q = sim.model.neighbor_query()  # the research models have no neighbors.mode: their model fixes it
    key = (p.model, p.world.dim, p.world.bounds.kind, q.mode, q.method)
    if key in _WARM:
        return 0.0
    started = time.perf_counter()
    sim.warm_up()
    sim.metrics()
    _WARM.add(key)
    _STATS["warm_ups"] += 1
    return time.perf_counter() - started


def summarize(
    summaries: tuple[Summary, ...] | list[Summary], samples: dict[int, dict[str, float]], dt: float, steps: int
) -> dict[str, float]:
    """Each summary's statistic over its sample steps; ``samples`` maps step -> metric row."""
    out: dict[str, float] = {}
    for summary in summaries:
        at = summary.sample_steps(steps, dt)
        if not at:
            raise ValueError(f"summary {summary.column}: no sample step inside window {list(summary.window or ())} s")
        x = np.array([samples[s][summary.metric] for s in at], dtype=float)
        out[summary.column] = _statistic(summary, x)
    return out


def _statistic(summary: Summary, x: np.ndarray) -> float:
    stat = summary.stat
    if stat == "final":
        return float(x[-1])
    if stat == "fraction-below":
        return float(np.mean(x < summary.threshold))
    if stat == "fraction-above":
        return float(np.mean(x > summary.threshold))
    return float({"mean": np.mean, "median": np.median, "std": np.std, "min": np.min, "max": np.max}[stat](x))


def numba_threads_from_environment() -> None:
    """Make numba read NUMBA_NUM_THREADS again unless its threads already run.

    numba reads the variable when it is imported. A spawned Dask worker re-imports the parent's main
    module (the ``flocksim`` console script imports numba) before its Nanny sets the worker's
    environment, so numba holds the core count while the environment says ``--threads``; the first
    compile in that process re-reads the environment after the threads have started and fails
    ("Cannot set NUMBA_NUM_THREADS ..."), which made every run of a sweep fail on a cold kernel cache.
    """
    import numba
    from numba.np.ufunc import parallel

    if not parallel._is_initialized:  # afterwards the thread count is fixed for the process
        numba.config.reload_config()


def run_task(job: Job, task: Task) -> dict[str, Any]:
    """Run one simulation of the sweep and return its row (never raises for a bad run:
    the error goes into the row with status ``failed``)."""
    from flocksim._version import __version__
    from flocksim.config import apply_overrides, validate
    from flocksim.simulation import Simulation

    if _STATS["tasks"] == 0:
        numba_threads_from_environment()
    _STATS["tasks"] += 1
    row: dict[str, Any] = {
        "task_id": task.task_id,
        **task.values,
        "seed": task.seed,
        **{s.column: math.nan for s in job.summaries},
        "status": STATUS_OK,
        "error": None,
        "steps": 0,
        "wall_s": 0.0,
        "compile_s": 0.0,
        "worker": f"{socket.gethostname()}:{os.getpid()}",
        "flocksim_version": __version__,
    }
    started = time.perf_counter()
    compile_s = 0.0
    sim = None
    try:
        params = apply_overrides(validate(job.base), [override_text(k, v) for k, v in task.point])
        threads = job.threads if job.engine == "cpu" else None  # the GPU's threads are not chosen
        sim = Simulation(params, seed=task.seed, engine=job.engine, threads=threads)
        compile_s = _warm(sim)
        wanted = sorted({s for summary in job.summaries for s in summary.sample_steps(job.steps, sim.dt)})
        samples: dict[int, dict[str, float]] = {}
        for step in wanted:
            sim.step(step - sim.steps)
            samples[step] = sim.metrics()
        sim.step(job.steps - sim.steps)
        row.update(summarize(job.summaries, samples, sim.dt, job.steps))
    except Exception as exc:
        row["status"] = STATUS_FAILED
        row["error"] = one_line(exc)
    row["steps"] = sim.steps if sim is not None else 0
    row["compile_s"] = compile_s
    row["wall_s"] = time.perf_counter() - started - compile_s
    return row


def one_line(exc: BaseException) -> str:
    """``Type: message`` on one line (at most 500 characters)."""
    text = " ".join(str(exc).split())
    text = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    return text if len(text) <= 500 else text[:497] + "..."

"""Running a sweep on Dask distributed.

By default a :class:`distributed.LocalCluster` of worker processes (one thread each, one
process per core as far as memory allows: :func:`flocksim.sweep.cluster.local_workers`) is
started for the sweep and closed after it; ``scheduler="tcp://..."`` uses an existing cluster
instead (``dask scheduler`` / ``dask worker``), and ``client=`` an existing
:class:`distributed.Client`. Each task runs one simulation and returns one row
(:func:`flocksim.sweep.task.run_task`). At most a few tasks per worker thread are submitted at
a time, so a sweep of a million runs does not flood the scheduler and an
interruption stops quickly.

When a worker process dies, Dask re-runs its tasks on the other workers (and a nanny
restarts it); each task's future resolves once, so every row arrives exactly once. A
task whose workers die ``distributed.scheduler.allowed-failures`` times is recorded with
status ``lost``; ``--resume`` runs it again.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from flocksim.config import to_dict
from flocksim.engines import ENGINES
from flocksim.sweep.cluster import SCHEDULER_TIMEOUT_S, check_scheduler, local_workers
from flocksim.sweep.expand import Task, expand
from flocksim.sweep.results import ResultsStore
from flocksim.sweep.spec import Sweep, SweepError
from flocksim.sweep.task import STATUS_FAILED, STATUS_LOST, STATUS_OK, Job, one_line, run_task

WINDOW_PER_THREAD = 4
MIN_WINDOW = 16


@dataclass
class SweepReport:
    """How a sweep went: runs in the sweep, rows found from before (``resumed``), runs done
    now (``ran``), status counts over every row of the output, seconds, worker processes."""

    name: str
    output: Path
    total: int
    resumed: int
    ran: int
    ok: int
    failed: int
    lost: int
    elapsed_s: float
    workers: int
    interrupted: bool = False

    @property
    def rate(self) -> float:
        """Runs per second of this invocation."""
        return self.ran / self.elapsed_s if self.elapsed_s > 0 else float("inf")

    def line(self) -> str:
        """The closing one-line summary."""
        head = "interrupted" if self.interrupted else "sweep"
        done = self.ok + self.failed + self.lost
        text = (
            f"{head} {self.name}: {done} of {self.total} runs in {self.output} ({self.ran} run now, "
            f"{self.resumed} resumed; {self.ok} ok, {self.failed} failed, {self.lost} lost) in {self.elapsed_s:.1f} s "
            f"on {self.workers} workers, {self.rate:.2f} runs/s"
        )
        if self.interrupted or self.lost:
            text += "; continue with --resume"
        return text


class _Rate(ProgressColumn):
    def render(self, task: Any) -> Text:
        speed = task.finished_speed or task.speed
        return Text("-- runs/s" if speed is None else f"{speed:.2f} runs/s", style="progress.data.speed")


@contextmanager
def dask_client(
    scheduler: str | None = None, workers: int | None = None, threads: int = 1, console: Console | None = None
):
    """A :class:`distributed.Client`: connected to ``scheduler`` if given, else to a new
    LocalCluster of ``workers`` processes (default: one per core) with one thread each,
    whose numba runs ``threads`` threads. Closed (with its cluster) on exit."""
    from distributed import Client, LocalCluster

    if scheduler is not None:
        if workers is not None:
            raise SweepError("--workers: applies to the local cluster only; allowed: --workers or --scheduler")
        check_scheduler(scheduler)  # Client's own timeout does not cover the handshake: it would hang
        try:
            client = Client(scheduler, timeout=f"{SCHEDULER_TIMEOUT_S}s")
        except (OSError, TimeoutError, ValueError) as exc:
            raise SweepError(f"--scheduler: cannot connect to {scheduler!r} ({one_line(exc)})") from None
        try:
            yield client
        finally:
            client.close()
        return
    n, note = local_workers(workers)  # refuses more than the cores or the memory allow
    if note is not None:
        (console or Console(stderr=True)).print(note, markup=False, highlight=False, soft_wrap=True)
    cluster = None
    try:
        with _status(console, f"starting a local Dask cluster of {n} worker processes"):
            with _workers_ignore_ctrl_c():
                cluster = LocalCluster(
                    n_workers=n,
                    threads_per_worker=1,
                    processes=True,
                    dashboard_address=None,
                    scheduler_kwargs={"dashboard_address": ":0"},  # its health/metrics HTTP server: any free port
                    silence_logs=logging.CRITICAL,  # worker trouble shows in the rows (status lost), not as log noise
                    env={"NUMBA_NUM_THREADS": str(threads)},
                )
            client = Client(cluster)
    except BaseException:
        if cluster is not None:
            cluster.close()
        raise
    try:
        yield client
    finally:
        with _workers_ignore_ctrl_c():  # a second Ctrl-C does not cut the closing short
            client.close()
            cluster.close()


@contextmanager
def _workers_ignore_ctrl_c():
    """SIGINT ignored while the worker processes start, which they inherit (an ignored signal stays
    ignored across exec, and Python then installs no KeyboardInterrupt handler): Ctrl-C at a
    terminal signals the whole process group, and each worker would die with a KeyboardInterrupt
    or EOFError traceback while this process closes the cluster in order. A Ctrl-C during the
    start (a few seconds, under "starting a local Dask cluster") is lost; a worker that a nanny
    restarts later takes Ctrl-C as before. Only in the main thread, where signal handlers live."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


PROGRESS_EVERY_S = 30.0
"""Where standard error is not a terminal, a sweep says how far it got at least this often."""


def _say_progress(done: int, total: int, since_s: float) -> bool:
    """Whether a sweep without a terminal prints a line after its ``done``-th run of ``total``: the
    first and the last, each tenth of the way, and at least every :data:`PROGRESS_EVERY_S` seconds."""
    return done in (1, total) or done * 10 // total > (done - 1) * 10 // total or since_s >= PROGRESS_EVERY_S


@contextmanager
def _status(console: Console | None, message: str):
    """A spinner with ``message`` on a terminal; elsewhere (a pipe, a log file) the message as one line."""
    if console is None:
        yield
        return
    if not console.is_terminal:
        console.print(message, markup=False, highlight=False, soft_wrap=True)
        yield
        return
    with console.status(message):
        yield


def run_sweep(
    sweep: Sweep,
    output: str | Path,
    *,
    client: Any = None,
    scheduler: str | None = None,
    workers: int | None = None,
    resume: bool = False,
    force: bool = False,
    threads: int = 1,
    console: Console | None = None,
    engine: str = "cpu",
    on_row: Callable[[dict[str, Any]], None] | None = None,
    flush_s: float = 1.0,
) -> SweepReport:
    """Run every task of ``sweep`` not already in ``output`` (with ``resume``) and write the rows.

    ``client`` (a :class:`distributed.Client`) wins over ``scheduler`` (an address), which
    wins over a new local cluster of ``workers`` processes. ``threads``: numba threads per
    run (1: the parallelism is one run per worker process). ``engine``: "cpu" or "cuda" (every
    worker runs its simulations on the GPU; docs/gpu.md). ``console``: where the progress
    bar goes (None: no bar). ``on_row(row)`` is called in this process for each new row.
    A KeyboardInterrupt stops the sweep cleanly: the rows so far are written, and the report
    says ``interrupted``. Bad options raise :class:`SweepError` before any work starts.
    """
    if threads < 1:
        raise SweepError(f"--threads: must be >= 1, got {threads}")
    if engine not in ENGINES:
        raise SweepError(f"--engine: unknown engine {engine!r}; allowed: {', '.join(ENGINES)}")
    if engine == "cuda":
        from flocksim.kernels.cuda_runtime import cuda_problem

        problem = cuda_problem()
        if problem is not None:
            raise SweepError(problem)
    if workers is not None and scheduler is not None and client is None:
        raise SweepError("--workers: applies to the local cluster only; allowed: --workers or --scheduler")
    if workers is not None and client is None:
        local_workers(workers)  # refused before the output is touched
    store = ResultsStore(sweep, output, resume=resume, force=force, flush_s=flush_s)
    tasks = expand(sweep)
    todo = [t for t in tasks if t.task_id not in store.done]
    resumed = len(tasks) - len(todo)
    job = Job(base=to_dict(sweep.base), steps=sweep.spec.steps, summaries=tuple(sweep.spec.summaries), threads=threads,
              engine=engine)  # fmt: skip
    started = time.perf_counter()
    result = (0, 0, False)
    try:
        if todo and client is not None:
            result = _execute(client, job, todo, store, sweep, resumed, console, on_row)
        elif todo:
            with dask_client(scheduler, workers, threads, console) as own:
                result = _execute(own, job, todo, store, sweep, resumed, console, on_row)
    finally:
        table = store.finalize([t.task_id for t in tasks])  # what is done is kept, whatever happened
    ran, n_workers, interrupted = result
    status = table.column("status").to_pylist()
    return SweepReport(
        name=sweep.name,
        output=store.path,
        total=len(tasks),
        resumed=resumed,
        ran=ran,
        ok=status.count(STATUS_OK),
        failed=status.count(STATUS_FAILED),
        lost=status.count(STATUS_LOST),
        elapsed_s=time.perf_counter() - started,
        workers=n_workers,
        interrupted=interrupted,
    )


def _execute(
    client: Any,
    job: Job,
    todo: list[Task],
    store: ResultsStore,
    sweep: Sweep,
    resumed: int,
    console: Console | None,
    on_row: Callable[[dict[str, Any]], None] | None,
) -> tuple[int, int, bool]:
    """Submit ``todo`` through a window of futures and store each row as it arrives.
    Returns (rows stored, most worker processes seen at once, interrupted)."""
    from distributed import as_completed

    prefix = f"flocksim-sweep-{sweep.name}-{uuid.uuid4().hex[:8]}"  # fresh keys: never a cached result
    queue = iter(todo)
    inflight: dict[str, tuple[Task, Any]] = {}
    pending = as_completed()

    def capacity() -> tuple[int, int]:
        nthreads = client.nthreads()
        return max(MIN_WINDOW, WINDOW_PER_THREAD * sum(nthreads.values())), len(nthreads)

    def submit(count: int) -> None:
        for _ in range(count):
            task = next(queue, None)
            if task is None:
                return
            future = client.submit(run_task, job, task, key=f"{prefix}-{task.index}", pure=False)
            inflight[future.key] = (task, future)
            pending.add(future)

    window, n_workers = capacity()
    if n_workers == 0 and console is not None:
        console.print(f"waiting for workers to join {client.scheduler.address}", markup=False, highlight=False)
    progress = Progress(
        TextColumn(f"[bold]{sweep.name}", markup=True),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("runs"),
        _Rate(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.fields[note]}", style="dim"),
        console=console,
        disable=console is None or not console.is_terminal,  # no bar where nobody watches it (lines below)
        transient=True,
    )
    ran = 0
    interrupted = False
    checked = time.monotonic()
    lines = console is not None and not console.is_terminal  # no bar where nobody watches: lines instead
    said, began = 0.0, time.monotonic()
    with progress:
        note = "(the first runs load or compile the numba kernels)"
        bar = progress.add_task("sweep", total=resumed + len(todo), completed=resumed, note=note)
        try:
            submit(window)
            for future in pending:
                task, _ = inflight.pop(future.key)
                try:
                    row = future.result()
                except (Exception, asyncio.CancelledError) as exc:
                    if client.status != "running":
                        raise SweepError(
                            f"lost the connection to the Dask scheduler ({one_line(exc)}); rows so far are in "
                            f"{store.path}: continue with --resume"
                        ) from None
                    row = lost_row(job, task, exc)
                future.release()
                store.add(row)
                ran += 1
                progress.update(bar, advance=1, note="")
                if lines and _say_progress(ran, len(todo), time.monotonic() - said):
                    said = time.monotonic()
                    console.print(
                        f"sweep {sweep.name}: {resumed + ran} of {resumed + len(todo)} runs done, {said - began:.0f} s",
                        markup=False,
                        highlight=False,
                        soft_wrap=True,
                    )
                if on_row is not None:
                    on_row(row)
                if time.monotonic() - checked > 2.0:
                    window, now = capacity()
                    n_workers = max(n_workers, now)
                    checked = time.monotonic()
                submit(max(window - len(inflight), 0))
        except KeyboardInterrupt:
            interrupted = True
            client.cancel([future for _, future in inflight.values()])
    return ran, max(n_workers, len(client.nthreads())), interrupted


def lost_row(job: Job, task: Task, exc: BaseException) -> dict[str, Any]:
    """The row of a task that Dask gave up on (status ``lost``)."""
    from flocksim._version import __version__

    return {
        "task_id": task.task_id,
        **task.values,
        "seed": task.seed,
        **{s.column: float("nan") for s in job.summaries},
        "status": STATUS_LOST,
        "error": one_line(exc),
        "steps": 0,
        "wall_s": 0.0,
        "compile_s": 0.0,
        "worker": None,
        "flocksim_version": __version__,
    }

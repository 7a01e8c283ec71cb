"""`flocksim run`: run a preset or a TOML file headless, write metrics and a trajectory store, resume one."""

from __future__ import annotations

import csv
import math
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from flocksim.atomic import is_stdout
from flocksim.cli_common import (
    ENGINE_HELP,
    Overrides,
    UsageError,
    atomic_output,
    check_output_path,
    err,
    fail,
    no_bar,
    out,
    resolve_params,
)
from flocksim.compile_notice import CompileNotice, announce_compiles, compile_estimate
from flocksim.config import ConfigError
from flocksim.metrics import METRIC_NAMES


def run(
    target: Annotated[
        str | None,
        typer.Argument(
            help="Preset name (see `flocksim presets`) or a parameter TOML file (none with --resume).",
            show_default=False,
        ),
    ] = None,
    steps: Annotated[
        int | None,
        typer.Option(min=0, help="Steps to run (default 600); with --resume: the run's total (default: as started)."),
    ] = None,
    seed: Annotated[int | None, typer.Option(min=0, help="Random seed (default: the parameters' seed).")] = None,
    overrides: Overrides = None,
    metrics: Annotated[Path | None, typer.Option(help="Write metrics as CSV to this file.")] = None,
    every: Annotated[
        int | None, typer.Option(min=1, help="Record metrics and trajectory frames every M steps (default 10).")
    ] = None,
    out_store: Annotated[
        Path | None,
        typer.Option("--out", help="Record the run into this new Zarr v3 trajectory store (e.g. run.zarr)."),
    ] = None,
    resume_store: Annotated[
        Path | None,
        typer.Option("--resume", help="Continue the run recorded in this store from its newest checkpoint."),
    ] = None,
    from_intact: Annotated[
        bool,
        typer.Option(
            "--from-intact-checkpoint",
            help="With --resume, when a checkpoint is damaged or missing: resume from the newest intact one and "
            "rewrite the frames after it.",
        ),
    ] = False,
    checkpoint_every: Annotated[
        int | None, typer.Option(min=1, help="With --out: steps between checkpoints (default: one per 30 s).")
    ] = None,
    precision: Annotated[
        str | None, typer.Option(help="With --out: float32 (default) | float64 for positions and velocities.")
    ] = None,
    engine: Annotated[str, typer.Option(help=ENGINE_HELP)] = "cpu",
    threads: Annotated[
        int | None, typer.Option(min=1, help="CPU threads (default: NUMBA_NUM_THREADS or all cores).")
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
    force: Annotated[
        bool, typer.Option("--force", help="Replace a --metrics file that exists (never a store: see --resume).")
    ] = False,
) -> None:
    """Run a simulation headless and print a one-line summary.

    Example: flocksim run boids-2d --steps 3600 --seed 3 --set rules.alignment.weight=0.5 --metrics m.csv

    Recording: flocksim run starlings-3d --steps 6000 --out run.zarr --every 10

    Continue it after Ctrl-C, a crash or a kill: flocksim run --resume run.zarr

    Its newest checkpoint damaged: flocksim run --resume run.zarr --from-intact-checkpoint

    The first run after an install or an update compiles the kernels: one line on standard error
    says so and for how long, and the progress bar shows it.
    """
    display = _CompileDisplay(quiet)
    with display, announce_compiles(target or "the run", on_compile=display.show) as notice:  # one line for the run
        _run(target, steps, seed, overrides, metrics, every, out_store, resume_store, checkpoint_every, precision,
             engine, threads, quiet, notice, display, force, from_intact)  # fmt: skip


def _run(target, steps, seed, overrides, metrics, every, out_store, resume_store, checkpoint_every, precision,
         engine, threads, quiet, notice, display, force, from_intact) -> None:  # fmt: skip
    try:
        if from_intact and resume_store is None:
            raise UsageError("--from-intact-checkpoint: applies to --resume STORE")
        if resume_store is not None:
            given = (target, seed, out_store, metrics, precision)
            if overrides or any(option is not None for option in given):
                raise UsageError(
                    "--resume: parameters, seed, precision and store come from the store; drop TARGET, --set, --seed, "
                    "--out, --metrics, --precision"
                )
            resumed = _resume_run(resume_store, steps, every, checkpoint_every, threads, notice, from_intact)
            if resumed is None:
                return
            sim, name, steps = resumed
            every = sim.recorder.every
            pending = None
        else:
            if target is None:
                raise UsageError("target: missing; allowed: a preset name, a parameter TOML file, or --resume STORE")
            steps = 600 if steps is None else steps
            every = 10 if every is None else every
            sim, name, pending = _start_run(
                target, overrides, seed, engine, threads, metrics, steps, every, out_store, checkpoint_every, precision,
                notice, force,
            )  # fmt: skip
    except (ConfigError, UsageError, ValueError) as exc:
        fail(str(exc))
        return
    columns = ["step", "time", *METRIC_NAMES]
    compile_s = 0.0
    if steps:  # before the store exists: a failure leaves nothing behind
        compile_s = sim.warm_up(name)
        started = time.perf_counter()
        sim.metrics()  # its kernels too: nothing compiles once the steps' bar shows
        compile_s += time.perf_counter() - started
    display.stop()
    if pending is not None:
        pending.start(sim)
        sim.recorder = pending
    recorder = sim.recorder
    summary = err if is_stdout(metrics) else out  # the CSV has standard output to itself
    started = time.perf_counter()
    with atomic_output(metrics) as handle:
        writer = csv.DictWriter(handle, fieldnames=columns) if handle else None
        if writer:
            writer.writeheader()
            writer.writerow(_row(sim, columns))
        progress = Progress(
            TextColumn(f"[bold]{name}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("steps"),
            TimeRemainingColumn(),
            console=err,
            disable=no_bar(quiet, err),
            transient=True,
        )
        with progress, _graceful_interrupt(recorder is not None or writer is not None) as interrupted:
            task = progress.add_task("run", total=steps)
            done = 0
            while done < steps and not interrupted:
                chunk = min(every - (sim.steps % every), steps - done)
                sim.step(chunk)
                done += chunk
                progress.update(task, completed=done)
                if writer and (sim.steps % every == 0 or done == steps):
                    writer.writerow(_row(sim, columns))
    if recorder is not None:
        recorder.close(sim)
    if interrupted:
        kept = []
        if recorder is not None:
            kept.append(f"checkpoint written; resume with: flocksim run --resume {recorder.path}")
        if writer is not None:
            where = "standard output" if is_stdout(metrics) else str(metrics)
            kept.append(f"metrics of steps 0 to {sim.steps} kept in {where}")
        err.print(f"interrupted at step {sim.steps}; {'; '.join(kept)}", markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(130)
    steps = done
    elapsed = time.perf_counter() - started
    from flocksim.game.flappy import summary_text as game_summary

    final = sim.metrics()
    rate = steps / elapsed if elapsed > 0 else float("inf")
    summary.print(
        f"{name}: {steps} steps ({sim.time:.2f} s simulated, {sim.state.n_alive} agents) in {elapsed:.2f} s "
        f"(+{compile_s:.1f} s compile), {rate_text(rate)} steps/s; polarization {final['polarization']:.3f}, "
        f"mean neighbours {final['mean_neighbors']:.2f}"
        + game_summary(sim)
        + (f"; {recorder.frames} frames in {recorder.path}" if recorder is not None else ""),
        markup=False,
        highlight=False,
        soft_wrap=True,
    )


def rate_text(rate: float) -> str:
    """Steps per second as the summary writes it: whole numbers from 100 up, three significant digits
    below (a million agents run under one step a second: "0 steps/s" said nothing)."""
    return f"{rate:.0f}" if rate >= 100 or not math.isfinite(rate) else f"{rate:.3g}"


def _start_run(
    target, overrides, seed, engine, threads, metrics, steps, every, store, checkpoint_every, precision, notice, force
):
    """A new Simulation for `run` and, with ``store``, its Recorder (not started yet: the CLI
    starts it once the kernels compiled, so a failure before leaves no store behind);
    (simulation, display name, recorder or None). ``notice``: the run's compile notice, told
    the name and parameters before the Simulation compiles anything."""
    from flocksim.io import Recorder
    from flocksim.scenarios import preset_names
    from flocksim.simulation import Simulation

    params = resolve_params(target, overrides)
    check_output_path("--metrics", metrics, force=force, stdout_ok=True)
    name = Path(target).stem if target.endswith(".toml") else target
    recorder = None
    if store is not None:
        if store.exists():
            raise UsageError(
                f"--out: {store} already exists; allowed: a new path (or --resume {store} to continue it; "
                "--force never replaces a store)"
            )
        check_output_path("--out", store, force=False)
        preset = target if target in preset_names() and not Path(target).is_file() else None
        attrs = {"source": target, "preset": preset, "overrides": list(overrides or []), "steps_requested": steps}
        recorder = Recorder(
            store, every, checkpoint_every=checkpoint_every, precision=precision or "float32", attrs=attrs
        )
    elif checkpoint_every is not None or precision is not None:
        raise UsageError("--checkpoint-every and --precision apply to a recorded run; add --out STORE")
    notice.what = name
    notice.estimate_s = (lambda: compile_estimate(params, name)) if engine == "cpu" else None
    return Simulation(params, seed=seed, engine=engine, threads=threads), name, recorder


def _resume_run(store, steps, every, checkpoint_every, threads, notice, from_intact=False):
    """The simulation of ``store`` at its newest checkpoint (with ``from_intact``, when a
    checkpoint is damaged: at the newest intact one, said on standard error); (simulation,
    name, steps left to run), or None (after saying so) when the run is already at the total
    asked for: then nothing in the store is touched. The store is verified before anything is
    written into it."""
    from flocksim.config import validate
    from flocksim.io import TrajectoryStore, resume
    from flocksim.io.resuming import resume_point

    reader = TrajectoryStore.open(store)
    attrs = reader.attrs
    source = str(attrs.get("source") or store)
    name = Path(source).stem if source.endswith(".toml") else source
    if every is not None and every != attrs.get("every"):
        raise UsageError(f"--every: the run records every {attrs.get('every')} steps; drop --every or pass that")
    total = steps if steps is not None else attrs.get("steps_requested")
    if total is None:
        raise UsageError(f"--steps: {store} does not say how many steps it was started for; pass the total")
    start, damage = resume_point(reader, from_intact)  # a damaged checkpoint: refused, or the intact one
    at = start["steps"] if start is not None else 0
    if start is not None and total <= at:
        out.print(f"{name}: already at step {at}; nothing to run (--steps N sets a larger total)")
        return None
    notice.what = name
    if attrs.get("engine", "cpu") == "cpu":
        notice.estimate_s = lambda: compile_estimate(validate(attrs["params"]), attrs.get("preset"))
    sim = resume(store, threads=threads, checkpoint_every=checkpoint_every, from_intact_checkpoint=from_intact)
    if damage is not None:
        err.print(
            f"note: {damage}; resuming from checkpoint {start['name']} (step {at}), the newest intact one, and "
            "rewriting the frames after it",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
    if total != attrs.get("steps_requested"):
        sim.recorder.store.set_attrs(steps_requested=total)
    return sim, name, total - sim.steps


class _CompileDisplay:
    """In a terminal, while the kernels compile: the run's name, a spinner, "compiling kernels
    (first run only, about 20 s)" and the time elapsed, from the first compile (``show``, the
    notice's callback) to the end of the warm-up (``stop``); then the steps' bar takes over.
    Nothing without a compile, with ``quiet`` or when standard error is not a terminal."""

    def __init__(self, quiet: bool):
        self.progress = Progress(
            SpinnerColumn(),
            TextColumn("[bold]{task.fields[name]}"),
            TextColumn("{task.description}"),
            TimeElapsedColumn(),
            console=err,
            disable=no_bar(quiet, err),
            transient=True,
        )
        self.shown = False
        self.over = False  # the warm-up is over: a later compile (rare) leaves the steps' bar alone

    def show(self, notice: CompileNotice) -> None:
        if self.shown or self.over:
            return
        self.shown = True
        self.progress.add_task(f"compiling kernels (first run only, {notice.duration})", total=None, name=notice.what)
        self.progress.start()

    def stop(self) -> None:
        self.over = True
        if self.shown:
            self.progress.stop()
            self.shown = False

    def __enter__(self) -> _CompileDisplay:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


@contextmanager
def _graceful_interrupt(enabled: bool):
    """While recording, the first Ctrl-C asks the run loop to stop at the next frame (the
    recorder then writes a checkpoint); a second one interrupts at once."""
    import signal
    import threading

    flag: list[bool] = []
    if not enabled or threading.current_thread() is not threading.main_thread():
        yield flag
        return

    def handler(signum, frame):
        flag.append(True)
        signal.signal(signal.SIGINT, previous)

    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield flag
    finally:
        if not flag:
            signal.signal(signal.SIGINT, previous)


def _row(sim, columns: list[str]) -> dict[str, float]:
    m = sim.metrics()
    m["step"] = int(m["step"])
    return {c: m[c] for c in columns}


def register(app: typer.Typer) -> None:
    app.command()(run)

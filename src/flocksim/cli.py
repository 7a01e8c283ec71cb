"""The ``flocksim`` command line: run, presets, show, schema."""

from __future__ import annotations

import csv
import json
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from flocksim.atomic import OutputError, atomic_open, check_output, is_stdout
from flocksim.budgets import BudgetError
from flocksim.config import AnyParams, ConfigError, apply_overrides, dumps_toml, load_toml
from flocksim.metrics import METRIC_NAMES
from flocksim.params import params_json_schema
from flocksim.scenarios import load_preset, preset_descriptions

# click's exception base, found through typer's public BadParameter (click is vendored in newer typers)
_ClickError = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")


@contextmanager
def _one_line_usage_errors():
    """Errors found while parsing the command line (bad option value, unknown option or
    command, missing argument) print as one line, like flocksim's own checks; so does a size
    budget exceeded while a command runs (exit status 2)."""
    try:
        yield
    except _ClickError as exc:
        if type(exc).__name__ == "NoArgsIsHelpError":
            raise
        err.print(f"error: {exc.format_message()}", markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(exc.exit_code) from None
    except BudgetError as exc:
        err.print(f"error: {exc}", markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None


class _OneLineErrors(typer.core.TyperGroup):
    def make_context(self, *args, **kwargs):
        with _one_line_usage_errors():
            return super().make_context(*args, **kwargs)

    def invoke(self, ctx):
        with _one_line_usage_errors():
            return super().invoke(ctx)


app = typer.Typer(
    cls=_OneLineErrors,
    name="flocksim",
    help="Simulate flocks, schools, crowds and swarms. Example: flocksim run starlings-2d --steps 600",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
out = Console()
err = Console(stderr=True)

Overrides = Annotated[
    list[str] | None,
    typer.Option("--set", help="Override a parameter, e.g. --set rules.alignment.weight=0.5 (repeatable)."),
]


class UsageError(Exception):
    """Bad input found by flocksim itself: printed as one line, exit status 2."""


def fail(message: str) -> None:
    err.print(f"error: {message}", markup=False, highlight=False, soft_wrap=True)
    raise typer.Exit(2)


def resolve_params(target: str, overrides: list[str] | None) -> AnyParams:
    """A preset name or a TOML file, with dotted overrides applied."""
    path = Path(target)
    params = load_toml(path) if target.endswith(".toml") or path.is_file() else load_preset(target)
    return apply_overrides(params, overrides or [])


@contextmanager
def atomic_output(path: Path | None):
    """A text handle for ``path`` (None: no handle), written as :func:`flocksim.atomic.atomic_open`
    does: ``-`` is standard output, a FIFO or device is written straight into, a file (or the
    file a link points to) is replaced only if the block succeeds."""
    if path is None:
        yield None
        return
    with atomic_open(path, "w", newline="", encoding="utf-8") as handle:
        yield handle


def check_output_path(option: str, path: Path | None, stdout_ok: bool = False) -> None:
    """Refuse an output path that cannot be written (see :func:`flocksim.atomic.check_output`)."""
    try:
        check_output(option, path, stdout_ok=stdout_ok)
    except OutputError as exc:
        raise UsageError(str(exc)) from None


@app.command()
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
    checkpoint_every: Annotated[
        int | None, typer.Option(min=1, help="With --out: steps between checkpoints (default: one per 30 s).")
    ] = None,
    precision: Annotated[
        str | None, typer.Option(help="With --out: float32 (default) | float64 for positions and velocities.")
    ] = None,
    engine: Annotated[
        str, typer.Option(help="Engine: cpu | cuda (an NVIDIA GPU; pip install 'flocksim[cuda]', docs/gpu.md).")
    ] = "cpu",
    threads: Annotated[
        int | None, typer.Option(min=1, help="CPU threads (default: NUMBA_NUM_THREADS or all cores).")
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
) -> None:
    """Run a simulation headless and print a one-line summary.

    Example: flocksim run boids-2d --steps 3600 --seed 3 --set rules.alignment.weight=0.5 --metrics m.csv

    Recording: flocksim run starlings-3d --steps 6000 --out run.zarr --every 10

    Continue it after Ctrl-C, a crash or a kill: flocksim run --resume run.zarr
    """
    try:
        if resume_store is not None:
            given = (target, seed, out_store, metrics, precision)
            if overrides or any(option is not None for option in given):
                raise UsageError(
                    "--resume: parameters, seed, precision and store come from the store; drop TARGET, --set, --seed, "
                    "--out, --metrics, --precision"
                )
            resumed = _resume_run(resume_store, steps, every, checkpoint_every, threads)
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
                target, overrides, seed, engine, threads, metrics, steps, every, out_store, checkpoint_every, precision
            )
    except (ConfigError, UsageError, ValueError) as exc:
        fail(str(exc))
        return
    columns = ["step", "time", *METRIC_NAMES]
    compile_s = sim.warm_up() if steps else 0.0  # before the store exists: a failure leaves nothing behind
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
            disable=quiet,
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
        f"(+{compile_s:.1f} s compile), {rate:.0f} steps/s; polarization {final['polarization']:.3f}, "
        f"mean neighbours {final['mean_neighbors']:.2f}"
        + game_summary(sim)
        + (f"; {recorder.frames} frames in {recorder.path}" if recorder is not None else ""),
        markup=False,
        highlight=False,
        soft_wrap=True,
    )


def _start_run(target, overrides, seed, engine, threads, metrics, steps, every, store, checkpoint_every, precision):
    """A new Simulation for `run` and, with ``store``, its Recorder (not started yet: the CLI
    starts it once the kernels compiled, so a failure before leaves no store behind);
    (simulation, display name, recorder or None)."""
    from flocksim.io import Recorder
    from flocksim.scenarios import preset_names
    from flocksim.simulation import Simulation

    params = resolve_params(target, overrides)
    check_output_path("--metrics", metrics, stdout_ok=True)
    name = Path(target).stem if target.endswith(".toml") else target
    recorder = None
    if store is not None:
        if store.exists():
            raise UsageError(f"--out: {store} already exists; allowed: a new path (or --resume {store} to continue it)")
        check_output_path("--out", store)
        preset = target if target in preset_names() and not Path(target).is_file() else None
        attrs = {"source": target, "preset": preset, "overrides": list(overrides or []), "steps_requested": steps}
        recorder = Recorder(
            store, every, checkpoint_every=checkpoint_every, precision=precision or "float32", attrs=attrs
        )
    elif checkpoint_every is not None or precision is not None:
        raise UsageError("--checkpoint-every and --precision apply to a recorded run; add --out STORE")
    return Simulation(params, seed=seed, engine=engine, threads=threads), name, recorder


def _resume_run(store, steps, every, checkpoint_every, threads):
    """The simulation of ``store`` at its newest checkpoint; (simulation, name, steps left to run),
    or None (after saying so) when the run is already at the total asked for: then nothing in
    the store is touched. The store is verified before anything is written into it."""
    from flocksim.io import TrajectoryStore, resume

    reader = TrajectoryStore.open(store)
    attrs = reader.attrs
    source = str(attrs.get("source") or store)
    name = Path(source).stem if source.endswith(".toml") else source
    if every is not None and every != attrs.get("every"):
        raise UsageError(f"--every: the run records every {attrs.get('every')} steps; drop --every or pass that")
    total = steps if steps is not None else attrs.get("steps_requested")
    if total is None:
        raise UsageError(f"--steps: {store} does not say how many steps it was started for; pass the total")
    checkpoints = reader.checkpoints()
    at = checkpoints[-1]["steps"] if checkpoints else 0
    if checkpoints and total <= at:
        out.print(f"{name}: already at step {at}; nothing to run (--steps N sets a larger total)")
        return None
    sim = resume(store, threads=threads, checkpoint_every=checkpoint_every)
    if total != attrs.get("steps_requested"):
        sim.recorder.store.set_attrs(steps_requested=total)
    return sim, name, total - sim.steps


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


@app.command()
def presets() -> None:
    """List the shipped presets with a one-line description each.

    Example: flocksim presets
    """
    table = Table("preset", "description", box=None, show_header=True)
    for name, description in preset_descriptions().items():
        table.add_row(name, description)
    out.print(table)


@app.command()
def show(
    target: Annotated[str, typer.Argument(help="Preset name or parameter TOML file.")],
    overrides: Overrides = None,
) -> None:
    """Print the full parameters of a preset or file (with overrides) as TOML.

    Example: flocksim show starlings-2d --set agents.n=2000 > my.toml
    """
    try:
        params = resolve_params(target, overrides)
    except ConfigError as exc:
        fail(str(exc))
        return
    sys.stdout.write(dumps_toml(params))


@app.command()
def schema(
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write to this file instead of standard output ('-').")
    ] = None,
    markdown: Annotated[bool, typer.Option("--markdown", help="A markdown table per model instead of JSON.")] = False,
) -> None:
    """Export the JSON Schema of every parameter (units and ranges included).

    Example: flocksim schema -o params.schema.json
    """
    if markdown:
        from flocksim.schema_docs import markdown_reference

        text = markdown_reference()
    else:
        text = json.dumps(params_json_schema(), indent=2) + "\n"
    try:
        check_output_path("--output", output, stdout_ok=True)
    except UsageError as exc:
        fail(str(exc))
    with atomic_output(output if output is not None else Path("-")) as handle:
        handle.write(text)


@app.command()
def sweep(
    target: Annotated[
        str | None, typer.Argument(help="Sweep TOML file or shipped sweep name (see --list).", show_default=False)
    ] = None,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Results file (.parquet); default: <sweep name>.parquet.")
    ] = None,
    scheduler: Annotated[
        str | None, typer.Option(help="Address of a running Dask scheduler, e.g. tcp://host:8786 (default: local).")
    ] = None,
    workers: Annotated[
        int | None, typer.Option(min=1, help="Worker processes of the local cluster (default: one per core).")
    ] = None,
    resume: Annotated[bool, typer.Option("--resume", help="Keep the rows already in OUTPUT; run the rest.")] = False,
    force: Annotated[bool, typer.Option("--force", help="Replace OUTPUT if it exists.")] = False,
    overrides: Annotated[
        list[str] | None, typer.Option("--set", help="Override a base parameter, e.g. --set agents.n=200 (repeatable).")
    ] = None,
    steps: Annotated[int | None, typer.Option(min=1, help="Steps per run (default: the sweep file's).")] = None,
    seeds: Annotated[int | None, typer.Option(min=1, help="Seeds per parameter point (default: the file's).")] = None,
    threads: Annotated[int, typer.Option(min=1, help="numba threads per run.")] = 1,
    engine: Annotated[
        str, typer.Option(help="Engine: cpu | cuda (an NVIDIA GPU; pip install 'flocksim[cuda]', docs/gpu.md).")
    ] = "cpu",
    list_sweeps: Annotated[bool, typer.Option("--list", help="List the shipped sweeps and exit.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
) -> None:
    """Run a parameter sweep on Dask: one simulation per task, one Parquet row per run.

    Example: flocksim sweep boids-separation -o sep.parquet --workers 2 --seeds 3

    Cluster: flocksim sweep my-sweep.toml -o results.parquet --scheduler tcp://host:8786 --resume
    """
    from flocksim.sweep import SweepError, load_sweep, run_sweep, shipped_sweeps

    if list_sweeps:
        table = Table("sweep", "runs", "description", box=None, show_header=True)
        for name in shipped_sweeps():
            s = load_sweep(name)
            table.add_row(name, str(s.n_tasks), s.spec.description)
        out.print(table)
        return
    try:
        if target is None:
            raise UsageError("TARGET: missing; allowed: a sweep TOML file or a shipped sweep (flocksim sweep --list)")
        spec = load_sweep(target)
        if steps is not None or seeds is not None or overrides:
            spec = spec.with_options(steps=steps, seeds=seeds, overrides=overrides)
        if resume and force:
            raise UsageError("--resume and --force: choose one")
        path = output if output is not None else Path(f"{spec.name}.parquet")
        report = run_sweep(
            spec,
            path,
            scheduler=scheduler,
            workers=workers,
            resume=resume,
            force=force,
            threads=threads,
            console=None if quiet else err,
            engine=engine,
        )
    except (SweepError, ConfigError, UsageError) as exc:
        fail(str(exc))
        return
    out.print(report.line(), markup=False, highlight=False, soft_wrap=True)
    if report.interrupted:
        raise typer.Exit(130)


@app.command()
def plot(
    source: Annotated[
        Path,
        typer.Argument(
            help="What to plot: sweep results (.parquet), a run's store (run.zarr) or metrics CSV (.csv).",
            show_default=False,
        ),
    ],
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Figure file (.png, .svg, .pdf); default: SOURCE as .png.")
    ] = None,
    x: Annotated[str | None, typer.Option("-x", help="Sweep results: the swept key on the x axis.")] = None,
    y: Annotated[str | None, typer.Option("-y", help="Sweep results: the summary on the y axis.")] = None,
    hue: Annotated[str | None, typer.Option("--hue", help="Sweep results: one line per value of this key.")] = None,
) -> None:
    """Plot a results file as a figure (matplotlib).

    Example: flocksim plot results.parquet -x rules.alignment.weight -y polarization_mean --hue neighbors.mode

    A run's metrics over time: flocksim plot run.zarr -o metrics.png (or flocksim plot m.csv)
    """
    plotters = {".parquet": _plot_sweep, ".zarr": _plot_run, ".csv": _plot_run}  # chosen by the suffix
    handler = plotters.get(source.suffix.lower(), _plot_run if source.is_dir() else None)
    if handler is None:
        fail(f"plot: cannot plot {source}; allowed: a file ending in {', '.join(plotters)}")
        return
    handler(source, output, x=x, y=y, hue=hue)


def _plot_sweep(source: Path, output: Path | None, x: str | None, y: str | None, hue: str | None) -> None:
    from flocksim.sweep import SweepError
    from flocksim.sweep.plot import plot_results

    try:
        figure = plot_results(source, x=x, y=y, hue=hue, output=output)
    except SweepError as exc:
        fail(str(exc))
        return
    out.print(f"{source.name}: {y} against {x} -> {figure}", markup=False, highlight=False, soft_wrap=True)


def _plot_run(source: Path, output: Path | None, x: str | None, y: str | None, hue: str | None) -> None:
    """Polarization, milling, mean neighbours, speed and caught over time, from a store or metrics CSV."""
    from flocksim.io import TrajectoryError
    from flocksim.plotting import PlotError, plot_metrics

    try:
        if x is not None or y is not None or hue is not None:
            raise UsageError("-x, -y, --hue: apply to sweep results (.parquet) only")
        output = output if output is not None else source.with_suffix(".png")
        check_output_path("--output", output)
        figure = plot_metrics(source, output)
    except (PlotError, TrajectoryError, UsageError) as exc:
        fail(str(exc))
        return
    out.print(f"{source.name}: metrics over time -> {figure}", markup=False, highlight=False, soft_wrap=True)


@app.command()
def render(
    store: Annotated[Path, typer.Argument(help="Trajectory store written by flocksim run --out.", show_default=False)],
    output: Annotated[Path, typer.Option("--output", "-o", help="Video file: .mp4 (H.264) or .gif.")],
    fps: Annotated[int, typer.Option(min=1, max=240, help="Video frames per second (one per recorded frame).")] = 30,
    size: Annotated[str, typer.Option(help="Frame size WIDTHxHEIGHT in pixels (even numbers).")] = "1280x720",
    color_by: Annotated[str, typer.Option("--color-by", help="Colour agents by: none | speed | group | turning.")] = (
        "none"
    ),
    trail: Annotated[int, typer.Option(min=0, max=1000, help="Draw each agent's path over its last N frames.")] = 0,
    camera: Annotated[
        str | None,
        typer.Option(help="View, e.g. 'azimuth=30,elevation=20,distance=2.6,fov=40' (3D) or 'zoom=2,follow=true'."),
    ] = None,
    start: Annotated[float | None, typer.Option(help="First simulated second to show (default: the start).")] = None,
    stop: Annotated[float | None, typer.Option(help="Last simulated second to show (default: the end).")] = None,
    agent_size: Annotated[
        float | None, typer.Option("--agent-size", help="Triangle length in pixels (default: height / 90).")
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
) -> None:
    """Render a recorded run into a video: triangles along each agent's heading, 3D in perspective.

    Example: flocksim render run.zarr -o flock.mp4 --size 1280x720 --color-by speed --trail 8 --camera azimuth=60
    """
    from flocksim.io import TrajectoryError
    from flocksim.render import CameraError, RenderError, parse_camera, parse_size, render_run
    from flocksim.render.writers import VIDEO_SUFFIXES

    try:
        width, height = parse_size(size)
        view = parse_camera(camera)
        if output.suffix.lower() not in VIDEO_SUFFIXES:
            raise UsageError(f"--output: cannot write {output.name!r}; allowed: a file ending in .mp4 or .gif")
        check_output_path("--output", output)
        progress = Progress(
            TextColumn(f"[bold]{output.name}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("frames"),
            TimeRemainingColumn(),
            console=err,
            disable=quiet,
            transient=True,
        )
        with progress:
            task = progress.add_task("render", total=None)
            report = render_run(
                store,
                output,
                fps=fps,
                size=(width, height),
                color_by=color_by,
                trail=trail,
                camera=view,
                start=start,
                stop=stop,
                agent_size=agent_size,
                on_frame=lambda done, total: progress.update(task, completed=done, total=total),
            )
    except (TrajectoryError, RenderError, CameraError, UsageError) as exc:
        fail(str(exc))
        return
    out.print(report.line(), markup=False, highlight=False, soft_wrap=True)


@app.command()
def info(
    store: Annotated[Path, typer.Argument(help="Trajectory store written by flocksim run --out.", show_default=False)],
    check: Annotated[
        bool,
        typer.Option(
            "--check", help="Also verify the whole store: read and check every chunk and checkpoint (exit 2: damage)."
        ),
    ] = False,
) -> None:
    """Summarize a recorded run: steps, agents, variables, checkpoints, size, parameters changed from its preset.

    Example: flocksim info run.zarr

    Verify every byte: flocksim info --check run.zarr
    """
    from flocksim.io import TrajectoryError, TrajectoryStore, run_summary

    try:
        s = run_summary(store)
        verified = TrajectoryStore.open(store).verify() if check else None
    except TrajectoryError as exc:
        fail(str(exc))
        return
    lines = [
        f"{s['path']}: flocksim trajectory, format {s['format_version']}, written by flocksim "
        f"{s['flocksim_version']} at {s['created']}",
        f"  model {s['model']} ({s['dim']}D), source {s['source']}, seed {s['seed']}, engine {s['engine']}, "
        f"dt {s['dt']:g} s",
    ]
    if s["frames"]:
        t0, t1 = s["time_span"]
        lines.append(
            f"  {s['frames']} frames: steps {s['first_step']} to {s['last_step']} every {s['every']}, "
            f"time {t0:g} to {t1:g} s, {s['precision']}"
        )
    else:
        lines.append("  no frames yet")
    lines.append(f"  {s['agents']} agents ({s['alive_at_end']} alive in the last frame)")
    lines.append(f"  variables: {', '.join(s['variables'])}; metrics: {', '.join(s['metrics']) or 'none'}")
    requested = s["steps_requested"]
    state = "complete" if s["complete"] else "incomplete: flocksim run --resume continues it"
    target = f", {requested} steps requested" if requested is not None else ""
    checkpoints = ", ".join(str(c) for c in s["checkpoints"]) or "none"
    lines.append(f"  checkpoints at steps {checkpoints}{target}; {state}")
    lines.append(f"  size on disk: {s['size_bytes'] / 2**20:.2f} MiB")
    if s["params_diff"]:
        lines.append(f"  parameters that differ from {s['baseline']}:")
        lines += [f"    {key}: {before!r} -> {after!r}" for key, before, after in s["params_diff"]]
    else:
        lines.append(f"  parameters: as {s['baseline']}")
    if verified is not None:
        lines.append(
            f"  check: no damage found ({verified['chunks']} chunks of {verified['arrays']} arrays and "
            f"{verified['checkpoints']} checkpoints read and checked)"
        )
    out.print("\n".join(lines), markup=False, highlight=False, soft_wrap=True)


@app.command()
def experiment(
    name: Annotated[str | None, typer.Argument(help="Experiment name (see --list).", show_default=False)] = None,
    seeds: Annotated[int, typer.Option(min=1, help="Number of seeds per condition (seeds 0..N-1).")] = 3,
    quick: Annotated[bool, typer.Option("--quick", help="Few birds, a few seconds: a smoke check.")] = False,
    csv_path: Annotated[
        Path | None, typer.Option("--csv", help="CSV of every run's numbers ('-': standard output); default: NAME.csv.")
    ] = None,
    jobs: Annotated[int, typer.Option(min=1, help="Runs in parallel (processes, one numba thread each).")] = 1,
    overrides: Annotated[
        list[str] | None,
        typer.Option("--set", help="KEY=VALUE applied to every condition's parameters (repeatable)."),
    ] = None,
    list_experiments: Annotated[bool, typer.Option("--list", help="List the experiments and exit.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
) -> None:
    """Run a starling experiment over seeds (docs/starlings.md); print a table (mean ± sd [95 % CI]) and write CSV.

    Example: flocksim experiment predator-multipliers --seeds 10 --jobs 2 --csv predator.csv

    Sensitivity: flocksim experiment predator-multipliers --set predator.detection=50

    Smoke check: flocksim experiment shape --quick --seeds 1
    """
    from flocksim.experiments import (
        EXPERIMENTS,
        check_experiment_overrides,
        run_experiment,
        summarize,
        summary_table,
        write_csv,
    )

    if list_experiments:
        table = Table("experiment", "what it measures", box=None, show_header=True)
        for e in EXPERIMENTS.values():
            table.add_row(e.name, e.about)
        out.print(table)
        return
    try:
        if name is None:
            raise UsageError(f"NAME: missing; allowed: {', '.join(EXPERIMENTS)}")
        if name not in EXPERIMENTS:
            raise UsageError(f"NAME: unknown experiment {name!r}; allowed: {', '.join(EXPERIMENTS)}")
        path = csv_path if csv_path is not None else Path(f"{name}.csv")
        check_output_path("--csv", path, stdout_ok=True)
        extra = tuple(overrides or ())
        check_experiment_overrides(name, extra)
    except (UsageError, ConfigError) as exc:
        fail(str(exc))
        return
    seed_list = list(range(seeds))
    total = len(EXPERIMENTS[name].conditions) * seeds
    progress = Progress(
        TextColumn(f"[bold]{name}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("runs"),
        TimeRemainingColumn(),
        console=err,
        disable=quiet,
        transient=True,
    )
    started = time.perf_counter()
    with progress:
        task = progress.add_task("runs", total=total)
        rows = run_experiment(
            name, seed_list, quick=quick, jobs=jobs, on_done=lambda _: progress.advance(task), overrides=extra
        )
    with atomic_output(path) as handle:
        write_csv(rows, handle)
    report = err if is_stdout(path) else out  # the CSV has standard output to itself
    report.print(summary_table(name, summarize(rows), seeds))
    report.print(
        f"{name}: {total} runs in {time.perf_counter() - started:.1f} s{' (quick)' if quick else ''}; "
        f"every run's numbers in {'standard output' if is_stdout(path) else path}",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )


from flocksim import cli_bench  # noqa: E402  (registers `flocksim bench`)

cli_bench.register(app)

from flocksim import cli_validate  # noqa: E402  (registers `flocksim validate`)

cli_validate.register(app)

from flocksim import cli_serve  # noqa: E402  (registers `flocksim serve`)

cli_serve.register(app)

from flocksim import cli_tracks  # noqa: E402  (registers `flocksim analyze` and `flocksim export`)

cli_tracks.register(app)


def main() -> None:
    app()


if __name__ == "__main__":  # pragma: no cover
    main()

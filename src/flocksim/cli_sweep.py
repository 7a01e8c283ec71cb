"""`flocksim sweep | plot`: parameter sweeps and plots of their rows or of a run's metrics."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from flocksim._extras import require
from flocksim.cli_common import ENGINE_HELP, FORCE_HELP, UsageError, check_output_path, err, fail, out
from flocksim.config import ConfigError


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
    engine: Annotated[str, typer.Option(help=ENGINE_HELP)] = "cpu",
    list_sweeps: Annotated[bool, typer.Option("--list", help="List the shipped sweeps and exit.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
) -> None:
    """Run a parameter sweep on Dask: one simulation per task, one Parquet row per run.

    Example: flocksim sweep boids-separation -o sep.parquet --workers 2 --seeds 3

    Cluster: flocksim sweep my-sweep.toml -o results.parquet --scheduler tcp://host:8786 --resume

    Needs the sweep extra: pip install 'flocksim\\[sweep]'
    """
    require("sweep", "flocksim sweep")
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
    force: Annotated[bool, typer.Option("--force", help=FORCE_HELP)] = False,
) -> None:
    """Plot a results file as a figure (matplotlib).

    Example: flocksim plot results.parquet -x rules.alignment.weight -y polarization_mean --hue neighbors.mode

    A run's metrics over time: flocksim plot run.zarr -o metrics.png (or flocksim plot m.csv)

    Needs the plot extra (and the sweep extra for .parquet): pip install 'flocksim\\[plot]'
    """
    plotters = {".parquet": _plot_sweep, ".zarr": _plot_run, ".csv": _plot_run}  # chosen by the suffix
    handler = plotters.get(source.suffix.lower(), _plot_run if source.is_dir() else None)
    if handler is None:
        fail(f"plot: cannot plot {source}; allowed: a file ending in {', '.join(plotters)}")
        return
    handler(source, output, x=x, y=y, hue=hue, force=force)


def _plot_sweep(source: Path, output: Path | None, x: str | None, y: str | None, hue: str | None, force: bool) -> None:
    require("sweep", "flocksim plot")
    require("plot", "flocksim plot")
    from flocksim.sweep import SweepError
    from flocksim.sweep.plot import plot_results

    try:
        figure = plot_results(source, x=x, y=y, hue=hue, output=output, replace=force)
    except SweepError as exc:
        fail(str(exc))
        return
    out.print(f"{source.name}: {y} against {x} -> {figure}", markup=False, highlight=False, soft_wrap=True)


def _plot_run(source: Path, output: Path | None, x: str | None, y: str | None, hue: str | None, force: bool) -> None:
    """Polarization, milling, mean neighbours, speed and caught over time, from a store or metrics CSV."""
    require("plot", "flocksim plot")
    from flocksim.io import TrajectoryError
    from flocksim.plotting import PlotError, plot_metrics

    try:
        if x is not None or y is not None or hue is not None:
            raise UsageError("-x, -y, --hue: apply to sweep results (.parquet) only")
        output = output if output is not None else source.with_suffix(".png")
        check_output_path("--output", output, force=force)
        figure = plot_metrics(source, output)
    except (PlotError, TrajectoryError, UsageError) as exc:
        fail(str(exc))
        return
    out.print(f"{source.name}: metrics over time -> {figure}", markup=False, highlight=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    app.command()(sweep)
    app.command()(plot)

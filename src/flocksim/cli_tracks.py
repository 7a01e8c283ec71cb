"""``flocksim analyze`` and ``flocksim export``: field data in, the same analyses out (docs/field-data.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from flocksim.cli_common import FORCE_HELP


def analyze(
    path: Annotated[
        Path,
        typer.Argument(
            help="Tracks: a run store (run.zarr), a movement dataset (.nc) or a CSV of frame,id,x,y[,z][,time].",
            show_default=False,
        ),
    ],
    plot: Annotated[
        Path | None, typer.Option("--plot", help="Also draw the series over time and C(r) into this .png/.svg/.pdf.")
    ] = None,
    dt: Annotated[
        float | None,
        typer.Option(help="Resample to this time step (seconds, or frames when the file has no frame rate)."),
    ] = None,
    fps: Annotated[
        float | None,
        typer.Option(help="Frame rate [1/s] of a CSV without a time column, or of a movement file counting frames."),
    ] = None,
    keypoint: Annotated[
        str | None, typer.Option(help="movement files: the keypoint that stands for a bird (default: their mean).")
    ] = None,
    box: Annotated[
        str | None,
        typer.Option(
            help="Side of the periodic box the tracks wrap in \\[units]: L, or Lx,Ly[,Lz]; unwraps them and measures "
            "distances by the minimum image (a run in periodic bounds brings its own)."
        ),
    ] = None,
    velocity: Annotated[
        str | None,
        typer.Option(
            help="Velocities from positions by central, backward or forward differences "
            "(default: recorded ones where the file has them, else central)."
        ),
    ] = None,
    correlation_frames: Annotated[
        int,
        typer.Option(
            "--correlation-frames", min=1, max=1000, help="Frames (evenly spaced) for the O(N^2) correlation analyses."
        ),
    ] = 10,
    maxent: Annotated[
        bool,
        typer.Option(
            "--maxent",
            help="Also estimate topological alignment by maximum entropy (Bialek et al. 2012): coupling J and "
            "neighbours n_c from the headings of the correlation frames (an ordered flock).",
        ),
    ] = False,
    force: Annotated[bool, typer.Option("--force", help=FORCE_HELP)] = False,
) -> None:
    """Analyse tracked or simulated trajectories: polarization, milling, group state, speed,
    neighbours, edge deviation, shape, correlations; a table (and a figure with --plot).

    Example: flocksim analyze starlings.csv --fps 25 --plot starlings.png

    A movement dataset or a recorded run: flocksim analyze tracks.nc; flocksim analyze run.zarr --dt 0.5

    Tracks from a periodic box of side 15.8: flocksim analyze vicsek.csv --box 15.8 --velocity backward

    Topological alignment by maximum entropy: flocksim analyze starlings.csv --fps 25 --maxent

    Needs the field extra (and the plot extra for --plot): pip install 'flocksim\\[field]'
    """
    from flocksim._extras import require

    require("field", "flocksim analyze")
    if plot is not None:
        require("plot", "flocksim analyze")
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from flocksim.cli_common import UsageError, check_output_path, fail
    from flocksim.inference.maxent import MaxentError, maxent_rows
    from flocksim.io import TrajectoryError
    from flocksim.io.tracks import TracksError, open_tracks
    from flocksim.metrics.series import analyze as analyze_tracks
    from flocksim.plotting import FIGURE_SUFFIXES, PlotError
    from flocksim.tracks_report import plot_analysis, summary_rows

    try:
        if plot is not None:
            if plot.suffix.lower() not in FIGURE_SUFFIXES:
                raise UsageError(f"--plot: cannot write {plot.name!r}; allowed: a file ending in .png, .svg or .pdf")
            check_output_path("--plot", plot, force=force)
        ds = open_tracks(path, dt=dt, fps=fps, keypoint=keypoint, box=box, velocity=velocity)
        analysis = analyze_tracks(
            ds["time"].values,
            ds["position"].values,
            ds["velocity"].values,
            ds["present"].values,
            correlation_frames,
            box=ds.attrs["box"] or None,
        )
        unit = ds.attrs["time_unit"]
        extra_rows = maxent_rows(ds, analysis.correlation_frames) if maxent else []
        figure = plot_analysis(analysis, plot, path.name, unit) if plot is not None else None
    except (TracksError, TrajectoryError, PlotError, UsageError, MaxentError) as exc:
        fail(str(exc))
        return
    out = Console()
    step = f"{ds.attrs['dt']:g} {'s' if unit == 's' else 'frames'}"
    how = "resampled to" if ds.attrs["resampled"] else "step"
    estimator = ds.attrs["velocity_estimator"]
    velocity_text = "recorded" if estimator == "recorded" else f"{estimator} differences"
    sides = ds.attrs["box"]
    space_text = f", periodic box {' x '.join(f'{v:g}' for v in sides)}" if sides else ""
    table = Table(
        "analysis",
        "value",
        "what",
        title=escape(
            f"{path.name}: {ds.attrs['source']}, {ds.sizes['agent']} birds, {ds.sizes['space']}D, {how} {step}, "
            f"velocity {velocity_text}{space_text}"
        ),
    )
    for label, value, what in [*summary_rows(analysis, unit), *extra_rows]:
        table.add_row(escape(label), escape(value), escape(what))  # "[units/s]" is text, not markup
    out.print(table)
    if figure is not None:
        out.print(f"figure -> {figure}", markup=False, highlight=False, soft_wrap=True)


def export(
    store: Annotated[Path, typer.Argument(help="Trajectory store written by flocksim run --out.", show_default=False)],
    output: Annotated[Path, typer.Option("--output", "-o", help="movement dataset to write (.nc, netCDF4).")],
    force: Annotated[bool, typer.Option("--force", help=FORCE_HELP)] = False,
) -> None:
    """Export a recorded run as a movement dataset (netCDF), which movement and xarray open.

    Example: flocksim export run.zarr -o tracks.nc

    Needs the field extra: pip install 'flocksim\\[field]'
    """
    from flocksim._extras import require

    require("field", "flocksim export")
    from rich.console import Console

    from flocksim.cli_common import UsageError, check_output_path, fail
    from flocksim.io import TrajectoryError
    from flocksim.io.movement import export_run
    from flocksim.io.tracks import TracksError

    try:
        if output.suffix.lower() != ".nc":
            raise UsageError(f"--output: cannot write {output.name!r}; allowed: a file ending in .nc")
        check_output_path("--output", output, force=force)
        frames, birds = export_run(store, output)
    except (TracksError, TrajectoryError, UsageError) as exc:
        fail(str(exc))
        return
    Console().print(
        f"{store.name}: {frames} frames of {birds} birds -> {output} (movement poses dataset)",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )


def register(app: typer.Typer) -> None:
    app.command("analyze")(analyze)
    app.command("export")(export)

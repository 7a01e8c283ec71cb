"""`flocksim render | info`: videos of recorded runs, and what a store holds (and whether it is intact)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from flocksim._extras import require
from flocksim.cli_common import FORCE_HELP, UsageError, check_output_path, err, fail, no_bar, out


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
    force: Annotated[bool, typer.Option("--force", help=FORCE_HELP)] = False,
) -> None:
    """Render a recorded run into a video: triangles along each agent's heading, 3D in perspective.

    Example: flocksim render run.zarr -o flock.mp4 --size 1280x720 --color-by speed --trail 8 --camera azimuth=60

    Needs the video extra: pip install 'flocksim\\[video]'
    """
    require("video", "flocksim render")
    from flocksim.io import TrajectoryError
    from flocksim.render import CameraError, RenderError, parse_camera, parse_size, render_run
    from flocksim.render.writers import VIDEO_SUFFIXES

    try:
        width, height = parse_size(size)
        view = parse_camera(camera)
        if output.suffix.lower() not in VIDEO_SUFFIXES:
            raise UsageError(f"--output: cannot write {output.name!r}; allowed: a file ending in .mp4 or .gif")
        check_output_path("--output", output, force=force)
        progress = Progress(
            TextColumn(f"[bold]{output.name}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("frames"),
            TimeRemainingColumn(),
            console=err,
            disable=no_bar(quiet, err),
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
    target = f", {requested} steps requested" if requested is not None else ""
    checkpoints = ", ".join(str(c) for c in s["checkpoints"]) or "none"
    if s["checkpoints_missing"]:
        checkpoints += f" ({', '.join(str(c) for c in s['checkpoints_missing'])} missing)"
    lines.append(f"  checkpoints at steps {checkpoints}{target}; {_resume_state(s)}")
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
        if not verified["recorded"]:
            lines.append(
                "  note: this store does not record which checkpoints it wrote (an older flocksim wrote it), so a "
                "deleted checkpoint cannot be told from none"
            )
    out.print("\n".join(lines), markup=False, highlight=False, soft_wrap=True)


def _resume_state(s: dict) -> str:
    """Whether the run is complete and, if not, the command that continues it (or why none can):
    with a recorded checkpoint missing, plain --resume refuses (checkpoint damage only
    ``info --check`` and resume itself look for)."""
    if s["complete"]:
        return "complete"
    if not s["checkpoints_missing"]:
        return "incomplete: flocksim run --resume continues it"
    if not s["checkpoints"]:
        return "incomplete, and it cannot be resumed: no checkpoint is left"
    return (
        f"incomplete: flocksim run --resume {s['path']} --from-intact-checkpoint continues it "
        f"from step {s['checkpoints'][-1]}"
    )


def register(app: typer.Typer) -> None:
    app.command()(render)
    app.command()(info)

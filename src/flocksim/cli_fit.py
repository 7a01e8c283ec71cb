"""``flocksim fit``: parameters of a model from tracks, by simulation-based inference on Dask
(docs/fitting.md)."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer

from flocksim.cli_common import FORCE_HELP, Overrides


def fit(
    tracks: Annotated[
        Path,
        typer.Argument(
            help="Tracks: a CSV of frame,id,x,y[,z][,time], a movement dataset (.nc) or a run store (run.zarr).",
            show_default=False,
        ),
    ],
    output: Annotated[Path, typer.Option("--output", "-o", help="Result to write (.json).", show_default=False)],
    preset: Annotated[
        str, typer.Option("--preset", help="Preset name or parameter TOML: the model and its fixed values.")
    ],
    overrides: Overrides = None,
    priors: Annotated[
        list[str] | None,
        typer.Option(
            "--prior",
            help="A parameter to infer, uniform prior: KEY=LO:HI, or KEY for its whole schema range (repeatable).",
        ),
    ] = None,
    simulations: Annotated[
        int,
        typer.Option(
            help="Simulations to spend (about: the last generation finishes, and is drawn until --final-effective)."
        ),
    ] = 200,
    final_effective: Annotated[
        int,
        typer.Option(
            "--final-effective",
            min=0,
            help="Draw the last generation until its particles are worth this many effective ones, as many as a "
            "95 % interval needs (0: as many particles as the other generations).",
        ),
    ] = 100,
    workers: Annotated[
        int | None, typer.Option(min=1, help="Worker processes of the local Dask cluster (default: one per core).")
    ] = None,
    scheduler: Annotated[
        str | None, typer.Option(help="Address of a running Dask scheduler, e.g. tcp://host:8786 (default: local).")
    ] = None,
    seed: Annotated[int, typer.Option(min=0, help="Seed of the runs (with each run's parameter values).")] = 0,
    replicates: Annotated[
        int,
        typer.Option(
            min=1,
            max=10,
            help="Fit this many times, with seeds SEED, SEED+1, ...: the result is the first fit, and a "
            "warning names each parameter whose fits disagree (each spends --simulations).",
        ),
    ] = 1,
    fps: Annotated[
        float | None, typer.Option(help="Frame rate \\[1/s] of tracks without a time column (a CSV of frames).")
    ] = None,
    box: Annotated[
        str | None,
        typer.Option(
            help="Side of the periodic box the tracks wrap in \\[units]: L, or Lx,Ly[,Lz] (as analyze --box); the "
            "runs are made in it too, in place of the preset's bounds (default: the preset's periodic box, if any)."
        ),
    ] = None,
    velocity: Annotated[
        str | None,
        typer.Option(help="Velocities of the tracks (and runs) by central, backward or forward differences."),
    ] = None,
    burn_in: Annotated[
        float | None,
        typer.Option(
            "--burn-in",
            help="Model time \\[s] run before the first frame (default: 4 x the tracks' duration, >= 500 steps).",
        ),
    ] = None,
    statistics: Annotated[
        list[str] | None,
        typer.Option(
            "--statistic",
            help="A summary statistic to compare (repeatable; default: all but the centroid ones in a periodic box): "
            "polarization, polarization_sd, milling, speed_mean, speed_fluctuation, nnd_mean, misalignment, "
            "correlation_length, "
            "aspect, axis_cos.",
        ),
    ] = None,
    distance: Annotated[
        str,
        typer.Option(
            help="informative: weigh each statistic by how much it tells about the parameters (regression); "
            "mad: every statistic alike, scaled by its median absolute deviation.",
        ),
    ] = "informative",
    plot: Annotated[
        Path | None, typer.Option("--plot", help="Also draw the posteriors into this .png/.svg/.pdf.")
    ] = None,
    force: Annotated[bool, typer.Option("--force", help=FORCE_HELP)] = False,
) -> None:
    """Fit a model's parameters to tracks: ABC-SMC (pyabc) over simulations run on Dask.

    Example: flocksim fit flock.csv --preset vicsek --prior vicsek.eta=0.5:4 -o fit.json --plot fit.png

    The result (fit.json) gives each parameter's posterior mean, median and 95 % interval, its width
    against the prior's (a warning when the data cannot tell the parameter or it piles against a prior
    bound, and when too few particles carry the interval), the statistics compared, the distances, the
    simulations spent and where it all came from.

    Needs the fit extra (and the plot extra for --plot): pip install 'flocksim\\[fit]'
    """
    from flocksim._extras import require

    require("fit", "flocksim fit")
    from distributed import KilledWorker

    if plot is not None:
        require("plot", "flocksim fit")
    from flocksim.cli_common import UsageError, check_output_path, err, fail, out, resolve_params
    from flocksim.config import ConfigError
    from flocksim.inference import FitError, describe_assumed
    from flocksim.inference import fit as run_fit
    from flocksim.inference.result import plot_fit
    from flocksim.io.tracks import TracksError
    from flocksim.plotting import FIGURE_SUFFIXES, PlotError
    from flocksim.sweep import SweepError
    from flocksim.sweep.task import one_line

    try:
        if output.suffix.lower() != ".json":
            raise UsageError(f"--output: cannot write {output.name!r}; allowed: a file ending in .json")
        check_output_path("--output", output, force=force)
        if plot is not None:
            if plot.suffix.lower() not in FIGURE_SUFFIXES:
                raise UsageError(f"--plot: cannot write {plot.name!r}; allowed: a file ending in .png, .svg or .pdf")
            check_output_path("--plot", plot, force=force)
        params = resolve_params(preset, overrides)
        with _ctrl_c_until_it_arrives():
            result = run_fit(
                tracks,
                params,
                priors or [],
                simulations=simulations,
                workers=workers,
                scheduler=scheduler,
                seed=seed,
                replicates=replicates,
                final_effective=final_effective,
                fps=fps,
                velocity=velocity,
                burn_in=burn_in,
                statistics=statistics,
                distance=distance,
                box=box,
                console=err,  # a line per generation, on a terminal or not (nohup, | tee, a batch job)
            )
        check_output_path("--output", output, force=force)  # again: the fit took long, the path may exist now
        if plot is not None:
            check_output_path("--plot", plot, force=force)
        result.write(output)
        figure = plot_fit(result, plot) if plot is not None else None
    except (FitError, TracksError, ConfigError, UsageError, SweepError, PlotError) as exc:
        fail(str(exc))
        return
    except KeyboardInterrupt:  # Ctrl-C: the cluster is closed on the way out; there is no partial result
        err.print(
            f"interrupted: the fit stopped before its last generation; nothing was written to {output}",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
        raise typer.Exit(130) from None
    except KilledWorker as exc:
        fail(f"a simulation's Dask workers kept dying ({one_line(exc)}); nothing was written: run the fit again")
        return
    told = result.identifiability()
    for key, summary in result.parameters.items():
        lo, hi = summary["ci95"]
        moves = told[key]["sensitivity"]
        seen = ""
        if moves:
            best = max(moves, key=moves.__getitem__)
            seen = f"; across the prior {best} moves {moves[best]:.2g} of its scatter"
        out.print(
            f"{key}: median {summary['median']:.4g}, mean {summary['mean']:.4g}, 95 % interval [{lo:.4g}, {hi:.4g}], "
            f"{told[key]['width_ratio']:.2f} of the prior's width{seen}",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
    for line in result.warnings():  # too few particles for a 95 % interval; a parameter the data cannot tell
        out.print(line, markup=False, highlight=False, soft_wrap=True)
    for line in describe_assumed(result.provenance.get("assumed", {})):
        out.print(
            line,
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
    out.print(
        f"{result.simulations} simulations in {result.generations} generations -> {output}",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
    if figure is not None:
        out.print(f"figure -> {figure}", markup=False, highlight=False, soft_wrap=True)


@contextmanager
def _ctrl_c_until_it_arrives():
    """Ctrl-C raises KeyboardInterrupt in the block, again every second until one leaves it: a
    KeyboardInterrupt raised while a library's callback runs (Dask's garbage-collection callback,
    say) is dropped by Python (with an "Exception ignored" traceback, not shown here), and the fit
    would go on as if nothing was pressed. Only in the main thread; the handler and hook before are
    restored on the way out."""
    import _thread
    import signal
    import sys
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    stop = threading.Event()

    def again() -> None:
        while not stop.wait(1.0):
            _thread.interrupt_main()  # runs the handler below in the main thread (none while SIGINT is ignored)

    def handler(signum, frame):
        if not stop.is_set() and not any(t.name == "flocksim-ctrl-c" for t in threading.enumerate()):
            threading.Thread(target=again, name="flocksim-ctrl-c", daemon=True).start()
        raise KeyboardInterrupt

    def unraisable(info) -> None:  # the dropped KeyboardInterrupt: no "Exception ignored" text, it comes again
        if not isinstance(info.exc_value, KeyboardInterrupt):
            hook(info)

    previous, hook = signal.signal(signal.SIGINT, handler), sys.unraisablehook
    sys.unraisablehook = unraisable
    try:
        yield
    finally:
        stop.set()
        signal.signal(signal.SIGINT, previous)
        sys.unraisablehook = hook


def register(app: typer.Typer) -> None:
    app.command("fit")(fit)

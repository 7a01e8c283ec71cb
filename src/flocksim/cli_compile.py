"""`flocksim compile`: fill the kernel cache ahead of time, several presets at once."""

from __future__ import annotations

from typing import Annotated

import typer

from flocksim.cli_common import Overrides, err, fail, out
from flocksim.config import ConfigError


def compile_kernels(
    presets: Annotated[
        list[str] | None, typer.Argument(help="Presets to compile (default: every shipped preset).", show_default=False)
    ] = None,
    jobs: Annotated[
        int,
        typer.Option(
            "--jobs",
            "-j",
            help="Presets compiled at once, a process each. Presets share most kernels; a kernel two processes "
            "need is compiled by one while the other waits for it, so more than 1 pays where cores are free.",
        ),
    ] = 1,
    overrides: Overrides = None,
    prebuilt: Annotated[
        bool,
        typer.Option(
            "--prebuilt",
            help="Compile for the portable x86-64-v3 target and put the kernels into the installed package "
            "(_prebuilt_kernels/), so that a wheel built afterwards, or a Docker image, carries them: "
            "installs of the same sources, numba and Python then load them on any x86-64-v3 CPU without a compile.",
        ),
    ] = False,
) -> None:
    """Compile the numba kernels of presets into the cache now (a process per preset), so that the
    first run, viewer scene or sweep worker starts in seconds: for an install script, a Docker
    image, or a cluster's workers before a sweep. Lines on standard output: one to
    start, one per preset done, one every 30 s while any compiles. Exits 1 if a preset failed.

    Example: flocksim compile starlings-3d boids-2d
    """
    from flocksim.viewer.compile_ahead import CompileAheadError, compile_ahead
    from flocksim.viewer.prebuilt import make_prebuilt

    def say(line: str) -> None:
        out.print(line, markup=False, highlight=False, soft_wrap=True)

    try:
        if prebuilt:
            outcomes = make_prebuilt(presets or [], jobs, overrides or [], say)
        else:
            outcomes = compile_ahead(presets or [], jobs, overrides or [], say)
    except (CompileAheadError, ConfigError) as exc:
        fail(str(exc))
        return
    failed = [o for o in outcomes if not o.ok]
    for outcome in failed:
        err.print(f"error: {outcome.name} did not compile:\n{outcome.error}", markup=False, highlight=False)
    if failed:
        raise typer.Exit(1)
    slowest = max(outcomes, key=lambda o: o.seconds)
    from flocksim._numba_cache import target

    which = "the portable x86-64-v3 target" if prebuilt else f"the {target.name} target ({target.why})"
    say(f"flocksim compile: kernels for {which}")
    say(f"flocksim compile: {len(outcomes)} ready; the longest, {slowest.name}, took {slowest.seconds:.0f} s")


def register(app: typer.Typer) -> None:
    app.command("compile")(compile_kernels)

"""The ``flocksim`` command line: run, presets, show, schema."""

from __future__ import annotations

import csv
import json
import os
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from flocksim.config import AnyParams, ConfigError, apply_overrides, dumps_toml, load_toml
from flocksim.metrics import METRIC_NAMES
from flocksim.params import params_json_schema
from flocksim.scenarios import load_preset, preset_descriptions

# click's exception base, found through typer's public BadParameter (click is vendored in newer typers)
_ClickError = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")


@contextmanager
def _one_line_usage_errors():
    """Errors found while parsing the command line (bad option value, unknown option or
    command, missing argument) print as one line, like flocksim's own checks."""
    try:
        yield
    except _ClickError as exc:
        if type(exc).__name__ == "NoArgsIsHelpError":
            raise
        err.print(f"error: {exc.format_message()}", markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(exc.exit_code) from None


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
    """Yield a temporary file next to ``path``; it replaces ``path`` only if the block succeeds."""
    if path is None:
        yield None
        return
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
    try:
        with os.fdopen(fd, "w", newline="", encoding="utf-8") as handle:
            yield handle
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; give the file the mode open() would
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def check_output_path(option: str, path: Path | None) -> None:
    if path is None:
        return
    if path.is_dir():
        raise UsageError(f"{option}: {path} is a directory; allowed: a file path in an existing directory")
    if not path.parent.is_dir():
        raise UsageError(
            f"{option}: directory {path.parent} does not exist; allowed: a file path in an existing directory"
        )
    if not os.access(path.parent, os.W_OK):
        raise UsageError(f"{option}: directory {path.parent} is not writable")


@app.command()
def run(
    target: Annotated[str, typer.Argument(help="Preset name (see `flocksim presets`) or a parameter TOML file.")],
    steps: Annotated[int, typer.Option(min=0, help="Number of steps to run.")] = 600,
    seed: Annotated[int | None, typer.Option(min=0, help="Random seed (default: the parameters' seed).")] = None,
    overrides: Overrides = None,
    metrics: Annotated[Path | None, typer.Option(help="Write metrics as CSV to this file.")] = None,
    every: Annotated[int, typer.Option(min=1, help="Record metrics every M steps.")] = 10,
    engine: Annotated[str, typer.Option(help="Engine: cpu.")] = "cpu",
    threads: Annotated[
        int | None, typer.Option(min=1, help="CPU threads (default: NUMBA_NUM_THREADS or all cores).")
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
) -> None:
    """Run a simulation headless and print a one-line summary.

    Example: flocksim run boids-2d --steps 3600 --seed 3 --set rules.alignment.weight=0.5 --metrics m.csv
    """
    from flocksim.simulation import Simulation

    try:
        params = resolve_params(target, overrides)
        check_output_path("--metrics", metrics)
        sim = Simulation(params, seed=seed, engine=engine, threads=threads)
    except (ConfigError, UsageError, ValueError) as exc:
        fail(str(exc))
        return
    name = Path(target).stem if target.endswith(".toml") else target
    columns = ["step", "time", *METRIC_NAMES]
    compile_s = sim.warm_up() if steps else 0.0
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
        with progress:
            task = progress.add_task("run", total=steps)
            done = 0
            while done < steps:
                chunk = min(every - (sim.steps % every), steps - done)
                sim.step(chunk)
                done += chunk
                progress.update(task, completed=done)
                if writer and (sim.steps % every == 0 or done == steps):
                    writer.writerow(_row(sim, columns))
    elapsed = time.perf_counter() - started
    final = sim.metrics()
    rate = steps / elapsed if elapsed > 0 else float("inf")
    out.print(
        f"{name}: {steps} steps ({sim.time:.2f} s simulated, {sim.state.n_alive} agents) in {elapsed:.2f} s "
        f"(+{compile_s:.1f} s compile), {rate:.0f} steps/s; polarization {final['polarization']:.3f}, "
        f"mean neighbours {final['mean_neighbors']:.2f}",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )


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
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write to this file instead of stdout.")] = None,
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
    if output is None:
        sys.stdout.write(text)
        return
    try:
        check_output_path("--output", output)
    except UsageError as exc:
        fail(str(exc))
    with atomic_output(output) as handle:
        handle.write(text)


def main() -> None:
    app()


if __name__ == "__main__":  # pragma: no cover
    main()

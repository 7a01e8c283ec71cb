"""`flocksim experiment`: the murmuration experiments, many seeds, a table and every run's numbers."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from flocksim.atomic import is_stdout
from flocksim.cli_common import FORCE_HELP, UsageError, atomic_output, check_output_path, err, fail, no_bar, out
from flocksim.compile_notice import announce_compiles
from flocksim.config import ConfigError

if TYPE_CHECKING:
    from flocksim.experiments import RunSpec


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
    force: Annotated[bool, typer.Option("--force", help=FORCE_HELP)] = False,
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
        check_output_path("--csv", path, force=force, stdout_ok=True)
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
        disable=no_bar(quiet, err),
        transient=True,
    )
    started = time.perf_counter()
    lines = not quiet and not err.is_terminal  # no bar: one line per finished run instead
    done = 0

    def finished(spec: RunSpec) -> None:
        nonlocal done
        done += 1
        progress.advance(task)
        if lines:
            err.print(
                f"{name}: run {done}/{total} done ({spec.condition.dim}D {spec.condition.label}, seed {spec.seed}; "
                f"{time.perf_counter() - started:.0f} s)",
                markup=False,
                highlight=False,
                soft_wrap=True,
            )

    # one line on standard error when kernels compile (in this process; with --jobs, each worker's runs say so)
    with progress, announce_compiles(f"experiment {name}", lambda: _compile_estimate(name)):
        task = progress.add_task("runs", total=total)
        rows = run_experiment(name, seed_list, quick=quick, jobs=jobs, on_done=finished, overrides=extra)
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


def _compile_estimate(name: str) -> float | None:
    """Seconds a cold compile of the experiment's kernels takes: the sum over the presets its
    conditions start from (None when one is unknown)."""
    from flocksim.compile_notice import compile_estimate
    from flocksim.experiments import EXPERIMENTS, PRESETS
    from flocksim.scenarios import load_preset

    presets = sorted({c.preset or PRESETS[c.dim] for c in EXPERIMENTS[name].conditions})
    figures = [compile_estimate(load_preset(p), p) for p in presets]
    return None if any(f is None for f in figures) else sum(f for f in figures if f is not None)


def register(app: typer.Typer) -> None:
    app.command()(experiment)

"""``flocksim bench``: time the engine on a standard workload, one JSON object per case."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Annotated, Literal

import typer

from flocksim.cli_common import ENGINE_HELP


def bench(
    workload: Annotated[str, typer.Option(help="Workload: abm-flocking.")] = "abm-flocking",
    dim: Annotated[list[int] | None, typer.Option(help="Dimension 2 or 3 (repeatable).")] = None,
    n: Annotated[list[int] | None, typer.Option("--n", help="Number of agents (repeatable).")] = None,
    neighbors: Annotated[list[str] | None, typer.Option(help="metric or topological (repeatable).")] = None,
    k: Annotated[int, typer.Option(min=1, max=1024, help="Neighbours in topological mode.")] = 7,
    steps: Annotated[int, typer.Option(min=1, help="Timed steps (each timed alone).")] = 20,
    warmup: Annotated[int, typer.Option(min=1, help="Untimed steps first (the first one compiles).")] = 3,
    threads: Annotated[int | None, typer.Option(min=1, help="CPU threads (default: all).")] = None,
    engine: Annotated[str, typer.Option(help=ENGINE_HELP)] = "cpu",
    seed: Annotated[int, typer.Option(min=0, help="Seed of the uniform random start.")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print only the JSON lines (no table).")] = False,
    background_load: Annotated[
        int, typer.Option(help="Busy processes (0..64) started before the timing and stopped after it.")
    ] = 0,
) -> None:
    """Benchmark the engine: median and best milliseconds per step, compile time, peak memory.

    Every combination of --dim, --n and --neighbors is one case and one JSON line.
    --background-load K keeps K more cores busy meanwhile (a contended machine).
    Example: flocksim bench --workload abm-flocking --dim 2 --n 100000 --neighbors metric --json
    Example: flocksim bench --n 10000 --threads 1 --background-load 1
    """
    from rich.console import Console

    from flocksim.background_load import BackgroundLoad, check_background_load
    from flocksim.bench import WORKLOADS, run_case
    from flocksim.cli_common import fail

    dims = dim or [2]
    sizes = n or [100_000]
    modes = neighbors or ["metric"]
    if workload not in WORKLOADS:
        fail(f"--workload: unknown workload {workload!r}; allowed: {', '.join(WORKLOADS)}")
    for d in dims:
        if d not in (2, 3):
            fail(f"--dim: must be 2 or 3, got {d}")
    for size in sizes:
        if size < 1:
            fail(f"--n: must be >= 1, got {size}")
    for mode in modes:
        if mode not in ("metric", "topological"):
            fail(f"--neighbors: unknown mode {mode!r}; allowed: metric, topological")
    try:
        check_background_load(background_load)
    except ValueError as exc:
        fail(str(exc))
    err = Console(stderr=True)
    cases = [(d, size, mode) for d in dims for size in sizes for mode in modes]
    rows = []
    with BackgroundLoad(background_load):  # started before the timing, stopped also on an error or Ctrl-C
        for d, size, mode in cases:
            if not as_json:
                err.print(f"[dim]running {workload} {d}D n={size} {mode} ...", highlight=False)
            if len(cases) == 1:
                try:
                    row = run_case(workload, d, size, _mode(mode), k, steps, warmup, threads, engine, seed)
                except ValueError as exc:
                    fail(str(exc))
            else:  # a fresh process per case, so peak memory and compile time are the case's own (the load is ours)
                args = [sys.executable, "-m", "flocksim.cli", "bench", "--workload", workload, "--dim", str(d),
                        "--n", str(size), "--neighbors", mode, "--k", str(k), "--steps", str(steps),
                        "--warmup", str(warmup), "--engine", engine, "--seed", str(seed), "--json"]  # fmt: skip
                if threads is not None:
                    args += ["--threads", str(threads)]
                # its standard error is ours: a compile notice or an error shows as it comes
                done = subprocess.run(args, stdout=subprocess.PIPE, text=True, check=False)
                if done.returncode != 0:
                    raise typer.Exit(done.returncode)
                row = json.loads(done.stdout.strip().splitlines()[-1])
            row["background_load"] = background_load
            rows.append(row)
            print(json.dumps(row), flush=True)
    if not as_json:
        for row in rows:
            err.print(
                f"{row['workload']} {row['dim']}D n={row['n']} {row['neighbors']}: "
                f"{row['ms_per_step_median']:.2f} ms/step median ({row['ms_per_step_min']:.2f} best), "
                f"{row['threads']} threads ({row['threading_layer']}), compile {row['compile_s']:.2f} s, "
                f"peak RSS {row['peak_rss_mb']:.0f} MB, {row['background_load']} busy processes",
                highlight=False,
            )


def _mode(mode: str) -> Literal["metric", "topological"]:
    return "metric" if mode == "metric" else "topological"


def register(app: typer.Typer) -> None:
    app.command("bench")(bench)

"""``flocksim validate``: run the checks against published results and write a report."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console


def validate(
    quick: Annotated[
        bool, typer.Option("--quick", help="Smaller, shorter checks (under 3 minutes on 2 cores).")
    ] = False,
    output: Annotated[
        Path, typer.Option("--output", "-o", help="Report folder: validation.md and one PNG per check.")
    ] = Path("validation-report"),
    only: Annotated[
        list[str] | None, typer.Option("--only", help="Run only this check (repeatable); see --list.")
    ] = None,
    list_checks: Annotated[bool, typer.Option("--list", help="List the checks and exit.")] = False,
) -> None:
    """Check flocksim against published results (Vicsek 1995, Couzin 2002, inertial-spin theory, metric
    identities); write a markdown report with figures. Exits 1 if a check fails.

    Example: flocksim validate --quick -o report

    One check: flocksim validate --quick --only vicsek
    """
    from flocksim.validate import CHECKS, run_checks, write_report
    from flocksim.validate.report import check_report_folder

    out, err = Console(), Console(stderr=True)
    if list_checks:
        for name, fn in CHECKS.items():
            out.print(f"{name}: {(fn.__doc__ or '').strip().splitlines()[0] if fn.__doc__ else ''}", markup=False)
        return
    bad = [name for name in only or [] if name not in CHECKS]
    if bad:
        err.print(f"error: --only: unknown check {bad[0]!r}; allowed: {', '.join(CHECKS)}", markup=False)
        raise typer.Exit(2)
    try:
        check_report_folder(output)
    except ValueError as exc:
        err.print(f"error: {exc}", markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None
    started = time.perf_counter()
    results = run_checks(quick, only, on_start=lambda name: err.print(f"validate: {name} ...", markup=False))
    for r in results:
        failed = [m.name for m in r.measurements if not m.passed]
        status = "pass" if r.passed else f"FAIL ({'; '.join(failed)})"
        out.print(f"{r.name}: {status} [{r.seconds:.1f} s]", markup=False, highlight=False, soft_wrap=True)
    path = write_report(results, output, quick)
    passed = sum(r.passed for r in results)
    out.print(
        f"validate: {passed} of {len(results)} checks passed in {time.perf_counter() - started:.0f} s"
        f"{' (quick)' if quick else ''}; report {path}",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
    if passed < len(results):
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("validate")(validate)

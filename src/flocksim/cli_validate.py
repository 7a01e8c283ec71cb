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
    set_: Annotated[
        list[str] | None,
        typer.Option(
            "--set",
            help="Change the model of the vicsek, couzin or starling checks, KEY=VALUE with a vicsek.* or couzin.* "
            "key, or starlings.KEY for KEY of the starlings-3d preset (repeatable): a deliberately changed model "
            "must fail against the references.",
        ),
    ] = None,
    reference: Annotated[
        Path | None,
        typer.Option(
            "--reference",
            help="Folder of the stored reference curves (default: docs/results/validation of the source checkout).",
        ),
    ] = None,
    make_reference: Annotated[
        bool,
        typer.Option(
            "--make-reference",
            help="Re-make the reference curves with the independent NumPy references (every protocol, quick and "
            "full) and write them into the reference folder instead of running the checks.",
        ),
    ] = False,
    seeds: Annotated[
        int | None,
        typer.Option(
            "--seeds",
            help="flocksim seeds per point of the vicsek and couzin checks (default: the protocol's); more seeds "
            "narrow the point-by-point tolerances.",
            min=1,
            max=1000,
        ),
    ] = None,
    jobs: Annotated[int, typer.Option("--jobs", help="Processes for --make-reference.", min=1, max=256)] = 1,
    force: Annotated[
        bool, typer.Option("--force", help="Replace the report in an --output folder that already holds one.")
    ] = False,
) -> None:
    """Check flocksim against published results (Vicsek 1995, Couzin 2002, inertial-spin theory, banked
    starlings after Hildenbrandt et al. 2010, metric identities), point by point against independent NumPy
    references of the papers where there is one; write a markdown report with figures. Exits 1 if a check
    fails.

    Example: flocksim validate --quick -o report

    One check: flocksim validate --quick --only vicsek

    A changed model fails: flocksim validate --quick --only vicsek --set vicsek.update=forward

    Starlings with 6 neighbours fail: flocksim validate --quick --only starling-step --set starlings.neighbors.k=6

    Re-make the reference curves (docs/results/validation/): flocksim validate --make-reference --jobs 2

    The report's figures need the plot extra: pip install 'flocksim\\[plot]'
    """
    from flocksim._extras import require
    from flocksim.validate import CHECKS, run_checks, write_report
    from flocksim.validate.curves import ReferenceError, default_folder
    from flocksim.validate.report import check_report_folder

    out, err = Console(), Console(stderr=True)

    def fail(message: str) -> None:
        err.print(f"error: {message}", markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(2)

    if list_checks:
        for name, check in CHECKS.items():
            guards = f" Guards: {check.guards}." if check.guards else ""
            out.print(f"{name}: {check.summary}{guards}", markup=False, highlight=False, soft_wrap=True)
        return
    bad = [name for name in only or [] if name not in CHECKS]
    if bad:
        fail(f"--only: unknown check {bad[0]!r}; allowed: {', '.join(CHECKS)}")
    folder = reference or default_folder()
    if make_reference:
        _make_reference(folder, only, jobs, out, fail)
        return
    require("plot", "flocksim validate")  # the report's figures, before the checks run
    try:
        check_report_folder(output, force=force)
    except ValueError as exc:
        fail(str(exc))
    overrides = tuple(set_ or ())
    problem = _check_overrides(overrides)
    if problem:
        fail(problem)
    try:
        _check_references(folder, quick, only)
    except ReferenceError as exc:
        fail(str(exc))
    started = time.perf_counter()
    results = run_checks(
        quick,
        only,
        on_start=lambda name: err.print(f"validate: {name} ...", markup=False),
        overrides=overrides,
        reference=folder,
        seeds=seeds,
    )
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


def _check_overrides(overrides: tuple[str, ...]) -> str:
    """'' if every --set names a key of the vicsek or couzin parameters (or starlings.KEY of the starlings-3d
    preset) with an allowed value, else the error."""
    from flocksim.config import ConfigError, apply_overrides, validate
    from flocksim.validate.suite import MODELS

    for text in overrides:
        key = text.split("=", 1)[0].strip()
        model = key.split(".", 1)[0]
        if "=" not in text or model not in MODELS or "." not in key:
            return f"--set: {text!r}; allowed: KEY=VALUE with a key {' or '.join(f'{m}.*' for m in MODELS)}"
        try:
            if model == "starlings":
                from flocksim.scenarios import load_preset
                from flocksim.validate.starlings import PRESET, strip

                apply_overrides(load_preset(PRESET), strip((text,)))
            else:
                apply_overrides(validate({"model": model}), [text])
        except ConfigError as exc:
            return f"--set: {exc}"
    return ""


def _check_references(folder: Path, quick: bool, only: list[str] | None) -> None:
    """Raise ReferenceError unless the stored curves that the selected checks need are there and current."""
    from flocksim.validate.curves import couzin_reference, vicsek_reference
    from flocksim.validate.protocols import COUZIN, VICSEK, protocol_name

    name = protocol_name(quick)
    if not only or "vicsek" in only:
        vicsek_reference(VICSEK[name], folder)
    if not only or "couzin-reference" in only:
        couzin_reference(COUZIN[name], folder)


def _make_reference(folder: Path, only: list[str] | None, jobs: int, out: Console, fail) -> None:
    from flocksim.validate.curves import make_reference

    models = [m for m, check in (("vicsek", "vicsek"), ("couzin", "couzin-reference")) if not only or check in only]
    if not models:
        fail("--make-reference: no check with a reference selected; allowed --only: vicsek, couzin-reference")
    started = time.perf_counter()
    paths = make_reference(folder, models, jobs, on_done=lambda text: out.print(f"reference: {text}", markup=False))
    out.print(
        f"validate: reference curves written in {time.perf_counter() - started:.0f} s: "
        + ", ".join(str(p) for p in paths),
        markup=False,
        highlight=False,
        soft_wrap=True,
    )


def register(app: typer.Typer) -> None:
    app.command("validate")(validate)

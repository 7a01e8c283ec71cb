"""The validation report: markdown with one PNG per check (matplotlib's Agg canvas, no pyplot)."""

from __future__ import annotations

import os
import platform
from datetime import date
from pathlib import Path

from flocksim._extras import require
from flocksim.validate.checks import CheckResult


def check_report_folder(folder: Path, force: bool = True) -> None:
    """Refuse, before any check runs, a report folder that cannot be written: a file, a folder
    that is read-only (or on a read-only file system), or a new folder whose nearest existing
    parent is; without ``force``, a folder that already holds a report (validation.md).
    Raises ValueError (one line)."""
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"--output: {folder} is a file; allowed: a folder (created if missing)")
    if not force and os.path.lexists(folder / "validation.md"):
        raise ValueError(
            f"--output: {folder} already holds a report ({folder / 'validation.md'}); "
            "allowed: --force to replace it, or another folder"
        )
    existing = folder
    while not existing.exists():  # the folder is created with its missing parents
        existing = existing.parent
    if not existing.is_dir():
        raise ValueError(f"--output: {existing} is a file, so {folder} cannot be created; allowed: a folder")
    if not os.access(existing, os.W_OK | os.X_OK):
        what = "" if existing == folder else f" (to create {folder} in)"
        raise ValueError(f"--output: folder {existing}{what} is not writable (read-only, or a read-only file system)")


def write_figure(result: CheckResult, path: Path) -> bool:
    """Draw the check's figure into ``path`` (PNG); False when the check has none."""
    if result.plot is None:
        return False
    require("plot", "flocksim.validate.report.write_figure")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7, 4.5))
    FigureCanvasAgg(fig)
    result.plot(fig.add_subplot(1, 1, 1))
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    return True


def markdown(results: list[CheckResult], quick: bool, figures: dict[str, str], header: str = "") -> str:
    """The report text; ``figures`` maps a check name to its image path relative to the report."""
    passed = sum(r.passed for r in results)
    lines = [
        f"# flocksim validation report{' (quick)' if quick else ''}",
        "",
        header or f"Run on {date.today().isoformat()}, Python {platform.python_version()}, {platform.machine()}.",
        "",
        f"**{passed} of {len(results)} checks passed** in {sum(r.seconds for r in results):.0f} s.",
        "",
        "| check | result | time [s] |",
        "|---|---|---|",
    ]
    lines += [f"| {r.name} | {'pass' if r.passed else '**FAIL**'} | {r.seconds:.1f} |" for r in results]
    for r in results:
        lines += ["", f"## {r.name}: {r.title}", "", f"Reference: {r.reference}.", "", r.notes, ""]
        lines += ["| measurement | measured | allowed | expected (source) | |", "|---|---|---|---|---|"]
        for m in r.measurements:
            lines.append(
                f"| {m.name} | {m.value:.5g} | {m.bounds_text()} | {m.expected} | {'ok' if m.passed else '**FAIL**'} |"
            )
        if r.table:
            keys = list(r.table[0])
            lines += ["", "| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
            lines += ["| " + " | ".join(str(row[k]) for k in keys) + " |" for row in r.table]
        if r.name in figures:
            lines += ["", f"![{r.name}]({figures[r.name]})"]
    return "\n".join(lines) + "\n"


def write_report(results: list[CheckResult], folder: Path, quick: bool, image_folder: str = "") -> Path:
    """Write ``validation.md`` and the PNGs (into ``folder / image_folder``); returns the markdown path."""
    folder.mkdir(parents=True, exist_ok=True)
    images = folder / image_folder if image_folder else folder
    images.mkdir(parents=True, exist_ok=True)
    figures = {}
    for r in results:
        png = images / f"{r.name}.png"
        if write_figure(r, png):
            figures[r.name] = png.relative_to(folder).as_posix()
    path = folder / "validation.md"
    path.write_text(markdown(results, quick, figures), encoding="utf-8")
    return path

"""A quick figure of sweep results: a summary against a swept key, one line per hue value.

Each point is the mean over the rows with status ``ok`` that share its x (and hue) value:
the seeds, and any other swept key, which the title names. Error bars are one standard
deviation of those rows. An axis swept as a ``log`` range is drawn on a log scale; text
and boolean axes are drawn as categories in sweep order.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from flocksim._extras import require
from flocksim.atomic import OutputError, atomic_path, check_output
from flocksim.sweep.results import read_results, sweep_metadata
from flocksim.sweep.spec import RESERVED_COLUMNS, SweepError

FORMATS = (".png", ".svg", ".pdf")


def plot_results(
    source: str | Path,
    x: str | None,
    y: str | None,
    hue: str | None = None,
    output: str | Path | None = None,
    replace: bool = True,
) -> Path:
    """Draw ``y`` against ``x`` (one line per ``hue`` value) and save it; returns the figure path.

    Bad input (unknown column, no ok rows, unsupported format) raises :class:`SweepError`.
    """
    require("plot", "flocksim.sweep.plot.plot_results")
    source = Path(source)
    if not source.is_file():
        raise SweepError(f"plot: no file {str(source)!r}; allowed: a results file written by flocksim sweep")
    meta = sweep_metadata(source)
    table = read_results(source)
    axes = [c for c in table.column_names if c not in RESERVED_COLUMNS and c in _axis_keys(meta)]
    summaries = [c for c in table.column_names if c not in RESERVED_COLUMNS and c not in axes]
    keys = [*axes, "seed"]
    if x is None or x not in keys:
        given = "missing" if x is None else f"unknown column {x!r}"
        raise SweepError(f"-x: {given}; allowed: {', '.join(keys)}")
    if y is None or y not in summaries:
        given = "missing" if y is None else f"unknown summary {y!r}"
        raise SweepError(f"-y: {given}; allowed: {', '.join(summaries)}")
    if hue is not None and (hue not in keys or hue == x):
        raise SweepError(f"--hue: unknown column {hue!r}; allowed: {', '.join(k for k in keys if k != x)}")
    output = Path(output) if output is not None else source.with_suffix(".png")
    _check_output(output, replace)

    rows = [r for r in table.to_pylist() if r["status"] == "ok"]
    if not rows:
        raise SweepError(f"plot: {source} has no rows with status ok to plot")
    x_values = _ordered(r[x] for r in rows)
    hue_values = _ordered(r[hue] for r in rows) if hue else [None]
    categorical = not all(_is_number(v) for v in x_values)
    positions = {v: i for i, v in enumerate(x_values)} if categorical else {v: float(v) for v in x_values}

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.0, 4.5), layout="constrained")
    for h in hue_values:
        xs, means, stds = [], [], []
        for v in x_values:
            ys = np.array([r[y] for r in rows if r[x] == v and (hue is None or r[hue] == h)], dtype=float)
            ys = ys[np.isfinite(ys)]
            if len(ys):
                xs.append(positions[v])
                means.append(float(ys.mean()))
                stds.append(float(ys.std()))
        label = f"{hue} = {h}" if hue else None
        ax.errorbar(xs, means, yerr=stds, marker="o", capsize=3, label=label)
    if categorical:
        ax.set_xticks(range(len(x_values)), [str(v) for v in x_values])
    elif x in meta.get("log_axes", []):
        ax.set_xscale("log")
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    averaged = ["seeds" if k == "seed" else k for k in keys if k not in (x, hue)]
    over = f" over {', '.join(averaged)}" if averaged else ""
    ax.set_title(f"{meta.get('name', source.stem)}: mean ± s.d.{over} ({len(rows)} runs)", fontsize=10)
    if hue:
        ax.legend()
    ax.grid(alpha=0.3)
    _save_atomic(fig, output)
    plt.close(fig)
    return output


def _axis_keys(meta: dict[str, Any]) -> list[str]:
    import tomllib

    spec = tomllib.loads(meta.get("sweep", ""))
    return [a["key"] for a in spec.get("axes", [])]


def _ordered(values: Any) -> list[Any]:
    seen: list[Any] = []
    for v in values:
        if v not in seen:
            seen.append(v)
    if all(_is_number(v) for v in seen):
        seen.sort()
    return seen


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _check_output(output: Path, replace: bool) -> None:
    if output.suffix.lower() not in FORMATS:
        raise SweepError(f"-o: {output} has an unsupported format; allowed: a path ending in {', '.join(FORMATS)}")
    try:
        check_output("-o", output, replace=replace)
    except OutputError as exc:
        raise SweepError(str(exc)) from None


def _save_atomic(fig: Any, output: Path) -> None:
    with atomic_path(output) as tmp:
        fig.savefig(tmp, format=output.suffix.lower().lstrip("."), dpi=120)

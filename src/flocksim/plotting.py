"""Metric plots of a run (``flocksim plot run.zarr`` or ``flocksim plot metrics.csv``).

One panel per quantity against simulated time [s]: polarization, milling, mean neighbours,
speed (mean, with a band of +- one standard deviation) and birds caught (when the run has
predator counts; otherwise the alive count). Drawn with matplotlib's Agg canvas (no display,
no pyplot state), written atomically as PNG, SVG or PDF by the output's suffix.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np

from flocksim._extras import require
from flocksim.atomic import atomic_path

FIGURE_SUFFIXES = (".png", ".svg", ".pdf")
PANELS = (
    ("polarization", "polarization", (0.0, 1.02)),
    ("milling", "milling", (0.0, 1.02)),
    ("mean_neighbors", "mean neighbours", None),
    ("speed_mean", "speed [units/s]", None),
)


class PlotError(ValueError):
    """A source or output that cannot be plotted (one line)."""


def load_metrics(source: str | Path) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """(time [s], {metric: values}) from a trajectory store or a ``flocksim run --metrics`` CSV."""
    source = Path(source)
    if source.is_dir() or source.suffix.lower() == ".zarr":
        from flocksim.io.store import TrajectoryStore

        store = TrajectoryStore.open(source)
        return store.read("time"), {name: store.read(name) for name in store.metric_names()}
    if source.suffix.lower() != ".csv":
        raise PlotError(f"{source}: cannot plot it; allowed: a trajectory store (directory) or a metrics .csv")
    try:
        with source.open(newline="", encoding="utf-8") as handle:
            rows = list(csv.DictReader(handle))
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise PlotError(f"{source}: cannot read it ({type(exc).__name__}: {exc})") from None
    if not rows or "time" not in rows[0]:
        raise PlotError(f"{source}: no 'time' column; allowed: a CSV written by flocksim run --metrics")
    columns: dict[str, np.ndarray] = {}
    for key in rows[0]:
        try:
            columns[key] = np.array([float(r[key]) if r[key] not in ("", None) else math.nan for r in rows])
        except ValueError:
            continue  # a text column: not a metric
    time = columns.pop("time")
    columns.pop("step", None)
    return time, columns


def plot_metrics(source: str | Path, output: str | Path, title: str | None = None) -> Path:
    """Draw the metric panels of ``source`` into ``output``; returns ``output``."""
    require("plot", "flocksim.plotting.plot_metrics")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    output = Path(output)
    suffix = output.suffix.lower()
    if suffix not in FIGURE_SUFFIXES:
        raise PlotError(f"-o: cannot write {output.name!r}; allowed: a file ending in {', '.join(FIGURE_SUFFIXES)}")
    time, metrics = load_metrics(source)
    panels = [p for p in PANELS if p[0] in metrics]
    if "caught" in metrics:
        panels.append(("caught", "caught", None))
    elif "n_alive" in metrics:
        panels.append(("n_alive", "alive agents", None))
    if not panels:
        raise PlotError(f"{source}: holds none of {', '.join(p[0] for p in PANELS)}, caught, n_alive")
    figure = Figure(figsize=(8.0, 1.9 * len(panels) + 0.8), dpi=110, layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.subplots(len(panels), 1, sharex=True, squeeze=False)[:, 0]
    for ax, (key, label, ylim) in zip(axes, panels, strict=True):
        values = metrics[key]
        ax.plot(time, values, color="#1f5fa8", linewidth=1.3)
        if key == "speed_mean" and "speed_std" in metrics:
            std = metrics["speed_std"]
            ax.fill_between(time, values - std, values + std, color="#1f5fa8", alpha=0.2, linewidth=0)
        if ylim is not None:
            ax.set_ylim(*ylim)
        elif key in ("caught", "n_alive"):
            ax.set_ylim(bottom=0.0, top=max(float(np.nanmax(values)) * 1.05, 1.0) if len(values) else 1.0)
        ax.set_ylabel(label)
        ax.grid(True, alpha=0.3)
    axes[-1].set_xlabel("time [s]")
    figure.suptitle(title or Path(source).name)
    with atomic_path(output) as tmp:
        figure.savefig(tmp, format=suffix[1:])
    return output

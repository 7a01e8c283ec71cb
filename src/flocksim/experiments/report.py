"""The report of an experiment: mean, standard deviation and count per (dim, condition, metric),
and the table `flocksim experiment` prints (mean ± sd [95 % confidence interval of the mean])."""

from __future__ import annotations

import math

import numpy as np

from flocksim.experiments.registry import EXPERIMENTS


def summarize(rows: list[dict[str, object]]) -> list[dict[str, object]]:
    """Mean, sample standard deviation (0 for one seed) and count of finite values per
    (dim, condition, metric), in first-appearance order."""
    groups: dict[tuple[int, str, str], list[float]] = {}
    for row in rows:
        key = (int(row["dim"]), str(row["condition"]), str(row["metric"]))
        groups.setdefault(key, []).append(float(row["value"]))
    out = []
    for (dim, condition, metric), values in groups.items():
        v = np.asarray(values)
        v = v[np.isfinite(v)]
        mean = float(v.mean()) if len(v) else math.nan
        sd = float(v.std(ddof=1)) if len(v) > 1 else (0.0 if len(v) else math.nan)
        out.append({"dim": dim, "condition": condition, "metric": metric, "mean": mean, "sd": sd, "n": len(v)})
    return out


def mean_interval(mean: float, sd: float, n: int, level: float = 0.95) -> tuple[float, float]:
    """Student-t confidence interval of a mean over n independent runs (NaN for n < 2)."""
    if n < 2 or not math.isfinite(mean):
        return math.nan, math.nan
    from scipy.stats import t

    half = float(t.ppf(0.5 + level / 2, n - 1)) * sd / math.sqrt(n)
    return mean - half, mean + half


def format_value(mean: float, sd: float, n: int) -> str:
    """'mean ± sd [95 % confidence interval of the mean]', 3 significant digits for the mean and
    the others at the mean's last digit; just the mean for one run."""
    if not math.isfinite(mean):
        return "n/a"
    digits = max(0, 2 - math.floor(math.log10(abs(mean)))) if mean != 0 else 3
    if n < 2:
        return f"{mean:.{digits}f}"
    low, high = mean_interval(mean, sd, n)
    return f"{mean:.{digits}f} ± {sd:.{digits}f} [{low:.{digits}f}, {high:.{digits}f}]"


def table_title(name: str, seeds: int) -> str:
    return f"{name} ({seeds} seeds, mean ± sd [95 % CI of the mean])" if seeds > 1 else f"{name} (1 seed)"


def summary_table(name: str, summary: list[dict[str, object]], seeds: int):
    """A rich table: one line per (dim, condition), one column per metric (mean ± sd over seeds and the
    95 % confidence interval of the mean),
    and what the reference simulator reports."""
    from rich.table import Table

    experiment = EXPERIMENTS[name]
    if experiment.field_values:
        return metric_rows_table(name, summary, seeds)
    metrics = list(dict.fromkeys(str(s["metric"]) for s in summary))
    title = table_title(name, seeds)
    table = Table(title=title, title_justify="left")
    for column in ("dim", "condition", *metrics, "reference reports"):
        table.add_column(column)
    cells: dict[tuple[int, str], dict[str, str]] = {}
    for s in summary:
        key = (int(s["dim"]), str(s["condition"]))
        cells.setdefault(key, {})[str(s["metric"])] = format_value(float(s["mean"]), float(s["sd"]), int(s["n"]))
    for (dim, condition), values in cells.items():
        reported = experiment.reported.get((dim, condition), "")
        table.add_row(f"{dim}D", condition, *(values.get(m, "") for m in metrics), reported)
    return table


def metric_rows_table(name: str, summary: list[dict[str, object]], seeds: int):
    """A rich table with one row per metric, one column per (dim, condition) (mean ± sd over seeds
    [95 % confidence interval of the mean]) and the field studies' value of the metric."""
    from rich.table import Table

    experiment = EXPERIMENTS[name]
    conditions = list(dict.fromkeys((int(s["dim"]), str(s["condition"])) for s in summary))
    metrics = list(dict.fromkeys(str(s["metric"]) for s in summary))
    title = table_title(name, seeds)
    table = Table(title=title, title_justify="left")
    table.add_column("metric")
    for dim, condition in conditions:
        table.add_column(f"{dim}D {condition}")
    table.add_column("field")
    cells = {
        (int(s["dim"]), str(s["condition"]), str(s["metric"])): format_value(
            float(s["mean"]), float(s["sd"]), int(s["n"])
        )
        for s in summary
    }
    for metric in metrics:
        row = [cells.get((dim, condition, metric), "") for dim, condition in conditions]
        table.add_row(metric, *row, experiment.field_values.get(metric, ""))
    return table

"""What ``flocksim analyze`` shows: the summary of :func:`flocksim.metrics.series.analyze` as table
rows, and a figure of the per-frame series (matplotlib Agg, written atomically: PNG, SVG or PDF)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from flocksim._extras import require
from flocksim.atomic import atomic_path
from flocksim.metrics.series import EDGE_MIN_POLARIZATION, SHAPE_MIN_POLARIZATION, TrackAnalysis
from flocksim.plotting import FIGURE_SUFFIXES, PlotError

ROWS = (
    ("frames", "frames", "{:.0f}", "after resampling, if any"),
    ("birds_present_mean", "birds present", "{:.1f}", "mean per frame; each analysis uses the birds of its frame"),
    ("polarization", "polarization", "{:.3f}", "|mean unit heading|, mean over frames"),
    ("polarization_sd", "polarization sd", "{:.3f}", "over frames"),
    ("milling", "milling", "{:.3f}", "Couzin's angular momentum, mean over frames"),
    ("state_polarized", "state: polarized", "{:.0%}", "of frames (P > 0.65, M < 0.35)"),
    ("state_milling", "state: milling", "{:.0%}", "of frames (M > 0.65, P < 0.35)"),
    ("state_swarm", "state: swarm", "{:.0%}", "of frames (P, M < 0.35)"),
    ("state_transitional", "state: transitional", "{:.0%}", "of frames (anything else)"),
    ("speed_mean", "speed", "{:.4g}", "mean |v| [units/{t}]"),
    ("speed_std", "speed sd", "{:.4g}", "within a frame, mean over frames [units/{t}]"),
    ("speed_fluctuation", "speed fluctuation", "{:.4g}", "var(|v|) / mean(|v|)^2, mean over frames"),
    ("nnd_mean", "nearest-neighbour distance", "{:.4g}", "mean [units]"),
    ("misalignment", "local misalignment", "{:.4f}", "angle to the 6 nearest neighbours' mean heading [rad], mean"),
    ("edge_deviation", "edge heading deviation", "{:.4f}", "outer 10 % of birds [rad], frames with P >= {e}"),
    ("interior_deviation", "interior heading deviation", "{:.4f}", "inner 50 % [rad], frames with P >= {e}"),
    ("axis_cos", "shape: heading vs long axis", "{:.3f}", "|cos|, frames with P >= {s}"),
    ("aspect", "shape: aspect", "{:.3f}", "width / length, frames with P >= {s}"),
    ("correlation_length", "orientation correlation length", "{:.4g}", "first zero of C(r) [units], {c} frames"),
    ("speed_correlation_length", "speed correlation length", "{:.4g}", "first zero of C(r) [units], {c} frames"),
    ("gamma1", "anisotropy gamma(1)", "{:.3f}", "Ballerini; isotropic 1/dim, {c} frames"),
    ("repetition_index", "repetition index", "{:.3f}", "how the centroid's path retraces itself"),
    ("time_polarization_below_0.6", "time with P < 0.6", "{:.0%}", "fraction of frames"),
)
"""(summary key, label, value format, what it is) in table order."""


def summary_rows(analysis: TrackAnalysis, time_unit: str) -> list[tuple[str, str, str]]:
    """(label, value, what) per row of :data:`ROWS`; "n/a" where a value is undefined (NaN)."""
    unit = "s" if time_unit == "s" else "frame"
    notes = {
        "t": unit,
        "e": EDGE_MIN_POLARIZATION,
        "s": SHAPE_MIN_POLARIZATION,
        "c": int(analysis.summary["correlation_frames"]),
    }
    rows = []
    for key, label, fmt, what in ROWS:
        value = analysis.summary[key]
        text = "n/a" if math.isnan(value) else fmt.format(value)
        rows.append((label, text, what.format(**notes)))
    return rows


def plot_analysis(analysis: TrackAnalysis, output: str | Path, title: str, time_unit: str) -> Path:
    """Polarization and milling, speed, nearest-neighbour distance and birds present over time, and
    C(r) of orientation and speed on the middle correlation frame; written to ``output``."""
    require("plot", "flocksim.tracks_report.plot_analysis")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    output = Path(output)
    suffix = output.suffix.lower()
    if suffix not in FIGURE_SUFFIXES:
        raise PlotError(f"--plot: cannot write {output.name!r}; allowed: a file ending in {', '.join(FIGURE_SUFFIXES)}")
    s, t = analysis.series, analysis.time
    unit = "s" if time_unit == "s" else "frames"
    figure = Figure(figsize=(8.0, 10.0), dpi=110, layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.subplots(5, 1, squeeze=False)[:, 0]
    axes[0].plot(t, s["polarization"], label="polarization", color="#1f5fa8")
    axes[0].plot(t, s["milling"], label="milling", color="#c0392b")
    axes[0].set_ylim(0.0, 1.02)
    axes[0].legend(loc="lower right")
    axes[1].plot(t, s["speed_mean"], color="#1f5fa8")
    axes[1].fill_between(
        t, s["speed_mean"] - s["speed_std"], s["speed_mean"] + s["speed_std"], color="#1f5fa8", alpha=0.2, lw=0
    )
    axes[1].set_ylabel(f"speed [units/{'s' if unit == 's' else 'frame'}]")
    axes[2].plot(t, s["nnd_mean"], color="#1f5fa8")
    axes[2].set_ylabel("nearest neighbour")
    axes[3].plot(t, s["n_present"], color="#1f5fa8")
    axes[3].set_ylabel("birds present")
    axes[3].set_ylim(bottom=0.0, top=max(float(np.nanmax(s["n_present"])) * 1.05, 1.0))
    for ax in axes[:4]:
        ax.set_xlabel(f"time [{unit}]")
        ax.grid(True, alpha=0.3)
    corr = axes[4]
    for kind, color in (("orientation", "#1f5fa8"), ("speed", "#c0392b")):
        curve = analysis.curves.get(kind)
        if curve is not None:
            corr.plot(curve.centres, curve.c, color=color, label=f"C(r), {kind}")
    corr.axhline(0.0, color="black", linewidth=0.8)
    corr.set_xlabel("distance r [units]")
    corr.set_ylabel("correlation")
    if analysis.curves:
        frame = analysis.correlation_frames[len(analysis.correlation_frames) // 2]
        corr.set_title(f"connected correlation at t = {analysis.time[frame]:g} {unit}", fontsize=10)
        corr.legend(loc="upper right")
    else:
        corr.set_title("connected correlation: no frame with 3 birds or more", fontsize=10)
    corr.grid(True, alpha=0.3)
    figure.suptitle(title)
    with atomic_path(output) as tmp:
        figure.savefig(tmp, format=suffix[1:])
    return output

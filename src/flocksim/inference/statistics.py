"""The summary statistics of a fit, computed one way for the tracks and for every simulated run.

Both go through :func:`flocksim.metrics.series.analyze`, the analysis behind ``flocksim analyze``.
A simulated run is made to look like the tracks before it is analysed: the tracks' agent count,
frame interval and number of frames (the model's ``world.dt`` must divide the frame interval), the
tracks' missing birds removed frame by frame, positions unwrapped in the preset's periodic box
(:func:`flocksim.io.unwrap.unwrap`, as :func:`flocksim.io.open_tracks` does) and velocities
estimated from positions with the tracks' own estimator
(:func:`flocksim.io.resample.velocity_from_positions`). The run is discarded for ``burn_in_steps``
steps first, so that it is compared in its steady state.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from flocksim.inference.priors import FitError
from flocksim.metrics.series import analyze

STATISTICS = (
    "polarization",
    "polarization_sd",
    "milling",
    "speed_mean",
    "speed_fluctuation",
    "nnd_mean",
    "misalignment",
    "correlation_length",
    "aspect",
    "axis_cos",
)
"""Summary keys of :func:`flocksim.metrics.series.summarize` a fit compares by default: polarization
(mean, sd), milling, speed [units/s] and its fluctuation, nearest-neighbour distance [units],
local misalignment (mean angle between a bird's heading and its 6 nearest neighbours' [rad]),
orientation correlation length [units], shape (aspect, heading vs long axis)."""
CENTROID_STATISTICS = ("milling", "aspect", "axis_cos")
"""The statistics that need the flock's centre: meaningless for a gas that fills a periodic box, so a
fit in a periodic box leaves them out unless asked for (they count as fitting a flock smaller than
half the box: :mod:`flocksim.metrics.series`)."""


def default_statistics(periodic: bool) -> tuple[str, ...]:
    """:data:`STATISTICS`, without :data:`CENTROID_STATISTICS` in a periodic box."""
    return tuple(s for s in STATISTICS if not (periodic and s in CENTROID_STATISTICS))


MIN_FRAMES = 10
"""Fewest frames a fit accepts (the statistics are means over frames)."""
MIN_BIRDS = 10
"""Fewest birds present per frame, on average, that a fit accepts."""
CORRELATION_FRAMES = 5
"""Frames per run with the O(N^2) correlation analysis (evenly spaced)."""


@dataclass(frozen=True)
class RunPlan:
    """How every simulated run of a fit is made comparable to the tracks.

    ``base``: the model's parameters (plain dict, ``agents.n`` = the tracks' agents); ``time`` (T,)
    the tracks' frame times [s]; ``steps_per_frame`` model steps between frames; ``burn_in_steps``
    steps run before the first frame; ``present`` (T, N) bool, which bird the tracks see in each
    frame; ``velocity``: the tracks' velocity estimator (central, backward, forward or recorded);
    ``box``: periodic box sides [units] or () for open space; ``statistics`` the summary keys."""

    base: dict[str, Any]
    time: np.ndarray
    steps_per_frame: int
    burn_in_steps: int
    present: np.ndarray
    velocity: str
    box: tuple[float, ...]
    statistics: tuple[str, ...]
    correlation_frames: int = CORRELATION_FRAMES


def statistics_of(
    time: np.ndarray,
    position: np.ndarray,
    velocity: np.ndarray,
    present: np.ndarray,
    box: tuple[float, ...],
    names: tuple[str, ...],
    correlation_frames: int,
) -> dict[str, float]:
    """The summary ``names`` of :func:`flocksim.metrics.series.analyze` over one recording (the one
    code path for tracks and simulations; NaN where a statistic is undefined)."""
    analysis = analyze(time, position, velocity, present, correlation_frames, box=np.asarray(box) if box else None)
    return {name: float(analysis.summary[name]) for name in names}


def steps_per_frame(frame_dt: float, model_dt: float) -> int:
    """Model steps per frame: ``frame_dt`` / ``model_dt`` [s / s], which must be a whole number >= 1."""
    ratio = frame_dt / model_dt
    k = round(ratio)
    if k < 1 or abs(ratio - k) > 1e-6 * max(k, 1):
        raise FitError(
            f"world.dt: the tracks' frame interval {frame_dt:g} s is not a whole number of model steps of "
            f"{model_dt:g} s; allowed: --set world.dt={frame_dt:g} or a divisor of it (or --fps for the tracks)"
        )
    return k


def check_tracks(present: np.ndarray, path: str) -> None:
    """FitError for tracks too short (< :data:`MIN_FRAMES` frames) or too sparse (< :data:`MIN_BIRDS`
    birds per frame on average) to fit a model to."""
    frames = present.shape[0]
    if frames < MIN_FRAMES:
        raise FitError(f"{path}: {frames} frames, too short to fit; allowed: tracks of at least {MIN_FRAMES} frames")
    birds = float(present.sum(axis=1).mean())
    if birds < MIN_BIRDS:
        raise FitError(
            f"{path}: {birds:.1f} birds per frame on average, too sparse to fit; allowed: at least {MIN_BIRDS}"
        )


def simulate_statistics(plan: RunPlan, values: dict[str, float], seed: int) -> dict[str, float]:
    """Run the model at ``values`` (dotted key -> value) with ``seed`` and return the statistics of
    its frames, made as the module docstring says."""
    from flocksim.config import apply_overrides, validate
    from flocksim.io.resample import velocity_from_positions
    from flocksim.io.unwrap import unwrap
    from flocksim.simulation import Simulation
    from flocksim.sweep.spec import override_text

    params = apply_overrides(validate(plan.base), [override_text(k, v) for k, v in values.items()])
    sim = Simulation(params, seed=seed, threads=1)
    sim.step(plan.burn_in_steps)
    frames, birds = plan.present.shape
    dim = params.world.dim
    position = np.empty((frames, birds, dim))
    recorded = np.empty((frames, birds, dim))
    for t in range(frames):
        if t:
            sim.step(plan.steps_per_frame)
        state = sim.state
        position[t] = state.position[:birds]
        recorded[t] = state.velocity[:birds]
    position[~plan.present] = np.nan
    if plan.box:
        position = unwrap(position, np.ones(frames - 1, dtype=bool), np.asarray(plan.box))
    if plan.velocity == "recorded":
        velocity = np.where(plan.present[:, :, None], recorded, np.nan)
    else:
        velocity = velocity_from_positions(plan.time, position, plan.velocity)
    present = np.all(np.isfinite(position), axis=2) & np.all(np.isfinite(velocity), axis=2)
    return statistics_of(plan.time, position, velocity, present, plan.box, plan.statistics, plan.correlation_frames)


def finite_or(value: float, fallback: float) -> float:
    """``value`` if finite, else ``fallback`` (a run whose statistic is undefined lands far away)."""
    return value if math.isfinite(value) else fallback

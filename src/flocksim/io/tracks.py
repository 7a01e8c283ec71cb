"""Tracked trajectories in, one layout out: :func:`open_tracks` (docs/field-data.md).

It reads a flocksim trajectory store (``run.zarr``), a ``movement`` dataset (``.nc``) or a CSV of
``frame,id,x,y[,z][,time]`` and returns an :class:`xarray.Dataset` laid out like a recorded run:

- dims ``time`` (coordinate: seconds, or frames when the source gives no frame rate; attribute
  ``time_unit`` says which), ``agent`` (the birds' ids or names) and ``space`` ("x", "y"[, "z"]);
- ``position`` and ``velocity`` (time, agent, space) float64, NaN where a bird is absent;
- ``present`` (time, agent) bool: position and velocity known. Every analysis of a frame uses the
  birds present in it (:mod:`flocksim.metrics.series`).

Tracks from a periodic box are unwrapped first (``box``, or the run's own periodic bounds;
:mod:`flocksim.io.unwrap`); without a box, tracks with a wrap jump are refused. Times on a fixed
step are kept as they are; irregular ones, and any source when ``dt`` is given, are resampled to a
fixed ``dt`` by linear interpolation (:mod:`flocksim.io.resample`). Velocities are the recorded
ones where the source has them (flocksim runs and their exports), else differences of positions
(central by default; ``velocity`` picks the estimator, also over recorded velocities). Bad input
raises :class:`TracksError` (one line naming the file and the field); sizes are checked against
:data:`~flocksim.io.resample.MAX_TRACK_VALUES` before arrays are allocated
(:class:`~flocksim.budgets.BudgetError`).
"""

from __future__ import annotations

import math
import os
import stat
from pathlib import Path

import numpy as np

from flocksim._extras import require
from flocksim.io.resample import (
    VELOCITY_METHODS,
    Samples,
    check_track_size,
    frame_interval,
    is_uniform,
    resample,
    velocity_from_positions,
)
from flocksim.io.unwrap import WrapError, box_sizes, check_span, find_wrap_jump, unwrap

SUFFIXES = {".zarr": "flocksim run", ".nc": "movement", ".csv": "csv"}


class TracksError(ValueError):
    """Tracks that cannot be read: one line naming the file, the field and what is allowed."""


def track_kind(path: str | Path) -> str:
    """ "flocksim run", "movement" or "csv" by the path's suffix (a directory is a run); refuses a
    missing path, a FIFO or device (never opened, so never waited on) and other suffixes."""
    path = Path(path)
    try:
        info = os.stat(path)
    except OSError as exc:
        raise TracksError(f"{path}: cannot be read ({exc.strerror})") from None
    if stat.S_ISDIR(info.st_mode):
        return "flocksim run"
    if not stat.S_ISREG(info.st_mode):
        raise TracksError(f"{path}: not a regular file (a FIFO, device or socket); allowed: a file or a run store")
    kind = SUFFIXES.get(path.suffix.lower())
    if kind is None or kind == "flocksim run":
        raise TracksError(
            f"{path}: unknown kind of file; allowed: a run store (.zarr directory), a movement dataset (.nc) "
            "or a CSV of frame,id,x,y[,z][,time] (.csv)"
        )
    return kind


def _positive(name: str, value: float | None) -> None:
    if value is not None and not (isinstance(value, int | float) and math.isfinite(value) and value > 0):
        raise TracksError(f"{name}: {value!r} is not a positive finite number; allowed: a number > 0")


def open_tracks(
    path: str | Path,
    dt: float | None = None,
    fps: float | None = None,
    keypoint: str | None = None,
    box: str | None = None,
    velocity: str | None = None,
):
    """The tracks at ``path`` as an :class:`xarray.Dataset` (layout in the module docstring).

    ``dt``: resample to this step (in the time unit of the source: seconds, or frames when it has
    no frame rate); default: keep a fixed step, resample irregular times to their median spacing.
    ``fps`` [frames/s]: the frame rate of a CSV without a time column, or of a movement dataset
    whose time counts frames. ``keypoint``: the movement keypoint that stands for a bird (default:
    the only one, else the mean of those seen). ``box``: the side of the periodic box the tracks wrap
    in, "L" or "Lx,Ly[,Lz]" [units] (a run in periodic bounds brings its own). ``velocity``:
    "central", "backward" or "forward" differences of positions (default: recorded velocities
    where the source has them, else central)."""
    require("field", "flocksim.io.open_tracks")
    import xarray as xr

    _positive("dt", dt)
    _positive("fps", fps)
    if velocity is not None and velocity not in VELOCITY_METHODS:
        raise TracksError(f"--velocity: {velocity!r} is unknown; allowed: {', '.join(VELOCITY_METHODS)}")
    kind = track_kind(path)
    samples = _read(Path(path), kind, fps, keypoint)
    if len(samples.time) == 0 or samples.position.shape[1] == 0:
        raise TracksError(f"{path}: no frames or no birds; allowed: tracks of at least one bird in one frame")
    sides = _box(Path(path), kind, box, samples.position.shape[2])
    try:
        if sides is not None:
            check_span(samples.position, sides, str(path))
            samples.position = unwrap(samples.position, samples.linked, sides)
        else:
            jump = find_wrap_jump(samples.position, samples.linked, samples.time, samples.ids)
            if jump is not None:
                raise TracksError(
                    f"{path}: {jump}: tracks that wrap in a periodic box; allowed: --box L (or Lx,Ly[,Lz]), "
                    "the box's side, to unwrap them"
                )
    except WrapError as exc:
        raise TracksError(str(exc)) from None
    if velocity is not None:
        samples.velocity = None  # the estimator asked for, from positions
    interval = frame_interval(samples)
    step = dt if dt is not None else interval
    resampled = len(samples.time) > 1 and (dt is not None or not is_uniform(samples, interval))
    time, position, vel = resample(samples, step) if resampled else (samples.time, samples.position, samples.velocity)
    recorded = vel is not None
    estimator = "recorded" if recorded else (velocity or "central")
    if vel is None:
        vel = velocity_from_positions(time, position, estimator)
    present = np.all(np.isfinite(position), axis=2) & np.all(np.isfinite(vel), axis=2)
    dim = position.shape[2]
    return xr.Dataset(
        data_vars={
            "position": (("time", "agent", "space"), position),
            "velocity": (("time", "agent", "space"), vel),
            "present": (("time", "agent"), present),
        },
        coords={"time": time, "agent": samples.ids, "space": ["x", "y", "z"][:dim]},
        attrs={
            "source": kind,
            "path": str(path),
            "time_unit": samples.time_unit,
            "dt": float(step) if math.isfinite(step) else math.nan,
            "resampled": int(resampled),
            "velocity_from": "recorded" if recorded else "positions",
            "velocity_estimator": estimator,
            "box": [] if sides is None else [float(v) for v in sides],
        },
    )


def _box(path: Path, kind: str, box: str | None, dim: int) -> np.ndarray | None:
    """The periodic box's sides (dim,) [units]: ``box`` parsed, or a run's periodic bounds; None if neither."""
    try:
        sides = None if box is None else box_sizes(box, dim)
    except WrapError as exc:
        raise TracksError(str(exc)) from None
    if kind != "flocksim run":
        return sides
    own = run_box(path)
    if own is not None and sides is not None and not np.allclose(own, sides, rtol=1e-9, atol=0.0):
        raise TracksError(
            f"--box: {box!r} differs from the run's periodic bounds {','.join(f'{v:g}' for v in own)}; "
            "allowed: leave --box out for a run (it brings its own box)"
        )
    return own if own is not None else sides


def run_box(path: str | Path) -> np.ndarray | None:
    """The sides [units] of a recorded run's periodic bounds (world.bounds), None for other bounds."""
    from flocksim.config import ConfigError, validate
    from flocksim.io.store import TrajectoryStore

    params = TrajectoryStore.open(path).attrs.get("params")
    if params is None:
        return None
    try:
        bounds = validate(params).world.bounds
    except ConfigError as exc:
        raise TracksError(f"{path}: its stored attribute 'params' is not valid parameters ({exc})") from None
    if bounds.kind != "periodic":
        return None
    return np.array(bounds.size, dtype=np.float64)


def _read(path: Path, kind: str, fps: float | None, keypoint: str | None) -> Samples:
    if kind != "movement" and keypoint is not None:
        raise TracksError(f"--keypoint: applies to movement datasets (.nc) only, not to {path}")
    if kind == "csv":
        from flocksim.io.tracks_csv import CsvTracksError, read_csv_samples

        try:
            return read_csv_samples(path, fps)
        except CsvTracksError as exc:
            raise TracksError(str(exc)) from None
    if kind == "movement":
        from flocksim.io.movement_read import MovementError, read_movement_samples

        try:
            return read_movement_samples(path, keypoint, fps)
        except MovementError as exc:
            raise TracksError(str(exc)) from None
    if fps is not None:
        raise TracksError(f"--fps: {path} is a flocksim run, whose time is in seconds already")
    return run_samples(path)


def run_samples(path: str | Path) -> Samples:
    """A trajectory store's frames: alive birds present, recorded velocities, simulated time [s]."""
    from flocksim.io.store import TrajectoryStore

    store = TrajectoryStore.open(path)
    frames, agents, dim = store.n_frames, store.n_agents, store.dim
    check_track_size(frames, agents, dim, str(path))
    if frames == 0:
        raise TracksError(f"{path}: the run has no frames yet; allowed: a run with recorded frames")
    alive = store.read("alive").astype(bool)
    position = np.where(alive[:, :, None], store.read("position"), np.nan).astype(np.float64)
    velocity = np.where(alive[:, :, None], store.read("velocity"), np.nan).astype(np.float64)
    time = store.read("time").astype(np.float64)
    ids = store.read("agent").astype(np.int64)
    return Samples(time, np.ones(frames - 1, dtype=bool), position, velocity, ids, "s")

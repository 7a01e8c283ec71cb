"""Tracked trajectories in, one layout out: :func:`open_tracks` (docs/field-data.md).

It reads a flocksim trajectory store (``run.zarr``), a ``movement`` dataset (``.nc``) or a CSV of
``frame,id,x,y[,z][,time]`` and returns an :class:`xarray.Dataset` laid out like a recorded run:

- dims ``time`` (coordinate: seconds, or frames when the source gives no frame rate; attribute
  ``time_unit`` says which), ``agent`` (the birds' ids or names) and ``space`` ("x", "y"[, "z"]);
- ``position`` and ``velocity`` (time, agent, space) float64, NaN where a bird is absent;
- ``present`` (time, agent) bool: position and velocity known. Every analysis of a frame uses the
  birds present in it (:mod:`flocksim.metrics.series`).

Times on a fixed step are kept as they are; irregular ones, and any source when ``dt`` is given, are
resampled to a fixed ``dt`` by linear interpolation (:mod:`flocksim.io.resample`). Velocities are
the recorded ones where the source has them (flocksim runs and their exports), else differences of
positions. Bad input raises :class:`TracksError` (one line naming the file and the field); sizes
are checked against :data:`~flocksim.io.resample.MAX_TRACK_VALUES` before arrays are allocated
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
    Samples,
    check_track_size,
    frame_interval,
    is_uniform,
    resample,
    velocity_from_positions,
)

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


def open_tracks(path: str | Path, dt: float | None = None, fps: float | None = None, keypoint: str | None = None):
    """The tracks at ``path`` as an :class:`xarray.Dataset` (layout in the module docstring).

    ``dt``: resample to this step (in the time unit of the source: seconds, or frames when it has
    no frame rate); default: keep a fixed step, resample irregular times to their median spacing.
    ``fps`` [frames/s]: the frame rate of a CSV without a time column, or of a movement dataset
    whose time counts frames. ``keypoint``: the movement keypoint that stands for a bird (default:
    the only one, else the mean of those seen)."""
    require("field", "flocksim.io.open_tracks")
    import xarray as xr

    _positive("dt", dt)
    _positive("fps", fps)
    kind = track_kind(path)
    samples = _read(Path(path), kind, fps, keypoint)
    if len(samples.time) == 0 or samples.position.shape[1] == 0:
        raise TracksError(f"{path}: no frames or no birds; allowed: tracks of at least one bird in one frame")
    interval = frame_interval(samples)
    step = dt if dt is not None else interval
    resampled = len(samples.time) > 1 and (dt is not None or not is_uniform(samples, interval))
    if resampled:
        time, position, velocity = resample(samples, step)
    else:
        time, position, velocity = samples.time, samples.position, samples.velocity
    recorded = velocity is not None
    if velocity is None:
        velocity = velocity_from_positions(time, position)
    present = np.all(np.isfinite(position), axis=2) & np.all(np.isfinite(velocity), axis=2)
    dim = position.shape[2]
    return xr.Dataset(
        data_vars={
            "position": (("time", "agent", "space"), position),
            "velocity": (("time", "agent", "space"), velocity),
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
        },
    )


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
        from flocksim.io.movement import MovementError, read_movement_samples

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

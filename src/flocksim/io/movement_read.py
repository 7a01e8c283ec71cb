"""The ``movement`` package's datasets (https://movement.neuroinformatics.dev), read
with xarray and netCDF4 alone (movement itself is not a dependency; docs/field-data.md).

A movement *poses* dataset holds ``position`` with dims (time, space, keypoints, individuals)
(older releases: time, individuals, keypoints, space) and ``confidence`` (the same without
space); a *bboxes* dataset holds ``position`` (box centres) with dims (time, space, individuals).
Coordinates: ``space`` = "x", "y"[, "z"], ``individuals`` and ``keypoints`` as names, ``time`` in
seconds when the attribute ``time_unit`` is "seconds" (then ``fps`` is usually set) or in frames.
The attribute ``ds_type`` is "poses" or "bboxes". movement saves these with ``ds.to_netcdf``.

:func:`read_movement_samples` reads either kind by dimension name (any order), a bird's point
being one keypoint or the mean of the keypoints seen. Writing a run as such a dataset is
:mod:`flocksim.io.movement`.

Missing data: an entry equal to the variable's ``_FillValue`` or ``missing_value`` (decoded by
xarray), NaN, and, in a variable without ``_FillValue``, netCDF's default fill value for its type
(:data:`DEFAULT_FILLS`: what netCDF-C writes into entries never written, e.g. 9.969209968386869e36
for doubles) is no position: the bird is absent at that frame. A ``time`` coordinate holding a
fill value is refused naming it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from flocksim._extras import require
from flocksim.io.resample import Samples, check_track_size

POSE_DIMS = ("time", "space", "keypoints", "individuals")
BBOX_DIMS = ("time", "space", "individuals")
KEYPOINT = "centroid"
"""The one keypoint of an exported bird."""


class MovementError(ValueError):
    """A file that is not a movement dataset: one line naming the variable, dimension or attribute."""


NETCDF_SIGNATURES = (b"CDF\x01", b"CDF\x02", b"CDF\x05", b"\x89HDF\r\n\x1a\n")
"""How a netCDF file begins: classic, 64-bit offset, 64-bit data (netCDF-3), or HDF5 (netCDF-4)."""
HDF5_OFFSETS = (0, 512, 1024, 2048, 4096, 8192)
"""Where HDF5 looks for its signature (after a user block of 512 bytes, doubled)."""


DEFAULT_FILLS: dict[str, float | int] = {
    "f8": 9.969209968386869e36,
    "f4": 9.96921e36,  # NC_FILL_FLOAT, compared as a float32
    "i1": -127,
    "u1": 255,
    "i2": -32767,
    "u2": 65535,
    "i4": -2147483647,
    "u4": 4294967295,
    "i8": -9223372036854775806,
    "u8": 18446744073709551614,
}
"""netCDF's default fill value per stored type (netcdf.h's NC_FILL_*; netCDF4.default_fillvals)."""


def has_netcdf_signature(path: Path) -> bool:
    """Whether the file begins like a netCDF-3 file, or holds the HDF5 signature where HDF5 looks."""
    try:
        with path.open("rb") as handle:
            head = handle.read(HDF5_OFFSETS[-1] + 8)
    except OSError:
        return False
    return head[:4] in NETCDF_SIGNATURES[:3] or any(head[o : o + 8] == NETCDF_SIGNATURES[3] for o in HDF5_OFFSETS)


def _open(path: Path):
    import xarray as xr

    if not has_netcdf_signature(path):
        raise MovementError(
            f"{path}: not a netCDF file (it begins with neither the netCDF nor the HDF5 signature); allowed: a "
            "movement dataset saved with to_netcdf"
        )
    try:
        return xr.open_dataset(path)
    except Exception:  # xarray and its backends raise many kinds for a file that is not netCDF
        raise MovementError(
            f"{path}: a netCDF file that cannot be read (truncated or damaged); allowed: a movement dataset saved "
            "with to_netcdf"
        ) from None


def _check_numeric(da, name: str, path: Path) -> None:
    if da.dtype.kind not in "fiu":
        raise MovementError(f"{path}: variable {name!r} has dtype {da.dtype}; allowed: numbers (float or int)")


def default_fill(da) -> float | None:
    """The value, as xarray gives it, that stands for an entry never written in ``da``: netCDF's
    default fill for its stored type, packed values unpacked; None where the variable declares
    ``_FillValue`` (then that value is the fill, and xarray already made it NaN)."""
    encoding = da.encoding
    if "_FillValue" in encoding or "_FillValue" in da.attrs:
        return None
    stored = np.dtype(encoding.get("dtype", da.dtype))
    fill = DEFAULT_FILLS.get(f"{stored.kind}{stored.itemsize}")
    if fill is None:
        return None
    raw = np.array(fill, dtype=stored)
    scale, offset = encoding.get("scale_factor"), encoding.get("add_offset")
    if scale is None and offset is None:
        return raw.item()
    value = raw.astype(np.float64) * (1.0 if scale is None else float(scale)) + (
        0.0 if offset is None else float(offset)
    )
    return np.asarray(value, dtype=da.dtype if da.dtype.kind == "f" else np.float64).item()


def _without_fill(da):
    """``da`` as floats with NaN where it holds netCDF's default fill value (see :func:`default_fill`)."""
    fill = default_fill(da)
    values = da.astype(np.float32 if da.dtype == np.float32 else np.float64)
    return values if fill is None else values.where(da != fill)  # compared in the variable's own type


def read_movement_samples(path: str | Path, keypoint: str | None = None, fps: float | None = None) -> Samples:
    """The samples of a movement dataset file (see the module docstring).

    ``keypoint``: the keypoint that stands for a bird (default: the only one, else the mean of the
    keypoints seen in that frame). ``fps`` [1/s]: converts a time counted in frames to seconds
    (default: the file's ``fps`` attribute, else the time stays in frames)."""
    require("field", "flocksim.io.movement.read_movement_samples")
    path = Path(path)
    with _open(path) as ds:
        return _samples(ds, path, keypoint, fps)


def _samples(ds, path: Path, keypoint: str | None, fps: float | None) -> Samples:
    if "position" not in ds.data_vars:
        raise MovementError(
            f"{path}: no variable 'position'; allowed: a movement dataset (position with dims "
            f"{', '.join(POSE_DIMS)} or {', '.join(BBOX_DIMS)})"
        )
    pos = ds["position"]
    dims = set(pos.dims)
    if dims not in (set(POSE_DIMS), set(BBOX_DIMS)):
        raise MovementError(
            f"{path}: variable 'position' has dims ({', '.join(map(str, pos.dims))}); allowed: "
            f"({', '.join(POSE_DIMS)}) or ({', '.join(BBOX_DIMS)}) in any order"
        )
    _check_numeric(pos, "position", path)
    space = [str(s) for s in pos["space"].values] if "space" in pos.coords else None
    dim = pos.sizes["space"]
    if dim not in (2, 3) or (space is not None and sorted(space) != ["x", "y", "z"][:dim]):
        raise MovementError(f"{path}: dimension 'space' is {space or dim}; allowed: the coordinates x, y or x, y, z")
    keypoints = pos.sizes.get("keypoints", 1)
    check_track_size(pos.sizes["time"], pos.sizes["individuals"] * keypoints, dim, f"{path}: variable 'position'")
    pos = _without_fill(pos)  # before the mean of the keypoints: an unwritten keypoint is not seen
    if "keypoints" in dims:
        names = [str(k) for k in pos["keypoints"].values] if "keypoints" in pos.coords else None
        if keypoint is not None:
            if names is None or keypoint not in names:
                raise MovementError(f"--keypoint: {keypoint!r} is not in {path}; allowed: {', '.join(names or [])}")
            pos = pos.isel(keypoints=names.index(keypoint))
        else:
            pos = pos.mean("keypoints", skipna=True)  # the mean of the keypoints seen (a single one: itself)
    elif keypoint is not None:
        raise MovementError(f"--keypoint: {path} has no keypoints (a bboxes dataset)")
    order = ["time", "individuals", "space"]
    if space is not None:
        pos = pos.sel(space=["x", "y", "z"][:dim])
    position = np.asarray(pos.transpose(*order).values, dtype=np.float64)
    velocity = _velocity(ds, path, order, dim, keypoint, space)
    time, in_frames, rate = _time(ds, path, position.shape[0], fps)
    position[~np.all(np.isfinite(position), axis=2)] = np.nan
    ids = np.array([str(i) for i in ds["individuals"].values]) if "individuals" in ds.coords else None
    if ids is None:
        ids = np.array([f"id_{i}" for i in range(position.shape[1])])
    if in_frames:
        return _fill_frames(time, position, velocity, ids, rate, path)
    linked = np.ones(max(len(time) - 1, 0), dtype=bool)
    return Samples(time, linked, position, velocity, ids, "s")


def _velocity(ds, path: Path, order: list[str], dim: int, keypoint: str | None, space) -> np.ndarray | None:
    """The dataset's ``velocity`` (as exported by flocksim) in (time, individuals, space); None if absent."""
    if "velocity" not in ds.data_vars:
        return None
    vel = ds["velocity"]
    if set(vel.dims) != set(ds["position"].dims):
        raise MovementError(
            f"{path}: variable 'velocity' has dims ({', '.join(map(str, vel.dims))}); allowed: those of 'position'"
        )
    _check_numeric(vel, "velocity", path)
    vel = _without_fill(vel)
    if "keypoints" in vel.dims:
        names = [str(k) for k in vel["keypoints"].values] if "keypoints" in vel.coords else []
        vel = vel.isel(keypoints=names.index(keypoint)) if keypoint is not None else vel.mean("keypoints", skipna=True)
    if space is not None:
        vel = vel.sel(space=["x", "y", "z"][:dim])
    out = np.asarray(vel.transpose(*order).values, dtype=np.float64)
    out[~np.all(np.isfinite(out), axis=2)] = np.nan
    return out


def _time(ds, path: Path, frames: int, fps: float | None) -> tuple[np.ndarray, bool, float | None]:
    """(time, counted in frames, frames per second if known). Time counts frames when the attribute
    time_unit says "frames", or when there is no such attribute and the time coordinate holds
    integers (or is missing)."""
    unit = ds.attrs.get("time_unit")
    if unit not in (None, "seconds", "frames"):
        raise MovementError(f"{path}: attribute time_unit is {unit!r}; allowed: 'seconds' or 'frames'")
    if "time" in ds.coords and ds["time"].dtype.kind == "m":  # a time with units, decoded by xarray
        time = np.asarray(ds["time"].values / np.timedelta64(1, "s"), dtype=np.float64)
        in_frames = False
    elif "time" in ds.coords:
        t = ds["time"]
        if t.dtype.kind not in "fiu":
            raise MovementError(f"{path}: coordinate 'time' has dtype {t.dtype}; allowed: numbers (seconds or frames)")
        time = np.asarray(t.values, dtype=np.float64)
        fill = default_fill(t)
        if fill is not None and np.any(t.values == fill):
            frame = int(np.flatnonzero(t.values == fill)[0])
            raise MovementError(
                f"{path}: coordinate 'time' holds netCDF's default fill value {fill:g} at index {frame} (an entry "
                "never written); allowed: a time for every frame"
            )
        in_frames = unit == "frames" or (unit is None and t.dtype.kind in "iu")
    else:
        time = np.arange(frames, dtype=np.float64)
        in_frames = unit != "seconds"
    if not np.all(np.isfinite(time)) or np.any(np.diff(time) <= 0):
        raise MovementError(f"{path}: coordinate 'time' is not strictly increasing and finite; allowed: such times")
    if not in_frames:
        if fps is not None:
            raise MovementError(f"--fps: {path} counts time in seconds already; allowed: --fps only for time in frames")
        return time, False, None
    return time, True, fps if fps is not None else _file_fps(ds, path)


def _file_fps(ds, path: Path) -> float | None:
    value = ds.attrs.get("fps")
    if value is None:
        return None
    try:
        rate = float(value)
    except (TypeError, ValueError):
        rate = float("nan")
    if not np.isfinite(rate) or rate <= 0:
        raise MovementError(f"{path}: attribute fps is {value!r}; allowed: a positive number of frames per second")
    return rate


def _fill_frames(
    frames: np.ndarray, position: np.ndarray, velocity: np.ndarray | None, ids: np.ndarray, rate: float | None, path
) -> Samples:
    """Whole frames from the first to the last: frames missing from the file hold no bird. Time in
    seconds when the frame rate ``rate`` is known (velocities then per second), else in frames."""
    if np.any(frames != np.round(frames)):
        raise MovementError(f"{path}: coordinate 'time' counts frames but holds fractions; allowed: whole frames")
    first = int(frames[0]) if len(frames) else 0
    span = int(frames[-1]) - first + 1 if len(frames) else 0
    n, dim = position.shape[1:]
    check_track_size(span, n, dim, f"{path}: frames {first} to {first + span - 1}")
    slot = frames.astype(np.int64) - first
    full = np.full((span, n, dim), np.nan)
    full[slot] = position
    full_velocity = None
    if velocity is not None:
        full_velocity = np.full((span, n, dim), np.nan)
        full_velocity[slot] = velocity * (1.0 if rate is None else rate)  # per frame -> per second
    time = (first + np.arange(span)) / (1.0 if rate is None else rate)
    linked = np.ones(max(span - 1, 0), dtype=bool)
    return Samples(time, linked, full, full_velocity, ids, "frames" if rate is None else "s")


# ------------------------------------------------------------------ export

"""A flocksim run as a ``movement`` dataset (https://movement.neuroinformatics.dev), written with
xarray and netCDF4 alone (docs/field-data.md); the format and its reading are in
:mod:`flocksim.io.movement_read`, whose names are importable from here too.

:func:`run_to_movement` turns a flocksim
trajectory store into a poses dataset with one keypoint ("centroid") per bird, plus the recorded
``velocity`` (same dims as ``position``), which :func:`export_run` writes as netCDF.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from flocksim._extras import require
from flocksim.io.movement_read import (
    BBOX_DIMS,
    HDF5_OFFSETS,
    KEYPOINT,
    NETCDF_SIGNATURES,
    POSE_DIMS,
    MovementError,
    has_netcdf_signature,
    read_movement_samples,
)


def run_to_movement(store_path: str | Path):
    """The trajectory store at ``store_path`` as a movement poses dataset (an :class:`xarray.Dataset`).

    ``position`` and ``velocity`` keep the run's precision, NaN where a bird is absent (dead or
    not yet born); ``confidence`` is 1 where present, NaN where absent; ``time`` is simulated time
    [s]; individuals are named ``id_<agent id>``. Attributes: ds_type "poses", time_unit
    "seconds", fps (frames per simulated second), source_software "flocksim", and the run's seed,
    model, dt, every, flocksim version and parameters (TOML text)."""
    require("field", "flocksim.io.movement.run_to_movement")
    import xarray as xr

    from flocksim.io.store import TrajectoryStore
    from flocksim.io.tracks import run_samples

    store = TrajectoryStore.open(store_path)
    samples = run_samples(store_path)
    dtype = np.float32 if store.attrs.get("precision") == "float32" else np.float64
    alive = np.all(np.isfinite(samples.position), axis=2)
    names = [f"id_{int(i)}" for i in samples.ids]
    space = ["x", "y", "z"][: samples.position.shape[2]]

    def poses(values: np.ndarray) -> np.ndarray:  # (time, agent, space) -> (time, space, keypoints, individuals)
        return values.astype(dtype).transpose(0, 2, 1)[:, :, None, :]

    confidence = np.where(alive, 1.0, np.nan).astype(np.float32)[:, None, :]
    return xr.Dataset(
        data_vars={
            "position": (POSE_DIMS, poses(samples.position)),
            "velocity": (POSE_DIMS, poses(samples.velocity), {"units": "units/s", "source": "recorded by flocksim"}),
            "confidence": (("time", "keypoints", "individuals"), confidence),
        },
        coords={"time": samples.time, "space": space, "keypoints": [KEYPOINT], "individuals": names},
        attrs=_export_attrs(store.attrs, samples.time),
    )


def _export_attrs(run_attrs: dict[str, Any], time: np.ndarray) -> dict[str, Any]:
    from flocksim._version import __version__

    attrs: dict[str, Any] = {"source_software": "flocksim", "ds_type": "poses", "time_unit": "seconds"}
    if len(time) > 1:
        attrs["fps"] = float(1.0 / np.median(np.diff(time)))
    for key in ("seed", "model", "preset", "dt", "every", "engine", "precision", "params_toml"):
        value = run_attrs.get(key)
        if isinstance(value, bool):
            value = int(value)
        if isinstance(value, str | int | float) and value is not None:
            attrs[f"flocksim_{key}"] = value
    attrs["flocksim_version"] = __version__
    return attrs


def export_run(store_path: str | Path, output: str | Path) -> tuple[int, int]:
    """Write the run at ``store_path`` as a movement dataset (netCDF4) to ``output``, whole or not at
    all (:func:`flocksim.atomic.atomic_path`); returns (frames, birds)."""
    require("field", "flocksim.io.movement.export_run")
    from flocksim.atomic import atomic_path

    ds = run_to_movement(store_path)
    with atomic_path(output, suffix=".nc.part") as tmp:
        ds.to_netcdf(tmp, engine="netcdf4", format="NETCDF4")
    return ds.sizes["time"], ds.sizes["individuals"]


__all__ = [
    "BBOX_DIMS",
    "HDF5_OFFSETS",
    "KEYPOINT",
    "NETCDF_SIGNATURES",
    "POSE_DIMS",
    "MovementError",
    "export_run",
    "has_netcdf_signature",
    "read_movement_samples",
    "run_to_movement",
]

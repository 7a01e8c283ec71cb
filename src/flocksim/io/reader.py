"""Reading trajectory stores: an xarray Dataset, and a summary for ``flocksim info``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from flocksim._extras import require
from flocksim.io.store import TrajectoryError, TrajectoryStore, disk_usage, quiet_zarr


def open_run(path: str | Path, **kwargs: Any):
    """The trajectory store at ``path`` as an :class:`xarray.Dataset`.

    Dimensions ``time`` (coordinate: simulated time [s]; ``step`` gives the step count),
    ``agent`` (stable ids) and ``space`` ("x", "y"[, "z"]). Variables: position, velocity,
    alive, kind, recorded extras (turning, spin, predator tracks) and one variable per metric.
    Attributes: the full parameters (``params`` as JSON text: ``json.loads`` gives the dict;
    ``params_toml`` as TOML text), seed, engine, flocksim version, creation time: every attribute
    one netCDF can hold (:func:`netcdf_attrs`), so ``ds.to_netcdf(...)`` writes the whole run
    (``flocksim export`` writes the movement format instead). ``kwargs`` go to
    :func:`xarray.open_dataset` (e.g. ``chunks=None`` for plain numpy arrays instead of dask).

    It is what ``xarray.open_zarr(path)`` gives, after checking that the store is a flocksim
    trajectory: a damaged or foreign one raises :class:`TrajectoryError` (one line). Arrays are
    read when used; a chunk found damaged then raises :class:`TrajectoryError` too, naming the
    array and the steps (:mod:`flocksim.io.lazy`), whichever way it is read.
    """
    require("field", "flocksim.io.open_run")
    from flocksim.io.lazy import open_checked

    store = TrajectoryStore.open(path)
    try:
        with quiet_zarr():
            ds = open_checked(str(path), store, **kwargs)
        ds.attrs = netcdf_attrs(ds.attrs)
        return ds
    except TrajectoryError:
        raise
    except TypeError as exc:  # an argument open_dataset does not take: the caller's mistake, as it is
        raise TypeError(f"open_run: {exc}") from None
    except Exception:  # zarr and xarray raise many kinds; the store itself was checked above
        raise TrajectoryError(f"{path}: damaged store: its arrays cannot be opened as one dataset") from None


def netcdf_attrs(attrs: dict[str, Any]) -> dict[str, Any]:
    """The store's attributes as netCDF can hold them: a mapping, or a list that is empty or holds
    anything but strings and numbers, as JSON text (``params``, ``checkpoints_kept``); an unset
    one (None, e.g. ``checkpoint_every``) left out; the rest as they are."""
    import json

    def scalar(item: Any) -> bool:
        return isinstance(item, str | int | float) and not isinstance(item, bool)

    clean: dict[str, Any] = {}
    for key, value in attrs.items():
        if value is None:
            continue
        if isinstance(value, dict) or (isinstance(value, list | tuple) and not (value and all(map(scalar, value)))):
            value = json.dumps(value, ensure_ascii=False)
        elif isinstance(value, bool):
            value = int(value)
        clean[key] = value
    return clean


def flatten(tree: Any, prefix: str = "") -> dict[str, Any]:
    """Nested dict -> {"a.b.c": value}."""
    if not isinstance(tree, dict):
        return {prefix: tree}
    flat: dict[str, Any] = {}
    for key, value in tree.items():
        flat.update(flatten(value, f"{prefix}{key}." if isinstance(value, dict) else f"{prefix}{key}"))
    return flat


def params_diff(params: dict[str, Any], baseline: dict[str, Any]) -> list[tuple[str, Any, Any]]:
    """(dotted key, baseline value, run value) for every parameter that differs; ``description``
    is left out."""
    ours = flatten(params)
    theirs = flatten(baseline)
    keys = sorted(set(ours) | set(theirs))
    return [(k, theirs.get(k), ours.get(k)) for k in keys if ours.get(k) != theirs.get(k) and k != "description"]


def baseline_params(attrs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """(what it is, params) to compare a run with: its preset as shipped now, else the model's
    defaults."""
    from flocksim.config import ConfigError, to_dict, validate
    from flocksim.scenarios import load_preset

    preset = attrs.get("preset")
    model = (attrs.get("params") or {}).get("model", "reynolds")
    if preset:
        try:
            return f"preset {preset}", to_dict(load_preset(preset))
        except ConfigError:
            pass
    try:
        return f"{model} defaults", to_dict(validate({"model": model}))
    except ConfigError:
        return "nothing", {}


def run_summary(path: str | Path) -> dict[str, Any]:
    """What ``flocksim info`` prints: frames, steps, time span, agents, variables, metrics,
    checkpoints (and the steps of those the store recorded writing that are gone), whether the
    frames reach the run's requested steps, size on disk, and the parameters that differ from
    its preset (or from the model's defaults)."""
    store = TrajectoryStore.open(path)
    attrs = store.attrs
    frames = store.n_frames
    steps = store.read("step") if frames else []
    times = store.read("time") if frames else []
    alive_last = int(store.read("alive", frames - 1, frames).sum()) if frames else 0
    checkpoints = store.checkpoints()
    present = {c["name"] for c in checkpoints}
    missing = [c["steps"] for c in store.recorded_checkpoints() or [] if c["name"] not in present]
    requested = attrs.get("steps_requested")
    last_step = int(steps[-1]) if frames else None
    what, baseline = baseline_params(attrs)
    return {
        "path": str(path),
        "format_version": attrs.get("flocksim_format_version"),
        "flocksim_version": attrs.get("flocksim_version"),
        "created": attrs.get("created"),
        "model": attrs.get("model"),
        "source": attrs.get("source") or attrs.get("preset") or "python",
        "seed": attrs.get("seed"),
        "engine": attrs.get("engine"),
        "dim": store.dim,
        "dt": attrs.get("dt"),
        "every": attrs.get("every"),
        "precision": attrs.get("precision"),
        "frames": frames,
        "first_step": int(steps[0]) if frames else None,
        "last_step": last_step,
        "time_span": (float(times[0]), float(times[-1])) if frames else None,
        "agents": store.n_agents,
        "alive_at_end": alive_last,
        "variables": [n for n in store.frame_variables()],
        "metrics": store.metric_names(),
        "checkpoints": [c["steps"] for c in checkpoints],
        "checkpoints_missing": missing,
        "steps_requested": requested,
        # the frames reach the steps asked for (the last frame is taken at the run's last step)
        "complete": bool(requested is not None and last_step is not None and last_step >= requested),
        "size_bytes": disk_usage(path),
        "baseline": what,
        "params_diff": params_diff(attrs.get("params") or {}, baseline),
    }

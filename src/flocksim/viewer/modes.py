"""The viewer's 2D and 3D modes: one simulation per mode per connection (docs/protocol.md, ``mode``).

Switching to the other mode parks the current simulation (it keeps its flock, parameters and
step count, and stops stepping) and resumes the other mode's parked simulation, or builds it:

- from the **twin preset** of the scene the current parameters started from (``NAME-2d`` <->
  ``NAME-3d``, e.g. starlings-2d's 960 x 540 box and starlings-3d's ellipsoid, each tuned for its
  dimension), even after the parameters were changed;
- otherwise from the current parameters carried to the other dimension
  (:func:`dimension_changes`): ``world.dim``, the region's sizes (a 2D region gains a third side
  equal to its smaller side; a 3D one loses its third), obstacle points and seek targets (a middle
  height added, or the third coordinate dropped), the roost's centre (height 0 added, or dropped)
  and ``agents.planar`` off for 2D.

Either way a simulation level of detail (``detail``) that is on stays on, its focus and
view direction carried to the other dimension (:func:`detail_changes`).

The agents of a connection's simulations together stay within the server's agent cap: a parked
simulation that would exceed it is dropped (:meth:`ParkedModes.fit_cap`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from flocksim.config import AnyParams, to_dict
from flocksim.scenarios import load_preset, preset_names
from flocksim.simulation import Simulation
from flocksim.viewer.controls import apply_changes

_TWIN = re.compile(r"^(.*)-([23])d(-[a-z0-9-]+)?$")


def twin_preset(name: str | None, dim: int) -> str | None:
    """The shipped preset ``NAME-{dim}d[-VARIANT]`` for a preset named ``NAME-2d[-VARIANT]`` or
    ``NAME-3d[-VARIANT]`` (starlings-2d-reference <-> starlings-3d-reference), if it exists."""
    match = _TWIN.match(name or "")
    if match is None:
        return None
    twin = f"{match.group(1)}-{dim}d{match.group(3) or ''}"
    return twin if twin in preset_names() else None


@lru_cache(maxsize=64)
def _preset_dict(name: str) -> dict[str, Any]:
    return to_dict(load_preset(name))


def is_modified(params: AnyParams, origin: str | None) -> bool:
    """Whether ``params`` differ from the shipped preset ``origin`` (True when there is none)."""
    return origin is None or to_dict(params) != _preset_dict(origin)


def _resize(values: list[float], dim: int, fill: float) -> list[float]:
    """``values`` cut to ``dim`` numbers, or extended with ``fill``."""
    return list(values[:dim]) if len(values) >= dim else [*values, *([fill] * (dim - len(values)))]


def dimension_changes(params: dict[str, Any], dim: int) -> dict[str, Any]:
    """The ``set`` changes ({dotted key: value}) that carry a parameter dictionary to ``dim``
    (see the module docstring); the description says which dimension it is shown in."""
    bounds = params["world"]["bounds"]
    size = _resize(bounds["size"], dim, min(bounds["size"][0], bounds["size"][1]))
    walled = bounds["kind"] in ("box", "periodic")
    mid = size[2] / 2 if dim == 3 and walled else 0.0  # the height given to points gaining a z

    def point(p: list[float]) -> list[float]:
        return _resize(p, dim, mid)

    changes: dict[str, Any] = {"world.dim": dim, "world.bounds.size": size}
    description = params.get("description") or ""
    changes["description"] = f"{dim}D version of: {description}" if description else f"Shown in {dim}D."
    if dim == 2 and params.get("agents", {}).get("planar"):
        changes["agents.planar"] = False
    obstacles = params.get("obstacles") or {}
    if obstacles.get("circles"):
        changes["obstacles.circles"] = [{**c, "center": point(c["center"])} for c in obstacles["circles"]]
    if obstacles.get("segments"):
        changes["obstacles.segments"] = [{**s, "a": point(s["a"]), "b": point(s["b"])} for s in obstacles["segments"]]
    if obstacles.get("boxes"):
        quarter = size[2] / 4 if dim == 3 else 0.0
        changes["obstacles.boxes"] = [
            {**b, "min_corner": _resize(b["min_corner"], dim, mid - quarter),
             "max_corner": _resize(b["max_corner"], dim, mid + quarter)}
            for b in obstacles["boxes"]
        ]  # fmt: skip
    seek = params.get("rules", {}).get("seek") or {}
    if isinstance(seek.get("target"), list) and len(seek["target"]) != dim:
        changes["rules.seek.target"] = point(seek["target"])
    for key in ("route", "group_targets"):
        if seek.get(key):
            changes[f"rules.seek.{key}"] = [point(p) for p in seek[key]]
    roost = params.get("rules", {}).get("roost") or {}
    if isinstance(roost.get("center"), list) and len(roost["center"]) != dim:
        changes["rules.roost.center"] = _resize(roost["center"], dim, 0.0)
    changes.update(detail_changes(params, params, dim, mid))
    return changes


def detail_changes(old: dict[str, Any], new: dict[str, Any], dim: int, mid: float) -> dict[str, Any]:
    """The ``set`` changes that carry ``old``'s level of detail (``detail``, when on) into ``new``
    (parameters of the ``dim`` mode, with a ``detail`` block): every field kept, the focus given
    a height ``mid`` or losing its third coordinate, the view direction given 0 or losing it (a
    direction straight along the lost axis: no cone). Nothing when it is off or ``new`` has no
    level of detail."""
    detail = old.get("detail") or {}
    if not detail.get("enabled") or "detail" not in new:
        return {}
    changes = {f"detail.{key}": value for key, value in detail.items() if key not in ("focus", "view_direction")}
    if detail.get("focus"):
        changes["detail.focus"] = _resize(detail["focus"], dim, mid)
    if detail.get("view_direction"):
        direction = _resize(detail["view_direction"], dim, 0.0)
        changes["detail.view_direction"] = direction if any(abs(c) > 0.0 for c in direction) else []
    return changes


def mode_params(params: AnyParams, origin: str | None, dim: int) -> tuple[AnyParams, str | None]:
    """Parameters of a new ``dim`` mode and the preset they are (None: carried over): the twin of
    ``origin`` if one is shipped, else ``params`` carried to ``dim``. Raises ControlError (one
    line naming the field) when the carried parameters are not valid for the model."""
    twin = twin_preset(origin, dim)
    if twin is not None:
        preset = load_preset(twin)
        twin_dict = to_dict(preset)
        bounds = twin_dict["world"]["bounds"]
        mid = bounds["size"][2] / 2 if dim == 3 and bounds["kind"] in ("box", "periodic") else 0.0
        carried = detail_changes(to_dict(params), twin_dict, dim, mid)  # the level of detail stays on
        return (apply_changes(preset, carried) if carried else preset), twin
    return apply_changes(params, dimension_changes(to_dict(params), dim)), None


@dataclass
class Parked:
    """A mode's simulation while the other mode is shown: it does not step."""

    sim: Simulation
    preset: str | None
    """The preset the parameters are (None after a change)."""
    origin: str | None
    """The preset the parameters started from (kept through changes)."""
    params: AnyParams
    """The parameters as the client sees them (image names, not the server's paths)."""


class ParkedModes:
    """The parked simulations of one connection, by dimension."""

    def __init__(self) -> None:
        self._parked: dict[int, Parked] = {}

    @property
    def dims(self) -> list[int]:
        """Dimensions with a parked simulation, ascending."""
        return sorted(self._parked)

    def take(self, dim: int) -> Parked | None:
        """Remove and return the parked simulation of ``dim`` (None when there is none)."""
        return self._parked.pop(dim, None)

    def park(self, dim: int, parked: Parked) -> None:
        self._parked[dim] = parked

    def drop(self, dim: int) -> None:
        self._parked.pop(dim, None)

    def clear(self) -> None:
        self._parked.clear()

    def simulations(self) -> list[Simulation]:
        return [p.sim for p in self._parked.values()]

    def fit_cap(self, active_agents: int, max_agents: int) -> None:
        """Drop parked simulations (largest first) until they and ``active_agents`` together are
        within ``max_agents``."""
        while self._parked and active_agents + sum(p.sim.state.n for p in self._parked.values()) > max_agents:
            largest = max(self._parked, key=lambda d: self._parked[d].sim.state.n)
            del self._parked[largest]


__all__ = ["Parked", "ParkedModes", "detail_changes", "dimension_changes", "is_modified", "mode_params", "twin_preset"]

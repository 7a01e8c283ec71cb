"""The replay widget: a recorded run (a ``.zarr`` trajectory store, docs/data.md) played back in a
notebook with a scrubber (docs/notebook.md).

Frames are read one at a time from the store (a path, a :class:`~flocksim.io.TrajectoryStore`
or the :class:`xarray.Dataset` of :func:`flocksim.io.open_run`) and sent in the viewer's frame
format: the alive agents, the recorded predator tracks and the obstacles of the run's
parameters; the status values are the recorded metrics (polarization, mean neighbours, caught,
agents alive).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from flocksim.config import ConfigError, to_dict, validate
from flocksim.io import TrajectoryError, TrajectoryStore
from flocksim.metrics.order import polarization
from flocksim.notebook.base import FlockWidget
from flocksim.state import FlockState
from flocksim.viewer.protocol import encode_frame


class RecordedFrames:
    """Read access to one run's frames, from a store or from its xarray Dataset."""

    def __init__(self, source: Any):
        self.store: TrajectoryStore | None = None
        self.dataset: Any = None
        if isinstance(source, (str, Path)):
            source = TrajectoryStore.open(source)
        if isinstance(source, TrajectoryStore):
            self.store = source
            self.names = set(source.array_names())
            self.n_frames = source.n_frames
            self.attrs = dict(source.attrs)
        elif hasattr(source, "data_vars") and "position" in getattr(source, "data_vars", {}):
            self.dataset = source
            self.names = set(source.data_vars) | set(source.coords)
            self.n_frames = int(source.sizes["time"])
            self.attrs = dict(source.attrs)
        else:
            raise TypeError(
                "flocksim.widget: expected a flocksim.Simulation, a recorded run (a .zarr path or "
                f"flocksim.io.TrajectoryStore) or flocksim.io.open_run(...)'s Dataset, got {type(source).__name__}"
            )
        if self.n_frames == 0:
            raise TrajectoryError("flocksim.widget: the run holds no frame yet; nothing to replay")
        self.steps = self.column("step")
        self.times = self.column("time")

    def column(self, name: str) -> np.ndarray:
        """A per-frame value of every frame (``step``, ``time``)."""
        if self.store is not None:
            return np.asarray(self.store.read(name))
        return np.asarray(self.dataset[name].values)

    def has(self, name: str) -> bool:
        return name in self.names

    def read(self, name: str, i: int) -> np.ndarray:
        """Frame ``i`` of the per-frame variable ``name``."""
        if self.store is not None:
            return np.asarray(self.store.read(name, i, i + 1)[0])
        return np.asarray(self.dataset[name].isel(time=i).values)


@dataclass
class _Track:
    """A recorded component track (predators) as :func:`encode_frame` reads a component."""

    name: str
    position: np.ndarray
    velocity: np.ndarray


@dataclass
class _RecordedState:
    """What :func:`encode_frame` reads of a simulation, for one recorded frame."""

    state: FlockState
    params: Any
    steps: int
    time: float
    components: list[_Track] = field(default_factory=list)


def recorded_frame(run: RecordedFrames, i: int, frame_index: int, params: Any) -> bytes:
    """The viewer's binary frame of recorded frame ``i`` (``params``: the run's validated
    parameters, for the obstacles; None: none drawn)."""
    position = run.read("position", i).astype(np.float64)
    velocity = run.read("velocity", i).astype(np.float64)
    finite = np.isfinite(position).all(axis=1) & np.isfinite(velocity).all(axis=1)
    alive = run.read("alive", i).astype(bool) & finite  # rows of agents not born yet are not sent
    n = len(position)
    turning = run.read("turning", i).astype(bool) if run.has("turning") else None
    state = FlockState(
        position=np.where(finite[:, None], position, 0.0),
        velocity=np.where(finite[:, None], velocity, 0.0),
        alive=alive,
        mass=np.ones(n),
        radius=np.zeros(n),
        kind=np.zeros(n, dtype=np.int32),
        ids=np.arange(n, dtype=np.int64),
        turning=turning,
    )
    tracks = []
    if run.has("predator_position") and run.has("predator_velocity"):
        p = run.read("predator_position", i).astype(np.float64)
        v = run.read("predator_velocity", i).astype(np.float64)
        keep = np.isfinite(p).all(axis=1) & np.isfinite(v).all(axis=1)
        tracks.append(_Track("predator", p[keep], v[keep]))

    def metric(name: str, default: float) -> float:
        return float(run.read(name, i)) if run.has(name) else default

    status = [
        metric("polarization", polarization(velocity[alive]) if alive.any() else math.nan),
        metric("mean_neighbors", math.nan),
        metric("caught", math.nan),
        float(alive.sum()),
        0.0,
    ]
    view = _RecordedState(state, params, int(run.steps[i]), float(run.times[i]), tracks)
    # no bank section: recordings keep no bank angles (spin is recorded for inertial-spin alignment only)
    return encode_frame(view, frame_index, selected=None, status=status, bank=False)  # type: ignore[arg-type]


class ReplayWidget(FlockWidget):
    """A recorded run with a scrubber: play/pause, step (one recorded frame), seek."""

    def __init__(self, source: Any):
        run = RecordedFrames(source)
        raw = run.attrs.get("params") or {}
        if isinstance(raw, str):  # open_run's Dataset holds it as JSON text (netCDF has no mappings)
            import json

            raw = json.loads(raw)
        try:
            params = validate(dict(raw))
            shown = to_dict(params)
        except ConfigError:  # a run from another version: drawn without obstacles
            params, shown = None, dict(raw)
        if not isinstance(shown.get("world"), dict):
            raise TrajectoryError("flocksim.widget: the run's parameters have no world; cannot place its view")
        super().__init__(source="replay", n_frames=run.n_frames, params=shown)
        self.run = run
        self._params = params
        self.observe(self._show_index, names="index")
        self.observe(self._on_playing, names="playing")
        self._show(0)

    def _show(self, i: int) -> None:
        self.frame = recorded_frame(self.run, i, self.frames_sent, self._params)
        self.frames_sent += 1

    def _show_index(self, change: dict[str, Any]) -> None:
        i = min(max(int(change["new"]), 0), self.n_frames - 1)
        if i != change["new"]:
            self.index = i  # observed again with the clamped value
            return
        try:
            self._show(i)
        except Exception as exc:  # the scrubber's change arrives here, outside _on_message: shown, not lost
            self.fail(f"frame {i}", exc)

    def _on_playing(self, change: dict[str, Any]) -> None:
        if change["new"] and self.index >= self.n_frames - 1:
            self.index = 0  # Play at the end starts over

    def on_next(self) -> None:
        if self.index >= self.n_frames - 1:
            self.playing = False
        else:
            self.index += 1

    def on_step(self) -> None:
        if self.index < self.n_frames - 1:
            self.index += 1

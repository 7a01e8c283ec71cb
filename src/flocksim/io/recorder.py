"""Record a running simulation into a trajectory store, checkpoint it, and resume it.

``Simulation(params, recorder=Recorder("run.zarr", every=10))`` records a frame every 10 steps
(step 0 included, taken when the first step begins), appends the frames to the store one
time chunk at a time, and writes a checkpoint every ``checkpoint_every`` steps (by default
about every 30 s of wall time); :meth:`Recorder.close` records the final state, flushes and
writes a last checkpoint. :func:`flocksim.io.resuming.resume` continues a store from its newest
checkpoint, and the frames it then writes are bitwise those of an uninterrupted run.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from flocksim.io.store import FrameVariable, TrajectoryError, TrajectoryStore, utc_now
from flocksim.metrics import mean_neighbor_count, milling, polarization, speed_stats

if TYPE_CHECKING:
    from flocksim.simulation import Simulation

PRECISIONS = ("float32", "float64")
CORE_STATE_FIELDS = ("position", "velocity", "alive", "mass", "radius", "kind", "ids")
STATIC_STATE_FIELDS = ("mass", "radius", "kind", "ids")
DEFAULT_CHECKPOINT_SECONDS = 30.0
FRAME_METRICS = ("polarization", "milling", "mean_neighbors", "speed_mean", "speed_std", "n_alive", "caught")


def frame_metrics(sim: Simulation) -> dict[str, float]:
    """The metrics stored with every frame, cheap enough for large N: polarization, milling,
    mean neighbours, mean and standard deviation of speed [units/s], alive count, and birds
    caught by predators. In topological mode the mean neighbour count is exact without a
    search (every alive agent has min(k, alive - 1) neighbours); in metric mode it takes one
    neighbour search. (``Simulation.metrics`` adds the nearest-neighbour distance, which needs
    one more search: pass ``metrics=lambda sim: sim.metrics()`` to record it.)"""
    s = sim.state
    alive = s.alive
    v = s.velocity[alive]
    n_alive = int(alive.sum())
    query = sim.model.neighbor_query()
    if query.mode == "topological":
        mean_neighbors = float(min(query.k, max(n_alive - 1, 0))) if n_alive else float("nan")
    else:
        mean_neighbors = mean_neighbor_count(sim.neighbors().counts[alive])
    speed_mean, speed_std = speed_stats(v)
    row = {
        "polarization": polarization(v),
        "milling": milling(s.position[alive], v),
        "mean_neighbors": mean_neighbors,
        "speed_mean": speed_mean,
        "speed_std": speed_std,
        "n_alive": float(n_alive),
    }
    if hasattr(sim, "caught"):
        row["caught"] = float(sim.caught)
    return row


def _extra_fields(sim: Simulation) -> list[str]:
    """State fields recorded per frame beyond position, velocity and alive (e.g. turning, spin).

    ``spin`` is recorded only when the model uses it (alignment mode ``inertial-spin``)."""
    state = sim.state
    names = []
    for f in fields(state):
        value = getattr(state, f.name)
        if f.name in CORE_STATE_FIELDS or not isinstance(value, np.ndarray) or value.ndim < 1:
            continue
        if value.shape[0] != state.n or value.dtype.kind not in "biuf":
            continue
        if f.name == "spin" and _alignment_mode(sim) != "inertial-spin":
            continue
        names.append(f.name)
    return names


def _alignment_mode(sim: Simulation) -> str | None:
    rules = getattr(sim.params, "rules", None)
    alignment = getattr(rules, "alignment", None)
    return getattr(alignment, "mode", None)


def _component_tracks(sim: Simulation) -> dict[str, Any]:
    """Components that carry their own bodies (``position`` and ``velocity`` arrays of shape
    (P, dim), e.g. predators): recorded as ``<name>_position`` / ``<name>_velocity``."""
    found = {}
    for c in sim.components:
        p = getattr(c, "position", None)
        v = getattr(c, "velocity", None)
        arrays = isinstance(p, np.ndarray) and isinstance(v, np.ndarray)
        if arrays and p.ndim == 2 and p.shape == v.shape and p.shape[1] == sim.state.dim:
            found[c.name] = c
    return found


class Recorder:
    """Records a :class:`~flocksim.Simulation` into a Zarr v3 trajectory store.

    - ``path``: the store to create (it must not exist).
    - ``every``: record a frame every this many steps (frames at steps 0, M, 2M, ... and the
      last step of the run).
    - ``checkpoint_every``: steps between checkpoints; None: one every
      ``checkpoint_seconds`` of wall time. A checkpoint is also written at step 0 and by
      :meth:`close`. The newest ``keep_checkpoints`` are kept.
    - ``precision``: float32 (default) or float64 for positions, velocities and float extras.
    - ``chunk_frames``: frames per time chunk; None picks about 4 MiB of positions per chunk.
    - ``metrics``: ``f(sim) -> {name: number}`` per frame; default :func:`frame_metrics`.
    - ``attrs``: extra root attributes (the CLI adds the preset name and the requested steps).
    """

    def __init__(
        self,
        path: str | Path,
        every: int = 10,
        *,
        checkpoint_every: int | None = None,
        checkpoint_seconds: float = DEFAULT_CHECKPOINT_SECONDS,
        precision: str = "float32",
        chunk_frames: int | None = None,
        metrics: Callable[[Simulation], Mapping[str, float]] = frame_metrics,
        keep_checkpoints: int = 2,
        attrs: Mapping[str, Any] | None = None,
    ):
        if not isinstance(every, int) or every < 1:
            raise TrajectoryError(f"every: must be an integer >= 1, got {every!r}")
        if checkpoint_every is not None and (not isinstance(checkpoint_every, int) or checkpoint_every < 1):
            raise TrajectoryError(f"checkpoint_every: must be an integer >= 1 or None, got {checkpoint_every!r}")
        if precision not in PRECISIONS:
            raise TrajectoryError(f"precision: unknown precision {precision!r}; allowed: {', '.join(PRECISIONS)}")
        if chunk_frames is not None and (not isinstance(chunk_frames, int) or chunk_frames < 1):
            raise TrajectoryError(f"chunk_frames: must be an integer >= 1 or None, got {chunk_frames!r}")
        if keep_checkpoints < 1:
            raise TrajectoryError(f"keep_checkpoints: must be >= 1, got {keep_checkpoints!r}")
        self.path = Path(path)
        self.every = every
        self.checkpoint_every = checkpoint_every
        self.checkpoint_seconds = float(checkpoint_seconds)
        self.precision = precision
        self.chunk_frames = chunk_frames
        self.metrics = metrics
        self.keep_checkpoints = keep_checkpoints
        self.attrs = dict(attrs or {})
        self.store: TrajectoryStore | None = None
        self._sim: Simulation | None = None
        self._begun = False
        self._closed = False
        self._buffer: list[dict[str, np.ndarray]] = []
        self._committed = 0  # frames in the store
        self._last_frame_step = -1
        self._last_checkpoint_step = -1
        self._last_checkpoint_time = time.monotonic()
        self._ids = np.zeros(0, dtype=np.int64)
        self._sorted_ids = self._ids
        self._id_order = self._ids
        self._extras: list[str] = []
        self._tracks: list[str] = []
        self.checkpoints_written = 0

    # --- lifecycle --------------------------------------------------------------------------------------

    @property
    def frames(self) -> int:
        """Frames recorded so far (written or buffered)."""
        return self._committed + len(self._buffer)

    def start(self, sim: Simulation) -> None:
        """Create the store for ``sim`` (called by ``Simulation(..., recorder=self)``). Frame 0
        and the first checkpoint are taken when the first step begins (or by :meth:`close`),
        so that changes made to the state before stepping are part of them."""
        if self._sim is not None:
            raise TrajectoryError(f"{self.path}: this recorder is already attached to a simulation")
        self._sim = sim
        from flocksim._version import __version__
        from flocksim.config import dumps_toml, to_dict

        state = sim.state
        dim = state.dim
        fdtype = self.precision
        self._extras = _extra_fields(sim)
        variables = [
            FrameVariable("position", fdtype, np.nan, ("space",), (dim,), {"units": "world units"}),
            FrameVariable("velocity", fdtype, np.nan, ("space",), (dim,), {"units": "world units / s"}),
            FrameVariable("alive", "bool", False, (), (), {"long_name": "alive (false: dead or absent)"}),
        ]
        for name in self._extras:
            value = getattr(state, name)
            tail_shape = tuple(int(s) for s in value.shape[1:])
            if tail_shape == (dim,):
                tail: tuple[str, ...] = ("space",)
            elif tail_shape == (3,):
                tail = ("xyz",)  # a 3-vector in 2D (spin: only z is used there)
            else:
                tail = tuple(f"{name}_axis{i}" for i in range(len(tail_shape)))
            dtype = fdtype if value.dtype.kind == "f" else str(value.dtype)
            fill = np.nan if value.dtype.kind == "f" else (False if value.dtype.kind == "b" else 0)
            variables.append(FrameVariable(name, dtype, fill, tail, tail_shape, {"long_name": f"state.{name}"}))
        n0 = max(state.n, 1)
        frame_bytes = n0 * dim * np.dtype(fdtype).itemsize
        chunk_frames = self.chunk_frames or int(np.clip(4 * 2**20 // frame_bytes, 1, 256))
        attrs = {
            "flocksim_version": __version__,
            "created": utc_now(),
            "model": sim.params.model,
            "seed": int(sim.seed),
            "engine": sim.engine.name,
            "dim": dim,
            "dt": float(sim.dt),
            "every": self.every,
            "precision": self.precision,
            "checkpoint_every": self.checkpoint_every,
            "params": to_dict(sim.params),
            "params_toml": dumps_toml(sim.params),
            **self.attrs,
        }
        self.store = TrajectoryStore.create(
            self.path,
            attrs,
            ids=state.ids,
            kind=state.kind,
            dim=dim,
            variables=variables,
            metrics=[],
            chunk_frames=chunk_frames,
            agent_chunk=n0,
        )
        self._set_ids(np.array(state.ids, dtype=np.int64))
        self._tracks = []
        for name, component in _component_tracks(sim).items():
            self._add_track(name, component)

    def _continue(self, sim: Simulation, store: TrajectoryStore, frames: int, ids: np.ndarray, begun: bool) -> None:
        """Attach to ``sim`` and record on into an existing store holding ``frames`` frames (resume)."""
        self._sim = sim
        self.store = store
        self._committed = frames
        self._set_ids(ids)
        self._extras = [n for n in store.frame_variables() if n not in ("position", "velocity", "alive")]
        tracks = [n for n in store.time_variables() if store.array(n).attrs.get("flocksim_role") == "track"]
        self._tracks = sorted({n.rsplit("_", 1)[0] for n in tracks})
        self._begun = begun
        if begun:
            self._last_checkpoint_step = sim.steps
            last = store.read("step", frames - 1, frames) if frames else []
            self._last_frame_step = int(last[-1]) if len(last) else -1
        sim.recorder = self

    def _add_track(self, name: str, component: Any) -> None:
        from flocksim.io.store import quiet_zarr

        store = self.store
        p = component.position
        with quiet_zarr():
            for var, units in (("position", "world units"), ("velocity", "world units / s")):
                store._make(
                    f"{name}_{var}",
                    (0, p.shape[0], p.shape[1]),
                    (store.chunk_frames, max(p.shape[0], 1), p.shape[1]),
                    self.precision,
                    np.nan,
                    ["time", name, "space"],
                    {"units": units, "long_name": f"{name} {var}", "flocksim_role": "track", "coordinates": "step"},
                )
        store.commit()
        self._tracks.append(name)

    def before_step(self, sim: Simulation) -> None:
        if not self._begun:
            self._begin(sim)

    def _begin(self, sim: Simulation) -> None:
        self._begun = True
        self._last_checkpoint_time = time.monotonic()
        if sim.steps % self.every == 0:
            self.record(sim)
        self.checkpoint(sim)

    def after_step(self, sim: Simulation) -> None:
        if sim.steps % self.every == 0:
            self.record(sim)
        if self.checkpoint_every is not None:
            due = sim.steps % self.checkpoint_every == 0
        else:
            due = time.monotonic() - self._last_checkpoint_time >= self.checkpoint_seconds
        if due:
            self.checkpoint(sim)

    def close(self, sim: Simulation | None = None) -> None:
        """Record the final state (if its step was not recorded), flush, write a last checkpoint.
        Idempotent."""
        if self._closed:
            return
        sim = sim or self._sim
        if sim is not None and self.store is not None:
            if not self._begun:
                self._begin(sim)
            if self._last_recorded_step() != sim.steps:
                self.record(sim)
            self.checkpoint(sim)
        self._closed = True

    def _last_recorded_step(self) -> int:
        """The step of the newest frame taken (buffered or committed), -1 before the first: read
        from the frames themselves, so an interrupt (a kernel's KeyboardInterrupt) between taking
        a frame and noting its step cannot make :meth:`close` take the same step twice."""
        return int(self._buffer[-1]["step"]) if self._buffer else self._last_frame_step

    def abort(self) -> None:
        """Flush the frames already taken (each a consistent copy) without a checkpoint: for an
        exception in the middle of a step, where the state may be half-updated."""
        if not self._closed and self.store is not None:
            self.flush()
        self._closed = True

    def __enter__(self) -> Recorder:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()

    # --- frames ----------------------------------------------------------------------------------------

    def _set_ids(self, ids: np.ndarray) -> None:
        self._ids = ids
        self._id_order = np.argsort(ids, kind="stable")
        self._sorted_ids = ids[self._id_order]

    def _columns(self, state) -> np.ndarray | None:
        """Store column of each state row (None when they are the same, the usual case);
        new ids get new columns."""
        ids = state.ids
        if len(ids) == len(self._ids) and np.array_equal(ids, self._ids):
            return None
        pos = np.searchsorted(self._sorted_ids, ids)
        clipped = np.minimum(pos, max(len(self._sorted_ids) - 1, 0))
        known = (pos < len(self._sorted_ids)) & (self._sorted_ids[clipped] == ids) if len(self._ids) else pos < 0
        if not known.all():
            new = ~known
            self.flush()  # buffered frames have the old columns
            self.store.grow_agents(np.asarray(ids[new], dtype=np.int64), np.asarray(state.kind[new], dtype=np.int32))
            self._set_ids(np.concatenate([self._ids, np.asarray(ids[new], dtype=np.int64)]))
            if len(ids) == len(self._ids) and np.array_equal(ids, self._ids):
                return None
            pos = np.searchsorted(self._sorted_ids, ids)
        return self._id_order[pos]

    def _scatter(self, values: np.ndarray, cols: np.ndarray | None, dtype: Any, fill: Any) -> np.ndarray:
        if cols is None:
            return np.array(values, dtype=dtype, copy=True)
        out = np.full((len(self._ids), *values.shape[1:]), fill, dtype=dtype)
        out[cols] = values
        return out

    def record(self, sim: Simulation) -> None:
        """Take a frame of ``sim`` now (buffered; written when its time chunk is complete)."""
        if self.store is None:
            raise TrajectoryError("recorder: not started; pass it to Simulation(..., recorder=...)")
        state = sim.state
        cols = self._columns(state)
        fdtype = np.dtype(self.precision)
        frame: dict[str, np.ndarray] = {
            "time": np.float64(sim.time),
            "step": np.int64(sim.steps),
            "position": self._scatter(state.position, cols, fdtype, np.nan),
            "velocity": self._scatter(state.velocity, cols, fdtype, np.nan),
            "alive": self._scatter(state.alive, cols, bool, False),
        }
        for name in self._extras:
            value = getattr(state, name)
            dtype = fdtype if value.dtype.kind == "f" else value.dtype
            fill = np.nan if value.dtype.kind == "f" else (False if value.dtype.kind == "b" else 0)
            frame[name] = self._scatter(value, cols, dtype, fill)
        for name in self._tracks:
            component = next(c for c in sim.components if c.name == name)
            frame[f"{name}_position"] = np.array(component.position, dtype=fdtype)
            frame[f"{name}_velocity"] = np.array(component.velocity, dtype=fdtype)
        known = set(self.store.metric_names())
        for key, value in dict(self.metrics(sim)).items():
            if key in ("time", "step"):
                continue
            if key not in known:
                if key in frame or key in self.store.array_names():
                    raise TrajectoryError(f"metrics: name {key!r} clashes with a store variable")
                self.store.add_metric(key)
            frame[key] = np.float64(value)
        self._buffer.append(frame)
        self._last_frame_step = sim.steps
        if self.frames % self.store.chunk_frames == 0:
            self.flush()

    def flush(self) -> None:
        """Write the buffered frames and commit them."""
        if not self._buffer or self.store is None:
            return
        data = {}
        for name in self.store.time_variables():
            arr = self.store.array(name)
            rows = [f.get(name) for f in self._buffer]
            if all(r is not None for r in rows):
                data[name] = np.stack(rows)
            else:  # a metric that appeared or vanished mid-buffer
                data[name] = np.array([np.nan if r is None else r for r in rows], dtype=arr.dtype)
        taken, self._buffer = self._buffer, []  # before writing: interrupted, no frame is written twice
        self._last_frame_step = int(taken[-1]["step"])
        try:
            self.store.append(data)
        finally:  # the store's own count, also when interrupted right after it wrote
            self._committed = self.store.n_frames

    # --- checkpoints ------------------------------------------------------------------------------------

    def checkpoint(self, sim: Simulation) -> None:
        """Flush, then store ``sim.checkpoint()`` (skipped if this step already has one)."""
        self.flush()
        self._last_checkpoint_time = time.monotonic()
        if sim.steps == self._last_checkpoint_step:
            return
        self.store.write_checkpoint(sim.checkpoint(), self._committed, len(self._ids), keep=self.keep_checkpoints)
        self._last_checkpoint_step = sim.steps
        self.checkpoints_written += 1

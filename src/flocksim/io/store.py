"""The trajectory store: a Zarr v3 group on disk that grows chunk by chunk (see docs/data.md).

Layout (``dims`` are the arrays' Zarr v3 ``dimension_names``, so xarray needs nothing else)::

    run.zarr/
      time      (time)                 float64  simulated time [s] of each frame
      step      (time)                 int64    step count of each frame
      agent     (agent)                int64    stable agent id of each column
      space     (space)                str      "x", "y"[, "z"]
      position  (time, agent, space)   float32 (or float64)  [units]; NaN where the agent is absent
      velocity  (time, agent, space)   float32 (or float64)  [units/s]; NaN where absent
      alive     (time, agent)          bool     False where dead or not yet born
      kind      (agent)                int32    group / kind label of each agent
      <extra>   (time, agent[, ...])   per-agent state beyond the core (e.g. spin, turning)
      <metric>  (time)                 float64  one per metric (polarization, ...)
      checkpoints/step_<steps>/        full simulation state, see checkpoint.py

Crash safety: every file is written to a temporary name and renamed (zarr's LocalStore), new
frames are written past the arrays' committed length, and the root ``zarr.json`` holds the
consolidated metadata of the whole hierarchy. Rewriting that one file (:meth:`commit`) is
the commit point: a reader (xarray included) that uses the consolidated metadata sees every
array at the length of the last commit, whatever moment the writer was killed at.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import os
import shutil
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

FORMAT = "flocksim-trajectory"
FORMAT_VERSION = 1
CORE_FRAME_VARIABLES = ("position", "velocity", "alive")
COORDINATES = ("time", "step", "agent", "space")
CHECKPOINT_GROUP = "checkpoints"
CHUNK_BYTES = 4 * 2**20  # aim for about 4 MiB per chunk of position
MAX_CHUNK_FRAMES = 256


class TrajectoryError(ValueError):
    """A store that cannot be read or written as a flocksim trajectory: one line naming the
    path, what is wrong and what is allowed."""


@dataclass(frozen=True)
class FrameVariable:
    """A per-frame, per-agent variable: dims ``("time", "agent", *tail)``, ``tail`` of sizes
    ``tail_shape``; ``fill`` is what frames before an agent's birth (or after its removal) read."""

    name: str
    dtype: str
    fill: Any
    tail: tuple[str, ...] = ()
    tail_shape: tuple[int, ...] = ()
    attrs: dict[str, Any] | None = None


@contextlib.contextmanager
def quiet_zarr() -> Iterator[None]:
    """zarr warns that consolidated metadata is not yet in the v3 spec (flocksim relies on
    zarr-python and xarray reading it, which they do) and that variable-length strings have
    no v3 spec yet (the ``space`` labels)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Consolidated metadata is currently not part")
        warnings.filterwarnings("ignore", message=".*does not have a Zarr V3 specification")
        yield


def _compressors():
    from zarr.codecs import BloscCodec

    return [BloscCodec(cname="zstd", clevel=1, shuffle="shuffle")]


def utc_now() -> str:
    return _dt.datetime.now(_dt.UTC).replace(microsecond=0).isoformat()


def disk_usage(path: str | Path) -> int:
    """Bytes of the regular files below ``path``."""
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.stat(os.path.join(root, name)).st_size
    return total


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


NOT_OURS = "allowed: a trajectory store written by `flocksim run --out` or flocksim.io.Recorder"


class TrajectoryStore:
    """Read and append access to one store. Writers are single-threaded and single-process."""

    def __init__(self, path: Path, group: Any, writable: bool):
        self.path = path
        self.group = group
        self.writable = writable
        self._arrays: dict[str, Any] = {}
        self._names: list[str] | None = None

    # --- opening --------------------------------------------------------------------------------------

    @classmethod
    def create(
        cls,
        path: str | Path,
        attrs: dict[str, Any],
        ids: np.ndarray,
        kind: np.ndarray,
        dim: int,
        variables: list[FrameVariable],
        metrics: list[str],
        chunk_frames: int,
        agent_chunk: int,
    ) -> TrajectoryStore:
        """A new, empty store (no frame yet) at ``path``, which must not exist."""
        import zarr

        path = Path(path)
        if path.exists():
            raise TrajectoryError(f"{path}: already exists; allowed: a new path (or --resume to continue a run)")
        if not path.parent.is_dir():
            raise TrajectoryError(f"{path}: directory {path.parent} does not exist")
        root_attrs = {"flocksim_format": FORMAT, "flocksim_format_version": FORMAT_VERSION, **attrs}
        with quiet_zarr():
            group = zarr.open_group(str(path), mode="w-", zarr_format=3, attributes=root_attrs)
            store = cls(path, group, writable=True)
            n = len(ids)
            time_chunk = (chunk_frames,)
            store._make("time", (0,), time_chunk, "float64", np.nan, ["time"], {"units": "s", "long_name": "time"})
            store._make("step", (0,), time_chunk, "int64", -1, ["time"], {"long_name": "step count"})
            agent = store._make("agent", (n,), (agent_chunk,), "int64", -1, ["agent"], {"long_name": "agent id"})
            agent[:] = ids
            labels = np.array(["x", "y", "z"][:dim], dtype=object)
            space = store._make("space", (dim,), (dim,), str, "", ["space"], {"long_name": "axis"})
            space[:] = labels
            kinds = store._make("kind", (n,), (agent_chunk,), "int32", -1, ["agent"], {"long_name": "group / kind"})
            kinds[:] = kind
            for var in variables:
                store._make(
                    var.name,
                    (0, n, *var.tail_shape),
                    (chunk_frames, agent_chunk, *var.tail_shape),
                    var.dtype,
                    var.fill,
                    ["time", "agent", *var.tail],
                    {**(var.attrs or {}), "coordinates": "step kind"},
                )
            for name in metrics:
                store.add_metric(name, commit=False)
            group.create_group(CHECKPOINT_GROUP)
            store.commit()
        return store

    @classmethod
    def open(cls, path: str | Path, writable: bool = False) -> TrajectoryStore:
        """Open an existing store, checking that it is a flocksim trajectory.

        Readers see the last commit (consolidated metadata). A writable store reads each
        array's own metadata, which may run ahead of the last commit after a crash: call
        :meth:`truncate` to a checkpoint before writing."""
        import zarr

        path = Path(path)
        if not path.exists():
            raise TrajectoryError(f"{path}: no such file or directory; {NOT_OURS}")
        if not path.is_dir() or not (path / "zarr.json").is_file():
            raise TrajectoryError(f"{path}: not a Zarr v3 store (no zarr.json); {NOT_OURS}")
        try:
            with quiet_zarr():
                group = zarr.open_group(str(path), mode="r+" if writable else "r", use_consolidated=True)
        except Exception as exc:  # zarr raises many kinds for a damaged store
            raise TrajectoryError(f"{path}: damaged or foreign store ({_first_line(exc)}); {NOT_OURS}") from None
        attrs = dict(group.attrs)
        if attrs.get("flocksim_format") != FORMAT:
            raise TrajectoryError(f"{path}: not a flocksim trajectory (attribute flocksim_format missing); {NOT_OURS}")
        version = attrs.get("flocksim_format_version")
        if not isinstance(version, int) or not 1 <= version <= FORMAT_VERSION:
            raise TrajectoryError(
                f"{path}: trajectory format version {version!r} is not supported; allowed: 1..{FORMAT_VERSION}"
            )
        store = cls(path, group, writable=False)
        store._check_layout()
        if not writable:
            return store
        with quiet_zarr():
            group = zarr.open_group(str(path), mode="r+", use_consolidated=False)
        return cls(path, group, writable=True)

    def _check_layout(self) -> None:
        expected = {
            "time": ("time",),
            "step": ("time",),
            "agent": ("agent",),
            "space": ("space",),
            "position": ("time", "agent", "space"),
            "velocity": ("time", "agent", "space"),
            "alive": ("time", "agent"),
        }
        for name, dims in expected.items():
            arr = self.array(name)
            if tuple(arr.metadata.dimension_names or ()) != dims:
                found = arr.metadata.dimension_names
                raise TrajectoryError(f"{self.path}: array {name} has dims {found}; expected {dims}; store damaged")
        sizes: dict[str, int] = {}
        for name in self.array_names():
            arr = self.array(name)
            for d, s in zip(arr.metadata.dimension_names or (), arr.shape, strict=True):
                if sizes.setdefault(d, s) != s:
                    raise TrajectoryError(
                        f"{self.path}: dimension {d} has length {sizes[d]} in one array and {s} in {name}; "
                        "the store is damaged"
                    )

    def array(self, name: str) -> Any:
        if name not in self._arrays:
            try:
                with quiet_zarr():
                    self._arrays[name] = self.group[name]
            except Exception as exc:
                raise TrajectoryError(f"{self.path}: array {name} is missing or damaged ({_first_line(exc)})") from None
        return self._arrays[name]

    def array_names(self) -> list[str]:
        """Names of the root arrays (listed once, then kept up to date by this object)."""
        if self._names is None:
            try:
                with quiet_zarr():
                    self._names = sorted(name for name, _ in self.group.arrays())
            except Exception as exc:
                raise TrajectoryError(
                    f"{self.path}: arrays cannot be listed; store damaged ({_first_line(exc)})"
                ) from None
        return list(self._names)

    # --- shape -----------------------------------------------------------------------------------------

    @property
    def attrs(self) -> dict[str, Any]:
        return dict(self.group.attrs)

    @property
    def n_frames(self) -> int:
        return int(self.array("time").shape[0])

    @property
    def n_agents(self) -> int:
        return int(self.array("agent").shape[0])

    @property
    def dim(self) -> int:
        return int(self.array("space").shape[0])

    @property
    def chunk_frames(self) -> int:
        return int(self.array("position").chunks[0])

    def time_variables(self) -> list[str]:
        """Every array whose first dimension is time (frame variables, metrics, time, step)."""
        return [n for n in self.array_names() if (self.array(n).metadata.dimension_names or ("",))[0] == "time"]

    def agent_variables(self) -> list[str]:
        return [n for n in self.array_names() if "agent" in (self.array(n).metadata.dimension_names or ())]

    def metric_names(self) -> list[str]:
        return [n for n in self.time_variables() if self.array(n).attrs.get("flocksim_role") == "metric"]

    def frame_variables(self) -> list[str]:
        """Per-agent, per-frame arrays (position, velocity, alive, extras)."""
        return [n for n in self.time_variables() if "agent" in (self.array(n).metadata.dimension_names or ())]

    # --- writing ----------------------------------------------------------------------------------------

    def _make(self, name, shape, chunks, dtype, fill, dims, attrs):
        arr = self.group.create_array(
            name,
            shape=shape,
            chunks=chunks,
            dtype=dtype,
            fill_value=fill,
            dimension_names=dims,
            attributes=attrs,
            compressors=_compressors() if dtype is not str else "auto",
        )
        self._arrays[name] = arr
        if self._names is not None:
            self._names = sorted({*self._names, name})
        return arr

    def add_metric(self, name: str, commit: bool = True) -> None:
        """A new metric array, NaN for the frames already written."""
        with quiet_zarr():
            self._make(
                name,
                (self.n_frames,),
                (self.chunk_frames,),
                "float64",
                np.nan,
                ["time"],
                {"flocksim_role": "metric", "coordinates": "step"},
            )
        if commit:
            self.commit()

    def append(self, data: dict[str, np.ndarray]) -> None:
        """Write frames (every time array must be given, each with the same leading length)
        after the committed ones, then commit."""
        names = self.time_variables()
        missing = sorted(set(names) - set(data))
        if missing:
            raise ValueError(f"append: no data for {missing}")
        count = {len(v) for v in data.values()}
        if len(count) != 1:
            raise ValueError("append: arrays of different lengths")
        (k,) = count
        start = self.n_frames
        with quiet_zarr():
            for name in names:
                arr = self.array(name)
                arr.resize((start + k, *arr.shape[1:]))
                arr[start : start + k] = data[name]
        self.commit()

    def grow_agents(self, ids: np.ndarray, kind: np.ndarray) -> None:
        """New agent columns (earlier frames read as fill: NaN positions, alive False)."""
        n0 = self.n_agents
        n1 = n0 + len(ids)
        with quiet_zarr():
            for name in self.agent_variables():
                arr = self.array(name)
                axis = list(arr.metadata.dimension_names).index("agent")
                shape = list(arr.shape)
                shape[axis] = n1
                arr.resize(tuple(shape))
            self.array("agent")[n0:n1] = ids
            self.array("kind")[n0:n1] = kind
        self.commit()

    def truncate(self, frames: int, agents: int) -> None:
        """Drop frames past ``frames`` and agent columns past ``agents`` (resume after a crash)."""
        with quiet_zarr():
            for name in self.array_names():
                arr = self.array(name)
                dims = list(arr.metadata.dimension_names or ())
                shape = tuple(
                    frames if d == "time" else agents if d == "agent" else s
                    for d, s in zip(dims, arr.shape, strict=True)
                )
                if shape != arr.shape:
                    arr.resize(shape)
        self.commit()

    def set_attrs(self, **attrs: Any) -> None:
        self.group.attrs.update(attrs)
        self.commit()

    def commit(self) -> None:
        """Consolidate the metadata of the whole hierarchy into the root zarr.json (one atomic
        file replacement): what readers see from now on."""
        import zarr

        with quiet_zarr():
            zarr.consolidate_metadata(str(self.path))

    def remove_partial_files(self) -> int:
        """Delete temporary files left by a writer killed mid-write; returns how many."""
        removed = 0
        for partial in self.path.rglob("*.partial"):
            with contextlib.suppress(OSError):
                partial.unlink()
                removed += 1
        return removed

    # --- reading ----------------------------------------------------------------------------------------

    def read(self, name: str, start: int = 0, stop: int | None = None) -> np.ndarray:
        """Frames ``start:stop`` of a time array (or the whole of any other array)."""
        arr = self.array(name)
        try:
            with quiet_zarr():
                if (arr.metadata.dimension_names or ("",))[0] == "time":
                    return np.asarray(arr[start:stop])
                return np.asarray(arr[...])
        except Exception as exc:
            raise TrajectoryError(
                f"{self.path}: data of {name} (frames {start}:{stop}) cannot be read, the store is damaged "
                f"({_first_line(exc)})"
            ) from None

    # --- checkpoints ------------------------------------------------------------------------------------

    def checkpoints(self) -> list[dict[str, Any]]:
        """Complete checkpoints, oldest first: name, steps, frames, agents, created, ...

        A checkpoint group's attributes (with ``complete: true``) are written after all its
        arrays, so one that a crash interrupted is never listed."""
        found = []
        folder = self.path / CHECKPOINT_GROUP
        for sub in sorted(folder.iterdir()) if folder.is_dir() else []:
            try:
                meta = json.loads((sub / "zarr.json").read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            attrs = meta.get("attributes") or {}
            if attrs.get("complete") is True and isinstance(attrs.get("steps"), int):
                found.append(attrs | {"name": sub.name})
        return sorted(found, key=lambda c: c["steps"])

    def write_checkpoint(self, checkpoint: dict[str, Any], frames: int, agents: int, keep: int = 2) -> str:
        """Store ``checkpoint`` (see :meth:`flocksim.Simulation.checkpoint`), commit, then drop
        all but the ``keep`` newest. Returns its name."""
        from flocksim.io.codec import encode

        tree, arrays = encode(checkpoint)
        steps = int(checkpoint["steps"])
        name = f"step_{steps:012d}"
        shutil.rmtree(self.path / CHECKPOINT_GROUP / name, ignore_errors=True)
        with quiet_zarr():
            group = self.group[CHECKPOINT_GROUP].create_group(name)
            for i, value in enumerate(arrays):
                arr = group.create_array(
                    f"a{i}",
                    shape=value.shape,
                    chunks=tuple(max(s, 1) for s in value.shape),
                    dtype=value.dtype,
                    compressors=_compressors(),
                    fill_value=0,
                )
                arr[...] = value
            group.attrs.update(
                {
                    "steps": steps,
                    "frames": int(frames),
                    "agents": int(agents),
                    "created": utc_now(),
                    "tree": json.dumps(tree),
                    "arrays": len(arrays),
                    "complete": True,
                }
            )
        self.commit()
        self.prune_checkpoints(keep)
        return name

    def prune_checkpoints(self, keep: int) -> None:
        """Remove all but the ``keep`` newest committed checkpoints, and any incomplete one."""
        committed = self.checkpoints()
        keep_names = {c["name"] for c in committed[-keep:]} if keep > 0 else set()
        folder = self.path / CHECKPOINT_GROUP
        stale = [p for p in folder.iterdir() if p.is_dir() and p.name not in keep_names]
        if not stale:
            return
        for sub in stale:
            shutil.rmtree(sub, ignore_errors=True)
        self.commit()

    def read_checkpoint(self, name: str | None = None) -> dict[str, Any]:
        """A checkpoint (the newest by default) as :meth:`flocksim.Simulation.checkpoint` made it,
        with its ``frames`` and ``agents`` counts added under ``"store"``."""
        import zarr

        from flocksim.io.codec import decode

        committed = self.checkpoints()
        if not committed:
            raise TrajectoryError(f"{self.path}: holds no checkpoint, so it cannot be resumed")
        info = committed[-1] if name is None else next((c for c in committed if c["name"] == name), None)
        if info is None:
            raise TrajectoryError(
                f"{self.path}: no checkpoint {name!r}; allowed: {', '.join(c['name'] for c in committed)}"
            )
        try:
            with quiet_zarr():
                group = zarr.open_group(str(self.path / CHECKPOINT_GROUP / info["name"]), mode="r")
                arrays = [np.asarray(group[f"a{i}"][...]) for i in range(int(info["arrays"]))]
            data = decode(json.loads(info["tree"]), arrays)
        except Exception as exc:
            raise TrajectoryError(
                f"{self.path}: checkpoint {info['name']} cannot be read, the store is damaged ({_first_line(exc)})"
            ) from None
        data["store"] = {"name": info["name"], "frames": int(info["frames"]), "agents": int(info["agents"])}
        return data

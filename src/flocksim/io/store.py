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

Damage: format 2 writes every chunk (fill values included) with a CRC-32C checksum, and every
checkpoint with a checksum of its arrays and counts (see :mod:`flocksim.io.verify`); the root
attribute ``checkpoints_kept`` records which checkpoints the store keeps, so a deleted one is found. Opening a
store checks that every chunk the committed arrays need exists; reading checks that what it
reads decodes; reading a checkpoint checks its checksum and that its frame count agrees with
the ``step`` array. Damage raises :class:`TrajectoryError`: one line naming the array and the
steps (or the checkpoint) affected.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import math
import os
import shutil
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

FORMAT = "flocksim-trajectory"
FORMAT_VERSION = 2
"""2: every chunk written, CRC-32C per chunk, checkpoint checksums; 1: none of these (read only)."""
CORE_FRAME_VARIABLES = ("position", "velocity", "alive")
COORDINATES = ("time", "step", "agent", "space")
CHECKPOINT_GROUP = "checkpoints"
CHECKPOINT_RECORD = "checkpoints_kept"
"""Root attribute: the checkpoints the store keeps, as written ([{"name", "steps"}], oldest first).
:meth:`TrajectoryStore.verify` finds a recorded checkpoint that is gone; stores written before
flocksim recorded it cannot tell a deleted checkpoint from none."""
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


def _compressors(text: bool = False):
    """Blosc (zstd, level 1, byte shuffle; none for text) followed by a CRC-32C of each chunk."""
    from zarr.codecs import BloscCodec, Crc32cCodec

    return ([] if text else [BloscCodec(cname="zstd", clevel=1, shuffle="shuffle")]) + [Crc32cCodec()]


WRITE_EVERY_CHUNK = {"write_empty_chunks": True}
"""Zarr array config: a chunk holding only fill values is written too, so a missing one is damage."""


@contextlib.contextmanager
def writing_every_chunk() -> Iterator[None]:
    """Arrays opened inside write every chunk (zarr resolves an array's config when it opens it)."""
    import zarr

    with zarr.config.set({"array.write_empty_chunks": True}):
        yield


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


def _decode_problem(exc: BaseException) -> str:
    """What a failed chunk read means, in words."""
    if "checksum" in str(exc).lower():
        return "a chunk fails its CRC-32C checksum (corrupted or truncated)"
    return f"data cannot be read ({_first_line(exc)})"


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


NOT_OURS = "allowed: a trajectory store written by `flocksim run --out` or flocksim.io.Recorder"


def _why_unreadable(root: Path) -> str:
    """Why a store's root ``zarr.json`` cannot be opened, in words (no library's message)."""
    try:
        meta = json.loads(root.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return "damaged or foreign store (its zarr.json is not readable JSON)"
    if not isinstance(meta, dict) or meta.get("zarr_format") != 3 or meta.get("node_type") != "group":
        return "not a Zarr v3 group (a foreign store, or its zarr.json is damaged)"
    attrs = meta.get("attributes") if isinstance(meta.get("attributes"), dict) else {}
    if attrs.get("flocksim_format") != FORMAT:
        return "not a flocksim trajectory (a Zarr store without flocksim's attributes)"
    return "damaged store: its zarr.json does not list the store's arrays as flocksim writes them"


OLDER = (
    "it was written by an older flocksim (trajectory format 1), which left out chunks holding only fill values, "
    "so a missing chunk cannot be told from an empty one"
)


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
        """A new, empty store (no frame yet) at ``path``, which must not exist (a dangling
        symbolic link is followed: the store is made where it points)."""
        import zarr

        path = Path(path)
        if path.is_symlink() and not path.exists():
            path = Path(os.path.realpath(path))
        if path.exists():
            raise TrajectoryError(f"{path}: already exists; allowed: a new path (or --resume to continue a run)")
        if not path.parent.is_dir():
            raise TrajectoryError(f"{path}: directory {path.parent} does not exist")
        root_attrs = {
            "flocksim_format": FORMAT,
            "flocksim_format_version": FORMAT_VERSION,
            **attrs,
            CHECKPOINT_RECORD: [],
        }
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
        """Open an existing store, checking that it is a flocksim trajectory whose committed
        arrays are all there, every chunk of them included (see :mod:`flocksim.io.verify`).

        Readers see the last commit (consolidated metadata). A writable store reads each
        array's own metadata, which may run ahead of the last commit after a crash: call
        :meth:`truncate` to a checkpoint before writing (:func:`flocksim.io.resume` verifies
        the store, then does)."""
        import zarr

        path = Path(path)
        if not path.exists():
            raise TrajectoryError(f"{path}: no such file or directory; {NOT_OURS}")
        if not path.is_dir() or not (path / "zarr.json").is_file():
            raise TrajectoryError(f"{path}: not a Zarr v3 store (no zarr.json); {NOT_OURS}")
        try:
            with quiet_zarr():
                group = zarr.open_group(str(path), mode="r", use_consolidated=True)
        except Exception:  # zarr raises many kinds for a damaged store
            raise TrajectoryError(f"{path}: {_why_unreadable(path / 'zarr.json')}; {NOT_OURS}") from None
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
        store.check_chunks()
        if not writable:
            return store
        with quiet_zarr(), writing_every_chunk():
            group = zarr.open_group(str(path), mode="r+", use_consolidated=False)
        return cls(path, group, writable=True)

    @property
    def format_version(self) -> int:
        return int(self.group.attrs.get("flocksim_format_version", 1))

    def damaged(self, what: str) -> TrajectoryError:
        """The one-line error for damage found in this store (``what`` names array and steps)."""
        older = f"; {OLDER}" if self.format_version < 2 and "is missing" in what else ""
        return TrajectoryError(f"{self.path}: damaged store: {what}{older}")

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

    def check_chunks(self, frames: int | None = None) -> int:
        """Check that every root array's folder, metadata and chunks exist (within the first
        ``frames`` frames; default all committed ones), listing folders only. Returns the
        number of chunks checked; raises :class:`TrajectoryError` naming the first gap."""
        from flocksim.io.verify import chunk_grid, chunk_keys, missing_chunk

        checked = 0
        for name in self.array_names():
            arr = self.array(name)
            folder = self.path / name
            if not (folder / "zarr.json").is_file():
                raise self.damaged(f"array {name} is missing (its folder {folder.name}/ or its zarr.json is gone)")
            shape = list(arr.shape)
            timed = (arr.metadata.dimension_names or ("",))[0] == "time"
            if timed and frames is not None:
                shape[0] = min(shape[0], frames)
            grid = chunk_grid(shape, arr.chunks)
            encode = arr.metadata.chunk_key_encoding.encode_chunk_key
            key = missing_chunk(folder, chunk_keys(grid, encode))
            if key is not None:
                raise self.damaged(f"{name}, {self._chunk_span(arr, key)}: chunk {key} is missing")
            checked += math.prod(grid)
        return checked

    def _chunk_span(self, arr: Any, key: str) -> str:
        """Steps (and frames) a chunk of ``arr`` covers, for messages; "the whole array" if it has no time axis."""
        if (arr.metadata.dimension_names or ("",))[0] != "time":
            return "the whole array (no time axis)"
        index = int(key.split("/")[1]) if "/" in key else 0
        start = index * arr.chunks[0]
        return self.span(start, min(start + arr.chunks[0], arr.shape[0]))

    def span(self, start: int, stop: int) -> str:
        """ "steps A to B (frames a to b)" for frames ``start:stop``, from the step array if it can be
        read, else the frames alone."""
        frames = f"frames {start} to {stop - 1}"
        if stop <= start:
            return frames
        try:
            with quiet_zarr():
                step = self.array("step")
                first, last = int(step[start]), int(step[stop - 1])
        except Exception:
            return frames
        if first < 0 or last < first:
            return frames
        return f"steps {first} to {last} ({frames})"

    def array(self, name: str) -> Any:
        if name not in self._arrays:
            try:
                with quiet_zarr(), writing_every_chunk() if self.writable else contextlib.nullcontext():
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
            compressors=_compressors(text=dtype is str),
            config=WRITE_EVERY_CHUNK,
        )
        self._arrays[name] = arr
        if self._names is not None:
            self._names = sorted({*self._names, name})
        return arr

    def add_metric(self, name: str, commit: bool = True) -> None:
        """A new metric array, NaN for the frames already written (written out: every chunk exists)."""
        with quiet_zarr():
            arr = self._make(
                name,
                (self.n_frames,),
                (self.chunk_frames,),
                "float64",
                np.nan,
                ["time"],
                {"flocksim_role": "metric", "coordinates": "step"},
            )
            if arr.shape[0]:
                arr[:] = np.nan
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
        """New agent columns (earlier frames read as fill: NaN positions, alive False; the chunks
        that growth adds for earlier frames are written out with those fill values)."""
        n0 = self.n_agents
        n1 = n0 + len(ids)
        frames = self.n_frames
        with quiet_zarr():
            for name in self.agent_variables():
                arr = self.array(name)
                axis = list(arr.metadata.dimension_names).index("agent")
                shape = list(arr.shape)
                shape[axis] = n1
                arr.resize(tuple(shape))
                chunk = arr.chunks[axis]
                first_new = math.ceil(n0 / chunk) * chunk  # the first column of a chunk that does not exist yet
                if axis == 1 and frames and first_new < n1:
                    arr[:frames, first_new:n1] = arr.metadata.fill_value
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
        """Change root attributes and commit. The root ``zarr.json`` is replaced whole, keeping the
        consolidated metadata of the last commit, so that a crash between the two writes leaves a
        store every reader opens (zarr's own attribute update would drop that metadata until the
        commit)."""
        import zarr

        root = self.path / "zarr.json"
        meta = json.loads(root.read_text(encoding="utf-8"))
        meta.setdefault("attributes", {}).update(attrs)
        partial = root.with_name("zarr.json.partial")
        partial.write_text(json.dumps(meta, indent=2), encoding="utf-8")
        os.replace(partial, root)
        with quiet_zarr(), writing_every_chunk():
            self.group = zarr.open_group(str(self.path), mode="r+", use_consolidated=False)
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
        """Frames ``start:stop`` of a time array (or the whole of any other array). Every chunk
        read is decoded and its checksum checked; damage raises :class:`TrajectoryError`."""
        arr = self.array(name)
        timed = (arr.metadata.dimension_names or ("",))[0] == "time"
        try:
            with quiet_zarr():
                return np.asarray(arr[start:stop] if timed else arr[...])
        except Exception as exc:
            problem = _decode_problem(exc)
            if not timed:
                raise self.damaged(f"{name}, the whole array (no time axis): {problem}") from None
            first, last, _ = slice(start, stop).indices(arr.shape[0])
            raise self.damaged(f"{name}, {self._bad_time_chunk(arr, first, last)}: {problem}") from None

    def _bad_time_chunk(self, arr: Any, first: int, last: int) -> str:
        """The span of the first time chunk between frames ``first`` and ``last`` that fails to
        decode (all of them if none fails alone)."""
        size = arr.chunks[0]
        for start in range(first // size * size, last, size):
            stop = min(start + size, arr.shape[0])
            try:
                with quiet_zarr():
                    arr[start:stop]
            except Exception:
                return self.span(start, stop)
        return self.span(first, last)

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
        """Store ``checkpoint`` (see :meth:`flocksim.Simulation.checkpoint`) with its checksum,
        commit, then drop all but the ``keep`` newest. Returns its name."""
        from flocksim.io.codec import encode
        from flocksim.io.verify import checkpoint_checksum

        tree, arrays = encode(checkpoint)
        steps = int(checkpoint["steps"])
        name = f"step_{steps:012d}"
        tree_text = json.dumps(tree)
        recorded = self.recorded_checkpoints()
        if recorded is not None and any(c["name"] == name for c in recorded):  # rewritten: unrecorded while it is
            self._record_checkpoints([c for c in recorded if c["name"] != name])
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
                    config=WRITE_EVERY_CHUNK,
                )
                arr[...] = value
            group.attrs.update(
                {
                    "steps": steps,
                    "frames": int(frames),
                    "agents": int(agents),
                    "created": utc_now(),
                    "tree": tree_text,
                    "arrays": len(arrays),
                    "checksum": checkpoint_checksum(tree_text, steps, frames, agents, arrays),
                    "complete": True,
                }
            )
        recorded = [c for c in self.recorded_checkpoints() or [] if c["name"] != name]
        self._record_checkpoints([*recorded, {"name": name, "steps": steps}])  # commits
        self.prune_checkpoints(keep)
        return name

    def recorded_checkpoints(self) -> list[dict[str, Any]] | None:
        """The checkpoints the store records keeping ({"name", "steps"}, oldest first); None for a
        store that does not record them (written by an older flocksim)."""
        record = self.group.attrs.get(CHECKPOINT_RECORD)
        if record is None:
            return None
        ok = isinstance(record, list) and all(
            isinstance(c, dict) and isinstance(c.get("name"), str) and isinstance(c.get("steps"), int) for c in record
        )
        if not ok:
            raise self.damaged(f"attribute {CHECKPOINT_RECORD} is not a list of checkpoint names and steps")
        return [{"name": c["name"], "steps": c["steps"]} for c in record]

    def _record_checkpoints(self, record: list[dict[str, Any]]) -> None:
        self.set_attrs(**{CHECKPOINT_RECORD: sorted(record, key=lambda c: c["steps"])})

    def check_recorded_checkpoints(self) -> None:
        """Raise :class:`TrajectoryError` naming the first recorded checkpoint that is not complete
        on disk (its folder deleted, or its attributes gone)."""
        present = {c["name"] for c in self.checkpoints()}
        missing = [c for c in self.recorded_checkpoints() or [] if c["name"] not in present]
        if missing:
            gone = missing[0]
            more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
            raise self.damaged(
                f"checkpoint {gone['name']} (step {gone['steps']}){more} is missing: the store recorded writing it, "
                f"and its folder {CHECKPOINT_GROUP}/{gone['name']}/ is gone or incomplete"
            )

    def prune_checkpoints(self, keep: int) -> None:
        """Remove all but the ``keep`` newest committed checkpoints, and any incomplete one."""
        committed = self.checkpoints()
        keep_names = {c["name"] for c in committed[-keep:]} if keep > 0 else set()
        folder = self.path / CHECKPOINT_GROUP
        stale = [p for p in folder.iterdir() if p.is_dir() and p.name not in keep_names]
        if not stale:
            return
        recorded = self.recorded_checkpoints()
        if recorded is not None:  # recorded as dropped before it goes: a crash never leaves a false "missing"
            self._record_checkpoints([c for c in recorded if c["name"] in keep_names])
        for sub in stale:
            shutil.rmtree(sub, ignore_errors=True)
        self.commit()

    def read_checkpoint(self, name: str | None = None) -> dict[str, Any]:
        """A checkpoint (the newest by default) as :meth:`flocksim.Simulation.checkpoint` made it,
        with its ``frames`` and ``agents`` counts added under ``"store"``; verified first (every
        chunk there, the checksum, the counts against the store: see :meth:`verify_checkpoint`)."""
        from flocksim.io.codec import decode

        committed = self.checkpoints()
        if not committed:
            raise TrajectoryError(f"{self.path}: holds no checkpoint, so it cannot be resumed")
        info = committed[-1] if name is None else next((c for c in committed if c["name"] == name), None)
        if info is None:
            raise TrajectoryError(
                f"{self.path}: no checkpoint {name!r}; allowed: {', '.join(c['name'] for c in committed)}"
            )
        tree, arrays = self.verify_checkpoint(info)
        try:
            data = decode(tree, arrays)
        except Exception as exc:
            raise self.damaged(f"{self._checkpoint_name(info)}: cannot be decoded ({_first_line(exc)})") from None
        data["store"] = {"name": info["name"], "frames": int(info["frames"]), "agents": int(info["agents"])}
        return data

    @staticmethod
    def _checkpoint_name(info: dict[str, Any]) -> str:
        return f"checkpoint {info['name']} (step {info['steps']})"

    def verify_checkpoint(self, info: dict[str, Any]) -> tuple[Any, list[np.ndarray]]:
        """(JSON tree, arrays) of checkpoint ``info`` (from :meth:`checkpoints`), after checking
        that every chunk of its arrays exists and decodes, that its checksum matches its arrays
        and counts, and that its frame and agent counts agree with the committed arrays: the
        frames it counts are exactly those at or before its step. Damage raises one line."""
        import zarr

        from flocksim.io.verify import array_paths, checkpoint_checksum, chunk_grid, chunk_keys, missing_chunk

        label = self._checkpoint_name(info)
        if self.format_version < 2 or "checksum" not in info:
            raise TrajectoryError(
                f"{self.path}: {label} carries no checksum, so it cannot be verified: the store was written by an "
                "older flocksim (trajectory format 1); allowed: a store written by this version (its frames can "
                "still be read)"
            )
        folder = self.path / CHECKPOINT_GROUP / info["name"]
        try:
            tree_text = str(info["tree"])
            tree = json.loads(tree_text)
            count, steps, frames, agents = (int(info[k]) for k in ("arrays", "steps", "frames", "agents"))
        except (KeyError, TypeError, ValueError) as exc:
            raise self.damaged(f"{label}: attribute {exc} is missing or wrong") from None
        where = array_paths(tree)
        arrays = []
        for i in range(count):
            what = f"{label}, array a{i} ({where.get(i, '?')})"
            try:
                with quiet_zarr():
                    arr = zarr.open_array(str(folder / f"a{i}"), mode="r")
            except Exception as exc:
                raise self.damaged(f"{what}: missing or unreadable ({_first_line(exc)})") from None
            grid = chunk_grid(arr.shape, arr.chunks)
            key = missing_chunk(folder / f"a{i}", chunk_keys(grid, arr.metadata.chunk_key_encoding.encode_chunk_key))
            if key is not None:
                raise self.damaged(f"{what}: chunk {key} is missing")
            try:
                with quiet_zarr():
                    arrays.append(np.asarray(arr[...]))
            except Exception as exc:
                raise self.damaged(f"{what}: {_decode_problem(exc)}") from None
        if checkpoint_checksum(tree_text, steps, frames, agents, arrays) != info["checksum"]:
            raise self.damaged(f"{label}: its checksum does not match its arrays and counts (edited or corrupted)")
        self._check_counts(label, steps, frames, agents)
        return tree, arrays

    def _check_counts(self, label: str, steps: int, frames: int, agents: int) -> None:
        """A checkpoint at ``steps`` counts ``frames`` frames: frame frames-1 is at or before its
        step and the next ones after it (but one, at its very step: a run's last frame, taken
        when the checkpoint of that step was already written); its agents are columns of the store."""
        committed = self.n_frames
        if not 0 <= frames <= committed:
            raise self.damaged(f"{label}: it counts {frames} frames but the store has {committed}")
        if not 0 <= agents <= self.n_agents:
            raise self.damaged(f"{label}: it counts {agents} agents but the store has {self.n_agents} columns")
        first = max(frames - 1, 0)
        around = self.read("step", first, min(frames + 2, committed))
        for index, step in enumerate(around.tolist(), start=first):
            later = index - frames  # 0: the first frame after the checkpoint's frames
            if (later < 0 and step > steps) or (later == 0 and step < steps) or (later > 0 and step <= steps):
                raise self.damaged(
                    f"{label}: it counts {frames} frames, which disagrees with the step array "
                    f"(frame {index} is at step {step})"
                )

    # --- whole-store check ----------------------------------------------------------------------------

    def read_all(self, frames: int) -> None:
        """Read (and so decode and checksum) every chunk of the first ``frames`` frames of every
        array, one time chunk at a time, and the whole of the arrays without a time axis."""
        for name in self.array_names():
            arr = self.array(name)
            if (arr.metadata.dimension_names or ("",))[0] == "time":
                for start in range(0, min(frames, arr.shape[0]), arr.chunks[0]):
                    self.read(name, start, min(start + arr.chunks[0], frames))
            else:
                self.read(name)

    def verify(self) -> dict[str, int]:
        """Check everything (``flocksim info --check``): every chunk of every array exists and
        decodes with its checksum, the steps increase, time = step x dt, every checkpoint the store
        records is there, and every complete checkpoint passes :meth:`verify_checkpoint`. Returns
        counts of what was checked (``recorded``: 1 when the store records its checkpoints, 0 for
        an older store that does not); raises :class:`TrajectoryError` (one line) at the first damage."""
        chunks = self.check_chunks()
        frames = self.n_frames
        self.read_all(frames)
        steps = self.read("step")
        if frames and (steps[0] < 0 or (np.diff(steps) <= 0).any()):
            bad = int(np.argmax(np.diff(steps) <= 0)) + 1 if steps[0] >= 0 else 0
            raise self.damaged(f"step, {self.span(max(bad - 1, 0), bad + 1)}: steps do not increase")
        dt = self.attrs.get("dt")
        if frames and isinstance(dt, float):
            times = self.read("time")
            off = ~np.isclose(times, steps * dt, rtol=1e-9, atol=0.0)
            if off.any():
                bad = int(np.argmax(off))
                raise self.damaged(f"time, {self.span(bad, bad + 1)}: time is not step x dt ({dt:g} s)")
        self.check_recorded_checkpoints()
        checkpoints = self.checkpoints()
        for info in checkpoints:
            _tree, arrays = self.verify_checkpoint(info)
            chunks += len(arrays)
        return {
            "arrays": len(self.array_names()),
            "chunks": chunks,
            "frames": frames,
            "checkpoints": len(checkpoints),
            "recorded": int(self.recorded_checkpoints() is not None),
        }

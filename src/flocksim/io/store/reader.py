"""Reading a trajectory store: its arrays, its shape, frames (checksums checked) and its checkpoints' list.

:class:`StoreReader` is the base of :class:`~flocksim.io.store.TrajectoryStore`: it holds the
zarr group and reads from it; writing (:mod:`flocksim.io.store.writer`) and checking
(:mod:`flocksim.io.store.checks`) build on it.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

import numpy as np

from flocksim.io.store.layout import (
    CHECKPOINT_GROUP,
    CHECKPOINT_RECORD,
    OLDER,
    TrajectoryError,
    _decode_problem,
    _first_line,
    quiet_zarr,
    writing_every_chunk,
)


class StoreReader:
    """Read access to one store (see :class:`~flocksim.io.store.TrajectoryStore`, which opens it)."""

    def __init__(self, path: Path, group: Any, writable: bool):
        self.path = path
        self.group = group
        self.writable = writable
        self._arrays: dict[str, Any] = {}
        self._names: list[str] | None = None

    @property
    def format_version(self) -> int:
        return int(self.group.attrs.get("flocksim_format_version", 1))

    def damaged(self, what: str) -> TrajectoryError:
        """The one-line error for damage found in this store (``what`` names array and steps)."""
        older = f"; {OLDER}" if self.format_version < 2 and "is missing" in what else ""
        return TrajectoryError(f"{self.path}: damaged store: {what}{older}")

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

    @staticmethod
    def _checkpoint_name(info: dict[str, Any]) -> str:
        return f"checkpoint {info['name']} (step {info['steps']})"

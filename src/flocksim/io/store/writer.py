"""Writing a trajectory store: new arrays, frames and agents appended, truncation, attributes, checkpoints.

Crash safety: every file is written to a temporary name and renamed, frames go past the arrays'
committed length, and :meth:`StoreWriter.commit` (the root ``zarr.json``'s consolidated
metadata, one atomic replacement) is the commit point (see :mod:`flocksim.io.store`). Writers
are single-threaded and single-process.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
from typing import Any

import numpy as np

from flocksim.io.store.layout import (
    CHECKPOINT_GROUP,
    CHECKPOINT_RECORD,
    WRITE_EVERY_CHUNK,
    _compressors,
    quiet_zarr,
    utc_now,
    writing_every_chunk,
)
from flocksim.io.store.reader import StoreReader


class StoreWriter(StoreReader):
    """Append access to one store (see :class:`~flocksim.io.store.TrajectoryStore`)."""

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

    # --- checkpoints ------------------------------------------------------------------------------------

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

    def drop_checkpoints_after(self, steps: int) -> None:
        """Keep only the complete checkpoints at or before ``steps`` (resuming from an older
        intact checkpoint): the record forgets the others (missing ones too) before the folders
        of those after ``steps`` are removed, so a crash in between never leaves a recorded
        checkpoint that is gone."""
        present = self.checkpoints()
        keep = {c["name"] for c in present if c["steps"] <= steps}
        recorded = self.recorded_checkpoints()
        if recorded is not None:
            self._record_checkpoints([c for c in recorded if c["name"] in keep])
        for c in present:
            if c["name"] not in keep:
                shutil.rmtree(self.path / CHECKPOINT_GROUP / c["name"], ignore_errors=True)
        self.commit()

    def _record_checkpoints(self, record: list[dict[str, Any]]) -> None:
        self.set_attrs(**{CHECKPOINT_RECORD: sorted(record, key=lambda c: c["steps"])})

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

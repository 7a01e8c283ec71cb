"""The trajectory store: created or opened (checked), written, read, verified (see :mod:`flocksim.io.store`)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from flocksim.io.store.checks import StoreChecks
from flocksim.io.store.layout import (
    CHECKPOINT_GROUP,
    CHECKPOINT_RECORD,
    FORMAT,
    FORMAT_VERSION,
    NOT_OURS,
    FrameVariable,
    TrajectoryError,
    _first_line,
    _why_unreadable,
    quiet_zarr,
    writing_every_chunk,
)
from flocksim.io.store.writer import StoreWriter


class TrajectoryStore(StoreWriter, StoreChecks):
    """Read and append access to one store. Writers are single-threaded and single-process.

    Reading is :class:`~flocksim.io.store.reader.StoreReader`, writing
    :class:`~flocksim.io.store.writer.StoreWriter`, the damage checks
    :class:`~flocksim.io.store.checks.StoreChecks`; this class creates and opens a store and
    reads its checkpoints back."""

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

    # --- checkpoints ------------------------------------------------------------------------------------

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

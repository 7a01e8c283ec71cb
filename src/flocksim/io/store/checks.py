"""Checking a trajectory store for damage: its layout, its chunks, its checkpoints, the whole store.

Zarr reads a missing chunk as fill values without a word; the chunk-level checks
(:mod:`flocksim.io.verify`: chunk listings, checkpoint checksums) find it. Here they are applied
to a store: when it opens (:meth:`StoreChecks.check_chunks`), when a checkpoint is read
(:meth:`StoreChecks.verify_checkpoint`) and for ``flocksim info --check``
(:meth:`StoreChecks.verify`). Damage raises :class:`~flocksim.io.store.layout.TrajectoryError`:
one line naming the array and the steps (or the checkpoint) affected.
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np

from flocksim.io.store.layout import CHECKPOINT_GROUP, TrajectoryError, _decode_problem, _first_line, quiet_zarr
from flocksim.io.store.reader import StoreReader


class StoreChecks(StoreReader):
    """The damage checks of one store (see :class:`~flocksim.io.store.TrajectoryStore`)."""

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

    def resume_point(self) -> tuple[dict[str, Any] | None, TrajectoryError | None]:
        """(the newest checkpoint that verifies, or None; the damage found in the checkpoints, or
        None when every recorded one is there and the newest verifies). Checkpoints older than
        the one returned are not read."""
        damage = None
        try:
            self.check_recorded_checkpoints()
        except TrajectoryError as exc:
            damage = exc
        for info in reversed(self.checkpoints()):
            try:
                self.verify_checkpoint(info)
            except TrajectoryError as exc:
                damage = damage or exc
                continue
            return info, damage
        return None, damage

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

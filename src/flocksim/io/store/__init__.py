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

The package holds one idea per module: :mod:`~flocksim.io.store.layout` (the format's constants,
codecs and error), :mod:`~flocksim.io.store.reader`, :mod:`~flocksim.io.store.writer`,
:mod:`~flocksim.io.store.checks` (the damage checks) and :mod:`~flocksim.io.store.trajectory`
(:class:`TrajectoryStore`, which combines them). Every name is importable from
``flocksim.io.store`` as it was when the store was one module.
"""

from __future__ import annotations

from flocksim.io.store.checks import StoreChecks
from flocksim.io.store.layout import (  # noqa: F401  (the private names: as the one module gave them)
    CHECKPOINT_GROUP,
    CHECKPOINT_RECORD,
    CHUNK_BYTES,
    COORDINATES,
    CORE_FRAME_VARIABLES,
    FORMAT,
    FORMAT_VERSION,
    MAX_CHUNK_FRAMES,
    NOT_OURS,
    OLDER,
    WRITE_EVERY_CHUNK,
    FrameVariable,
    TrajectoryError,
    _compressors,
    _decode_problem,
    _first_line,
    _why_unreadable,
    disk_usage,
    quiet_zarr,
    utc_now,
    writing_every_chunk,
)
from flocksim.io.store.reader import StoreReader
from flocksim.io.store.trajectory import TrajectoryStore
from flocksim.io.store.writer import StoreWriter

__all__ = [
    "CHECKPOINT_GROUP",
    "CHECKPOINT_RECORD",
    "CHUNK_BYTES",
    "COORDINATES",
    "CORE_FRAME_VARIABLES",
    "FORMAT",
    "FORMAT_VERSION",
    "MAX_CHUNK_FRAMES",
    "NOT_OURS",
    "OLDER",
    "WRITE_EVERY_CHUNK",
    "FrameVariable",
    "StoreChecks",
    "StoreReader",
    "StoreWriter",
    "TrajectoryError",
    "TrajectoryStore",
    "disk_usage",
    "quiet_zarr",
    "utc_now",
    "writing_every_chunk",
]

"""Continue a recorded run from its newest checkpoint (``flocksim run --resume``): verify the
store before writing anything, pick the checkpoint (or, asked to, the newest intact one), and
hand the store back to a :class:`~flocksim.io.recorder.Recorder`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from flocksim.io.recorder import DEFAULT_CHECKPOINT_SECONDS, Recorder, frame_metrics
from flocksim.io.store import TrajectoryError, TrajectoryStore

if TYPE_CHECKING:
    from flocksim.simulation import Simulation


def _check_before_writing(reader: TrajectoryStore, frames: int) -> None:
    """What resume continues must be sound: every folder of the store writable, and every chunk
    of the ``frames`` frames it keeps read and checked (so a resumed run that finishes is a
    sound store). Raises :class:`TrajectoryError` before anything is written."""
    for folder, _dirs, _files in os.walk(reader.path):
        if not os.access(folder, os.W_OK | os.X_OK):
            raise TrajectoryError(
                f"{reader.path}: cannot be written ({folder} is read-only, or on a read-only file system); "
                "allowed: a store in a writable place (copy it there to continue it)"
            )
    reader.read_all(frames)


def resume_point(
    reader: TrajectoryStore, from_intact_checkpoint: bool = False
) -> tuple[dict[str, Any] | None, TrajectoryError | None]:
    """The checkpoint :func:`resume` starts from (None: step 0, the store holding none) and the
    damage found in its checkpoints (None when there is none). A damaged or missing checkpoint
    raises :class:`TrajectoryError` naming the damage and the way forward: with
    ``from_intact_checkpoint`` the newest checkpoint that verifies is returned instead; without
    it, the line names that option and that checkpoint's step (or says no checkpoint is intact)."""
    start, damage = reader.resume_point()
    if damage is None:
        return start, None
    if start is None:
        raise TrajectoryError(f"{damage}; no checkpoint is intact, so it cannot be resumed")
    if not from_intact_checkpoint:
        raise TrajectoryError(
            f"{damage}; allowed: --from-intact-checkpoint to resume from step {start['steps']} (the newest intact "
            "checkpoint), rewriting the frames after it"
        )
    return start, damage


def resume(
    path: str | Path,
    threads: int | None = None,
    checkpoint_every: int | None = None,
    checkpoint_seconds: float = DEFAULT_CHECKPOINT_SECONDS,
    metrics: Callable[[Simulation], Mapping[str, float]] = frame_metrics,
    from_intact_checkpoint: bool = False,
) -> Simulation:
    """The simulation of store ``path`` at its newest checkpoint, recording into the same store.

    Frames written after that checkpoint (by a run that was killed) are dropped, as are
    temporary files a killed writer left; stepping on then writes frames bitwise equal to
    those of an uninterrupted run with the same parameters and seed. A store killed before
    its first checkpoint starts over from step 0 (its parameters and seed are in its
    attributes). ``checkpoint_every`` None keeps the store's setting.

    Nothing is written before the store is verified: its layout, that every committed chunk
    exists, that every checkpoint it records writing is there, the checkpoint's checksum and
    counts, and every chunk of the frames it keeps (read and checksummed); damage raises
    :class:`TrajectoryError` (one line naming the array and steps).

    A damaged or missing checkpoint is refused with the step of the newest intact one (see
    :func:`resume_point`); ``from_intact_checkpoint=True`` resumes from that one instead: the
    checkpoints after it are removed and the frames after it rewritten (those before it are kept
    as they are), and the store ends as an uninterrupted run's would."""
    from flocksim.config import validate
    from flocksim.simulation import Simulation

    reader = TrajectoryStore.open(path)  # checks the layout and that every committed chunk exists
    # a deleted or damaged checkpoint is damage, not a run to start over
    start, damage = resume_point(reader, from_intact_checkpoint)
    attrs = reader.attrs
    checkpoint = reader.read_checkpoint(start["name"]) if start is not None else None  # checksum and counts verified
    source = checkpoint if checkpoint is not None else attrs
    try:
        params = validate(source["params"])
        sim = Simulation(params, seed=int(source["seed"]), engine=str(source["engine"]), threads=threads)
    except (KeyError, TypeError) as exc:
        raise TrajectoryError(f"{path}: attribute {exc} is missing or wrong; the store is damaged") from None
    _check_before_writing(reader, checkpoint["store"]["frames"] if checkpoint is not None else 0)
    store = TrajectoryStore.open(path, writable=True)
    store.remove_partial_files()
    if damage is not None:  # from the newest intact checkpoint: the damaged and missing ones forgotten
        store.drop_checkpoints_after(start["steps"])
    store.prune_checkpoints(keep=10**9)  # drops checkpoint groups a crash left incomplete
    if checkpoint is not None:
        info = checkpoint.pop("store")
        frames, agents = info["frames"], info["agents"]
        sim.restore(checkpoint)
    else:
        frames, agents = 0, sim.state.n
    store.truncate(frames, agents)
    ids = np.asarray(store.read("agent"), dtype=np.int64)
    if checkpoint is None and not np.array_equal(ids, sim.state.ids):
        raise TrajectoryError(f"{path}: its agent ids do not match a fresh start of its parameters; store damaged")
    recorder = Recorder(
        path,
        int(attrs.get("every", 1)),
        checkpoint_every=attrs.get("checkpoint_every") if checkpoint_every is None else checkpoint_every,
        checkpoint_seconds=checkpoint_seconds,
        precision=str(attrs.get("precision", "float32")),
        metrics=metrics,
    )
    recorder._continue(sim, store, frames, ids, begun=checkpoint is not None)
    return sim

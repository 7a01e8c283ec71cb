"""Trajectory files, checkpoints and resume (see docs/data.md).

- :class:`Recorder`: ``Simulation(params, recorder=Recorder("run.zarr", every=10))`` records a
  run into a Zarr v3 store, with checkpoints.
- :func:`open_run`: the store as an :class:`xarray.Dataset` (dims time, agent, space).
- :func:`resume`: the simulation of a store at its newest checkpoint, recording on.
- :func:`open_tracks`: tracked trajectories (a run, a ``movement`` dataset, a CSV) in one layout
  for the analyses (docs/field-data.md).
- :class:`TrajectoryStore`: low-level access (frames, checkpoints); :class:`TrajectoryError`
  is what a damaged or foreign store raises (one line).
"""

from __future__ import annotations

from flocksim.io.reader import open_run, run_summary
from flocksim.io.recorder import FRAME_METRICS, Recorder, frame_metrics
from flocksim.io.resuming import resume
from flocksim.io.store import FORMAT, FORMAT_VERSION, TrajectoryError, TrajectoryStore
from flocksim.io.tracks import TracksError, open_tracks

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "FRAME_METRICS",
    "Recorder",
    "TrajectoryError",
    "TrajectoryStore",
    "TracksError",
    "frame_metrics",
    "open_run",
    "open_tracks",
    "resume",
    "run_summary",
]

"""Notebook widgets (JupyterLab, Jupyter Notebook, VS Code; anywidget): a live view of a
simulation and a replay of a recorded run, drawn by the viewer's renderer (docs/notebook.md).

``flocksim.widget(sim)`` and ``flocksim.widget("run.zarr")`` return them; see :func:`widget`.
"""

# the extra is checked (require) before the modules below import anywidget
# ruff: noqa: E402
from __future__ import annotations

from typing import Any

from flocksim._extras import require

require("notebook", "flocksim.notebook")

from flocksim.notebook.base import FlockWidget, WidgetNotBuiltError
from flocksim.notebook.live import SimulationWidget, refresh_open_widgets
from flocksim.notebook.replay import RecordedFrames, ReplayWidget
from flocksim.simulation import Simulation


def widget(source: Any, **options: Any) -> SimulationWidget | ReplayWidget:
    """A notebook view of ``source``: a :class:`~flocksim.simulation.Simulation` (live: play/pause,
    step, Basic controls; follows ``sim.step()`` from any cell; ``steps_per_frame=`` steps per
    frame while playing, ``max_agents=`` the Basic panel's cap) or a recorded run (a ``.zarr``
    path, a :class:`~flocksim.io.TrajectoryStore` or :func:`flocksim.io.open_run`'s Dataset:
    a replay with a scrubber). Display it as a cell's last value."""
    if isinstance(source, Simulation):
        return SimulationWidget(source, **options)
    if options:
        raise TypeError(f"flocksim.widget: a replay takes no options, got {', '.join(sorted(options))}")
    return ReplayWidget(source)


__all__ = [
    "FlockWidget",
    "RecordedFrames",
    "ReplayWidget",
    "SimulationWidget",
    "WidgetNotBuiltError",
    "refresh_open_widgets",
    "widget",
]

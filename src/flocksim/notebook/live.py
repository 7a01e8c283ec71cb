"""The live widget: a view of a :class:`~flocksim.simulation.Simulation` in a notebook (docs/notebook.md).

The view follows the simulation wherever it is stepped: after every cell the notebook runs
(IPython's ``post_run_cell`` event), each open widget sends a frame if its simulation changed;
:meth:`SimulationWidget.update` sends one at once (inside a long loop). Play steps it from the
front end, ``steps_per_frame`` steps per frame, one frame in flight at a time (the front end
asks for the next after drawing the last), so it runs as fast as the kernel and the page allow
and never while a cell runs (the kernel answers between cells).

A Basic-panel change is validated as ``flocksim run --set`` validates it (one line naming the
field and the allowed values when refused, shown under the view). An accepted one rebuilds
the simulation *in place*: the ``sim`` object the notebook holds becomes the new simulation,
keeping its flock (positions, velocities, ids, steps) when the model, the world and the agent
count are unchanged, as the viewer does (:func:`flocksim.viewer.session.carry_over`).
"""

from __future__ import annotations

import json
import weakref
from typing import TYPE_CHECKING, Any

import numpy as np
import traitlets

from flocksim.budgets import BudgetError
from flocksim.config import MODEL_CLASSES, ConfigError, to_dict
from flocksim.notebook.base import FlockWidget
from flocksim.simulation import Simulation
from flocksim.viewer.controls import ControlError, SetControl, parse_control
from flocksim.viewer.protocol import encode_frame
from flocksim.viewer.session import DEFAULT_MAX_AGENTS, carry_over, check_agent_cap, same_flock

if TYPE_CHECKING:
    from flocksim.config import AnyParams

SELECTED_ID = 0
"""The highlighted agent (and its 7 nearest), as in the viewer."""
_OPEN: weakref.WeakSet[SimulationWidget] = weakref.WeakSet()
"""Open live widgets, refreshed after every cell."""
_HOOKED: list[Any] = []
"""The IPython shells the refresh is registered with."""


class SimulationWidget(FlockWidget):
    """A live view of ``sim``: play/pause, step, the Basic controls; follows ``sim.step()``
    called from any cell. ``steps_per_frame``: simulation steps per frame while playing (>= 1)."""

    steps_per_frame = traitlets.Int(1).tag(sync=True)

    def __init__(self, sim: Simulation, steps_per_frame: int = 1, max_agents: int = DEFAULT_MAX_AGENTS):
        if not isinstance(sim, Simulation):
            raise TypeError(f"flocksim.widget: expected a flocksim.Simulation, got {type(sim).__name__}")
        if int(steps_per_frame) < 1:
            raise ValueError(f"steps_per_frame: must be >= 1, got {steps_per_frame}")
        super().__init__(source="live", steps_per_frame=int(steps_per_frame), max_agents=int(max_agents))
        self.sim = sim
        self._shown: tuple[Any, ...] | None = None
        self._show_params()
        self.update()
        _follow_cells(self)

    # ------------------------------------------------------------------ showing

    def _fingerprint(self) -> tuple[Any, ...]:
        """What a frame depends on: a change of any of these is a change of the view."""
        state = self.sim.state
        return (
            id(self.sim.params),
            self.sim.steps,
            state.n,
            int(state.alive.sum()),
            float(np.sum(state.position)),
            float(np.sum(state.velocity)),
        )

    def update(self, force: bool = False) -> bool:
        """Send a frame of the simulation's current state if it changed since the last one
        (``force``: in any case). Returns whether one was sent."""
        key = self._fingerprint()
        if not force and key == self._shown:
            return False
        if self.params.get("model") != self.sim.params.model or key[0] != (self._shown or (None,))[0]:
            self._show_params()
        self.frame = encode_frame(self.sim, self.frames_sent, selected=SELECTED_ID)
        self.frames_sent += 1
        self._shown = key
        return True

    def _show_params(self) -> None:
        params = to_dict(self.sim.params)
        with self.hold_sync():
            if self.params.get("model") != params["model"] or not self.schema:
                self.schema = MODEL_CLASSES[params["model"]].model_json_schema()
            self.params = params

    # ------------------------------------------------------------------ the front end's requests

    def on_next(self) -> None:
        self.sim.step(self.steps_per_frame)
        self.update(force=True)

    def on_step(self) -> None:
        self.sim.step(1)
        self.update(force=True)

    def on_set(self, changes: Any) -> None:
        try:
            control = parse_control(json.dumps({"type": "set", "changes": changes}), self.sim.params)
            if not isinstance(control, SetControl):  # pragma: no cover - a set parses to a SetControl
                raise ControlError("set: not a parameter change")
            check_agent_cap(control.params, self.max_agents)
            self._change(control.params)
        except (ControlError, ConfigError, BudgetError, ValueError, TypeError) as exc:
            with self.hold_sync():
                self.error = " ".join(str(exc).split())
                self.params = to_dict(self.sim.params)  # the panel shows what runs, not what was refused
            return
        self.error = ""
        self.update(force=True)

    def _change(self, params: AnyParams) -> None:
        """Rebuild ``self.sim`` in place with ``params``, keeping the flock where it fits."""
        old = self.sim
        if old.recorder is not None:
            raise ControlError(
                "set: this simulation records to a store; change its parameters in Python (a new Simulation)"
            )
        engine = old.engine
        new = Simulation(
            params,
            engine=getattr(engine, "name", "cpu"),
            threads=getattr(engine, "threads", None),
            max_pairs=getattr(getattr(engine, "budget", None), "max_pairs", None),
        )
        if same_flock(old.params, params) and old.state.n == new.state.n:
            carry_over(old, new)
            new.check_neighbor_budget()
        # the notebook's `sim` is this object: it becomes the new simulation
        old.__dict__.update(new.__dict__)
        self._show_params()

    def close(self) -> None:
        _OPEN.discard(self)
        super().close()


def _follow_cells(widget: SimulationWidget) -> None:
    """Refresh ``widget`` after every cell of the running IPython kernel (nothing outside one)."""
    _OPEN.add(widget)
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - ipywidgets requires IPython
        return
    shell = get_ipython()
    if shell is None or any(s is shell for s in _HOOKED):
        return
    shell.events.register("post_run_cell", refresh_open_widgets)
    _HOOKED.append(shell)


def refresh_open_widgets(*_args: Any) -> None:
    """Send a frame from every open live widget whose simulation changed (IPython's
    ``post_run_cell`` event calls this after each cell)."""
    for widget in list(_OPEN):
        if widget.comm is None:  # closed
            _OPEN.discard(widget)
            continue
        try:
            widget.update()
        except Exception as exc:  # a broken simulation must not break every later cell
            widget.error = f"update: {type(exc).__name__}: {' '.join(str(exc).split())}"

"""Simulation: owns the state, the model, the engine and the clock."""

from __future__ import annotations

import copy
import functools
import json
import time
from collections.abc import Callable, Mapping
from dataclasses import fields
from typing import Any

import numpy as np

from flocksim.compile_notice import CompileNotice, compile_estimate, describe
from flocksim.components import default_components
from flocksim.components.pointer import PointerSteering, check_pointer
from flocksim.config import AnyParams, ConfigError, to_dict, validate
from flocksim.engines import make_engine
from flocksim.host import Component
from flocksim.metrics import flock_summary
from flocksim.models import make_model
from flocksim.neighbors import NeighborList
from flocksim.neighbors.query import SpatialIndex
from flocksim.params import AbmFlockingParams, CouzinParams, ReynoldsParams, VicsekParams
from flocksim.params.fields import READ_ONLY, lock
from flocksim.perturbation import perturb_turn
from flocksim.spawning import append_agents, rows_of
from flocksim.state import FlockState, new_state


def _first_difference(a: Any, b: Any, key: str = "") -> str | None:
    """The first dotted key whose value differs between two parameter dicts (None: equal)."""
    if isinstance(a, dict) and isinstance(b, dict):
        for name in [*a, *(k for k in b if k not in a)]:
            found = _first_difference(a.get(name), b.get(name), f"{key}{name}.")
            if found is not None:
                return found
        return None
    return None if a == b else key.rstrip(".") or "parameters"


def whole_number(what: str, value: Any, low: int = 0) -> int:
    """``value`` as an int >= ``low``: TypeError for a non-integer (2.7, "3", True), ValueError
    below ``low``; both name ``what``. numpy integers are integers."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{what} must be an integer >= {low}, got {value!r} ({type(value).__name__})")
    if value < low:
        raise ValueError(f"{what} must be an integer >= {low}, got {value!r}")
    return int(value)


class Simulation:
    """A running flock.

    ``Simulation(params, seed=None, engine="cpu", threads=None)``: ``params``
    is a parameter object (see :func:`flocksim.load_preset`) or a mapping;
    ``seed`` overrides ``params.seed``. The same parameters, seed and engine
    give bitwise-identical trajectories on one machine, whatever the thread
    count. ``state`` arrays are in stable-id order.

    ``max_pairs``: most neighbour pairs one neighbour search may hold (None:
    :data:`flocksim.budgets.DEFAULT_MAX_PAIRS`); the initial state is checked
    here, every search again before it allocates its list
    (:class:`flocksim.budgets.BudgetError`).

    ``recorder`` (e.g. :class:`flocksim.io.Recorder`) records frames and
    checkpoints: started here, it is called before every step (before the
    components) and after it (after the components).
    """

    def __init__(
        self,
        params: AnyParams | Mapping[str, Any],
        seed: int | None = None,
        engine: str = "cpu",
        threads: int | None = None,
        recorder: Any = None,
        max_pairs: int | None = None,
    ):
        if isinstance(params, Mapping):
            params = validate(dict(params))
        elif not isinstance(params, (ReynoldsParams, AbmFlockingParams, VicsekParams, CouzinParams)):
            raise TypeError(
                f"Simulation: params must be a parameter object (e.g. flocksim.load_preset('boids-2d')) or a "
                f"mapping of parameters, got {type(params).__name__}"
            )
        if seed is not None:
            params = params.model_copy(update={"seed": whole_number("Simulation: seed", seed, low=0)})
        # its own copy, checked whole (an assignment checks one field) and locked: see the params property
        params = validate(params.model_dump(mode="json"))
        lock(params)
        self._params: AnyParams = params
        self.seed = params.seed
        self.model = make_model(params)
        self.engine = make_engine(engine, self.model, threads=threads, max_pairs=max_pairs)
        # one line on stderr when a kernel of this simulation compiles (flocksim.compile_notice)
        self._notice = CompileNotice(describe(params, self.model), self._compile_estimate(None))
        self.rng = np.random.default_rng(self.seed)
        self.state = self.model.initial_state(self.rng)
        self.check_neighbor_budget()
        self.steps = 0
        self._in_step = False  # spawns and removals requested meanwhile wait for the step's end (docs/design.md §1.5)
        self._pending: list[tuple[str, Any]] = []
        self._index: SpatialIndex | None = None
        self._index_key: tuple[int, int] | None = None
        self._version = 0  # bumped by every change of the agent set, so queries rebuild their grid
        # the predator and spontaneous turns of params.predator / params.turning
        self.components: list[Component] = default_components(self)
        self.recorder = recorder
        if recorder is not None:
            recorder.start(self)

    @property
    def params(self) -> AnyParams:
        """The parameters this simulation runs (its own copy). They are read-only: the state, the
        walls and the kernels were built from them, so a change would not reach the run. An
        assignment to one of them, or of new parameters here, raises ConfigError with one line
        naming the key (and the allowed values when the value is invalid); assigning equal
        parameters is allowed. To change them: ``Simulation(apply_overrides(sim.params, [...]))``."""
        return self._params

    @params.setter
    def params(self, value: AnyParams | Mapping[str, Any]) -> None:
        if isinstance(value, Mapping):
            new = validate(dict(value))
        elif isinstance(value, (ReynoldsParams, AbmFlockingParams, VicsekParams, CouzinParams)):
            new = validate(value.model_dump(mode="json"))
        else:
            raise TypeError(f"Simulation.params: expected a parameter object or a mapping, got {type(value).__name__}")
        changed = _first_difference(to_dict(self._params), to_dict(new))
        if changed is not None:
            raise ConfigError(f"{changed}: {READ_ONLY}")

    def _replace_params(self, params: AnyParams) -> None:
        """Run on with ``params``, the state and the random stream as they are: the model is
        rebuilt, the components are not. For checks that change coefficients between the stages
        of one run (flocksim.validate); not a general way to change a simulation's parameters."""
        params = validate(params.model_dump(mode="json"))
        lock(params)
        self._params = params
        self.model = make_model(params)
        self.engine.model = self.model

    @property
    def state(self) -> FlockState:
        """The flock (stable-id order). An engine that keeps the state elsewhere (cuda: on the GPU)
        is handed every state assigned here and copies arrays back when they are read."""
        return self._state

    @state.setter
    def state(self, value: FlockState) -> None:
        attach = getattr(self.engine, "attach", None)
        self._state = attach(value) if attach is not None else value

    @property
    def dt(self) -> float:
        """Time step [s]."""
        return self.params.world.dt

    @property
    def time(self) -> float:
        """Simulated time [s] (steps x dt)."""
        return self.steps * self.dt

    def step(self, n: int = 1) -> None:
        """Advance ``n`` steps (an integer >= 0). A step that compiles kernels says so once on
        standard error (:mod:`flocksim.compile_notice`)."""
        n = whole_number("step: n", n, low=0)
        with self._notice:
            for _ in range(n):
                self._in_step = True
                if self.recorder is not None:
                    self.recorder.before_step(self)
                for component in self.components:
                    component.before_step(self)
                self.engine.step(self.state, self.dt)
                self.steps += 1
                for component in self.components:
                    component.after_step(self)
                self._in_step = False
                self._apply_pending()
                if self.recorder is not None:
                    self.recorder.after_step(self)

    def add_agents(
        self,
        positions: Any,
        velocities: Any = None,
        mass: Any = None,
        radius: Any = None,
        kind: Any = 0,
    ) -> np.ndarray:
        """Add agents; returns their new stable ids (docs/design.md §1.5). See :mod:`flocksim.spawning`.

        ``positions`` (M, dim) [units]; ``velocities`` (M, dim) [units/s], zero when None;
        ``kind`` one value or M; ``mass`` / ``radius`` one value or M, by default those of the
        kind in ``agents.kinds`` or else ``agents.mass`` / ``agents.radius``. Called while a step
        is in flight (from a component), the agents join after the step; otherwise at once."""
        kinds = getattr(getattr(self.params, "agents", None), "kinds", [])
        labels = np.asarray(kind)  # one label or M: the defaults follow its shape
        for name, value in (("mass", mass), ("radius", radius)):
            if value is not None:
                continue
            if kinds:
                if labels.dtype.kind not in "iu" or labels.min(initial=0) < 0 or labels.max(initial=0) >= len(kinds):
                    raise ValueError(f"add_agents: kind must be 0..{len(kinds) - 1} (agents.kinds) or pass {name}")
                value = np.array([getattr(k, name) for k in kinds])[labels]
            else:
                value = getattr(getattr(self.params, "agents", None), name, 1.0 if name == "mass" else 0.5)
                if isinstance(value, list):
                    raise ValueError(f"add_agents: agents.{name} is a per-agent list; pass {name}")
            if name == "mass":
                mass = value
            else:
                radius = value
        if self._in_step:  # check and reserve the ids now, add the rows after the step
            dim = self.state.dim
            staged = new_state(np.zeros((0, dim)), np.zeros((0, dim)))
            staged.next_id = self.state.next_id
            ids = append_agents(staged, positions, velocities, mass, radius, kind)
            self.state.next_id = staged.next_id
            self._pending.append(("add", staged))
            return ids
        ids = append_agents(self.state, positions, velocities, mass, radius, kind)
        self._version += 1
        return ids

    def remove_agents(self, ids: Any) -> None:
        """Remove agents by stable id: their rows stay with ``alive = False``. Called
        while a step is in flight, the removal takes effect after the step; otherwise at once.
        An unknown or already removed id raises ValueError naming it; no ids is a no-op."""
        if np.size(ids) == 0:
            return
        if self._in_step:
            pending = {int(i) for op, staged in self._pending if op == "add" for i in staged.ids}
            check = [i for i in np.atleast_1d(ids).tolist() if int(i) not in pending]
            rows_of(self.state, check)
            self._pending.append(("remove", np.atleast_1d(np.asarray(ids))))
            return
        self.state.alive[rows_of(self.state, ids)] = False
        self._version += 1

    def _apply_pending(self) -> None:
        pending, self._pending = self._pending, []
        for op, args in pending:
            if op == "add":  # the ids reserved in order when it was queued
                reserved = self.state.next_id
                self.state.next_id = int(args.ids[0]) if args.n else reserved
                append_agents(self.state, args.position, args.velocity, args.mass, args.radius, args.kind)
                self.state.next_id = reserved
            else:
                self.state.alive[rows_of(self.state, args)] = False
            self._version += 1

    def spatial_index(self) -> SpatialIndex:
        """The grid that answers :meth:`query_radius` and :meth:`query_nearest`, rebuilt at most once
        per step (and after add/remove/restore). After editing ``state`` arrays by hand, call
        ``invalidate_queries()``."""
        key = (self.steps, self._version)
        if self._index is None or self._index_key != key:
            s = self.state
            with self._notice:
                self._index = SpatialIndex(s.position, s.alive, s.ids, self.model.space)
            self._index_key = key
        return self._index

    def invalidate_queries(self) -> None:
        """Forget the query grid (after editing state arrays by hand)."""
        self._index = None

    def query_radius(self, point: Any, r: float, out: np.ndarray | None = None) -> np.ndarray:
        """Ids of the alive agents within ``r`` [units] of ``point`` (inclusive), ascending (docs/design.md §2.6).
        ``out``: an int64 buffer reused when large enough (no allocation); a view of it is returned."""
        index = self.spatial_index()
        with self._notice:
            return index.radius(point, r, out)

    def query_nearest(self, point: Any, k: int, out: np.ndarray | None = None) -> np.ndarray:
        """Ids of the ``k`` alive agents nearest ``point``, nearest first, ties to the lower id.
        ``out``: an int64 buffer of length >= k, filled and returned as a view."""
        index = self.spatial_index()
        with self._notice:
            return index.nearest(point, k, out)

    def name_compiles(self, name: str) -> None:
        """Call this simulation ``name`` (a preset's name) when its kernels compile: in the line on
        standard error, whose estimate is then that preset's measured figure, and in the viewer's
        ``compiling`` messages (:mod:`flocksim.compile_notice`)."""
        self._notice.what, self._notice.estimate_s = name, self._compile_estimate(name)

    def warm_up(self, name: str | None = None) -> float:
        """Compile (or load from cache) the engine's kernels by stepping a copy of the
        state; the simulation itself does not advance. Returns the seconds it took.

        A compile says so once on standard error, calling this simulation ``name`` (a preset's
        name, whose measured compile time the line quotes) or else by its model
        (:mod:`flocksim.compile_notice`)."""
        if name is not None:
            self.name_compiles(name)
        started = time.perf_counter()
        with self._notice:
            self.engine.step(self.state.copy(), self.dt)
        return time.perf_counter() - started

    def _compile_estimate(self, name: str | None) -> Callable[[], float | None] | None:
        """For the notice: a function giving the seconds a cold compile of this simulation's kernels
        takes, as measured for preset ``name`` or these parameters (None: unknown), called only when
        one compiles. It holds the parameters and the model, not this simulation: a bound method
        here made a reference cycle (simulation -> notice -> method -> simulation), so a simulation
        that was dropped stayed in memory until Python's cyclic collector ran, which an idle viewer
        server may not do for a long time (docs/reliability.md, "Soak: mixed use")."""
        if self.engine.name != "cpu":  # measured on the CPU engine only
            return None
        return functools.partial(compile_estimate, self._params, name, self.model)

    @property
    def caught(self) -> int:
        """Birds caught by predators so far (0 without predators)."""
        return sum(int(getattr(c, "caught", 0)) for c in self.components)

    @property
    def remaining(self) -> int:
        """Birds still alive."""
        return self.state.n_alive

    def perturb_turn(
        self, center_id: int = 0, radius: float | None = None, count: int | None = None, angle_deg: float = 120.0
    ) -> np.ndarray:
        """Turn the birds around bird ``center_id`` by ``angle_deg`` now (docs/design.md §5.4): positive left,
        negative right, relative to their headings (3D: about the vertical +y axis, seen from above).
        ``radius``: the living birds within it; ``count``: the nearest ``count`` (the bird included);
        neither: the bird and its 7 nearest. Returns the rows turned. See :mod:`flocksim.perturbation`."""
        if radius is None and count is None:
            count = 8
        with self._notice:
            return perturb_turn(self.state, self.model.space, center_id, radius, count, angle_deg)

    def set_target(self, group: int | None, point: Any) -> None:
        """Move the seek target of group ``group`` (agents of that kind), or with None the shared
        target, to ``point`` [units]; takes effect at the next step. Needs
        rules.seek.weight > 0. See :class:`flocksim.scenarios.targets.Targets`."""
        self._targets("set_target").set_target(group, point)

    def set_agent_targets(self, ids: Any, points: Any) -> None:
        """Give agents (stable ids) their own seek targets (k, dim) [units]; None clears them."""
        self._targets("set_agent_targets").set_agent_targets(ids, points)

    def set_pointer(self, point: Any, mode: str) -> None:
        """Pointer attract / repel (docs/design.md §3.10): ``mode`` "attract" or "repel" at ``point``
        (world.dim numbers [units]) from the next step on, until ``mode`` "off" (point ignored).
        Each alive agent within ``params.pointer.radius`` (0 = all) turns toward / away from the
        point by at most ``params.pointer.turn_rate_deg`` [deg/s] x dt per step, keeping its
        speed. See :mod:`flocksim.components.pointer`. Raises ValueError naming a bad value."""
        mode, _ = check_pointer(point, mode, self.state.dim)  # check before adding the component
        component = next((c for c in self.components if c.name == "pointer"), None)
        if component is None:
            if mode == "off":
                return
            component = PointerSteering(self)
            self.components.append(component)
        component.set(point, mode)

    def set_view(self, position: Any, direction: Any = None, fov_deg: float | None = None) -> None:
        """Move the level of detail's focus (``params.detail``, docs/parameters.md "Level of detail") to
        ``position`` (world.dim numbers [units], e.g. the camera's position) from the next step on:
        agents within ``detail.near`` of it (and, with ``direction``, inside the view cone around
        ``direction`` of full angle ``fov_deg`` [deg]; None keeps the current angle) refresh their
        steering every step, the others every ``detail.far_every`` steps. ``direction`` None: no cone.
        Needs detail.enabled; raises ValueError naming a bad value."""
        component = next((c for c in self.components if c.name == "detail"), None)
        if component is None:
            raise ValueError("set_view: no level of detail (detail.enabled is false); set detail.enabled = true")
        component.set_view(position, direction, fov_deg)

    def _targets(self, what: str) -> Any:
        for component in self.components:
            if component.name == "targets":
                return component
        raise ValueError(f"{what}: no agent seeks (rules.seek.weight is 0); set rules.seek.weight > 0")

    def check_neighbor_budget(self) -> None:
        """BudgetError when the neighbour list of the current state would hold more pairs than
        ``max_pairs`` (counted without building it)."""
        self.engine.check_budget(self.state)

    def neighbors(self) -> NeighborList:
        """Neighbour list of the current state (what the next step will use), computed afresh
        so that edits to ``state`` are seen."""
        with self._notice:
            return self.engine.neighbors(self.state)

    def metrics(self) -> dict[str, float]:
        """Polarization, milling, mean neighbours, nearest-neighbour distance, speed, alive count."""
        s = self.state
        with self._notice:
            row = flock_summary(s.position, s.velocity, s.alive, self.neighbors().counts, self.model.space)
        return {"step": float(self.steps), "time": self.time, **row}

    def checkpoint(self) -> dict[str, Any]:
        """Everything needed to continue this run bitwise: a deep copy of the state (every
        field of :class:`FlockState`), the step count, the RNG's bit-generator state, the
        parameters (as JSON-ready dict), ``{name: state_dict()}`` of every component (event
        queues, counters...) and, where the engine keeps state between steps, its
        ``state_dict()``. :mod:`flocksim.io` stores it losslessly; :meth:`restore` reads it."""
        data: dict[str, Any] = {
            "format": "flocksim-checkpoint",
            "version": 1,
            "steps": self.steps,
            "seed": self.seed,
            "engine": self.engine.name,
            "params": to_dict(self.params),
            "rng": copy.deepcopy(self.rng.bit_generator.state),
            "state": {f.name: copy.deepcopy(getattr(self.state, f.name)) for f in fields(self.state)},
            "components": {c.name: copy.deepcopy(c.state_dict()) for c in self.components},
        }
        if hasattr(self.engine, "state_dict"):
            data["engine_state"] = copy.deepcopy(self.engine.state_dict())
        return data

    def restore(self, checkpoint: Mapping[str, Any]) -> None:
        """Continue from :meth:`checkpoint` output: afterwards this simulation steps exactly as
        the one that wrote it would have. The parameters and the component names must match
        this simulation's (build it from the checkpoint's parameters); raises ValueError
        with one line naming what differs."""
        if checkpoint.get("format") != "flocksim-checkpoint":
            raise ValueError("checkpoint: not a flocksim checkpoint (no format 'flocksim-checkpoint')")
        ours = json.dumps(to_dict(self.params), sort_keys=True)
        if json.dumps(checkpoint["params"], sort_keys=True) != ours:
            raise ValueError("checkpoint: its parameters differ from this simulation's; build it from them")
        stored = list(checkpoint["components"])
        self._match_pointer("pointer" in stored)
        names = [c.name for c in self.components]
        if sorted(names) != sorted(stored):
            raise ValueError(f"checkpoint: components {stored} do not match this simulation's {names}")
        state = checkpoint["state"]
        expected = [f.name for f in fields(FlockState)]
        if sorted(state) != sorted(expected):
            raise ValueError(f"checkpoint: state fields {sorted(state)}; expected {sorted(expected)}")
        self.state = FlockState(**{name: copy.deepcopy(state[name]) for name in expected})
        self.state.check()
        self._version += 1
        self.rng.bit_generator.state = copy.deepcopy(checkpoint["rng"])
        self.steps = int(checkpoint["steps"])
        for component in self.components:
            component.load_state_dict(copy.deepcopy(checkpoint["components"][component.name]))
        if "engine_state" in checkpoint and hasattr(self.engine, "load_state_dict"):
            self.engine.load_state_dict(copy.deepcopy(checkpoint["engine_state"]))

    def _match_pointer(self, wanted: bool) -> None:
        """Add or drop the pointer component (added on first use by :meth:`set_pointer`) so that
        this simulation has one exactly when a checkpoint being restored has one."""
        have = any(c.name == "pointer" for c in self.components)
        if wanted and not have:
            self.components.append(PointerSteering(self))
        elif have and not wanted:
            self.components = [c for c in self.components if c.name != "pointer"]

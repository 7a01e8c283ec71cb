"""Simulation: owns the state, the model, the engine and the clock."""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Mapping
from dataclasses import fields
from typing import Any, Protocol

import numpy as np

from flocksim.components import default_components
from flocksim.config import AnyParams, to_dict, validate
from flocksim.engines import make_engine
from flocksim.metrics import flock_summary
from flocksim.models import make_model
from flocksim.neighbors import NeighborList
from flocksim.perturbation import perturb_turn
from flocksim.state import FlockState


class Component(Protocol):
    """Something that lives beside the flock and acts between steps (a predator, a
    turning wave, a spawner, a recorder).

    ``before_step`` runs before the engine's step (it may set inputs the kernels
    read); ``after_step`` runs after it and applies what was queued during the
    step (removals, spawns), so the step in flight is never corrupted. Its whole
    mutable state round-trips through ``state_dict`` / ``load_state_dict`` (plain
    numbers, strings and numpy arrays), which is what checkpoints store.
    """

    name: str

    def before_step(self, sim: Simulation) -> None: ...

    def after_step(self, sim: Simulation) -> None: ...

    def state_dict(self) -> dict[str, Any]: ...

    def load_state_dict(self, data: dict[str, Any]) -> None: ...


class Simulation:
    """A running flock.

    ``Simulation(params, seed=None, engine="cpu", threads=None)``: ``params``
    is a parameter object (see :func:`flocksim.load_preset`) or a mapping;
    ``seed`` overrides ``params.seed``. The same parameters, seed and engine
    give bitwise-identical trajectories on one machine, whatever the thread
    count. ``state`` arrays are in stable-id order.

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
    ):
        if not hasattr(params, "model_dump"):
            params = validate(dict(params))
        if seed is not None:
            params = params.model_copy(update={"seed": int(seed)})
            params = validate(params.model_dump(mode="json"))
        self.params: AnyParams = params
        self.seed = params.seed
        self.model = make_model(params)
        self.engine = make_engine(engine, self.model, threads=threads)
        self.rng = np.random.default_rng(self.seed)
        self.state: FlockState = self.model.initial_state(self.rng)
        self.steps = 0
        # the predator and spontaneous turns of params.predator / params.turning (SPEC 5.2, 5.3)
        self.components: list[Component] = default_components(self)
        self.recorder = recorder
        if recorder is not None:
            recorder.start(self)

    @property
    def dt(self) -> float:
        """Time step [s]."""
        return self.params.world.dt

    @property
    def time(self) -> float:
        """Simulated time [s] (steps x dt)."""
        return self.steps * self.dt

    def step(self, n: int = 1) -> None:
        """Advance ``n`` steps."""
        for _ in range(int(n)):
            if self.recorder is not None:
                self.recorder.before_step(self)
            for component in self.components:
                component.before_step(self)
            self.engine.step(self.state, self.dt)
            self.steps += 1
            for component in self.components:
                component.after_step(self)
            if self.recorder is not None:
                self.recorder.after_step(self)

    def warm_up(self) -> float:
        """Compile (or load from cache) the engine's kernels by stepping a copy of the
        state; the simulation itself does not advance. Returns the seconds it took."""
        started = time.perf_counter()
        self.engine.step(self.state.copy(), self.dt)
        return time.perf_counter() - started

    @property
    def caught(self) -> int:
        """Birds caught by predators so far (0 without predators; SPEC 5.2)."""
        return sum(int(getattr(c, "caught", 0)) for c in self.components)

    @property
    def remaining(self) -> int:
        """Birds still alive (SPEC 5.2)."""
        return self.state.n_alive

    def perturb_turn(
        self, center_id: int = 0, radius: float | None = None, count: int | None = None, angle_deg: float = 120.0
    ) -> np.ndarray:
        """Turn the birds around bird ``center_id`` by ``angle_deg`` now (SPEC 5.4): positive left,
        negative right, relative to their headings (3D: about the vertical +y axis, seen from above).
        ``radius``: the living birds within it; ``count``: the nearest ``count`` (the bird included);
        neither: the bird and its 7 nearest. Returns the rows turned. See :mod:`flocksim.perturbation`."""
        if radius is None and count is None:
            count = 8
        return perturb_turn(self.state, self.model.space, center_id, radius, count, angle_deg)

    def neighbors(self) -> NeighborList:
        """Neighbour list of the current state (what the next step will use), computed afresh
        so that edits to ``state`` are seen."""
        return self.engine.neighbors(self.state)

    def metrics(self) -> dict[str, float]:
        """Polarization, milling, mean neighbours, nearest-neighbour distance, speed, alive count."""
        s = self.state
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
        names = [c.name for c in self.components]
        stored = list(checkpoint["components"])
        if sorted(names) != sorted(stored):
            raise ValueError(f"checkpoint: components {stored} do not match this simulation's {names}")
        state = checkpoint["state"]
        expected = [f.name for f in fields(FlockState)]
        if sorted(state) != sorted(expected):
            raise ValueError(f"checkpoint: state fields {sorted(state)}; expected {sorted(expected)}")
        self.state = FlockState(**{name: copy.deepcopy(state[name]) for name in expected})
        self.state.check()
        self.rng.bit_generator.state = copy.deepcopy(checkpoint["rng"])
        self.steps = int(checkpoint["steps"])
        for component in self.components:
            component.load_state_dict(copy.deepcopy(checkpoint["components"][component.name]))
        if "engine_state" in checkpoint and hasattr(self.engine, "load_state_dict"):
            self.engine.load_state_dict(copy.deepcopy(checkpoint["engine_state"]))

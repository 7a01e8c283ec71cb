"""Simulation: owns the state, the model, the engine and the clock."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any, Protocol

import numpy as np

from flocksim.config import AnyParams, validate
from flocksim.engines import make_engine
from flocksim.metrics import flock_summary
from flocksim.models import make_model
from flocksim.neighbors import NeighborList
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
    """

    def __init__(
        self,
        params: AnyParams | Mapping[str, Any],
        seed: int | None = None,
        engine: str = "cpu",
        threads: int | None = None,
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
        self.components: list[Component] = []

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
            for component in self.components:
                component.before_step(self)
            self.engine.step(self.state, self.dt)
            self.steps += 1
            for component in self.components:
                component.after_step(self)

    def warm_up(self) -> float:
        """Compile (or load from cache) the engine's kernels by stepping a copy of the
        state; the simulation itself does not advance. Returns the seconds it took."""
        started = time.perf_counter()
        self.engine.step(self.state.copy(), self.dt)
        return time.perf_counter() - started

    def neighbors(self) -> NeighborList:
        """Neighbour list of the current state (what the next step will use), computed afresh
        so that edits to ``state`` are seen."""
        return self.engine.neighbors(self.state)

    def metrics(self) -> dict[str, float]:
        """Polarization, milling, mean neighbours, nearest-neighbour distance, speed, alive count."""
        s = self.state
        row = flock_summary(s.position, s.velocity, s.alive, self.neighbors().counts, self.model.space)
        return {"step": float(self.steps), "time": self.time, **row}

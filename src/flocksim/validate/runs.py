"""Small helpers to run a model inside a check: one thread (the runs are small, and bitwise
the same at any thread count), parameters changed in place between stages of one run."""

from __future__ import annotations

from typing import Any

import numpy as np

from flocksim.config import validate
from flocksim.metrics import milling, polarization
from flocksim.simulation import Simulation


def simulation(params: dict[str, Any], seed: int) -> Simulation:
    return Simulation(validate(params), seed=seed, threads=1)


def change_params(sim: Simulation, section: str, **values: float) -> None:
    """Set parameters of a running simulation (state and random stream continue)."""
    data = sim.params.model_dump(mode="json")
    data[section].update(values)
    sim._replace_params(validate(data))


def averaged_order(sim: Simulation, steps: int, every: int) -> tuple[float, float]:
    """Mean polarization and milling of the alive agents over ``steps`` steps, sampled every ``every``."""
    p, m = [], []
    for _ in range(max(1, steps // every)):
        sim.step(every)
        s = sim.state
        p.append(polarization(s.velocity[s.alive]))
        m.append(milling(s.position[s.alive], s.velocity[s.alive]))
    return float(np.mean(p)), float(np.mean(m))

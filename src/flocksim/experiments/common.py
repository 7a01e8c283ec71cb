"""What every experiment family uses: the condition, run and experiment records and the helpers that
build, advance and sample a run.

A condition is a dimension, a label and parameter overrides of a preset (default: the reference
simulator's starlings preset of the dimension, :data:`PRESETS`); a run is a condition and a seed;
``quick`` runs use few birds and a few simulated seconds (for tests and smoke checks).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np

from flocksim.config import apply_overrides
from flocksim.scenarios import load_preset
from flocksim.simulation import Simulation

PRESETS = {2: "starlings-2d-reference", 3: "starlings-3d-reference"}
"""The reference simulator's scenes: the experiments that repeat its measurements use them."""


@dataclass(frozen=True)
class Condition:
    """One setting of an experiment: a dimension, a label, parameter overrides and the preset they
    apply to (default: the starlings preset of the dimension)."""

    dim: int
    label: str
    overrides: tuple[str, ...] = ()
    preset: str = ""
    measure: Callable[[RunSpec], dict[str, float]] | None = None
    """Measures this condition instead of the experiment's ``measure``."""


@dataclass(frozen=True)
class RunSpec:
    experiment: str
    condition: Condition
    seed: int
    quick: bool
    overrides: tuple[str, ...] = ()
    """Applied after the condition's own overrides (``flocksim experiment --set``)."""


@dataclass(frozen=True)
class Experiment:
    name: str
    about: str
    conditions: tuple[Condition, ...]
    measure: Callable[[RunSpec], dict[str, float]]
    reported: dict[tuple[int, str], str] = field(default_factory=dict)
    """What the reference simulator reports for a (dim, condition), as text for the table."""
    field_values: dict[str, str] = field(default_factory=dict)
    """What the field studies measured, per metric (an experiment with these prints one row per
    metric and one column per condition)."""


# ------------------------------------------------------------------ helpers


def make_sim(spec: RunSpec, n: int, extra: tuple[str, ...] = ()) -> Simulation:
    """The preset of the condition's dimension with the condition's overrides and ``n`` birds
    (fewer in quick mode). Results do not depend on the thread count."""
    n_birds = min(n, 80) if spec.quick else n
    overrides = [f"agents.n={n_birds}", *spec.condition.overrides, *spec.overrides, *extra]
    preset = spec.condition.preset or PRESETS[spec.condition.dim]
    params = apply_overrides(load_preset(preset), overrides)
    return Simulation(params, seed=spec.seed)


def twin(sim: Simulation) -> Simulation:
    """A second simulation in exactly the state of ``sim`` (components, clock and generator included)."""
    other = Simulation(sim.params, seed=sim.seed)
    other.restore(sim.checkpoint())
    return other


def seconds(spec: RunSpec, full: float, quick: float = 3.0) -> float:
    return quick if spec.quick else full


def steps_of(sim: Simulation, s: float) -> int:
    return max(1, round(s / sim.dt))


def alive_pv(sim: Simulation) -> tuple[np.ndarray, np.ndarray]:
    s = sim.state
    return s.position[s.alive], s.velocity[s.alive]


def sample(sim: Simulation, duration: float, every: float) -> Iterator[None]:
    """Advance ``duration`` seconds, yielding after every ``every`` seconds."""
    chunk = steps_of(sim, every)
    for _ in range(max(1, steps_of(sim, duration) // chunk)):
        sim.step(chunk)
        yield


def nanmean(values: list[float]) -> float:
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    return float(v.mean()) if len(v) else math.nan


def heading_angle(a: np.ndarray, b: np.ndarray) -> float:
    return math.degrees(math.acos(float(np.clip(a @ b, -1.0, 1.0))))


def _both(labels: dict[str, tuple[str, ...]]) -> tuple[Condition, ...]:
    return tuple(Condition(dim, label, overrides) for dim in (2, 3) for label, overrides in labels.items())


SPIN = "rules.alignment.mode=inertial-spin"
BASIC = "rules.alignment.mode=basic"
TOPO = "neighbors.mode=topological"
METRIC = "neighbors.mode=metric"

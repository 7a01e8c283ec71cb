"""The predator family: catch rate under the panic multipliers (predator-multipliers)."""

from __future__ import annotations

from flocksim.components import Predators
from flocksim.experiments.common import Experiment, RunSpec, _both, make_sim, seconds, steps_of
from flocksim.metrics.starlings import catch_rate

PANIC = {
    "none (1, 1, 1)": ("predator.panic.separation=1.0", "predator.panic.alignment=1.0", "predator.panic.cohesion=1.0"),
    "spreading (1.5, 1.5, 0.5)": (),
    "clustering (0.6, 1.5, 2.0)": (
        "predator.panic.separation=0.6",
        "predator.panic.alignment=1.5",
        "predator.panic.cohesion=2.0",
    ),
}


def measure_predator(spec: RunSpec) -> dict[str, float]:
    sim = make_sim(spec, 500, ("predator.enabled=true",))
    for component in sim.components:  # anywhere in the region, as when docs/results/ were made
        if isinstance(component, Predators):
            component.start_anywhere(sim)
    duration = seconds(spec, 240.0, 20.0)
    sim.step(steps_of(sim, duration))
    return {"catch_per_min": catch_rate(sim.caught, sim.time), "caught": float(sim.caught)}


EXPERIMENTS: tuple[Experiment, ...] = (
    Experiment(
        "predator-multipliers",
        "Catch rate of one predator per minute, 500 birds, 240 s, under three panic multiplier settings "
        "(separation, alignment, cohesion); presets' other defaults (inertial spin, k = 7, spontaneous turns); "
        "the predator starts at a random point of the region (Predators.start_anywhere).",
        _both({label: ("predator.enabled=true", *o) for label, o in PANIC.items()}),
        measure_predator,
        {
            (2, "none (1, 1, 1)"): "6.6/min",
            (2, "spreading (1.5, 1.5, 0.5)"): "6.3/min",
            (2, "clustering (0.6, 1.5, 2.0)"): "11.8/min",
            (3, "none (1, 1, 1)"): "7.3/min",
            (3, "spreading (1.5, 1.5, 0.5)"): "7.6/min",
            (3, "clustering (0.6, 1.5, 2.0)"): "21.0/min",
        },
    ),
)

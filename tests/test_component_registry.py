"""The component registry: the core registers its own components, the game and the scenarios
register theirs on ``import flocksim``, and a simulation builds the wanted ones in their order."""

from __future__ import annotations

from typing import Any

import flocksim
from flocksim.components.registry import register_component, registered, unregister_component


def test_each_package_registers_its_components_in_acting_order():
    names = [(r.name, r.build.__module__) for r in registered()]
    assert names == [
        ("wander", "flocksim.components.wander"),  # first: the flight urges' numbers before any other draw
        ("predator", "flocksim.components.predator"),
        ("escape", "flocksim.components.escape"),  # after the predators have moved
        ("turning", "flocksim.components.turning"),
        ("game", "flocksim.game.flappy"),
        ("targets", "flocksim.scenarios"),  # a builder that imports the targets only when a run seeks
        ("detail", "flocksim.components.detail"),
    ]


class Marker:
    """A stand-in component that notes when it acts."""

    name = "marker"

    def __init__(self, sim: Any):
        self.steps: list[int] = []

    def before_step(self, sim: Any) -> None:
        self.steps.append(sim.steps)

    def after_step(self, sim: Any) -> None:
        pass

    def state_dict(self) -> dict[str, Any]:
        return {}

    def load_state_dict(self, data: dict[str, Any]) -> None:
        pass


def test_a_registered_component_is_built_when_wanted_and_acts_in_its_place():
    params = flocksim.apply_overrides(
        flocksim.load_preset("boids-2d"), ["agents.n=20", "predator.enabled=true", "turning.enabled=false"]
    )
    register_component("marker", order=15, wanted=lambda p: p.predator.enabled, build=Marker)
    try:
        sim = flocksim.Simulation(params, seed=1)
        assert [c.name for c in sim.components] == ["predator", "marker"]
        sim.step(2)
        assert sim.components[1].steps == [0, 1]
        off = flocksim.apply_overrides(params, ["predator.enabled=false"])
        assert [c.name for c in flocksim.Simulation(off, seed=1).components] == []
    finally:
        unregister_component("marker")
    assert "marker" not in [r.name for r in registered()]

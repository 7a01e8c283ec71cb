"""The noise component of the stochastic research models (vicsek, couzin): before every step
it draws the step's random numbers from the run's one Generator into the model's
:class:`flocksim.models.noisy.NoiseBuffer`, outside any parallel loop, so the run does not
depend on the thread count. Its own state is empty: the Generator's state is the run's."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from flocksim.host import Host


class PreDrawnNoise:
    name = "noise"

    def __init__(self, sim: Host):
        if not hasattr(sim.model, "noise"):
            raise ValueError(f"noise: model {sim.model.name!r} draws no noise")

    def before_step(self, sim: Host) -> None:
        sim.model.noise.draw(sim.rng, sim.state.n)

    def after_step(self, sim: Host) -> None:
        return None

    def state_dict(self) -> dict[str, Any]:
        return {}

    def load_state_dict(self, data: dict[str, Any]) -> None:
        return None

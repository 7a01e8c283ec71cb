"""The flight urges' random numbers: before every step of a banked flock whose birds have their own
urges (``rules.flight.speed_wander`` or ``steer_wander`` > 0), the step's standard normal numbers,
two per bird, are drawn from the run's one Generator into :attr:`ReynoldsModel.wander`, outside any
parallel loop, so the run does not depend on the thread count. The urges themselves live in the
state (``spin[:, 1:3]``); this component's own state is empty: the Generator's state is the run's."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from flocksim.host import Host


def wants_wander(params: Any) -> bool:
    """Whether a reynolds parameter set's birds have flight urges (banked flight with either > 0)."""
    flight = params.rules.flight
    return flight.mode == "banked" and (flight.speed_wander > 0.0 or flight.steer_wander > 0.0)


class FlightWander:
    name = "wander"

    def __init__(self, sim: Host):
        if not hasattr(sim.model, "wander"):
            raise ValueError(f"wander: model {sim.model.name!r} has no flight urges")

    def before_step(self, sim: Host) -> None:
        sim.model.wander = sim.rng.standard_normal((sim.state.n, 2))

    def after_step(self, sim: Host) -> None:
        return None

    def state_dict(self) -> dict[str, Any]:
        return {}

    def load_state_dict(self, data: dict[str, Any]) -> None:
        return None

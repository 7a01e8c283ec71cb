"""What every model tells the engine."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol

import numpy as np

from flocksim.space import Space, make_space
from flocksim.state import FlockState


@dataclass(frozen=True)
class NeighborQuery:
    """The neighbourhood a model needs: a radius (metric) or k (topological). ``radius_key``
    names the parameters that set the radius (for error messages)."""

    mode: Literal["metric", "topological"]
    radius: float
    k: int
    method: Literal["auto", "grid", "brute"]
    radius_key: str = "the neighbour radius"


class Model(Protocol):
    name: str
    params: Any
    space: Space

    def neighbor_query(self) -> NeighborQuery: ...

    def initial_state(self, rng: np.random.Generator) -> FlockState: ...


def space_of(params: Any) -> Space:
    return make_space(params.world.bounds.kind, params.world.bounds.size)

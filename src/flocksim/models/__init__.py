"""Models: named update rules, each with its own kernels and parameter block.

A model supplies its per-agent kernel functions and a coefficient tuple built
from its parameters; engines run them. Chosen by the ``model`` field of the
parameters through :data:`MODELS` (an explicit registry).
"""

from __future__ import annotations

from flocksim.models.abm_flocking import AbmFlockingModel
from flocksim.models.base import Model, NeighborQuery
from flocksim.models.couzin import CouzinModel
from flocksim.models.reynolds import ReynoldsModel
from flocksim.models.vicsek import VicsekModel

MODELS: dict[str, type[Model]] = {
    "reynolds": ReynoldsModel,
    "abm-flocking": AbmFlockingModel,
    "vicsek": VicsekModel,
    "couzin": CouzinModel,
}


def make_model(params) -> Model:
    return MODELS[params.model](params)


__all__ = ["MODELS", "Model", "NeighborQuery", "make_model"]

"""The one parameter schema (pydantic v2) for every flocksim model.

Units: lengths in world units (metres for crowds, pixels for the 2D starling
screen; any consistent unit works), time in seconds, speeds in units/s,
steering forces as accelerations in units/s^2 (rules return accelerations;
mass only matters for position constraints). Angles in degrees in files,
radians inside kernels.

A parameter set is one of the models below, selected by its ``model`` field
(a discriminated union): each model validates only its own parameters and
rejects unknown keys. TOML files and dotted ``--set`` overrides go through
:mod:`flocksim.config`.

The schema is split by model: :mod:`flocksim.params.fields` (strict blocks, fields with units),
:mod:`flocksim.params.common` (what every model shares), :mod:`flocksim.params.reynolds`,
:mod:`flocksim.params.abm` and :mod:`flocksim.params.research` (vicsek, couzin); every name is
importable from here.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, TypeAdapter

from flocksim.params.abm import AbmAgents, AbmFlocking, AbmFlockingParams
from flocksim.params.common import (
    AgentKind,
    Agents,
    Bounds,
    InitialConditions,
    ModelBase,
    Neighbors,
    PerAgent,
    Pointer,
    World,
)
from flocksim.params.detail import Detail
from flocksim.params.fields import MIN_DT, BoundsKind, Strict, Vector, _number, choice, quantity
from flocksim.params.flight import Cruise, Flight, Roost
from flocksim.params.obstacles import Box, Circle, Obstacles, Segment
from flocksim.params.predator import PanicMultipliers, Predator, SpontaneousTurning
from flocksim.params.research import (
    SIZE_DOC,
    TWO_PI,
    Couzin,
    CouzinAgents,
    CouzinBounds,
    CouzinParams,
    CouzinWorld,
    ResearchAgents,
    SearchMethod,
    Vicsek,
    VicsekBounds,
    VicsekParams,
    VicsekWorld,
)
from flocksim.params.reynolds import (
    FRAME,
    Alignment,
    Avoid,
    BoundsRule,
    Cohesion,
    Game,
    Navigation,
    Overlap,
    ReynoldsParams,
    Rules,
    Seek,
    Separation,
    Slots,
)

__all__ = [
    "AbmAgents",
    "AbmFlocking",
    "AbmFlockingParams",
    "AgentKind",
    "Agents",
    "Alignment",
    "Avoid",
    "Bounds",
    "BoundsKind",
    "BoundsRule",
    "Box",
    "Circle",
    "Cohesion",
    "Couzin",
    "CouzinAgents",
    "CouzinBounds",
    "CouzinParams",
    "CouzinWorld",
    "Cruise",
    "Detail",
    "FRAME",
    "Flight",
    "Game",
    "InitialConditions",
    "MIN_DT",
    "MODEL_NAMES",
    "ModelBase",
    "Navigation",
    "Neighbors",
    "Obstacles",
    "Overlap",
    "PanicMultipliers",
    "Params",
    "PerAgent",
    "Pointer",
    "Predator",
    "ResearchAgents",
    "ReynoldsParams",
    "Roost",
    "Rules",
    "SIZE_DOC",
    "SearchMethod",
    "Seek",
    "Segment",
    "Separation",
    "Slots",
    "SpontaneousTurning",
    "Strict",
    "TWO_PI",
    "Vector",
    "Vicsek",
    "VicsekBounds",
    "VicsekParams",
    "VicsekWorld",
    "World",
    "_number",
    "choice",
    "params_json_schema",
    "parse_params",
    "quantity",
]


Params = Annotated[ReynoldsParams | AbmFlockingParams | VicsekParams | CouzinParams, Field(discriminator="model")]
"""Any model's parameters; validate a mapping with :func:`parse_params`."""

MODEL_NAMES = ("reynolds", "abm-flocking", "vicsek", "couzin")
_ADAPTER: TypeAdapter[Params] = TypeAdapter(Params)


def parse_params(data: dict[str, Any]) -> ReynoldsParams | AbmFlockingParams | VicsekParams | CouzinParams:
    """Validate a mapping (from TOML, JSON or a dict) into a model's parameters.

    A missing ``model`` key means ``reynolds``. Raises ``pydantic.ValidationError``.
    """
    data = dict(data)
    data.setdefault("model", "reynolds")
    return _ADAPTER.validate_python(data)


def params_json_schema() -> dict[str, Any]:
    """JSON Schema of every model's parameters (the viewer builds its controls from it)."""
    schema = _ADAPTER.json_schema()
    schema["title"] = "flocksim parameters"
    schema["$comment"] = "Each field's description gives its unit and allowed range; 'unit' repeats the unit."
    return schema

"""Building blocks of the parameter schema: strict pydantic blocks and fields that carry a unit and a
range."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


def _number(x: float) -> str:
    return str(x) if isinstance(x, int) else f"{x:g}"


def quantity(
    default: Any,
    unit: str,
    doc: str,
    ge: float | None = None,
    le: float | None = None,
    gt: float | None = None,
    **extra: Any,
) -> Any:
    """A numeric field whose description states its unit and allowed range."""
    low = f">= {_number(ge)}" if ge is not None else (f"> {_number(gt)}" if gt is not None else "")
    high = f"<= {_number(le)}" if le is not None else ""
    allowed = " and ".join(p for p in (low, high) if p) or "any finite value"
    unit = unit or "dimensionless"
    return Field(
        default,
        ge=ge,
        le=le,
        gt=gt,
        description=f"{doc} [{unit}]; allowed: {allowed}.",
        json_schema_extra={"unit": unit, **extra},
    )


def choice(default: Any, doc: str) -> Any:
    """A field with a fixed set of allowed values (the type lists them)."""
    return Field(default, description=doc)


class Strict(BaseModel):
    """Base for every parameter block: unknown keys, NaN/inf and values of the wrong type are
    rejected (strict mode: "300" is not a number, 1 is not true; an integer is a valid float)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, validate_assignment=True, strict=True)


MIN_DT = 1e-6
"""Shortest time step [s]: velocities are distances per step / dt (abm-flocking), so a shorter
one overflows them to infinity."""

Vector = list[float]
BoundsKind = Literal["box", "ellipsoid", "periodic", "open"]

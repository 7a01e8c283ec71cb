"""Building blocks of the parameter schema: strict pydantic blocks and fields that carry a unit and a
range."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

from flocksim.params.errors import ConfigError, describe_validation_error


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


READ_ONLY = (
    "a running Simulation's parameters are read-only (its state, walls and kernels were built from them); "
    "allowed: a new flocksim.Simulation with the changed parameters, e.g. "
    "Simulation(flocksim.apply_overrides(sim.params, ['KEY=VALUE']))"
)


class Strict(BaseModel):
    """Base for every parameter block: unknown keys, NaN/inf and values of the wrong type are
    rejected (strict mode: "300" is not a number, 1 is not true; an integer is a valid float).

    An assignment (``params.rules.alignment.weight = -1``) is validated too, and an invalid one
    raises :class:`~flocksim.params.errors.ConfigError` with the one line ``--set`` gives (the
    dotted key, the allowed values); the field keeps its value. The blocks of a running
    :class:`flocksim.Simulation`'s parameters are locked: an assignment there raises the same
    error for an invalid value and a read-only one for a valid one (the simulation could not
    follow it). A deep ``model_copy`` is the caller's own, unlocked."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, validate_assignment=True, strict=True)

    _where: str = PrivateAttr("")  # this block's dotted key in its parameters, with a final "." (root: "")
    _locked: bool = PrivateAttr(False)  # part of a running Simulation's parameters

    def __setattr__(self, name: str, value: Any) -> None:
        if name.startswith("_"):
            super().__setattr__(name, value)
            return
        fields = type(self).model_fields
        if name not in fields:
            raise ConfigError(f"{self._where}{name}: unknown key; allowed keys here: {', '.join(fields)}")
        target = self.model_copy() if self._locked else self  # a locked block is only checked
        try:
            BaseModel.__setattr__(target, name, value)
        except ValidationError as exc:
            raise ConfigError(describe_validation_error(exc, type(self), where=self._where)) from None
        if self._locked:
            raise ConfigError(f"{self._where}{name}: {READ_ONLY}")
        mark_keys(self, self._where)  # a block assigned whole learns its key

    def __eq__(self, other: object) -> bool:
        """Equal parameters: the same block type and the same values; where a block sits and
        whether it is locked (its private bookkeeping) do not count."""
        if not isinstance(other, BaseModel):
            return NotImplemented
        return type(self) is type(other) and self.__dict__ == other.__dict__

    __hash__ = None  # type: ignore[assignment]  # mutable, as pydantic's models

    def model_copy(self, *, update: Any = None, deep: bool = False) -> Any:
        """A copy (pydantic's), unlocked: the whole tree when ``deep``; a shallow copy shares
        its blocks with the original, so they stay as they were."""
        copy = super().model_copy(update=update, deep=deep)
        for block, _where in blocks(copy) if deep else [(copy, "")]:
            block._locked = False
        return copy


def blocks(root: Strict, where: str = "") -> list[tuple[Strict, str]]:
    """Every parameter block under ``root`` (itself included) with its dotted key prefix ("" for the
    root, "rules.alignment." ...; a block in a list: "obstacles.circles.0.")."""
    found = [(root, where)]
    for name in type(root).model_fields:
        value = getattr(root, name, None)
        items = enumerate(value) if isinstance(value, list) else [(None, value)]
        for index, item in items:
            if isinstance(item, Strict):
                key = f"{where}{name}." if index is None else f"{where}{name}.{index}."
                found += blocks(item, key)
    return found


def mark_keys(root: Strict, where: str = "") -> None:
    """Tell every block under ``root`` its dotted key, for the messages of assignments."""
    for block, key in blocks(root, where):
        block._where = key


def lock(root: Strict) -> None:
    """Lock every block under ``root`` (a running Simulation's parameters: see :class:`Strict`)."""
    for block, _key in blocks(root):
        block._locked = True


MIN_DT = 1e-6
"""Shortest time step [s]: velocities are distances per step / dt (abm-flocking), so a shorter
one overflows them to infinity."""

Vector = list[float]
BoundsKind = Literal["box", "ellipsoid", "periodic", "open"]

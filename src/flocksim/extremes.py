"""Extreme but accepted parameter values: the edges of every numeric field's allowed range.

Every value the schema accepts must run: building a :class:`~flocksim.Simulation` and stepping
it either works or the schema refused the value with one clear line. The hostile-input tests
and ``benchmarks/soak_reliability.py`` draw sets of these values and check exactly that.
"""

from __future__ import annotations

import math
import random
import typing
from dataclasses import dataclass
from typing import Any

import annotated_types
from pydantic import BaseModel

SKIPPED = ("navigation.",)
"""Fields whose extremes are memory budgets (navigation grids), checked by their own tests."""


@dataclass(frozen=True)
class NumericField:
    """A numeric leaf of the schema: dotted key, int or float, and its allowed range."""

    key: str
    kind: type
    low: float | None
    low_open: bool
    high: float | None
    unit: str = ""

    def low_extremes(self) -> list[int | float]:
        """The lowest accepted values: the bound (or, for an open bound at 0, tiny positives)
        and values just above it."""
        if self.low is None:
            return []
        if self.kind is int:
            values: list[int | float] = [int(self.low) + (1 if self.low_open else 0)]
        elif self.low == 0.0:
            values = [0.0, 1e-300, math.ulp(0.0) * 2**60, 1e-12]
        else:
            values = [self.low, self.low + abs(self.low) * 1e-12]
        return list(dict.fromkeys(v for v in values if self.accepts(v)))

    def high_extremes(self) -> list[int | float]:
        """The highest accepted value and one just below it."""
        if self.high is None:
            return []
        values = [self.high, self.high * (1 - 1e-12) if self.kind is float else self.high - 1]
        return list(dict.fromkeys(v for v in values if self.accepts(v)))

    def extremes(self) -> list[int | float]:
        """Every value of :meth:`low_extremes` and :meth:`high_extremes`."""
        return self.low_extremes() + self.high_extremes()

    def accepts(self, value: float) -> bool:
        low_ok = self.low is None or (value > self.low if self.low_open else value >= self.low)
        return low_ok and (self.high is None or value <= self.high)


def numeric_fields(model: type[BaseModel], prefix: str = "") -> list[NumericField]:
    """Every int or float leaf of ``model`` (nested blocks included, lists of blocks not)."""
    found = []
    for name, field in model.model_fields.items():
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            found += numeric_fields(annotation, f"{prefix}{name}.")
            continue
        if annotation not in (int, float) or typing.get_origin(annotation) is typing.Literal:
            continue
        low = high = None
        low_open = False
        for rule in field.metadata:
            if isinstance(rule, annotated_types.Ge):
                low = rule.ge
            elif isinstance(rule, annotated_types.Gt):
                low, low_open = rule.gt, True
            elif isinstance(rule, annotated_types.Le):
                high = rule.le
        extra = field.json_schema_extra if isinstance(field.json_schema_extra, dict) else {}
        found.append(NumericField(f"{prefix}{name}", annotation, low, low_open, high, str(extra.get("unit", ""))))
    return found


def fuzzable_fields(model: type[BaseModel]) -> list[NumericField]:
    """The numeric fields whose extremes the robustness checks draw: all but the agent count
    (which sets the cost of a run) and the memory budgets of :data:`SKIPPED`."""
    return [
        f
        for f in numeric_fields(model)
        if not f.key.startswith(SKIPPED) and not f.key.endswith(".n") and f.key != "seed"
    ]


def extreme_overrides(params: Any, rng: random.Random, count: int) -> list[str]:
    """``count`` dotted overrides (``key=value``) setting distinct fields of ``params``' model to extremes."""
    fields = [f for f in fuzzable_fields(type(params)) if f.extremes()]
    chosen = rng.sample(fields, k=min(count, len(fields)))
    return [f"{f.key}={rng.choice(f.extremes())!r}" for f in chosen]


def unit_edge_overrides(params: Any, rng: random.Random) -> list[str]:
    """Overrides putting every field of one unit (e.g. all lengths in "units") at the same edge
    of its range, low or high: a whole world of tiny (or huge) radii, distances and margins."""
    fields = fuzzable_fields(type(params))
    unit = rng.choice(sorted({f.unit for f in fields}))
    side = rng.choice(["low", "high"])
    overrides = []
    for f in fields:
        values = f.low_extremes() if side == "low" else f.high_extremes()
        if f.unit == unit and values:
            overrides.append(f"{f.key}={rng.choice(values)!r}")
    return overrides

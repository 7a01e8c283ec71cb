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

    def extremes(self) -> list[int | float]:
        """The lowest and highest accepted values, and values just inside them."""
        values: list[int | float] = []
        if self.low is not None:
            if self.kind is int:
                values.append(int(self.low) + (1 if self.low_open else 0))
            elif self.low_open:
                values += [1e-300, math.ulp(0.0) * 2**60, 1e-12]
            else:
                values += [self.low, self.low + max(abs(self.low), 1.0) * 1e-12]
        if self.high is not None:
            values += [self.high, self.high * (1 - 1e-12) if self.kind is float else self.high - 1]
        return [v for v in values if self.accepts(v)]

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
        found.append(NumericField(f"{prefix}{name}", annotation, low, low_open, high))
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

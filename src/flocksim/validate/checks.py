"""What a validation check returns: measured numbers beside expected ones, pass or fail."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Measurement:
    """One measured number, the expectation it is held to (``low <= value <= high``) and why."""

    name: str
    value: float
    low: float = -math.inf
    high: float = math.inf
    expected: str = ""  # how the expectation reads in the report, e.g. "1 (Vicsek 1995: eta -> 0)"

    @property
    def passed(self) -> bool:
        return math.isfinite(self.value) and self.low <= self.value <= self.high

    def bounds_text(self) -> str:
        if math.isinf(self.low) and math.isinf(self.high):
            return "any"
        if math.isinf(self.low):
            return f"<= {self.high:.5g}"
        if math.isinf(self.high):
            return f">= {self.low:.5g}"
        return f"[{self.low:.5g}, {self.high:.5g}]"


@dataclass
class CheckResult:
    """A check's outcome. ``plot(ax_factory)`` draws its figure (None: no figure); ``notes`` says
    how it was measured (sizes, steps, seeds) and, for a failure, what is known about it."""

    name: str
    title: str
    reference: str
    measurements: list[Measurement]
    notes: str = ""
    seconds: float = 0.0
    plot: Callable[[Any], None] | None = None
    table: list[dict[str, object]] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return all(m.passed for m in self.measurements)


def within(name: str, value: float, expected: float, tolerance: float, source: str) -> Measurement:
    """``value`` must be within ``expected`` +- ``tolerance``."""
    return Measurement(name, float(value), expected - tolerance, expected + tolerance, f"{expected:.4g} ({source})")


def relative(name: str, value: float, expected: float, fraction: float, source: str) -> Measurement:
    """``value`` must be within ``fraction`` of ``expected`` (relative)."""
    span = abs(expected) * fraction
    return Measurement(
        name, float(value), expected - span, expected + span, f"{expected:.4g} +- {fraction:.0%} ({source})"
    )

"""The sweep file's schema: its tables as pydantic models (:class:`SweepFile` and the tables in it),
the columns a sweep may not name, and one line for a validation error (key, what is wrong, allowed
values). The file format is described in :mod:`flocksim.sweep.spec`."""

from __future__ import annotations

import math
from typing import Any, Literal

import tomli_w
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from flocksim.config import ConfigError
from flocksim.metrics import METRIC_NAMES
from flocksim.params.errors import model_type

STATS = ("mean", "median", "std", "min", "max", "final", "fraction-below", "fraction-above")
SAMPLING_KINDS = ("grid", "random")
RESERVED_COLUMNS = (
    "task_id",
    "seed",
    "status",
    "error",
    "steps",
    "wall_s",
    "compile_s",
    "worker",
    "flocksim_version",
)
MAX_TASKS = 10_000_000


class SweepError(ConfigError):
    """A bad sweep file or sweep option: one line naming the key and the allowed values."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, frozen=True)


class Span(_Strict):
    """A range of numbers: ``num`` values from ``start`` to ``stop``, both included."""

    start: float = Field(description="First value; allowed: a finite number (> 0 for log ranges).")
    stop: float = Field(description="Last value; allowed: a finite number (> 0 for log ranges).")
    num: int | None = Field(
        None,
        ge=1,
        le=1_000_000,
        description="Number of values on a grid; allowed: 1 to 1000000 (required for grid sampling).",
    )


AxisValue = bool | int | float | str


class Axis(_Strict):
    """One swept parameter: a dotted key and exactly one of ``values``, ``range``, ``log``."""

    key: str = Field(description="Dotted parameter key; allowed: a key of the base parameters, e.g. agents.n.")
    values: list[AxisValue] | None = Field(
        None, description="Explicit values; allowed: a non-empty list of numbers, strings or booleans."
    )
    range: Span | None = Field(None, description="Linear range; allowed: {start, stop, num}.")
    log: Span | None = Field(None, description="Logarithmic range; allowed: {start > 0, stop > 0, num}.")
    integer: bool = Field(False, description="Round range values to whole numbers; allowed: true or false.")

    @field_validator("values")
    @classmethod
    def _values(cls, values: list[AxisValue] | None) -> list[AxisValue] | None:
        if values is None:
            return None
        if not values:
            raise ValueError("empty axis")
        kinds = {_value_kind(v) for v in values}
        if len(kinds - {"int"} if "float" in kinds else kinds) > 1:
            raise ValueError(f"values mix {' and '.join(sorted(kinds))}; use one type")
        if "float" in kinds:
            values = [float(v) for v in values]
        duplicates = sorted({repr(v) for v in values if values.count(v) > 1})
        if duplicates:
            raise ValueError(f"duplicate values {', '.join(duplicates)}")
        return values

    @model_validator(mode="after")
    def _one_kind(self) -> Axis:
        given = [name for name in ("values", "range", "log") if getattr(self, name) is not None]
        if len(given) != 1:
            raise ValueError(
                f"axis {self.key!r} needs exactly one of values, range, log; got {', '.join(given) or 'none'}"
            )
        if self.values is not None and self.integer:
            raise ValueError(f"axis {self.key!r}: integer = true applies to range and log axes only")
        if self.log is not None and (self.log.start <= 0 or self.log.stop <= 0):
            raise ValueError(f"axis {self.key!r}: log range needs start > 0 and stop > 0")
        return self

    @property
    def kind(self) -> Literal["values", "range", "log"]:
        return "values" if self.values is not None else ("range" if self.range is not None else "log")

    @property
    def arrow_kind(self) -> str:
        """The column type of this axis in the results: bool | int | float | str."""
        if self.values is None:
            return "int" if self.integer else "float"
        return _value_kind(self.values[0])

    def grid_values(self) -> list[AxisValue]:
        """The values this axis takes on a grid, in order (duplicates after rounding dropped)."""
        if self.values is not None:
            return list(self.values)
        span = self.range if self.range is not None else self.log
        assert span is not None and span.num is not None
        if span.num == 1:
            raw = [span.start]
        elif self.kind == "range":
            raw = [span.start + (span.stop - span.start) * i / (span.num - 1) for i in range(span.num)]
            raw[-1] = span.stop
        else:
            a, b = math.log(span.start), math.log(span.stop)
            raw = [math.exp(a + (b - a) * i / (span.num - 1)) for i in range(span.num)]
            raw[0], raw[-1] = span.start, span.stop
        if not self.integer:
            return [float(v) for v in raw]
        return list(dict.fromkeys(round(v) for v in raw))  # in order, duplicates after rounding dropped

    def grid_count(self) -> int:
        """How many values this axis takes on a grid, without listing them (a missing ``num`` counts 1)."""
        if self.values is not None:
            return len(self.values)
        span = self.range if self.range is not None else self.log
        assert span is not None
        return len(self.grid_values()) if self.integer and span.num is not None else span.num or 1

    def draw(self, rng: Any) -> AxisValue:
        """One random value: uniform over ``values`` or ``range``, log-uniform over ``log``."""
        if self.values is not None:
            return self.values[int(rng.integers(len(self.values)))]
        if self.range is not None:
            x = float(rng.uniform(min(self.range.start, self.range.stop), max(self.range.start, self.range.stop)))
        else:
            assert self.log is not None
            lo, hi = sorted((math.log(self.log.start), math.log(self.log.stop)))
            x = math.exp(float(rng.uniform(lo, hi)))
        return round(x) if self.integer else x


def _value_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "float" if isinstance(value, float) else "int"
    return "str"


class Sampling(_Strict):
    """How parameter points are chosen from the axes."""

    kind: Literal["grid", "random"] = Field("grid", description="Sampling; allowed: grid | random.")
    samples: int = Field(
        0, ge=0, le=MAX_TASKS, description="Random sampling: number of parameter points; allowed: 1 to 10000000."
    )
    seed: int = Field(0, ge=0, le=2**63 - 1, description="Random sampling: seed of the sampler; allowed: >= 0.")

    @model_validator(mode="after")
    def _samples(self) -> Sampling:
        if self.kind == "random" and self.samples < 1:
            raise ValueError("random sampling needs samples >= 1")
        if self.kind == "grid" and self.samples:
            raise ValueError("samples applies to random sampling only (kind = 'random')")
        return self


class Summary(_Strict):
    """One number per run: a statistic of a per-step metric sampled every ``every`` steps
    at simulated times inside ``window`` [s] (both ends included)."""

    metric: Literal[METRIC_NAMES] = Field(description=f"Per-step metric; allowed: {' | '.join(METRIC_NAMES)}.")
    stat: Literal[STATS] = Field("mean", description=f"Statistic; allowed: {' | '.join(STATS)}.")
    window: tuple[float, float] | None = Field(
        None, description="Simulated time window [s]; allowed: [start, stop] with 0 <= start <= stop."
    )
    every: int = Field(10, ge=1, le=10_000_000, description="Sample every M steps [steps]; allowed: >= 1.")
    threshold: float | None = Field(
        None, description="Threshold of fraction-below / fraction-above; allowed: a finite number."
    )
    name: str | None = Field(None, description="Column name; allowed: a name not used by another column.")

    @model_validator(mode="after")
    def _check(self) -> Summary:
        needs = self.stat in ("fraction-below", "fraction-above")
        if needs and self.threshold is None:
            raise ValueError(f"stat {self.stat!r} needs a threshold")
        if not needs and self.threshold is not None:
            raise ValueError(f"threshold applies to fraction-below / fraction-above only, not {self.stat!r}")
        if self.window is not None and not 0.0 <= self.window[0] <= self.window[1]:
            raise ValueError(f"window must be [start, stop] with 0 <= start <= stop, got {list(self.window)}")
        if self.name is not None and not self.name.strip():
            raise ValueError("name must not be empty")
        return self

    @property
    def column(self) -> str:
        """Column name in the results: ``name``, else ``<metric>_<stat>[_<threshold>]``."""
        if self.name:
            return self.name
        base = f"{self.metric}_{self.stat.replace('-', '_')}"
        return f"{base}_{self.threshold:g}" if self.threshold is not None else base

    def sample_steps(self, steps: int, dt: float) -> list[int]:
        """Steps (0 .. steps) at which this summary samples its metric."""
        start, stop = self.window if self.window is not None else (0.0, math.inf)
        tol = 1e-9 * max(1.0, abs(stop) if math.isfinite(stop) else 1.0)
        return [s for s in range(0, steps + 1, self.every) if start - tol <= s * dt <= stop + tol]


class SweepFile(_Strict):
    """The contents of a sweep file (see the module docstring)."""

    description: str = Field("", description="One line saying what the sweep is for; allowed: any text.")
    base: str = Field(description="Base parameters; allowed: a preset name or a parameter TOML file.")
    set: list[str] = Field([], description="Fixed overrides of the base; allowed: KEY=VALUE strings.")
    seeds: int = Field(1, ge=1, le=1_000_000, description="Seeds per parameter point; allowed: 1 to 1000000.")
    seed_start: int = Field(0, ge=0, le=2**62, description="First seed; allowed: >= 0.")
    steps: int = Field(ge=1, le=10**9, description="Steps per run [steps]; allowed: 1 to 1000000000.")
    sampling: Sampling = Field(default_factory=Sampling, description="Sampling; allowed: a [sampling] table.")
    axes: list[Axis] = Field([], description="Swept parameters; allowed: [[axes]] tables.")
    summaries: list[Summary] = Field(
        min_length=1, description="What to measure; allowed: at least one [[summaries]] table."
    )


def override_text(key: str, value: AxisValue) -> str:
    """``key=value`` with the value written as TOML (exact for floats)."""
    return f"{key}={tomli_w.dumps({'v': value})[4:].strip()}"


def _reject_booleans(data: Any, model: type[BaseModel], loc: list[Any]) -> None:
    """true/false where a number is expected is a wrong type (pydantic would read 1 or 0)."""
    if not isinstance(data, dict):
        return
    for key, value in data.items():
        field = model.model_fields.get(key)
        if field is None or field.annotation is bool or key == "values":
            continue
        sub = model_type(field.annotation)
        if sub is not None:
            items = value if isinstance(value, list) else [value]
            for j, item in enumerate(items):
                _reject_booleans(item, sub, [*loc, key, j] if isinstance(value, list) else [*loc, key])
        elif isinstance(value, bool) or (isinstance(value, list) and any(isinstance(v, bool) for v in value)):
            raise ConfigError(
                f"{_loc_text([*loc, key])}: true/false is the wrong type here; {_allowed(field)}; got {value!r}"
            )


def _loc_text(loc: list[Any] | tuple[Any, ...]) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "sweep"


def _allowed(field: Any) -> str:
    description = (field.description or "") if field is not None else ""
    if "allowed:" in description:
        return "allowed: " + description.split("allowed:", 1)[1].strip().rstrip(".")
    return ""


def _field_at(loc: list[Any]) -> Any:
    model: type[BaseModel] | None = SweepFile
    field = None
    for part in loc:
        if isinstance(part, int):
            continue
        if model is None or part not in model.model_fields:
            return field if model is None else None
        field = model.model_fields[part]
        model = model_type(field.annotation)
    return field


def describe_error(exc: ValidationError) -> str:
    """One line for the first validation error: key, what is wrong, allowed values."""
    err = exc.errors()[0]
    # drop pydantic's union-branch tags (e.g. 'float', 'constrained-str') from the location
    kind = err["type"]
    raw = list(err["loc"])
    last = raw[-1:] if kind == "extra_forbidden" else []  # the unknown key itself
    loc = [p for p in raw[: len(raw) - len(last)] if isinstance(p, int) or p in _all_field_names()] + last
    key = _loc_text(loc)
    if kind == "extra_forbidden":
        parent = _field_at(loc[:-1]) if len(loc) > 1 else None
        parent_model = model_type(parent.annotation) if parent is not None else SweepFile
        allowed = ", ".join(parent_model.model_fields) if parent_model else ""
        return f"{key}: unknown key; allowed keys here: {allowed}"
    if kind == "missing":
        return f"{key}: missing; {_allowed(_field_at(loc))}".rstrip("; ")
    field = _field_at(loc)
    allowed = _allowed(field)
    got = err.get("input")
    got_text = f"; got {got!r}" if not isinstance(got, dict) else ""
    msg = err["msg"].removeprefix("Value error, ")
    if kind == "finite_number":
        msg = "must be a finite number (not NaN or inf)"
    if kind == "value_error" and (not loc or isinstance(loc[-1], int)):
        return f"{key}: {msg}" if loc else msg  # a check of a whole table: its message names the problem
    return f"{key}: {msg}; {allowed}{got_text}" if allowed else f"{key}: {msg}{got_text}"


def _all_field_names() -> set[str]:
    names: set[str] = set()
    for model in (SweepFile, Span, Axis, Sampling, Summary):
        names.update(model.model_fields)
    return names

"""The sweep file: what to vary, how many seeds, how long, and what to measure.

A sweep file is TOML::

    description = "Alignment weight x neighbour mode: polarization of starlings-2d"
    base = "starlings-2d"             # a preset name, or a parameter TOML file (relative to this file)
    set = ["agents.n=300"]            # fixed dotted overrides of the base (optional)
    seeds = 5                         # seeds seed_start, ..., seed_start + seeds - 1 per parameter point
    steps = 1800                      # steps per run

    [sampling]                        # optional; default: the full grid
    kind = "grid"                     # grid | random
    samples = 0                       # random: number of parameter points drawn
    seed = 0                          # random: seed of the sampler

    [[axes]]
    key = "rules.alignment.weight"    # any dotted parameter key (see `flocksim schema`)
    values = [0.0, 0.5, 1.0, 2.0]     # a list ...
    [[axes]]
    key = "rules.separation.weight"
    range = {start = 0.5, stop = 4.0, num = 8}   # ... a linear range (both ends included) ...
    [[axes]]
    key = "rules.cohesion.weight"
    log = {start = 0.01, stop = 10.0, num = 7}   # ... or a logarithmic one

    [[summaries]]
    metric = "polarization"           # a per-step metric (flocksim.metrics.METRIC_NAMES)
    stat = "mean"                     # mean | median | std | min | max | final | fraction-below | fraction-above
    window = [10.0, 30.0]             # simulated time window [s], both ends included (default: the whole run)
    every = 10                        # sample the metric every M steps

Grid sampling takes every combination of the axes (the first axis varies slowest);
random sampling draws ``samples`` points: uniformly from a ``values`` list, uniformly in
a ``range``, log-uniformly in a ``log`` range (``num`` is then not used). ``integer =
true`` on a range rounds its values to whole numbers (grid duplicates are dropped).
"""

from __future__ import annotations

import hashlib
import json
import math
import tomllib
from functools import cached_property
from importlib import resources
from pathlib import Path
from typing import Any

import tomli_w
from pydantic import ValidationError

from flocksim.config import AnyParams, ConfigError, apply_overrides, load_toml, to_dict
from flocksim.scenarios import load_preset, preset_names
from flocksim.sweep.expand import expand
from flocksim.sweep.schema import (
    MAX_TASKS,
    RESERVED_COLUMNS,
    SAMPLING_KINDS,
    STATS,
    Axis,
    AxisValue,
    Sampling,
    Span,
    Summary,
    SweepError,
    SweepFile,
    _reject_booleans,
    describe_error,
    override_text,
)


class Sweep:
    """A validated sweep: the file, its resolved base parameters and its name.

    Build one with :func:`load_sweep` (a file or a shipped name) or :func:`parse_sweep`.
    """

    def __init__(self, spec: SweepFile, base: AnyParams, name: str, source: str):
        self.spec = spec
        self.base = base
        self.name = name
        self.source = source

    @property
    def axis_keys(self) -> list[str]:
        return [a.key for a in self.spec.axes]

    @property
    def summary_columns(self) -> list[str]:
        return [s.column for s in self.spec.summaries]

    @property
    def n_points(self) -> int:
        if self.spec.sampling.kind == "random":
            return self.spec.sampling.samples
        return math.prod(len(a.grid_values()) for a in self.spec.axes)

    @cached_property
    def n_tasks(self) -> int:
        """Number of runs (random draws that repeat a point and seed are run once)."""
        if self.spec.sampling.kind == "random":
            return len(expand(self))
        return self.n_points * self.spec.seeds

    @cached_property
    def fingerprint(self) -> str:
        """Hash of what one row means (base parameters, axis keys, steps, summaries).

        Two sweeps with the same fingerprint may share a results file: ``--resume`` keeps
        the rows of the other and runs only the missing ones (more values or seeds is fine).
        """
        data = {
            "base": to_dict(self.base),
            "axes": self.axis_keys,
            "axis_kinds": [a.arrow_kind for a in self.spec.axes],
            "steps": self.spec.steps,
            "summaries": [s.model_dump(mode="json") for s in self.spec.summaries],
        }
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]

    def to_toml(self) -> str:
        """The sweep as TOML, with ``base`` and ``set`` as given."""
        return tomli_w.dumps(self.spec.model_dump(mode="json", exclude_none=True))

    def with_options(self, steps: int | None = None, seeds: int | None = None, overrides: list[str] | None = None):
        """A copy with ``steps``, ``seeds`` replaced and ``overrides`` appended to ``set``."""
        data = self.spec.model_dump(mode="json", exclude_none=True)
        if steps is not None:
            data["steps"] = steps
        if seeds is not None:
            data["seeds"] = seeds
        if overrides:
            data["set"] = [*data.get("set", []), *overrides]
        return _build(data, self.name, self.source, _base_folder(self.source))


# --- loading --------------------------------------------------------------------------------------------


def shipped_sweeps() -> dict[str, str]:
    """Names and TOML texts of the sweeps shipped in the package (``flocksim sweep --list``)."""
    folder = resources.files("flocksim.sweep") / "sweeps"
    return {
        p.name.removesuffix(".toml"): p.read_text(encoding="utf-8")
        for p in sorted(folder.iterdir(), key=lambda p: p.name)
        if p.name.endswith(".toml")
    }


def load_sweep(target: str | Path) -> Sweep:
    """A sweep from a TOML file or a shipped sweep name; raises :class:`SweepError`."""
    target = str(target)
    path = Path(target)
    shipped = shipped_sweeps()
    if not (target.endswith(".toml") or path.is_file()):
        if target not in shipped:
            allowed = ", ".join(shipped) or "none"
            raise SweepError(f"sweep: unknown sweep {target!r}; allowed: a sweep TOML file or one of {allowed}")
        return parse_sweep(shipped[target], name=target, source=f"sweep {target}")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SweepError(f"{path}: cannot read sweep file ({exc.__class__.__name__}: {exc})") from None
    return parse_sweep(text, name=path.stem, source=str(path))


def parse_sweep(text: str, name: str = "sweep", source: str = "<string>") -> Sweep:
    """Validate sweep TOML text; every problem is one :class:`SweepError` line prefixed by ``source``."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SweepError(f"{source}: not valid TOML ({exc})") from None
    return _build(data, name, source, _base_folder(source))


def _base_folder(source: str) -> Path | None:
    path = Path(source)
    return path.parent if source.endswith(".toml") or path.is_file() else None


def _build(data: dict[str, Any], name: str, source: str, folder: Path | None) -> Sweep:
    try:
        _reject_booleans(data, SweepFile, [])
        spec = SweepFile.model_validate(data)
    except ValidationError as exc:
        raise SweepError(f"{source}: {describe_error(exc)}") from None
    except ConfigError as exc:
        raise SweepError(f"{source}: {exc}") from None
    try:
        _check_count(spec)  # first: checking each value of a huge sweep would take minutes
        base = _resolve_base(spec, folder)
        _check_axes(spec, base)
    except ConfigError as exc:
        raise SweepError(f"{source}: {exc}") from None
    sweep = Sweep(spec, base, name, source)
    try:
        _check_columns_and_windows(sweep)
    except ConfigError as exc:
        raise SweepError(f"{source}: {exc}") from None
    return sweep


def _resolve_base(spec: SweepFile, folder: Path | None) -> AnyParams:
    base = spec.base
    if base.endswith(".toml"):
        path = Path(base)
        if not path.is_absolute() and folder is not None:
            path = folder / path
        if not path.is_file():
            raise ConfigError(f"base: no parameter file {str(path)!r}; allowed: a preset ({', '.join(preset_names())})")
        params = load_toml(path)
    else:
        params = load_preset(base)
    try:
        return apply_overrides(params, list(spec.set))
    except ConfigError as exc:
        raise ConfigError(f"set: {exc}") from None


def _check_axes(spec: SweepFile, base: AnyParams) -> None:
    """Every axis key exists and every value is valid on its own (combinations are checked per run)."""
    seen: set[str] = set()
    for i, axis in enumerate(spec.axes):
        where = f"axes[{i}]"
        if axis.key in seen:
            raise ConfigError(f"{where}.key: {axis.key!r} appears twice; allowed: each key once")
        if axis.key in RESERVED_COLUMNS:
            hint = "; use seeds and seed_start" if axis.key == "seed" else ""
            raise ConfigError(f"{where}.key: {axis.key!r} cannot be swept{hint}")
        seen.add(axis.key)
        span = axis.range or axis.log
        if span is None:
            values = axis.grid_values()
        elif spec.sampling.kind == "grid":
            if span.num is None:
                raise ConfigError(f"{where}.{axis.kind}.num: missing; allowed: 1 to 1000000 values on a grid")
            values = axis.grid_values()
        else:  # a random range: check both ends
            values = [round(span.start), round(span.stop)] if axis.integer else [span.start, span.stop]
        for value in values:
            try:
                apply_overrides(base, [override_text(axis.key, value)])
            except ConfigError as exc:
                raise ConfigError(f"{where} ({axis.key} = {value!r}): {exc}") from None


def _check_count(spec: SweepFile) -> None:
    """Refuse a sweep of more than MAX_TASKS runs, counted from the file alone: the grid's points
    x seeds, or random samples x seeds (the most a random sweep can run)."""
    if spec.sampling.kind == "random":
        runs, what = spec.sampling.samples * spec.seeds, "samples x seeds"
    else:
        runs, what = math.prod(a.grid_count() for a in spec.axes) * spec.seeds, "grid points x seeds"
    if runs > MAX_TASKS:
        raise ConfigError(f"the sweep has {runs} runs ({what}); allowed: at most {MAX_TASKS}")


def _check_columns_and_windows(sweep: Sweep) -> None:
    spec = sweep.spec
    columns = set(RESERVED_COLUMNS) | set(sweep.axis_keys)
    dt = sweep.base.world.dt
    for i, summary in enumerate(spec.summaries):
        if summary.column in columns:
            raise ConfigError(
                f"summaries[{i}]: column {summary.column!r} is already used; allowed: set name to a new column name"
            )
        columns.add(summary.column)
        if not summary.sample_steps(spec.steps, dt):
            end = spec.steps * dt
            raise ConfigError(
                f"summaries[{i}].window: no sample in {list(summary.window or ())} s (the run is {spec.steps} steps "
                f"of {dt:g} s = {end:g} s, sampled every {summary.every} steps); allowed: a window inside [0, {end:g}]"
            )
    if sweep.n_tasks > MAX_TASKS:
        raise ConfigError(f"the sweep has {sweep.n_tasks} runs; allowed: at most {MAX_TASKS}")
    if sweep.n_tasks == 0:
        raise ConfigError("the sweep has no runs; allowed: at least one value per axis")


__all__ = [  # the schema's names are also reached through this module, as before it was split
    "MAX_TASKS",
    "RESERVED_COLUMNS",
    "SAMPLING_KINDS",
    "STATS",
    "Axis",
    "AxisValue",
    "Sampling",
    "Span",
    "Summary",
    "Sweep",
    "SweepError",
    "SweepFile",
    "describe_error",
    "load_sweep",
    "override_text",
    "parse_sweep",
    "shipped_sweeps",
]

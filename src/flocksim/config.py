"""Parameter files and overrides: TOML in and out, dotted ``key=value`` overrides,
and one-line error messages naming the field and the allowed values."""

from __future__ import annotations

import math
import tomllib
from pathlib import Path
from typing import Any

import numpy as np
import tomli_w
from pydantic import BaseModel, ValidationError

from flocksim.params import MODEL_NAMES, AbmFlockingParams, CouzinParams, ReynoldsParams, VicsekParams, parse_params
from flocksim.params.errors import (  # the one-line messages live with the schema; these names stay importable here
    ConfigError,
    _allowed_text,
    describe_validation_error,
    model_type,
)

AnyParams = ReynoldsParams | AbmFlockingParams | VicsekParams | CouzinParams
MODEL_CLASSES: dict[str, type[BaseModel]] = {
    "reynolds": ReynoldsParams,
    "abm-flocking": AbmFlockingParams,
    "vicsek": VicsekParams,
    "couzin": CouzinParams,
}


def to_dict(params: AnyParams) -> dict[str, Any]:
    """Plain nested dict of the parameters (JSON/TOML ready)."""
    return params.model_dump(mode="json")


def dumps_toml(params: AnyParams) -> str:
    """TOML text that :func:`loads_toml` turns back into equal parameters."""
    return tomli_w.dumps(to_dict(params))


def save_toml(params: AnyParams, path: str | Path) -> None:
    Path(path).write_text(dumps_toml(params), encoding="utf-8")


def loads_toml(text: str, source: str = "<string>") -> AnyParams:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{source}: not valid TOML ({exc})") from None
    return validate(data)


def load_toml(path: str | Path) -> AnyParams:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read parameter file ({exc.__class__.__name__}: {exc})") from None
    return loads_toml(text, source=str(path))


def validate(data: dict[str, Any]) -> AnyParams:
    """Validate a mapping, turning the first problem into a :class:`ConfigError`.

    Types are strict (a number given as text, ``"300"``, is an error naming the key); Python
    containers are taken as what they hold: tuples and numpy arrays as lists, numpy scalars
    as the Python numbers they are."""
    if not isinstance(data, dict):
        raise ConfigError(f"parameters: expected a mapping of keys to values, got {type(data).__name__}")
    data = _plain(data)
    model = data.get("model", "reynolds")
    if model not in MODEL_NAMES:
        raise ConfigError(f"model: unknown model {model!r}; allowed: {', '.join(MODEL_NAMES)}")
    _reject_booleans(data, MODEL_CLASSES[model])
    try:
        return parse_params(data)
    except ValidationError as exc:
        raise ConfigError(describe_validation_error(exc, MODEL_CLASSES[model], tags=MODEL_NAMES)) from None


def _plain(value: Any) -> Any:
    """``value`` with tuples and numpy arrays as lists and numpy scalars as Python scalars (recursively)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return _plain(value.tolist())
    if isinstance(value, np.generic):
        return value.item()
    return value


def _reject_booleans(data: Any, model: type[BaseModel], prefix: str = "") -> None:
    """true/false where a number or a name is expected is a wrong type (pydantic would read it as 1 or 0)."""
    if not isinstance(data, dict):
        return
    for key, value in data.items():
        field = model.model_fields.get(key)
        if field is None or field.annotation is bool:
            continue
        sub = model_type(field.annotation)
        if sub is not None:
            _reject_booleans(value, sub, f"{prefix}{key}.")
        elif isinstance(value, bool) or (isinstance(value, list) and any(isinstance(v, bool) for v in value)):
            allowed = _allowed_text(field)
            raise ConfigError(f"{prefix}{key}: true/false is the wrong type here; {allowed}; got {value!r}")


def parse_override(text: str) -> tuple[list[str], Any]:
    """Split ``a.b.c=value``; the value is read as TOML (numbers, booleans, lists,
    quoted strings), falling back to a bare string (``model=abm-flocking``)."""
    key, sep, raw = text.partition("=")
    key = key.strip()
    if not sep or not key or any(not part for part in key.split(".")):
        raise ConfigError(f"--set {text!r}: expected KEY=VALUE with a dotted key, e.g. rules.alignment.weight=0.5")
    raw = raw.strip()
    lowered = raw.lower()
    if lowered in {"nan", "+nan", "-nan", "inf", "+inf", "-inf"}:
        value: Any = float(lowered)
    else:
        try:
            value = tomllib.loads(f"v = {raw}")["v"]
        except tomllib.TOMLDecodeError:
            value = raw
    return key.split("."), value


def apply_overrides(params: AnyParams, overrides: list[str]) -> AnyParams:
    """Apply dotted overrides in order and re-validate; unknown keys are errors."""
    if not overrides:
        return params
    data = to_dict(params)
    for text in overrides:
        path, value = parse_override(text)
        if isinstance(value, float) and not math.isfinite(value):
            raise ConfigError(f"{'.'.join(path)}: must be a finite number (not NaN or inf); got {value!r}")
        if path == ["model"]:
            data = _switch_model(data, value)
            continue
        node = data
        for depth, part in enumerate(path[:-1]):
            child = node.get(part)
            if not isinstance(child, dict):
                where = ".".join(path[: depth + 1])
                if child is None:
                    allowed = ", ".join(k for k in node)
                    raise ConfigError(f"{where}: unknown key; allowed keys here: {allowed}")
                raise ConfigError(f"{where}: is a value, not a section; cannot set {'.'.join(path)}")
            node = child
        last = path[-1]
        if last not in node and path != ["model"]:
            allowed = ", ".join(k for k in node)
            raise ConfigError(f"{'.'.join(path)}: unknown key; allowed keys here: {allowed}")
        node[last] = value
    params = validate(data)
    _check_roost_radius(params, overrides)
    return params


def _check_roost_radius(params: AnyParams, overrides: list[str]) -> None:
    """A radius given while rules.roost.flock_lengths sizes the roost would be replaced without a word:
    refuse it, naming the way to give one."""
    roost = getattr(getattr(params, "rules", None), "roost", None)
    if roost is None or getattr(roost, "flock_lengths", 0.0) <= 0.0:
        return
    if any(parse_override(text)[0] == ["rules", "roost", "radius"] for text in overrides):
        raise ConfigError(
            f"rules.roost.radius: set from rules.roost.flock_lengths ({roost.flock_lengths:g} flock lengths: "
            f"{roost.radius:g}); allowed: rules.roost.flock_lengths=0 with a radius of your own"
        )


def _switch_model(data: dict[str, Any], model: Any) -> dict[str, Any]:
    """--set model=NAME: keep every field the new model knows (recursively, e.g. world,
    seed, agents.n), take the new model's defaults for the rest, so later overrides in
    the same command can set the new model's own sections."""
    cls = MODEL_CLASSES.get(model) if isinstance(model, str) else None
    if cls is None:
        validate({"model": model})  # raises: unknown model, naming the allowed ones
        return data
    return to_dict(validate(_known_fields({**data, "model": model}, cls)))


def _known_fields(data: dict[str, Any], model: type[BaseModel]) -> dict[str, Any]:
    kept = {}
    for key, value in data.items():
        if key in model.model_fields:
            sub = model_type(model.model_fields[key].annotation)
            kept[key] = _known_fields(value, sub) if sub is not None and isinstance(value, dict) else value
    return kept

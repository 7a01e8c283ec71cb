"""One-line messages for invalid parameters: the dotted key, what is wrong, the allowed values
(from the field's description) and the value given. Used for TOML files, ``--set``, the
viewer's ``set`` and assignments from Python alike (:mod:`flocksim.config` re-exports them)."""

from __future__ import annotations

import typing
from typing import Any

from pydantic import BaseModel, ValidationError


class ConfigError(ValueError):
    """Bad input: the message is one line naming the key and the allowed values."""


def describe_validation_error(
    exc: ValidationError, root: type[BaseModel], where: str = "", tags: tuple[str, ...] = ()
) -> str:
    """One line for the first error: dotted key, what is wrong, allowed values. ``root``: the
    block validated; ``where``: its dotted key in the parameters ("rules.alignment." for an
    assignment to a field of that block); ``tags``: a discriminated union's tags, which lead
    the error's location (a model's name) and are not part of the key."""
    err = exc.errors()[0]
    loc = [str(p) for p in err["loc"]]
    if loc and loc[0] in tags:  # the union's tag; a section may share a model's name (vicsek.eta)
        loc = loc[1:]
    key = where + ".".join(loc) if loc else where.rstrip(".") or "parameters"
    kind = err["type"]
    if kind == "extra_forbidden":
        parent = _model_at(root, loc[:-1])
        allowed = ", ".join(parent.model_fields) if parent else "see `flocksim schema`"
        return f"{key}: unknown key; allowed keys here: {allowed}"
    field = _field_at(root, loc)
    allowed = _allowed_text(field)
    got = err.get("input")
    got_text = f"; got {got!r}" if not isinstance(got, dict) else ""
    if kind == "finite_number":
        return f"{key}: must be a finite number (not NaN or inf); {allowed}{got_text}"
    msg = err["msg"].removeprefix("Value error, ")
    return f"{key}: {msg}; {allowed}{got_text}" if allowed else f"{key}: {msg}{got_text}"


def _model_at(root: type[BaseModel], loc: list[str]) -> type[BaseModel] | None:
    model: Any = root
    for part in loc:
        if part.isdigit():  # an item of a list of blocks (obstacles.circles.0.center)
            continue
        if not (isinstance(model, type) and issubclass(model, BaseModel)) or part not in model.model_fields:
            return None
        model = model_type(model.model_fields[part].annotation)
    return model if isinstance(model, type) and issubclass(model, BaseModel) else None


def model_type(annotation: Any) -> Any:
    """The pydantic model a field's annotation holds (``Block``, ``Block | None``, ``list[Block]``), or None."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = model_type(arg)
        if found is not None:
            return found
    return None


def _field_at(root: type[BaseModel], loc: list[str]) -> Any:
    parent = _model_at(root, loc[:-1]) if loc else None
    if parent is None:
        # the error may sit inside a list (e.g. size.1); try one level up
        if len(loc) >= 2:
            return _field_at(root, loc[:-1])
        return None
    return parent.model_fields.get(loc[-1])


def _allowed_text(field: Any) -> str:
    if field is None:
        return ""
    description = field.description or ""
    if "allowed:" in description:
        return "allowed: " + description.split("allowed:", 1)[1].strip().rstrip(".")
    if ":" in description:
        return "allowed: " + description.split(":", 1)[1].strip().rstrip(".")
    return ""

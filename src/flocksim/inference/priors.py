"""Priors of ``flocksim fit``: ``--prior KEY=LO:HI`` (or ``KEY`` alone for the whole schema range),
checked against the parameter schema of the preset's model.

A prior is uniform on [lo, hi] in the parameter's own unit (the schema's, e.g. radians for
``vicsek.eta``). A key that is not a number of the model, a whole number (``agents.n``: a uniform
prior draws fractions), a key of a section a fit holds fixed (``world``: the time step and box come
with the tracks; :data:`FIXED_SECTIONS`), a range outside the schema's allowed
range, an empty range or an unbounded one raise :class:`FitError` (one line naming the key and
what is allowed).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import annotated_types
from pydantic import BaseModel

from flocksim.config import MODEL_CLASSES, AnyParams, model_type, to_dict

MAX_PRIORS = 8
"""Most parameters one fit infers at once (ABC on a few hundred simulations does not go further)."""


class FitError(ValueError):
    """Bad input to a fit: one line naming the option or field and what is allowed (CLI exit 2)."""


@dataclass(frozen=True)
class Prior:
    """Uniform prior of one parameter: dotted ``key``, bounds ``low`` < ``high`` [the parameter's unit]."""

    key: str
    low: float
    high: float

    def to_dict(self) -> dict[str, Any]:
        return {"key": self.key, "distribution": "uniform", "low": self.low, "high": self.high}


def schema_range(params: AnyParams, key: str) -> tuple[float, float]:
    """The allowed [low, high] of the numeric parameter ``key`` of ``params``' model (a bound given as
    ``gt``/``lt`` in the schema is returned as is: the prior's open end). FitError for an unknown
    key, a section, or a parameter that is not a number."""
    model: Any = MODEL_CLASSES[params.model]
    parts = key.split(".")
    for depth, part in enumerate(parts):
        if not (isinstance(model, type) and issubclass(model, BaseModel)) or part not in model.model_fields:
            where = ".".join(parts[: depth + 1])
            known = ", ".join(model.model_fields) if isinstance(model, type) and issubclass(model, BaseModel) else ""
            raise FitError(f"--prior {where}: unknown key of the {params.model} model; allowed keys here: {known}")
        field = model.model_fields[part]
        if depth < len(parts) - 1:
            model = model_type(field.annotation)
    data = to_dict(params)
    value = _value_at(data, parts)
    if model_type(field.annotation) is not None or not _is_number(value):
        raise FitError(f"--prior {key}: not a number of the {params.model} model; allowed: {_fittable_hint(data)}")
    if parts[0] in FIXED_SECTIONS:
        raise FitError(f"--prior {key}: not fitted: {FIXED_SECTIONS[parts[0]]}; allowed: {_fittable_hint(data)}")
    if isinstance(value, int):
        raise FitError(
            f"--prior {key}: a whole number, which a fit's uniform prior cannot draw; allowed: {_fittable_hint(data)}"
        )
    low, high = -math.inf, math.inf
    for rule in field.metadata:
        if isinstance(rule, annotated_types.Ge | annotated_types.Gt):
            low = float(rule.ge if isinstance(rule, annotated_types.Ge) else rule.gt)
        elif isinstance(rule, annotated_types.Le | annotated_types.Lt):
            high = float(rule.le if isinstance(rule, annotated_types.Le) else rule.lt)
    return low, high


FIXED_SECTIONS = {
    "world": "the tracks fix the simulated world (time step, box, dimension)",
    "pointer": "the viewer's pointer takes no part in a fit",
    "detail": "the view's detail takes no part in a fit",
    "game": "the game takes no part in a fit",
}
"""Sections whose numbers a fit does not infer, with why."""

HINT_KEYS = 6
"""Fittable keys named in a refusal (then "..." if there are more)."""


def fittable_keys(data: dict[str, Any], prefix: str = "") -> list[str]:
    """The dotted keys of the real-valued (not whole-number) parameters set in ``data`` (as
    :func:`flocksim.config.to_dict` gives them), outside :data:`FIXED_SECTIONS`."""
    keys: list[str] = []
    for name, value in data.items():
        key = f"{prefix}{name}"
        if not prefix and name in FIXED_SECTIONS:
            continue
        if isinstance(value, dict):
            keys.extend(fittable_keys(value, key + "."))
        elif isinstance(value, float):
            keys.append(key)
    return keys


def _fittable_hint(data: dict[str, Any]) -> str:
    keys = fittable_keys(data)
    model = data.get("model")
    mine = [k for k in keys if k.split(".")[0] == model] + [k for k in keys if k.split(".")[0] != model]
    shown = ", ".join(mine[:HINT_KEYS]) + (", ..." if len(mine) > HINT_KEYS else "")
    return f"a real-valued parameter of the {model} model, e.g. {shown}"


def _value_at(data: dict[str, Any], parts: list[str]) -> Any:
    node: Any = data
    for part in parts:
        node = node.get(part) if isinstance(node, dict) else None
    return node


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def parse_prior(text: str, params: AnyParams) -> Prior:
    """``KEY=LO:HI`` or ``KEY`` (uniform over the schema's range) for ``params``' model."""
    key, sep, rng = text.partition("=")
    key = key.strip()
    if not key or any(not p for p in key.split(".")):
        raise FitError(f"--prior {text!r}: expected KEY=LO:HI with a dotted key, e.g. vicsek.eta=0.5:4")
    low, high = schema_range(params, key)
    if sep:
        lo_text, colon, hi_text = rng.partition(":")
        try:
            lo, hi = float(lo_text), float(hi_text)
        except ValueError:
            lo = hi = math.nan
        if not colon or not (math.isfinite(lo) and math.isfinite(hi)):
            raise FitError(f"--prior {text!r}: expected KEY=LO:HI with finite numbers LO < HI, e.g. {key}=0.5:4")
    else:
        lo, hi = low, high
    schema = f"the schema range [{low:g}, {high:g}]"
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise FitError(f"--prior {key}: {schema} is unbounded; allowed: KEY=LO:HI with finite LO < HI")
    if not lo < hi:
        raise FitError(f"--prior {key}: empty range {lo:g}:{hi:g}; allowed: LO < HI within {schema}")
    if lo < low or hi > high:
        raise FitError(f"--prior {key}: {lo:g}:{hi:g} leaves the parameter's range; allowed: within {schema}")
    return Prior(key, lo, hi)


def parse_priors(texts: list[str], params: AnyParams) -> list[Prior]:
    """Every ``--prior``; at least one, at most :data:`MAX_PRIORS`, each key once."""
    if not texts:
        raise FitError("--prior: none given; allowed: one or more KEY=LO:HI, e.g. --prior vicsek.eta=0.5:4")
    if len(texts) > MAX_PRIORS:
        raise FitError(f"--prior: {len(texts)} given; allowed: at most {MAX_PRIORS} parameters in one fit")
    priors = [parse_prior(t, params) for t in texts]
    keys = [p.key for p in priors]
    for k in keys:
        if keys.count(k) > 1:
            raise FitError(f"--prior {k}: given twice; allowed: each parameter once")
    return priors

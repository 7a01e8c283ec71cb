"""A ``set`` message's changes applied to parameters (docs/protocol.md).

The changes are validated against the parameter schema with :func:`flocksim.config.apply_overrides`
(the machinery of ``--set``): each JSON value becomes an exact TOML literal, so the changes apply in
order, unknown keys and bad values get the same one-line messages naming the field and the allowed
values, and ``model`` switches keep the fields the new model knows. A change of ``agents.n``
without one of ``description`` changes the count the description mentions.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from flocksim.config import AnyParams, ConfigError, apply_overrides
from flocksim.viewer.control_errors import ControlError, plain_reason

MAX_CHANGES = 256
"""Most dotted keys in one ``set``."""
MAX_DEPTH = 16
"""Deepest nesting of lists/objects in a ``set`` value."""
_KEY = re.compile(r"[A-Za-z0-9_\-]+(\.[A-Za-z0-9_\-]+)*")


def _toml_string(text: str, key: str) -> str:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ControlError(f"{key}: not valid Unicode text") from None
    out = ['"']
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _toml_literal(value: Any, key: str, depth: int = 0) -> str:
    """The TOML inline literal that reads back as exactly ``value`` (a JSON value)."""
    if depth > MAX_DEPTH:
        raise ControlError(f"{key}: nested deeper than {MAX_DEPTH} levels")
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        if not -(2**63) <= value < 2**63:
            raise ControlError(f"{key}: integer out of range; got {value:.3g}")
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ControlError(f"{key}: must be a finite number (not NaN or inf); got {value!r}")
        return repr(value)
    if isinstance(value, str):
        return _toml_string(value, key)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_literal(v, key, depth + 1) for v in value) + "]"
    if isinstance(value, dict):
        items = (f"{_toml_string(k, key)} = {_toml_literal(v, key, depth + 1)}" for k, v in value.items())
        return "{" + ", ".join(items) + "}"
    if value is None:
        raise ControlError(f"{key}: null is not a value; give a number, true/false, text or a list")
    raise ControlError(f"{key}: unsupported value of type {type(value).__name__}")


def count_text(n: int) -> str:
    """An agent count as the presets' descriptions write it: "500", "2000", and from 10 000 on in
    groups of three digits: "100 000"."""
    text = str(int(n))
    if n < 10_000:
        return text
    groups = []
    while text:
        groups.insert(0, text[-3:])
        text = text[:-3]
    return " ".join(groups)


def follow_count(description: str, old_n: int, new_n: int) -> str:
    """``description`` with its first mention of the agent count ``old_n`` (written "500",
    "100 000" or "100,000", never part of a larger number) changed to ``new_n``: "500 starlings"
    -> "10 000 starlings". Unchanged when it does not mention ``old_n``."""
    if int(old_n) == int(new_n) or not description:
        return description
    digits = str(int(old_n))
    groups = [digits[max(0, i - 3) : i] for i in range(len(digits), 0, -3)][::-1]
    grouped = r"[ ,\u202f]".join(groups) if len(groups) > 1 else None
    pattern = digits if grouped is None else f"(?:{digits}|{grouped})"
    match = re.search(rf"(?<![\d.,])(?<!\d )({pattern})(?![\d]|[.,]\d|[ ,\u202f]\d{{3}})", description)
    if match is None:
        return description
    return description[: match.start(1)] + count_text(new_n) + description[match.end(1) :]


def with_followed_count(before: AnyParams, after: AnyParams, described: bool) -> AnyParams:
    """``after`` with its description following its agent count when the change from ``before``
    set ``agents.n`` and not the description (``described``): :func:`follow_count`."""
    if described or int(before.agents.n) == int(after.agents.n):
        return after
    text = follow_count(after.description or "", int(before.agents.n), int(after.agents.n))
    if text == (after.description or ""):
        return after
    return apply_overrides(after, [f"description={_toml_string(text, 'description')}"])


def apply_changes(params: AnyParams, changes: Mapping[str, Any]) -> AnyParams:
    """``params`` with ``changes`` ({dotted key: JSON value}) applied in order and re-validated;
    :class:`ControlError` naming the field and the allowed values otherwise. A change of
    ``agents.n`` without one of ``description`` changes the count the description mentions
    (:func:`follow_count`: "500 starlings" becomes "10 000 starlings")."""
    if not isinstance(changes, Mapping) or not changes:
        raise ControlError("set: changes must be a non-empty object of {dotted key: value}")
    if len(changes) > MAX_CHANGES:
        raise ControlError(f"set: {len(changes)} changes; at most {MAX_CHANGES} in one message")
    overrides = []
    for key, value in changes.items():
        if not isinstance(key, str) or len(key) > 200 or not _KEY.fullmatch(key):
            raise ControlError(f"set: {str(key)[:80]!r} is not a dotted parameter key, e.g. rules.alignment.weight")
        overrides.append(f"{key}={_toml_literal(value, key)}")
    try:
        return with_followed_count(params, apply_overrides(params, overrides), "description" in changes)
    except ConfigError as exc:
        raise ControlError(str(exc)) from None
    except (ValueError, TypeError, RecursionError) as exc:  # the schema's own checks, whatever their type
        raise ControlError(f"set: invalid change ({plain_reason(exc)})") from None

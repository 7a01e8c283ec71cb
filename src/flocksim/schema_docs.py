"""The parameter reference as a markdown table, generated from the schema
(``flocksim schema --markdown``; docs/parameters.md embeds it)."""

from __future__ import annotations

import json
import typing
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel

from flocksim.config import MODEL_CLASSES


def _submodel(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return None


def _allowed(annotation: Any, description: str) -> str:
    if typing.get_origin(annotation) is typing.Literal:
        return " \\| ".join(str(a) for a in typing.get_args(annotation))
    if "allowed:" in description:
        return description.split("allowed:", 1)[1].strip().rstrip(".")
    return ""


def parameter_rows(model: type[BaseModel], prefix: str = "") -> Iterator[tuple[str, str, str, str, str]]:
    """(dotted key, default, unit, allowed, description) for every leaf field."""
    for name, field in model.model_fields.items():
        key = f"{prefix}{name}"
        sub = _submodel(field.annotation)
        if sub is not None:
            yield from parameter_rows(sub, key + ".")
            continue
        description = field.description or ""
        extra = field.json_schema_extra if isinstance(field.json_schema_extra, dict) else {}
        unit = str(extra.get("unit", ""))
        text = description.split(" [", 1)[0].split("; allowed:", 1)[0].rstrip(".")
        default = field.get_default(call_default_factory=True)
        yield key, json.dumps(default), unit, _allowed(field.annotation, description), text


def markdown_table(model_name: str) -> str:
    """Markdown table of every parameter of one model."""
    lines = ["| key | default | unit | allowed | meaning |", "|---|---|---|---|---|"]
    for key, default, unit, allowed, text in parameter_rows(MODEL_CLASSES[model_name]):
        text = text.replace("|", "\\|")
        lines.append(f"| `{key}` | `{default}` | {unit} | {allowed} | {text} |")
    return "\n".join(lines) + "\n"


def markdown_reference() -> str:
    """One section per model."""
    parts = []
    for name in MODEL_CLASSES:
        parts.append(f'### model = "{name}"\n\n{markdown_table(name)}')
    return "\n".join(parts)

"""`flocksim presets | show | schema`: the shipped presets and the parameter schema."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from flocksim.cli_common import (
    FORCE_HELP,
    Overrides,
    UsageError,
    atomic_output,
    check_output_path,
    fail,
    out,
    resolve_params,
)
from flocksim.config import ConfigError, dumps_toml
from flocksim.params import params_json_schema
from flocksim.scenarios import preset_descriptions


def presets() -> None:
    """List the shipped presets with a one-line description each.

    Example: flocksim presets
    """
    table = Table("preset", "description", box=None, show_header=True)
    for name, description in preset_descriptions().items():
        table.add_row(name, description)
    out.print(table)


def show(
    target: Annotated[str, typer.Argument(help="Preset name or parameter TOML file.")],
    overrides: Overrides = None,
) -> None:
    """Print the full parameters of a preset or file (with overrides) as TOML.

    Example: flocksim show starlings-2d --set agents.n=2000 > my.toml
    """
    try:
        params = resolve_params(target, overrides)
    except ConfigError as exc:
        fail(str(exc))
        return
    sys.stdout.write(dumps_toml(params))


def schema(
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write to this file instead of standard output ('-').")
    ] = None,
    markdown: Annotated[bool, typer.Option("--markdown", help="A markdown table per model instead of JSON.")] = False,
    force: Annotated[bool, typer.Option("--force", help=FORCE_HELP)] = False,
) -> None:
    """Export the JSON Schema of every parameter (units and ranges included).

    Example: flocksim schema -o params.schema.json
    """
    if markdown:
        from flocksim.schema_docs import markdown_reference

        text = markdown_reference()
    else:
        text = json.dumps(params_json_schema(), indent=2) + "\n"
    try:
        check_output_path("--output", output, force=force, stdout_ok=True)
    except UsageError as exc:
        fail(str(exc))
    with atomic_output(output if output is not None else Path("-")) as handle:
        handle.write(text)


def register(app: typer.Typer) -> None:
    app.command()(presets)
    app.command()(show)
    app.command()(schema)

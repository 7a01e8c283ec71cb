"""The ``flocksim`` command line: the app, the helpers every command shares (one-line errors with
exit status 2, outputs written whole), and the command modules ``cli_*.py`` registered in order."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from flocksim.atomic import OutputError, atomic_open, check_output
from flocksim.budgets import BudgetError
from flocksim.config import AnyParams, apply_overrides, load_toml
from flocksim.scenarios import load_preset

# click's exception base, found through typer's public BadParameter (click is vendored in newer typers)
_ClickError = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")


@contextmanager
def _one_line_usage_errors():
    """Errors found while parsing the command line (bad option value, unknown option or
    command, missing argument) print as one line, like flocksim's own checks; so does a size
    budget exceeded while a command runs (exit status 2)."""
    try:
        yield
    except _ClickError as exc:
        if type(exc).__name__ == "NoArgsIsHelpError":
            raise
        err.print(f"error: {exc.format_message()}", markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(exc.exit_code) from None
    except BudgetError as exc:
        err.print(f"error: {exc}", markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None


class _OneLineErrors(typer.core.TyperGroup):
    def make_context(self, *args, **kwargs):
        with _one_line_usage_errors():
            return super().make_context(*args, **kwargs)

    def invoke(self, ctx):
        with _one_line_usage_errors():
            return super().invoke(ctx)


app = typer.Typer(
    cls=_OneLineErrors,
    name="flocksim",
    help="Simulate flocks, schools, crowds and swarms. Example: flocksim run starlings-2d --steps 600",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
out = Console()
err = Console(stderr=True)

Overrides = Annotated[
    list[str] | None,
    typer.Option("--set", help="Override a parameter, e.g. --set rules.alignment.weight=0.5 (repeatable)."),
]


class UsageError(Exception):
    """Bad input found by flocksim itself: printed as one line, exit status 2."""


def fail(message: str) -> None:
    err.print(f"error: {message}", markup=False, highlight=False, soft_wrap=True)
    raise typer.Exit(2)


def resolve_params(target: str, overrides: list[str] | None) -> AnyParams:
    """A preset name or a TOML file, with dotted overrides applied."""
    path = Path(target)
    params = load_toml(path) if target.endswith(".toml") or path.is_file() else load_preset(target)
    return apply_overrides(params, overrides or [])


@contextmanager
def atomic_output(path: Path | None):
    """A text handle for ``path`` (None: no handle), written as :func:`flocksim.atomic.atomic_open`
    does: ``-`` is standard output, a FIFO or device is written straight into, a file (or the
    file a link points to) is replaced only if the block succeeds."""
    if path is None:
        yield None
        return
    with atomic_open(path, "w", newline="", encoding="utf-8") as handle:
        yield handle


def check_output_path(option: str, path: Path | None, stdout_ok: bool = False) -> None:
    """Refuse an output path that cannot be written (see :func:`flocksim.atomic.check_output`)."""
    try:
        check_output(option, path, stdout_ok=stdout_ok)
    except OutputError as exc:
        raise UsageError(str(exc)) from None


# the commands, one module a group, registered in the order `flocksim --help` lists them
from flocksim import cli_run  # noqa: E402  (registers `flocksim run`)

cli_run.register(app)

from flocksim import cli_presets  # noqa: E402  (registers `flocksim presets`, `show`, `schema`)

cli_presets.register(app)

from flocksim import cli_sweep  # noqa: E402  (registers `flocksim sweep`, `plot`)

cli_sweep.register(app)

from flocksim import cli_store  # noqa: E402  (registers `flocksim render`, `info`)

cli_store.register(app)

from flocksim import cli_experiment  # noqa: E402  (registers `flocksim experiment`)

cli_experiment.register(app)

from flocksim import cli_bench  # noqa: E402  (registers `flocksim bench`)

cli_bench.register(app)

from flocksim import cli_validate  # noqa: E402  (registers `flocksim validate`)

cli_validate.register(app)

from flocksim import cli_serve  # noqa: E402  (registers `flocksim serve`)

cli_serve.register(app)

from flocksim import cli_tracks  # noqa: E402  (registers `flocksim analyze` and `flocksim export`)

cli_tracks.register(app)


def main() -> None:
    app()


if __name__ == "__main__":  # pragma: no cover
    main()

"""The ``flocksim`` command line: the app (one-line usage errors, exit status 2) and the command
modules ``cli_*.py`` registered in the order ``flocksim --help`` lists them; the helpers they share
are in :mod:`flocksim.cli_common`."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Annotated

import typer

from flocksim._extras import MissingExtraError
from flocksim.budgets import BudgetError

# the shared helpers, also importable from here
from flocksim.cli_common import UsageError as UsageError
from flocksim.cli_common import check_output_path as check_output_path
from flocksim.cli_common import err
from flocksim.cli_common import fail as fail
from flocksim.cli_common import out as out

# click's exception base, found through typer's public BadParameter (click is vendored in newer typers)
_ClickError = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")


@contextmanager
def _one_line_usage_errors():
    """Errors found while parsing the command line (bad option value, unknown option or
    command, missing argument) print as one line, like flocksim's own checks; so do a size
    budget exceeded while a command runs and a missing extra (exit status 2)."""
    try:
        yield
    except _ClickError as exc:
        if type(exc).__name__ == "NoArgsIsHelpError":
            raise
        err.print(f"error: {exc.format_message()}", markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(exc.exit_code) from None
    except (BudgetError, MissingExtraError) as exc:
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


def _print_version(value: bool) -> None:
    if value:
        from flocksim import __version__

        out.print(f"flocksim {__version__}", markup=False, highlight=False)
        raise typer.Exit()


@app.callback()
def _options(
    version: Annotated[
        bool,
        typer.Option(
            "--version", "-V", callback=_print_version, is_eager=True, help="Print flocksim's version and exit."
        ),
    ] = False,
) -> None:
    """The options given before a command (the app's help is Typer's help= above)."""


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

from flocksim import cli_fit  # noqa: E402  (registers `flocksim fit`)

cli_fit.register(app)

from flocksim import cli_compile  # noqa: E402  (registers `flocksim compile`)

cli_compile.register(app)


def main() -> None:
    app()


if __name__ == "__main__":  # pragma: no cover
    main()

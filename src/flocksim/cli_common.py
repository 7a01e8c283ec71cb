"""What every ``flocksim`` command shares: the consoles, one-line errors (exit status 2), the
``--set`` option, parameters from a preset or a file, and outputs written whole."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from flocksim.atomic import OutputError, atomic_open, check_output
from flocksim.config import AnyParams, apply_overrides, load_toml
from flocksim.scenarios import load_preset

out = Console()
err = Console(stderr=True)


def no_bar(quiet: bool, console: Console) -> bool:
    """Whether a progress bar on ``console`` stays off: with ``--quiet``, or when the console is not
    a terminal (a pipe, a log file), where nobody watches it move and rich's live display would
    leave an empty line per bar."""
    return quiet or not console.is_terminal


ENGINE_HELP = "Engine: cpu | cuda (an NVIDIA GPU; pip install 'flocksim\\[cuda]', docs/gpu.md)."
"""The --engine help. Help text is rich markup, which takes an unescaped ``[cuda]`` for a tag and drops it:
a literal bracket is written ``\\[`` (tests/test_install.py checks every help text)."""

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


FORCE_HELP = "Replace an output file that exists (default: refuse it, exit status 2)."
"""The --force help of every command that writes a result."""


def check_output_path(option: str, path: Path | None, *, force: bool, stdout_ok: bool = False) -> None:
    """Refuse an output path that cannot be written (see :func:`flocksim.atomic.check_output`),
    and, without ``force`` (a command's ``--force``), one that already names a file: one
    policy for every command, so a result already written is never lost to a re-run."""
    try:
        check_output(option, path, stdout_ok=stdout_ok, replace=force)
    except OutputError as exc:
        raise UsageError(str(exc)) from None

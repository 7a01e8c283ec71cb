"""The viewer's refusals: one line each, for the page (docs/protocol.md)."""

from __future__ import annotations

import json

MAX_ERROR_CHARS = 500
"""Error messages are cut to this many characters."""


class ControlError(ValueError):
    """An invalid control message; ``str(exc)`` is one line to show in the page."""

    def __init__(self, message: str):
        super().__init__(_one_line(message))


def _one_line(message: str) -> str:
    text = " ".join(str(message).split())
    return text if len(text) <= MAX_ERROR_CHARS else text[: MAX_ERROR_CHARS - 3] + "..."


def plain_reason(exc: BaseException) -> str:
    """Why a change was refused, in words: the exception's message on one line, without Python's
    type name (nesting too deep to handle said as such)."""
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    text = " ".join(str(exc).split())
    return text[:300] if text else "refused by the parameter schema"


def error_reply(message: str) -> str:
    """The JSON text the server sends back for a rejected message: {"type": "error", "message": ...}."""
    return json.dumps({"type": "error", "message": _one_line(message)})

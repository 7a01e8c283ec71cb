"""A griffe extension for the API reference: Sphinx roles in docstrings shown as code.

The docstrings cross-reference with Sphinx roles (:class:`Recorder`, :func:`flocksim.io.open_run`,
:meth:`text <target>`), which Markdown would print as they are. This rewrites each role into an
inline code span of its text when mkdocstrings loads the package (mkdocs.yml, ``extensions``).
"""

from __future__ import annotations

import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:py:)?(?:mod|class|func|meth|attr|data|obj|exc):`~?([^`<]+?)(?:\s*<[^`>]+>)?`")
"""A role with its text, optionally followed by an explicit ``<target>``."""


def plain_roles(text: str) -> str:
    """``text`` with every Sphinx role replaced by an inline code span of its text."""
    return ROLE.sub(lambda m: f"`{m.group(1).strip()}`", text)


class SphinxRoles(griffe.Extension):
    """Rewrites the roles of every docstring as griffe loads it."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = plain_roles(obj.docstring.value)

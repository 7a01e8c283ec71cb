"""Which protocol version a viewer client reads (docs/protocol.md, "Versions").

A client names the frame version it reads in the socket's query, ``/ws?protocol=2&...``; the
page does. The server answers a client that names another version, or none (a version-1 client,
written before the query parameter existed), with one ``error`` message saying so and closes the
socket with :data:`CLOSE_PROTOCOL`, before it builds a simulation or sends a frame: such a client
would misread every frame.
"""

from __future__ import annotations

from collections.abc import Sequence

from flocksim.viewer.protocol import VERSION

QUERY_KEY = "protocol"
"""Socket query parameter naming the frame version the client reads."""
CLOSE_PROTOCOL = 1002
"""WebSocket close code after refusing a client's version: protocol error."""


def version_refusal(asked: Sequence[str]) -> str | None:
    """The ``error`` text for a client whose query gave ``asked`` as ``protocol`` values (all of
    them, in order), or None when it reads this server's version."""
    if list(asked) == [str(VERSION)]:
        return None
    if not asked:
        said = f"did not name a version (a version-1 client; {QUERY_KEY}=N in the socket query names one)"
    elif len(asked) > 1:
        said = f"named {QUERY_KEY} {len(asked)} times; allowed: once"
    else:
        said = f"reads version {asked[0][:20]!r}"
    return (
        f"{QUERY_KEY}: this server sends viewer protocol version {VERSION} (docs/protocol.md) and the client "
        f"{said}; allowed: {QUERY_KEY}={VERSION}. Reload the page (it may be an old copy) or update the client"
    )


__all__ = ["CLOSE_PROTOCOL", "QUERY_KEY", "version_refusal"]

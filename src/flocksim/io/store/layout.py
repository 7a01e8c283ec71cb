"""The trajectory store's layout: its format, arrays and chunks, and the words for what is wrong with one.

The names, dimensions and attributes the store's arrays have are described in
:mod:`flocksim.io.store` (and docs/data.md); this module holds the constants they are built from,
the per-frame variable description (:class:`FrameVariable`), the codecs every chunk is written
with (Blosc, then a CRC-32C checksum), zarr's configuration for writing every chunk, and
:class:`TrajectoryError` with the phrases its messages use.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import os
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FORMAT = "flocksim-trajectory"
FORMAT_VERSION = 2
"""2: every chunk written, CRC-32C per chunk, checkpoint checksums; 1: none of these (read only)."""
CORE_FRAME_VARIABLES = ("position", "velocity", "alive")
COORDINATES = ("time", "step", "agent", "space")
CHECKPOINT_GROUP = "checkpoints"
CHECKPOINT_RECORD = "checkpoints_kept"
"""Root attribute: the checkpoints the store keeps, as written ([{"name", "steps"}], oldest first).
:meth:`TrajectoryStore.verify` finds a recorded checkpoint that is gone; stores written before
flocksim recorded it cannot tell a deleted checkpoint from none."""
CHUNK_BYTES = 4 * 2**20  # aim for about 4 MiB per chunk of position
MAX_CHUNK_FRAMES = 256


class TrajectoryError(ValueError):
    """A store that cannot be read or written as a flocksim trajectory: one line naming the
    path, what is wrong and what is allowed."""


@dataclass(frozen=True)
class FrameVariable:
    """A per-frame, per-agent variable: dims ``("time", "agent", *tail)``, ``tail`` of sizes
    ``tail_shape``; ``fill`` is what frames before an agent's birth (or after its removal) read."""

    name: str
    dtype: str
    fill: Any
    tail: tuple[str, ...] = ()
    tail_shape: tuple[int, ...] = ()
    attrs: dict[str, Any] | None = None


@contextlib.contextmanager
def quiet_zarr() -> Iterator[None]:
    """zarr warns that consolidated metadata is not yet in the v3 spec (flocksim relies on
    zarr-python and xarray reading it, which they do) and that variable-length strings have
    no v3 spec yet (the ``space`` labels)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Consolidated metadata is currently not part")
        warnings.filterwarnings("ignore", message=".*does not have a Zarr V3 specification")
        yield


def _compressors(text: bool = False):
    """Blosc (zstd, level 1, byte shuffle; none for text) followed by a CRC-32C of each chunk."""
    from zarr.codecs import BloscCodec, Crc32cCodec

    return ([] if text else [BloscCodec(cname="zstd", clevel=1, shuffle="shuffle")]) + [Crc32cCodec()]


WRITE_EVERY_CHUNK = {"write_empty_chunks": True}
"""Zarr array config: a chunk holding only fill values is written too, so a missing one is damage."""


@contextlib.contextmanager
def writing_every_chunk() -> Iterator[None]:
    """Arrays opened inside write every chunk (zarr resolves an array's config when it opens it)."""
    import zarr

    with zarr.config.set({"array.write_empty_chunks": True}):
        yield


def utc_now() -> str:
    return _dt.datetime.now(_dt.UTC).replace(microsecond=0).isoformat()


def disk_usage(path: str | Path) -> int:
    """Bytes of the regular files below ``path``."""
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.stat(os.path.join(root, name)).st_size
    return total


def _decode_problem(exc: BaseException) -> str:
    """What a failed chunk read means, in words."""
    if "checksum" in str(exc).lower():
        return "a chunk fails its CRC-32C checksum (corrupted or truncated)"
    return f"data cannot be read ({_first_line(exc)})"


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


NOT_OURS = "allowed: a trajectory store written by `flocksim run --out` or flocksim.io.Recorder"


def _why_unreadable(root: Path) -> str:
    """Why a store's root ``zarr.json`` cannot be opened, in words (no library's message)."""
    try:
        meta = json.loads(root.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return "damaged or foreign store (its zarr.json is not readable JSON)"
    if not isinstance(meta, dict) or meta.get("zarr_format") != 3 or meta.get("node_type") != "group":
        return "not a Zarr v3 group (a foreign store, or its zarr.json is damaged)"
    attrs = meta.get("attributes") if isinstance(meta.get("attributes"), dict) else {}
    if attrs.get("flocksim_format") != FORMAT:
        return "not a flocksim trajectory (a Zarr store without flocksim's attributes)"
    return "damaged store: its zarr.json does not list the store's arrays as flocksim writes them"


OLDER = (
    "it was written by an older flocksim (trajectory format 1), which left out chunks holding only fill values, "
    "so a missing chunk cannot be told from an empty one"
)

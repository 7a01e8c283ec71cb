"""Checks that a trajectory store holds what its metadata promises (see docs/data.md).

Zarr reads a missing chunk as the array's fill value (NaN positions, ``alive`` false, step
-1) without a word, so a deleted chunk would pass for data. Stores of format 2 write every
chunk, fill values included, and guard each chunk with a CRC-32C checksum (zarr's crc32c
codec, checked on every decode), so that:

- :func:`missing_chunk` finds a chunk that must exist and does not (a listing of the array's
  folder, no data read);
- a chunk whose bytes changed fails to decode, naming itself;
- :func:`checkpoint_checksum` fingerprints a checkpoint: its arrays (dtype, shape, bytes),
  its JSON tree and its step, frame and agent counts, so an edited attribute or a chunk
  rewritten with other values is found too.

Stores of format 1 (written by older flocksim) left out chunks holding only fill values, and
their checkpoints carry no checksum: a missing chunk there cannot be told from an empty one.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

CHECKSUM_PREFIX = "sha256:"


def chunk_grid(shape: Sequence[int], chunks: Sequence[int]) -> tuple[int, ...]:
    """Chunks per axis of an array of ``shape`` cut into ``chunks``."""
    return tuple(math.ceil(s / c) if c else 0 for s, c in zip(shape, chunks, strict=True))


def chunk_keys(grid: Sequence[int], encode: Any, ranges: Sequence[range] | None = None) -> Iterator[str]:
    """Storage keys (e.g. ``c/0/1/0``) of the chunks of ``grid``, or of the chunk ``ranges`` per axis;
    ``encode`` is the array's ``metadata.chunk_key_encoding.encode_chunk_key``."""
    axes = ranges if ranges is not None else [range(n) for n in grid]
    for coords in itertools.product(*axes):
        yield encode(tuple(coords))


def stored_keys(folder: Path) -> set[str]:
    """Keys of the chunk files under an array's ``folder`` (relative, ``/``-separated)."""
    keys = set()
    for root, _dirs, files in os.walk(folder):
        rel = os.path.relpath(root, folder)
        for name in files:
            if name == "zarr.json" or name.endswith(".partial"):
                continue
            keys.add(name if rel == "." else f"{rel}/{name}".replace(os.sep, "/"))
    return keys


def missing_chunk(folder: Path, keys: Iterator[str]) -> str | None:
    """The first of ``keys`` with no file under ``folder``, or None."""
    present = stored_keys(folder)
    return next((key for key in keys if key not in present), None)


def checkpoint_checksum(tree: str, steps: int, frames: int, agents: int, arrays: Sequence[np.ndarray]) -> str:
    """``sha256:<hex>`` of a checkpoint: counts, JSON tree and every array's dtype, shape and bytes."""
    digest = hashlib.sha256()
    head = {"steps": int(steps), "frames": int(frames), "agents": int(agents), "tree": tree}
    digest.update(json.dumps(head, sort_keys=True).encode())
    for value in arrays:
        value = np.ascontiguousarray(value)
        digest.update(f"|{value.dtype.str}|{value.shape}|".encode())
        digest.update(value.tobytes())
    return CHECKSUM_PREFIX + digest.hexdigest()


def array_paths(tree: Any, where: str = "") -> dict[int, str]:
    """Where each array of a checkpoint's JSON tree sits ({0: "state.position", ...}), for messages."""
    found: dict[int, str] = {}
    if isinstance(tree, dict):
        if len(tree) == 1 and next(iter(tree)) in ("$array", "$scalar"):
            found[int(next(iter(tree.values())))] = where or "checkpoint"
            return found
        for key, value in tree.items():
            found.update(array_paths(value, f"{where}.{key}" if where and not key.startswith("$") else where or key))
    elif isinstance(tree, list):
        for i, value in enumerate(tree):
            found.update(array_paths(value, f"{where}[{i}]"))
    return found

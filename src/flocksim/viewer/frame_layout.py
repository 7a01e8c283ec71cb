"""The viewer frame's layout: header, section sizes and offsets, flag bits, status fields
(docs/protocol.md). :mod:`flocksim.viewer.protocol` encodes and decodes frames with these and
re-exports every name here.

A frame is little-endian: a 96-byte header, then positions, headings, one flag byte per entry,
the status values and, where the header's ``sections`` field says so, optional sections (the
agents' bank angles: :data:`SECTION_BANK`), each starting on an 8-byte boundary (zero padding).
"""

from __future__ import annotations

import struct
from typing import Literal

MAGIC = b"FLKF"
"""First four bytes of every frame."""
VERSION = 2
"""Protocol version: bumped on any change an old reader would misread (2: two-byte q16 headings)."""
HEADER = struct.Struct("<4sHHBBHIIIQQd3d3d")
"""magic, version, header_size, layout, dim, n_status, n_entries, n_agents, sections, frame_index,
step, time [s], bbox_min (3) [units], bbox_max (3) [units]."""
HEADER_SIZE = HEADER.size  # 96

Layout = Literal["f32", "q16"]
LAYOUTS: dict[str, int] = {"f32": 0, "q16": 1}
"""Layout name -> layout id in the header."""
LAYOUT_NAMES: dict[int, str] = {v: k for k, v in LAYOUTS.items()}
Q16_THRESHOLD = 20_000
"""Frames with more entries than this use the q16 layout (f32 below: 25 bytes per 3D entry, <= 0.5 MB)."""
Q16_STEPS = 65535
"""Quantization steps over the bounding box per axis (uint16 0..65535)."""
HEADING_SCALE = 127
"""2D q16 heading: int8 component = round(unit component x 127); 3D: octahedral codes at the same scale."""
Q16_HEADING_BYTES = 2
"""Bytes per heading in the q16 layout (both dims)."""

SECTION_BANK = 1 << 0
"""Header ``sections`` bit: the frame ends with a bank section (the agents' bank angles, not the extras')."""
SECTIONS_KNOWN = SECTION_BANK
"""The ``sections`` bits this reader knows; a frame with another bit set is refused."""
BANK_LEVELS = 7
"""Bank codes per side: a bird's bank b [rad] is sent as the 4-bit code round(b / range x 7),
clipped to -7..7 (range: the section's own float64, the model's largest bank), two birds a byte."""
BANK_RANGE_BYTES = 8
"""The bank section begins with its range [rad] as a float64, then the 4-bit codes."""

FLAG_SELECTED = 1 << 0
"""The selected agent (agent 0 unless the server selects another)."""
FLAG_NEIGHBOR = 1 << 1
"""One of the selected agent's 7 nearest alive agents."""
FLAG_TURNING = 1 << 2
"""An agent turning in a spontaneous turn during the last step."""
FLAG_PREDATOR = 1 << 3
"""A predator (extra entry)."""
FLAG_OBSTACLE = 1 << 4
"""An obstacle (extra entry): circle centre, segment midpoint (heading along a -> b) or box centre."""
FLAG_TARGET = 1 << 5
"""A seek target (extra entry)."""
NEIGHBORS_SHOWN = 7
"""How many nearest agents of the selected one are flagged."""

STATUS_FIELDS: tuple[str, ...] = ("polarization", "mean_neighbors", "caught", "remaining", "steps_per_second")
"""Status values, float64, in this order; later versions may append more (readers ignore extras)."""


def _pad8(n: int) -> int:
    return (n + 7) & ~7


def section_offsets(n: int, dim: int, layout: Layout, n_status: int = len(STATUS_FIELDS)) -> tuple[int, ...]:
    """Byte offsets (positions, headings, flags, status, end) of a frame of ``n`` entries without
    optional sections (a bank section starts at the end given here: :func:`bank_offsets`)."""
    position_bytes, heading_bytes = (4, 4 * dim) if layout == "f32" else (2, Q16_HEADING_BYTES)
    positions = HEADER_SIZE
    headings = positions + _pad8(n * dim * position_bytes)
    flags = headings + _pad8(n * heading_bytes)
    status = flags + _pad8(n)
    return positions, headings, flags, status, status + 8 * n_status


def bank_bytes(n_agents: int) -> int:
    """Bytes of a bank section of ``n_agents`` birds: the range, then half a byte per bird, padded to 8."""
    return BANK_RANGE_BYTES + _pad8((n_agents + 1) // 2)


def bank_offsets(end: int, n_agents: int, sections: int) -> tuple[int, int]:
    """(bank section offset, frame end) after the sections ending at ``end``: the bank section
    (:func:`bank_bytes`) when ``sections`` has :data:`SECTION_BANK`, else (end, end)."""
    if sections & SECTION_BANK:
        return end, end + bank_bytes(n_agents)
    return end, end


def frame_size(
    n: int, dim: int, layout: Layout, n_status: int = len(STATUS_FIELDS), n_agents: int = 0, sections: int = 0
) -> int:
    """Bytes of a frame of ``n`` entries (agents + extras). 3D q16: 9 bytes per entry + 136 at most;
    a bank section (``sections`` = :data:`SECTION_BANK`) adds ``n_agents`` / 2 bytes + 15 at most."""
    if layout not in LAYOUTS:
        raise ValueError(f"layout: unknown layout {layout!r}; allowed: {', '.join(LAYOUTS)}")
    return bank_offsets(section_offsets(n, dim, layout, n_status)[-1], n_agents, sections)[1]


def choose_layout(n: int) -> Layout:
    """``"q16"`` for more than :data:`Q16_THRESHOLD` entries, else ``"f32"``."""
    return "q16" if n > Q16_THRESHOLD else "f32"


__all__ = [
    "BANK_LEVELS",
    "BANK_RANGE_BYTES",
    "FLAG_NEIGHBOR",
    "FLAG_OBSTACLE",
    "FLAG_PREDATOR",
    "FLAG_SELECTED",
    "FLAG_TARGET",
    "FLAG_TURNING",
    "HEADER",
    "HEADER_SIZE",
    "HEADING_SCALE",
    "LAYOUTS",
    "LAYOUT_NAMES",
    "MAGIC",
    "NEIGHBORS_SHOWN",
    "Q16_HEADING_BYTES",
    "Q16_STEPS",
    "Q16_THRESHOLD",
    "SECTIONS_KNOWN",
    "SECTION_BANK",
    "STATUS_FIELDS",
    "VERSION",
    "Layout",
    "bank_bytes",
    "bank_offsets",
    "choose_layout",
    "frame_size",
    "section_offsets",
]

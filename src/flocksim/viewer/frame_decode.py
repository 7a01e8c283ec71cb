"""Reading a viewer frame (docs/protocol.md): :func:`decode_frame` and the :class:`Frame` it
returns; a malformed frame raises :class:`ProtocolError` naming what is wrong. Importable from
:mod:`flocksim.viewer.protocol` too."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from flocksim.kernels.octahedral import decode_octahedral
from flocksim.metrics.order import unit_headings
from flocksim.viewer.frame_layout import (
    BANK_LEVELS,
    BANK_RANGE_BYTES,
    HEADER,
    HEADER_SIZE,
    HEADING_SCALE,
    LAYOUT_NAMES,
    MAGIC,
    Q16_HEADING_BYTES,
    Q16_STEPS,
    SECTION_BANK,
    SECTIONS_KNOWN,
    STATUS_FIELDS,
    VERSION,
    Layout,
    bank_offsets,
    section_offsets,
)


class ProtocolError(ValueError):
    """A frame that cannot be decoded: the message says which part is wrong."""


@dataclass(frozen=True)
class Frame:
    """A decoded frame. Entries ``[0, n_agents)`` are agents, the rest extras (predators, obstacles,
    targets). ``positions`` (n, dim) [units] and ``headings`` (n, dim) unit vectors (zero for an
    entry without a heading) are float64; q16 values are dequantized and the headings renormalized."""

    version: int
    layout: Layout
    dim: int
    frame_index: int
    step: int
    time: float
    n_agents: int
    bbox_min: np.ndarray
    bbox_max: np.ndarray
    positions: np.ndarray
    headings: np.ndarray
    flags: np.ndarray
    status: np.ndarray
    bank: np.ndarray | None = None
    """(n_agents,) float64 bank angles [rad] (positive: rolled toward the side h x up), dequantized
    (code x bank_range / 7); None when the frame has no bank section."""
    bank_range: float = 0.0
    """The bank section's range [rad] (its codes' +-7); 0 without a bank section."""

    @property
    def n(self) -> int:
        """Entries (agents + extras) = flag bytes."""
        return int(self.flags.shape[0])

    @property
    def status_dict(self) -> dict[str, float]:
        """The status values this reader knows, by name (see :data:`STATUS_FIELDS`)."""
        return {name: float(v) for name, v in zip(STATUS_FIELDS, self.status, strict=False)}

    def having(self, flag: int) -> np.ndarray:
        """Indices of the entries with ``flag`` set, ascending."""
        return np.flatnonzero(self.flags & flag)


def decode_frame(data: bytes | bytearray | memoryview) -> Frame:
    """Read a frame; any malformed input raises :class:`ProtocolError` naming what is wrong.

    Accepts header sizes above 96 (later fields are skipped), more status values than this reader
    knows and unknown flag bits; rejects a wrong magic or version, an unknown layout, a dim other
    than 2 or 3, an unknown ``sections`` bit, a length that disagrees with the header, and
    non-finite time, box, positions or headings (status values may be NaN)."""
    try:
        view = memoryview(data).cast("B")
    except (TypeError, ValueError) as exc:
        raise ProtocolError(f"frame: expected bytes, got {type(data).__name__} ({exc})") from None
    size = view.nbytes
    if size < HEADER_SIZE:
        raise ProtocolError(f"frame: {size} bytes is shorter than the {HEADER_SIZE}-byte header")
    (magic, version, header_size, layout_id, dim, n_status, n, n_agents, sections,
     frame_index, step, time, *box) = HEADER.unpack_from(view, 0)  # fmt: skip
    if magic != MAGIC:
        raise ProtocolError(f"frame: bad magic {magic!r}; expected {MAGIC!r} (not a flocksim frame)")
    if version != VERSION:
        raise ProtocolError(f"frame: unsupported protocol version {version}; this reader reads version {VERSION}")
    if header_size < HEADER_SIZE or header_size % 8:
        raise ProtocolError(f"frame: header_size {header_size}; allowed: a multiple of 8, >= {HEADER_SIZE}")
    if layout_id not in LAYOUT_NAMES:
        raise ProtocolError(f"frame: unknown layout id {layout_id}; allowed: 0 (f32), 1 (q16)")
    layout: Layout = LAYOUT_NAMES[layout_id]  # type: ignore[assignment]
    if dim not in (2, 3):
        raise ProtocolError(f"frame: dim {dim}; allowed: 2, 3")
    if n_agents > n:
        raise ProtocolError(f"frame: n_agents {n_agents} exceeds the {n} entries")
    if sections & ~SECTIONS_KNOWN:
        raise ProtocolError(f"frame: unknown sections bits {sections:#x}; this reader knows {SECTIONS_KNOWN:#x} (bank)")
    offsets = [o - HEADER_SIZE + header_size for o in section_offsets(n, dim, layout, n_status)]
    o_bank, end = bank_offsets(offsets[-1], n_agents, sections)
    if size != end:
        bank_note = ", a bank section" if sections & SECTION_BANK else ""
        raise ProtocolError(
            f"frame: {size} bytes, but the header ({n} entries, dim {dim}, layout {layout}, "
            f"{n_status} status values{bank_note}) needs {end}"
        )
    lo = np.array(box[:3], dtype=np.float64)[:dim]
    hi = np.array(box[3:], dtype=np.float64)[:dim]
    if not (math.isfinite(time) and np.isfinite(lo).all() and np.isfinite(hi).all()):
        raise ProtocolError("frame: time or bounding box is not finite")
    count = n * dim
    if layout == "f32":
        positions = np.frombuffer(view, "<f4", count, offsets[0]).astype(np.float64).reshape(n, dim)
        headings = np.frombuffer(view, "<f4", count, offsets[1]).astype(np.float64).reshape(n, dim)
        if not (np.isfinite(positions).all() and np.isfinite(headings).all()):
            raise ProtocolError("frame: positions or headings hold NaN or inf")
    else:
        if (lo > hi).any() or not np.isfinite(hi - lo).all():
            raise ProtocolError(f"frame: bounding box min {lo.tolist()}, max {hi.tolist()}; need finite max - min >= 0")
        q = np.frombuffer(view, "<u2", count, offsets[0]).reshape(n, dim)
        positions = lo + q * ((hi - lo) / Q16_STEPS)
        codes = np.frombuffer(view, "i1", n * Q16_HEADING_BYTES, offsets[1]).reshape(n, Q16_HEADING_BYTES)
        if dim == 3:
            headings = decode_octahedral(codes)
        else:
            raw = codes.astype(np.float64) / HEADING_SCALE
            headings = unit_headings(raw) if n else raw
    flags = np.frombuffer(view, "u1", n, offsets[2]).copy()
    status = np.frombuffer(view, "<f8", n_status, offsets[3]).copy()
    bank = None
    span = 0.0
    if sections & SECTION_BANK:
        span = float(np.frombuffer(view, "<f8", 1, o_bank)[0])
        if not 0.0 < span <= math.pi:
            raise ProtocolError(f"frame: bank range {span}; allowed: more than 0 up to pi")
        bank = unpack_bank_codes(np.frombuffer(view, "u1", (n_agents + 1) // 2, o_bank + BANK_RANGE_BYTES), n_agents)
        bank = bank * (span / BANK_LEVELS)
    return Frame(
        version=version,
        layout=layout,
        dim=dim,
        frame_index=frame_index,
        step=step,
        time=time,
        n_agents=n_agents,
        bbox_min=lo,
        bbox_max=hi,
        positions=positions,
        headings=headings,
        flags=flags,
        status=status,
        bank=bank,
        bank_range=span,
    )


def unpack_bank_codes(packed: np.ndarray, n: int) -> np.ndarray:
    """The ``n`` int8 codes of a bank section's bytes (4-bit two's complement, low half first)."""
    nibbles = np.empty(2 * len(packed), dtype=np.uint8)
    nibbles[0::2] = packed & 0x0F
    nibbles[1::2] = packed >> 4
    codes = nibbles[:n].astype(np.int8)
    codes[codes >= 8] -= 16
    return codes


__all__ = ["Frame", "ProtocolError", "decode_frame", "unpack_bank_codes"]

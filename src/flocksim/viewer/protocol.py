"""The viewer's binary frame: one snapshot of a simulation, sent server -> browser (docs/protocol.md).

A frame is little-endian: a 96-byte header, then positions, headings, one flag byte per entry
and the status values, each section starting on an 8-byte boundary (zero padding), so a
JavaScript client can view every section as a typed array without copying.

Entries: the alive agents in stable-id order (ids are not sent; the selected agent is flagged),
then extra entries that are not agents: predators, obstacles, seek targets (their flag bit set).

Layouts: ``"f32"`` sends float32 positions [units] and float32 unit headings; ``"q16"`` sends
positions as uint16 quantized over the header's bounding box (error <= half a step per axis,
extent / 65535 / 2) and each heading in two bytes: in 3D octahedral
(:mod:`flocksim.kernels.octahedral`, angle error <= 0.96 degrees), in 2D its two components
x 127 as int8 (angle error <= asin(sqrt(2) / 254) = 0.319 degrees). :func:`choose_layout` picks
q16 above :data:`Q16_THRESHOLD` entries.

Version 2 differs from version 1 only in the q16 headings (version 1: ``dim`` int8 components
per entry). A client names the version it reads in the socket query (``protocol=2``,
:mod:`flocksim.viewer.versions`); others get one ``error`` and the socket closes.
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from flocksim.kernels.octahedral import decode_octahedral
from flocksim.kernels.octahedral import encode as encode_octahedral
from flocksim.metrics.order import polarization, unit_headings

if TYPE_CHECKING:
    from collections.abc import Sequence

    from flocksim.simulation import Simulation

MAGIC = b"FLKF"
"""First four bytes of every frame."""
VERSION = 2
"""Protocol version: bumped on any change an old reader would misread (2: two-byte q16 headings)."""
HEADER = struct.Struct("<4sHHBBHIIIQQd3d3d")
"""magic, version, header_size, layout, dim, n_status, n_entries, n_agents, reserved, frame_index,
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


def _pad8(n: int) -> int:
    return (n + 7) & ~7


def section_offsets(n: int, dim: int, layout: Layout, n_status: int = len(STATUS_FIELDS)) -> tuple[int, ...]:
    """Byte offsets (positions, headings, flags, status, end) of a frame of ``n`` entries."""
    position_bytes, heading_bytes = (4, 4 * dim) if layout == "f32" else (2, Q16_HEADING_BYTES)
    positions = HEADER_SIZE
    headings = positions + _pad8(n * dim * position_bytes)
    flags = headings + _pad8(n * heading_bytes)
    status = flags + _pad8(n)
    return positions, headings, flags, status, status + 8 * n_status


def frame_size(n: int, dim: int, layout: Layout, n_status: int = len(STATUS_FIELDS)) -> int:
    """Bytes of a frame of ``n`` entries (agents + extras). 3D q16: 9 bytes per entry + 136 at most."""
    if layout not in LAYOUTS:
        raise ValueError(f"layout: unknown layout {layout!r}; allowed: {', '.join(LAYOUTS)}")
    return section_offsets(n, dim, layout, n_status)[-1]


def choose_layout(n: int) -> Layout:
    """``"q16"`` for more than :data:`Q16_THRESHOLD` entries, else ``"f32"``."""
    return "q16" if n > Q16_THRESHOLD else "f32"


# ------------------------------------------------------------------------------------ encoding


def q16_headings(headings: np.ndarray, dim: int) -> np.ndarray:
    """The q16 heading section's int8 values (n, 2) of unit headings (n, dim): octahedral codes in
    3D (zero rows -> -128, -128), components x 127 in 2D (zero stays zero)."""
    if dim == 3:
        return encode_octahedral(headings)
    return np.clip(np.rint(headings * HEADING_SCALE), -127, 127).astype(np.int8)


def status_values(
    sim: Simulation,
    steps_per_second: float = 0.0,
    mean_neighbors: float | None = None,
    polar: float | None = None,
) -> np.ndarray:
    """The :data:`STATUS_FIELDS` of ``sim`` as float64: polarization in [0, 1] and mean neighbours of
    the alive agents (NaN when none is alive), caught, remaining, ``steps_per_second`` (the caller's
    measure). Mean neighbours costs a neighbour search; pass ``mean_neighbors`` to reuse a value.
    Polarization costs a pass over the velocities (~5 ms at 100 000 agents); pass ``polar`` to
    give a value instead (:func:`capture_frame` with ``polarize=True`` leaves it to :func:`pack_frame`)."""
    alive = sim.state.alive
    if mean_neighbors is None:
        counts = sim.neighbors().counts[alive]
        mean_neighbors = float(counts.mean()) if len(counts) else math.nan
    if polar is None:
        polar = sim_polarization(sim)
    return np.array([polar, mean_neighbors, sim.caught, sim.remaining, steps_per_second], dtype=np.float64)


def sim_polarization(sim: Simulation) -> float:
    """Polarization of ``sim``'s alive agents (:func:`~flocksim.metrics.order.polarization`), NaN when
    none is alive; summed on the GPU for the CUDA engine (docs/gpu.md)."""
    state = sim.state
    engine = getattr(sim, "engine", None)
    if hasattr(engine, "heading_sum"):
        return float(np.linalg.norm(engine.heading_sum(state))) / state.n_alive if state.n_alive else math.nan
    return polarization(state.velocity[state.alive])


def _unit(v: np.ndarray) -> np.ndarray:
    """Rows of ``v`` scaled to unit length; zero rows stay zero (as :func:`unit_headings`, faster)."""
    speed = np.sqrt(np.einsum("ij,ij->i", v, v))[:, None]
    return np.divide(v, speed, out=np.zeros_like(v), where=speed > 0)


def _component(sim: Simulation, name: str) -> Any:
    return next((c for c in getattr(sim, "components", []) if getattr(c, "name", None) == name), None)


def _extras(sim: Simulation, dim: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(positions, headings, flags) of the predators, obstacles and seek targets, in that order."""
    points: list[np.ndarray] = []
    heads: list[np.ndarray] = []
    flags: list[int] = []
    predators = _component(sim, "predator")
    if predators is not None:
        points += list(predators.position[:, :dim])
        heads += list(unit_headings(predators.velocity[:, :dim]))
        flags += [FLAG_PREDATOR] * len(predators.position)
    obstacles = getattr(sim.params, "obstacles", None)
    if obstacles is not None:
        zero = np.zeros(dim)
        for c in obstacles.circles:
            points.append(np.asarray(c.center[:dim], dtype=np.float64))
            heads.append(zero)
        for s in obstacles.segments:
            a, b = np.asarray(s.a[:dim], dtype=np.float64), np.asarray(s.b[:dim], dtype=np.float64)
            points.append((a + b) / 2)
            heads.append(unit_headings((b - a)[None, :])[0])
        for box in obstacles.boxes:
            corners = np.array([box.min_corner[:dim], box.max_corner[:dim]], dtype=np.float64)
            points.append(corners.mean(axis=0))
            heads.append(zero)
        flags += [FLAG_OBSTACLE] * (len(obstacles.circles) + len(obstacles.segments) + len(obstacles.boxes))
    targets = _component(sim, "targets")
    if targets is not None:
        seen: list[tuple[float, ...]] = []
        for kind in np.unique(sim.state.kind[sim.state.alive]):
            point = tuple(float(v) for v in targets.target_of(int(kind))[:dim])
            if point not in seen:
                seen.append(point)
        points += [np.array(p) for p in seen]
        heads += [np.zeros(dim)] * len(seen)
        flags += [FLAG_TARGET] * len(seen)
    if not points:
        return np.zeros((0, dim)), np.zeros((0, dim)), np.zeros(0, dtype=np.uint8)
    return np.array(points, dtype=np.float64), np.array(heads, dtype=np.float64), np.array(flags, dtype=np.uint8)


def _agent_flags(sim: Simulation, rows: np.ndarray, selected: int | None) -> np.ndarray:
    state = sim.state
    flags = np.where(state.turning[rows], FLAG_TURNING, 0).astype(np.uint8)
    if selected is None:
        return flags
    sent_ids = state.ids[rows]
    at = np.flatnonzero(sent_ids == selected)
    if len(at) == 0:  # the selected agent is dead (caught) or unknown: nothing is highlighted
        return flags
    flags[at[0]] |= FLAG_SELECTED
    engine = getattr(sim, "engine", None)
    if hasattr(engine, "nearest_rows"):  # on the GPU: no copy of every position (docs/gpu.md)
        point = engine.row_position(state, int(rows[at[0]]))
        nearest = state.ids[engine.nearest_rows(state, point, NEIGHBORS_SHOWN + 1)]
    else:
        nearest = sim.query_nearest(state.position[rows[at[0]]], NEIGHBORS_SHOWN + 1)
    nearest = nearest[nearest != selected][:NEIGHBORS_SHOWN]
    flags[np.isin(sent_ids, nearest)] |= FLAG_NEIGHBOR
    return flags


def encode_frame(
    sim: Simulation,
    frame_index: int,
    layout: Layout | Literal["auto"] = "auto",
    steps_per_second: float = 0.0,
    selected: int | None = 0,
    status: Sequence[float] | np.ndarray | None = None,
) -> bytes:
    """The frame of ``sim``'s current state (alive agents, then predators, obstacles, targets).

    ``frame_index``: the sender's frame counter (0 <= i < 2**64). ``layout``: ``"auto"`` uses
    :func:`choose_layout` on the entry count. ``selected``: stable id of the highlighted agent (it
    and its 7 nearest are flagged; nothing is if it is not alive; None: no selection).
    ``status``: the :data:`STATUS_FIELDS` values, by default :func:`status_values` (sim,
    ``steps_per_second``). Equals ``pack_frame(capture_frame(...))``."""
    return pack_frame(capture_frame(sim, frame_index, layout, steps_per_second, selected, status))


@dataclass(frozen=True)
class FrameParts:
    """What a frame holds, copied out of a simulation by :func:`capture_frame`: :func:`pack_frame`
    reads nothing else, so it may run on another thread while the simulation steps on."""

    frame_index: int
    step: int
    time: float
    dim: int
    layout: Layout
    n_agents: int
    agent_positions: np.ndarray  # (n_agents, dim) float64, a copy; (0, dim) when quantized on the GPU
    agent_velocities: np.ndarray  # (n_agents, dim) float64, a copy; (0, dim) when quantized on the GPU
    extra_positions: np.ndarray  # (extras, dim) float64
    extra_headings: np.ndarray  # (extras, dim) unit or zero
    flags: np.ndarray  # (n,) uint8
    status: np.ndarray  # (len(STATUS_FIELDS),) float64
    gpu: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None
    """Agents quantized on the GPU: (box min (3,), box max (3,), uint16 positions, int8 headings)."""
    polarize: bool = False
    """:func:`pack_frame` computes the status' polarization from ``agent_velocities`` (the copies of
    every alive agent's velocity), off the simulation's thread; ``status[0]`` is then ignored."""

    @property
    def n(self) -> int:
        return int(self.flags.shape[0])


def capture_frame(
    sim: Simulation,
    frame_index: int,
    layout: Layout | Literal["auto"] = "auto",
    steps_per_second: float = 0.0,
    selected: int | None = 0,
    status: Sequence[float] | np.ndarray | None = None,
    polarize: bool = False,
) -> FrameParts:
    """Copy out of ``sim`` what its frame needs (arguments as :func:`encode_frame`): the alive
    agents' positions and velocities, the extras, flags and status values. ``polarize``: the
    status' polarization (``status[0]``, ignored) is computed by :func:`pack_frame` from the
    copied velocities, the same value :func:`status_values` gives, so that a server's simulation
    thread does not spend that pass on it (agents quantized on the GPU: computed here)."""
    if not 0 <= int(frame_index) < 2**64:
        raise ValueError(f"frame_index: must be in [0, 2**64), got {frame_index}")
    state = sim.state
    dim = state.dim
    rows = np.flatnonzero(state.alive)
    extra_pos, extra_head, extra_flags = _extras(sim, dim)
    flags = np.concatenate([_agent_flags(sim, rows, selected), extra_flags])
    n = len(flags)
    if layout == "auto":
        layout = choose_layout(n)
    if layout not in LAYOUTS:
        raise ValueError(f"layout: unknown layout {layout!r}; allowed: auto, {', '.join(LAYOUTS)}")
    values = status_values(sim, steps_per_second) if status is None else np.asarray(status, dtype=np.float64)
    if values.shape != (len(STATUS_FIELDS),):
        raise ValueError(f"status: needs {len(STATUS_FIELDS)} values ({', '.join(STATUS_FIELDS)}), got {values.shape}")
    engine = getattr(sim, "engine", None)
    gpu = None
    if layout == "q16" and hasattr(engine, "quantized_agents"):  # agents quantized on the GPU (docs/gpu.md)
        lo_agents, hi_agents, _ = engine.agent_bounds(state)
        corners = np.concatenate([extra_pos, np.stack([lo_agents, hi_agents])]) if len(rows) else extra_pos
        lo3, hi3 = _box(corners, n, dim)
        gpu = (lo3, hi3, *engine.quantized_agents(state, lo3[:dim], hi3[:dim]))
        agent_pos = agent_vel = np.zeros((0, dim))
        if polarize:  # no velocities copied: the GPU sums the headings
            values = values.copy()
            values[0] = sim_polarization(sim)
            polarize = False
    else:
        if len(rows) == state.n:  # all alive: a plain copy, a third of fancy indexing's time
            agent_pos, agent_vel = state.position.copy(), state.velocity.copy()
        else:
            agent_pos = state.position[rows]  # fancy indexing: copies, never views
            agent_vel = state.velocity[rows]
    return FrameParts(
        int(frame_index), int(sim.steps), float(sim.time), dim, layout, len(rows), agent_pos, agent_vel,
        extra_pos, extra_head, flags, values, gpu, polarize,
    )  # fmt: skip


def _box(corners: np.ndarray, n: int, dim: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-axis (min, max) of the points ``corners`` as 3-vectors (zeros beyond ``dim``, or when n = 0)."""
    lo3 = np.zeros(3)
    hi3 = np.zeros(3)
    if n:  # per column: numpy's axis-0 reductions of (n, 3) arrays are ~20x slower
        lo3[:dim] = [corners[:, k].min() for k in range(dim)]
        hi3[:dim] = [corners[:, k].max() for k in range(dim)]
    return lo3, hi3


def pack_frame(parts: FrameParts) -> bytes:
    """The frame's bytes from :func:`capture_frame`'s copies: headings, bounding box, quantization."""
    n, dim, layout = parts.n, parts.dim, parts.layout
    positions = np.concatenate([parts.agent_positions, parts.extra_positions])
    headings = np.concatenate([_unit(parts.agent_velocities), parts.extra_headings])
    if parts.gpu is not None:
        lo3, hi3 = parts.gpu[0], parts.gpu[1]
    else:
        lo3, hi3 = _box(positions, n, dim)
    offsets = section_offsets(n, dim, layout)
    buf = bytearray(offsets[-1])
    HEADER.pack_into(
        buf, 0, MAGIC, VERSION, HEADER_SIZE, LAYOUTS[layout], dim, len(STATUS_FIELDS), n, parts.n_agents, 0,
        parts.frame_index, parts.step, parts.time, *lo3, *hi3,
    )  # fmt: skip
    count = n * dim
    if layout == "f32":
        np.frombuffer(buf, "<f4", count, offsets[0])[:] = positions.ravel()
        np.frombuffer(buf, "<f4", count, offsets[1])[:] = headings.ravel()
    else:
        extent = hi3[:dim] - lo3[:dim]
        scale = np.divide(Q16_STEPS, extent, out=np.zeros(dim), where=extent > 0)
        q = np.clip(np.rint((positions - lo3[:dim]) * scale), 0, Q16_STEPS).ravel()
        h = q16_headings(headings, dim).ravel()
        if parts.gpu is not None:
            q = np.concatenate([parts.gpu[2], q.astype(np.uint16)])
            h = np.concatenate([parts.gpu[3], h.astype(np.int8)])
        np.frombuffer(buf, "<u2", count, offsets[0])[:] = q
        np.frombuffer(buf, "i1", n * Q16_HEADING_BYTES, offsets[1])[:] = h
    np.frombuffer(buf, "u1", n, offsets[2])[:] = parts.flags
    status = np.frombuffer(buf, "<f8", len(parts.status), offsets[3])
    status[:] = parts.status
    if parts.polarize:  # the alive agents' velocities, as status_values reads them: the same value
        status[0] = polarization(parts.agent_velocities)
    return bytes(buf)


# ------------------------------------------------------------------------------------ decoding


def decode_frame(data: bytes | bytearray | memoryview) -> Frame:
    """Read a frame; any malformed input raises :class:`ProtocolError` naming what is wrong.

    Accepts header sizes above 96 (later fields are skipped), more status values than this reader
    knows and unknown flag bits; rejects a wrong magic or version, an unknown layout, a dim other
    than 2 or 3, a length that disagrees with the header, and non-finite time, box, positions or
    headings (status values may be NaN)."""
    try:
        view = memoryview(data).cast("B")
    except (TypeError, ValueError) as exc:
        raise ProtocolError(f"frame: expected bytes, got {type(data).__name__} ({exc})") from None
    size = view.nbytes
    if size < HEADER_SIZE:
        raise ProtocolError(f"frame: {size} bytes is shorter than the {HEADER_SIZE}-byte header")
    (magic, version, header_size, layout_id, dim, n_status, n, n_agents, _reserved,
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
    offsets = [o - HEADER_SIZE + header_size for o in section_offsets(n, dim, layout, n_status)]
    if size != offsets[-1]:
        raise ProtocolError(
            f"frame: {size} bytes, but the header ({n} entries, dim {dim}, layout {layout}, "
            f"{n_status} status values) needs {offsets[-1]}"
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
    )


__all__ = [
    "FLAG_NEIGHBOR",
    "FLAG_OBSTACLE",
    "FLAG_PREDATOR",
    "FLAG_SELECTED",
    "FLAG_TARGET",
    "FLAG_TURNING",
    "HEADER_SIZE",
    "LAYOUTS",
    "MAGIC",
    "Q16_THRESHOLD",
    "STATUS_FIELDS",
    "VERSION",
    "Frame",
    "FrameParts",
    "ProtocolError",
    "capture_frame",
    "choose_layout",
    "decode_frame",
    "encode_frame",
    "frame_size",
    "pack_frame",
    "section_offsets",
    "sim_polarization",
    "status_values",
]

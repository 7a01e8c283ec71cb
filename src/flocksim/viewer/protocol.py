"""The viewer's binary frame: one snapshot of a simulation, sent server -> browser (docs/protocol.md).

A frame is little-endian: a 96-byte header, then positions, headings, one flag byte per entry
and the status values, each section starting on an 8-byte boundary (zero padding), so a
JavaScript client can view every section as a typed array without copying. The layout (header,
sizes, offsets, flag bits) is :mod:`flocksim.viewer.frame_layout`; its names are importable
from here too.

A simulation whose birds bank (3D banked flight, ``rules.flight.mode = "banked"``) adds a bank
section, flagged in the header's ``sections`` field: its range r (the model's largest bank
[rad], float64), then per agent its bank angle ``state.spin[:, 0]`` as the 4-bit code
round(bank / r x 7) in -7..7, two agents a byte (error <= r / 14: 4.3 degrees at 60); every other
frame is byte for byte what it was before the section existed.

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
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from flocksim.kernels.octahedral import encode as encode_octahedral
from flocksim.metrics.order import polarization, unit_headings
from flocksim.viewer.frame_decode import Frame, ProtocolError, decode_frame
from flocksim.viewer.frame_layout import (
    BANK_LEVELS,
    BANK_RANGE_BYTES,
    FLAG_NEIGHBOR,
    FLAG_OBSTACLE,
    FLAG_PREDATOR,
    FLAG_SELECTED,
    FLAG_TARGET,
    FLAG_TURNING,
    HEADER,
    HEADER_SIZE,
    HEADING_SCALE,
    LAYOUT_NAMES,
    LAYOUTS,
    MAGIC,
    NEIGHBORS_SHOWN,
    Q16_HEADING_BYTES,
    Q16_STEPS,
    Q16_THRESHOLD,
    SECTION_BANK,
    SECTIONS_KNOWN,
    STATUS_FIELDS,
    VERSION,
    Layout,
    bank_bytes,
    bank_offsets,
    choose_layout,
    frame_size,
    section_offsets,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from flocksim.simulation import Simulation

# ------------------------------------------------------------------------------------ encoding


def q16_headings(headings: np.ndarray, dim: int) -> np.ndarray:
    """The q16 heading section's int8 values (n, 2) of unit headings (n, dim): octahedral codes in
    3D (zero rows -> -128, -128), components x 127 in 2D (zero stays zero)."""
    if dim == 3:
        return encode_octahedral(headings)
    return np.clip(np.rint(headings * HEADING_SCALE), -127, 127).astype(np.int8)


def quantize_bank(bank: np.ndarray, bank_range: float) -> np.ndarray:
    """The bank codes (int8, -7..7) of bank angles [rad] over ``bank_range`` [rad]:
    round(bank / bank_range x 7), clipped (a non-finite angle: 0)."""
    bank = np.asarray(bank, dtype=np.float64)
    codes = np.rint(np.where(np.isfinite(bank), bank, 0.0) * (BANK_LEVELS / bank_range))
    return np.clip(codes, -BANK_LEVELS, BANK_LEVELS).astype(np.int8)


def pack_bank_codes(codes: np.ndarray) -> np.ndarray:
    """Codes (n,) int8 in -7..7 as 4-bit two's complement, two a byte: agent 2k in the low half of
    byte k, agent 2k + 1 in the high half ((n + 1) // 2 uint8)."""
    nibbles = np.asarray(codes, dtype=np.int8).view(np.uint8) & 0x0F
    if len(nibbles) % 2:
        nibbles = np.append(nibbles, np.uint8(0))
    return nibbles[0::2] | (nibbles[1::2] << 4)


def _flight(sim: Any) -> Any:
    return getattr(getattr(getattr(sim, "params", None), "rules", None), "flight", None)


def banks(sim: Simulation) -> bool:
    """Whether ``sim``'s birds bank where a viewer sees it: 3D banked flight (their bank angle is
    ``state.spin[:, 0]``, kernels/flight.py)."""
    return getattr(_flight(sim), "mode", None) == "banked" and sim.state.dim == 3


def bank_range(sim: Simulation) -> float:
    """The bank section's range [rad]: the model's largest bank (``rules.flight.max_bank``), pi / 2 without one."""
    max_bank = getattr(_flight(sim), "max_bank", None)
    return math.radians(float(max_bank)) if max_bank else math.pi / 2


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
    bank: bool | None = None,
) -> bytes:
    """The frame of ``sim``'s current state (alive agents, then predators, obstacles, targets).

    ``frame_index``: the sender's frame counter (0 <= i < 2**64). ``layout``: ``"auto"`` uses
    :func:`choose_layout` on the entry count. ``selected``: stable id of the highlighted agent (it
    and its 7 nearest are flagged; nothing is if it is not alive; None: no selection).
    ``status``: the :data:`STATUS_FIELDS` values, by default :func:`status_values` (sim,
    ``steps_per_second``). ``bank``: send the bank section (None: when :func:`banks` (sim)).
    Equals ``pack_frame(capture_frame(...))``."""
    return pack_frame(capture_frame(sim, frame_index, layout, steps_per_second, selected, status, bank=bank))


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
    bank: np.ndarray | None = None
    """The bank section: (n_agents,) float64 bank angles [rad], or int8 codes
    (:func:`quantize_bank`) when quantized on the GPU; None: no bank section."""
    bank_range: float = math.pi / 2
    """The bank section's range [rad] (:func:`bank_range`)."""

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
    bank: bool | None = None,
) -> FrameParts:
    """Copy out of ``sim`` what its frame needs (arguments as :func:`encode_frame`): the alive
    agents' positions and velocities, the extras, flags and status values. ``polarize``: the
    status' polarization (``status[0]``, ignored) is computed by :func:`pack_frame` from the
    copied velocities, the same value :func:`status_values` gives, so that a server's simulation
    thread does not spend that pass on it (agents quantized on the GPU: computed here). ``bank``:
    copy the agents' bank angles for a bank section (None: when :func:`banks` (sim))."""
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
    bank_values = None
    span = bank_range(sim)
    if banks(sim) if bank is None else bank:
        # codes from the GPU (one byte a bird copied, not the spins), or a copy of the alive rows' banks
        gpu_banks = getattr(engine, "quantized_banks", None)
        bank_values = gpu_banks(state, span) if gpu_banks is not None else state.spin[rows, 0]
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
        extra_pos, extra_head, flags, values, gpu, polarize, bank_values, span,
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
    sections = 0 if parts.bank is None else SECTION_BANK
    o_bank, end = bank_offsets(offsets[-1], parts.n_agents, sections)
    buf = bytearray(end)
    HEADER.pack_into(
        buf, 0, MAGIC, VERSION, HEADER_SIZE, LAYOUTS[layout], dim, len(STATUS_FIELDS), n, parts.n_agents, sections,
        parts.frame_index, parts.step, parts.time, *lo3, *hi3,
    )  # fmt: skip
    if parts.bank is not None:
        codes = parts.bank if parts.bank.dtype == np.int8 else quantize_bank(parts.bank, parts.bank_range)
        np.frombuffer(buf, "<f8", 1, o_bank)[0] = parts.bank_range
        np.frombuffer(buf, "u1", (parts.n_agents + 1) // 2, o_bank + BANK_RANGE_BYTES)[:] = pack_bank_codes(codes)
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


__all__ = [  # the layout's names (frame_layout) and the decoder's (frame_decode) too: old import paths
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
    "Frame",
    "FrameParts",
    "Layout",
    "ProtocolError",
    "bank_bytes",
    "bank_offsets",
    "bank_range",
    "banks",
    "capture_frame",
    "choose_layout",
    "decode_frame",
    "encode_frame",
    "frame_size",
    "pack_bank_codes",
    "pack_frame",
    "q16_headings",
    "quantize_bank",
    "section_offsets",
    "sim_polarization",
    "status_values",
]

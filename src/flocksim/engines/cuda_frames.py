"""What the viewer needs from a flock on the GPU, computed there: only small results are copied.

- :func:`agent_bounds`: the alive agents' bounding box (2 x dim float64 copied);
- :func:`quantized_agents`: the q16 frame sections of the alive agents in stable-id order,
  uint16 positions over a given box and two int8 per heading (octahedral in 3D), exactly as
  :func:`flocksim.viewer.protocol.encode_frame` quantizes them on the host (2 bytes per axis
  and 2 per heading copied instead of 16 per axis);
- :func:`quantized_banks`: the bank section's codes of the alive agents' banks (``spin[:, 0]``),
  one byte per agent copied instead of the spins' 24;
- :func:`all_finite`: whether positions and velocities hold no NaN or inf (one int64 copied);
- :func:`heading_sum`: the sum of the alive agents' unit headings, for the polarization;
- :func:`nearest_rows`: the k alive agents nearest a point (the selected bird's neighbours).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numba import cuda

from flocksim.kernels.compile import device
from flocksim.kernels.cuda_runtime import kernel
from flocksim.kernels.octahedral import octahedral, rint
from flocksim.kernels.vector import load, normalize_or_zero
from flocksim.neighbors.cuda_scan import CHUNK, alive_bounds, exclusive_scan
from flocksim.neighbors.pairs import knn_insert_keyed
from flocksim.space import displacement

Q16_STEPS = 65535  # = flocksim.viewer.protocol.Q16_STEPS (checked by the tests)
HEADING_SCALE = 127  # = flocksim.viewer.protocol.HEADING_SCALE
BANK_LEVELS = 7  # = flocksim.viewer.protocol.BANK_LEVELS


@device
def clip(x, lo, hi):
    return min(max(x, lo), hi)


def _quantize(position, velocity, alive, slot, dim, lo, scale, qpos, qhead):
    i = cuda.grid(1)
    if i < position.shape[0] and alive[i]:
        s = slot[i] * dim
        vx, vy, vz = load(velocity, i, dim)
        hx, hy, hz = normalize_or_zero(vx, vy, vz)
        for a in range(dim):
            qpos[s + a] = np.uint16(clip(rint((position[i, a] - lo[a]) * scale[a]), 0.0, 65535.0))
        if dim == 3:
            u, v = octahedral(hx, hy, hz)
        else:
            u = clip(rint(hx * 127.0), -127.0, 127.0)
            v = clip(rint(hy * 127.0), -127.0, 127.0)
        qhead[2 * slot[i]] = np.int8(u)
        qhead[2 * slot[i] + 1] = np.int8(v)


def _quantize_bank(spin, alive, slot, scale, qbank):
    i = cuda.grid(1)
    if i < spin.shape[0] and alive[i]:
        b = spin[i, 0]
        code = 0.0
        if math.isfinite(b):
            code = clip(rint(b * scale), -7.0, 7.0)
        qbank[slot[i]] = np.int8(code)


def _nonfinite(position, velocity, flag):
    i = cuda.grid(1)
    if i < position.shape[0]:
        bad = 0
        for a in range(position.shape[1]):
            x = position[i, a]
            v = velocity[i, a]
            if not (math.isfinite(x) and math.isfinite(v)):
                bad = 1
        if bad:
            cuda.atomic.max(flag, 0, 1)


def _chunk_heading_sums(velocity, alive, dim, out):
    """out[t] = the sum of the alive agents' unit headings in chunk t, added in index order."""
    t = cuda.grid(1)
    if t < out.shape[0]:
        sx = sy = sz = 0.0
        for i in range(t * CHUNK, min(velocity.shape[0], (t + 1) * CHUNK)):
            if alive[i]:
                vx, vy, vz = load(velocity, i, dim)
                hx, hy, hz = normalize_or_zero(vx, vy, vz)
                sx += hx
                sy += hy
                sz += hz
        out[t, 0] = sx
        out[t, 1] = sy
        out[t, 2] = sz


quantize = kernel(_quantize)
quantize_bank = kernel(_quantize_bank)
nonfinite = kernel(_nonfinite)
chunk_heading_sums = kernel(_chunk_heading_sums)


def agent_bounds(d: Any) -> tuple[np.ndarray, np.ndarray, int]:
    """(lo, hi, n_alive) of the alive agents' positions (``d``: the engine's device arrays)."""
    return alive_bounds(d.position, d.alive, d.n, d.dim)


def quantized_agents(d: Any, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(uint16 positions (n_alive * dim,), int8 headings (n_alive * 2,)) in stable-id order: positions
    over the box lo..hi (dim,) in Q16_STEPS steps per axis (0 on a flat axis); headings octahedral
    in 3D (:mod:`flocksim.kernels.octahedral`), components x 127 in 2D."""
    extent = hi - lo
    scale = np.divide(Q16_STEPS, extent, out=np.zeros(d.dim), where=extent > 0)
    slot = exclusive_scan(d.alive, d.n)
    count = d.n_alive * d.dim
    qpos = cuda.device_array(max(count, 1), dtype=np.uint16)
    qhead = cuda.device_array(max(2 * d.n_alive, 1), dtype=np.int8)
    quantize.launch(d.n, d.position, d.velocity, d.alive, slot, d.dim, cuda.to_device(np.ascontiguousarray(lo)),
                    cuda.to_device(scale), qpos, qhead)  # fmt: skip
    return qpos[:count].copy_to_host(), qhead[: 2 * d.n_alive].copy_to_host()


def quantized_banks(d: Any, bank_range: float) -> np.ndarray:
    """(n_alive,) int8 bank codes in stable-id order, as :func:`flocksim.viewer.protocol.quantize_bank`
    writes them: round(spin[:, 0] x 7 / bank_range) (halves to even), clipped to -7..7, 0 where
    not finite."""
    slot = exclusive_scan(d.alive, d.n)
    qbank = cuda.device_array(max(d.n_alive, 1), dtype=np.int8)
    quantize_bank.launch(d.n, d.spin, d.alive, slot, BANK_LEVELS / bank_range, qbank)
    return qbank[: d.n_alive].copy_to_host()


def all_finite(d: Any) -> bool:
    flag = cuda.to_device(np.zeros(1, dtype=np.int64))
    nonfinite.launch(d.n, d.position, d.velocity, flag)
    return int(flag.copy_to_host()[0]) == 0


def heading_sum(d: Any) -> np.ndarray:
    """Sum of the alive agents' unit headings (3,), chunk sums added on the host in chunk order."""
    chunks = max(1, (d.n + CHUNK - 1) // CHUNK)
    out = cuda.device_array((chunks, 3))
    chunk_heading_sums.launch(chunks, d.velocity, d.alive, d.dim, out)
    return out.copy_to_host().sum(axis=0) if d.n else np.zeros(3)


def _chunk_nearest(position, alive, dim, space, x, y, z, k, rows, d2s, fill):
    """Row t of (rows, d2s): the k alive agents of chunk t nearest the point, nearest first (ties: lower index)."""
    t = cuda.grid(1)
    if t < fill.shape[0]:
        m = 0
        for i in range(t * CHUNK, min(position.shape[0], (t + 1) * CHUNK)):
            if alive[i]:
                px, py, pz = load(position, i, dim)
                dx, dy, dz = displacement(x, y, z, px, py, pz, space)
                m = knn_insert_keyed(rows, rows, d2s, t, m, k, i, i, dx * dx + dy * dy + dz * dz)
        fill[t] = m


chunk_nearest = kernel(_chunk_nearest)


def nearest_rows(d: Any, space: Any, point: np.ndarray, k: int) -> np.ndarray:
    """Rows of the k alive agents nearest ``point`` (dim,), nearest first, ties to the lower row:
    the k best of each chunk of agents found on the GPU (chunks x k copied), merged here."""
    chunks = max(1, (d.n + CHUNK - 1) // CHUNK)
    rows = cuda.device_array((chunks, k), dtype=np.int64)
    d2s = cuda.device_array((chunks, k))
    fill = cuda.to_device(np.zeros(chunks, dtype=np.int64))
    p = [float(v) for v in point] + [0.0] * (3 - len(point))
    chunk_nearest.launch(chunks, d.position, d.alive, d.dim, space, p[0], p[1], p[2], k, rows, d2s, fill)
    m = fill.copy_to_host()
    keep = np.arange(k)[None, :] < m[:, None]
    found_rows = rows.copy_to_host()[keep]
    found_d2 = d2s.copy_to_host()[keep]
    return found_rows[np.lexsort((found_rows, found_d2))[:k]]


def row_position(d: Any, row: int) -> np.ndarray:
    """Position of one agent (dim,), copied alone."""
    return d.position[row].copy_to_host()

"""Prefix sums and bounding boxes of device arrays, deterministic (no floating-point atomics).

Both work in chunks of :data:`CHUNK` items, one thread per chunk, and recurse on the per-chunk
results until one chunk is left, so their results do not depend on thread scheduling.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from flocksim.kernels.cuda_runtime import kernel

CHUNK = 256
"""Items one thread sums (scan) or bounds (box) before the next level takes over."""


def _chunk_sums(values, n, sums):
    t = cuda.grid(1)
    if t < sums.shape[0]:
        s = 0
        for i in range(t * CHUNK, min(n, (t + 1) * CHUNK)):
            s += values[i]
        sums[t] = s


def _chunk_scan(values, n, offsets, out):
    t = cuda.grid(1)
    if t < offsets.shape[0]:
        acc = offsets[t]
        end = min(n, (t + 1) * CHUNK)
        for i in range(t * CHUNK, end):
            out[i] = acc
            acc += values[i]
        if end == n:
            out[n] = acc


chunk_sums = kernel(_chunk_sums)
chunk_scan = kernel(_chunk_scan)


def exclusive_scan(values, n: int):
    """(n + 1,) int64 device array: out[i] = values[0] + ... + values[i - 1]; out[n] is the total."""
    chunks = max(1, (n + CHUNK - 1) // CHUNK)
    out = cuda.device_array(n + 1, dtype=np.int64)
    if chunks == 1:
        offsets = cuda.to_device(np.zeros(1, dtype=np.int64))
    else:
        sums = cuda.device_array(chunks, dtype=np.int64)
        chunk_sums.launch(chunks, values, n, sums)
        offsets = exclusive_scan(sums, chunks)
    chunk_scan.launch(chunks, values, n, offsets, out)
    return out


def total(scanned, n: int) -> int:
    """The last entry of :func:`exclusive_scan`'s output, copied to the host (a sync point)."""
    return int(scanned[n : n + 1].copy_to_host()[0])


def _chunk_bounds(position, alive, n, dim, lo, hi, count):
    """Per chunk of agents: min and max of the alive ones' coordinates, and how many are alive."""
    t = cuda.grid(1)
    if t < count.shape[0]:
        m = 0
        for i in range(t * CHUNK, min(n, (t + 1) * CHUNK)):
            if alive[i]:
                for a in range(dim):
                    x = position[i, a]
                    if m == 0 or x < lo[t, a]:
                        lo[t, a] = x
                    if m == 0 or x > hi[t, a]:
                        hi[t, a] = x
                m += 1
        count[t] = m


def _merge_bounds(lo_in, hi_in, count_in, n, dim, lo, hi, count):
    """Per chunk of partial boxes: their union and their total count."""
    t = cuda.grid(1)
    if t < count.shape[0]:
        m = 0
        for i in range(t * CHUNK, min(n, (t + 1) * CHUNK)):
            if count_in[i] > 0:
                for a in range(dim):
                    if m == 0 or lo_in[i, a] < lo[t, a]:
                        lo[t, a] = lo_in[i, a]
                    if m == 0 or hi_in[i, a] > hi[t, a]:
                        hi[t, a] = hi_in[i, a]
                m += count_in[i]
        count[t] = m


chunk_bounds = kernel(_chunk_bounds)
merge_bounds = kernel(_merge_bounds)


def alive_bounds(position, alive, n: int, dim: int) -> tuple[np.ndarray, np.ndarray, int]:
    """(lo, hi, n_alive) of the alive agents' coordinates, as :func:`flocksim.neighbors.grid.alive_bounds`
    (zeros when none is alive); three small arrays copied to the host (a sync point)."""
    chunks = max(1, (n + CHUNK - 1) // CHUNK)
    lo = cuda.device_array((chunks, dim))
    hi = cuda.device_array((chunks, dim))
    count = cuda.device_array(chunks, dtype=np.int64)
    chunk_bounds.launch(chunks, position, alive, n, dim, lo, hi, count)
    while chunks > 1:
        merged = (chunks + CHUNK - 1) // CHUNK
        lo2 = cuda.device_array((merged, dim))
        hi2 = cuda.device_array((merged, dim))
        count2 = cuda.device_array(merged, dtype=np.int64)
        merge_bounds.launch(merged, lo, hi, count, chunks, dim, lo2, hi2, count2)
        lo, hi, count, chunks = lo2, hi2, count2, merged
    alive_count = int(count.copy_to_host()[0])
    if alive_count == 0:
        return np.zeros(dim), np.zeros(dim), 0
    return lo.copy_to_host()[0], hi.copy_to_host()[0], alive_count

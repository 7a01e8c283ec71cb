"""Reynolds steering summed straight from the coherent grid, without a neighbour list (metric mode).

The list-based phase one (engines/cpu_reynolds.py) builds the metric neighbour rows, then sums the
rules over each agent's row in increasing neighbour index. Here the same sums are made in one scan
of the grid, in the order that builds the rows (:func:`flocksim.neighbors.coherent.metric_fill_ascending`):
every alive agent j, in increasing index, scans its block and adds itself to the sums of each agent
i that has it within the query radius (distances from i's side). So each agent's neighbours are
added in increasing index with the arithmetic of :func:`flocksim.models.reynolds.reynolds_accumulate`,
and the accelerations are bitwise those of the list-based path. Sums are kept in slot order (the
agents of a run are adjacent); stripes of whole layers of cells keep each agent's sums to one thread.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numba
import numpy as np

from flocksim.budgets import PairBudget
from flocksim.engines.cpu_reynolds_rules import named_for
from flocksim.kernels.blocks import block_bounds, block_count
from flocksim.kernels.compile import block_device, device, serial_kernel
from flocksim.kernels.vector import load, normalize_or_zero
from flocksim.models.reynolds import (
    ALIGNMENT_INERTIAL_SPIN,
    ReynoldsModel,
    reynolds_accumulate,
    reynolds_steering,
)
from flocksim.models.reynolds_coefficients import PhaseOneRules
from flocksim.neighbors.coherent import (
    FILL_HITS,
    _pair_d2,
    block_hits,
    block_runs_scratch,
    build_coherent_grid,
    fill_stripes,
    stripe_block,
    stripe_layers,
)
from flocksim.space import displacement
from flocksim.state import FlockState

PLANE_COLUMNS = 8
"""Sum columns of an agent in 2D without inertial spin: separation x, y, alignment (or torque) x, y,
cohesion x, y, then the two counts (exact as floats). Their z sums stay exactly +0.0 there (every z
term is a zero and a sum that starts at +0.0 stays +0.0 when zeros are added), so only these 8
columns, one 64-byte row, are read and written per neighbour."""
SUM_COLUMNS = 11
"""Sum columns otherwise: the 8 above, then separation z, alignment (or torque) z, cohesion z."""


@device
def _full_columns(dim, c):
    """Whether the z sums are kept (3D, or inertial spin: its torque lies along z in 2D)."""
    return dim == 3 or c.alignment_mode == ALIGNMENT_INERTIAL_SPIN


@device
def _load_sums(sums, s, c, plane, others=True, spin=True):
    """The sums of slot s as :func:`reynolds_accumulate`'s tuple; ``plane``: only the
    :data:`PLANE_COLUMNS` are kept (the z sums and the torque are +0.0); ``others`` False: only
    the separation sum is read (the others are left zero; :func:`_store_sums` leaves them)."""
    if not others:
        sep_z = 0.0 if plane else sums[s, 8]
        return sums[s, 0], sums[s, 1], sep_z, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0, 0
    n_ali = int(sums[s, 6])
    n_coh = int(sums[s, 7])
    if plane:
        return (sums[s, 0], sums[s, 1], 0.0, sums[s, 2], sums[s, 3], 0.0, sums[s, 4], sums[s, 5], 0.0, 0.0, 0.0, 0.0,
                n_ali, n_coh)  # fmt: skip
    if spin and c.alignment_mode == ALIGNMENT_INERTIAL_SPIN:  # the torque in the alignment columns
        return (sums[s, 0], sums[s, 1], sums[s, 8], 0.0, 0.0, 0.0, sums[s, 4], sums[s, 5], sums[s, 10], sums[s, 2],
                sums[s, 3], sums[s, 9], n_ali, n_coh)  # fmt: skip
    return (sums[s, 0], sums[s, 1], sums[s, 8], sums[s, 2], sums[s, 3], sums[s, 9], sums[s, 4], sums[s, 5], sums[s, 10],
            0.0, 0.0, 0.0, n_ali, n_coh)  # fmt: skip


@device
def _store_sums(sums, s, c, acc, plane, others=True, spin=True):
    """Write :func:`reynolds_accumulate`'s tuple back into slot s (see :func:`_load_sums`)."""
    sep_x, sep_y, sep_z, ali_x, ali_y, ali_z, coh_x, coh_y, coh_z, tau_x, tau_y, tau_z, n_ali, n_coh = acc
    sums[s, 0] = sep_x
    sums[s, 1] = sep_y
    if not others:
        if not plane:
            sums[s, 8] = sep_z
        return
    if spin and c.alignment_mode == ALIGNMENT_INERTIAL_SPIN:
        ali_x, ali_y, ali_z = tau_x, tau_y, tau_z
    sums[s, 2] = ali_x
    sums[s, 3] = ali_y
    sums[s, 4] = coh_x
    sums[s, 5] = coh_y
    sums[s, 6] = n_ali
    sums[s, 7] = n_coh
    if not plane:
        sums[s, 8] = sep_z
        sums[s, 9] = ali_z
        sums[s, 10] = coh_z


@device
def _add_neighbor(s, sj, j, xs, ys, zs, order, velocity, dim, space, c, sums, plane, separation, others, spin):
    """Add agent j (slot sj) to the sums of the agent in slot s (see :func:`reynolds_accumulate` for
    ``separation``, ``others`` and ``spin``, constants; ``spin`` False where ``plane``: the plane
    columns are those of a run without inertial spin); returns their squared distance."""
    hx = hy = hz = 0.0
    if plane:  # z coordinates are zeros, the heading is not used
        dx, dy, dz = displacement(xs[s], ys[s], 0.0, xs[sj], ys[sj], 0.0, space)  # p_j - p_i
        dim = 2
    else:
        dx, dy, dz = displacement(xs[s], ys[s], zs[s], xs[sj], ys[sj], zs[sj], space)
        if spin and c.alignment_mode == ALIGNMENT_INERTIAL_SPIN:
            vx, vy, vz = load(velocity, order[s], dim)
            hx, hy, hz = normalize_or_zero(vx, vy, vz)
    d2 = dx * dx + dy * dy + dz * dz
    acc = reynolds_accumulate(_load_sums(sums, s, c, plane, others, spin), dx, dy, dz, d2, velocity, j, dim, hx, hy,
                              hz, c, separation, others, spin)  # fmt: skip
    _store_sums(sums, s, c, acc, plane, others, spin)
    return d2


@device
def _add_agent(j, s0, s1, l0, l1, tid, xs, ys, zs, order, cell, cell_start, g, dim, space, radius2, velocity, c, runs,
               shifts, hits, sums, plane, rescan, spin):  # fmt: skip
    """Add agent j to the sums of the agents in slots s0..s1 (a stripe, layers l0..l1) that have it
    within the radius; returns how many they are. ``plane``: a constant, so that each of its two
    inlined copies is compiled for its case; ``rescan``: the case's :func:`_rescan_plane` or
    :func:`_rescan_full`, passed as a function so that only that one is compiled.

    The hits are added in two loops: alignment and cohesion for all, then separation for those
    within its radius, gathered branch-free in the first loop (a branch on the separation radius
    inside one loop mispredicts often and cost a third of the kernel). Each sum still receives an
    agent's neighbours in increasing index."""
    nruns, sj = stripe_block(j, s0, s1, l0, l1, order, cell, cell_start, g, space, tid, runs, shifts)
    if nruns < 0:
        return 0
    m = block_hits(sj, nruns, s0, s1, tid, runs, xs, ys, zs, dim, space, radius2, hits)
    if m < hits.shape[1]:
        close = 0
        for u in range(m):
            s = hits[tid, u]
            d2 = _add_neighbor(s, sj, j, xs, ys, zs, order, velocity, dim, space, c, sums, plane, False, True, spin)
            hits[tid, close] = s  # close <= u: this hit has been read
            close += d2 < c.sep_radius2
        for u in range(close):
            _add_neighbor(hits[tid, u], sj, j, xs, ys, zs, order, velocity, dim, space, c, sums, plane, True, False,
                          spin)  # fmt: skip
        return m
    rescan(j, sj, nruns, s0, s1, tid, runs, xs, ys, zs, order, velocity, dim, space, radius2, c, sums)
    return m


@block_device
def _rescan_plane(j, sj, nruns, s0, s1, tid, runs, xs, ys, zs, order, velocity, dim, space, radius2, c, sums):
    """:func:`_add_agent` when agent j has more hits than the scratch holds: scan its block again,
    branching, with the :data:`PLANE_COLUMNS` (rare: a call, so that this path is compiled once, not
    inlined in every kernel; a function per case, so that a run compiles the one it uses and its
    per-pair code is that of the inlined path)."""
    for q in range(nruns):
        for s in range(max(runs[tid, q, 0], s0), min(runs[tid, q, 1], s1)):
            if s != sj and _pair_d2(xs[s], ys[s], zs[s], sj, xs, ys, zs, dim, space) <= radius2:
                _add_neighbor(s, sj, j, xs, ys, zs, order, velocity, dim, space, c, sums, True, True, True, False)


@block_device
def _rescan_full(j, sj, nruns, s0, s1, tid, runs, xs, ys, zs, order, velocity, dim, space, radius2, c, sums):
    """:func:`_rescan_plane` with all :data:`SUM_COLUMNS`."""
    for q in range(nruns):
        for s in range(max(runs[tid, q, 0], s0), min(runs[tid, q, 1], s1)):
            if s != sj and _pair_d2(xs[s], ys[s], zs[s], sj, xs, ys, zs, dim, space) <= radius2:
                _add_neighbor(s, sj, j, xs, ys, zs, order, velocity, dim, space, c, sums, False, True, True, True)


@device
def _stripe_sums(t, tid, xs, ys, zs, order, cell, cell_start, g, dim, space, radius2, velocity, c, runs, shifts, hits,
                 stripes, sums, plane, rescan, spin):  # fmt: skip
    """Stripe t of :func:`neighbor_sums`: zero its slots' sums, then add every agent j to those of
    its slots that have j within the radius; returns the pairs summed. ``plane``, ``spin``:
    constants; ``rescan``: its case's rescan (:func:`_add_agent`)."""
    s0 = stripes[t]
    s1 = stripes[t + 1]
    for s in range(s0, s1):
        for u in range(sums.shape[1]):
            sums[s, u] = 0.0
    if s0 == s1:
        return 0
    l0, l1 = stripe_layers(s0, s1, order, cell, g)
    pairs = 0
    for j in range(cell.shape[0]):
        pairs += _add_agent(j, s0, s1, l0, l1, tid, xs, ys, zs, order, cell, cell_start, g, dim, space, radius2,
                            velocity, c, runs, shifts, hits, sums, plane, rescan, spin)  # fmt: skip
    return pairs


@serial_kernel
def _stripe_sums_plane(t, tid, xs, ys, zs, order, cell, cell_start, g, dim, space, radius2, velocity, c, runs, shifts,
                       hits, stripes, sums):  # fmt: skip
    """:func:`_stripe_sums` with the :data:`PLANE_COLUMNS` only."""
    return _stripe_sums(t, tid, xs, ys, zs, order, cell, cell_start, g, dim, space, radius2, velocity, c, runs, shifts,
                        hits, stripes, sums, True, _rescan_plane, False)  # fmt: skip


@serial_kernel
def _stripe_sums_full(t, tid, xs, ys, zs, order, cell, cell_start, g, dim, space, radius2, velocity, c, runs, shifts,
                      hits, stripes, sums):  # fmt: skip
    """:func:`_stripe_sums` with all :data:`SUM_COLUMNS`."""
    return _stripe_sums(t, tid, xs, ys, zs, order, cell, cell_start, g, dim, space, radius2, velocity, c, runs, shifts,
                        hits, stripes, sums, False, _rescan_full, True)  # fmt: skip


@numba.njit(parallel=True, cache=True)
def _neighbor_sums_plane(xs, ys, zs, order, cell, cell_start, g, dim, space, radius2, velocity, c, runs, shifts, hits,
                         stripes, sums, pairs):  # fmt: skip
    for t in numba.prange(stripes.shape[0] - 1):
        t64 = np.int64(t)  # the loop index is unsigned where numba lowers the loop: one signature for both
        pairs[t] = _stripe_sums_plane(t64, numba.get_thread_id(), xs, ys, zs, order, cell, cell_start, g, dim, space,
                                      radius2, velocity, c, runs, shifts, hits, stripes, sums)  # fmt: skip


@numba.njit(parallel=True, cache=True)
def _neighbor_sums_full(xs, ys, zs, order, cell, cell_start, g, dim, space, radius2, velocity, c, runs, shifts, hits,
                        stripes, sums, pairs):  # fmt: skip
    for t in numba.prange(stripes.shape[0] - 1):
        t64 = np.int64(t)  # the loop index is unsigned where numba lowers the loop: one signature for both
        pairs[t] = _stripe_sums_full(t64, numba.get_thread_id(), xs, ys, zs, order, cell, cell_start, g, dim, space,
                                     radius2, velocity, c, runs, shifts, hits, stripes, sums)  # fmt: skip


def neighbor_sums(xs, ys, zs, order, cell, cell_start, g, dim, space, radius2, velocity, c, runs, shifts, hits,
                  stripes, sums, pairs):  # fmt: skip
    """Phase one's neighbour sums of every alive agent, in slot order: sums[s] holds
    :func:`reynolds_accumulate`'s sums (see :data:`PLANE_COLUMNS`) over the neighbours (within the
    query radius, squared: ``radius2``) of the agent in slot s, added in increasing index.
    ``stripes``, ``hits``, ``runs``, ``shifts``: as for
    :func:`flocksim.neighbors.coherent.metric_fill_ascending`; pairs[t] = the neighbour pairs
    stripe t summed (the length of its agents' rows). Each case (plane or full columns) is a kernel
    of its own, compiled when first used; the parallel loop only calls the stripe's serial kernel,
    which keeps numba's parallel passes off the large inlined body (docs/design.md §7.4)."""
    kernel = _neighbor_sums_full if _full_columns.py_func(dim, c) else _neighbor_sums_plane
    kernel(xs, ys, zs, order, cell, cell_start, g, dim, space, radius2, velocity, c, runs, shifts, hits, stripes, sums,
           pairs)  # fmt: skip


@serial_kernel
def _steer_slots(s0, s1, position, velocity, order, sums, dim, space, c, inputs, out, aux):
    """:func:`steering_from_sums` for slots s0..s1."""
    plane = not _full_columns(dim, c)
    for s in range(s0, s1):
        i = order[s]
        px, py, pz = load(position, i, dim)
        vx, vy, vz = load(velocity, i, dim)
        acc = _load_sums(sums, s, c, plane)
        ax, ay, az = reynolds_steering(i, px, py, pz, vx, vy, vz, acc, dim, space, c, inputs, aux, 1.0)
        out[i, 0] = ax
        out[i, 1] = ay
        out[i, 2] = az


@numba.njit(parallel=True, cache=True)
def steering_from_sums(position, velocity, order, sums, dim, space, c, inputs, out, aux):
    """Phase one's end: out[i] = the steering acceleration of the alive agent i in slot s from its
    sums (:func:`reynolds_steering`, which also writes aux[i]). Dead agents' rows are left alone."""
    n = order.shape[0]
    blocks = block_count(n)
    for b in numba.prange(blocks):
        s0, s1 = block_bounds(b, blocks, n)
        _steer_slots(s0, s1, position, velocity, order, sums, dim, space, c, inputs, out, aux)


_SERIAL: Callable = None  # type: ignore[assignment]
"""Bound, in each copy of :func:`_steering`, to its combination's serial kernel."""


def _steer_slots_for(spin, seek, predators, walls, roost, avoid, reynolds, clamped):
    def _steer_slots(s0, s1, position, velocity, order, sums, dim, space, c, inputs, out, aux):
        """:func:`_steer_slots` with this combination's rules (:func:`steering_kernel`)."""
        plane = not _full_columns(dim, c)
        for s in range(s0, s1):
            i = order[s]
            px, py, pz = load(position, i, dim)
            vx, vy, vz = load(velocity, i, dim)
            acc = _load_sums(sums, s, c, plane, True, spin)
            ax, ay, az = reynolds_steering(i, px, py, pz, vx, vy, vz, acc, dim, space, c, inputs, aux, 1.0, spin, seek,
                                           predators, walls, roost, avoid, reynolds, clamped)  # fmt: skip
            out[i, 0] = ax
            out[i, 1] = ay
            out[i, 2] = az

    return _steer_slots


def _steering(position, velocity, order, sums, dim, space, c, inputs, out, aux):
    """:func:`steering_from_sums` with the serial kernel ``_SERIAL`` (:func:`steering_kernel`)."""
    n = order.shape[0]
    blocks = block_count(n)
    for b in numba.prange(blocks):
        s0, s1 = block_bounds(b, blocks, n)
        _SERIAL(s0, s1, position, velocity, order, sums, dim, space, c, inputs, out, aux)


@functools.cache
def steering_kernel(rules: PhaseOneRules) -> Callable:
    """:func:`steering_from_sums` specialised on ``rules`` (the grid path has neither a blind angle
    nor centrality; flocksim.engines.cpu_reynolds_rules), compiled on its first call."""
    return _grid_kernels(rules._replace(blind=False, centrality=False))


@functools.cache
def _grid_kernels(rules: PhaseOneRules) -> Callable:
    serial = serial_kernel(named_for(_steer_slots_for(rules.spin, *rules[3:]), rules))
    return numba.njit(parallel=True, cache=True)(named_for(_steering, rules, _SERIAL=serial))


class GridSteering:
    """Phase one of a metric reynolds step on the coherent grid; keeps the scratch buffers. The
    pairs summed are checked against ``budget`` (as the list they replace would be) before any
    acceleration is written."""

    def __init__(self, budget: PairBudget):
        self.budget = budget
        self.sums = np.zeros((0, SUM_COLUMNS))
        self.pairs = 0
        """Neighbour pairs summed by the last call (the length its neighbour list would have)."""

    def __call__(self, model: ReynoldsModel, state: FlockState, radius: float, inputs, out: np.ndarray,
                 aux: np.ndarray, rules: PhaseOneRules | None = None) -> None:  # fmt: skip
        """out[i] and aux[i] of every alive agent, as ``reynolds_accelerations`` over the metric
        neighbour list of ``radius`` (> 0) would write them; ``rules``: the kernel's
        (:func:`steering_kernel`; None: every rule, :func:`steering_from_sums`)."""
        grid = build_coherent_grid(state.position, state.alive, model.space, radius)
        slots = len(grid.order)
        c = model.coefficients
        columns = SUM_COLUMNS if _full_columns.py_func(state.dim, c) else PLANE_COLUMNS
        if self.sums.shape[0] < slots or self.sums.shape[1] != columns:
            self.sums = np.zeros((slots, columns))
        threads = numba.get_num_threads()
        runs, shifts = block_runs_scratch(threads)
        hits = np.empty((threads, FILL_HITS + 1), dtype=np.int64)
        stripes = fill_stripes(grid, threads)
        pairs = np.zeros(len(stripes) - 1, dtype=np.int64)
        neighbor_sums(grid.xs, grid.ys, grid.zs, grid.order, grid.cell, grid.cell_start, grid.geometry, state.dim,
                      model.space, radius * radius, state.velocity, c, runs, shifts, hits, stripes, self.sums,
                      pairs)  # fmt: skip
        self.pairs = int(pairs.sum())
        self.budget.check_metric(self.pairs, slots, radius)
        steer = steering_from_sums if rules is None else steering_kernel(rules)
        steer(state.position, state.velocity, grid.order, self.sums, state.dim, model.space, c, inputs, out,
              aux)  # fmt: skip

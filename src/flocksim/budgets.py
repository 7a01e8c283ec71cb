"""Size budgets: every size that follows from parameters is checked against these limits before
anything of that size is allocated (docs/parameters.md, "Size budgets").

- Navigation grids (``navigation``): at most :data:`MAX_NAVIGATION_CELLS` cells, and all groups'
  flow fields together at most :data:`MAX_FLOW_FIELD_CELLS` cells; checked by the schema for
  ``map`` and ``obstacles`` grids and when the image is opened for ``image`` grids (its header
  gives the size before any pixel is decoded).
- Neighbour lists: at most ``max_pairs`` (agent, neighbour) pairs per search, by default
  :data:`DEFAULT_MAX_PAIRS` (``Simulation(max_pairs=...)``; ``flocksim serve --max-pairs``);
  checked when a simulation is built and by every search before its list is allocated.
- Obstacle grids: at most :func:`max_obstacle_entries` (cell, obstacle) entries: the grid's cells
  are widened until the obstacles' cell lists fit.
- Rendered trails (``flocksim render --trail``): at most :data:`MAX_TRAIL_BYTES`, checked against
  the run's agent count before the first frame.
- Memory: :func:`check_memory` compares what an analysis of field data will need with what this
  process can still allocate (:func:`memory_headroom`: its address-space limit, its cgroup's
  memory limit, the memory the system has available), before the arrays are read.

A budget that is exceeded raises :class:`BudgetError` (a ValueError) with one line naming the
parameters and the limit; ``flocksim`` commands exit with status 2, the viewer answers with an
``error`` message and keeps serving.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from numbers import Integral

from flocksim import readable

MAX_NAVIGATION_CELLS = 1_048_576
"""Most cells of a navigation grid (1024 x 1024). Building the grid's graph and its first flow
field peaks near 600 bytes per cell (about 0.6 GB at the limit); 512 x 512 is the benchmark grid."""
FLOW_FIELD_BYTES_PER_CELL = 32
"""What one group's flow field keeps per cell: cost (8), direction (16) and usable moves (8) [bytes]."""
MAX_FLOW_FIELD_CELLS = 8 * MAX_NAVIGATION_CELLS
"""Most cells of all groups' flow fields together (one field per group that navigates): eight
fields of the largest grid, about 0.27 GB."""
MAX_IMAGE_FILE_BYTES = 64 * 1024 * 1024
"""Largest ``navigation.image`` file read [bytes]."""
DEFAULT_MAX_PAIRS = 250_000_000
"""Most neighbour pairs one search may hold: 2 GB of int64 indices for metric lists; a
topological search holds N x k slots of 24 bytes while it runs."""
MAX_TRAIL_BYTES = 1 << 30
"""Most memory a rendered trail may hold [bytes]: ``--trail`` N keeps N + 1 frames of positions
and draws their projections, about :data:`TRAIL_BYTES_PER_POINT` per agent and frame."""
TRAIL_BYTES_PER_POINT = 80
OBSTACLE_ENTRIES_PER_OBSTACLE = 16
"""Obstacle grids list each obstacle in at most this many cells on average (beyond a floor of
:data:`MIN_OBSTACLE_ENTRIES`)."""
MIN_OBSTACLE_ENTRIES = 65_536


class BudgetError(ValueError):
    """A size that follows from parameters is over its budget; ``str(exc)`` is one line naming
    the parameters and the limit."""


def grid_side(length: float, cell_size: float) -> int:
    """Cells of ``cell_size`` covering ``length`` on one axis (at least one), as the navigation
    grid counts them; a huge count is returned as is (Python ints do not overflow)."""
    ratio = length / cell_size - 1e-9
    if not math.isfinite(ratio):
        raise BudgetError(f"navigation.cell_size: {cell_size:g} over {length:g} units is not a finite cell count")
    return max(1, math.ceil(ratio))


def smallest_cell_size(width: float, height: float) -> float:
    """The smallest cell size, to three significant digits, whose grid over ``width`` x ``height``
    [units] fits :data:`MAX_NAVIGATION_CELLS`."""
    size = math.sqrt(width) * math.sqrt(height) / math.sqrt(MAX_NAVIGATION_CELLS)  # no overflow or underflow
    while True:
        scale = 10.0 ** (math.floor(math.log10(size)) - 2)
        size = math.ceil(size / scale) * scale
        if grid_side(width, size) * grid_side(height, size) <= MAX_NAVIGATION_CELLS:
            return float(f"{size:.3g}")
        size *= 1.001


def check_navigation_cells(rows: int, columns: int, source: str, hint: str) -> None:
    """BudgetError unless a ``rows`` x ``columns`` navigation grid fits :data:`MAX_NAVIGATION_CELLS`.
    ``source`` names what sets the size (e.g. ``navigation.cell_size``), ``hint`` how to shrink it."""
    cells = rows * columns
    if cells > MAX_NAVIGATION_CELLS:
        side = f"{readable.count(columns, grouped=False)} x {readable.count(rows, grouped=False)}"
        raise BudgetError(
            f"{source}: a navigation grid of {side} = {readable.count(cells)} cells is more than the budget of "
            f"{readable.count(MAX_NAVIGATION_CELLS)} cells; {hint}"
        )


def check_flow_fields(fields: int, cells: int) -> None:
    """BudgetError unless ``fields`` flow fields of ``cells`` cells fit :data:`MAX_FLOW_FIELD_CELLS`."""
    if fields * cells > MAX_FLOW_FIELD_CELLS:
        most = max(MAX_FLOW_FIELD_CELLS // cells, 1)
        raise BudgetError(
            f"navigation: {fields} groups (agent kinds) seeking along a grid of {readable.count(cells)} cells need "
            f"{fields} flow fields, {readable.count(fields * cells)} cells in all, more than the budget of "
            f"{MAX_FLOW_FIELD_CELLS:,}; allowed: at most {most} groups on this grid (fewer agents.kinds), or a "
            "coarser navigation.cell_size"
        )


@dataclass(frozen=True)
class PairBudget:
    """The most (agent, neighbour) pairs one neighbour search may hold; ``radius_key`` names the
    parameters that set a metric radius, for the error message."""

    max_pairs: int = DEFAULT_MAX_PAIRS
    radius_key: str = "the neighbour radius"

    def __post_init__(self) -> None:
        if isinstance(self.max_pairs, bool) or not isinstance(self.max_pairs, Integral) or self.max_pairs < 1:
            raise ValueError(f"max_pairs: must be an integer >= 1, got {self.max_pairs!r}")
        object.__setattr__(self, "max_pairs", int(self.max_pairs))

    def check_metric(self, pairs: int, n_alive: int, radius: float, exact: bool = True) -> None:
        """BudgetError when a metric list of ``pairs`` pairs (``exact`` False: at least that many)
        is over the budget."""
        if pairs > self.max_pairs:
            have = readable.count(pairs) if exact else f"at least {readable.count(pairs)}"
            raise BudgetError(
                f"neighbors: {n_alive:,} agents within the metric radius {radius:g} ({self.radius_key}) have {have} "
                f"neighbour pairs, more than the budget of {self.max_pairs:,} pairs per search (max_pairs); lower the "
                "radius or the number of agents, or use neighbors.mode = topological"
            )

    def check_topological(self, rows: int, k: int) -> None:
        """BudgetError when ``rows`` rows of ``k`` nearest neighbours are over the budget."""
        if rows * k > self.max_pairs:
            raise BudgetError(
                f"neighbors: {readable.count(rows)} agents x neighbors.k = {k} need {readable.count(rows * k)} "
                f"neighbour slots, more than the budget of {self.max_pairs:,} pairs per search (max_pairs); lower "
                "neighbors.k or the number of agents"
            )


def check_trail(trail: int, agents: int) -> None:
    """BudgetError unless a ``trail``-frame trail of ``agents`` agents fits :data:`MAX_TRAIL_BYTES`."""
    need = (trail + 1) * agents * TRAIL_BYTES_PER_POINT
    if trail and need > MAX_TRAIL_BYTES:
        most = max(MAX_TRAIL_BYTES // max(agents * TRAIL_BYTES_PER_POINT, 1) - 1, 0)
        raise BudgetError(
            f"--trail: {trail} frames of {agents:,} agents need about {need / 2**30:.1f} GiB, more than the budget of "
            f"{MAX_TRAIL_BYTES / 2**30:g} GiB; allowed: at most {most} frames for this run"
        )


def _status_bytes(field: str) -> int | None:
    """A ``kB`` field of /proc/self/status (e.g. VmSize) in bytes; None where there is none."""
    try:
        with open("/proc/self/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def _file_int(path: str) -> int | None:
    """The integer in a one-line file (a cgroup's memory.max: "max" reads as None)."""
    try:
        with open(path, encoding="ascii") as handle:
            text = handle.read().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _meminfo_available() -> int | None:
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def memory_headroom() -> int | None:
    """Bytes this process can still allocate [bytes]: the least of its address-space limit
    (RLIMIT_AS) less the address space it uses, its cgroup's ``memory.max`` less
    ``memory.current`` (cgroup v2), and the system's MemAvailable; None where none is known."""
    limits = []
    try:
        import resource

        soft, infinity = resource.getrlimit(resource.RLIMIT_AS)[0], resource.RLIM_INFINITY
    except (ImportError, OSError, ValueError):  # no resource module (Windows)
        soft, infinity = -1, -1
    if soft != infinity and soft > 0:
        used = _status_bytes("VmSize")
        if used is not None:
            limits.append(soft - used)
    if os.path.exists("/sys/fs/cgroup/cgroup.controllers"):
        cap, current = _file_int("/sys/fs/cgroup/memory.max"), _file_int("/sys/fs/cgroup/memory.current")
        if cap is not None and current is not None:
            limits.append(cap - current)
    available = _meminfo_available()
    if available is not None:
        limits.append(available)
    return max(min(limits), 0) if limits else None


def check_memory(need: int, what: str, hint: str, parts: str | None = None) -> None:
    """BudgetError when ``need`` bytes (an estimate of a computation's peak) is more than
    :func:`memory_headroom`; ``what`` names the input and its size, ``hint`` what is allowed,
    ``parts`` (optional) what the estimate is made of, shown in brackets after it."""
    room = memory_headroom()
    if room is not None and need > room:
        made_of = f" ({parts})" if parts else ""
        raise BudgetError(
            f"{what}: needs about {readable.nbytes(need)} of memory{made_of}, more than the {readable.nbytes(room)} "
            f"this process can still allocate; {hint}"
        )


def max_obstacle_entries(obstacles: int) -> int:
    """Most (cell, obstacle) entries an obstacle grid of ``obstacles`` obstacles may list."""
    return max(MIN_OBSTACLE_ENTRIES, OBSTACLE_ENTRIES_PER_OBSTACLE * obstacles)


__all__ = [
    "DEFAULT_MAX_PAIRS",
    "FLOW_FIELD_BYTES_PER_CELL",
    "MAX_FLOW_FIELD_CELLS",
    "MAX_IMAGE_FILE_BYTES",
    "MAX_NAVIGATION_CELLS",
    "BudgetError",
    "PairBudget",
    "check_flow_fields",
    "check_memory",
    "check_navigation_cells",
    "check_trail",
    "grid_side",
    "max_obstacle_entries",
    "memory_headroom",
    "smallest_cell_size",
]

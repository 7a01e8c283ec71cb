"""Flow fields over an occupancy grid.

The cost-distance map comes from scipy's Dijkstra (``scipy.sparse.csgraph``) on the
graph of free cells: 8-connected, orthogonal steps cost 1 cell, diagonal steps sqrt(2),
and a diagonal step is allowed only when both cells it cuts past are free (no squeezing
through wall corners). Every cell's direction is the unit vector to the neighbour
that minimises (neighbour cost + step length): the next cell on a shortest path for a
free cell (scipy's predecessor), the way out for a wall cell. The target's cell, and cells from which the
target cannot be reached, have direction 0 and (unreachable) cost inf. Costs are in
world units (cells x cell_size).
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import dijkstra

from flocksim.navigation.occupancy import OccupancyGrid

ORTHOGONAL = ((0, 1), (1, 0), (0, -1), (-1, 0))
DIAGONAL = ((1, 1), (1, -1), (-1, 1), (-1, -1))
MOVES = ORTHOGONAL + DIAGONAL
"""(d_row, d_column) of the 8 moves; diagonals last."""
STEP_LENGTH = np.array([math.hypot(dr, dc) for dr, dc in MOVES])
STEP_UNIT = np.array([[dc, dr] for dr, dc in MOVES], dtype=np.float64) / STEP_LENGTH[:, None]
"""Each move as a unit (x, y) vector."""
UNIT_BY_CODE = np.zeros((9, 2))
"""Unit (x, y) vector of the move (d_row, d_column) at index (d_row + 1) * 3 + d_column + 1."""
for (_dr, _dc), _unit in zip(MOVES, STEP_UNIT, strict=True):
    UNIT_BY_CODE[(_dr + 1) * 3 + _dc + 1] = _unit


def _shifted(a: np.ndarray, dr: int, dc: int, fill) -> np.ndarray:
    """out[r, c] = a[r + dr, c + dc], ``fill`` outside."""
    ny, nx = a.shape
    out = np.full_like(a, fill)
    out[max(0, -dr) : ny - max(0, dr), max(0, -dc) : nx - max(0, dc)] = a[
        max(0, dr) : ny - max(0, -dr), max(0, dc) : nx - max(0, -dc)
    ]
    return out


def move_allowed(walls: np.ndarray) -> np.ndarray:
    """(8, ny, nx) bool: the move MOVES[k] from cell (r, c) stays in the grid, lands on a free cell
    and (diagonals) cuts past no wall."""
    free = ~walls
    allowed = np.empty((len(MOVES), *walls.shape), dtype=bool)
    for k, (dr, dc) in enumerate(MOVES):
        ok = _shifted(free, dr, dc, False)
        if dr != 0 and dc != 0:
            ok &= _shifted(free, dr, 0, False) & _shifted(free, 0, dc, False)
        allowed[k] = ok
    return allowed


def grid_graph(walls: np.ndarray) -> sp.csr_matrix:
    """The directed, symmetric graph of moves between free cells (node = row * nx + column)."""
    ny, nx = walls.shape
    allowed = move_allowed(walls) & ~walls[None]
    node = np.arange(ny * nx).reshape(ny, nx)
    rows, cols, weights = [], [], []
    for k, (dr, dc) in enumerate(MOVES):
        r, c = np.nonzero(allowed[k])
        rows.append(node[r, c])
        cols.append(node[r + dr, c + dc])
        weights.append(np.full(len(r), math.hypot(dr, dc)))
    n = ny * nx
    return sp.csr_matrix((np.concatenate(weights), (np.concatenate(rows), np.concatenate(cols))), shape=(n, n))


class FlowField:
    """Cost-distance map and directions toward one target cell of a grid.

    ``cost`` (ny, nx) [units], inf on walls and unreachable cells; ``direction``
    (ny, nx, 2) unit (x, y) vectors in the grid's plane, 0 at the target and where no
    neighbour is reachable. Build the graph once per grid with :func:`grid_graph`.
    """

    def __init__(self, grid: OccupancyGrid, graph: sp.csr_matrix | None = None, allowed: np.ndarray | None = None):
        self.grid = grid
        self.graph = grid_graph(grid.walls) if graph is None else graph
        self.allowed = move_allowed(grid.walls) if allowed is None else allowed
        walls = grid.walls
        # moves a cell's direction may take: the allowed ones from a free cell, any onto a free cell from a wall
        self.usable = self.allowed | (walls[None] & np.stack([_shifted(~walls, dr, dc, False) for dr, dc in MOVES]))
        self.edge_walls = np.nonzero(walls & self.usable.any(axis=0))
        self.target_cell: tuple[int, int] | None = None
        self._target_point = np.zeros(0)  # the point of the last update
        self.cost = np.full(grid.shape, np.inf)
        self.direction = np.zeros((*grid.shape, 2))
        self.recomputes = 0

    def source_cell(self, point: np.ndarray) -> tuple[int, int] | None:
        """The free cell a target at ``point`` (2,) stands for: its own cell, else the free cell
        whose centre is nearest to the point; None when the grid has no free cell."""
        rows, cols, inside = self.grid.cell_of(np.asarray(point, dtype=np.float64)[None, :])
        walls = self.grid.walls
        if inside[0] and not walls[rows[0], cols[0]]:
            return int(rows[0]), int(cols[0])
        free_r, free_c = np.nonzero(~walls)
        if len(free_r) == 0:
            return None
        u = self.grid.cell_coordinates(np.asarray(point, dtype=np.float64)[None, :])[0]
        k = int(np.argmin((free_c - u[0]) ** 2 + (free_r - u[1]) ** 2))
        return int(free_r[k]), int(free_c[k])

    def update(self, target: np.ndarray) -> bool:
        """Point the field at ``target`` (2,) [units]; recompute only if its cell changed. Returns
        whether it recomputed."""
        target = np.asarray(target, dtype=np.float64)
        if self.recomputes > 0 and np.array_equal(target, self._target_point):  # the same point: the same cell
            return False
        self._target_point = target.copy()
        cell = self.source_cell(target)
        if cell == self.target_cell and self.recomputes > 0:
            return False
        self.target_cell = cell
        self._compute(cell)
        self.recomputes += 1
        return True

    def _compute(self, cell: tuple[int, int] | None) -> None:
        ny, nx = self.grid.shape
        if cell is None:
            self.cost = np.full((ny, nx), np.inf)
            self.direction = np.zeros((ny, nx, 2))
            return
        cost, previous = dijkstra(self.graph, directed=True, indices=cell[0] * nx + cell[1], return_predecessors=True)
        cost = cost.reshape(ny, nx)
        cost[self.grid.walls] = np.inf
        direction = np.zeros((ny * nx, 2))
        # free cells: toward their predecessor on the shortest path from the target (the next cell)
        node = np.flatnonzero(previous >= 0)
        after = previous[node]
        code = (after // nx - node // nx + 1) * 3 + (after % nx - node % nx + 1)
        direction[node] = UNIT_BY_CODE[code]
        direction = direction.reshape(ny, nx, 2)
        # wall cells next to free ones: out onto the neighbour with the smallest cost + step
        r, c = self.edge_walls
        if len(r):
            padded = np.full((ny + 2, nx + 2), np.inf)
            padded[1:-1, 1:-1] = cost
            candidate = np.stack([padded[1 + r + dr, 1 + c + dc] for dr, dc in MOVES]) + STEP_LENGTH[:, None]
            candidate[~self.usable[:, r, c]] = np.inf
            choice = np.argmin(candidate, axis=0)
            out = np.isfinite(candidate[choice, np.arange(len(r))])
            direction[r[out], c[out]] = STEP_UNIT[choice[out]]
        self.cost = cost * self.grid.cell_size
        self.direction = direction

    def sample(self, points: np.ndarray, bilinear: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """Directions (n, 2) (unit or 0) and path costs (n,) [units] at plane points (n, 2).

        ``bilinear``: weights of the 4 nearest cell centres, over those that are free and
        reachable, renormalised; where none of them is, or their blend cancels out, the
        agent's own cell decides (a wall cell's way out). Points outside the grid get
        direction 0 and cost inf.
        """
        points = np.asarray(points, dtype=np.float64)
        n = len(points)
        rows, cols, inside = self.grid.cell_of(points)
        own_dir = np.zeros((n, 2))
        own_cost = np.full(n, np.inf)
        own_dir[inside] = self.direction[rows[inside], cols[inside]]
        own_cost[inside] = self.cost[rows[inside], cols[inside]]
        if not bilinear or n == 0:
            return own_dir, own_cost
        ny, nx = self.grid.shape
        u = self.grid.cell_coordinates(points)
        base = np.floor(u).astype(np.int64)
        frac = u - base
        blend = np.zeros((n, 2))
        blend_cost = np.zeros(n)
        total = np.zeros(n)
        for dx in (0, 1):
            for dy in (0, 1):
                c = base[:, 0] + dx
                r = base[:, 1] + dy
                ok = (c >= 0) & (c < nx) & (r >= 0) & (r < ny)
                cost = np.full(n, np.inf)
                cost[ok] = self.cost[r[ok], c[ok]]
                ok &= np.isfinite(cost)
                wx = frac[:, 0] if dx else 1.0 - frac[:, 0]
                wy = frac[:, 1] if dy else 1.0 - frac[:, 1]
                w = np.where(ok, wx * wy, 0.0)
                d = np.zeros((n, 2))
                d[ok] = self.direction[r[ok], c[ok]]
                blend += w[:, None] * d
                blend_cost += w * np.where(ok, cost, 0.0)
                total += w
        length = np.linalg.norm(blend, axis=1)
        use = inside & (total > 0.0) & (length > 1e-6) & np.isfinite(own_cost)
        direction = own_dir.copy()
        direction[use] = blend[use] / length[use, None]
        cost = own_cost.copy()
        cost[use] = blend_cost[use] / total[use]
        return direction, cost

"""The coherent grid: agents binned by cell and copied into cell order each step, and its scans.

Agents binned by cell and gathered in cell order, so that a neighbour loop reads memory in runs
(the "coherent grid" of GPU flocking work), scanned per cell for the k nearest or for the
neighbours within a radius, bitwise as the brute-force reference finds them.

The code is three modules, one idea each, and this module gives all their names (as it did when
it held them): :mod:`flocksim.neighbors.coherent_build` (the grid and a cell's block as runs),
:mod:`flocksim.neighbors.coherent_knn` (the k-nearest scans) and
:mod:`flocksim.neighbors.coherent_metric` (the metric scans).
"""

from __future__ import annotations

from flocksim.neighbors.coherent_build import (  # noqa: F401  (the private names too: masked, cuda_grid and the engines use some)
    CROWDING_LIMIT,
    MAX_RUNS,
    CoherentGrid,
    _gather,
    block_axis,
    block_runs,
    block_runs_at,
    block_runs_scratch,
    block_width,
    build_coherent_grid,
    build_knn_grid,
    coherent_grid,
    full_image_axes,
    gather_slots,
    narrowed_knn_width,
    run_displacement,
)
from flocksim.neighbors.coherent_knn import (  # noqa: F401  (the private names too: masked, cuda_grid and the engines use some)
    BLOCK_CANDIDATES,
    BOUND_SAFETY,
    RANK_MAX,
    THRESHOLD_STEPS,
    VECTOR_PAD,
    _block_gap,
    _knn_cells,
    _knn_in_block,
    _offset_gap,
    _padded,
    _ring_search,
    _scan_row_knn,
    _scan_slots_knn,
    _sq,
    _wall_gaps,
    knn_cell_scratch,
    knn_rows_by_cell,
    knn_search,
)
from flocksim.neighbors.coherent_metric import (  # noqa: F401  (the private names too: masked, cuda_grid and the engines use some)
    FILL_HITS,
    _count_metric,
    _count_row,
    _fill_stripe,
    _pair_d2,
    _scan_metric,
    _slot_of,
    block_hits,
    fill_stripes,
    metric_count,
    metric_fill_ascending,
    stripe_block,
    stripe_layers,
)

__all__ = [
    "BLOCK_CANDIDATES",
    "BOUND_SAFETY",
    "CROWDING_LIMIT",
    "CoherentGrid",
    "FILL_HITS",
    "MAX_RUNS",
    "RANK_MAX",
    "THRESHOLD_STEPS",
    "VECTOR_PAD",
    "block_axis",
    "block_hits",
    "block_runs",
    "block_runs_at",
    "block_runs_scratch",
    "block_width",
    "build_coherent_grid",
    "build_knn_grid",
    "coherent_grid",
    "fill_stripes",
    "full_image_axes",
    "gather_slots",
    "knn_cell_scratch",
    "knn_rows_by_cell",
    "knn_search",
    "metric_count",
    "metric_fill_ascending",
    "narrowed_knn_width",
    "run_displacement",
    "stripe_block",
    "stripe_layers",
]

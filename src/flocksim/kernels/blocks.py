"""Blocks of agents for the parallel loops: each parallel kernel runs a thin loop over blocks that
calls a serial kernel for its block's agents.

numba's parallel passes (parfor fusion and lowering) take time superlinear in the size of the
loop body, and a per-agent body with every rule inlined is large: compiled as the body of the
parallel loop it took minutes, compiled once as an ordinary function it takes seconds. Calls are
per block, not per agent, so their arguments cost nothing measurable. Results do not depend on the
blocks: every agent is still computed alone, from the same snapshot (docs/design.md §1.2, §7.4).
"""

from __future__ import annotations

from flocksim.kernels.compile import device

BLOCKS = 256
"""Blocks a parallel loop over agents is cut into (fewer when there are fewer agents): enough for
work stealing to balance the threads of a large machine."""


@device
def block_count(n):
    """How many blocks a loop over ``n`` agents is cut into."""
    return min(n, BLOCKS)


@device
def block_bounds(b, blocks, n):
    """First and one-past-last agent of block ``b`` of ``blocks`` over ``n`` agents (sizes differ by at most one)."""
    return b * n // blocks, (b + 1) * n // blocks

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
"""Most blocks a parallel loop is cut into: enough for work stealing to balance the threads of a
large machine."""

BLOCK_MIN = 64
"""Fewest agents (or cells) in a block, where there are that many: a call to a serial kernel
passes every array as several scalars, so blocks of one or two agents (300 agents cut into 256
blocks) paid that per agent."""


@device
def block_count(n):
    """How many blocks a loop over ``n`` agents is cut into: ``n / BLOCK_MIN`` rounded up, at most ``BLOCKS``."""
    return min((n + BLOCK_MIN - 1) // BLOCK_MIN, BLOCKS)


@device
def block_bounds(b, blocks, n):
    """First and one-past-last agent of block ``b`` of ``blocks`` over ``n`` agents (sizes differ by at most one)."""
    return b * n // blocks, (b + 1) * n // blocks

"""Blocks of the parallel loops (flocksim.kernels.blocks): how many, and that they tile the agents."""

from __future__ import annotations

import numpy as np
import pytest
from numba.core.registry import CPUDispatcher

from flocksim.kernels.blocks import BLOCK_MIN, BLOCKS, block_bounds, block_count


@pytest.mark.parametrize(
    ("n", "blocks"),
    [(0, 0), (1, 1), (BLOCK_MIN, 1), (BLOCK_MIN + 1, 2), (300, 5), (BLOCK_MIN * BLOCKS, BLOCKS), (10**6, BLOCKS)],
)
def test_block_count_keeps_blocks_at_least_block_min_agents_and_at_most_blocks(n, blocks):
    assert BLOCK_MIN == 64 and BLOCKS == 256  # the hand-computed counts below assume these
    assert block_count(n) == blocks
    assert block_count.py_func(n) == blocks


@pytest.mark.parametrize("n", [0, 1, 63, 64, 65, 300, 2000, 16385, 100_000])
def test_blocks_tile_the_agents_in_order_with_sizes_one_apart(n):
    blocks = block_count(n)
    bounds = [block_bounds(b, blocks, n) for b in range(blocks)]
    assert [i for s0, s1 in bounds for i in range(s0, s1)] == list(range(n))
    sizes = [s1 - s0 for s0, s1 in bounds]
    assert not sizes or (max(sizes) - min(sizes) <= 1 and min(sizes) >= min(n, BLOCK_MIN) // 2)


def test_serial_kernels_take_no_references_to_their_arrays():
    """A serial kernel runs once per block: compiled with numba's reference counting, it took and
    dropped a reference to every array argument on every call (atomic operations that made small
    flocks' steps up to 1.4 times slower), so they are compiled without it (flocksim.kernels.compile.serial_kernel).
    Checked on the integration kernel, called as integrate_all calls it and compiled again without
    the disk cache (numba shows no machine code of a function it loaded from there)."""
    import flocksim
    from flocksim.engines.cpu_reynolds import _integrate_agents

    sim = flocksim.Simulation(flocksim.load_preset("boids-2d"), seed=1)
    model, state = sim.model, sim.state
    inputs, buf = model.inputs(state), np.zeros((state.n, 3))
    _integrate_agents(0, state.n, state.position, state.velocity, state.alive, buf, model.aux(state.n), inputs.spin,
                      inputs.turn, inputs.wander, state.dim, model.space, sim.dt, model.coefficients)  # fmt: skip
    fresh = CPUDispatcher(_integrate_agents.py_func, targetoptions=dict(_integrate_agents.targetoptions))
    fresh.compile(_integrate_agents.signatures[0])
    (llvm,) = fresh.inspect_llvm().values()
    assert "define" in llvm and "NRT_incref" not in llvm and "NRT_decref" not in llvm

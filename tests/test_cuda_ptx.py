"""Every CUDA kernel compiles to PTX (compute capability 9.0) without a GPU.

The simulator runs kernels as Python and so misses what only the compiler sees (a float used as
an index, an unsupported call, a type that does not unify). This test records the argument types
of every kernel launch while small runs cover every path in the simulator, checks that every
kernel of the engine was launched, then compiles each launch signature with numba-cuda and NVVM
in two subprocesses without the simulator (no driver needed).
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

import cuda_sim
from flocksim import Simulation, apply_overrides, load_preset
from flocksim.viewer.protocol import encode_frame

pytestmark = [pytest.mark.cuda_sim, cuda_sim.needs_numba_cuda]

RUNS = [
    ("abm-flocking-small", ["agents.n=40", "neighbors.method=grid"]),  # fused metric 2D
    ("abm-flocking-small", ["agents.n=40", "neighbors.method=grid", "world.bounds.size=[3.0, 3.0]"]),  # grid rows
    ("abm-flocking-small", ["agents.n=40", "neighbors.method=brute", "neighbors.mode=topological"]),
    ("abm-flocking-small", ["agents.n=40", "neighbors.method=grid", "neighbors.mode=topological"]),
    ("crowd", ["agents.n=30", "overlap.enabled=true", "neighbors.method=grid"]),  # bounds, overlap, obstacles
    ("starlings-3d", ["agents.n=30", "neighbors.method=grid", "predator.enabled=true"]),  # k nearest on the grid
    ("vicsek", ["agents.n=30"]),
    ("abm-flocking-small", ["agents.n=300", "neighbors.method=grid", "world.bounds.kind=box"]),  # > 1 scan chunk
    ("couzin", ["agents.n=30"]),
]


def kernels_of_engine() -> set[tuple[str, str]]:
    from flocksim.engines import cuda_abm, cuda_frames, cuda_models
    from flocksim.kernels.cuda_runtime import _LazyKernel
    from flocksim.neighbors import cuda_brute, cuda_grid, cuda_scan

    found = set()
    for module in (cuda_abm, cuda_frames, cuda_models, cuda_brute, cuda_grid, cuda_scan):
        for value in vars(module).values():
            if isinstance(value, _LazyKernel):
                found.add((value.fn.__module__, value.fn.__name__))
    return found


def test_every_kernel_compiles_to_ptx(tmp_path: Path) -> None:
    from flocksim.kernels import cuda_runtime

    cuda_runtime.LAUNCHES = {}
    try:
        for preset, overrides in RUNS:
            sim = Simulation(apply_overrides(load_preset(preset), overrides), seed=1, engine="cuda")
            sim.step(1)
            sim.neighbors()
            encode_frame(sim, 0, layout="q16", selected=0)  # the viewer's GPU side (engines/cuda_frames.py)
            assert sim.engine.state_is_finite(sim.state)
        launches = {(fn.__module__, fn.__name__): specs for fn, specs in cuda_runtime.LAUNCHES.items()}
    finally:
        cuda_runtime.LAUNCHES = None
    missing = kernels_of_engine() - set(launches)
    assert not missing, f"kernels never launched by the covering runs: {sorted(missing)}"
    path = tmp_path / "launches.pkl"
    path.write_bytes(pickle.dumps(launches))
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "0"}
    script = str(Path(__file__).with_name("cuda_ptx_compile.py"))
    parts = 2
    command = [sys.executable, script, str(path)]
    pipes = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "text": True}
    procs = [subprocess.Popen([*command, str(p), str(parts)], env=env, **pipes) for p in range(parts)]
    compiled = []
    for proc in procs:
        out, err = proc.communicate(timeout=900)
        assert proc.returncode == 0, f"PTX compilation failed:\n{err[-3000:]}"
        compiled += out.splitlines()
    names = {line.split(":")[0] for line in compiled}
    assert names == {f"{m}.{n}" for m, n in launches}

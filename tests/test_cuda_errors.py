"""engine="cuda" where it cannot run: one clear line naming what is missing (and exit status 2)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import cuda_sim
from flocksim import Simulation, load_preset

pytestmark = [pytest.mark.cuda_sim, cuda_sim.needs_numba_cuda]


def test_no_gpu_and_no_simulator_is_one_clear_error():
    """This machine has no NVIDIA driver: without the simulator the CLI refuses, in one line."""
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "0"}
    command = [str(Path(sys.executable).with_name("flocksim")), "run", "boids-2d", "--engine", "cuda", "--steps", "1"]
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    if result.returncode == 0:
        pytest.skip("a GPU is present: the engine runs")
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "engine cuda: no usable NVIDIA GPU" in lines[0]
    assert "NUMBA_ENABLE_CUDASIM=1" in lines[0] and "allowed engines here: cpu" in lines[0]


def test_missing_numba_cuda_names_the_extra(monkeypatch):
    from flocksim.kernels import cuda_runtime

    real = cuda_runtime.importlib.util.find_spec
    monkeypatch.setattr(
        cuda_runtime.importlib.util, "find_spec", lambda name, *a: None if name == "numba_cuda" else real(name, *a)
    )
    with pytest.raises(ValueError, match=r"needs the numba-cuda package.*pip install 'flocksim\[cuda\]'"):
        Simulation(load_preset("boids-2d"), engine="cuda")


def test_threads_are_for_the_cpu_engine():
    with pytest.raises(ValueError, match="threads: only for engine cpu"):
        Simulation(load_preset("vicsek"), engine="cuda", threads=2)


def test_unknown_engine_lists_cuda():
    with pytest.raises(ValueError, match="allowed: cpu, cuda"):
        Simulation(load_preset("vicsek"), engine="gpu")


@pytest.mark.parametrize("method", ["grid", "brute"])
def test_neighbour_pairs_over_the_budget_are_refused_on_the_gpu(method):
    """The pair budget holds on the GPU: counted there, refused before the list is allocated."""
    from flocksim import apply_overrides
    from flocksim.budgets import BudgetError

    params = apply_overrides(load_preset("boids-2d"), ["agents.n=300", "rules.cohesion.radius=1000",
                                                       f"neighbors.method={method}"])  # fmt: skip
    with pytest.raises(BudgetError, match=r"300 agents within the metric radius 1000"):
        Simulation(params, engine="cuda", max_pairs=300 * 299 - 1)
    sim = Simulation(params, engine="cuda", max_pairs=300 * 299)  # everyone sees everyone: exactly the budget
    sim.step()
    star = apply_overrides(load_preset("starlings-2d"), ["agents.n=100", "neighbors.k=50"])
    with pytest.raises(BudgetError, match=r"neighbors\.k = 50"):
        Simulation(star, engine="cuda", max_pairs=4999)

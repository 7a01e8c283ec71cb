"""benchmarks/bench_gpu.py runs end to end (in numba-cuda's simulator, at N = 40): ready for a GPU."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import cuda_sim

pytestmark = [pytest.mark.cuda_sim, cuda_sim.needs_numba_cuda]

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_gpu.py"


def test_bench_gpu_runs_in_the_simulator():
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "1"}
    args = [sys.executable, str(SCRIPT), "--n", "40", "--steps", "1", "--warmup", "1", "--cpu-n", "40"]
    done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    assert [(r["case"], r["engine"]) for r in rows] == [
        ("2d-metric", "cuda"), ("3d-topological", "cuda"), ("2d-metric", "cpu"),
    ]  # fmt: skip
    for row in rows:
        assert row["n"] == 40 and row["ms_per_step_median"] > 0
    assert "simulator" in rows[0]["device"] and "not GPU times" in rows[0]["device"]
    assert rows[2]["gpu_speedup"] > 0 and rows[2]["speedup_target"] == 50.0


def test_bench_gpu_without_a_gpu_says_why():
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "0"}
    done = subprocess.run([sys.executable, str(SCRIPT), "--n", "40"], env=env, capture_output=True, text=True,
                          timeout=300)  # fmt: skip
    if done.returncode == 0:
        pytest.skip("a GPU is present")
    assert done.returncode == 2
    assert "engine cuda: no usable NVIDIA GPU" in done.stderr

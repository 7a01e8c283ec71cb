"""flocksim sweep --engine cuda: the same rows as on the CPU (numba-cuda's simulator, one in-process worker)."""

from __future__ import annotations

import logging

import pytest
from distributed import Client, LocalCluster

import cuda_sim
from flocksim.sweep import SweepError, parse_sweep, read_results, run_sweep

pytestmark = [pytest.mark.cuda_sim, cuda_sim.needs_numba_cuda]

SWEEP = """
base = "boids-2d"
set = ["agents.n=30"]
steps = 3
[[axes]]
key = "rules.alignment.weight"
values = [0.5, 2.0]
[[summaries]]
metric = "polarization"
stat = "final"
"""
VOLATILE = {"wall_s", "compile_s", "worker"}


def test_sweep_on_the_cuda_engine_gives_the_cpu_rows(tmp_path):
    sweep = parse_sweep(SWEEP, name="v")
    with (
        LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None,
                     silence_logs=logging.ERROR) as cluster,
        Client(cluster) as client,
    ):  # fmt: skip
        rows = {}
        for engine in ("cpu", "cuda"):
            report = run_sweep(sweep, tmp_path / f"{engine}.parquet", client=client, engine=engine)
            assert report.ran == 2
            table = read_results(tmp_path / f"{engine}.parquet").to_pylist()
            rows[engine] = [{k: v for k, v in r.items() if k not in VOLATILE} for r in table]
    assert [r["status"] for r in rows["cpu"]] == ["ok", "ok"], rows["cpu"]
    assert rows["cuda"] == rows["cpu"]


def test_sweep_with_an_unknown_engine_is_refused(tmp_path):
    with pytest.raises(SweepError, match="--engine: unknown engine 'gpu'; allowed: cpu, cuda"):
        run_sweep(parse_sweep(SWEEP, name="v"), tmp_path / "x.parquet", engine="gpu")

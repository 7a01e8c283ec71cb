"""``flocksim bench`` and its workload."""

from __future__ import annotations

import json
import math

from typer.testing import CliRunner

from flocksim.bench import abm_side, abm_workload
from flocksim.cli import app

KEYS = {"workload", "dim", "n", "neighbors", "engine", "threads", "threading_layer", "precision", "steps",
        "ms_per_step_median", "ms_per_step_min", "mean_neighbors", "compile_s", "peak_rss_mb",
        "background_load"}  # fmt: skip


def test_workload_keeps_the_large_models_density():
    # 2D: L = 150 sqrt(N/400); the large preset itself at N = 400
    assert abm_side(2, 400) == 150.0
    assert math.isclose(abm_side(2, 100_000), 150.0 * math.sqrt(250.0))
    # 3D: (4/3) pi 15^3 N / L^3 = 12.6 neighbours per bird
    side = abm_side(3, 50_000)
    assert math.isclose(4.0 / 3.0 * math.pi * 15.0**3 * 50_000 / side**3, 12.6)
    p = abm_workload(3, 1000, "topological", k=5)
    assert p.world.bounds.kind == "periodic" and p.neighbors.k == 5 and p.flocking.vision == 15.0


def test_bench_prints_one_json_object_per_case():
    runner = CliRunner()
    result = runner.invoke(app, ["bench", "--n", "3000", "--steps", "2", "--warmup", "1", "--json"])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    assert len(rows) == 1
    row = rows[0]
    assert set(row) == KEYS
    assert row["n"] == 3000 and row["dim"] == 2 and row["neighbors"] == "metric" and row["steps"] == 2
    assert row["ms_per_step_min"] <= row["ms_per_step_median"]
    assert 8.0 < row["mean_neighbors"] < 20.0  # about 12.6 at a uniform start, a bit more once flocking


def test_bench_several_cases_run_in_their_own_processes():
    runner = CliRunner()
    args = ["bench", "--n", "500", "--dim", "2", "--dim", "3", "--neighbors", "topological", "--steps", "1", "--json"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    assert [(r["dim"], r["neighbors"], r["mean_neighbors"]) for r in rows] == [(2, "topological", 7.0),
                                                                              (3, "topological", 7.0)]  # fmt: skip


def test_bench_rejects_bad_input_with_status_2():
    runner = CliRunner()
    for args, word in ((["--dim", "4"], "--dim"), (["--neighbors", "nearest"], "--neighbors"),
                       (["--workload", "vicsek"], "--workload")):  # fmt: skip
        result = runner.invoke(app, ["bench", *args])
        assert result.exit_code == 2
        assert word in result.output

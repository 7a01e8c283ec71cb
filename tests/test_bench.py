"""``flocksim bench`` and its workload."""

from __future__ import annotations

import importlib.util
import json
import math
import subprocess
import sys
from pathlib import Path

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


BENCH_COMPILE = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_compile.py"


def test_bench_compile_runs_and_writes_the_estimates_from_its_cold_figures(tmp_path):
    """benchmarks/bench_compile.py starts (its cold runs take minutes: not run here) and turns a
    result into the compile notice's table: cold minus warm seconds per preset, the longest per model."""
    done = subprocess.run([sys.executable, str(BENCH_COMPILE), "--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "--write-estimates" in done.stdout and "--src" in done.stdout
    spec = importlib.util.spec_from_file_location("bench_compile", BENCH_COMPILE)
    bench_compile = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench_compile)
    row = {"model": "reynolds", "neighbors": "metric", "dim": 2, "bounds": "box", "numba": "0.68.1"}
    result = {
        "date": "2025-01-01 00:00 UTC", "machine": {"cpu_count": 2, "cpu_model": "x"}, "threads": 2, "steps": 200,
        "presets": [{"preset": "boids-2d", "cold_s": 30.0, "warm_s": 3.0, "compile_s": 27.0, **row},
                    {"preset": "crowd", "cold_s": 50.0, "warm_s": 4.0, "compile_s": 46.04, **row},
                    {"preset": "vicsek", "error": "cold run failed"}],
    }  # fmt: skip
    previous = {"presets": {"couzin": {"compile_s": 12.0, "model": "couzin", "neighbors": "metric"}}}
    table = bench_compile.estimates_from(result, previous)
    assert {k: v["compile_s"] for k, v in table["presets"].items()} == {"boids-2d": 27.0, "couzin": 12.0, "crowd": 46.0}
    assert table["models"] == {"couzin": 12.0, "reynolds": 46.0}
    assert "bench_compile.py" in table["about"] and table["machine"]["cpu_count"] == 2


BENCH_STEADY = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_steady.py"


def test_bench_steady_summarises_rounds_per_tree_without_the_compiling_round(tmp_path):
    """benchmarks/bench_steady.py (whole presets' step times, two source trees alternated) starts,
    refuses a tree without sources, and summarises: the first round (it compiles) left out, the
    median of the runs' medians per tree, the ratio to the first tree."""
    done = subprocess.run([sys.executable, str(BENCH_STEADY), "--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "--tree" in done.stdout and "--rounds" in done.stdout
    refused = subprocess.run(
        [sys.executable, str(BENCH_STEADY), "--tree", f"x={tmp_path}"], capture_output=True, text=True, timeout=60
    )
    assert refused.returncode != 0 and "no src/flocksim" in refused.stderr
    sys.path.insert(0, str(BENCH_STEADY.parent))
    try:
        spec = importlib.util.spec_from_file_location("bench_steady", BENCH_STEADY)
        bench_steady = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(bench_steady)
    finally:
        sys.path.remove(str(BENCH_STEADY.parent))

    def run(tree, rnd, median, cpu):
        return {"tree": tree, "preset": "boids-2d", "round": rnd, "median_ms": median, "fastest_ms": median - 1,
                "mean_ms": median, "median_cpu_ms": cpu}  # fmt: skip

    runs = [run("before", 0, 900.0, 900.0), run("after", 0, 5.0, 5.0)]  # round 0 compiles: left out
    runs += [run("before", r, m, m) for r, m in ((1, 10.0), (2, 12.0), (3, 11.0))]
    runs += [run("after", r, m, c) for r, m, c in ((1, 11.0, 10.5), (2, 13.0, 10.5), (3, 12.1, 11.0))]
    runs.append({"tree": "after", "preset": "boids-2d", "round": 4, "error": "exit 1"})
    summary = bench_steady.summarise(runs, ["before", "after"], ["boids-2d"], first_round=1)["boids-2d"]
    assert summary["before"]["median_ms"] == 11.0 and summary["after"]["median_ms"] == 12.1
    assert summary["before"]["fastest_ms"] == 9.0 and summary["after"]["run_medians_ms"] == [11.0, 13.0, 12.1]
    assert summary["after"]["ratio_to_before"] == 1.1 and summary["before"]["ratio_to_before"] == 1.0
    assert summary["after"]["cpu_ratio_to_before"] == round(10.5 / 11.0, 4)


TURN_ROADS = Path(__file__).resolve().parents[1] / "benchmarks" / "turn_roads.py"


def test_turn_roads_counts_imposed_turns_against_the_preset(tmp_path, capsys):
    """benchmarks/turn_roads.py (docs/starlings.md, collective turns on the banked preset): 30 birds of
    starlings-3d for 6 s after the 10 s of flight; imposed turns of 90 degrees every second or so are
    counted, the preset's slow circling is not; --summary averages the lines per road."""
    spec = importlib.util.spec_from_file_location("turn_roads", TURN_ROADS)
    turn_roads = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(turn_roads)
    preset = turn_roads.run(30, 0, (), 6.0)
    turned = turn_roads.run(
        30, 0, ("turning.enabled=true", "turning.propagation=imposed", "turning.mean_interval=1"), 6.0
    )
    assert preset["turns_per_minute"] == 0.0 and turned["turns_per_minute"] >= 10.0
    assert 0.0 < turned["polarization_min"] <= turned["polarization"] <= 1.0
    assert preset["birds"] == 30 and preset["overrides"] == "" and preset["speed_fluctuation"] > 0.0
    lines = tmp_path / "runs.jsonl"
    lines.write_text("".join(json.dumps(row) + "\n" for row in (preset, turned, preset)), encoding="utf-8")
    assert turn_roads.main(["--summary", str(lines)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 2 and out[0].startswith("30 birds [preset], 2 seeds: turns_per_minute 0,")
    assert out[1].startswith(
        "30 birds [turning.enabled=true turning.propagation=imposed turning.mean_interval=1], 1 seeds"
    )

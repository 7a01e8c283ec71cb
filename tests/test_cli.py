"""The ``flocksim`` command line: run, presets, schema, show, and bad input (exit 2, one line, no file)."""

from __future__ import annotations

import csv
import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from flocksim.cli import app
from flocksim.config import loads_toml
from flocksim.metrics import METRIC_NAMES
from flocksim.params import params_json_schema
from flocksim.scenarios import load_preset

PRESETS = ["crowd", "boids-2d", "starlings-2d", "starlings-3d", "abm-flocking-small", "abm-flocking-large"]
SUMMARY = re.compile(
    r"^(?P<name>\S+): (?P<steps>\d+) steps .* (?P<rate>[\d.]+|inf) steps/s; "
    r"polarization (?P<polarization>[\d.]+), mean neighbours (?P<neighbours>[\d.]+)$"
)
CONSOLE_SCRIPT = Path(sys.executable).with_name("flocksim")


@pytest.fixture(scope="module")
def runner() -> CliRunner:
    return CliRunner()


def invoke(runner: CliRunner, *args: str):
    return runner.invoke(app, [str(a) for a in args], catch_exceptions=False)


def summary(stdout: str) -> re.Match[str]:
    lines = stdout.strip().splitlines()
    assert len(lines) == 1, f"summary is not one line: {stdout!r}"
    match = SUMMARY.match(lines[0])
    assert match, f"summary line does not match: {lines[0]!r}"
    return match


def listing(folder: Path) -> set[str]:
    """Every entry below ``folder``, hidden ones (.part files) included."""
    return {str(p.relative_to(folder)) for p in folder.rglob("*")} | {
        p.name for p in folder.iterdir() if p.name.startswith(".")
    }


# --- run ----------------------------------------------------------------------------------------------


def test_run_prints_one_line_summary(runner):
    result = invoke(runner, "run", "boids-2d", "--steps", "20", "--seed", "1")
    assert result.exit_code == 0, result.output
    match = summary(result.stdout)
    assert match["name"] == "boids-2d"
    assert int(match["steps"]) == 20
    assert 0.0 <= float(match["polarization"]) <= 1.0
    assert float(match["neighbours"]) >= 0.0
    assert "steps/s" in result.stdout


def test_the_summarys_rate_keeps_slow_runs_readable():
    """A million agents run under a step a second: the summary said "0 steps/s"."""
    from flocksim.cli_run import rate_text

    assert [rate_text(r) for r in (0.4213, 3.456, 42.17, 99.94, 100.4, 12345.6)] == [
        "0.421", "3.46", "42.2", "99.9", "100", "12346"
    ]  # fmt: skip
    assert rate_text(float("inf")) == "inf" and SUMMARY.match(
        f"x: 1 steps (0.02 s simulated, 1 agents) in 2.40 s (+0.0 s compile), {rate_text(1 / 2.4)} steps/s; "
        "polarization 0.500, mean neighbours 1.00"
    )


def test_run_is_deterministic(runner):
    first = summary(invoke(runner, "run", "boids-2d", "--steps", "20", "--seed", "1", "-q").stdout)
    again = summary(invoke(runner, "run", "boids-2d", "--steps", "20", "--seed", "1", "-q").stdout)
    assert (first["polarization"], first["neighbours"]) == (again["polarization"], again["neighbours"])


def test_run_writes_metrics_csv(runner, tmp_path):
    out = tmp_path / "out.csv"
    result = invoke(runner, "run", "boids-2d", "--steps", "20", "--seed", "1", "--metrics", out, "--every", "5")
    assert result.exit_code == 0, result.output
    summary(result.stdout)
    with out.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    header = out.read_text().splitlines()[0].split(",")
    assert header[:3] == ["step", "time", "polarization"]
    assert header == ["step", "time", *METRIC_NAMES]
    assert [int(r["step"]) for r in rows] == [0, 5, 10, 15, 20]
    dt = load_preset("boids-2d").world.dt
    for row in rows:
        assert float(row["time"]) == pytest.approx(int(row["step"]) * dt)
        assert 0.0 <= float(row["polarization"]) <= 1.0
        assert float(row["n_alive"]) == 300
    assert listing(tmp_path) == {"out.csv"}  # no .part file left
    if os.name == "posix":  # same mode as a file made with open()
        plain = tmp_path / "plain"
        plain.write_text("")
        assert stat.S_IMODE(out.stat().st_mode) == stat.S_IMODE(plain.stat().st_mode)


def test_run_metrics_includes_final_step_when_not_a_multiple(runner, tmp_path):
    out = tmp_path / "m.csv"
    result = invoke(runner, "run", "crowd", "--steps", "12", "--metrics", out, "--every", "5", "-q")
    assert result.exit_code == 0, result.output
    with out.open(newline="") as handle:
        assert [int(r["step"]) for r in csv.DictReader(handle)] == [0, 5, 10, 12]


def test_run_metrics_overwrites_an_existing_file_only_with_force(runner, tmp_path):
    out = tmp_path / "m.csv"
    out.write_text("old\n")
    refused = invoke(runner, "run", "crowd", "--steps", "4", "--metrics", out, "--every", "2", "-q")
    assert refused.exit_code == 2 and out.read_text() == "old\n"
    assert refused.stderr.strip() == (
        f"error: --metrics: {out} already exists; allowed: --force to replace it, or another path"
    )
    result = invoke(runner, "run", "crowd", "--steps", "4", "--metrics", out, "--every", "2", "-q", "--force")
    assert result.exit_code == 0, result.output
    assert out.read_text().startswith("step,time,polarization")
    assert listing(tmp_path) == {"m.csv"}


def test_run_toml_file_matches_preset(runner, tmp_path):
    shown = invoke(runner, "show", "boids-2d")
    assert shown.exit_code == 0
    path = tmp_path / "mine.toml"
    path.write_text(shown.stdout, encoding="utf-8")
    from_file = invoke(runner, "run", path, "--steps", "20", "--seed", "1", "-q")
    assert from_file.exit_code == 0, from_file.output
    from_preset = invoke(runner, "run", "boids-2d", "--steps", "20", "--seed", "1", "-q")
    a, b = summary(from_file.stdout), summary(from_preset.stdout)
    assert a["name"] == "mine"
    assert (a["polarization"], a["neighbours"]) == (b["polarization"], b["neighbours"])


def test_run_with_overrides(runner):
    overrides = ["--set", "agents.n=17", "--set", "rules.alignment.weight=0.5"]
    result = invoke(runner, "run", "crowd", "--steps", "3", *overrides)
    assert result.exit_code == 0, result.output
    assert "17 agents" in summary(result.stdout).string


def test_run_zero_steps(runner):
    result = invoke(runner, "run", "crowd", "--steps", "0")
    assert result.exit_code == 0, result.output
    assert int(summary(result.stdout)["steps"]) == 0


def test_run_abm_flocking_large_100_steps(runner):
    result = invoke(runner, "run", "abm-flocking-large", "--steps", "100")
    assert result.exit_code == 0, result.output
    match = summary(result.stdout)
    assert int(match["steps"]) == 100
    assert "400 agents" in match.string


def test_run_with_threads(runner):
    import numba

    before = numba.get_num_threads()
    try:
        result = invoke(runner, "run", "crowd", "--steps", "3", "--threads", "1", "-q")
    finally:
        numba.set_num_threads(before)  # in-process: do not slow down later tests
    assert result.exit_code == 0, result.output


# --- presets, schema, show ----------------------------------------------------------------------------


def test_presets_lists_all_six_with_descriptions(runner):
    result = invoke(runner, "presets")
    assert result.exit_code == 0
    flat = " ".join(result.stdout.split())  # the table may wrap long descriptions
    for name in PRESETS:
        description = load_preset(name).description
        assert description
        assert f"{name} {' '.join(description.split())}" in flat, name


def test_schema_prints_valid_json(runner):
    result = invoke(runner, "schema")
    assert result.exit_code == 0
    assert json.loads(result.stdout) == params_json_schema()


def test_schema_to_file(runner, tmp_path):
    path = tmp_path / "params.schema.json"
    result = invoke(runner, "schema", "-o", path)
    assert result.exit_code == 0, result.output
    assert json.loads(path.read_text()) == params_json_schema()
    assert listing(tmp_path) == {"params.schema.json"}


def test_schema_into_missing_directory(runner, tmp_path):
    result = invoke(runner, "schema", "-o", tmp_path / "nope" / "s.json")
    assert result.exit_code == 2
    assert len(result.stderr.strip().splitlines()) == 1
    assert "--output" in result.stderr
    assert listing(tmp_path) == set()


@pytest.mark.parametrize("name", PRESETS)
def test_show_prints_toml_that_loads_back_equal(runner, name):
    result = invoke(runner, "show", name)
    assert result.exit_code == 0
    assert loads_toml(result.stdout) == load_preset(name)


def test_show_with_override(runner):
    result = invoke(runner, "show", "starlings-2d", "--set", "agents.n=2000")
    assert result.exit_code == 0
    params = loads_toml(result.stdout)
    assert params.agents.n == 2000
    assert params.world == load_preset("starlings-2d").world


# --- bad input: exit 2, one line naming the key and the allowed values, no output file ---------------


BAD_RUNS = {
    "unknown preset": (["nope"], ["nope", "boids-2d", "abm-flocking-large"]),
    "unknown key": (["boids-2d", "--set", "agents.foo=1"], ["agents.foo", "max_speed"]),
    "unknown section": (["boids-2d", "--set", "foo.bar=1"], ["foo", "rules"]),
    "wrong type": (["boids-2d", "--set", "agents.n=abc"], ["agents.n", ">= 0"]),
    "boolean": (["boids-2d", "--set", "agents.n=true"], ["agents.n", ">= 0"]),
    "n out of range": (["boids-2d", "--set", "agents.n=-1"], ["agents.n", ">= 0 and <= 50000000"]),
    "dt out of range": (["boids-2d", "--set", "world.dt=0"], ["world.dt", ">= 1e-06 and <= 10"]),
    "bad choice": (["boids-2d", "--set", "world.bounds.kind=sphere"], ["world.bounds.kind", "periodic"]),
    "nan": (["boids-2d", "--set", "agents.max_speed=nan"], ["agents.max_speed", "finite"]),
    "inf": (["boids-2d", "--set", "agents.max_speed=inf"], ["agents.max_speed", "finite"]),
    "-inf": (["boids-2d", "--set", "world.dt=-inf"], ["world.dt", "finite"]),
    "unknown model": (["boids-2d", "--set", "model=nope"], ["model", "reynolds", "abm-flocking"]),
    "malformed set": (["boids-2d", "--set", "agents.n"], ["agents.n", "KEY=VALUE"]),
    "size vs dim": (["boids-2d", "--set", "world.dim=3"], ["world.bounds.size", "world.dim"]),
    "threads 0": (["boids-2d", "--threads", "0"], ["--threads", "1"]),
    "threads 999": (["boids-2d", "--threads", "999"], ["threads", "between 1 and"]),
    "engine gpu": (["boids-2d", "--engine", "gpu"], ["engine", "gpu", "cpu"]),
    "steps -1": (["boids-2d", "--steps", "-1"], ["--steps", "0"]),
    "steps abc": (["boids-2d", "--steps", "abc"], ["--steps"]),
    "every 0": (["boids-2d", "--every", "0"], ["--every", "1"]),
    "seed -1": (["boids-2d", "--seed", "-1"], ["--seed", "0"]),
    "unknown option": (["boids-2d", "--bogus"], ["--bogus"]),
}


def check_bad(result, expected: list[str]) -> str:
    assert result.exit_code == 2, (result.exit_code, result.output)
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, f"not one line: {result.stderr!r}"
    for text in expected:
        assert text in lines[0], (text, lines[0])
    return lines[0]


@pytest.mark.parametrize("case", list(BAD_RUNS))
def test_bad_run_input(runner, tmp_path, case):
    args, expected = BAD_RUNS[case]
    work = tmp_path / "work"
    work.mkdir()
    out = work / "out.csv"
    result = invoke(runner, "run", args[0], "--steps", "5", "--metrics", out, *args[1:])
    check_bad(result, expected)
    assert listing(work) == set(), "output or .part file left behind"


def write_bad_toml(folder: Path, kind: str) -> Path:
    path = folder / "params.toml"
    if kind == "syntax error":
        path.write_text('model = "reynolds"\n[world\ndt = 0.1\n', encoding="utf-8")
    elif kind == "binary garbage":
        path.write_bytes(bytes(range(256)) * 4)
    elif kind == "directory":
        path.mkdir()
    elif kind == "bad value":
        path.write_text("[world]\ndt = nan\n", encoding="utf-8")
    elif kind == "unknown key":
        path.write_text("[agents]\nspeed = 3.0\n", encoding="utf-8")
    # "missing": nothing
    return path


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        ("syntax error", ["params.toml", "TOML"]),
        ("binary garbage", ["params.toml"]),
        ("directory", ["params.toml"]),
        ("missing", ["params.toml"]),
        ("bad value", ["world.dt", "finite"]),
        ("unknown key", ["agents.speed", "max_speed"]),
    ],
)
def test_bad_toml_file(runner, tmp_path, kind, expected):
    path = write_bad_toml(tmp_path, kind)
    before = listing(tmp_path)
    result = invoke(runner, "run", path, "--steps", "5", "--metrics", tmp_path / "out.csv")
    check_bad(result, expected)
    assert listing(tmp_path) == before, "output or .part file left behind"


def test_metrics_into_missing_directory(runner, tmp_path):
    result = invoke(runner, "run", "boids-2d", "--steps", "5", "--metrics", tmp_path / "nodir" / "m.csv")
    line = check_bad(result, ["--metrics", "nodir"])
    assert "allowed" in line
    assert listing(tmp_path) == set()


def test_metrics_path_is_a_directory(runner, tmp_path):
    (tmp_path / "m.csv").mkdir()
    result = invoke(runner, "run", "boids-2d", "--steps", "5", "--metrics", tmp_path / "m.csv")
    check_bad(result, ["--metrics"])
    assert listing(tmp_path) == {"m.csv"}


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["show", "nope"], ["preset", "starlings-3d"]),
        (["show", "boids-2d", "--set", "agents.n=x"], ["agents.n"]),
        (["bogus"], ["bogus"]),
        (["run"], ["target"]),
    ],
)
def test_other_bad_commands(runner, args, expected):
    check_bad(invoke(runner, *args), expected)


def test_crash_mid_run_leaves_no_partial_file(runner, tmp_path, monkeypatch):
    from flocksim.simulation import Simulation

    original = Simulation.step

    def failing_step(self, n=1):
        if self.steps >= 4:
            raise RuntimeError("boom")
        original(self, n)

    monkeypatch.setattr(Simulation, "step", failing_step)
    out = tmp_path / "m.csv"
    result = runner.invoke(app, ["run", "crowd", "--steps", "20", "--every", "2", "--metrics", str(out), "-q"])
    assert result.exit_code != 0
    assert listing(tmp_path) == set()


# --- the installed console script, in a real process --------------------------------------------------


def test_console_script_run_and_bad_input(tmp_path):
    script = str(CONSOLE_SCRIPT) if CONSOLE_SCRIPT.exists() else None
    command = [script] if script else [sys.executable, "-m", "flocksim.cli"]
    out = tmp_path / "m.csv"
    done = subprocess.run(
        [*command, "run", "boids-2d", "--steps", "20", "--seed", "1", "--metrics", str(out), "--every", "5"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    summary(done.stdout)
    assert out.read_text().startswith("step,time,polarization")
    bad = subprocess.run(
        [*command, "run", "boids-2d", "--steps", "-1", "--metrics", str(tmp_path / "x.csv")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert bad.returncode == 2
    assert bad.stdout == ""
    assert len(bad.stderr.strip().splitlines()) == 1 and "--steps" in bad.stderr
    assert listing(tmp_path) == {"m.csv"}


def test_module_entry_point_bad_key(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "flocksim.cli", "run", "crowd", "--set", "agents.max_speed=nan"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=tmp_path,
    )
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "agents.max_speed" in done.stderr
    assert listing(tmp_path) == set()

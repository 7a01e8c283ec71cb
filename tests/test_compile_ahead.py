"""``flocksim compile``: presets compiled ahead, several processes at once, into the kernel cache."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from flocksim.cli import app
from flocksim.viewer import compile_ahead as ahead
from flocksim.viewer.compile_ahead import CompileAheadError, Outcome, check_request

NOTICE = "flocksim: compiling the kernels"


def test_presets_are_checked_before_any_process_starts():
    assert check_request(["vicsek", "boids-2d", "vicsek"], 2) == ["vicsek", "boids-2d"]
    assert "starlings-3d" in check_request([], 1)  # no name: every shipped preset
    with pytest.raises(CompileAheadError, match=r"preset: unknown 'boids'; allowed: .*boids-2d"):
        check_request(["boids"], 1)
    for jobs in (0, 65, True, 1.5):
        with pytest.raises(CompileAheadError, match=r"--jobs: .*allowed: a whole number from 1 to 64"):
            check_request(["vicsek"], jobs)


def test_longest_first_at_most_jobs_at_once_and_a_line_for_each():
    running, most, lock = set(), [0], threading.Lock()
    begun: list[str] = []

    def fake(name, overrides):
        with lock:
            begun.append(name)
            running.add(name)
            most[0] = max(most[0], len(running))
        time.sleep(0.05)
        with lock:
            running.discard(name)
        return Outcome(name, name != "couzin", 0.05, "" if name != "couzin" else "boom")

    lines: list[str] = []
    names = ["vicsek", "boids-2d", "couzin", "minions"]
    outcomes = ahead.compile_ahead(names, 2, (), lines.append, fake)
    guess = ahead.estimates(names, ())
    assert begun[:2] == sorted(names, key=lambda n: -guess[n])[:2]  # the two longest start first
    assert most[0] == 2
    assert sorted(o.name for o in outcomes) == sorted(names)
    assert lines[0].startswith("flocksim compile: 4 presets, 2 at a time; about ")
    done = [line for line in lines if line.startswith("compile: ")]
    assert len(done) == 4 and done[-1].endswith("(4/4)")
    assert "compile: couzin FAILED in 0 s" in " ".join(done)


def test_a_line_at_least_every_interval_while_a_preset_compiles(monkeypatch):
    monkeypatch.setattr(ahead, "SILENT_S", 0.05)

    def slow(name, overrides):
        time.sleep(0.3)
        return Outcome(name, True, 0.3)

    lines: list[str] = []
    ahead.compile_ahead(["vicsek"], 1, (), lines.append, slow)
    waiting = [line for line in lines if line.startswith("compile: compiling vicsek ")]
    assert len(waiting) >= 3 and waiting[0].endswith("; 0/1 done")


def test_the_command_refuses_bad_input_with_one_line_and_exit_2():
    runner = CliRunner()
    for args, expected in (
        (["compile", "nope"], "error: preset: unknown 'nope'; allowed: "),
        (["compile", "vicsek", "--jobs", "0"], "error: --jobs: 0; allowed: a whole number from 1 to 64"),
        (["compile", "vicsek", "--set", "agents.n=-1"], "error: agents.n: "),
    ):
        result = runner.invoke(app, args)
        assert result.exit_code == 2, result.output
        assert result.stderr.startswith(expected) and result.stderr.count("\n") == 1, result.stderr


def test_a_failed_preset_exits_1_naming_it(monkeypatch):
    monkeypatch.setattr(ahead, "_compile_one", lambda name, overrides: Outcome(name, False, 1.0, "ValueError: x"))
    result = CliRunner().invoke(app, ["compile", "vicsek"])
    assert result.exit_code == 1
    assert "compile: vicsek FAILED" in result.stdout
    assert "error: vicsek did not compile:\nValueError: x" in result.stderr


@pytest.mark.slow
def test_after_compile_a_run_in_a_new_process_compiles_nothing(tmp_path: Path):
    """On an empty cache: ``flocksim compile vicsek`` compiles (it says so in its child), then
    ``flocksim run vicsek`` loads every kernel it needs (no compile notice) - the steps, the
    viewer's frame and neighbour count, and the run's metrics."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba")}
    cli = [sys.executable, "-m", "flocksim.cli"]
    done = subprocess.run([*cli, "compile", "vicsek", "-j", "1"], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1].startswith("flocksim compile: 1 ready; the longest, vicsek, took ")
    assert any(p.suffix == ".nbc" for p in (tmp_path / "numba").rglob("*"))
    run = subprocess.run([*cli, "run", "vicsek", "--steps", "5"], env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    assert NOTICE not in run.stderr, run.stderr

"""One line on standard error when kernels compile (flocksim.compile_notice), and none from the cache.

No test compiles flocksim's own kernels cold: a compile is forced with a tiny numba function, either
in a scope directly or called from the engine's step (the kernels themselves load from the cache).
"""

from __future__ import annotations

import copy
import io
import json
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numba
import pytest
from rich.console import Console
from typer.testing import CliRunner

from flocksim import apply_overrides, compile_notice
from flocksim.cli import app
from flocksim.compile_notice import announce_compiles, compile_estimate, duration_text, notice_line
from flocksim.engines import ENGINES
from flocksim.scenarios import load_preset, preset_names
from flocksim.simulation import Simulation

PREFIX = "flocksim: compiling the kernels for "


def fresh_function():
    """A numba function that compiles at its first call (a new one each time)."""

    @numba.njit
    def tiny(x):
        return x + 1

    return tiny


@pytest.fixture
def compiles_on_step(monkeypatch):
    """The CPU engine's step compiles a tiny function first (once), as a cold cache would."""
    engine = ENGINES["cpu"]
    original = engine.step
    tiny = fresh_function()

    def step(self, state, dt):
        tiny(1)
        original(self, state, dt)

    monkeypatch.setattr(engine, "step", step)


def notices(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith(PREFIX)]


def test_a_scope_speaks_once_at_the_first_compile_and_never_without_one():
    stream = io.StringIO()
    f, g = fresh_function(), fresh_function()
    with announce_compiles("tiny", 12.0, stream=stream):
        pass
    assert stream.getvalue() == ""
    with announce_compiles("tiny", 12.0, stream=stream) as notice:
        f(1)
        g(1)  # a second compile in the same scope
        f(2)
    assert stream.getvalue() == notice_line("tiny", 12.0) + "\n"
    assert stream.getvalue() == "flocksim: compiling the kernels for tiny: first run only, about 10 s\n"
    assert notice.duration == "about 10 s"
    with announce_compiles("tiny", 12.0, stream=stream):
        f(3)  # compiled already: no compile, no line
    assert notices(stream.getvalue()) == [notice_line("tiny", 12.0)]


def test_nested_scopes_speak_once_for_the_outermost_and_other_threads_are_not_theirs():
    outer_stream, inner_stream = io.StringIO(), io.StringIO()
    with announce_compiles("outer", None, stream=outer_stream):
        with announce_compiles("inner", 5.0, stream=inner_stream):
            fresh_function()(1)
        with announce_compiles("inner again", 5.0, stream=inner_stream):
            fresh_function()(1)
    assert outer_stream.getvalue() == "flocksim: compiling the kernels for outer: first run only, about a minute\n"
    assert inner_stream.getvalue() == ""
    quiet = io.StringIO()
    h = fresh_function()
    with announce_compiles("main thread", 5.0, stream=quiet):
        worker = threading.Thread(target=h, args=(1,))
        worker.start()
        worker.join()
    assert quiet.getvalue() == ""  # compiled in another thread, which has no scope


def test_the_estimate_is_only_asked_when_a_compile_starts_and_a_failing_one_says_unknown():
    asked = []
    stream = io.StringIO()
    with announce_compiles("x", lambda: asked.append(1) or 130.0, stream=stream):
        pass
    assert asked == [] and stream.getvalue() == ""
    with announce_compiles("x", lambda: asked.append(1) or 130.0, stream=stream):
        fresh_function()(1)
    assert asked == [1] and stream.getvalue().endswith("first run only, about 2 min\n")
    broken = io.StringIO()
    with announce_compiles("y", lambda: 1 / 0, stream=broken):
        fresh_function()(1)
    assert broken.getvalue().endswith("about a minute\n")


def test_durations_are_friendly_figures():
    assert [duration_text(s) for s in (None, 1.0, 12.0, 17.0, 24.0, 47.0, 61.0, 89.0, 100.0, 130.0, 200.0)] == [
        "about a minute", "about 5 s", "about 10 s", "about 15 s", "about 20 s", "about 50 s", "about a minute",
        "about a minute", "about 1.5 min", "about 2 min", "about 3.5 min",
    ]  # fmt: skip


TABLE = {
    "presets": {
        "boids-2d": {"compile_s": 20.0, "model": "reynolds", "neighbors": "metric"},
        "crowd-maze": {"compile_s": 90.0, "model": "reynolds", "neighbors": "metric"},
        "starlings-3d": {"compile_s": 40.0, "model": "reynolds", "neighbors": "topological"},
    },
    "models": {"reynolds": 90.0},
}


def test_the_estimate_is_the_preset_s_or_the_closest_measured_preset_s(monkeypatch):
    monkeypatch.setattr(compile_notice, "estimates", lambda: TABLE)
    boids = load_preset("boids-2d")
    assert compile_estimate(boids, "boids-2d") == 20.0
    assert compile_estimate(load_preset("crowd-maze"), "crowd-maze") == 90.0
    # not a preset: the closest preset of the same model and neighbour mode
    assert compile_estimate(apply_overrides(boids, ["agents.n=50", "rules.alignment.weight=0.3"])) == 20.0
    assert compile_estimate(boids, "my-flock") == 20.0
    assert compile_estimate(load_preset("crowd-maze")) == 90.0
    assert compile_estimate(load_preset("starlings-2d")) == 40.0  # topological: starlings-3d
    # no measured preset of that model: the model's figure, else unknown
    assert compile_estimate(load_preset("vicsek")) is None
    monkeypatch.setattr(compile_notice, "estimates", lambda: {**TABLE, "models": {"vicsek": 33.0}})
    assert compile_estimate(load_preset("vicsek")) == 33.0


def test_the_shipped_estimates_are_measured_presets():
    compile_notice.estimates.cache_clear()
    table = compile_notice.estimates()
    assert table["presets"], "src/flocksim/compile_estimates.json: no preset (benchmarks/bench_compile.py)"
    for name, entry in table["presets"].items():
        assert name in preset_names()
        assert entry["compile_s"] > 0 and entry["model"] == load_preset(name).model
        assert entry["neighbors"] in ("metric", "topological")
    assert "bench_compile.py" in table["about"] and table["machine"]["cpu_count"] >= 1
    for model, seconds in table["models"].items():
        assert seconds == max(e["compile_s"] for e in table["presets"].values() if e["model"] == model)


def test_run_says_once_on_a_piped_stderr_that_it_compiles(compiles_on_step):
    runner = CliRunner()
    result = runner.invoke(app, ["run", "vicsek", "--steps", "3", "--every", "1"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    expected = notice_line("vicsek", compile_estimate(load_preset("vicsek"), "vicsek"))
    assert notices(result.stderr) == [expected], result.stderr
    assert result.stderr.splitlines() == [expected], "no bar, and no empty line where one would be"
    again = runner.invoke(app, ["run", "vicsek", "--steps", "3", "--quiet"], catch_exceptions=False)
    assert again.exit_code == 0 and notices(again.stderr) == []  # nothing compiles any more: no line


def test_run_shows_the_compile_in_a_terminal_s_progress_bar(compiles_on_step, monkeypatch):
    screen = io.StringIO()
    monkeypatch.setattr("flocksim.cli_run.err", Console(file=screen, force_terminal=True, width=150))
    result = CliRunner().invoke(app, ["run", "vicsek", "--steps", "3"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    estimate = duration_text(compile_estimate(load_preset("vicsek"), "vicsek"))
    assert f"compiling kernels (first run only, {estimate})" in screen.getvalue()
    assert len(notices(result.stderr)) == 1


def test_simulation_steps_say_once_on_stderr_that_a_kernel_compiles(compiles_on_step, capsys):
    sim = Simulation(load_preset("vicsek"), seed=1)
    sim.step(3)
    sim.step(2)
    sim.warm_up()
    assert notices(capsys.readouterr().err) == [
        notice_line("vicsek 2D (metric neighbours)", compile_estimate(sim.params))
    ]


def test_a_simulation_with_its_notice_still_deep_copies():
    sim = Simulation(load_preset("vicsek"), seed=1)
    other = copy.deepcopy(sim)  # the notice holds no lock
    other.step(2)
    assert other.steps == 2 and sim.steps == 0


def test_warm_up_names_the_preset(compiles_on_step, capsys):
    sim = Simulation(load_preset("vicsek"), seed=1)
    sim.warm_up("vicsek")
    assert notices(capsys.readouterr().err) == [notice_line("vicsek", compile_estimate(sim.params, "vicsek"))]


def test_the_viewer_s_setup_warm_up_quotes_the_estimate(monkeypatch, capsys):
    from flocksim.viewer import warmup

    tiny = fresh_function()
    monkeypatch.setattr(warmup, "warm_up", lambda params, **kw: tiny(1) and 1.0)  # compiles as a cold cache would
    monkeypatch.setattr(warmup, "_stamp", lambda name: None)
    assert warmup.main(["boids-2d"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines == [
        notice_line("boids-2d", compile_estimate(load_preset("boids-2d"), "boids-2d")),
        "flocksim: kernels ready in 1 s",
    ]
    assert warmup.main(["boids-2d"]) == 0
    assert capsys.readouterr().out == "flocksim: kernels ready in 1 s\n"  # nothing compiled: no notice


TINY_MODULE = """
import numba

@numba.njit(cache=True)
def add_one(x):
    return x + 1

@numba.njit(cache=True)
def twice(x):
    return 2 * x
"""

SCRIPT = """
import sys
sys.path.insert(0, sys.argv[1])
from flocksim.compile_notice import announce_compiles
import tiny_cached

with announce_compiles("tiny", 40.0):
    tiny_cached.add_one(1)
    tiny_cached.twice(1.5)
    tiny_cached.add_one(2)
print("ran")
"""


def test_one_line_for_a_cold_compile_none_from_the_disk_cache(tmp_path: Path):
    (tmp_path / "tiny_cached.py").write_text(TINY_MODULE)
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    args = [sys.executable, "-c", textwrap.dedent(SCRIPT), str(tmp_path)]
    cold = subprocess.run(args, env=env, capture_output=True, text=True, timeout=120)
    assert cold.returncode == 0, cold.stderr
    assert cold.stdout == "ran\n"
    assert notices(cold.stderr) == ["flocksim: compiling the kernels for tiny: first run only, about 40 s"]
    warm = subprocess.run(args, env=env, capture_output=True, text=True, timeout=120)
    assert warm.returncode == 0, warm.stderr
    assert notices(warm.stderr) == [], warm.stderr


def test_the_estimates_file_is_in_the_wheel_s_package_data():
    import tomllib

    pyproject = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())
    assert "compile_estimates.json" in pyproject["tool"]["setuptools"]["package-data"]["flocksim"]
    data = json.loads((Path(compile_notice.__file__).with_name("compile_estimates.json")).read_text())
    assert data["presets"]

"""Hostile and careless input: every value the schema accepts runs (or is refused in one line),
numbers given as text are refused naming the key, a huge sweep is refused by counting, the Python
API names bad arguments, and nothing half-done is left behind (no empty store, no lost metrics,
no rewritten attribute, no report half written into a folder that cannot take it)."""

from __future__ import annotations

import json
import os
import random
import signal
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import flocksim
from flocksim.cli import app
from flocksim.config import ConfigError, apply_overrides, loads_toml
from flocksim.extremes import extreme_overrides, fuzzable_fields, unit_edge_overrides

PRESETS = ["boids-2d", "starlings-2d", "starlings-3d", "crowd", "minions", "enemies", "reef", "vicsek", "couzin"]
PRESETS += ["abm-flocking-small"]


@pytest.fixture(scope="module")
def runner() -> CliRunner:
    return CliRunner()


def one_error_line(result) -> str:
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


# --- every accepted value runs ----------------------------------------------------------------------


def step_once(params) -> None:
    """Build and step, with numpy's RuntimeWarnings (overflow, invalid value) as errors."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        sim = flocksim.Simulation(params, seed=1)
        sim.step(2)
        sim.metrics()
        assert np.isfinite(sim.state.position[sim.state.alive]).all()
        assert np.isfinite(sim.state.velocity[sim.state.alive]).all()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(PRESETS), st.sampled_from([20, 300]), st.randoms(use_true_random=False), st.integers(0, 8))
def test_extreme_but_accepted_values_run(preset, n, rng, count):
    """Any set of values at the edges of their allowed ranges either is refused with a ConfigError
    (a combination the schema forbids) or builds a simulation that steps without an exception,
    a RuntimeWarning or a non-finite position or velocity. 300 agents take the grid search;
    ``count`` 0 puts every field of one unit at one edge (all lengths tiny, say)."""
    base = apply_overrides(flocksim.load_preset(preset), [f"agents.n={n}"])
    overrides = extreme_overrides(base, rng, count) if count else unit_edge_overrides(base, rng)
    try:
        params = apply_overrides(base, overrides)
    except ConfigError:
        return
    step_once(params)


@pytest.mark.parametrize(
    "overrides",
    [
        ["rules.separation.radius=1e-300", "rules.alignment.radius=1e-300", "rules.cohesion.radius=1e-300"],
        ["rules.separation.radius=0", "rules.alignment.radius=0", "rules.cohesion.radius=0"],
        ["rules.separation.radius=1e9", "rules.alignment.radius=1e9", "rules.cohesion.radius=1e9"],
    ],
)
def test_tiny_and_huge_rule_radii_run_on_the_grid(overrides):
    step_once(apply_overrides(flocksim.load_preset("boids-2d"), ["agents.n=300", "neighbors.method=grid", *overrides]))


def test_every_model_has_fuzzable_fields_with_extremes():
    for preset in PRESETS:
        fields = fuzzable_fields(type(flocksim.load_preset(preset)))
        assert len(fields) > 10 and all(f.extremes() for f in fields if f.low is not None or f.high is not None)


def test_values_the_engine_cannot_run_are_refused_in_one_line_and_leave_no_store(runner, tmp_path):
    cases = [
        (["abm-flocking-small", "--set", "flocking.vision=1e-300"], "flocking.vision", ">= 1e-09"),
        (["abm-flocking-small", "--set", "world.dt=1e-300"], "world.dt", ">= 1e-06"),
        (["boids-2d", "--set", "world.dt=1e-300"], "world.dt", ">= 1e-06"),
    ]
    for args, key, allowed in cases:
        store = tmp_path / "run.zarr"
        line = one_error_line(runner.invoke(app, ["run", *args, "--steps", "2", "--out", str(store)]))
        assert line.startswith(f"error: {key}:") and allowed in line, line
        assert not store.exists()


# --- numbers as text --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ('[agents]\nn = "300"', "agents.n"),
        ('[rules.alignment]\nweight = "0.5"', "rules.alignment.weight"),
        ('[world.bounds]\nsize = ["100", 100]', "world.bounds.size"),
        ('[predator]\nenabled = "true"', "predator.enabled"),
        ('[world]\ndim = "3"', "world.dim"),
    ],
)
def test_numbers_given_as_text_are_refused_naming_the_key(text, key):
    with pytest.raises(ConfigError) as exc:
        loads_toml(text)
    message = str(exc.value)
    assert message.startswith(f"{key}") and "\n" not in message, message


def test_numbers_as_text_are_refused_on_the_command_line_and_over_the_socket(runner):
    line = one_error_line(runner.invoke(app, ["run", "boids-2d", "--set", 'agents.n="300"', "--steps", "1"]))
    assert line.startswith("error: agents.n: Input should be a valid integer") and "got '300'" in line
    from flocksim.viewer.controls import ControlError, apply_changes

    with pytest.raises(ControlError, match=r"^rules\.alignment\.weight: Input should be a valid number"):
        apply_changes(flocksim.load_preset("boids-2d"), {"rules.alignment.weight": "0.5"})


def test_integers_stay_accepted_where_floats_are_expected_and_python_containers_work():
    params = apply_overrides(flocksim.load_preset("boids-2d"), ["rules.alignment.weight=2", "world.dt=1"])
    assert params.rules.alignment.weight == 2.0 and isinstance(params.rules.alignment.weight, float)
    sim = flocksim.Simulation({"world": {"bounds": {"size": (50, np.float64(60.0))}}, "agents": {"n": np.int64(5)}})
    assert sim.params.world.bounds.size == [50.0, 60.0] and sim.state.n == 5


# --- the Python API ---------------------------------------------------------------------------------


def test_api_arguments_are_checked_naming_the_argument():
    with pytest.raises(TypeError, match="Simulation: params must be a parameter object"):
        flocksim.Simulation(42)
    with pytest.raises(TypeError, match=r"Simulation: seed must be an integer >= 0, got 1\.7"):
        flocksim.Simulation(flocksim.load_preset("boids-2d"), seed=1.7)
    with pytest.raises(ValueError, match="Simulation: seed must be an integer >= 0, got -1"):
        flocksim.Simulation(flocksim.load_preset("boids-2d"), seed=-1)
    sim = flocksim.Simulation(apply_overrides(flocksim.load_preset("boids-2d"), ["agents.n=5"]), seed=np.int64(2))
    with pytest.raises(ValueError, match="step: n must be an integer >= 0, got -1"):
        sim.step(-1)
    with pytest.raises(TypeError, match=r"step: n must be an integer >= 0, got 2\.7"):
        sim.step(2.7)
    with pytest.raises(TypeError, match="step: n must be an integer"):
        sim.step(True)
    sim.step(np.int64(2))
    sim.remove_agents([])  # nothing to remove: a no-op
    sim.remove_agents(np.array([], dtype=float))
    assert sim.steps == 2 and sim.state.n_alive == 5


# --- sweeps: counted before any value is checked -------------------------------------------------


def test_a_huge_sweep_is_refused_by_counting_first(monkeypatch):
    import flocksim.sweep.spec as spec

    def must_not_validate(*args, **kwargs):
        raise AssertionError("a value was validated before the runs were counted")

    monkeypatch.setattr(spec, "apply_overrides", must_not_validate)
    text = """
base = "boids-2d"
steps = 10
seeds = 1000
[[axes]]
key = "rules.alignment.weight"
range = {start = 0.0, stop = 1.0, num = 1000000}
[[axes]]
key = "rules.cohesion.weight"
range = {start = 0.0, stop = 1.0, num = 1000}
[[summaries]]
metric = "polarization"
"""
    with pytest.raises(spec.SweepError, match=r"has 1000000000000 runs \(grid points x seeds\); allowed: at most"):
        spec.parse_sweep(text)
    with pytest.raises(spec.SweepError, match=r"has 20000000 runs \(samples x seeds\)"):
        spec.parse_sweep(
            text.replace("seeds = 1000", "seeds = 2\n[sampling]\nkind = 'random'\nsamples = 10000000")
            .replace(", num = 1000000", "")
            .replace(", num = 1000", "")
        )


# --- runs that stop or do nothing ---------------------------------------------------------------


def test_a_no_op_resume_rewrites_nothing(runner, tmp_path):
    store = tmp_path / "run.zarr"
    args = ["run", "boids-2d", "--set", "agents.n=10", "--steps", "20", "--every", "5", "--out", str(store), "-q"]
    assert runner.invoke(app, args).exit_code == 0
    files = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in store.rglob("*") if p.is_file()}
    for steps in ("10", "20"):
        result = runner.invoke(app, ["run", "--resume", str(store), "--steps", steps])
        assert result.exit_code == 0 and "already at step 20; nothing to run" in result.stdout
        assert {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in store.rglob("*") if p.is_file()} == files
        assert json.loads((store / "zarr.json").read_text())["attributes"]["steps_requested"] == 20


def test_ctrl_c_without_a_store_keeps_the_metrics_so_far(runner, tmp_path, monkeypatch):
    from flocksim.simulation import Simulation

    step = Simulation.step
    calls = []

    def step_then_ctrl_c(self, n=1):
        step(self, n)
        calls.append(n)
        if len(calls) == 3:
            os.kill(os.getpid(), signal.SIGINT)  # what Ctrl-C sends

    monkeypatch.setattr(Simulation, "step", step_then_ctrl_c)
    path = tmp_path / "m.csv"
    args = ["run", "boids-2d", "--set", "agents.n=10", "--steps", "1000", "--every", "5", "--metrics", str(path), "-q"]
    result = runner.invoke(app, args)
    assert result.exit_code == 130
    assert result.stderr.strip() == f"interrupted at step 15; metrics of steps 0 to 15 kept in {path}"
    rows = path.read_text().splitlines()
    assert rows[0].startswith("step,time,") and [r.split(",")[0] for r in rows[1:]] == ["0", "5", "10", "15"]


def test_validate_into_a_read_only_folder_is_refused_before_any_check(runner, tmp_path, monkeypatch, read_only):
    import flocksim.validate as validate

    monkeypatch.setattr(validate, "run_checks", lambda *a, **k: pytest.fail("a check ran"))
    folder = tmp_path / "locked"
    folder.mkdir()
    with read_only(folder):
        for target in (folder, folder / "new" / "report"):
            line = one_error_line(runner.invoke(app, ["validate", "--quick", "-o", str(target)]))
            assert "is not writable" in line and str(folder) in line
    assert list(folder.iterdir()) == []
    assert not Path(folder / "new").exists()


def test_seeded_fuzz_helper_draws_distinct_fields():
    params = flocksim.load_preset("boids-2d")
    overrides = extreme_overrides(params, random.Random(0), 8)
    assert len({o.split("=")[0] for o in overrides}) == 8

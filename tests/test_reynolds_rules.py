"""The reynolds kernels specialised on the rules a run switches on (flocksim.engines.cpu_reynolds_rules,
docs/design.md §7.4): which rules a parameter set switches on, the same bits as the general kernels
(every rule checked as it runs) for each combination the presets use, the kernel that follows a
change of the rules in the middle of a run, the code of a rule that is off left out, and each
combination's kernel found in the cache by a later process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from flocksim import Simulation, load_preset
from flocksim.config import apply_overrides
from flocksim.engines.cpu_reynolds_rules import RulesOf, rules_of
from flocksim.models import make_model
from flocksim.models.reynolds_coefficients import PhaseOneRules, PhaseTwoRules, rules_name
from test_numba_cache import _install_copy  # the package copied elsewhere

STEPS = 12


def names(preset: str, *overrides: str) -> tuple[str, str]:
    params = apply_overrides(load_preset(preset), list(overrides))
    one, two = rules_of(make_model(params).coefficients, params.predator.enabled, params.turning.enabled)
    return rules_name(one), rules_name(two)


def test_the_rules_a_parameter_set_switches_on():
    """boids-2d: separation, alignment and cohesion (always compiled) with soft walls and the
    reynolds steering; nothing in phase two. starlings-3d: a blind angle, the roost, the
    clamped sum (and walls: rules.bounds.weight is 1 although the sky is open), banked flight;
    predators only when enabled. Cohesion's centrality and a seek weight switch their rules on."""
    assert names("boids-2d") == ("walls+reynolds", "none")
    assert names("starlings-3d") == ("blind+walls+roost+clamped", "banked")
    assert names("starlings-3d", "predator.enabled=true") == ("blind+predators+walls+roost+clamped", "banked")
    assert names("starlings-3d-reference") == ("spin+walls+reynolds", "spinning+turning+restoring")
    assert names("boids-2d", "rules.seek.weight=0.5", "rules.cohesion.centrality=1") == (
        "centrality+seek+walls+reynolds",
        "none",
    )
    assert names("boids-2d", "rules.bounds.weight=0", "rules.steering=clamped-sum") == ("clamped", "none")
    assert rules_name(PhaseTwoRules(False, False, False, False)) == "none"
    assert rules_name(PhaseOneRules(*[True] * 10)).count("+") == 9


def run(params, monkeypatch, general: bool, steps: int = STEPS) -> tuple[Simulation, list]:
    """A run of ``params`` on one thread; ``general``: with the general kernels (every rule checked
    as it runs), else the specialised ones. Returns the simulation and the rules of each step."""
    original = RulesOf.__call__
    seen = []

    def rules(self, model, inputs):
        chosen = original(self, model, inputs)
        seen.append(chosen)
        return (None, None) if general else chosen

    monkeypatch.setattr(RulesOf, "__call__", rules)
    sim = Simulation(params, threads=1)
    sim.step(steps)
    return sim, seen


def same_state(a: Simulation, b: Simulation) -> bool:
    return all(np.array_equal(getattr(a.state, key), getattr(b.state, key)) for key in ("position", "velocity", "spin"))


CASES = [
    # preset, overrides, the rules of phase one and phase two; the path (list or grid)
    ("boids-2d", [], "walls+reynolds", "none"),  # grid, 2D
    ("crowd", ["agents.n=200"], "walls+clamped", "none"),  # grid, 2D
    ("crowd-maze", ["agents.n=200"], "seek+walls+avoid+reynolds", "none"),  # grid, 2D, obstacles
    ("reef", ["agents.n=200"], "walls+avoid+reynolds", "none"),  # grid, 3D
    ("starlings-3d", ["agents.n=200"], "blind+walls+roost+clamped", "banked"),  # list
    ("starlings-3d", ["agents.n=200", "predator.enabled=true"], "blind+predators+walls+roost+clamped", "banked"),
    ("starlings-3d-reference", ["agents.n=200"], "spin+walls+reynolds", "spinning+turning+restoring"),  # list
]


@pytest.mark.parametrize("preset, overrides, one, two", CASES)
def test_each_combination_steps_as_the_general_kernels_bitwise(preset, overrides, one, two, monkeypatch):
    """A run with the kernels of its own rules gives the bits of the same run with the general
    kernels; the rules chosen are the parameters' (checked here, so that each case runs the
    combination it names)."""
    params = apply_overrides(load_preset(preset), overrides)
    special, rules = run(params, monkeypatch, general=False)
    assert {(rules_name(a), rules_name(b)) for a, b in rules} == {(one, two)}
    general, _ = run(params, monkeypatch, general=True)
    assert same_state(special, general)


def test_a_change_mid_run_takes_the_kernel_of_the_new_rules(monkeypatch):
    """boids-2d: 4 steps, then a seek weight (new parameters, as the viewer's ``set`` builds and
    flocksim.validate swaps in), 4 steps, then the seek weight back to 0 by the coefficients
    alone (as the targets and Flappy Boids change them), 4 steps: each step's rules follow, and
    the run gives the bits of the same run with the general kernels."""

    def staged(general: bool) -> tuple[Simulation, list]:
        sim, seen = run(load_preset("boids-2d"), monkeypatch, general, steps=4)
        sim._replace_params(apply_overrides(sim.params, ["rules.seek.weight=2.0", "rules.seek.target=[50.0, 20.0]"]))
        sim.step(4)
        sim.model.coefficients = sim.model.coefficients._replace(w_seek=0.0)
        sim.step(4)
        return sim, seen

    special, seen = staged(general=False)
    assert [rules_name(one) for one, _ in seen] == ["walls+reynolds"] * 4 + ["seek+walls+reynolds"] * 4 + [
        "walls+reynolds"
    ] * 4
    general, _ = staged(general=True)
    assert same_state(special, general)
    assert not same_state(special, run(load_preset("boids-2d"), monkeypatch, general=False)[0])  # the seek acted


PRUNED = """
import numpy as np

import flocksim
from flocksim.engines import cpu_reynolds as general
from flocksim.engines.cpu_reynolds_rules import accelerations_kernel, integration_kernel, rules_of
from flocksim.kernels import flight, obstacles
from flocksim.models import make_model
from flocksim.models import reynolds

model = make_model(flocksim.load_preset("starlings-3d"))
s = model.initial_state(np.random.default_rng(0))
one, two = rules_of(model.coefficients, False, False)
start, index = np.zeros(s.n + 1, dtype=np.int64), np.zeros(0, dtype=np.int64)
acc, aux, c, inputs = np.zeros((s.n, 3)), np.full((s.n, 4), 18.0), model.coefficients, model.inputs(s)
functions = [reynolds.predator_response, reynolds.centrality_factor, obstacles.avoid_push, flight.banked_velocity,
             flight.roost_pull]
for phase_one, phase_two in ((accelerations_kernel(one), integration_kernel(two)),
                             (general.reynolds_accelerations, general.integrate_all)):
    phase_one(s.position, s.velocity, s.alive, start, index, s.dim, model.space, c, inputs, acc, aux)
    phase_two(s.position, s.velocity, s.alive, acc, aux, inputs, s.dim, model.space, 0.01, c)
    print(*(int(len(f.signatures) > 0) for f in functions))  # typed (compiled or loaded) or not
"""


def test_the_functions_of_rules_that_are_off_are_not_compiled(tmp_path):
    """starlings-3d's kernels (a blind angle, the roost, banked flight; no predator, obstacles or
    centrality) type the roost's and banked flight's functions and none of the three others, so
    those are neither compiled nor loaded; the general kernels then type all five. On an empty
    cache: a kernel loaded from the cache types none of the functions it calls."""
    script = tmp_path / "pruned.py"
    script.write_text(PRUNED)
    env = {**{k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}, "NUMBA_CACHE_DIR": str(tmp_path / "c")}
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[-3:] == ["0 0 0 1 1", "1 1 1 1 1", ""]


CACHED = """
import sys
sys.path.insert(0, sys.argv[1])
from numba.core import event

compiled = []


class Count(event.Listener):
    def on_start(self, ev):
        compiled.append(ev.data["dispatcher"].py_func.__qualname__)

    def on_end(self, ev):
        pass


event.register("numba:compile", Count())
import numpy as np

import flocksim
from flocksim.engines.cpu_reynolds_rules import integration_kernel
from flocksim.models import make_model
from flocksim.models.reynolds_coefficients import PhaseTwoRules

assert flocksim.__file__.startswith(sys.argv[1]), flocksim.__file__
params = flocksim.load_preset("boids-2d")
model = make_model(params)
s = model.initial_state(np.random.default_rng(0))
kernel = integration_kernel(PhaseTwoRules(False, False, False, sys.argv[2] == "restoring"))
acc, aux = np.zeros((s.n, 3)), np.full((s.n, 4), 60.0)
kernel(s.position, s.velocity, s.alive, acc, aux, model.inputs(s), s.dim, model.space, 0.01, model.coefficients)
print(" ".join(name for name in compiled if name.startswith("_integrat")) or "-")
"""


def test_each_combinations_kernel_is_found_in_the_cache_by_a_later_process(tmp_path):
    """A combination's kernel, compiled by one process, loads from the cache in a later process
    and in another install of the same sources; another combination's kernel is not taken for it
    (the cache keeps each apart) and compiles once."""
    first, second = _install_copy(tmp_path / "a"), _install_copy(tmp_path / "b")
    script = tmp_path / "cached.py"
    script.write_text(CACHED)
    env = {**{k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}, "NUMBA_CACHE_DIR": str(tmp_path / "c")}

    def compiles(root: Path, which: str) -> str:
        done = subprocess.run([sys.executable, str(script), str(root), which], env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return done.stdout.split("\n")[-2]

    assert compiles(first, "none") == "_integration[none] _integrate_agents[none]"
    assert compiles(first, "none") == "-"
    assert compiles(second, "none") == "-"
    assert compiles(second, "restoring") == "_integration[restoring] _integrate_agents[restoring]"
    assert compiles(first, "restoring") == "-"

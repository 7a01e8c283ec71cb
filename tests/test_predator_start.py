"""Where a predator starts (docs/starlings.md "Predators"): outside the flock, ``predator.detection``
beyond the farthest living bird from the flock's centre, heading at that centre, so that no bird is
caught (or even sees it) in the first moments; ``Predators.start_anywhere`` gives the uniform start
in the region of before, from the same draws."""

from __future__ import annotations

import numpy as np
import pytest

from flocksim import Simulation
from flocksim.components import Predators
from flocksim.config import apply_overrides
from flocksim.scenarios import load_preset
from flocksim.viewer.carry import carry_over


def predator_of(sim: Simulation) -> Predators:
    return next(c for c in sim.components if isinstance(c, Predators))


def nearest_bird(sim: Simulation, point: np.ndarray) -> float:
    alive = sim.state.position[sim.state.alive]
    return float(np.min(np.linalg.norm(alive - point, axis=1)))


def reach(sim: Simulation) -> tuple[np.ndarray, float]:
    """The living birds' centre and the farthest one's distance from it."""
    alive = sim.state.position[sim.state.alive]
    centre = alive.mean(axis=0)
    return centre, float(np.max(np.linalg.norm(alive - centre, axis=1)))


@pytest.mark.parametrize("preset", ["starlings-2d-reference", "starlings-3d", "starlings-3d-reference"])
def test_predators_start_outside_the_flock(preset):
    """Three predators, four seeds, a box the flock fills (starlings-2d-reference), an
    ellipsoid and an open sky: each predator is at least ``detection`` from every bird, at the
    documented distance from the centre, and heads at it. Before, a predator could start among
    the birds (a catch within a second of a reset in the viewer)."""
    for seed in range(4):
        params = apply_overrides(load_preset(preset), ["predator.enabled=true", "predator.count=3"])
        sim = Simulation(params, seed=seed)
        pred = predator_of(sim)
        detection = params.predator.detection
        centre, farthest = reach(sim)
        for k in range(3):
            assert nearest_bird(sim, pred.position[k]) >= detection - 1e-9, (preset, seed, k)
            assert np.linalg.norm(pred.position[k] - centre) == pytest.approx(farthest + detection, rel=1e-9)
            to_centre = (centre - pred.position[k]) / np.linalg.norm(centre - pred.position[k])
            assert np.dot(pred.velocity[k], to_centre) == pytest.approx(pred.speed, rel=1e-9)
        assert np.array_equal(sim.model.predators[:, : params.world.dim], pred.position)  # what the birds see


def test_start_anywhere_is_the_uniform_start_of_before():
    """``start_anywhere``: the uniform point of the region and the heading drawn at creation (here
    some predator lands within detection of a bird, as before), the side the start outside took,
    and what the birds' kernels read."""
    params = apply_overrides(load_preset("starlings-2d-reference"), ["predator.enabled=true", "predator.count=3"])
    inside = 0
    for seed in range(4):
        sim = Simulation(params, seed=seed)
        pred = predator_of(sim)
        generator = sim.rng.bit_generator.state
        outside = pred.position.copy()
        pred.start_anywhere(sim)
        assert sim.rng.bit_generator.state == generator  # no draw of its own
        size = np.asarray(params.world.bounds.size)
        assert np.all((pred.position >= 0.0) & (pred.position < size))  # a point of the 960 x 540 box
        assert np.allclose(np.linalg.norm(pred.velocity, axis=1), pred.speed)
        # the start outside lay on the side of that point, seen from the box's centre
        out = outside - reach(sim)[0]
        drawn = pred.position - size / 2
        assert np.allclose(out / np.linalg.norm(out, axis=1)[:, None], drawn / np.linalg.norm(drawn, axis=1)[:, None])
        assert np.array_equal(sim.model.predators[:, :2], pred.position)
        inside += sum(nearest_bird(sim, p) < params.predator.detection for p in pred.position)
    assert inside > 0


def test_a_predator_switched_on_starts_outside_the_running_flock():
    """The viewer's predator switch keeps the flock (flocksim.viewer.carry): the predator of the new
    simulation starts outside the flock it is given, not outside the fresh one it was built with."""
    params = load_preset("starlings-3d")
    old = Simulation(params, seed=3)
    old.state.position[:] += np.array([400.0, 50.0, -300.0])  # the running flock has flown away from the start
    new = Simulation(apply_overrides(params, ["predator.enabled=true"]), seed=3)
    carry_over(old, new)
    pred = predator_of(new)
    centre, farthest = reach(new)
    assert nearest_bird(new, pred.position[0]) >= params.predator.detection - 1e-9
    assert np.linalg.norm(pred.position[0] - centre) == pytest.approx(farthest + params.predator.detection, rel=1e-9)
    assert np.array_equal(new.model.predators[0, :3], pred.position[0])

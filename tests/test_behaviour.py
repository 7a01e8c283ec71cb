"""Emergent behaviour: from random headings, boids-2d and starlings-2d-reference order themselves.

Polarization |sum of unit headings| / N is ~0.886/sqrt(N) for random headings and 1 for a flock
flying one way. Each run starts from the preset's random headings and runs 60 simulated seconds
(3600 steps of 1/60 s). "After 60 s" is measured two ways: the snapshot at t = 60 s, and the mean
over the last 10 s (20 samples, every 0.5 s, from 50.5 s to 60 s). Flocks keep turning at the walls
and split and merge, so a single snapshot can catch a flock mid-turn; the 10 s mean is the robust
per-seed measure, the snapshot is checked on the mean over seeds.

Measured (engine cpu, 40 seeds 0..39 of each preset, before choosing the margins below):

  boids-2d (300 agents)
    start polarization           0.016 .. 0.117   (mean 0.061)
    gain, mean over 50-60 s      min 0.689, 5th pct 0.743, mean 0.835, sd 0.055
    gain, snapshot at 60 s       min 0.346, 5th pct 0.581, mean 0.838, sd 0.138
    mean gain over 4 seeds       10-s mean: lowest 0.726 of 100k random draws; snapshot: 0.1th pct 0.575
  starlings-2d-reference (500 agents, 7 nearest neighbours)
    start polarization           0.006 .. 0.111   (mean 0.045)
    gain, mean over 50-60 s      min 0.291, 5th pct 0.376, mean 0.609, sd 0.121
    gain, snapshot at 60 s       min 0.004 (!), 5th pct 0.170, mean 0.585, sd 0.211
    mean gain over 4 seeds       10-s mean: lowest 0.374 of 100k random draws; snapshot: 0.1th pct 0.252
  control, alignment and cohesion weights 0 (12 seeds each): 50-60 s mean polarization <= 0.089
    (boids-2d), <= 0.067 (starlings-2d-reference); no sample above 0.18.

Seeds 0..3 below were part of the measurement but not picked from it; they measured
boids-2d 10-s gains 0.848 0.863 0.859 0.879, starlings-2d-reference 0.573 0.600 0.671 0.711. The margins sit
well below the lowest of all 40 seeds, so a different machine (other float rounding, hence other
chaotic trajectories) still passes.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import pytest

from flocksim import Simulation, apply_overrides, load_preset
from flocksim.metrics import polarization

SEEDS = (0, 1, 2, 3)
STEPS = 3600  # 60 s at dt = 1/60
WINDOW_SAMPLES, WINDOW_EVERY = 20, 30  # the last 10 s, every 0.5 s


@dataclass(frozen=True)
class Margin:
    per_seed: float  # every seed: 10-s mean at the end >= start + per_seed
    mean_window: float  # mean over seeds of the 10-s-mean gain
    mean_snapshot: float  # mean over seeds of the gain at exactly t = 60 s


MARGINS = {
    # measured minima over 40 seeds: per seed 0.689, 4-seed mean 0.726, 4-seed snapshot mean 0.496
    "boids-2d": Margin(per_seed=0.40, mean_window=0.60, mean_snapshot=0.35),
    # measured minima over 40 seeds: per seed 0.291, 4-seed mean 0.374, 4-seed snapshot mean 0.152
    "starlings-2d-reference": Margin(per_seed=0.15, mean_window=0.30, mean_snapshot=0.10),
}


@dataclass(frozen=True)
class Run:
    seed: int
    start: float
    at_60s: float
    last_10s: float


PINNED = {
    # measured above with basic alignment and no spontaneous turns, before the preset
    # switched to inertial spin with turns (tests/test_starlings_behaviour.py covers those)
    "starlings-2d-reference": ("rules.alignment.mode=basic", "turning.enabled=false"),
}


@functools.cache
def run(name: str, seed: int, overrides: tuple[str, ...] = ()) -> Run:
    params = apply_overrides(load_preset(name), [*PINNED.get(name, ()), *overrides])
    assert params.agents.init.kind == "random"
    assert params.world.dt == pytest.approx(1 / 60)
    sim = Simulation(params, seed=seed)

    def pol() -> float:
        return polarization(sim.state.velocity[sim.state.alive])

    start = pol()
    sim.step(STEPS - WINDOW_SAMPLES * WINDOW_EVERY)
    window = []
    for _ in range(WINDOW_SAMPLES):
        sim.step(WINDOW_EVERY)
        window.append(pol())
    assert sim.steps == STEPS and sim.time == pytest.approx(60.0)
    assert np.isfinite(window).all()
    return Run(seed, start, window[-1], float(np.mean(window)))


def describe(runs: list[Run]) -> str:
    return "; ".join(
        f"seed {r.seed}: start {r.start:.3f}, t=60s {r.at_60s:.3f}, 50-60s mean {r.last_10s:.3f}" for r in runs
    )


@pytest.mark.slow
@pytest.mark.parametrize("name", list(MARGINS))
def test_orders_itself_from_random_headings(name):
    margin = MARGINS[name]
    runs = [run(name, seed) for seed in SEEDS]
    info = describe(runs)
    n = load_preset(name).agents.n
    for r in runs:
        # random start: near 0.886/sqrt(N), far from ordered
        assert r.start < 0.2, info
        assert r.start < 5 * 0.886 / np.sqrt(n), info
        assert r.last_10s - r.start >= margin.per_seed, info
    assert np.mean([r.last_10s - r.start for r in runs]) >= margin.mean_window, info
    assert np.mean([r.at_60s - r.start for r in runs]) >= margin.mean_snapshot, info


@pytest.mark.slow
@pytest.mark.parametrize("name", list(MARGINS))
def test_no_order_without_alignment_and_cohesion(name):
    """Control: the order comes from the rules, not from the walls or the speed limits."""
    control = run(name, SEEDS[0], ("rules.alignment.weight=0", "rules.cohesion.weight=0"))
    ordered = run(name, SEEDS[0])
    info = describe([control, ordered])
    assert control.last_10s < 0.2, info
    assert ordered.last_10s - control.last_10s >= MARGINS[name].per_seed, info


@pytest.mark.slow
def test_shipped_starlings_2d_preset_orders_itself():
    """The preset as shipped (inertial spin, spontaneous turns), not the pinned variant above.

    Measured 50-60 s mean polarization for seeds 0-4 (start 0.01-0.07): 0.81, 0.73, 0.60,
    0.58, 0.70. Asserted with margin on seeds 0-2: every seed gains >= 0.35, mean gain >= 0.45.
    """
    gains = []
    for seed in range(3):
        sim = Simulation(load_preset("starlings-2d-reference"), seed=seed)
        start = polarization(sim.state.velocity)
        assert start < 0.2
        sim.step(STEPS - 600)
        window = []
        for _ in range(20):
            sim.step(30)
            window.append(polarization(sim.state.velocity[sim.state.alive]))
        gains.append(float(np.mean(window)) - start)
    assert min(gains) >= 0.35, gains
    assert np.mean(gains) >= 0.45, gains

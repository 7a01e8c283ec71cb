"""flocksim's Vicsek model and the independent NumPy reference, run in lockstep: the same start and
the same noise give the same particles, step after step (docs/validation.md, "Vicsek near the
transition"). So whatever separates their curves is sampling noise, not the model."""

from __future__ import annotations

import math

import numpy as np

from flocksim.validate.reference.vicsek_numpy import V0, VicsekReference
from flocksim.validate.runs import simulation
from flocksim.validate.vicsek import vicsek_params


def lockstep(n: int, eta: float, steps: int, scale: float = 1.0) -> tuple[float, float]:
    """Largest heading [rad] and position [units] differences over ``steps`` steps of flocksim and
    the reference from the reference's start, flocksim's noise being the reference's times ``scale``."""
    ref = VicsekReference(n, eta, seed=1)
    sim = simulation(vicsek_params(n, eta), seed=0)
    sim.state.position[:] = ref.x
    sim.state.velocity[:] = V0 * np.stack([np.cos(ref.theta), np.sin(ref.theta)], axis=1)
    drawn: list[np.ndarray] = []
    # flocksim turns by eta (u - 1/2); the reference draws uniform(-eta/2, eta/2) = eta u - eta/2 from
    # the same doubles u, so the rows are the reference's next n uniforms
    sim.model.noise._draw_rows = lambda rng, count: np.stack([0.5 + scale * (drawn[-1] - 0.5), drawn[-1]], axis=1)
    worst_heading = worst_position = 0.0
    for _ in range(steps):
        state = ref.rng.bit_generator.state
        drawn.append(ref.rng.random(n))
        ref.rng.bit_generator.state = state  # the reference draws the same numbers in its step
        ref.step()
        sim.step(1)
        v = sim.state.velocity
        d = np.angle(np.exp(1j * (np.arctan2(v[:, 1], v[:, 0]) - ref.theta)))
        dp = sim.state.position - ref.x
        dp -= ref.side * np.round(dp / ref.side)
        worst_heading = max(worst_heading, float(np.abs(d).max()))
        worst_position = max(worst_position, float(np.abs(dp).max()))
    return worst_heading, worst_position


def test_same_start_and_noise_give_the_same_particles_near_the_transition():
    heading, position = lockstep(200, 4.0, 300)
    assert heading < 1e-9 and position < 1e-9, (heading, position)


def test_lockstep_can_fail_noise_two_percent_stronger():
    heading, _ = lockstep(200, 4.0, 20, scale=1.02)
    assert math.isfinite(heading) and heading > 1e-3  # eta (u - 1/2) 2 % larger: the headings part at once

"""The spontaneous turns family (spontaneous-turning): how often the flock's centre repeats its
path and how long it is disordered, with and without spontaneous turns."""

from __future__ import annotations

import numpy as np

from flocksim.experiments.common import (
    Condition,
    Experiment,
    RunSpec,
    alive_pv,
    make_sim,
    sample,
    seconds,
    steps_of,
)
from flocksim.metrics import polarization
from flocksim.metrics.starlings import fraction_below, repetition_index


def measure_spontaneous(spec: RunSpec) -> dict[str, float]:
    sim = make_sim(spec, 500, ("neighbors.mode=metric",))
    sim.step(steps_of(sim, seconds(spec, 10.0, 1.0)))
    path, pol = [], []
    for _ in sample(sim, seconds(spec, 240.0, 6.0), 0.5):
        p, v = alive_pv(sim)
        path.append(p.mean(axis=0))
        pol.append(polarization(v))
    return {"repetition": repetition_index(np.array(path)), "time_pol_below_0.6": fraction_below(pol, 0.6)}


EXPERIMENTS: tuple[Experiment, ...] = (
    Experiment(
        "spontaneous-turning",
        "3D, 500 birds, metric (boids) neighbours: repetition index of the centroid path (sampled every "
        "0.5 s, 10 s warm-up, 240 s) and fraction of time with polarization < 0.6, with and without "
        "spontaneous turns (mean interval 6 s, 90 degrees).",
        (
            Condition(3, "without turns", ("turning.enabled=false",)),
            Condition(
                3,
                "with turns",
                ("turning.enabled=true", "turning.mean_interval=6.0", "turning.angle_deg=90.0"),
            ),
        ),
        measure_spontaneous,
        {
            (3, "without turns"): "repetition 0.99, below 0.6: 18 %",
            (3, "with turns"): "repetition 0.52, below 0.6: 5 %",
        },
    ),
)

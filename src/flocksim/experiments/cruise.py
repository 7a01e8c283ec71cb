"""The cruising flock family: heading deviation at the edge and inside (edge-deviation), the
flock's shape against its heading (shape) and the speed fluctuation (speed-fluctuation)."""

from __future__ import annotations

import numpy as np

from flocksim.experiments.common import (
    BASIC,
    METRIC,
    SPIN,
    TOPO,
    Condition,
    Experiment,
    RunSpec,
    _both,
    alive_pv,
    make_sim,
    nanmean,
    sample,
    seconds,
    steps_of,
)
from flocksim.metrics import polarization
from flocksim.metrics.starlings import edge_interior_deviation, flock_shape, speed_fluctuation


def measure_edge(spec: RunSpec) -> dict[str, float]:
    sim = make_sim(spec, 500, ("turning.enabled=false",))
    sim.step(steps_of(sim, seconds(spec, 10.0, 1.0)))
    edge, inner, order, total = [], [], [], 0
    for _ in sample(sim, seconds(spec, 120.0, 3.0), 0.5):
        p, v = alive_pv(sim)
        total += 1
        pol = polarization(v)
        if pol >= 0.85:
            e, i = edge_interior_deviation(p, v)
            edge.append(e)
            inner.append(i)
            order.append(pol)
    return {
        "edge_rad": nanmean(edge),
        "interior_rad": nanmean(inner),
        "samples_used": len(order) / total,
        "polarization_used": nanmean(order),
    }


def measure_shape(spec: RunSpec) -> dict[str, float]:
    sim = make_sim(spec, 500, ("turning.enabled=false",))
    sim.step(steps_of(sim, seconds(spec, 10.0, 1.0)))
    cos, aspect, used = [], [], 0
    for _ in sample(sim, seconds(spec, 120.0, 3.0), 2.0 if not spec.quick else 0.5):
        p, v = alive_pv(sim)
        if polarization(v) >= 0.8:
            shape = flock_shape(p, v)
            cos.append(shape["axis_cos"])
            aspect.append(shape["aspect"])
            used += 1
    return {"axis_cos": nanmean(cos), "aspect": nanmean(aspect), "samples": float(used)}


def measure_speed(spec: RunSpec) -> dict[str, float]:
    sim = make_sim(spec, 500)
    sim.step(steps_of(sim, seconds(spec, 10.0, 1.0)))
    agents = sim.params.agents
    fluctuation, mean, at_min = [], [], []
    for _ in sample(sim, seconds(spec, 60.0, 3.0), 0.5):
        v = alive_pv(sim)[1]
        speed = np.sqrt(np.sum(v * v, axis=1))
        fluctuation.append(speed_fluctuation(v))
        mean.append(float(speed.mean()) / agents.max_speed)
        at_min.append(float(np.mean(speed < 1.01 * agents.min_speed)))
    return {"speed_var_rel": nanmean(fluctuation), "mean_speed_rel": nanmean(mean), "at_min_speed": nanmean(at_min)}


EXPERIMENTS: tuple[Experiment, ...] = (
    Experiment(
        "edge-deviation",
        "Mean heading deviation [rad] of the outer 10 % and the inner 50 % of birds by distance from the "
        "centroid, over samples every 0.5 s with polarization >= 0.85 (10 s warm-up, 120 s), 500 birds, "
        "spontaneous turns off; samples_used = fraction of samples that qualified, polarization_used = their mean "
        "polarization.",
        _both(
            {
                "k=7 inertial-spin": (TOPO, "neighbors.k=7", SPIN),
                "k=7 basic": (TOPO, "neighbors.k=7", BASIC),
                "k=12 inertial-spin": (TOPO, "neighbors.k=12", SPIN),
                "metric inertial-spin": (METRIC, SPIN),
                "metric basic": (METRIC, BASIC),
            }
        ),
        measure_edge,
        {(d, "k=7 inertial-spin"): "edge 0.65-0.81, inner 0.40-0.44 (5 combinations)" for d in (2, 3)},
    ),
    Experiment(
        "shape",
        "|cos| between the mean heading and the longest principal axis of the flock, 3D, 500 birds, samples "
        "every 2 s with polarization >= 0.8 (10 s warm-up, 120 s), spontaneous turns off.",
        (
            Condition(3, "k=7 inertial-spin", (TOPO, "neighbors.k=7", SPIN)),
            Condition(3, "k=12 inertial-spin", (TOPO, "neighbors.k=12", SPIN)),
            Condition(3, "metric inertial-spin", (METRIC, SPIN)),
            Condition(3, "k=7 basic", (TOPO, "neighbors.k=7", BASIC)),
        ),
        measure_shape,
        {
            (3, "k=7 inertial-spin"): "0.44",
            (3, "k=12 inertial-spin"): "0.20",
            (3, "metric inertial-spin"): "0.52 (boids mode)",
            (3, "k=7 basic"): "0.57",
        },
    ),
    Experiment(
        "speed-fluctuation",
        "var(|v_i|) / mean(|v_i|)^2, mean speed / max_speed and the fraction of birds within 1 % of min_speed, "
        "averaged over samples every 0.5 s (10 s warm-up, 60 s), 500 birds: presets' defaults, basic alignment, "
        "and the model before the speed fix (rule velocity differences per second, no cruise control).",
        _both(
            {
                "defaults (inertial-spin)": (),
                "basic alignment": (BASIC,),
                "before the fix": ("rules.response_time=1.0", "rules.cruise.restore=0.0"),
            }
        ),
        measure_speed,
        {(d, "defaults (inertial-spin)"): "about 0.002 (field: about 0.005)" for d in (2, 3)},
    ),
)

"""The murmuration hallmarks family (murmuration-hallmarks): polarization, correlation length,
spacing, density at the border, speed, splits and proportions of the starling presets' flocks at
several sizes, beside the field studies' values (docs/starlings.md)."""

from __future__ import annotations

import functools
import math

import numpy as np

from flocksim.experiments.common import (
    PRESETS,
    Condition,
    Experiment,
    RunSpec,
    alive_pv,
    make_sim,
    nanmean,
    sample,
    seconds,
    steps_of,
)
from flocksim.metrics import polarization
from flocksim.metrics.correlation import correlation_function, correlation_length
from flocksim.metrics.hallmarks import (
    border_birds,
    border_interior_nnd,
    flock_count,
    flock_proportions,
    linear_size,
    uniform_like,
)
from flocksim.metrics.neighbors import nearest_neighbor_distances
from flocksim.metrics.shape import anisotropy_gamma
from flocksim.metrics.starlings import mean_heading, speed_fluctuation
from flocksim.scenarios import load_preset

HALLMARK_EVERY = 0.5
"""Seconds between the hallmarks' samples (after a 10 s warm-up, 20 s of samples)."""
TURNING_DEG_PER_S = 10.0
"""A sample is in a turn when the flock's mean heading turns faster than this since the last one."""
FLOCK_LINK_NND = 4.0
"""Birds closer than this many median nearest-neighbour distances belong to the same flock
(single linkage, chained): a split is a gap of several spacings, in any unit."""
CORRELATION_MAX_BIRDS = 4000
"""Larger flocks get no correlation length (an O(N^2) pair sum per sample)."""


def _cos_angle(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.clip(a @ b / max(np.linalg.norm(a) * np.linalg.norm(b), 1e-300), -1.0, 1.0))


def start_at_preset_density(spec: RunSpec, n: int) -> tuple[str, ...]:
    """For an open-sky preset, the override that widens (or narrows) the start region's horizontal
    sides by sqrt(birds / preset's birds), so that ``n`` birds start at the preset's density in a
    layer of the same thickness; nothing for a walled preset."""
    preset = load_preset(spec.condition.preset or PRESETS[spec.condition.dim])
    bounds = preset.world.bounds
    if bounds.kind != "open":
        return ()
    birds = min(n, 80) if spec.quick else n
    scale = math.sqrt(birds / preset.agents.n)
    horizontal = (0, 2) if preset.world.dim == 3 else (0, 1)
    size = [side * scale if axis in horizontal else side for axis, side in enumerate(bounds.size)]
    return (f"world.bounds.size=[{', '.join(repr(x) for x in size)}]",)


def measure_hallmarks(spec: RunSpec, n: int) -> dict[str, float]:
    """The murmuration hallmarks of docs/starlings.md for one run of ``n`` birds (starting at the
    preset's density, :func:`start_at_preset_density`): samples every 0.5 s from 10 s to 30 s; a
    sample is in a turn when the mean heading turned faster than :data:`TURNING_DEG_PER_S` since
    the previous one, in cruise otherwise."""
    sim = make_sim(spec, n, start_at_preset_density(spec, n))
    params = sim.params
    dim = params.world.dim
    sim.step(steps_of(sim, seconds(spec, 10.0, 1.0)))
    total = seconds(spec, 20.0, 3.0)
    horizontal = [0, 2] if dim == 3 else [0, 1]
    roost = params.rules.roost
    centre = np.array(([*list(roost.center), 0.0])[:dim])
    series: dict[str, list[float]] = {}
    previous = None
    for k, _ in enumerate(sample(sim, total, HALLMARK_EVERY)):
        p, v = alive_pv(sim)
        heading = mean_heading(v)
        rate = math.nan if previous is None else math.degrees(math.acos(_cos_angle(previous, heading))) / HALLMARK_EVERY
        previous = heading
        row = {"polarization": polarization(v), "turn_rate": rate, "late": float(k * HALLMARK_EVERY >= total - 10.0)}
        speed = np.sqrt(np.sum(v * v, axis=1))
        row["speed_fluctuation"] = speed_fluctuation(v)
        row["speed_mean"] = float(speed.mean())
        border = border_birds(p)
        row["border_nnd_ratio"] = border_interior_nnd(p, border)
        row["border_nnd_ratio_uniform"] = border_interior_nnd(uniform_like(p, np.random.default_rng(k)))
        nnd = nearest_neighbor_distances(p)
        row["nnd_body_lengths"] = float(nnd.mean()) / (2.0 * params.agents.radius)
        row["flocks"] = float(flock_count(p, FLOCK_LINK_NND * float(np.median(nnd))))
        row["roost_distance"] = (
            float(np.linalg.norm((p - centre)[:, horizontal], axis=1).max()) / roost.radius
            if roost.weight > 0
            else math.nan
        )
        if dim == 3:
            row.update(flock_proportions(p, v))
            interior = ~border
            row["gamma1"] = anisotropy_gamma(p, v, n_max=1, centres=interior if interior.sum() > 1 else None)[0]
        if k % 4 == 0 and len(p) <= CORRELATION_MAX_BIRDS:
            length = linear_size(p, border)
            r0 = correlation_length(correlation_function(p, v, "orientation", bins=30))
            row["r0_over_L"] = r0 / length if length > 0 else math.nan
            row["L"] = length
        for name, value in row.items():
            series.setdefault(name, []).append(float(value))
    for name in ("r0_over_L", "L"):
        series.setdefault(name, [math.nan])
    pol = np.array(series["polarization"])
    rate = np.array(series["turn_rate"])
    late = np.array(series["late"]) > 0
    turning = rate >= TURNING_DEG_PER_S
    cruising = rate < TURNING_DEG_PER_S  # the first sample (no rate) is neither
    flocks = np.array(series["flocks"])

    def mean_where(name: str, where: np.ndarray) -> float:
        values = np.array(series.get(name, [math.nan] * len(where)))
        return nanmean(list(values[where])) if where.any() else math.nan

    everywhere = np.ones(len(pol), dtype=bool)
    out = {
        "polarization_last_10s": float(pol[late].mean()),
        "polarization_min_last_10s": float(pol[late].min()),
        "polarization_cruise": mean_where("polarization", cruising),
        "polarization_turning": mean_where("polarization", turning),
        "turning_fraction": float(turning.mean()),
        "r0_over_L": nanmean(series["r0_over_L"]),
        "L": nanmean(series["L"]),
        "nnd_body_lengths": mean_where("nnd_body_lengths", everywhere),
        "border_nnd_ratio": mean_where("border_nnd_ratio", everywhere),
        "border_nnd_ratio_uniform": mean_where("border_nnd_ratio_uniform", everywhere),
        "speed_mean": mean_where("speed_mean", everywhere),
        "speed_fluctuation": mean_where("speed_fluctuation", everywhere),
        "flocks_mean": float(flocks.mean()),
        "flocks_max": float(flocks.max()),
        "flock_count_changes": float(np.count_nonzero(np.diff(flocks))),
        "roost_distance_max": float(np.nanmax(series["roost_distance"])) if roost.weight > 0 else math.nan,
    }
    if dim == 3:
        for name in ("thickness_to_length", "width_to_length", "thickness_gravity_cos", "gamma1"):
            out[name] = mean_where(name, everywhere)
        out["heading_length_cos_cruise"] = mean_where("heading_length_cos", cruising)
        out["heading_length_cos_turning"] = mean_where("heading_length_cos", turning)
    return out


PREVIOUS_FLIGHT = ("rules.flight.speed_wander=0", "rules.flight.steer_wander=0", "rules.flight.speed_band=0")
"""The banked presets' flight before the birds had their own urges and a marginal speed control: this
experiment's table was made with it (and murmuration-dynamics keeps it as a control)."""


EXPERIMENTS: tuple[Experiment, ...] = (
    Experiment(
        "murmuration-hallmarks",
        "The starling presets (banked flight above a roost, 7 nearest neighbours, a 90 degree blind angle) "
        "with their previous flight (no urges of their own, linear speed control) at "
        "several flock sizes, each starting at the preset's density (the start layer widened by "
        "sqrt(birds / 500)); 10000 birds above a roost of 300 m (the preset's: 100 m), wider than the "
        "flock; 500 birds without the blind angle, the control for the anisotropy, and with cohesion weighted by "
        "centrality^2; "
        "and the reference simulator's model (starlings-3d-reference: inertial spin, walls, spontaneous turns) "
        "as a control: samples every 0.5 s from 10 s to 30 s; polarization over the last 10 s (mean, lowest), "
        "in cruise and in turns (mean heading turning faster than 10 deg/s); r0/L (first zero of the "
        "orientation correlation over the largest distance between two birds, every 2 s, up to 4000 birds); "
        "nearest-neighbour distance in body lengths; border/interior nearest-neighbour distance (border: the "
        "convex hull), beside the same for as many uniformly random points in the flock's ellipsoid; speed "
        "and its fluctuation var/mean^2; flocks (birds within 4 median nearest-neighbour "
        "distances chained), their mean, "
        "largest and number of changes; the farthest bird from the roost's centre over its radius; 3D: "
        "thickness/length, width/length, |cos| of the thickness axis with gravity, gamma(1) of the interior "
        "birds, |cos| of the heading with the length axis in cruise and in turns.",
        (
            Condition(2, "500 birds", PREVIOUS_FLIGHT, "starlings-2d", functools.partial(measure_hallmarks, n=500)),
            *(
                Condition(3, f"{n} birds", PREVIOUS_FLIGHT, "starlings-3d", functools.partial(measure_hallmarks, n=n))
                for n in (500, 1000, 2000, 10000)
            ),
            Condition(
                3,
                "10000 birds, 300 m roost",
                ("rules.roost.radius=300", *PREVIOUS_FLIGHT),
                "starlings-3d",
                functools.partial(measure_hallmarks, n=10000),
            ),
            Condition(
                3,
                "500 birds, no blind angle",
                ("rules.blind_angle=0", *PREVIOUS_FLIGHT),
                "starlings-3d",
                functools.partial(measure_hallmarks, n=500),
            ),
            Condition(
                3,
                "500 birds, cohesion centrality 2",
                ("rules.cohesion.centrality=2", *PREVIOUS_FLIGHT),
                "starlings-3d",
                functools.partial(measure_hallmarks, n=500),
            ),
            Condition(
                3,
                "reference model, 500 birds",
                (),
                "starlings-3d-reference",
                functools.partial(measure_hallmarks, n=500),
            ),
        ),
        functools.partial(measure_hallmarks, n=500),
        field_values={
            "polarization_last_10s": "0.96, sd 0.03 (Cavagna et al. 2010)",
            "r0_over_L": "r0 proportional to L (Cavagna et al. 2010)",
            "nnd_body_lengths": "about 5 (about 1 m; body about 0.2 m)",
            "border_nnd_ratio": "denser at the border (Ballerini et al. 2008b): below the uniform control",
            "speed_mean": "about 10 m/s",
            "speed_fluctuation": "about 0.005 (Bialek et al. 2014)",
            "thickness_to_length": "thin, constant proportions (Ballerini et al. 2008b)",
            "thickness_gravity_cos": "near 1: slide parallel to the ground (Ballerini et al. 2008b)",
            "gamma1": "about 0.6 (Ballerini et al. 2008a)",
        },
    ),
)

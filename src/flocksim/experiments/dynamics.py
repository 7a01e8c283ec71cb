"""The murmuration dynamics family (murmuration-dynamics): what a filmed murmuration does over a
minute, measured on the banked starling presets at 500 to 100 000 birds beside the field's
figures (docs/starlings.md): speed fluctuations and their correlation length (Bialek et al. 2014;
Cavagna et al. 2010), collective turns, shape changes (Hemelrijk & Hildenbrandt 2011), flocks,
splits and merges, density at the border and gamma(1) (Ballerini et al. 2008a, b), and the
opacity seen from below (Pearce et al. 2014)."""

from __future__ import annotations

import functools
import math

import numpy as np

from flocksim.experiments.common import (
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
from flocksim.experiments.hallmarks import FLOCK_LINK_NND, PREVIOUS_FLIGHT, start_at_preset_density
from flocksim.metrics import polarization
from flocksim.metrics.correlation import correlation_function, correlation_length
from flocksim.metrics.hallmarks import border_birds, border_interior_nnd, flock_proportions, linear_size, uniform_like
from flocksim.metrics.neighbors import nearest_neighbor_distances
from flocksim.metrics.opacity import projected_opacity
from flocksim.metrics.shape import anisotropy_gamma
from flocksim.metrics.shape_dynamics import shape_variation
from flocksim.metrics.speeds import speed_correlation
from flocksim.metrics.splits import flock_events
from flocksim.metrics.starlings import speed_fluctuation
from flocksim.metrics.turns import collective_turns, flock_headings

SETTLE_S = 10.0
"""Seconds flown before the first sample."""
DURATION_S = 60.0
"""Seconds of samples."""
EVERY_S = 0.5
"""Seconds between samples."""
HEAVY_EVERY = 4
"""The correlation lengths, the border, gamma(1) and the opacity are measured every this many samples."""
HEAVY_BIRDS = 3000
"""At most this many birds (chosen at random once per run) enter the correlation lengths, the border
density and gamma(1): each is an O(N^2) or hull computation per sample."""
TRACKED_BIRDS = 10000
"""At most this many birds (chosen at random once per run) are followed for the shape's changes and the
flocks' splits and merges."""
BODY_DIAMETER = 0.4
"""Diameter [m] of a starling's disc seen from below (wingspan about 0.4 m) for the opacity."""


FIELD_VALUES = {
    "polarization": "0.96, sd 0.03 (Cavagna et al. 2010)",
    "speed_fluctuation": "about 0.005 (Bialek et al. 2014)",
    "xi_speed_over_L": "in proportion to L: scale-free (Cavagna et al. 2010)",
    "r0_over_L": "about 0.35 (Cavagna et al. 2010)",
    "nnd_m": "about 1 m (Ballerini et al. 2008b)",
    "border_nnd_ratio": "below the uniform control: denser at the border (Ballerini et al. 2008b)",
    "gamma1": "about 0.6 (Ballerini et al. 2008a)",
    "thickness_to_length": "about 0.18 (1 : 2.8 : 5.6, Ballerini et al. 2008b)",
    "width_to_length": "about 0.5 (Ballerini et al. 2008b)",
    "opacity_from_below": "about 0.3, marginal (Pearce et al. 2014)",
    "turns_per_minute": "several per minute in displays (filmed; no published rate per minute)",
}
"""The field's figures beside which the table prints each measure."""


def _chosen(rng: np.random.Generator, n: int, most: int) -> np.ndarray:
    return np.sort(rng.choice(n, most, replace=False)) if n > most else np.arange(n)


def _heavy(p: np.ndarray, v: np.ndarray, k: int, dim: int) -> dict[str, float]:
    """Correlation lengths over the flock's size, border density and gamma(1) of one sample's birds."""
    border = border_birds(p)
    size = linear_size(p, border)
    r0 = correlation_length(correlation_function(p, v, "orientation", bins=30))
    row = {
        "xi_speed_over_L": speed_correlation(p, v).xi_over_size,
        "r0_over_L": r0 / size if size > 0 else math.nan,
        "border_nnd_ratio": border_interior_nnd(p, border),
        "border_nnd_ratio_uniform": border_interior_nnd(uniform_like(p, np.random.default_rng(k))),
    }
    if dim == 3:
        interior = ~border
        row["gamma1"] = anisotropy_gamma(p, v, n_max=1, centres=interior if interior.sum() > 1 else None)[0]
    return row


def measure_dynamics(spec: RunSpec, n: int) -> dict[str, float]:
    """One run of ``n`` birds (module docstring): :data:`SETTLE_S` of flight, then a sample every
    :data:`EVERY_S` for :data:`DURATION_S`, starting from the preset's layer widened to its density
    (:func:`start_at_preset_density`)."""
    sim = make_sim(spec, n, start_at_preset_density(spec, n))
    params = sim.params
    dim = params.world.dim
    rng = np.random.default_rng([spec.seed, 7])
    sim.step(steps_of(sim, seconds(spec, SETTLE_S, 1.0)))
    total = seconds(spec, DURATION_S, 4.0)
    horizontal = [0, 2] if dim == 3 else [0, 1]
    roost = params.rules.roost
    centre = np.array(([*list(roost.center), 0.0])[:dim])
    count = sim.state.n
    tracked = _chosen(rng, count, TRACKED_BIRDS)
    heavy = _chosen(rng, count, HEAVY_BIRDS)
    times: list[float] = []
    tracks: list[np.ndarray] = []
    alive: list[np.ndarray] = []
    velocities: list[np.ndarray] = []
    series: dict[str, list[float]] = {}
    for k, _ in enumerate(sample(sim, total, EVERY_S)):
        state = sim.state
        times.append(sim.time)
        tracks.append(state.position[tracked].copy())
        alive.append(state.alive[tracked].copy())
        velocities.append(state.velocity[state.alive].copy())
        p, v = alive_pv(sim)
        row = {"polarization": polarization(v), "speed_fluctuation": speed_fluctuation(v)}
        row["speed_mean"] = float(np.sqrt(np.sum(v * v, axis=1)).mean())
        row["nnd_m"] = float(nearest_neighbor_distances(p).mean())
        row["roost_distance"] = (
            float(np.linalg.norm((p - centre)[:, horizontal], axis=1).max()) / roost.radius
            if roost.weight > 0
            else math.nan
        )
        if dim == 3:
            proportions = flock_proportions(p, v)
            row["thickness_to_length"] = proportions["thickness_to_length"]
            row["width_to_length"] = proportions["width_to_length"]
        if k % HEAVY_EVERY == 0:
            live = state.alive[heavy]
            row.update(_heavy(state.position[heavy][live], state.velocity[heavy][live], k, dim))
            if dim == 3:
                row["opacity_from_below"] = projected_opacity(p, BODY_DIAMETER).opacity
        for name, value in row.items():
            series.setdefault(name, []).append(float(value))
    time = np.array(times)
    position = np.array(tracks)
    living = np.array(alive)
    out = {name: nanmean(values) for name, values in series.items() if name != "roost_distance"}
    out["polarization_min"] = float(np.min(series["polarization"]))
    out["roost_distance_max"] = float(np.nanmax(series["roost_distance"])) if roost.weight > 0 else math.nan
    headings = np.array([flock_headings(v[None])[0] for v in velocities])
    turns = collective_turns(time, headings)
    out["turns_per_minute"] = turns.turns_per_minute
    out["turning_fraction"] = turns.turning_fraction
    events = flock_events(time, position, living, link_nnd=FLOCK_LINK_NND)
    out["flocks_mean"] = events.flocks_mean
    out["flocks_max"] = float(events.flocks_max)
    out["splits_per_minute"] = events.splits_per_minute
    out["merges_per_minute"] = events.merges_per_minute
    if dim == 3:
        shape = shape_variation(position, living)
        for name in ("thickness", "width", "length"):
            out[f"cv_{name}"] = shape[f"cv_{name}"]
    return out


def _condition(label: str, n: int, roost: float, extra: tuple[str, ...] = ()) -> Condition:
    """``n`` birds of starlings-3d above a roost of radius ``roost`` [m], with ``extra`` overrides."""
    return Condition(
        3, label, (f"rules.roost.radius={roost:g}", *extra), "starlings-3d", functools.partial(measure_dynamics, n=n)
    )


EXPERIMENTS: tuple[Experiment, ...] = (
    Experiment(
        "murmuration-dynamics",
        "The 3D starling presets with the birds' own urges and the marginal speed control (rules.flight: "
        "speed_wander 3, steer_wander 1 m/s^2, wander_time 1 s, speed_band 1.5 m/s) at 500, 2000 and 10 000 "
        "birds (the starlings-3d layer widened to the preset's density; roost 100 m, 300 m at 10 000); "
        "controls: the previous "
        "flight (no urges, linear speed control) and the urges with the linear speed control. 10 s of flight, "
        "then a sample every 0.5 s for 60 s: polarization (mean, lowest), speed fluctuation var/mean^2, speed "
        "correlation length xi_sp/L and r0/L, border/interior nearest-neighbour distance beside uniform points "
        "and gamma(1) (every 2 s, at most 3000 random birds); nearest-neighbour distance [m]; thickness and "
        "width over length and the coefficient of variation of thickness, width and length over time (at most "
        "10 000 random birds); collective turns (45 deg within 3 s) per minute and the fraction of time in "
        "turns; flocks (4 median spacings), splits and merges per minute; opacity from below (0.4 m discs); "
        "the farthest bird from the roost's centre over its radius.",
        (
            _condition("500 birds", 500, 100.0),
            _condition("2000 birds", 2000, 100.0),
            _condition("10000 birds", 10000, 300.0),
            _condition("500 birds, previous flight", 500, 100.0, PREVIOUS_FLIGHT),
            _condition("2000 birds, previous flight", 2000, 100.0, PREVIOUS_FLIGHT),
            _condition("2000 birds, linear speed control", 2000, 100.0, ("rules.flight.speed_band=0",)),
        ),
        functools.partial(measure_dynamics, n=500),
        field_values=FIELD_VALUES,
    ),
)

"""Starling experiments, runnable headless: ``flocksim experiment NAME`` (docs/starlings.md).

They repeat the measurements that the web murmuration simulator whose model the starling
presets follow reports about itself (the "reference simulator" of docs/starlings.md), and add
the propagation of a turn through a flock (Attanasi et al. 2014).

Each experiment is a set of conditions (a dimension and a few parameter
overrides of the starlings presets) run over seeds; each run returns named
numbers, and the results are kept as tidy rows (experiment, dim, condition,
seed, metric, value). :func:`summarize` gives mean, standard deviation and
count per (dim, condition, metric). ``quick`` runs use few birds and a few
simulated seconds (for tests and smoke checks), not the numbers to report.

Definitions of the measures are in :mod:`flocksim.metrics.starlings`; the
choices made where the reference simulator does not say (durations, warm-up, which options
are on) are in each experiment's ``about`` text and in docs/starlings.md.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field

import numpy as np

from flocksim.config import apply_overrides
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
from flocksim.metrics.starlings import (
    catch_rate,
    edge_interior_deviation,
    flock_shape,
    fraction_below,
    mean_heading,
    repetition_index,
    speed_fluctuation,
)
from flocksim.params import FRAME
from flocksim.scenarios import load_preset
from flocksim.simulation import Simulation
from flocksim.space import displacement_array

PRESETS = {2: "starlings-2d-reference", 3: "starlings-3d-reference"}
"""The reference simulator's scenes: the experiments that repeat its measurements use them."""


@dataclass(frozen=True)
class Condition:
    """One setting of an experiment: a dimension, a label, parameter overrides and the preset they
    apply to (default: the starlings preset of the dimension)."""

    dim: int
    label: str
    overrides: tuple[str, ...] = ()
    preset: str = ""
    measure: Callable[[RunSpec], dict[str, float]] | None = None
    """Measures this condition instead of the experiment's ``measure``."""


@dataclass(frozen=True)
class RunSpec:
    experiment: str
    condition: Condition
    seed: int
    quick: bool
    overrides: tuple[str, ...] = ()
    """Applied after the condition's own overrides (``flocksim experiment --set``)."""


@dataclass(frozen=True)
class Experiment:
    name: str
    about: str
    conditions: tuple[Condition, ...]
    measure: Callable[[RunSpec], dict[str, float]]
    reported: dict[tuple[int, str], str] = field(default_factory=dict)
    """What the reference simulator reports for a (dim, condition), as text for the table."""
    field_values: dict[str, str] = field(default_factory=dict)
    """What the field studies measured, per metric (an experiment with these prints one row per
    metric and one column per condition)."""


# ------------------------------------------------------------------ helpers


def make_sim(spec: RunSpec, n: int, extra: tuple[str, ...] = ()) -> Simulation:
    """The preset of the condition's dimension with the condition's overrides and ``n`` birds
    (fewer in quick mode). Results do not depend on the thread count."""
    n_birds = min(n, 80) if spec.quick else n
    overrides = [f"agents.n={n_birds}", *spec.condition.overrides, *spec.overrides, *extra]
    preset = spec.condition.preset or PRESETS[spec.condition.dim]
    params = apply_overrides(load_preset(preset), overrides)
    return Simulation(params, seed=spec.seed)


def twin(sim: Simulation) -> Simulation:
    """A second simulation in exactly the state of ``sim`` (components, clock and generator included)."""
    other = Simulation(sim.params, seed=sim.seed)
    other.restore(sim.checkpoint())
    return other


def seconds(spec: RunSpec, full: float, quick: float = 3.0) -> float:
    return quick if spec.quick else full


def steps_of(sim: Simulation, s: float) -> int:
    return max(1, round(s / sim.dt))


def alive_pv(sim: Simulation) -> tuple[np.ndarray, np.ndarray]:
    s = sim.state
    return s.position[s.alive], s.velocity[s.alive]


def sample(sim: Simulation, duration: float, every: float) -> Iterator[None]:
    """Advance ``duration`` seconds, yielding after every ``every`` seconds."""
    chunk = steps_of(sim, every)
    for _ in range(max(1, steps_of(sim, duration) // chunk)):
        sim.step(chunk)
        yield


def nanmean(values: list[float]) -> float:
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    return float(v.mean()) if len(v) else math.nan


# ------------------------------------------------------------------ measures

PANIC = {
    "none (1, 1, 1)": ("predator.panic.separation=1.0", "predator.panic.alignment=1.0", "predator.panic.cohesion=1.0"),
    "spreading (1.5, 1.5, 0.5)": (),
    "clustering (0.6, 1.5, 2.0)": (
        "predator.panic.separation=0.6",
        "predator.panic.alignment=1.5",
        "predator.panic.cohesion=2.0",
    ),
}


def measure_predator(spec: RunSpec) -> dict[str, float]:
    sim = make_sim(spec, 500, ("predator.enabled=true",))
    duration = seconds(spec, 240.0, 20.0)
    sim.step(steps_of(sim, duration))
    return {"catch_per_min": catch_rate(sim.caught, sim.time), "caught": float(sim.caught)}


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


TURN_DELAYS = (0.0, 1.0, 3.0, 10.0)


def heading_angle(a: np.ndarray, b: np.ndarray) -> float:
    return math.degrees(math.acos(float(np.clip(a @ b, -1.0, 1.0))))


def measure_turn(spec: RunSpec) -> dict[str, float]:
    """Twin runs from one polarized state: one with 10 birds turned by 60 degrees."""
    extra = ("turning.enabled=false", "agents.init.kind=aligned")
    base = make_sim(spec, 500, extra)
    base.step(steps_of(base, seconds(spec, 20.0, 2.0)))
    turned = twin(base)
    center = int(base.state.ids[base.state.alive][0])
    count = min(10, base.state.n_alive)
    turned.perturb_turn(center_id=center, count=count, angle_deg=60.0)
    out = {"polarization": polarization(alive_pv(base)[1])}
    done = 0.0
    for delay in TURN_DELAYS:
        if delay > done:
            n = steps_of(base, delay - done)
            base.step(n)
            turned.step(n)
            done = delay
        change = heading_angle(mean_heading(alive_pv(base)[1]), mean_heading(alive_pv(turned)[1]))
        out[f"dheading_{delay:g}s_deg"] = change
    return out


WAVE_ARRIVAL_DEG = 1.0
"""A turn has reached a bird when its heading differs by this much from its twin's (the unturned run)."""


def angles_between(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Angle [rad] between the rows of two (N, dim) arrays of vectors: atan2(|a x b|, a . b)."""
    a3 = np.zeros((len(a), 3))
    b3 = np.zeros((len(b), 3))
    a3[:, : a.shape[1]] = a
    b3[:, : b.shape[1]] = b
    cross = np.cross(a3, b3)
    return np.arctan2(np.sqrt(np.sum(cross * cross, axis=1)), np.sum(a3 * b3, axis=1))


def neighbour_second_moment(sim: Simulation) -> np.ndarray:
    """M = mean over living birds i of the mean over i's neighbours j of r_ij r_ij^T [units^2], (dim, dim)."""
    s = sim.state
    nbrs = sim.neighbors()
    counts = nbrs.counts
    rows = np.repeat(np.arange(s.n), counts)
    keep = s.alive[rows]
    d = displacement_array(s.position[rows[keep]], s.position[nbrs.index[keep]], sim.model.space)
    weight = 1.0 / counts[rows[keep]]
    return (d * weight[:, None]).T @ d / max(int(s.alive.sum()), 1)


def linear_wave_speed(sim: Simulation, direction: np.ndarray) -> np.ndarray:
    """Speed [units/s] of a small turn along unit ``direction`` rows in the linearised inertial spin model.

    Small heading angles phi about one axis obey, per frame, chi phi'' + eta phi' = J mean_j (phi_j - phi_i)
    ~ (J/2) e.M.e d^2 phi/dx^2 along e, with M = :func:`neighbour_second_moment`: an underdamped turn
    travels at c = sqrt(J e.M.e / (2 chi)) units per frame.
    """
    a = sim.params.rules.alignment
    coupling = a.coupling * a.weight
    m = neighbour_second_moment(sim)
    eme = np.einsum("ij,jk,ik->i", direction, m, direction)
    return np.sqrt(coupling * eme / (2.0 * a.chi)) / FRAME


def fit_power(r: np.ndarray, t: np.ndarray) -> tuple[float, float, float]:
    """Least squares t = a + b r^alpha over alpha in [0.5, 3] (step 0.01): (alpha, a, b)."""
    best = (math.inf, math.nan, math.nan, math.nan)
    for alpha in np.arange(0.5, 3.0001, 0.01):
        x = r**alpha
        design = np.stack([np.ones_like(x), x], axis=1)
        coef, *_ = np.linalg.lstsq(design, t, rcond=None)
        residual = float(np.sum((design @ coef - t) ** 2))
        if residual < best[0]:
            best = (residual, float(alpha), float(coef[0]), float(coef[1]))
    return best[1], best[2], best[3]


def measure_wave(spec: RunSpec) -> dict[str, float]:
    """Twin runs from one flock after a warm-up: in one of them the initiators on the lateral edge turn
    (only they are turned: ``turning.propagation = emergent``). A bird's arrival time is the first
    time its heading differs from its twin's by WAVE_ARRIVAL_DEG; fitted against its distance r from
    the edge bird as t = a + b r^alpha (``exponent``: 1 for a wave, 2 for diffusion) and t = a + r / c
    (``speed``, least squares of t on r), beside the linearised inertial spin model's speed
    (``theory_speed``, the median over the reached birds of c along the direction from the edge bird)."""
    sim = make_sim(spec, 3000)
    sim.step(steps_of(sim, seconds(spec, 10.0, 1.0)))
    turned = twin(sim)
    wave = next(c for c in turned.components if c.name == "turning")
    wave.start_wave(turned)
    s = sim.state
    alive = np.flatnonzero(s.alive)
    dim = s.dim
    offset = displacement_array(wave.origin[None, :dim], s.position[alive], sim.model.space)
    r = np.sqrt(np.sum(offset * offset, axis=1))
    theory = linear_wave_speed(sim, offset / np.maximum(r, 1e-300)[:, None])
    initiator = np.isin(alive, wave.initiators)
    arrival = np.full(len(alive), np.inf)
    threshold = math.radians(WAVE_ARRIVAL_DEG)
    out = {"polarization": polarization(s.velocity[alive])}
    for t in range(steps_of(sim, seconds(spec, 3.0, 1.0))):
        sim.step()
        turned.step()
        moved = angles_between(s.velocity[alive], turned.state.velocity[alive])
        arrival[(moved >= threshold) & ~np.isfinite(arrival)] = (t + 1) * sim.dt
    reached = np.isfinite(arrival) & ~initiator
    out["reached"] = float(reached.sum()) / max(int((~initiator).sum()), 1)
    out["flock_turn_deg"] = heading_angle(mean_heading(s.velocity[alive]), mean_heading(turned.state.velocity[alive]))
    sel = reached & (r > r[initiator].max(initial=0.0))
    if sel.sum() >= 10:
        out["exponent"] = fit_power(r[sel], arrival[sel])[0]
        out["speed"] = 1.0 / float(np.polyfit(r[sel], arrival[sel], 1)[0])  # distances are exact, times noisy
        out["theory_speed"] = float(np.median(theory[sel]))
    else:
        out |= {"exponent": math.nan, "speed": math.nan, "theory_speed": math.nan}
    out["speed_ratio"] = out["speed"] / out["theory_speed"]
    return out


FRONT_THRESHOLDS_DEG = (0.5, 1.0, 2.0)
"""Heading differences from the unkicked twin at which the turn front is taken to reach a bird."""
CONTROL_KICK_DEG = 0.001
"""The control twin's initiators turn by this much: what follows from it is chaos, not a turn."""
CHAOS_SHARE = 0.01
"""The window for a threshold ends when this share of the control's birds is that far from the twin."""


def rotated(v: np.ndarray, axis: np.ndarray, angle: float) -> np.ndarray:
    """Rows of v (N, dim) rotated by ``angle`` [rad] about the unit 3-vector ``axis`` (Rodrigues);
    2D rows turn in their plane (axis along z)."""
    dim = v.shape[1]
    v3 = np.zeros((len(v), 3))
    v3[:, :dim] = v
    c, s_ = math.cos(angle), math.sin(angle)
    out = v3 * c + np.cross(axis, v3) * s_ + np.outer(v3 @ axis, axis) * (1.0 - c)
    return out[:, :dim]


def measure_wave_front(spec: RunSpec) -> dict[str, float]:
    """Three runs from one flock after a warm-up: the base, a twin whose edge initiators turn 90
    degrees (as in ``measure_wave``) and a control twin whose same initiators are turned by
    CONTROL_KICK_DEG about the same axis. For each threshold theta of FRONT_THRESHOLDS_DEG, the
    window ends when CHAOS_SHARE of the control's birds are theta from the base (the control's
    divergence is chaos: the kick itself is far below theta); in the window a bird's arrival is the
    first time its heading is theta from the base's, fitted against its distance r from the edge
    bird as t = a + r / c (``speed``) and t = a + b r^alpha (``exponent``), with the fit's R^2, the
    share of birds reached in the window (``reached``), the share of the control's birds theta away
    by the window's end (``control_reached``) and the linearised model's speed."""
    sim = make_sim(spec, 3000)
    sim.step(steps_of(sim, seconds(spec, 10.0, 1.0)))
    turned = twin(sim)
    control = twin(sim)
    wave = next(c for c in turned.components if c.name == "turning")
    wave.start_wave(turned)
    control.rng.random()  # the draw start_wave made (which side), so the generators stay in step
    s = sim.state
    alive = np.flatnonzero(s.alive)
    kicked = control.state.velocity
    kicked[wave.initiators] = rotated(kicked[wave.initiators], wave.axis, math.radians(CONTROL_KICK_DEG))
    offset = displacement_array(wave.origin[None, : s.dim], s.position[alive], sim.model.space)
    r = np.sqrt(np.sum(offset * offset, axis=1))
    theory = linear_wave_speed(sim, offset / np.maximum(r, 1e-300)[:, None])
    others = ~np.isin(alive, wave.initiators)
    beyond = others & (r > r[~others].max(initial=0.0))
    thresholds = np.radians(FRONT_THRESHOLDS_DEG)
    arrival = np.full((len(thresholds), len(alive)), np.inf)
    chaos = np.full(len(thresholds), np.inf)  # window end per threshold
    steps = steps_of(sim, seconds(spec, 3.0, 1.0))
    for t in range(steps):
        for run in (sim, turned, control):
            run.step()
        now = (t + 1) * sim.dt
        moved = angles_between(s.velocity[alive], turned.state.velocity[alive])
        noise = angles_between(s.velocity[alive], control.state.velocity[alive])
        for k, theta in enumerate(thresholds):
            arrival[k][(moved >= theta) & ~np.isfinite(arrival[k])] = now
            if not np.isfinite(chaos[k]) and np.mean(noise[others] >= theta) >= CHAOS_SHARE:
                chaos[k] = now
    out: dict[str, float] = {"polarization": polarization(s.velocity[alive])}
    for k, degrees in enumerate(FRONT_THRESHOLDS_DEG):
        window = min(chaos[k], steps * sim.dt)
        used = beyond & (arrival[k] < window)
        tag = f"{degrees:g}deg"
        out[f"window_s_{tag}"] = float(window)
        out[f"reached_{tag}"] = float(used.sum()) / max(int(others.sum()), 1)
        out[f"control_reached_{tag}"] = float(np.isfinite(chaos[k]))
        metrics = dict.fromkeys(("speed", "theory_speed", "speed_ratio", "r2", "exponent"), math.nan)
        if used.sum() >= 20:
            rr, tt = r[used], arrival[k][used]
            slope, intercept = np.polyfit(rr, tt, 1)
            residual = tt - (intercept + slope * rr)
            metrics["speed"] = 1.0 / float(slope) if slope > 0 else math.nan
            metrics["theory_speed"] = float(np.median(theory[used]))
            metrics["speed_ratio"] = metrics["speed"] / metrics["theory_speed"]
            metrics["r2"] = 1.0 - float(residual @ residual) / max(float(((tt - tt.mean()) ** 2).sum()), 1e-300)
            metrics["exponent"] = fit_power(rr, tt)[0]
        out |= {f"{name}_{tag}": value for name, value in metrics.items()}
    return out


def measure_spontaneous(spec: RunSpec) -> dict[str, float]:
    sim = make_sim(spec, 500, ("neighbors.mode=metric",))
    sim.step(steps_of(sim, seconds(spec, 10.0, 1.0)))
    path, pol = [], []
    for _ in sample(sim, seconds(spec, 240.0, 6.0), 0.5):
        p, v = alive_pv(sim)
        path.append(p.mean(axis=0))
        pol.append(polarization(v))
    return {"repetition": repetition_index(np.array(path)), "time_pol_below_0.6": fraction_below(pol, 0.6)}


def _both(labels: dict[str, tuple[str, ...]]) -> tuple[Condition, ...]:
    return tuple(Condition(dim, label, overrides) for dim in (2, 3) for label, overrides in labels.items())


WAVE_PRESET = "starlings-3d-waves"
WAVE = ("turning.mean_interval=1e9",)  # no turn but the one the experiment starts
SPIN = "rules.alignment.mode=inertial-spin"
BASIC = "rules.alignment.mode=basic"
TOPO = "neighbors.mode=topological"
METRIC = "neighbors.mode=metric"


def _wave_conditions(measure: Callable[[RunSpec], dict[str, float]], prefix: str = "") -> tuple[Condition, ...]:
    """The waves preset underdamped, and overdamped (eta = chi) as the model's control."""
    return (
        Condition(3, f"{prefix}underdamped", WAVE, WAVE_PRESET, measure),
        Condition(3, f"{prefix}overdamped (eta = chi)", (*WAVE, "rules.alignment.eta=0.25"), WAVE_PRESET, measure),
    )


EXPERIMENTS: dict[str, Experiment] = {
    e.name: e
    for e in (
        Experiment(
            "predator-multipliers",
            "Catch rate of one predator per minute, 500 birds, 240 s, under three panic multiplier settings "
            "(separation, alignment, cohesion); presets' other defaults (inertial spin, k = 7, spontaneous turns).",
            _both({label: ("predator.enabled=true", *o) for label, o in PANIC.items()}),
            measure_predator,
            {
                (2, "none (1, 1, 1)"): "6.6/min",
                (2, "spreading (1.5, 1.5, 0.5)"): "6.3/min",
                (2, "clustering (0.6, 1.5, 2.0)"): "11.8/min",
                (3, "none (1, 1, 1)"): "7.3/min",
                (3, "spreading (1.5, 1.5, 0.5)"): "7.6/min",
                (3, "clustering (0.6, 1.5, 2.0)"): "21.0/min",
            },
        ),
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
        Experiment(
            "turn-propagation",
            "Twin runs, one of them turned. Presets: 10 of 500 birds (bird 0 and its 9 nearest) turned 60 degrees "
            "left after a 20 s warm-up from an aligned start (spontaneous turns off): angle [deg] between the mean "
            "headings of the turned run and of its unturned twin, right after the turn and 1, 3, 10 s later. "
            "Waves: starlings-3d-waves (3000 birds, open sky), after a 10 s warm-up its 10 edge birds start a "
            "90-degree turn and nobody else is turned; a bird is reached when its heading is 1 degree from its "
            "twin's; arrival time t against distance r from the edge bird, fitted as t = a + b r^exponent "
            "(1: a wave, 2: diffusion) and t = a + r / speed, beside the linearised model's speed "
            "(docs/models.md); underdamped (eta 0.02) and overdamped (eta = chi = 0.25); 3 s.",
            (
                *_both({"inertial-spin": (SPIN,), "basic": (BASIC,)}),
                *_wave_conditions(measure_wave, "wave: "),
            ),
            measure_turn,
            {(d, "inertial-spin"): "about 1 degree" for d in (2, 3)},
        ),
        Experiment(
            "murmuration-hallmarks",
            "The starling presets (banked flight above a roost, 7 nearest neighbours, a 90 degree blind angle) at "
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
                Condition(2, "500 birds", (), "starlings-2d", functools.partial(measure_hallmarks, n=500)),
                *(
                    Condition(3, f"{n} birds", (), "starlings-3d", functools.partial(measure_hallmarks, n=n))
                    for n in (500, 1000, 2000, 10000)
                ),
                Condition(
                    3,
                    "10000 birds, 300 m roost",
                    ("rules.roost.radius=300",),
                    "starlings-3d",
                    functools.partial(measure_hallmarks, n=10000),
                ),
                Condition(
                    3,
                    "500 birds, no blind angle",
                    ("rules.blind_angle=0",),
                    "starlings-3d",
                    functools.partial(measure_hallmarks, n=500),
                ),
                Condition(
                    3,
                    "500 birds, cohesion centrality 2",
                    ("rules.cohesion.centrality=2",),
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
        Experiment(
            "turn-waves",
            "starlings-3d-waves (3000 birds, open sky, underdamped inertial spin), 10 s warm-up, then three twins: "
            "unkicked, its 10 edge birds turned 90 degrees, and the same 10 turned 0.001 degree (the control: what "
            "follows is chaos). Per threshold (0.5, 1, 2 degrees from the unkicked twin) the window ends when 1 % "
            "of the control's birds are that far; arrivals in the window fitted against distance from the edge "
            "bird: t = a + r / speed (R^2, r2) and t = a + b r^exponent, beside the linearised model's speed; "
            "reached: share of birds the front reached in the window; control_reached: 1 when the control's "
            "chaos closed the window before 3 s. Overdamped (eta = chi) as the model's control.",
            _wave_conditions(measure_wave_front),
            measure_wave_front,
            field_values={
                f"speed_{d:g}deg": "20-40 m/s, about 2-3 x the birds' speed (Attanasi et al. 2014)"
                for d in FRONT_THRESHOLDS_DEG
            }
            | {f"exponent_{d:g}deg": "1: linear in time (Attanasi et al. 2014)" for d in FRONT_THRESHOLDS_DEG},
        ),
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
}


# ------------------------------------------------------------------ running


def run_specs(name: str, seeds: list[int], quick: bool, overrides: tuple[str, ...] = ()) -> list[RunSpec]:
    experiment = EXPERIMENTS[name]
    return [RunSpec(name, c, seed, quick, overrides) for c in experiment.conditions for seed in seeds]


def check_experiment_overrides(name: str, overrides: tuple[str, ...]) -> None:
    """Raise ConfigError (naming the key) unless ``overrides`` apply to every condition's parameters."""
    for c in EXPERIMENTS[name].conditions:
        apply_overrides(load_preset(c.preset or PRESETS[c.dim]), [*c.overrides, *overrides])


def run_one(spec: RunSpec) -> list[dict[str, object]]:
    """Tidy rows of one run."""
    values = (spec.condition.measure or EXPERIMENTS[spec.experiment].measure)(spec)
    return [
        {
            "experiment": spec.experiment,
            "dim": spec.condition.dim,
            "condition": spec.condition.label,
            "seed": spec.seed,
            "metric": metric,
            "value": value,
        }
        for metric, value in values.items()
    ]


def _one_thread() -> None:
    import numba

    numba.set_num_threads(1)


def run_experiment(
    name: str,
    seeds: list[int],
    quick: bool = False,
    jobs: int = 1,
    on_done: Callable[[RunSpec], None] | None = None,
    overrides: tuple[str, ...] = (),
) -> list[dict[str, object]]:
    """All runs of an experiment (``overrides`` applied to every condition); ``jobs`` > 1 runs them in
    that many processes, each with one numba thread. Rows come back in (condition, seed) order whatever
    the completion order."""
    specs = run_specs(name, seeds, quick, overrides)
    results: dict[int, list[dict[str, object]]] = {}
    if jobs <= 1:
        for k, spec in enumerate(specs):
            results[k] = run_one(spec)
            if on_done:
                on_done(spec)
    else:
        with ProcessPoolExecutor(max_workers=jobs, initializer=_one_thread) as pool:
            futures = {pool.submit(run_one, spec): k for k, spec in enumerate(specs)}
            for future in as_completed(futures):
                k = futures[future]
                results[k] = future.result()
                if on_done:
                    on_done(specs[k])
    return [row for k in range(len(specs)) for row in results[k]]


def summarize(rows: list[dict[str, object]]) -> list[dict[str, object]]:
    """Mean, sample standard deviation (0 for one seed) and count of finite values per
    (dim, condition, metric), in first-appearance order."""
    groups: dict[tuple[int, str, str], list[float]] = {}
    for row in rows:
        key = (int(row["dim"]), str(row["condition"]), str(row["metric"]))
        groups.setdefault(key, []).append(float(row["value"]))
    out = []
    for (dim, condition, metric), values in groups.items():
        v = np.asarray(values)
        v = v[np.isfinite(v)]
        mean = float(v.mean()) if len(v) else math.nan
        sd = float(v.std(ddof=1)) if len(v) > 1 else (0.0 if len(v) else math.nan)
        out.append({"dim": dim, "condition": condition, "metric": metric, "mean": mean, "sd": sd, "n": len(v)})
    return out


CSV_COLUMNS = ("experiment", "dim", "condition", "seed", "metric", "value")


def write_csv(rows: list[dict[str, object]], handle) -> None:
    """Tidy rows as CSV (one line per run and metric)."""
    import csv

    writer = csv.DictWriter(handle, fieldnames=list(CSV_COLUMNS))
    writer.writeheader()
    for row in rows:
        writer.writerow({k: (repr(v) if isinstance(v, float) else v) for k, v in row.items()})


def mean_interval(mean: float, sd: float, n: int, level: float = 0.95) -> tuple[float, float]:
    """Student-t confidence interval of a mean over n independent runs (NaN for n < 2)."""
    if n < 2 or not math.isfinite(mean):
        return math.nan, math.nan
    from scipy.stats import t

    half = float(t.ppf(0.5 + level / 2, n - 1)) * sd / math.sqrt(n)
    return mean - half, mean + half


def format_value(mean: float, sd: float, n: int) -> str:
    """'mean ± sd [95 % confidence interval of the mean]', 3 significant digits for the mean and
    the others at the mean's last digit; just the mean for one run."""
    if not math.isfinite(mean):
        return "n/a"
    digits = max(0, 2 - math.floor(math.log10(abs(mean)))) if mean != 0 else 3
    if n < 2:
        return f"{mean:.{digits}f}"
    low, high = mean_interval(mean, sd, n)
    return f"{mean:.{digits}f} ± {sd:.{digits}f} [{low:.{digits}f}, {high:.{digits}f}]"


def table_title(name: str, seeds: int) -> str:
    return f"{name} ({seeds} seeds, mean ± sd [95 % CI of the mean])" if seeds > 1 else f"{name} (1 seed)"


def summary_table(name: str, summary: list[dict[str, object]], seeds: int):
    """A rich table: one line per (dim, condition), one column per metric (mean ± sd over seeds and the
    95 % confidence interval of the mean),
    and what the reference simulator reports."""
    from rich.table import Table

    experiment = EXPERIMENTS[name]
    if experiment.field_values:
        return metric_rows_table(name, summary, seeds)
    metrics = list(dict.fromkeys(str(s["metric"]) for s in summary))
    title = table_title(name, seeds)
    table = Table(title=title, title_justify="left")
    for column in ("dim", "condition", *metrics, "reference reports"):
        table.add_column(column)
    cells: dict[tuple[int, str], dict[str, str]] = {}
    for s in summary:
        key = (int(s["dim"]), str(s["condition"]))
        cells.setdefault(key, {})[str(s["metric"])] = format_value(float(s["mean"]), float(s["sd"]), int(s["n"]))
    for (dim, condition), values in cells.items():
        reported = experiment.reported.get((dim, condition), "")
        table.add_row(f"{dim}D", condition, *(values.get(m, "") for m in metrics), reported)
    return table


def metric_rows_table(name: str, summary: list[dict[str, object]], seeds: int):
    """A rich table with one row per metric, one column per (dim, condition) (mean ± sd over seeds
    [95 % confidence interval of the mean]) and the field studies' value of the metric."""
    from rich.table import Table

    experiment = EXPERIMENTS[name]
    conditions = list(dict.fromkeys((int(s["dim"]), str(s["condition"])) for s in summary))
    metrics = list(dict.fromkeys(str(s["metric"]) for s in summary))
    title = table_title(name, seeds)
    table = Table(title=title, title_justify="left")
    table.add_column("metric")
    for dim, condition in conditions:
        table.add_column(f"{dim}D {condition}")
    table.add_column("field")
    cells = {
        (int(s["dim"]), str(s["condition"]), str(s["metric"])): format_value(
            float(s["mean"]), float(s["sd"]), int(s["n"])
        )
        for s in summary
    }
    for metric in metrics:
        row = [cells.get((dim, condition, metric), "") for dim, condition in conditions]
        table.add_row(metric, *row, experiment.field_values.get(metric, ""))
    return table

"""The turn waves family: how a turn started by a few edge birds travels through the flock, timed
against twin runs (turn-waves; its arrival fits also serve turn-propagation's wave conditions),
beside the linearised inertial spin model's speed (Attanasi et al. 2014; docs/models.md)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from flocksim.config import apply_overrides, to_dict
from flocksim.experiments.common import (
    Condition,
    Experiment,
    RunSpec,
    heading_angle,
    make_sim,
    seconds,
    steps_of,
    twin,
)
from flocksim.metrics import polarization
from flocksim.metrics.neighbors import nearest_neighbor_distances
from flocksim.metrics.starlings import mean_heading
from flocksim.params import FRAME
from flocksim.scenarios import load_preset
from flocksim.simulation import Simulation
from flocksim.space import displacement_array

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


FRONT_FRACTIONS = (0.005, 0.01, 0.02)
"""A bird is reached when its heading is this fraction of its run's own turn (turning.angle_deg) from
its unturned twin's: 0.45, 0.9 and 1.8 degrees for a 90-degree turn."""
CONTROL_SCALE = 0.1
"""The matched control turns the same initiators by this fraction of the turn, over the same time."""
AGREE_S = 0.1
"""The front and its matched control agree when their median arrival differs by at most this [s] and
their speeds by at most FRONT_SPEED_AGREE (ratio)."""
FRONT_SPEED_AGREE = 1.25
FIELD_SCALE = 16.0
"""Units of ``starlings-3d-waves`` per metre: its birds then fly at about 9.75 m/s with nearest
neighbours about 1.09 m apart (turn-waves), as starlings do (about 10 m/s and 1 m)."""
LENGTH_KEYS = (
    "agents.max_speed",
    "agents.min_speed",
    "agents.max_force",
    "agents.radius",
    "rules.separation.radius",
    "rules.alignment.radius",
    "rules.cohesion.radius",
)
"""The parameters of ``starlings-3d-waves`` in units, units/s or units/s^2 (and world.bounds.size)."""


def field_units(preset: str, scale: float = FIELD_SCALE) -> tuple[str, ...]:
    """Overrides that put ``preset`` in metres and seconds: every length-carrying parameter divided by
    ``scale`` (units per metre). With a power of two the run is the same run, bit for bit, at 1/scale
    the size (tests/test_waves.py checks it)."""
    data = to_dict(load_preset(preset))

    def value(key: str) -> Any:
        node: Any = data
        for part in key.split("."):
            node = node[part]
        return node

    sizes = [float(x) / scale for x in value("world.bounds.size")]
    return (*(f"{key}={float(value(key)) / scale!r}" for key in LENGTH_KEYS), f"world.bounds.size={sizes!r}")


def rotated(v: np.ndarray, axis: np.ndarray, angle: float) -> np.ndarray:
    """Rows of v (N, dim) rotated by ``angle`` [rad] about the unit 3-vector ``axis`` (Rodrigues);
    2D rows turn in their plane (axis along z)."""
    dim = v.shape[1]
    v3 = np.zeros((len(v), 3))
    v3[:, :dim] = v
    c, s_ = math.cos(angle), math.sin(angle)
    out = v3 * c + np.cross(axis, v3) * s_ + np.outer(v3 @ axis, axis) * (1.0 - c)
    return out[:, :dim]


def arrival_times(divergence: np.ndarray, levels: np.ndarray, dt: float) -> np.ndarray:
    """First arrival [s] of each of (T, N) per-step divergences at each level (L,): (L, N), the end of
    step t being (t + 1) dt; inf where a bird never reaches the level."""
    hit = divergence[None, :, :] >= levels[:, None, None]
    first = hit.argmax(axis=1)
    return np.where(hit.any(axis=1), (first + 1) * dt, np.inf)


def front_agreement(front: np.ndarray, control: np.ndarray, dt: float) -> tuple[float, float]:
    """(lag [steps of dt]: median over the birds reached in both of control minus front arrival, a
    multiple of half a step; mismatch: share of the birds reached in either whose arrivals differ by
    more than AGREE_S [s], a bird reached in only one counting as differing)."""
    both = np.isfinite(front) & np.isfinite(control)
    either = np.isfinite(front) | np.isfinite(control)
    # arrivals are whole steps: the lag in steps is exact in halves, so means over seeds are exact too
    lag = round(2.0 * float(np.median(control[both] - front[both])) / dt) / 2.0 if both.any() else math.nan
    with np.errstate(invalid="ignore"):  # inf - inf: reached in neither, left out below
        differs = ~both | (np.abs(control - front) > AGREE_S)
    return lag, float(differs[either].sum()) / max(int(either.sum()), 1)


def front_fit(r: np.ndarray, t: np.ndarray) -> dict[str, float]:
    """t = a + r / speed (least squares; R^2 ``r2``) and t = a + b r^exponent; NaN below 20 birds."""
    out = dict.fromkeys(("speed", "r2", "exponent"), math.nan)
    if len(r) < 20:
        return out
    slope, intercept = np.polyfit(r, t, 1)
    residual = t - (intercept + slope * r)
    out["speed"] = 1.0 / float(slope) if slope > 0 else math.nan
    out["r2"] = 1.0 - float(residual @ residual) / max(float(((t - t.mean()) ** 2).sum()), 1e-300)
    out["exponent"] = fit_power(r, t)[0]
    return out


def switched(sim: Simulation, overrides: tuple[str, ...]) -> Simulation:
    """A simulation in exactly the state of ``sim`` whose parameters from now on carry ``overrides``."""
    if not overrides:
        return sim
    params = apply_overrides(sim.params, list(overrides))
    other = Simulation(params, seed=sim.seed)
    checkpoint = sim.checkpoint()
    checkpoint["params"] = to_dict(params)
    other.restore(checkpoint)
    return other


def measure_wave_front(spec: RunSpec, after: tuple[str, ...] = ()) -> dict[str, float]:
    """Three runs from one flock after a 10 s warm-up (``after``: overrides switched on then, in all
    three): the base; a twin whose edge initiators turn (turning.angle_deg over angle / turn_rate
    seconds, as in ``measure_wave``); and the matched control, whose same initiators turn
    CONTROL_SCALE of that over the same time, about the same axis. A bird's arrival in a turned run
    is the first time its heading is a fraction f (FRONT_FRACTIONS) of that run's own turn from the
    base's. A wave is linear in the turn, so both runs' birds arrive together; chaos (finite
    heading jumps when a neighbourhood changes, whatever tipped it) is not, and weighs 1 /
    CONTROL_SCALE times more in the control. Per f: arrivals against the distance r from the edge
    bird, t = a + r / speed (R^2 ``r2``) and t = a + b r^exponent, for the front and the control
    (``control_speed``, ``control_exponent``), beside the linearised model's speed; ``lag_frames``:
    the median control-minus-front arrival in steps (frames); ``mismatch``: the share of birds whose arrivals differ by
    more than AGREE_S; ``agree``: 1 when |lag| <= AGREE_S and the speeds are within a factor
    FRONT_SPEED_AGREE; ``reached``: the share of birds beyond the initiators the front reached in 3 s;
    ``polarization``, ``bird_speed`` and ``nnd``: the unturned twin's polarization, mean speed and median
    nearest-neighbour distance at the end."""
    sim = make_sim(spec, 3000)
    sim.step(steps_of(sim, seconds(spec, 10.0, 1.0)))
    sim = switched(sim, after)
    turned = twin(sim)
    control = twin(sim)
    wave = next(c for c in turned.components if c.name == "turning")
    wave.start_wave(turned)
    small = next(c for c in control.components if c.name == "turning")
    small.rate *= CONTROL_SCALE  # the same duration, CONTROL_SCALE of the angle
    small.start_wave(control)
    s = sim.state
    alive = np.flatnonzero(s.alive)
    offset = displacement_array(wave.origin[None, : s.dim], s.position[alive], sim.model.space)
    r = np.sqrt(np.sum(offset * offset, axis=1))
    theory = linear_wave_speed(sim, offset / np.maximum(r, 1e-300)[:, None])
    others = ~np.isin(alive, wave.initiators)
    beyond = others & (r > r[~others].max(initial=0.0))
    steps = steps_of(sim, seconds(spec, 3.0, 1.0))
    moved = np.zeros((steps, len(alive)))
    moved_control = np.zeros((steps, len(alive)))
    for t in range(steps):
        for run in (sim, turned, control):
            run.step()
        moved[t] = angles_between(s.velocity[alive], turned.state.velocity[alive])
        moved_control[t] = angles_between(s.velocity[alive], control.state.velocity[alive])
    turn = math.radians(sim.params.turning.angle_deg)
    levels = np.asarray(FRONT_FRACTIONS) * turn
    front = arrival_times(moved, levels, sim.dt)
    matched = arrival_times(moved_control, levels * CONTROL_SCALE, sim.dt)
    speeds = np.linalg.norm(s.velocity[alive], axis=1)
    out: dict[str, float] = {"polarization": polarization(s.velocity[alive]), "bird_speed": float(speeds.mean())}
    out["nnd"] = float(np.median(nearest_neighbor_distances(s.position[alive], sim.model.space)))
    for k, fraction in enumerate(FRONT_FRACTIONS):
        tag = f"{100 * fraction:g}pct"
        used = beyond & np.isfinite(front[k])
        fit = front_fit(r[used], front[k][used])
        fit["theory_speed"] = float(np.median(theory[used])) if used.sum() >= 20 else math.nan
        fit["speed_ratio"] = fit["speed"] / fit["theory_speed"]
        control_used = beyond & np.isfinite(matched[k])
        control_fit = front_fit(r[control_used], matched[k][control_used])
        lag, mismatch = front_agreement(front[k][beyond], matched[k][beyond], sim.dt)
        ratio = control_fit["speed"] / fit["speed"]
        agree = abs(lag) * sim.dt <= AGREE_S and 1.0 / FRONT_SPEED_AGREE <= ratio <= FRONT_SPEED_AGREE
        out[f"reached_{tag}"] = float(used.sum()) / max(int(others.sum()), 1)
        out |= {f"{name}_{tag}": value for name, value in fit.items()}
        out[f"control_speed_{tag}"] = control_fit["speed"]
        out[f"control_exponent_{tag}"] = control_fit["exponent"]
        out[f"lag_frames_{tag}"] = lag
        out[f"mismatch_{tag}"] = mismatch
        out[f"agree_{tag}"] = float(agree)
    return out


WAVE_PRESET = "starlings-3d-waves"
WAVE = ("turning.mean_interval=1e9",)  # no turn but the one the experiment starts


FIELD = field_units(WAVE_PRESET)
"""``starlings-3d-waves`` in metres and seconds (FIELD_SCALE units per metre)."""


def _wave_conditions(measure: Callable[[RunSpec], dict[str, float]], prefix: str = "") -> tuple[Condition, ...]:
    """The waves preset in metres and seconds (:data:`FIELD`: the same runs as in units, 1/FIELD_SCALE
    the size), underdamped, and overdamped (eta = chi) as the model's control."""
    field = (*WAVE, *FIELD)
    return (
        Condition(3, f"{prefix}underdamped", field, WAVE_PRESET, measure),
        Condition(3, f"{prefix}overdamped (eta = chi)", (*field, "rules.alignment.eta=0.25"), WAVE_PRESET, measure),
    )


def _front_conditions() -> tuple[Condition, ...]:
    """turn-waves: the waves preset in field units, underdamped and overdamped, a turn below the chaos
    floor (the matched control's check fails), and the runs that separate the causes of a sub-linear
    arrival: the ramp of the turn, the initiator group, the damping."""
    field = (*WAVE, *FIELD)
    return (
        Condition(3, "underdamped", field, WAVE_PRESET, measure_wave_front),
        Condition(3, "overdamped (eta = chi)", (*field, "rules.alignment.eta=0.25"), WAVE_PRESET, measure_wave_front),
        Condition(
            3,
            "turn 0.09 degrees (below the chaos floor)",
            (*field, "turning.angle_deg=0.09", "turning.turn_rate_deg=0.09"),
            WAVE_PRESET,
            measure_wave_front,
        ),
        Condition(
            3, "no ramp: the turn in one frame", (*field, "turning.turn_rate_deg=5400"), WAVE_PRESET, measure_wave_front
        ),
        Condition(3, "one initiator", (*field, "turning.initiators=1"), WAVE_PRESET, measure_wave_front),
        Condition(3, "undamped after the warm-up (eta = 0)", field, WAVE_PRESET, measure_undamped),
        Condition(
            3,
            "no ramp, undamped after the warm-up",
            (*field, "turning.turn_rate_deg=5400"),
            WAVE_PRESET,
            measure_undamped,
        ),
        Condition(
            3,
            "no ramp, one initiator, undamped after the warm-up",
            (*field, "turning.turn_rate_deg=5400", "turning.initiators=1"),
            WAVE_PRESET,
            measure_undamped,
        ),
    )


def measure_undamped(spec: RunSpec) -> dict[str, float]:
    """:func:`measure_wave_front` with the damping eta switched off after the warm-up."""
    return measure_wave_front(spec, after=("rules.alignment.eta=0.0",))


EXPERIMENTS: tuple[Experiment, ...] = (
    Experiment(
        "turn-waves",
        "starlings-3d-waves in metres and seconds (16 units per metre: 3000 birds about 1 m apart at about "
        "10 m/s, open sky, underdamped inertial spin), 10 s warm-up, then three twins: unturned, its 10 edge "
        "birds turned 90 degrees over 1 s, and the matched control: the same birds turned 9 degrees over 1 s. "
        "A bird is reached when its heading is 0.5, 1 or 2 % of its run's own turn from the unturned twin's "
        "(a wave scales with the turn, chaos does not). Per fraction, arrivals in 3 s fitted against the "
        "distance from the edge bird: t = a + r / speed (R^2, r2) and t = a + b r^exponent, for the front and "
        "the control, beside the linearised model's speed; lag_frames: median control-minus-front arrival in frames; "
        "mismatch: share of birds whose arrivals differ by more than 0.1 s; agree: 1 when the lag is at most 0.1 s "
        "and the speeds are within a factor 1.25. Conditions: overdamped (eta = chi); a 0.09-degree turn, "
        "below the chaos floor; and the causes of a sub-linear arrival: no ramp (the turn in one frame), "
        "one initiator, no damping after the warm-up, and combinations. bird_speed, nnd: the unturned twin's mean "
        "speed and median nearest-neighbour distance at the end.",
        _front_conditions(),
        measure_wave_front,
        field_values={
            f"speed_{100 * f:g}pct": "20-40 m/s, about 2-4 x the birds' speed (Attanasi et al. 2014)"
            for f in FRONT_FRACTIONS
        }
        | {f"exponent_{100 * f:g}pct": "1: linear in time (Attanasi et al. 2014)" for f in FRONT_FRACTIONS}
        | {"bird_speed": "about 10 m/s (Attanasi et al. 2014)"},
    ),
)

"""The turn waves family: how a turn started by a few edge birds travels through the flock, timed
against twin runs (turn-waves; its arrival fits also serve turn-propagation's wave conditions),
beside the linearised inertial spin model's speed (Attanasi et al. 2014; docs/models.md)."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

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
from flocksim.metrics.starlings import mean_heading
from flocksim.params import FRAME
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


WAVE_PRESET = "starlings-3d-waves"
WAVE = ("turning.mean_interval=1e9",)  # no turn but the one the experiment starts


def _wave_conditions(measure: Callable[[RunSpec], dict[str, float]], prefix: str = "") -> tuple[Condition, ...]:
    """The waves preset underdamped, and overdamped (eta = chi) as the model's control."""
    return (
        Condition(3, f"{prefix}underdamped", WAVE, WAVE_PRESET, measure),
        Condition(3, f"{prefix}overdamped (eta = chi)", (*WAVE, "rules.alignment.eta=0.25"), WAVE_PRESET, measure),
    )


EXPERIMENTS: tuple[Experiment, ...] = (
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
)

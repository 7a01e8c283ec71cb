"""Turn propagation in the inertial spin model (Attanasi et al. 2014; Cavagna et al. 2015).

A chain of M birds, spacing a, positions effectively frozen (max_speed 1e-3 units/s),
k = 2 topological neighbours, inertial-spin alignment only (separation, cohesion and
walls off). Bird 0 is held turned by phi0 = 0.3 rad; every other bird's arrival time is
the first step its heading has turned by phi0 / 2. Linearised, the model (per frame of
1/60 s; the torque is the mean over 2 neighbours) is

    chi phi'' + eta phi' = (J / 2) (phi_{i-1} + phi_{i+1} - 2 phi_i),   J = 0.06 x weight,

a damped wave equation: underdamped (eta^2 << chi J) a turn travels linearly at
c = a sqrt(J / (2 chi)) per frame; overdamped it diffuses with D = J a^2 / (2 eta) per
frame, the half-turn point reaching x at t = x^2 / (4 D erfcinv(1/2)^2).
Measured: the exponent of arrival time against distance (1 linear, 2 diffusive), the
speed and the diffusion coefficient.
"""

from __future__ import annotations

import math

import numpy as np

from flocksim.validate.checks import CheckResult, Measurement, relative, within
from flocksim.validate.runs import simulation

SPACING = 10.0
PHI0 = 0.3
COUPLING = 0.06
ERFCINV_HALF = 0.4769362762044699  # erfc(x) = 1/2
REGIMES = {"underdamped": 0.002, "overdamped": 0.9}  # eta, with chi = 1 (frame units)


def arrival_times(m: int, eta: float, steps: int, seed: int) -> np.ndarray:
    """Frames until each bird of the chain has turned by PHI0 / 2 (NaN: not within ``steps``)."""
    sim = simulation(
        {
            "model": "reynolds",
            "world": {"dim": 2, "dt": 1.0 / 60.0, "bounds": {"kind": "open", "size": [m * SPACING, 100.0]}},
            "agents": {"n": m, "max_speed": 1e-3, "min_speed": 0.0, "max_force": 1.0},
            "neighbors": {"mode": "topological", "k": 2, "method": "brute"},
            "rules": {
                "separation": {"weight": 0.0},
                "cohesion": {"weight": 0.0},
                "bounds": {"weight": 0.0},
                "alignment": {"mode": "inertial-spin", "weight": 1.0, "chi": 1.0, "eta": eta, "coupling": COUPLING},
            },
        },
        seed,
    )
    s = sim.state
    s.position[:] = np.stack([np.arange(m) * SPACING, np.zeros(m)], axis=1)
    s.velocity[:] = [0.0, 1e-3]
    s.spin[:] = 0.0
    held = 1e-3 * np.array([-math.sin(PHI0), math.cos(PHI0)])  # turned counterclockwise from +y
    arrival = np.full(m, np.nan)
    for t in range(steps):
        s.velocity[0] = held
        s.spin[0] = 0.0
        sim.step()
        angle = np.arctan2(-s.velocity[:, 0], s.velocity[:, 1])
        arrival[np.isnan(arrival) & (angle > PHI0 / 2)] = t + 1
    return arrival


def check_spin_propagation(quick: bool, seed: int = 0) -> CheckResult:
    """Inertial-spin turn propagation: linear when underdamped, diffusive when overdamped."""
    m = 60 if quick else 100
    steps = {"underdamped": 450 if quick else 800, "overdamped": 3000 if quick else 12000}
    x = np.arange(m) * SPACING
    results = {}
    out: list[Measurement] = []
    for regime, eta in REGIMES.items():
        t = arrival_times(m, eta, steps[regime], seed)
        sel = ~np.isnan(t) & (np.arange(m) >= 3) & (np.arange(m) <= m - 10)
        results[regime] = (x[sel], t[sel])
        exponent = np.polyfit(np.log(x[sel]), np.log(t[sel]), 1)[0] if sel.sum() >= 3 else math.nan
        if regime == "underdamped":
            out.append(
                within(
                    "underdamped: exponent of arrival time vs distance",
                    exponent,
                    1.0,
                    0.1,
                    "1, linear (Attanasi et al. 2014)",
                )
            )
            speed = np.polyfit(t[sel], x[sel], 1)[0] if sel.sum() >= 3 else math.nan
            out.append(
                relative(
                    "underdamped: speed [units/frame]",
                    speed,
                    SPACING * math.sqrt(COUPLING / 2.0),
                    0.1,
                    "a sqrt(J / 2 chi), linearised model",
                )
            )
        else:
            out.append(
                within(
                    "overdamped: exponent of arrival time vs distance",
                    exponent,
                    2.0,
                    0.2,
                    "2, diffusive (Attanasi et al. 2014)",
                )
            )
            slope = np.polyfit(t[sel], x[sel] ** 2, 1)[0] if sel.sum() >= 3 else math.nan
            diffusion = slope / (4.0 * ERFCINV_HALF**2)
            out.append(
                relative(
                    "overdamped: diffusion coefficient [units^2/frame]",
                    diffusion,
                    COUPLING * SPACING**2 / (2.0 * eta),
                    0.15,
                    "J a^2 / (2 eta), linearised model",
                )
            )

    def plot(ax) -> None:
        for regime, (xs, ts) in results.items():
            ax.loglog(xs, ts, "o", ms=3, label=f"{regime} (eta = {REGIMES[regime]:g})")
        ref = np.array([SPACING * 3, SPACING * m])
        ax.loglog(ref, ref / (SPACING * math.sqrt(COUPLING / 2)), "k-", lw=0.8, label="t = x / c (linear)")
        d = COUPLING * SPACING**2 / (2 * REGIMES["overdamped"])
        ax.loglog(ref, ref**2 / (4 * d * ERFCINV_HALF**2), "k--", lw=0.8, label="t = x^2 / (4 D erfcinv(1/2)^2)")
        ax.set_xlabel("distance from the turned bird [units]")
        ax.set_ylabel("arrival of the half turn [frames]")
        ax.set_title("Inertial spin model: turn propagation along a chain")
        ax.legend(fontsize=8)

    return CheckResult(
        "spin-propagation",
        "Inertial-spin turn propagation: linear when underdamped, diffusive when overdamped",
        "Attanasi et al. 2014, Nature Physics 10:691; Cavagna et al. 2015, J. Stat. Phys. 158:601",
        out,
        notes=f"Chain of {m} birds {SPACING:g} units apart, k = 2, chi = 1, J = {COUPLING}, bird 0 held turned by "
        f"{PHI0} rad; underdamped eta = {REGIMES['underdamped']} for {steps['underdamped']} frames, overdamped "
        f"eta = {REGIMES['overdamped']} for {steps['overdamped']} frames; fits over birds 3 to {m - 10} that arrived.",
        plot=plot,
    )

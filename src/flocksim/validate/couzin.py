"""The Couzin model's group states as the zone of orientation grows, and their hysteresis
(Couzin et al. 2002, Figs 2 and 3).

One run per seed: N = 100 in 3D open space, delta_r_a = 14, the paper's other defaults;
it starts as a swarm (delta_r_o = 0), then delta_r_o steps up through the ramp and back
down, the state carried over from each value to the next. At each value the group's
polarization P and angular momentum M are averaged over the second half of a hold.
States (this project's operational thresholds; Tunstrom et al. 2013 for the first three):
swarm P < 0.35 and M < 0.35; torus (milling) M > 0.65 and P < 0.35; dynamic parallel
0.65 < P < 0.95; highly parallel P >= 0.95.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from flocksim.validate.checks import CheckResult, Measurement
from flocksim.validate.runs import averaged_order, change_params, simulation

DELTA_R_A = 14.0
HIGHLY_PARALLEL = 0.95


def ramp_values(quick: bool) -> tuple[float, ...]:
    if quick:
        return (0.0, 1.5, 4.0, 12.0)
    return (0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 12.0, 14.0)


def settings(quick: bool) -> tuple[tuple[int, ...], int]:
    """(seeds, hold steps per ramp value)."""
    return ((0,), 600) if quick else ((0, 1, 2), 1500)


@lru_cache(maxsize=4)
def ramps(quick: bool) -> dict[str, np.ndarray]:
    """P and M, shape (seeds, ramp values), for the up ramp and the down ramp."""
    values = ramp_values(quick)
    seeds, hold = settings(quick)
    out = {key: np.zeros((len(seeds), len(values))) for key in ("p_up", "m_up", "p_down", "m_down")}
    for s, seed in enumerate(seeds):
        sim = simulation(
            {
                "model": "couzin",
                "world": {"dim": 3, "dt": 0.1, "bounds": {"kind": "open", "size": [8.0, 8.0, 8.0]}},
                "agents": {"n": 100},
                "couzin": {"delta_r_o": 0.0, "delta_r_a": DELTA_R_A},
            },
            seed,
        )
        sim.step(1000)
        for direction, order in (("up", values), ("down", values[::-1])):
            for v in order:
                change_params(sim, "couzin", delta_r_o=v)
                sim.step(hold // 2)
                p, m = averaged_order(sim, hold - hold // 2, 5)
                k = values.index(v)
                out[f"p_{direction}"][s, k] = p
                out[f"m_{direction}"][s, k] = m
    return out


def _notes(quick: bool) -> str:
    seeds, hold = settings(quick)
    return (
        f"N = 100, 3D open space, delta_r_a = {DELTA_R_A:g}, r_r = 1, alpha = 270 deg, theta = 40 deg/s, "
        f"tau = 0.1 s, s = 3, sigma = 0.05; 1000 steps at delta_r_o = 0, then {hold} steps per value "
        f"(P, M averaged over the second half, every 5th step); ramp {', '.join(f'{v:g}' for v in ramp_values(quick))} "
        f"up, then down; seeds {', '.join(map(str, seeds))} (means shown)."
    )


def _plot(quick: bool, data: dict[str, np.ndarray]):
    values = ramp_values(quick)

    def plot(ax) -> None:
        ax.plot(values, data["p_up"].mean(0), "o-", color="C0", label="polarization, delta_r_o up")
        ax.plot(values, data["p_down"].mean(0), "s--", color="C0", mfc="none", label="polarization, down")
        ax.plot(values, data["m_up"].mean(0), "o-", color="C3", label="angular momentum, up")
        ax.plot(values, data["m_down"].mean(0), "s--", color="C3", mfc="none", label="angular momentum, down")
        ax.set_xlabel("delta_r_o (width of the zone of orientation)")
        ax.set_ylabel("P, M")
        ax.set_ylim(0, 1.02)
        ax.set_title(f"Couzin model, N = 100, delta_r_a = {DELTA_R_A:g}")
        ax.legend(fontsize=8)

    return plot


def check_couzin_phases(quick: bool, seed: int = 0) -> CheckResult:
    """Couzin's four group states (swarm, torus, dynamic and highly parallel) as delta_r_o grows."""
    data = ramps(quick)
    values = ramp_values(quick)
    p = data["p_up"].mean(0)
    m = data["m_up"].mean(0)

    def at(v: float) -> int:
        return values.index(v)

    src = "Couzin et al. 2002, Fig. 2"
    out = [
        Measurement("swarm, delta_r_o = 0: P", p[at(0.0)], -np.inf, 0.35, f"< 0.35 ({src})"),
        Measurement("swarm, delta_r_o = 0: M", m[at(0.0)], -np.inf, 0.35, f"< 0.35 ({src})"),
        Measurement("torus, delta_r_o = 1.5: M", m[at(1.5)], 0.65, np.inf, f"> 0.65 ({src})"),
        Measurement("torus, delta_r_o = 1.5: P", p[at(1.5)], -np.inf, 0.35, f"< 0.35 ({src})"),
        Measurement(
            "dynamic parallel, delta_r_o = 4: P",
            p[at(4.0)],
            0.65,
            HIGHLY_PARALLEL,
            f"(0.65, {HIGHLY_PARALLEL}) ({src})",
        ),
        Measurement(
            "highly parallel, delta_r_o = 12: P", p[at(12.0)], HIGHLY_PARALLEL, 1.0, f">= {HIGHLY_PARALLEL} ({src})"
        ),
    ]
    table = [
        {
            "delta_r_o": v,
            "P up": round(float(p[k]), 3),
            "M up": round(float(m[k]), 3),
            "P down": round(float(data["p_down"].mean(0)[k]), 3),
            "M down": round(float(data["m_down"].mean(0)[k]), 3),
        }
        for k, v in enumerate(values)
    ]
    return CheckResult(
        "couzin-phases",
        "Couzin's four group states as delta_r_o grows (delta_r_a = 14)",
        "Couzin, Krause, James, Ruxton, Franks 2002, J. theor. Biol. 218:1, Fig. 2",
        out,
        notes=_notes(quick) + " States read on the up ramp, which starts from a swarm.",
        plot=_plot(quick, data),
        table=table,
    )


def check_couzin_hysteresis(quick: bool, seed: int = 0) -> CheckResult:
    """Couzin hysteresis: a torus on the way up, a parallel group on the way down (collective memory)."""
    data = ramps(quick)
    values = ramp_values(quick)
    k = values.index(1.5)
    p_up, m_up = data["p_up"].mean(0)[k], data["m_up"].mean(0)[k]
    p_down = data["p_down"].mean(0)[k]
    src = "Couzin et al. 2002, Fig. 3: collective memory"
    out = [
        Measurement("up ramp (from a swarm), delta_r_o = 1.5: M", m_up, 0.65, np.inf, f"> 0.65, a torus ({src})"),
        Measurement(
            "down ramp (from parallel), delta_r_o = 1.5: P", p_down, 0.65, np.inf, f"> 0.65, still parallel ({src})"
        ),
        Measurement("P(down) - P(up) at delta_r_o = 1.5", p_down - p_up, 0.3, np.inf, f">= 0.3 ({src})"),
    ]
    return CheckResult(
        "couzin-hysteresis",
        "Couzin hysteresis: torus on the way up, parallel on the way down",
        "Couzin, Krause, James, Ruxton, Franks 2002, J. theor. Biol. 218:1, Fig. 3",
        out,
        notes=_notes(quick) + " Same runs as couzin-phases.",
        plot=None,
    )

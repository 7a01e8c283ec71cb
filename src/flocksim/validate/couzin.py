"""The Couzin model's group states as the zone of orientation grows, their hysteresis
(Couzin et al. 2002, Figs 2 and 3), and P and M point by point against the independent
NumPy reference (:mod:`.reference.couzin_numpy`).

One run per seed: N = 100 in 3D open space, delta_r_a = 14, the paper's other defaults;
it starts as a swarm (delta_r_o = 0), then delta_r_o steps up through the ramp and back
down, the state carried over from each value to the next. At each value the group's
polarization P and angular momentum M are averaged over the second half of a hold
(:data:`.protocols.COUZIN`). States (this project's operational thresholds; Tunstrom et
al. 2013 for the first three): swarm P < 0.35 and M < 0.35; torus (milling) M > 0.65 and
P < 0.35; dynamic parallel 0.65 < P < 0.95; highly parallel P >= 0.95.
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache
from pathlib import Path

import numpy as np

from flocksim.config import apply_overrides, validate
from flocksim.validate.checks import CheckResult, Measurement
from flocksim.validate.compare import against_reference, tolerance
from flocksim.validate.curves import couzin_reference
from flocksim.validate.protocols import COUZIN, CouzinProtocol, protocol_name
from flocksim.validate.runs import averaged_order, change_params, simulation

DELTA_R_A = 14.0
HIGHLY_PARALLEL = 0.95
KEYS = ("p_up", "m_up", "p_down", "m_down")


def protocol(quick: bool, seeds: int | None = None) -> CouzinProtocol:
    """The quick or full protocol; ``seeds`` replaces its number of flocksim seeds."""
    p = COUZIN[protocol_name(quick)]
    return p if seeds is None else replace(p, seeds=seeds)


def couzin_params(n: int, delta_r_o: float, overrides: tuple[str, ...] = ()) -> dict:
    """The paper's setting (3D open space, delta_r_a = 14) at ``delta_r_o``, with dotted ``overrides``."""
    params = validate(
        {
            "model": "couzin",
            "world": {"dim": 3, "dt": 0.1, "bounds": {"kind": "open", "size": [8.0, 8.0, 8.0]}},
            "agents": {"n": n},
            "couzin": {"delta_r_o": delta_r_o, "delta_r_a": DELTA_R_A},
        }
    )
    return apply_overrides(params, list(overrides)).model_dump(mode="json")


def ramp(p: CouzinProtocol, seed: int, overrides: tuple[str, ...] = ()) -> dict[str, list[float]]:
    """P and M per ramp value of one flocksim run (keys :data:`KEYS`, in the order of ``p.values``)."""
    sim = simulation(couzin_params(p.n, p.values[0], overrides), seed)
    sim.step(p.warmup)
    out = {key: [0.0] * len(p.values) for key in KEYS}
    for direction, order in (("up", p.values), ("down", p.values[::-1])):
        for v in order:
            change_params(sim, "couzin", delta_r_o=v)
            sim.step(p.hold // 2)
            pol, mil = averaged_order(sim, p.hold - p.hold // 2, p.every)
            k = p.values.index(v)
            out[f"p_{direction}"][k] = pol
            out[f"m_{direction}"][k] = mil
    return out


@lru_cache(maxsize=4)
def ramps(quick: bool, overrides: tuple[str, ...] = (), seeds: int | None = None) -> dict[str, np.ndarray]:
    """P and M, shape (seeds, ramp values), for the up ramp and the down ramp (keys :data:`KEYS`)."""
    p = protocol(quick, seeds)
    runs = [ramp(p, seed, overrides) for seed in range(p.seeds)]
    return {key: np.array([r[key] for r in runs]) for key in KEYS}


def _notes(quick: bool, overrides: tuple[str, ...], seeds: int | None) -> str:
    p = protocol(quick, seeds)
    changed = f" Model changed for this run: {', '.join(overrides)}." if overrides else ""
    return (
        f"N = {p.n}, 3D open space, delta_r_a = {DELTA_R_A:g}, r_r = 1, alpha = 270 deg, theta = 40 deg/s, "
        f"tau = 0.1 s, s = 3, sigma = 0.05; {p.warmup} steps at delta_r_o = 0, then {p.hold} steps per value "
        f"(P, M averaged over the second half, every {p.every}th step); ramp {', '.join(f'{v:g}' for v in p.values)} "
        f"up, then down; flocksim seeds 0-{p.seeds - 1} (means shown).{changed}"
    )


def _plot(quick: bool, data: dict[str, np.ndarray]):
    values = protocol(quick).values

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


def check_couzin_phases(quick: bool, overrides: tuple[str, ...] = (), seeds: int | None = None) -> CheckResult:
    """Couzin's four group states (swarm, torus, dynamic and highly parallel) as delta_r_o grows."""
    data = ramps(quick, overrides, seeds)
    values = protocol(quick).values
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
        notes=_notes(quick, overrides, seeds) + " States read on the up ramp, which starts from a swarm.",
        plot=_plot(quick, data),
        table=table,
    )


def check_couzin_hysteresis(quick: bool, overrides: tuple[str, ...] = (), seeds: int | None = None) -> CheckResult:
    """Couzin hysteresis: a torus on the way up, a parallel group on the way down (collective memory)."""
    data = ramps(quick, overrides, seeds)
    values = protocol(quick).values
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
        notes=_notes(quick, overrides, seeds) + " Same runs as couzin-phases.",
        plot=None,
    )


def check_couzin_reference(
    quick: bool, overrides: tuple[str, ...] = (), reference: Path | None = None, seeds: int | None = None
) -> CheckResult:
    """Couzin P and M per delta_r_o (up and down the ramp), point by point against the NumPy reference."""
    p = protocol(quick, seeds)
    ref = couzin_reference(p, reference)
    data = ramps(quick, overrides, seeds)
    what = "NumPy reference"
    names = {"p_up": "P up", "m_up": "M up", "p_down": "P down", "m_down": "M down"}
    points = len(KEYS) * len(p.values)
    out = [
        against_reference(f"{names[key]}, delta_r_o = {v:g}", data[key][:, k], ref[key][:, k], points, what)
        for key in KEYS
        for k, v in enumerate(p.values)
    ]

    def plot(ax) -> None:
        for key, color in (("p_up", "C0"), ("m_up", "C3"), ("p_down", "C2"), ("m_down", "C1")):
            bars = [tolerance(ref[key][:, k], p.seeds, points) for k in range(len(p.values))]
            ax.errorbar(p.values, ref[key].mean(0), yerr=bars, fmt="s", mfc="none", color=color, capsize=3)
            ax.plot(p.values, data[key].mean(0), "o-", color=color, label=f"{names[key]} (flocksim)")
        ax.set_xlabel("delta_r_o (width of the zone of orientation)")
        ax.set_ylabel("P, M")
        ax.set_ylim(0, 1.02)
        ax.set_title("Couzin model: flocksim (lines) and NumPy reference (squares, allowed band)")
        ax.legend(fontsize=8)

    table = [
        {"delta_r_o": v, **{f"{names[key]} ref": round(float(ref[key][:, k].mean()), 3) for key in KEYS}}
        for k, v in enumerate(p.values)
    ]
    return CheckResult(
        "couzin-reference",
        "Couzin P and M per delta_r_o, point by point against the NumPy reference",
        "Couzin, Krause, James, Ruxton, Franks 2002, J. theor. Biol. 218:1 (section 2)",
        out,
        notes=_notes(quick, overrides, seeds)
        + f" Reference: src/flocksim/validate/reference/couzin_numpy.py, seeds 0-{p.reference_seeds - 1} "
        "(docs/results/validation/couzin.csv); reference means in the table.",
        plot=plot,
        table=table,
    )

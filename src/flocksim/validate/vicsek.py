"""The Vicsek order parameter against noise at density rho = 4 (Vicsek et al. 1995, Fig. 2a)."""

from __future__ import annotations

import itertools
import math

import numpy as np

from flocksim.validate.checks import CheckResult, Measurement, relative, within
from flocksim.validate.identities import expected_random_polarization
from flocksim.validate.runs import averaged_order, simulation

RHO = 4.0


def order_curve(n: int, etas: list[float], relax: int, measure: int, seed: int) -> list[float]:
    """Time-averaged v_a at each eta for n particles at density 4 in 2D (each eta from a random start)."""
    side = math.sqrt(n / RHO)
    out = []
    for eta in etas:
        sim = simulation(
            {
                "model": "vicsek",
                "world": {"dim": 2, "dt": 1.0, "bounds": {"kind": "periodic", "size": [side, side]}},
                "agents": {"n": n},
                "neighbors": {"method": "brute" if n <= 1000 else "grid"},
                "vicsek": {"speed": 0.03, "radius": 1.0, "eta": eta},
            },
            seed,
        )
        sim.step(relax)
        out.append(averaged_order(sim, measure, 10)[0])
    return out


def check_vicsek(quick: bool, seed: int = 0) -> CheckResult:
    """Vicsek order parameter against noise at rho = 4: its limits, its fall and where it crosses 1/2."""
    sizes = [100] if quick else [100, 400]
    etas = [0.1, 1.0, 2.0, 3.0, 4.0, 5.0, 2 * math.pi] if quick else [0.1, *np.arange(0.5, 6.01, 0.5), 2 * math.pi]
    etas = [float(e) for e in etas]
    relax, measure = (1000, 1000) if quick else (3000, 3000)
    curves = {n: order_curve(n, etas, relax, measure, seed) for n in sizes}
    out: list[Measurement] = []
    for n, va in curves.items():
        out.append(within(f"N = {n}: v_a at eta = 0.1", va[0], 1.0, 0.01, "1 as eta -> 0"))
        out.append(
            relative(
                f"N = {n}: v_a at eta = 2 pi",
                va[-1],
                expected_random_polarization(n, 2),
                0.35,
                "random headings sqrt(pi / 4N)",
            )
        )
        rises = max(b - a for a, b in itertools.pairwise(va))
        out.append(
            Measurement(
                f"N = {n}: largest rise of v_a between neighbouring eta",
                rises,
                -math.inf,
                0.05,
                "<= 0.05 (v_a falls with eta; 0.05 allows sampling noise)",
            )
        )
        half = _crossing(etas, va, 0.5)
        out.append(
            Measurement(
                f"N = {n}: eta where v_a crosses 1/2",
                half,
                2.5,
                4.5,
                "in [2.5, 4.5] (Vicsek 1995 Fig. 2a, read from the figure)",
            )
        )

    def plot(ax) -> None:
        for n, va in curves.items():
            ax.plot(etas, va, "o-", label=f"N = {n}")
            ax.axhline(expected_random_polarization(n, 2), ls=":", lw=0.8, color="grey")
        ax.set_xlabel("noise eta [rad]")
        ax.set_ylabel("order parameter v_a")
        ax.set_ylim(0, 1.02)
        ax.set_title("Vicsek model, rho = 4, v0 = 0.03, r = 1 (dotted: random headings)")
        ax.legend()

    table = [
        {"N": n, **{f"eta={e:.2f}": round(v, 3) for e, v in zip(etas, va, strict=True)}} for n, va in curves.items()
    ]
    return CheckResult(
        "vicsek",
        "Vicsek order parameter against noise (rho = 4)",
        "Vicsek, Czirok, Ben-Jacob, Cohen, Shochet 1995, Phys. Rev. Lett. 75:1226, Fig. 2a",
        out,
        notes=f"2D periodic box of side sqrt(N/4); each eta from a random start, {relax} steps to relax, then v_a "
        f"averaged over {measure} steps (every 10th); seed {seed}; one run per point.",
        plot=plot,
        table=table,
    )


def _crossing(x: list[float], y: list[float], level: float) -> float:
    """First x where y falls through ``level`` (linear interpolation); NaN if it never does."""
    for k in range(1, len(y)):
        if y[k - 1] >= level > y[k]:
            return x[k - 1] + (x[k] - x[k - 1]) * (y[k - 1] - level) / (y[k - 1] - y[k])
    return math.nan

"""The Vicsek order parameter against noise at density rho = 4 (Vicsek et al. 1995, Fig. 2a),
point by point against the independent NumPy reference (:mod:`.reference.vicsek_numpy`).

flocksim runs the same protocol as the stored reference curve (:data:`.protocols.VICSEK`)
with its own seeds; at every eta the two seed means must agree within
:func:`.compare.tolerance`. The curve must also cross v_a = 1/2 inside the window read
from the paper's figure.
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import numpy as np

from flocksim.config import apply_overrides, validate
from flocksim.validate.checks import CheckResult, Measurement
from flocksim.validate.compare import against_reference, tolerance
from flocksim.validate.curves import vicsek_reference
from flocksim.validate.protocols import VICSEK, VicsekProtocol, protocol_name
from flocksim.validate.runs import averaged_order, simulation

RHO = 4.0


def vicsek_params(n: int, eta: float, overrides: tuple[str, ...] = ()) -> dict:
    """The paper's setting at density 4 in 2D (v0 = 0.03, r = 1, dt = 1), with dotted ``overrides``."""
    side = math.sqrt(n / RHO)
    params = validate(
        {
            "model": "vicsek",
            "world": {"dim": 2, "dt": 1.0, "bounds": {"kind": "periodic", "size": [side, side]}},
            "agents": {"n": n},
            "neighbors": {"method": "grid"},  # bitwise the same as brute force, faster
            "vicsek": {"speed": 0.03, "radius": 1.0, "eta": eta},
        }
    )
    return apply_overrides(params, list(overrides)).model_dump(mode="json")


def order_values(protocol: VicsekProtocol, eta: float, overrides: tuple[str, ...] = ()) -> list[float]:
    """flocksim's time-averaged v_a at ``eta``, one per seed 0 .. protocol.seeds - 1."""
    p = protocol
    out = []
    for seed in range(p.seeds):
        sim = simulation(vicsek_params(p.n, eta, overrides), seed)
        sim.step(p.relax)
        out.append(averaged_order(sim, p.measure, p.every)[0])
    return out


def check_vicsek(
    quick: bool, overrides: tuple[str, ...] = (), reference: Path | None = None, seeds: int | None = None
) -> CheckResult:
    """Vicsek v_a against eta at rho = 4, point by point against the independent NumPy reference."""
    p = VICSEK[protocol_name(quick)]
    if seeds is not None:
        p = replace(p, seeds=seeds)
    ref = vicsek_reference(p, reference)
    ours = {eta: order_values(p, eta, overrides) for eta in p.etas}
    what = "NumPy reference, Vicsek et al. 1995 update"
    k = len(p.etas)
    out = [against_reference(f"v_a at eta = {eta:g}", ours[eta], ref[eta], k, what) for eta in p.etas]
    means = [float(np.mean(ours[eta])) for eta in p.etas]
    if len(p.etas) > 3:
        out.append(
            Measurement(
                "eta where v_a crosses 1/2",
                _crossing(list(p.etas), means, 0.5),
                2.5,
                4.5,
                "in [2.5, 4.5] (Vicsek 1995 Fig. 2a, read from the figure)",
            )
        )

    def plot(ax) -> None:
        etas = list(p.etas)
        ref_mean = [float(np.mean(ref[e])) for e in etas]
        bars = [tolerance(ref[e], p.seeds, k) for e in etas]
        ax.errorbar(etas, ref_mean, yerr=bars, fmt="s", mfc="none", color="grey", capsize=3, label="reference")
        ax.plot(etas, means, "o-", color="C0", label=f"flocksim ({p.seeds} seeds)")
        ax.set_xlabel("noise eta [rad]")
        ax.set_ylabel("order parameter v_a")
        ax.set_ylim(0, 1.02)
        ax.set_title(f"Vicsek model, N = {p.n}, rho = 4 (bars: allowed band)")
        ax.legend()

    table = [
        {
            "eta": eta,
            "flocksim": round(float(np.mean(ours[eta])), 4),
            "reference": round(float(np.mean(ref[eta])), 4),
            "difference": round(float(np.mean(ours[eta]) - np.mean(ref[eta])), 4),
        }
        for eta in p.etas
    ]
    changed = f" Model changed for this run: {', '.join(overrides)}." if overrides else ""
    return CheckResult(
        "vicsek",
        "Vicsek order parameter against noise (rho = 4), point by point",
        "Vicsek, Czirok, Ben-Jacob, Cohen, Shochet 1995, Phys. Rev. Lett. 75:1226 (Eqs 1-2, Fig. 2a)",
        out,
        notes=f"N = {p.n} in a 2D periodic box of side sqrt(N/4), v0 = 0.03, r = 1; each eta from a random start, "
        f"{p.relax} steps to relax, then v_a averaged over {p.measure} steps (every {p.every}th); flocksim seeds "
        f"0-{p.seeds - 1}, NumPy reference (src/flocksim/validate/reference/vicsek_numpy.py) seeds "
        f"0-{p.reference_seeds - 1} (docs/results/validation/vicsek.csv).{changed}",
        plot=plot,
        table=table,
    )


def _crossing(x: list[float], y: list[float], level: float) -> float:
    """First x where y falls through ``level`` (linear interpolation); NaN if it never does."""
    for k in range(1, len(y)):
        if y[k - 1] >= level > y[k]:
            return x[k - 1] + (x[k] - x[k - 1]) * (y[k - 1] - level) / (y[k - 1] - y[k])
    return math.nan

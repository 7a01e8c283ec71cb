"""The shape of a large starling flock from its start (docs/starlings.md, "The start of a large flock").

Each run: PRESET with BIRDS birds and the given ``--set`` style overrides, sampled every 0.5 s for
SECONDS of simulated time. ``layer`` in place of the overrides starts as the murmuration experiments
start starlings-3d (``agents.init.kind = "aligned"`` in the preset's slab widened by sqrt(birds /
preset's birds), :func:`flocksim.experiments.hallmarks.start_at_preset_density`). Per run it prints
one JSON line: at 0, 5, 10 and 20 s (those within SECONDS) the principal axes (thickness, width,
length [m] and their ratios, :func:`flocksim.metrics.hallmarks.flock_proportions`), the median
nearest-neighbour distance [m] and the polarization; over all samples the lowest polarization, the
largest angle the mean heading turned away from its start [deg] and the farthest the flock's centre
came from the roost's centre over the roost's radius; the wall and CPU time of the run. One thread
(numba), so that runs are comparable and the machine's other core stays free. ``--summary FILE...``
prints the table of docs/starlings.md from such lines: per preset, birds and overrides, the mean
over the runs of each quantity at each time, and the lowest polarization (its range over the runs
in brackets when there are several).

    python benchmarks/start_shapes.py starlings-3d-large 100000 0 20
    python benchmarks/start_shapes.py starlings-3d 10000 0 20 layer
    python benchmarks/start_shapes.py starlings-3d 10000 0 20 agents.init.kind=flock
    python benchmarks/start_shapes.py --summary runs.jsonl
"""

from __future__ import annotations

import json
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

TIMES = (0.0, 5.0, 10.0, 20.0)
"""Simulated seconds at which the shape and spacing are reported."""
EVERY = 0.5
"""Seconds between the samples of polarization, heading and roost distance."""


def run(preset: str, birds: int, seed: int, seconds: float, overrides: list[str]) -> dict[str, object]:
    """One run (module docstring) on the threads numba has (``main`` sets one)."""
    from flocksim import Simulation, apply_overrides, load_preset
    from flocksim.experiments.common import Condition, RunSpec
    from flocksim.experiments.hallmarks import start_at_preset_density
    from flocksim.metrics.hallmarks import flock_proportions
    from flocksim.metrics.neighbors import nearest_neighbor_distances
    from flocksim.metrics.order import polarization
    from flocksim.metrics.starlings import mean_heading

    extra = list(overrides)
    if "layer" in extra:
        extra.remove("layer")
        spec = RunSpec("start-shapes", Condition(3, "layer", (), preset), seed, False)
        extra = [*start_at_preset_density(spec, birds), "agents.init.kind=aligned", *extra]
    params = apply_overrides(load_preset(preset), [f"agents.n={birds}", *extra])
    wall, cpu = time.perf_counter(), time.process_time()
    sim = Simulation(params, seed=seed, threads=1)
    roost = params.rules.roost
    centre = np.asarray(roost.center, dtype=np.float64)
    start = None
    out: dict[str, object] = {"preset": preset, "birds": birds, "seed": seed, "overrides": overrides}
    out["seconds"] = seconds
    lowest, turned, roost_far = math.inf, 0.0, 0.0
    chunk = max(1, round(EVERY / sim.dt))
    for k in range(round(seconds / EVERY) + 1):
        if k:
            sim.step(chunk)
        t = k * EVERY
        p, v = sim.state.position, sim.state.velocity
        heading = mean_heading(v)
        start = heading if start is None else start
        lowest = min(lowest, polarization(v))
        turned = max(turned, math.degrees(math.acos(float(np.clip(heading @ start, -1.0, 1.0)))))
        away = np.linalg.norm((p.mean(axis=0) - centre)[[0, 2]]) / roost.radius
        roost_far = max(roost_far, float(away))
        if any(abs(t - s) < 1e-9 for s in TIMES):
            shape = flock_proportions(p, v)
            out[f"t{t:g}"] = {
                **{name: round(shape[name], 4) for name in ("thickness", "width", "length")},
                "thickness_to_length": round(shape["thickness_to_length"], 4),
                "width_to_length": round(shape["width_to_length"], 4),
                "nnd_median": round(float(np.median(nearest_neighbor_distances(p))), 4),
                "polarization": round(polarization(v), 5),
            }
    out.update(
        polarization_lowest=round(lowest, 5),
        heading_turned_deg=round(turned, 1),
        roost_distance_max=round(roost_far, 3),
        wall_s=round(time.perf_counter() - wall, 1),
        cpu_s=round(time.process_time() - cpu, 1),
    )
    return out


def _cell(values: list[float], digits: int) -> str:
    mean, low, high = (f"{v:.{digits}f}" for v in (sum(values) / len(values), min(values), max(values)))
    return mean if low == high else f"{mean} ({low}-{high})"


def summary(paths: list[str]) -> str:
    """The markdown table of the runs in ``paths`` (module docstring): a row per preset, birds and
    overrides, each quantity's means over the runs at 0 / 5 / 10 / 20 s, then the lowest polarization
    (the runs' range in brackets) and the heading's largest turn."""
    groups: dict[tuple[str, int, str], list[dict]] = {}
    for path in paths:
        for line in Path(path).read_text(encoding="utf-8").splitlines():
            if line.strip():
                run = json.loads(line)
                key = (run["preset"], run["birds"], " ".join(f"`{o}`" for o in run["overrides"]) or "(the preset)")
                groups.setdefault(key, []).append(run)
    names = " | ".join(f"{label}, {' / '.join(f'{t:g}' for t in TIMES)} s" for label, _, _ in QUANTITIES)
    rows = [
        f"| preset, birds | overrides | runs | {names} | lowest polarization | heading turned |",
        "|---|---|---|" + "---|" * len(QUANTITIES) + "---|---|",
    ]
    for (preset, birds, overrides), runs in groups.items():
        cells = []
        for _, name, digits in QUANTITIES:
            means = []
            for t in TIMES:
                at = [r[f"t{t:g}"][name] for r in runs if f"t{t:g}" in r]
                means.append(f"{sum(at) / len(at):.{digits}f}" if at else "-")
            cells.append(" / ".join(means))
        lowest = _cell([r["polarization_lowest"] for r in runs], 3)
        seconds = max(r["seconds"] for r in runs)
        turned = _cell([r["heading_turned_deg"] for r in runs], 0)
        rows.append(
            f"| {preset}, {birds} | {overrides} | {len(runs)} | {' | '.join(cells)} | {lowest} over {seconds:g} s "
            f"| {turned} deg |"
        )
    return "\n".join(rows)


QUANTITIES = (
    ("thickness/length", "thickness_to_length", 3),
    ("width/length", "width_to_length", 2),
    ("median NND [m]", "nnd_median", 2),
    ("polarization", "polarization", 3),
)
"""The table's columns: heading, the run's key, decimals."""


def main(argv: list[str]) -> None:
    if argv[:1] == ["--summary"]:
        print(summary(argv[1:]))
        return
    if len(argv) < 4:
        raise SystemExit(__doc__)
    os.environ.setdefault("NUMBA_NUM_THREADS", "1")
    preset, birds, seeds, seconds, *overrides = argv
    for seed in (int(s) for s in seeds.split(",")):
        print(json.dumps(run(preset, int(birds), seed, float(seconds), overrides)), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])

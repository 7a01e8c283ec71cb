"""Collective turns on the banked starling preset, one road at a time (docs/starlings.md, "Collective
turns on the banked preset, measured").

Each run: ``starlings-3d`` with BIRDS birds and the given ``--set`` style overrides (e.g.
``turning.enabled=true turning.propagation=imposed``), started as murmuration-dynamics starts it (the
preset's layer widened to the preset's density), 10 s of flight, then a sample every 0.5 s for
SECONDS. Per run it prints one JSON line: collective turns per minute (the flock's heading turning 45
degrees within 3 s, ``flocksim.metrics.turns``; ``turns_per_minute_horizontal`` as seen from the
ground), the fraction of time in turns and the heading's mean rotation [deg/s]; polarization (mean,
lowest sample, lowest sample inside a turn); speed fluctuation var/mean^2; nearest-neighbour distance
[m]; thickness and width over length; flocks, splits per minute (``flocksim.metrics.splits``, all
birds tracked); the spontaneous turns started while sampling (``waves``), the mean fraction of the
birds each turned and their median signal speed [m/s] (``SpontaneousTurning.spread``); the wall time of
the run. One thread (numba), so that runs are comparable and the
machine's other core stays free. ``--summary FILE...`` prints the mean over the seeds of such lines,
grouped by birds and overrides.

    python benchmarks/turn_roads.py 500 0,1,2,3,4,5,6,7 60 turning.enabled=true turning.propagation=imposed
    python benchmarks/turn_roads.py --summary runs.jsonl
"""

from __future__ import annotations

import json
import math
import sys
import time

import numpy as np


def run(birds: int, seed: int, overrides: tuple[str, ...], seconds: float) -> dict[str, object]:
    """One run (module docstring) on the threads numba has (``main`` sets one)."""
    from flocksim.experiments.common import Condition, RunSpec, alive_pv, make_sim, sample, steps_of
    from flocksim.experiments.hallmarks import FLOCK_LINK_NND, start_at_preset_density
    from flocksim.metrics import polarization
    from flocksim.metrics.hallmarks import flock_proportions
    from flocksim.metrics.neighbors import nearest_neighbor_distances
    from flocksim.metrics.splits import flock_events
    from flocksim.metrics.starlings import speed_fluctuation
    from flocksim.metrics.turns import collective_turns, flock_headings

    spec = RunSpec("turn-roads", Condition(3, "road", overrides, "starlings-3d", None), seed, False)
    sim = make_sim(spec, birds, start_at_preset_density(spec, birds))
    began = time.perf_counter()
    sim.step(steps_of(sim, 10.0))
    sampled_from = sim.time
    times, headings, tracks, alive = [], [], [], []
    series: dict[str, list[float]] = {}
    for _ in sample(sim, seconds, 0.5):
        p, v = alive_pv(sim)
        times.append(sim.time)
        headings.append(flock_headings(v[None])[0])
        tracks.append(sim.state.position.copy())
        alive.append(sim.state.alive.copy())
        shape = flock_proportions(p, v)
        row = {
            "polarization": polarization(v),
            "speed_fluctuation": speed_fluctuation(v),
            "nnd_m": float(nearest_neighbor_distances(p).mean()),
            "thickness_to_length": shape["thickness_to_length"],
            "width_to_length": shape["width_to_length"],
        }
        for name, value in row.items():
            series.setdefault(name, []).append(float(value))
    t = np.array(times)
    turns = collective_turns(t, np.array(headings))
    seen = collective_turns(t, np.array(headings), horizontal=True)
    events = flock_events(t, np.array(tracks), np.array(alive), link_nnd=FLOCK_LINK_NND)
    order = np.array(series["polarization"])
    out: dict[str, object] = {"birds": birds, "seed": seed, "overrides": " ".join(overrides)}
    out.update(
        turns_per_minute=turns.turns_per_minute,
        turns_per_minute_horizontal=seen.turns_per_minute,
        turning_fraction=turns.turning_fraction,
        turned_deg_per_s=turns.turned_deg_per_s,
        polarization_min=float(order.min()),
        polarization_min_in_turns=float(order[turns.turning].min()) if turns.turning.any() else math.nan,
        flocks_mean=events.flocks_mean,
        splits_per_minute=events.splits_per_minute,
    )
    out.update({name: float(np.mean(values)) for name, values in series.items()})
    out.update(wave_spreads(sim, sampled_from))
    out["wall_s"] = round(time.perf_counter() - began, 1)
    return out


def wave_spreads(sim, since: float) -> dict[str, float]:
    """The spontaneous turns started at or after ``since`` [s] and ended: how many, the mean fraction
    of the birds each turned, and the median signal speed [m/s] over those with one (NaN without)."""
    turning = next((c for c in sim.components if c.name == "turning"), None)
    if turning is None:
        return {"waves": 0, "wave_reach_fraction": math.nan, "signal_speed_m_s": math.nan}
    rows = turning.spread
    if turning.waves and sim.time >= turning.wave_end:  # the last wave, if it has ended
        rows = np.vstack([rows, [turning.began, *turning.wave_spread()]])
    rows = rows[rows[:, 0] >= since]
    speeds = rows[np.isfinite(rows[:, 2]), 2]
    return {
        "waves": len(rows),
        "wave_reach_fraction": float(rows[:, 1].mean()) if len(rows) else math.nan,
        "signal_speed_m_s": float(np.median(speeds)) if len(speeds) else math.nan,
    }


def _mean(values: list[float]) -> float:
    """The mean of the values that are not NaN (NaN if none is)."""
    known = [v for v in values if not math.isnan(v)]
    return sum(known) / len(known) if known else math.nan


def summary(paths: list[str]) -> None:
    groups: dict[tuple[object, object], list[dict[str, object]]] = {}
    for path in paths:
        with open(path, encoding="utf-8") as lines:
            for line in lines:
                row = json.loads(line)
                groups.setdefault((row["birds"], row["overrides"]), []).append(row)
    for (birds, overrides), rows in groups.items():
        means = {
            key: _mean([float(r[key]) for r in rows])
            for key in rows[0]
            if key not in ("birds", "seed", "overrides", "wall_s")
        }
        below = sum(float(r["polarization_min"]) < 0.9 for r in rows)
        lowest = min(float(r["polarization_min"]) for r in rows)
        text = ", ".join(f"{key} {value:.4g}" for key, value in means.items())
        print(
            f"{birds} birds [{overrides or 'preset'}], {len(rows)} seeds: {text}; lowest sample {lowest:.3g}, "
            f"runs below 0.9: {below}"
        )


def main(argv: list[str]) -> int:
    if argv[:1] == ["--summary"] and len(argv) > 1:
        summary(argv[1:])
        return 0
    if argv[:1] in (["-h"], ["--help"]) or len(argv) < 3:
        print(__doc__)
        return 0 if argv[:1] in (["-h"], ["--help"]) else 2
    import numba

    numba.set_num_threads(1)
    birds, seeds, seconds = int(argv[0]), [int(s) for s in argv[1].split(",")], float(argv[2])
    for seed in seeds:
        row = run(birds, seed, tuple(argv[3:]), seconds)
        print(json.dumps({k: round(v, 5) if isinstance(v, float) else v for k, v in row.items()}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

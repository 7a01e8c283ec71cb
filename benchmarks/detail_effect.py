"""The level of detail (params ``detail``): its effect on results, its step-time saving, its compile cost.

``effect`` (the default): per preset (boids-2d, starlings-3d at their own sizes), per condition (detail
off; on with far_every 2, 4, 8) and seed (0..7), one run of ``--steps`` steps; every ``--every``
steps: polarization (|mean unit heading|), mean nearest-neighbour distance [units], number of groups
(single linkage at 3 x the median nearest-neighbour distance, as ``flocksim experiment``
counts flocks) and the fraction of alive agents that refreshed their steering in that step. Rows go
to ``--csv`` (docs/results/detail/effect.csv; tests/test_results.py re-makes one run of it bit for
bit); the summary (stdout, JSON) holds, per preset and condition, each metric averaged over three
windows of the run (:func:`windows`), its mean over seeds, the spread between seeds (standard
deviation) and the mean paired difference from detail off with the same seed. The control is the seed-to-seed spread
of detail-off runs: a flock is chaotic, so the difference that detail makes means something only
against that spread.

``--speed``: step time, detail off against on (far_every 4), on a larger flock (``--speed-preset``,
``--speed-n``), same state, alternated in rounds of ``--speed-steps`` steps after a warm-up;
process CPU time (the machine is shared) and wall time per step, the median per condition, and the
fraction of agents refreshed per step.

``--compile``: cold compile: a fresh numba cache (NUMBA_CACHE_DIR set for the child process only, in
a new temporary folder), ``Simulation(preset)`` and 3 steps, wall time of the child process, then
the same again with the cache warm; compile_s = cold - warm. Trees: ``--base`` (sources before the
level of detail, e.g. ``git archive`` of the branch point) with detail off, and this checkout with
detail off and on.

Usage:
    python benchmarks/detail_effect.py --csv docs/results/detail/effect.csv > effect.json
    python benchmarks/detail_effect.py --only starlings-3d,on-4,0          # one run's rows, as CSV
    python benchmarks/detail_effect.py --speed --speed-preset starlings-3d-large --speed-n 20000
    python benchmarks/detail_effect.py --compile --base /tmp/base --presets starlings-3d,boids-2d
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from flocksim import Simulation, apply_overrides, load_preset  # noqa: E402
from flocksim.neighbors import find_neighbors  # noqa: E402
from flocksim.space import displacement_array  # noqa: E402

PREVIOUS_START = {"starlings-3d-large": ("agents.init.kind=aligned", "rules.roost.radius=300.0")}
"""--speed runs a preset from the start docs/benchmarks.md's figures were measured from: starlings-3d-large
now starts as a formed flock (agents.init.kind = "flock"), and a level of detail near the origin
refreshes a different share of it."""

PRESETS = {
    # preset: the detail overrides of every "on" condition (focus: the default, the world's centre)
    "boids-2d": ["detail.near=100"],
    "starlings-3d": ["detail.near=10"],
}
BASE = {
    # preset: overrides of every condition; the table was made with starlings-3d's previous flight
    "boids-2d": [],
    "starlings-3d": ["rules.flight.speed_wander=0", "rules.flight.steer_wander=0", "rules.flight.speed_band=0"],
}
CONDITIONS = {
    "off": [],
    "on-2": ["detail.far_every=2"],
    "on-4": ["detail.far_every=4"],
    "on-8": ["detail.far_every=8"],
}
SEEDS = tuple(range(8))
GROUP_LINK_NND = 3.0
"""Groups: birds joined by chains of neighbours closer than this many median nearest-neighbour distances."""
COLUMNS = ("preset", "condition", "seed", "step", "polarization", "nnd", "groups", "refreshed")
METRICS = ("polarization", "nnd", "groups", "refreshed")


def params_for(preset: str, condition: str, seed: int) -> Any:
    overrides = [f"seed={seed}", *BASE[preset]]
    if condition != "off":
        overrides += ["detail.enabled=true", *PRESETS[preset], *CONDITIONS[condition]]
    return apply_overrides(load_preset(preset), overrides)


def metrics(sim: Simulation) -> dict[str, float]:
    """Polarization, mean nearest-neighbour distance and groups of the alive agents, without BLAS
    (plain sums: the same digits on every CPU)."""
    s = sim.state
    p = s.position[s.alive]
    v = s.velocity[s.alive]
    speed = np.sqrt((v * v).sum(axis=1))
    heading = np.divide(v, speed[:, None], out=np.zeros_like(v), where=speed[:, None] > 0)
    total = heading.sum(axis=0)
    polarization = float(np.sqrt((total * total).sum()) / len(v))
    nearest = find_neighbors(p, np.ones(len(p), dtype=bool), sim.model.space, "topological", k=1)
    gap = displacement_array(p, p[nearest.index], sim.model.space)
    nnd = np.sqrt((gap * gap).sum(axis=1))
    return {
        "polarization": polarization,
        "nnd": float(nnd.mean()),
        "groups": groups(p, GROUP_LINK_NND * float(np.median(nnd))),
    }


def groups(p: np.ndarray, link: float) -> int:
    """Connected groups of points joined by chains of pairs closer than ``link`` (union-find over
    the metric neighbour pairs of flocksim's own search)."""
    from flocksim.space import make_space

    n = len(p)
    nbrs = find_neighbors(p, np.ones(n, dtype=bool), make_space("open", [1.0] * p.shape[1]), "metric", radius=link)
    parent = np.arange(n)

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    rows = np.repeat(np.arange(n), nbrs.counts)
    for i, j in zip(rows.tolist(), nbrs.index.tolist(), strict=True):
        a, b = root(i), root(j)
        if a != b:
            parent[max(a, b)] = min(a, b)
    return len({root(i) for i in range(n)})


def run_rows(preset: str, condition: str, seed: int, steps: int, every: int) -> list[dict[str, Any]]:
    """One run's rows: the metrics every ``every`` steps (step 0 included)."""
    sim = Simulation(params_for(preset, condition, seed))
    lod = next((c for c in sim.components if c.name == "detail"), None)
    rows = []
    for step in range(0, steps + 1, every):
        if step:
            sim.step(every)
        refreshed = 1.0 if lod is None or step == 0 else lod.refreshed / sim.state.n_alive
        rows.append({"preset": preset, "condition": condition, "seed": seed, "step": step, **metrics(sim),
                     "refreshed": refreshed})  # fmt: skip
    return rows


def as_csv(rows: list[dict[str, Any]]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    for r in rows:
        writer.writerow({k: repr(v) if isinstance(v, float) else v for k, v in r.items()})
    return out.getvalue()


def windows(steps: int) -> list[tuple[int, int]]:
    """Windows of steps (first excluded, last included) the summary averages over: the first sixth
    of the run, up to its half, the second half."""
    return [(0, steps // 6), (steps // 6, steps // 2), (steps // 2, steps)]


def summarize(rows: list[dict[str, Any]], steps: int) -> list[dict[str, Any]]:
    """Per preset, condition and window (:func:`windows`): each metric's mean over the window, per
    seed; their mean and standard deviation over seeds (the seed-to-seed spread); the mean and
    standard deviation over seeds of the paired difference from detail off with the same seed."""
    table = []
    for lo, hi in windows(steps):
        per_run: dict[tuple[str, str, int], dict[str, float]] = {}
        for key in {(r["preset"], r["condition"], r["seed"]) for r in rows}:
            mine = [r for r in rows if (r["preset"], r["condition"], r["seed"]) == key and lo < r["step"] <= hi]
            per_run[key] = {m: statistics.fmean(float(r[m]) for r in mine) for m in METRICS}
        for preset in PRESETS:
            for condition in CONDITIONS:
                seeds = sorted(s for p, c, s in per_run if (p, c) == (preset, condition))
                row: dict[str, Any] = {"preset": preset, "condition": condition, "steps": [lo, hi], "seeds": len(seeds)}
                for m in METRICS:
                    values = [per_run[(preset, condition, s)][m] for s in seeds]
                    diffs = [per_run[(preset, condition, s)][m] - per_run[(preset, "off", s)][m] for s in seeds]
                    row[m] = {"mean": statistics.fmean(values), "seed_sd": statistics.stdev(values),
                              "diff_from_off": statistics.fmean(diffs), "diff_sd": statistics.stdev(diffs)}  # fmt: skip
                table.append(row)
    return table


def machine() -> dict[str, Any]:
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"cpus": os.cpu_count(), "cpu": model, "load_average": os.getloadavg(), "python": platform.python_version(),
            "date_utc": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())}  # fmt: skip


def effect(args: argparse.Namespace) -> dict[str, Any]:
    rows = []
    for preset in PRESETS:
        for condition in CONDITIONS:
            for seed in SEEDS:
                started = time.perf_counter()
                rows += run_rows(preset, condition, seed, args.steps, args.every)
                print(f"{preset} {condition} seed {seed}: {time.perf_counter() - started:.1f} s", file=sys.stderr)
    if args.csv:
        Path(args.csv).parent.mkdir(parents=True, exist_ok=True)
        Path(args.csv).write_text(as_csv(rows), encoding="utf-8")
    return {"machine": machine(), "steps": args.steps, "every": args.every, "presets": PRESETS,
            "conditions": CONDITIONS, "summary": summarize(rows, args.steps)}  # fmt: skip


def speed(args: argparse.Namespace) -> dict[str, Any]:
    """Detail off and on from the same state, alternated; CPU and wall seconds per step."""
    base = apply_overrides(
        load_preset(args.speed_preset), [f"agents.n={args.speed_n}", *PREVIOUS_START.get(args.speed_preset, ())]
    )
    sims = {
        "off": Simulation(base),
        "on-4": Simulation(
            apply_overrides(base, ["detail.enabled=true", f"detail.near={args.speed_near}", "detail.far_every=4"])
        ),
    }
    for sim in sims.values():
        sim.step(args.speed_warm)  # compile, and let the flock form
    times: dict[str, dict[str, list[float]]] = {k: {"cpu": [], "wall": [], "refreshed": []} for k in sims}
    for _ in range(args.speed_rounds):
        for name, sim in sims.items():
            cpu, wall = time.process_time(), time.perf_counter()
            sim.step(args.speed_steps)
            times[name]["cpu"].append((time.process_time() - cpu) / args.speed_steps)
            times[name]["wall"].append((time.perf_counter() - wall) / args.speed_steps)
            lod = next((c for c in sim.components if c.name == "detail"), None)
            times[name]["refreshed"].append(1.0 if lod is None else lod.refreshed / sim.state.n_alive)
    out = {k: {m: statistics.median(v) for m, v in t.items()} for k, t in times.items()}
    return {"machine": machine(), "preset": args.speed_preset, "n": args.speed_n, "near": args.speed_near,
            "rounds": args.speed_rounds, "steps_per_round": args.speed_steps, "median_per_step": out,
            "cpu_ratio_on_to_off": out["on-4"]["cpu"] / out["off"]["cpu"], "raw": times}  # fmt: skip


DRIVER = """
import sys, time
sys.path.insert(0, sys.argv[1])
from flocksim import Simulation, apply_overrides, load_preset
sim = Simulation(apply_overrides(load_preset(sys.argv[2]), sys.argv[3:]))
sim.step(3)
"""


def compile_cost(args: argparse.Namespace) -> dict[str, Any]:
    trees = [("base, detail off", Path(args.base) / "src", [])] if args.base else []
    trees += [("this, detail off", ROOT / "src", []), ("this, detail on", ROOT / "src", ["detail.enabled=true"])]
    results = []
    for preset in args.presets.split(","):
        for label, src, overrides in trees:
            extra = [*overrides, *PRESETS.get(preset, [])] if overrides else []
            with tempfile.TemporaryDirectory(prefix="flocksim-cold-") as cache:
                env = {**os.environ, "NUMBA_CACHE_DIR": cache, "PYTHONPATH": str(src)}
                walls = []
                for _ in range(2):  # cold, then warm
                    started = time.perf_counter()
                    done = subprocess.run([sys.executable, "-c", DRIVER, str(src), preset, *extra], env=env,
                                          capture_output=True, text=True, check=False)  # fmt: skip
                    walls.append(time.perf_counter() - started)
                    if done.returncode:
                        raise SystemExit(done.stderr[-2000:])
            results.append({"preset": preset, "tree": label, "cold_s": walls[0], "warm_s": walls[1],
                            "compile_s": walls[0] - walls[1]})  # fmt: skip
            print(json.dumps(results[-1]), file=sys.stderr)
    return {"machine": machine(), "results": results}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=3600, help="steps per effect run")
    parser.add_argument("--every", type=int, default=60, help="steps between samples")
    parser.add_argument("--csv", default="", help="write the effect rows here")
    parser.add_argument("--only", default="", help="PRESET,CONDITION,SEED: print that run's rows as CSV")
    parser.add_argument("--speed", action="store_true")
    parser.add_argument("--speed-preset", default="starlings-3d-large")
    parser.add_argument("--speed-n", type=int, default=20000)
    parser.add_argument("--speed-near", type=float, default=20.0)
    parser.add_argument("--speed-warm", type=int, default=60)
    parser.add_argument("--speed-steps", type=int, default=20)
    parser.add_argument("--speed-rounds", type=int, default=8)
    parser.add_argument("--compile", action="store_true")
    parser.add_argument("--base", default="", help="sources before the change (a folder holding src/)")
    parser.add_argument("--presets", default="starlings-3d,boids-2d")
    args = parser.parse_args()
    if args.only:
        preset, condition, seed = args.only.split(",")
        sys.stdout.write(as_csv(run_rows(preset, condition, int(seed), args.steps, args.every)))
        return
    result = speed(args) if args.speed else compile_cost(args) if args.compile else effect(args)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()

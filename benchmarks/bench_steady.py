"""Steady-state step time of whole presets, two source trees against each other.

A kernel change that makes compiling faster must not make stepping slower. This benchmark times
the steps of whole presets (every rule, the neighbour search, the integration: what a user's run
spends its time on) for one or more source trees, e.g. a git worktree of the code before a change
and this checkout, and alternates them round by round so that a machine that drifts (a neighbour
process, the clock) drifts on both alike.

Per tree, preset and round, one subprocess (the tree's ``src`` first on PYTHONPATH; numba's cache
is flocksim's own, keyed on each tree's kernel sources, or a folder per tree under
``--cache-dir``; either way only a tree's first round compiles) builds
``Simulation(load_preset(PRESET), threads=T)`` (with ``--set`` overrides), runs ``--warmup``
untimed steps (compiling the kernels where the cache is cold), then times ``--steps`` single steps
with ``time.perf_counter``. A run reports the median and the fastest step in milliseconds; the
summary per preset and tree takes the median of the runs' medians and the fastest step of all
runs, and per preset the ratio of each tree's median to the first tree's (1.05 = 5 % slower).
The first round compiles and is left out of the summary unless ``--keep-first``. Beside wall
time, each step's process CPU time (``time.process_time``, all threads) is recorded: with one
thread it is what the step cost whether or not another process held the core meanwhile. Each run
also records the machine's 1-minute load average as it ends (``load_1min``), to quote beside it.

Usage:
    git worktree add ../flocksim-before <commit>
    python benchmarks/bench_steady.py --tree before=../flocksim-before --tree after=. \\
        --presets boids-2d,starlings-3d --rounds 5 --threads 1 -o steady.json

Prints one JSON object (progress on stderr); exit status 1 when a run failed.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench_compile import machine, source_info

# argv: preset, threads, warmup, steps, then KEY=VALUE overrides; prints the steps' wall and CPU
# milliseconds as JSON: {"ms": [...], "cpu_ms": [...]}.
DRIVER = r"""
import json, sys, time
import flocksim
from flocksim.config import apply_overrides
preset, threads, warmup, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
params = flocksim.load_preset(preset)
if sys.argv[5:]:
    params = apply_overrides(params, sys.argv[5:])
sim = flocksim.Simulation(params, threads=threads)
sim.step(warmup)
ms, cpu_ms = [], []
for _ in range(steps):
    t0, c0 = time.perf_counter(), time.process_time()
    sim.step()
    ms.append((time.perf_counter() - t0) * 1e3)
    cpu_ms.append((time.process_time() - c0) * 1e3)
print(json.dumps({"ms": ms, "cpu_ms": cpu_ms}))
"""


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--tree",
        action="append",
        default=[],
        metavar="LABEL=PATH",
        help="a source tree (a checkout; its src/ is imported); repeatable; default: this checkout as 'this'",
    )
    ap.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="LABEL:KEY=VALUE",
        help="an environment variable for one tree's runs (repeatable), e.g. portable:FLOCKSIM_KERNEL_TARGET=portable "
        "with the same checkout given twice as --tree host=. --tree portable=.",
    )
    ap.add_argument("--presets", default="boids-2d,starlings-3d", help="comma-separated preset names")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override for every preset")
    ap.add_argument("--rounds", type=int, default=5, help="rounds; each runs every tree once per preset")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--warmup", type=int, default=5, help="untimed steps first (the first compiles)")
    ap.add_argument("--steps", type=int, default=100, help="timed steps per run")
    ap.add_argument("--keep-first", action="store_true", help="count the first round too (it compiles)")
    ap.add_argument("--cache-dir", type=Path, default=None, help="numba caches, a folder per tree")
    ap.add_argument("-o", "--output", type=Path, default=None, help="also write the JSON here")
    args = ap.parse_args(argv)
    if args.rounds < 1 or args.steps < 1 or args.warmup < 1 or args.threads < 1:
        ap.error("--rounds, --steps, --warmup and --threads must be at least 1")
    if args.rounds < 2 and not args.keep_first:
        ap.error("--rounds must be at least 2 unless --keep-first (the first round compiles)")
    return args


def parse_trees(specs: list[str]) -> dict[str, Path]:
    trees: dict[str, Path] = {}
    for spec in specs or ["this=."]:
        label, sep, path = spec.partition("=")
        if not sep or not label or not path:
            raise SystemExit(f"--tree: expected LABEL=PATH, got {spec!r}")
        src = Path(path).resolve() / "src"
        if not (src / "flocksim").is_dir():
            raise SystemExit(f"--tree {label}: no src/flocksim under {Path(path).resolve()}")
        if label in trees:
            raise SystemExit(f"--tree: the label {label!r} is given twice")
        trees[label] = src
    return trees


def parse_envs(specs: list[str], trees: dict[str, Path]) -> dict[str, dict[str, str]]:
    """``LABEL:KEY=VALUE`` specs as {label: {key: value}}; every label must name a tree."""
    envs: dict[str, dict[str, str]] = {label: {} for label in trees}
    for spec in specs:
        label, sep, assignment = spec.partition(":")
        key, eq, value = assignment.partition("=")
        if not sep or not eq or not key:
            raise SystemExit(f"--env: expected LABEL:KEY=VALUE, got {spec!r}")
        if label not in envs:
            raise SystemExit(f"--env: {label!r} is not a tree label (the trees: {', '.join(trees)})")
        envs[label][key] = value
    return envs


def run_once(
    src: Path, cache: Path | None, preset: str, args: argparse.Namespace, extra_env: dict[str, str] | None = None
) -> dict[str, Any]:
    env = dict(os.environ)
    env.update(extra_env or {})
    env["PYTHONPATH"] = str(src) + os.pathsep + env.get("PYTHONPATH", "")
    if cache is not None:
        env["NUMBA_CACHE_DIR"] = str(cache)
    env["NUMBA_NUM_THREADS"] = str(args.threads)
    cmd = [sys.executable, "-c", DRIVER, preset, str(args.threads), str(args.warmup), str(args.steps), *args.set]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        tail = proc.stderr.strip().splitlines()[-3:]
        return {"error": f"exit {proc.returncode}: {' | '.join(tail)}"}
    times = json.loads(proc.stdout.strip().splitlines()[-1])
    ms, cpu_ms = times["ms"], times["cpu_ms"]
    return {
        "median_ms": statistics.median(ms),
        "fastest_ms": min(ms),
        "mean_ms": statistics.fmean(ms),
        "median_cpu_ms": statistics.median(cpu_ms),
    }


def summarise(runs: list[dict[str, Any]], trees: list[str], presets: list[str], first_round: int) -> dict[str, Any]:
    summary: dict[str, Any] = {}
    for preset in presets:
        per_tree: dict[str, Any] = {}
        for label in trees:
            mine = [r for r in runs if r["preset"] == preset and r["tree"] == label and r["round"] >= first_round]
            ok = [r for r in mine if "error" not in r]
            if not ok:
                per_tree[label] = {"error": "no successful run"}
                continue
            per_tree[label] = {
                "median_ms": statistics.median(r["median_ms"] for r in ok),
                "fastest_ms": min(r["fastest_ms"] for r in ok),
                "median_cpu_ms": statistics.median(r["median_cpu_ms"] for r in ok),
                "run_medians_ms": [round(r["median_ms"], 3) for r in ok],
                "run_medians_cpu_ms": [round(r["median_cpu_ms"], 3) for r in ok],
                "load_1min": [r["load_1min"] for r in ok if "load_1min" in r],
            }
        base = per_tree.get(trees[0], {})
        for label in trees:
            if "median_ms" in per_tree[label] and "median_ms" in base:
                mine = per_tree[label]
                mine["ratio_to_" + trees[0]] = round(mine["median_ms"] / base["median_ms"], 4)
                mine["cpu_ratio_to_" + trees[0]] = round(mine["median_cpu_ms"] / base["median_cpu_ms"], 4)
        summary[preset] = per_tree
    return summary


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    trees = parse_trees(args.tree)
    envs = parse_envs(args.env, trees)
    presets = [p.strip() for p in args.presets.split(",") if p.strip()]
    runs: list[dict[str, Any]] = []
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    host = machine()
    for rnd in range(args.rounds):
        for preset in presets:
            order = list(trees) if rnd % 2 == 0 else list(reversed(trees))
            for label in order:
                cache = args.cache_dir / label if args.cache_dir else None
                result = run_once(trees[label], cache, preset, args, envs[label])
                load = round(os.getloadavg()[0], 2)
                runs.append({"tree": label, "preset": preset, "round": rnd, "load_1min": load, **result})
                shown = (
                    result.get("error") or f"median {result['median_ms']:.2f} ms, fastest {result['fastest_ms']:.2f} ms"
                )
                print(f"round {rnd + 1}/{args.rounds} {preset} {label}: {shown}", file=sys.stderr, flush=True)
    first_round = 0 if args.keep_first else 1
    report = {
        "benchmark": "steady",
        "started_utc": started,
        "finished_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": {**host, "load_average_at_end": [round(x, 2) for x in os.getloadavg()]},
        "settings": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
        "trees": {label: {**source_info(src.parent), "env": envs[label]} for label, src in trees.items()},
        "summary": summarise(runs, list(trees), presets, first_round),
        "runs": runs,
    }
    text = json.dumps(report, indent=2)
    print(text)
    if args.output:
        args.output.write_text(text + "\n")
    return 1 if any("error" in r for r in runs) else 0


if __name__ == "__main__":
    raise SystemExit(main())

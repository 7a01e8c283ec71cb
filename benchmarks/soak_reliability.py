"""Soak test of flocksim's robustness: hostile parameters, kills mid-run, damaged stores.

The fast versions of these checks run in the test suite (tests/test_hostile_input.py,
tests/test_cli_recording.py, tests/test_store_damage.py); this script runs many more cases and
counts. Nothing is timed.

1. Hostile parameters (``--hostile`` cases): per case a random preset (20 or 300 agents) and
   either 1-8 random fields at the edges of their allowed ranges or every field of one unit at
   one edge (:mod:`flocksim.extremes`), or a number given as text. A case passes when the schema
   refuses it with one ``ConfigError`` line, or the simulation builds and steps twice with no
   exception, no numpy RuntimeWarning and finite positions and velocities.
2. Kills (``--kills`` runs): ``flocksim run boids-2d ... --out`` in a child process, killed with
   SIGKILL at a random moment after its first checkpoint, then continued with ``--resume`` in
   a second child. It survived when the resumed store passes ``flocksim info --check`` and
   every array equals, byte for byte, an uninterrupted run's.
3. Damaged stores (``--damages`` cases): a copy of a recorded store with one random damage: a
   chunk (of a frame array or of a checkpoint) deleted, truncated, one byte flipped or zeroed;
   an array folder deleted; a checkpoint's ``frames``, ``agents`` or ``steps`` attribute
   changed. Detected when ``TrajectoryStore.verify`` (``flocksim info --check``) raises one line.

Usage: python benchmarks/soak_reliability.py [--hostile 2000] [--kills 50] [--damages 500] [--seed 0]
Prints one JSON object; cases that failed are listed in it (``failures``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import warnings
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import zarr

import flocksim
from flocksim.config import ConfigError, apply_overrides, loads_toml
from flocksim.extremes import extreme_overrides, fuzzable_fields, unit_edge_overrides
from flocksim.io import TrajectoryError, TrajectoryStore

PRESETS = ["boids-2d", "starlings-2d", "starlings-3d", "crowd", "minions", "enemies", "reef", "vicsek", "couzin"]
PRESETS += ["abm-flocking-small"]
RUN = ["boids-2d", "--set", "agents.n=60", "--seed", "2", "--every", "5", "--checkpoint-every", "40"]
STEPS = 400
FLOCKSIM = Path(sys.executable).with_name("flocksim")


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# --- 1. hostile parameters ------------------------------------------------------------------------


def hostile_case(rng: random.Random) -> tuple[str, list[str], str | None]:
    """(preset, overrides, failure or None) of one random case."""
    preset = rng.choice(PRESETS)
    base = apply_overrides(flocksim.load_preset(preset), [f"agents.n={rng.choice([20, 300])}"])
    kind = rng.random()
    if kind < 0.1:  # a number as text must be refused naming its key
        field = rng.choice(fuzzable_fields(type(base)))
        section, _, leaf = field.key.rpartition(".")
        line = f'{leaf} = "{rng.choice(field.extremes() or [1])}"'
        toml = f"model = '{base.model}'\n" + (f"[{section}]\n{line}" if section else line)
        try:
            loads_toml(toml)
        except ConfigError as exc:
            ok = str(exc).startswith(field.key) and "\n" not in str(exc)
            return preset, [toml], None if ok else f"message does not name {field.key}: {exc}"
        return preset, [toml], "a number as text was accepted"
    overrides = unit_edge_overrides(base, rng) if kind < 0.3 else extreme_overrides(base, rng, rng.randint(1, 8))
    try:
        params = apply_overrides(base, overrides)
    except ConfigError as exc:
        return preset, overrides, None if "\n" not in str(exc) else "a multi-line ConfigError"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            sim = flocksim.Simulation(params, seed=rng.randrange(2**31))
            sim.step(2)
            sim.metrics()
        alive = sim.state.alive
        if not (np.isfinite(sim.state.position[alive]).all() and np.isfinite(sim.state.velocity[alive]).all()):
            return preset, overrides, "a non-finite position or velocity"
    except Exception as exc:
        return preset, overrides, f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"[:300]
    return preset, overrides, None


def soak_hostile(cases: int, rng: random.Random) -> dict:
    failures = []
    for i in range(cases):
        preset, overrides, failure = hostile_case(rng)
        if failure:
            failures.append({"preset": preset, "overrides": overrides, "failure": failure})
        if i % 200 == 0:
            log(f"hostile: {i}/{cases}, {len(failures)} failures")
    return {"cases": cases, "passed": cases - len(failures), "failures": failures}


# --- 2. kills -------------------------------------------------------------------------------------


def same_arrays(a: Path, b: Path) -> str | None:
    """None when every root array of the two stores is byte for byte equal, else the first that differs."""
    x, y = zarr.open_group(str(a), mode="r"), zarr.open_group(str(b), mode="r")
    names = sorted(n for n, _ in x.arrays())
    if names != sorted(n for n, _ in y.arrays()):
        return "the arrays differ"
    for name in names:
        p, q = np.asarray(x[name][...]), np.asarray(y[name][...])
        if p.shape != q.shape or p.tobytes() != q.tobytes():
            return name
    return None


def flocksim_run(*args: str, **kwargs) -> subprocess.Popen:
    env = dict(os.environ, NUMBA_NUM_THREADS="1")
    command = [str(FLOCKSIM), "run", *args, "-q"]
    return subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kwargs)


def soak_kills(kills: int, rng: random.Random, folder: Path) -> dict:
    reference = folder / "reference.zarr"
    child = flocksim_run(*RUN, "--steps", str(STEPS), "--out", str(reference))
    if child.wait() != 0:
        raise SystemExit(f"reference run failed: {child.stderr.read()}")
    survived, finished_first, failures = 0, 0, []
    for i in range(kills):
        path = folder / f"killed-{i}.zarr"
        child = flocksim_run(*RUN, "--steps", str(STEPS), "--out", str(path))
        while child.poll() is None:  # wait for the first checkpoint, then kill at a random moment
            try:
                if TrajectoryStore.open(path).checkpoints():
                    break
            except TrajectoryError:
                pass
            time.sleep(0.01)
        time.sleep(rng.uniform(0.0, 1.5))
        if child.poll() is not None:
            finished_first += 1
            shutil.rmtree(path, ignore_errors=True)
            continue
        child.send_signal(signal.SIGKILL)
        child.wait()
        resumed = flocksim_run("--resume", str(path), "--steps", str(STEPS))
        _, err = resumed.communicate()
        problem = None
        if resumed.returncode != 0:
            problem = f"resume exit status {resumed.returncode}: {err.strip()[-300:]}"
        else:
            try:
                TrajectoryStore.open(path).verify()
                differs = same_arrays(reference, path)
                problem = f"array {differs} differs from the uninterrupted run" if differs else None
            except TrajectoryError as exc:
                problem = f"info --check: {exc}"
        if problem:
            failures.append({"kill": i, "failure": problem})
        else:
            survived += 1
        shutil.rmtree(path, ignore_errors=True)
        log(f"kills: {i + 1}/{kills}, {survived} survived, {len(failures)} failed")
    return {"kills": kills - finished_first, "survived": survived, "failures": failures}


# --- 3. damaged stores --------------------------------------------------------------------------


def damage(store: Path, rng: random.Random) -> str:
    """Damage ``store`` in one random way; returns what was done."""
    chunks = [p for p in store.rglob("*") if p.is_file() and p.name != "zarr.json" and p.parent.name != store.name]
    checkpoints = sorted(p for p in (store / "checkpoints").iterdir() if p.is_dir())
    kind = rng.choice(["delete", "truncate", "flip", "zero", "folder", "attribute"])
    if kind == "folder":
        folder = rng.choice([p for p in store.iterdir() if p.is_dir() and p.name != "checkpoints"])
        shutil.rmtree(folder)
        return f"deleted folder {folder.name}/"
    if kind == "attribute":
        meta_path = rng.choice(checkpoints) / "zarr.json"
        meta = json.loads(meta_path.read_text())
        key = rng.choice(["frames", "agents", "steps"])
        meta["attributes"][key] += rng.choice([-3, -1, 1, 2])
        meta_path.write_text(json.dumps(meta))
        return f"{meta_path.parent.name}: {key} changed"
    chunk = rng.choice(chunks)
    data = bytearray(chunk.read_bytes())
    where = str(chunk.relative_to(store))
    if kind == "delete" or not data:
        chunk.unlink()
        return f"deleted {where}"
    if kind == "truncate":
        chunk.write_bytes(bytes(data[: rng.randrange(len(data))]))
        return f"truncated {where}"
    at = rng.randrange(len(data))
    length = rng.randint(1, len(data) - at)
    if kind == "flip" or not any(data[at : at + length]):  # zeroing zeros would change nothing
        data[at] ^= 1 << rng.randrange(8)
        kind = "flip"
    else:
        data[at : at + length] = bytes(length)
    chunk.write_bytes(bytes(data))
    return f"{kind} {where}"


def soak_damages(cases: int, rng: random.Random, folder: Path) -> dict:
    pristine = folder / "pristine.zarr"
    child = flocksim_run(*RUN, "--steps", "160", "--out", str(pristine))
    if child.wait() != 0:
        raise SystemExit(f"recording failed: {child.stderr.read()}")
    detected, missed = 0, []
    kinds: dict[str, int] = {}
    for i in range(cases):
        copy = folder / "damaged.zarr"
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(pristine, copy)
        what = damage(copy, rng)
        kind = what.split(" ")[0].rstrip(":") if not what.startswith("step_") else "attribute"
        kinds[kind] = kinds.get(kind, 0) + 1
        try:
            TrajectoryStore.open(copy).verify()
            missed.append(what)
        except TrajectoryError as exc:
            if "\n" in str(exc):
                missed.append(f"{what}: a multi-line message")
            else:
                detected += 1
        if (i + 1) % 100 == 0:
            log(f"damages: {i + 1}/{cases}, {detected} detected")
    return {"cases": cases, "detected": detected, "missed": missed, "kinds": kinds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hostile", type=int, default=2000)
    parser.add_argument("--kills", type=int, default=50)
    parser.add_argument("--damages", type=int, default=500)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="flocksim-soak-") as tmp:
        result = {
            "hostile": soak_hostile(args.hostile, rng),
            "kills": soak_kills(args.kills, rng, Path(tmp)),
            "damages": soak_damages(args.damages, rng, Path(tmp)),
        }
    result["meta"] = {
        "command": " ".join(["python", *sys.argv]),
        "seed": args.seed,
        "flocksim": flocksim.__version__,
        "python": platform.python_version(),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "date": datetime.now(UTC).date().isoformat(),
        "wall_s": round(time.perf_counter() - started, 1),
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()

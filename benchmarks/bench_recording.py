"""Recording overhead and render speed (the targets of docs/benchmarks.md, "Recording and rendering").

1. Recording overhead: starlings-3d with ``--n`` birds (default 100 000) runs ``--steps`` steps
   without a recorder and with one (a frame every ``--every`` = 10 steps, float32, default
   checkpoints: one at the start, one at the end, one per 30 s of wall time). Both start warm
   (kernels compiled) and each is timed ``--repeats`` times, alternating; the best of each is
   kept. Overhead = (recorded - plain) / plain; and, inside each recorded run, the time spent
   in the recorder's hooks relative to the rest of the run (robust to load changing between
   runs on a shared machine).
2. Render: a starlings-3d run of ``--render-n`` birds (default 10 000) recorded for
   ``--frames`` frames is rendered to a 1280 x 720 H.264 mp4 (speed colours, then with an
   8-frame trail), timed from opening the store to the closed file; frames per second encoded.

Usage: python benchmarks/bench_recording.py [--n 100000] [--steps 100] [--render-n 10000] [--frames 150]
Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import tempfile
import time
from pathlib import Path

import numba

from flocksim import Simulation, __version__, apply_overrides, load_preset
from flocksim.io import Recorder
from flocksim.io.store import disk_usage
from flocksim.render import render_run


def params(n: int):
    return apply_overrides(load_preset("starlings-3d"), [f"agents.n={n}"])


class TimedRecorder(Recorder):
    """A Recorder that adds up the wall time spent in its own hooks (frames, metrics, writes,
    checkpoints): the overhead measured inside one run, immune to load changes between runs."""

    spent = 0.0

    def before_step(self, sim) -> None:
        t = time.perf_counter()
        super().before_step(sim)
        self.spent += time.perf_counter() - t

    def after_step(self, sim) -> None:
        t = time.perf_counter()
        super().after_step(sim)
        self.spent += time.perf_counter() - t

    def close(self, sim=None) -> None:
        t = time.perf_counter()
        super().close(sim)
        self.spent += time.perf_counter() - t


def timed_run(n: int, steps: int, every: int, folder: Path | None) -> tuple[float, float, int, int]:
    """(seconds for ``steps`` steps with the recorder closed inside the clock, seconds spent in
    the recorder, frames, bytes on disk)."""
    recorder = TimedRecorder(folder / "run.zarr", every=every) if folder else None
    sim = Simulation(params(n), seed=1, recorder=recorder)
    sim.warm_up()
    started = time.perf_counter()
    sim.step(steps)
    if recorder:
        recorder.close()
    seconds = time.perf_counter() - started
    if folder:
        return seconds, recorder.spent, recorder.frames, disk_usage(folder / "run.zarr")
    return seconds, 0.0, 0, 0


def overhead(n: int, steps: int, every: int, repeats: int) -> dict:
    plain, recorded, shares = [], [], []
    frames = size = 0
    for _ in range(repeats):
        plain.append(timed_run(n, steps, every, None)[0])
        with tempfile.TemporaryDirectory() as tmp:
            seconds, spent, frames, size = timed_run(n, steps, every, Path(tmp))
            recorded.append(seconds)
            shares.append(100.0 * spent / (seconds - spent))
    best_plain, best_recorded = min(plain), min(recorded)
    return {
        "case": "recording overhead",
        "preset": "starlings-3d",
        "n": n,
        "steps": steps,
        "every": every,
        "frames": frames,
        "store_mb": size / 2**20,
        "plain_s": plain,
        "recorded_s": recorded,
        "ms_per_step_plain": 1e3 * best_plain / steps,
        "overhead_pct": 100.0 * (best_recorded - best_plain) / best_plain,
        "recorder_time_pct_of_stepping": shares,
    }


def render_speed(n: int, frames: int) -> list[dict]:
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "run.zarr"
        recorder = Recorder(store, every=2)
        sim = Simulation(params(n), seed=1, recorder=recorder)
        sim.step(2 * (frames - 1))
        recorder.close()
        render_run(store, Path(tmp) / "warm.mp4", size=(64, 48), stop=0.1)  # compile the rasterizer
        for trail in (0, 8):
            out = Path(tmp) / "out.mp4"
            report = render_run(store, out, size=(1280, 720), color_by="speed", trail=trail)
            results.append(
                {
                    "case": "render mp4",
                    "n": n,
                    "size": "1280x720",
                    "color_by": "speed",
                    "trail": trail,
                    "frames": report.frames,
                    "seconds": report.seconds,
                    "frames_per_s": report.frames / report.seconds,
                    "mp4_mb": out.stat().st_size / 2**20,
                }
            )
        shutil.rmtree(store, ignore_errors=True)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--every", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--render-n", type=int, default=10_000)
    parser.add_argument("--frames", type=int, default=150)
    args = parser.parse_args()
    out = {
        "flocksim": __version__,
        "machine": {"cpus": os.cpu_count(), "processor": platform.processor() or platform.machine()},
        "numba_threads": numba.get_num_threads(),
        "date": time.strftime("%Y-%m-%d"),
        "results": [overhead(args.n, args.steps, args.every, args.repeats), *render_speed(args.render_n, args.frames)],
    }
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()

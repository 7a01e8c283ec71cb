"""Does a step let other Python threads run? The GIL while a viewer's simulation steps.

The viewer's server steps on a worker thread while its event loop answers controls and its packer
thread packs the previous frame (flocksim.viewer.session); both need the GIL between their
native calls. This steps starlings-3d (``--n`` birds) on a second thread, ``--steps`` times, while
the main thread loops: it checks whether the step has ended, sleeps 0.5 ms, and records how long
each turn took. A step that held the GIL through a kernel would show turns as long as that kernel;
turns no longer than Python's switch interval (5 ms) mean the step releases it.

Usage: python benchmarks/bench_viewer_gil.py [--n 100000] [--steps 3]
Prints one JSON object per step: {step_ms, longest_waits_ms (the 5 longest turns)}.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time

from flocksim import Simulation, apply_overrides, load_preset


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=100_000, help="birds")
    parser.add_argument("--steps", type=int, default=3, help="steps timed")
    args = parser.parse_args()
    sim = Simulation(apply_overrides(load_preset("starlings-3d"), [f"agents.n={args.n}"]))
    sim.warm_up()
    sim.step(5)
    print(f"switch interval {sys.getswitchinterval() * 1e3:.1f} ms", file=sys.stderr)
    for _ in range(args.steps):
        done = threading.Event()
        took: list[float] = []

        def step(done: threading.Event = done, took: list[float] = took) -> None:
            t = time.perf_counter()
            sim.step()
            took.append(time.perf_counter() - t)
            done.set()

        thread = threading.Thread(target=step)
        turns: list[float] = []
        last = time.perf_counter()
        thread.start()
        while not done.is_set():
            now = time.perf_counter()
            turns.append(now - last)
            last = now
            time.sleep(0.0005)
        thread.join()
        longest = [round(1e3 * t, 1) for t in sorted(turns)[-5:]]
        print(json.dumps({"step_ms": round(1e3 * took[0], 1), "longest_waits_ms": longest}))


if __name__ == "__main__":
    main()

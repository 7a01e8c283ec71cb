"""Step time of the reynolds stepper's three phase-one paths (grid sums, k-nearest list, list with a
level of detail) [ms of CPU per step, one thread, the median of 3 rounds of 20 steps], 20 000 agents.
Prints one JSON line; compare two trees with PYTHONPATH=<tree>/src."""

import json
import time

import flocksim
from flocksim import Simulation, apply_overrides, load_preset

CASES = {
    "boids-2d grid": ("boids-2d", ["agents.n=20000"]),
    "starlings-3d k-nearest": ("starlings-3d", ["agents.n=20000"]),
    "starlings-3d detail": ("starlings-3d", ["agents.n=20000", "detail.enabled=true", "detail.near=5"]),
}


def main() -> None:
    out: dict[str, object] = {"source": flocksim.__file__}
    for name, (preset, sets) in CASES.items():
        sim = Simulation(apply_overrides(load_preset(preset), sets), threads=1)
        sim.warm_up()
        sim.step(5)
        rounds = []
        for _ in range(3):
            start = time.process_time()
            sim.step(20)
            rounds.append((time.process_time() - start) / 20 * 1e3)
        out[name] = round(sorted(rounds)[1], 2)
    print(json.dumps(out))


if __name__ == "__main__":
    main()

"""Flappy Boids' difficulty curve, measured headless (docs/viewer.md, "Flappy Boids": "The
difficulty curve"): the scripted pilot (``game.pilot = gaps``, which steers the target to the
centre of the next gap, as a player flying the centre line would) plays the shipped preset for
SECONDS of simulated time on each seed, one thread. Per seed it prints one JSON line: the fish
kept every 10 s, the distance, gap radius and target speed then, the losses on rock and left
behind, and the largest share of the school lost within any 10 s; ``--set KEY=VALUE`` changes
the preset (e.g. ``--set game.gap_min_radius=6``).

    python benchmarks/flappy_curve.py 0,1,2 300
    python benchmarks/flappy_curve.py 0 300 --set game.gap_shrink=6
"""

from __future__ import annotations

import argparse
import itertools
import json
import time


def run(seed: int, seconds: int, overrides: list[str]) -> dict[str, object]:
    """One game of the scripted pilot (module docstring)."""
    import flocksim
    from flocksim.game import game_of

    params = flocksim.apply_overrides(flocksim.load_preset("flappy-boids"), overrides)
    sim = flocksim.Simulation(params, seed=seed, threads=1)
    game = game_of(sim)
    steps = round(10.0 / params.world.dt)
    began = time.perf_counter()
    kept, distance, radius, speed = [], [], [], []
    start = int(sim.state.n_alive)
    for _ in range(seconds // 10):
        sim.step(steps)
        st = game.status(sim)
        kept.append(st["alive"])
        distance.append(round(st["distance"]))
        radius.append(round(game.course.gap_radius(max(int(game.course.chunk_of(game.target[0])), 0)), 2))
        speed.append(round(st["speed"], 1))
        if st["game_over"]:
            break
    before = [start, *kept]
    worst = max(((a - b) / a for a, b in itertools.pairwise(before) if a), default=0.0)
    return {
        "seed": seed,
        "seconds": 10 * len(kept),
        "start": start,
        "kept_every_10s": kept,
        "distance": distance,
        "gap_radius": radius,
        "speed": speed,
        "lost_rock": game.lost_rock,
        "lost_behind": game.lost_behind,
        "score": game.status(sim)["score"],
        "largest_10s_loss_share": round(worst, 3),
        "wall_s": round(time.perf_counter() - began, 1),
        "overrides": overrides,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("seeds", help="comma-separated seeds, e.g. 0,1,2")
    parser.add_argument("seconds", type=int, help="simulated seconds per game (a multiple of 10)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="change the preset")
    args = parser.parse_args(argv)
    # one thread: Simulation(threads=1) runs the kernels on one (a comparable, frugal run)
    for seed in (int(s) for s in args.seeds.split(",")):
        print(json.dumps(run(seed, args.seconds, args.set)), flush=True)


if __name__ == "__main__":
    main()

"""A game loop driving flocksim: move the player each frame, step the minions, read positions back.

    python examples/game_loop.py --frames 600

The minions preset (docs/presets.md) chases a target; here the "player" walks a circle, the game
tells the simulation where it is every frame (``sim.set_target``) and reads the minions'
positions back as one flat (N, 2) array, as a renderer would.
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from flocksim import Simulation, load_preset


def run(frames: int, seed: int = 0) -> np.ndarray:
    """Run ``frames`` frames; returns the minions' final positions (N, 2)."""
    sim = Simulation(load_preset("minions"), seed=seed)
    centre = np.array([20.0, 20.0])
    for frame in range(frames):
        t = frame * sim.dt
        player = centre + 8.0 * np.array([math.cos(0.2 * t), math.sin(0.2 * t)])
        sim.set_target(None, player)  # the game's player position this frame
        sim.step()
        positions = sim.state.position  # (N, 2) view, stable-id order: hand it to the renderer
        if frame % 120 == 0 or frame == frames - 1:
            gap = np.linalg.norm(positions - player, axis=1)
            print(
                f"frame {frame:5d}  t={t:6.2f} s  player=({player[0]:5.1f}, {player[1]:5.1f})  "
                f"nearest minion {gap.min():5.2f}  farthest {gap.max():5.2f}"
            )
    return sim.state.position.copy()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=600, help="frames to run (60 per second)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    run(args.frames, args.seed)


if __name__ == "__main__":
    main()

"""Flappy Boids: the flock follows a target through walls of rock (docs/viewer.md, "Flappy Boids").

- :mod:`~flocksim.game.course`: the rock field (walls with gaps plus smooth noise) and its budgets;
- :mod:`~flocksim.game.noise`: seeded smooth value noise;
- :mod:`~flocksim.game.mesh`: one chunk's grid, marching-cubes mesh and avoidance spheres;
- :mod:`~flocksim.game.chunks`: the chunks kept around the flock (generated ahead, dropped behind);
- :mod:`~flocksim.game.flappy`: the game component (target, pilots, collisions, score, game over);
- :mod:`~flocksim.game.wire`: the binary rock-mesh message of docs/protocol.md.
"""

from flocksim.components.registry import register_component
from flocksim.game.course import Course, check_game
from flocksim.game.flappy import FlappyGame, game_of

# before the targets (order 40): the game moves the shared target they seek
register_component("game", order=30, wanted=lambda p: p.game.enabled, build=FlappyGame)

__all__ = ["Course", "FlappyGame", "check_game", "game_of"]

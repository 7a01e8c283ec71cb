"""The viewer's side of Flappy Boids (docs/protocol.md, "Flappy Boids"): rock meshes and the
``game`` status message before each frame, and the ``steer`` control."""

from __future__ import annotations

import json

from flocksim.game import game_of
from flocksim.game.wire import encode_rocks
from flocksim.simulation import Simulation
from flocksim.viewer.controls import ControlError


class GameFeed:
    """What one connection has been sent of its game: the chunks of the current flock (``generation``)."""

    def __init__(self) -> None:
        self.generation: int | None = None
        self.sent: set[int] = set()
        self.last_chunks: frozenset[int] = frozenset()  # the chunks the last messages() call sent

    def messages(self, sim: Simulation, generation: int) -> list[str | bytes]:
        """The messages to send before the next frame of ``sim``: a rock mesh (binary) for each chunk
        not sent yet to this flock, then one ``game`` text message; none when ``sim`` plays no game."""
        game = game_of(sim)
        self.last_chunks = frozenset()
        if game is None:
            return []
        if generation != self.generation:
            self.generation = generation
            self.sent = set()
        out: list[str | bytes] = []
        new: list[int] = []
        for k, mesh in sorted(game.cache.chunks.items()):
            if k not in self.sent:
                out.append(encode_rocks(mesh))
                new.append(k)
        self.sent.update(new)
        self.last_chunks = frozenset(new)
        self.sent &= set(game.cache.chunks)
        out.append(json.dumps({"type": "game", **game.status(sim)}))
        return out

    def forget(self, generation: int, chunks: frozenset[int]) -> None:
        """The messages that named ``chunks`` of flock ``generation`` were not sent (their frame was
        dropped): send those chunks again before the next frame."""
        if generation == self.generation:
            self.sent -= chunks


def steer_game(sim: Simulation, y: float, z: float) -> None:
    """The ``steer`` control: the player takes over the game's target (``FlappyGame.steer``)."""
    game = game_of(sim)
    if game is None:
        raise ControlError("steer: this scene plays no game (game.enabled is false); choose flappy-boids")
    game.steer(y, z)

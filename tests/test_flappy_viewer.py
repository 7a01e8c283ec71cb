"""Flappy Boids in the viewer server (issue 19): rock meshes and the ``game`` message before the
frames, the ``steer`` control and a restart (docs/protocol.md, "Flappy Boids")."""

from __future__ import annotations

from flocksim.game.wire import decode_rocks
from flocksim.viewer.protocol import decode_frame
from flocksim.viewer.server import create_app
from test_viewer_server import SMALL, TestClient, expect, opened, receive, send  # its warning filter first

FLAPPY = "/ws?protocol=2&preset=flappy-boids&set=agents.n%3D30"


def until_frame(ws) -> tuple[list, list, object]:
    """Ask for a frame; (rock meshes, game messages, the frame) that arrive up to it."""
    send(ws, type="next")
    rocks, games = [], []
    while True:
        m = receive(ws)
        if isinstance(m, bytes) and m[:4] == b"FLKR":
            rocks.append(decode_rocks(m))
        elif isinstance(m, dict):
            assert m["type"] == "game", m
            games.append(m)
        else:
            return rocks, games, decode_frame(m)


def test_rocks_once_then_game_status_steer_and_restart():
    with TestClient(create_app(sps=0, port=8000)) as c, c.websocket_connect(FLAPPY) as ws:
        assert opened(ws)["params"]["game"]["enabled"] is True
        rocks, games, frame = until_frame(ws)
        assert frame.n_agents == 30 and len(games) == 1
        game = games[0]
        assert sorted(k for k, _, _ in rocks) == game["chunks"] and len(rocks) >= 3
        assert all(len(t) > 1000 for _, _, t in rocks)
        assert game["pilot"] == "gaps" and game["alive"] == 30
        rocks, games, _ = until_frame(ws)  # the meshes are not sent again
        assert rocks == [] or all(k not in game["chunks"] for k, _, _ in rocks)
        send(ws, type="steer", y=1, z=0)
        _, games, _ = until_frame(ws)
        assert games[-1]["pilot"] == "player"
        send(ws, type="steer", y=2, z=0)
        assert "steer.y" in expect(ws, "error")["message"]
        send(ws, type="reset")
        assert expect(ws, "params")["reset"] is True
        rocks, games, frame = until_frame(ws)
        assert len(rocks) >= 3 and games[-1]["distance"] < 5.0  # a new flock: the meshes again
        assert frame.n_agents == 30


def test_steer_without_a_game_is_an_error():
    with TestClient(create_app(sps=0, port=8000)) as c, c.websocket_connect(SMALL) as ws:
        opened(ws)
        send(ws, type="steer", y=0, z=0)
        assert "game.enabled" in expect(ws, "error")["message"]

"""examples/game_loop.py runs as a game would: a target moved every frame, positions read back."""

import runpy
import subprocess
import sys
from pathlib import Path

import numpy as np

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "game_loop.py"


def test_game_loop_follows_the_moving_player():
    run = runpy.run_path(str(EXAMPLE))["run"]
    positions = run(frames=360)
    assert positions.shape == (40, 2) and np.isfinite(positions).all()
    t = 359 / 60
    player = np.array([20.0, 20.0]) + 8.0 * np.array([np.cos(0.2 * t), np.sin(0.2 * t)])
    # after 6 s the minions gather around the player (slots reach 4 rings, about 5 m out)
    assert np.median(np.linalg.norm(positions - player, axis=1)) < 6.0


def test_game_loop_command_line():
    out = subprocess.run(
        [sys.executable, str(EXAMPLE), "--frames", "5"], capture_output=True, text=True, check=True, timeout=300
    )
    assert "frame     4" in out.stdout

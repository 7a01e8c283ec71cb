"""The quick subset for development, ``pytest -m "not heavy"``: it leaves out the tests that drive a
browser, a Jupyter kernel, a wheel build or the documentation site, and those marked ``slow``
(the ``heavy`` marker is set in tests/conftest.py), and keeps the rest."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def collected(*args: str) -> set[str]:
    """Node ids that ``pytest --collect-only`` selects for the given arguments."""
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *args],
        cwd=TESTS.parent,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return {line for line in done.stdout.splitlines() if "::" in line}


def test_not_heavy_leaves_out_browser_wheel_and_slow_tests_and_keeps_the_rest():
    files = ["tests/test_wheel.py", "tests/test_viewer_browser.py", "tests/test_game_flappy.py"]
    files.append("tests/test_numba_cache.py")
    everything = collected(*files)
    quick = collected("-m", "not heavy", *files)
    left_out = everything - quick
    assert quick and left_out and quick < everything
    assert not any(node.startswith(("tests/test_wheel.py", "tests/test_viewer_browser.py")) for node in quick)
    slow = [node for node in everything if node.startswith("tests/test_game_flappy.py") and node not in quick]
    assert slow, "the tests marked slow in test_game_flappy.py should be left out"
    assert any(node.startswith("tests/test_game_flappy.py") for node in quick), "its quick tests stay"
    assert {node for node in everything if node.startswith("tests/test_numba_cache.py")} <= quick

"""A --scheduler address where something listens that is not a Dask scheduler (here a plain HTTP
server): `flocksim fit` and `flocksim sweep` (one client code path) give one line, exit status 2,
within their connect timeout, instead of waiting forever for a Dask handshake."""

from __future__ import annotations

import http.server
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from vicsek_tracks import vicsek_positions, write_tracks_csv

pytest.importorskip("distributed")
CONSOLE_SCRIPT = Path(sys.executable).with_name("flocksim")
# the command's own deadline is 10 s; the rest is room for starting Python, importing Dask and
# reading the tracks on a busy machine. The old code never returned: the bound is only a hang guard.
HANG_GUARD_S = 120


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # the Dask handshake is a bad HTTP request: keep the test's output clean
        pass


@pytest.fixture
def http_address():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Quiet)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"tcp://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _run(args: list[str]) -> subprocess.CompletedProcess:
    try:
        proc = subprocess.run(
            [str(CONSOLE_SCRIPT), *args], capture_output=True, text=True, timeout=HANG_GUARD_S, stdin=subprocess.DEVNULL
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"flocksim {args[0]} --scheduler <plain HTTP server> still waiting after {HANG_GUARD_S} s")
    return proc


def _check(proc: subprocess.CompletedProcess, address: str) -> None:
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert lines == [
        f"error: --scheduler: nothing at '{address}' answered as a Dask scheduler within 10 s (something may "
        "listen there, but it does not speak Dask); allowed: the address of a running Dask scheduler, e.g. "
        "tcp://host:8786"
    ], proc.stderr


def test_sweep_against_a_plain_http_server_says_so(http_address, tmp_path):
    out = tmp_path / "r.parquet"
    proc = _run(["sweep", "boids-separation", "-o", str(out), "--scheduler", http_address, "-q"])
    _check(proc, http_address)
    assert not out.exists()


def test_fit_against_a_plain_http_server_says_so(http_address, tmp_path):
    tracks = write_tracks_csv(tmp_path / "t.csv", vicsek_positions(40, 4.0, 2.0, frames=12, burn_in=20, seed=2))
    out = tmp_path / "f.json"
    args = ["fit", str(tracks), "--preset", "vicsek", "--prior", "vicsek.eta", "-o", str(out)]
    proc = _run([*args, "--scheduler", http_address])
    _check(proc, http_address)
    assert not out.exists()

"""`flocksim fit` and `flocksim sweep` (one Dask client code path) before any work: a --scheduler
address where something listens that is not a Dask scheduler (here a plain HTTP server) gives one
line, exit status 2, within the connect timeout, instead of waiting forever for a Dask handshake;
--workers beyond the cores or the memory is refused in one line, and the default is lowered to what
memory allows, with a line saying so."""

from __future__ import annotations

import http.server
import io
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import distributed
import pytest
from rich.console import Console
from typer.testing import CliRunner

from flocksim.cli import app
from vicsek_tracks import vicsek_positions, write_tracks_csv

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


# --- --workers: bounded by the cores and the memory -------------------------------------------------


class _NoClusterError(Exception):
    pass


@pytest.fixture
def started(monkeypatch):
    """The worker counts a LocalCluster was asked for; none is started (a test of the old code
    would otherwise start one process per asked worker)."""
    asked: list[int] = []

    def fake(*args, n_workers=None, **kwargs):
        asked.append(n_workers)
        raise _NoClusterError(n_workers)

    monkeypatch.setattr(distributed, "LocalCluster", fake)
    return asked


REFUSED = re.compile(
    r"error: --workers: 100000 is more than this machine can run \(\d+ usable cores(, [0-9.]+ [KMG]iB of free "
    r"memory at about 768\.0 MiB per worker process)?\); allowed: 1 to \d+, or --scheduler for a cluster"
)


@pytest.mark.parametrize("command", ["sweep", "fit"])
def test_more_workers_than_the_machine_allows_is_refused_before_any_work(command, started, tmp_path):
    out = tmp_path / ("r.parquet" if command == "sweep" else "f.json")
    if command == "sweep":
        args = ["sweep", "boids-separation", "-o", str(out), "-q"]
    else:
        tracks = write_tracks_csv(tmp_path / "t.csv", vicsek_positions(40, 4.0, 2.0, frames=12, burn_in=20, seed=2))
        args = ["fit", str(tracks), "--preset", "vicsek", "--prior", "vicsek.eta", "-o", str(out)]
    result = CliRunner().invoke(app, [*args, "--workers", "100000"])
    assert started == []
    assert result.exit_code == 2, (result.stdout, result.stderr, result.exception)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and REFUSED.fullmatch(lines[0]), lines
    assert not out.exists()


def test_memory_lowers_the_default_and_bounds_an_explicit_count(monkeypatch, started, tmp_path):
    from flocksim.sweep import SweepError, cluster, load_sweep, run_sweep

    monkeypatch.setattr(cluster, "usable_cores", lambda: 8)
    monkeypatch.setattr(cluster, "memory_headroom", lambda: int(3.5 * cluster.WORKER_MEMORY_BYTES))
    text = io.StringIO()
    with pytest.raises(_NoClusterError):
        run_sweep(load_sweep("boids-separation"), tmp_path / "a.parquet", console=Console(file=text, width=300))
    assert started == [3]
    assert text.getvalue().strip().splitlines() == [  # off a terminal: the note, then the stage's line
        "--workers: 3 worker processes, not one per core (8 usable cores, 2.6 GiB of free memory at about "
        "768.0 MiB per worker process)",
        "starting a local Dask cluster of 3 worker processes",
    ]
    with pytest.raises(SweepError) as info:
        run_sweep(load_sweep("boids-separation"), tmp_path / "b.parquet", workers=4)
    assert str(info.value) == (
        "--workers: 4 is more than this machine can run (8 usable cores, 2.6 GiB of free memory at about 768.0 MiB "
        "per worker process); allowed: 1 to 3, or --scheduler for a cluster"
    )
    assert started == [3] and not (tmp_path / "b.parquet").exists()
    with pytest.raises(_NoClusterError):
        run_sweep(load_sweep("boids-separation"), tmp_path / "c.parquet", workers=3)
    assert started == [3, 3]
    monkeypatch.setattr(cluster, "memory_headroom", lambda: cluster.WORKER_MEMORY_BYTES // 2)
    with pytest.raises(SweepError, match=r"^--workers: this process can still allocate 384\.0 MiB of memory, less "):
        run_sweep(load_sweep("boids-separation"), tmp_path / "d.parquet")


def test_cores_bound_the_workers_where_memory_is_plenty(monkeypatch):
    from flocksim.sweep import SweepError, cluster

    monkeypatch.setattr(cluster, "usable_cores", lambda: 2)
    monkeypatch.setattr(cluster, "memory_headroom", lambda: None)  # unknown: the cores alone
    assert cluster.local_workers(None) == (2, None)
    assert cluster.local_workers(2) == (2, None)
    with pytest.raises(SweepError, match=r"^--workers: 3 is more than this machine can run \(2 usable cores\); "):
        cluster.local_workers(3)
    for bad in (0, -1, True, 1.5):
        with pytest.raises(SweepError, match=r"allowed: a whole number from 1 to 2$"):
            cluster.local_workers(bad)


# --- Ctrl-C ----------------------------------------------------------------------------------------


def _command(process, psutil) -> str:
    try:
        return " ".join(process.cmdline())
    except psutil.Error:  # gone, or a zombie, since it was listed
        return ""


def _ignores_sigint(pid: int) -> bool:
    import signal

    with open(f"/proc/{pid}/status", encoding="ascii") as handle:
        ignored = next(int(line.split()[1], 16) for line in handle if line.startswith("SigIgn:"))
    return bool(ignored & (1 << (signal.SIGINT - 1)))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_ctrl_c_on_fit_gives_one_line_and_exit_130(tmp_path):
    """Ctrl-C at a terminal signals the whole process group: the fit and its worker processes."""
    import os
    import signal

    psutil = pytest.importorskip("psutil")
    tracks = write_tracks_csv(tmp_path / "t.csv", vicsek_positions(40, 4.0, 2.0, frames=12, burn_in=20, seed=2))
    out = tmp_path / "f.json"
    args = ["fit", str(tracks), "--preset", "vicsek", "--prior", "vicsek.eta", "-o", str(out), "--workers", "2"]
    proc = subprocess.Popen(
        [str(CONSOLE_SCRIPT), *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + HANG_GUARD_S
        parent = psutil.Process(proc.pid)
        # the two workers run, and the cluster has started: the fit takes Ctrl-C again (its SIGINT is
        # not ignored any more, as it is while the workers start, for them to inherit)
        while time.monotonic() < deadline and proc.poll() is None:
            workers = [c for c in parent.children(recursive=True) if "spawn_main" in _command(c, psutil)]
            if len(workers) >= 2 and not _ignores_sigint(proc.pid):
                break
            time.sleep(0.1)
        assert proc.poll() is None, proc.communicate()
        time.sleep(1.0)
        os.killpg(proc.pid, signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=HANG_GUARD_S)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    assert proc.returncode == 130, (stdout, stderr)
    lines = stderr.strip().splitlines()  # off a terminal the fit says each stage; the interruption is one line
    assert lines[-1] == f"interrupted: the fit stopped before its last generation; nothing was written to {out}"
    assert lines[:-1] and all(line.startswith(("starting a local Dask cluster", "fit: ")) for line in lines[:-1]), (
        stderr
    )
    assert not out.exists()

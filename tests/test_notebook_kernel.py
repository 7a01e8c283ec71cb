"""The notebook widget in a real Jupyter kernel (jupyter_client, ipykernel), driven as a front end
drives it (comm messages): a replay whose store is damaged while it plays, and a kernel shut down
or restarted under a live widget (docs/notebook.md, docs/reliability.md "Notebook").

Small flocks and few steps: the kernel's imports compile nothing new (numba's cache is shared).
"""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import flocksim
from flocksim.io import Recorder
from flocksim.notebook import base

jupyter_client = pytest.importorskip("jupyter_client")
pytest.importorskip("ipykernel")
pytestmark = pytest.mark.skipif(
    not (base.STATIC_DIR / "widget.js").exists(), reason="widget front end not built (run ./dev.sh setup)"
)
SRC = Path(__file__).resolve().parents[1] / "src"


class Kernel:
    """A python3 kernel with this checkout's sources first on its path, and a client that acts as
    the widget's front end."""

    def __init__(self, cwd: Path):
        self._out: list[str] = []
        env = {**os.environ, "PYTHONPATH": f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
        self.manager = jupyter_client.KernelManager(kernel_name="python3")
        self.manager.start_kernel(env=env, cwd=str(cwd))
        self.connect()

    def connect(self) -> None:
        self.client = self.manager.client()
        self.client.start_channels()
        self.client.wait_for_ready(timeout=120)

    def run(self, code: str, timeout: float = 300) -> str:
        """Execute ``code``; its standard output (an error in it fails the test)."""
        reply = self.client.execute_interactive(code, timeout=timeout, output_hook=self._collect, store_history=False)
        assert reply["content"]["status"] == "ok", reply["content"]
        out, self._out = "".join(self._out), []
        return out

    def _collect(self, msg: dict) -> None:
        if msg["msg_type"] == "stream" and msg["content"]["name"] == "stdout":
            self._out.append(msg["content"]["text"])
        elif msg["msg_type"] == "error":
            self._out.append("\n".join(msg["content"]["traceback"]))

    def send(self, comm_id: str, data: dict[str, Any]) -> None:
        """What the front end sends to the widget with ``comm_id``."""
        msg = self.client.session.msg("comm_msg", {"comm_id": comm_id, "data": data})
        self.client.shell_channel.send(msg)

    def updates(self, comm_id: str, until: Any, timeout: float = 60) -> dict[str, Any]:
        """The widget's state updates merged, read until ``until(state)`` holds."""
        state: dict[str, Any] = {}
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            try:
                msg = self.client.get_iopub_msg(timeout=1)
            except queue.Empty:
                continue
            content = msg["content"]
            ours = msg["msg_type"] == "comm_msg" and content.get("comm_id") == comm_id
            if ours and content["data"].get("method") in ("update", "echo_update"):
                state.update(content["data"].get("state", {}))
                for path, buffer in zip(content["data"].get("buffer_paths", []), msg["buffers"], strict=False):
                    state[path[0]] = bytes(buffer)  # binary traits (the frame) travel as buffers
                if until(state):
                    return state
        raise AssertionError(f"no such update within {timeout} s: {state}")

    def stop(self) -> None:
        self.client.stop_channels()
        if self.manager.is_alive():
            self.manager.shutdown_kernel(now=True)


@pytest.fixture
def kernel(tmp_path):
    k = Kernel(tmp_path)
    yield k
    k.stop()


def record(path: Path, n: int = 30, steps: int = 24) -> Path:
    params = flocksim.apply_overrides(flocksim.load_preset("boids-2d"), [f"agents.n={n}"])
    with Recorder(path, every=2, chunk_frames=4) as recorder:
        flocksim.Simulation(params, seed=5, recorder=recorder).step(steps)
    return path


def flip_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x10
    path.write_bytes(bytes(data))


# frames 4 to 7 of a run recorded every 2 steps in chunks of 4 frames: steps 8 to 14
DAMAGE = "damaged store: position, steps 8 to 14 (frames 4 to 7): a chunk fails its CRC-32C checksum"


@pytest.mark.parametrize("opened", ["path", "open_run"])
def test_a_replay_whose_store_is_damaged_while_it_plays_stops_with_one_line(kernel, tmp_path, opened):
    store = record(tmp_path / "run.zarr")
    source = repr(str(store)) if opened == "path" else f"flocksim.io.open_run({str(store)!r})"
    comm = kernel.run(f"import flocksim, flocksim.io\nw = flocksim.widget({source})\nprint(w.comm.comm_id)").strip()
    kernel.send(comm, {"method": "update", "state": {"playing": True}, "buffer_paths": []})
    for index in (1, 2):  # the front end pulls frames while playing
        kernel.send(comm, {"method": "custom", "content": {"type": "next"}})
        kernel.updates(comm, lambda s, i=index: s.get("index") == i)
    flip_byte(store / "position" / "c" / "1" / "0" / "0")  # damaged while it plays
    kernel.send(comm, {"method": "custom", "content": {"type": "next"}})
    kernel.send(comm, {"method": "custom", "content": {"type": "next"}})
    state = kernel.updates(comm, lambda s: s.get("playing") is False)
    assert state["error"] == f"frame 4: {store}: {DAMAGE} (corrupted or truncated)"
    assert "Traceback" not in state["error"] and "checksum do not match" not in state["error"]
    # the scrubber onto a damaged frame: the same line, not a traceback in the kernel's log
    kernel.send(comm, {"method": "update", "state": {"error": ""}, "buffer_paths": []})
    kernel.send(comm, {"method": "update", "state": {"index": 6}, "buffer_paths": []})
    state = kernel.updates(comm, lambda s: DAMAGE in s.get("error", ""))
    # the kernel goes on: an intact frame is still shown
    out = kernel.run("w.index = 1\nprint(w.index, w.frames_sent > 0, repr(w.error[:14]))")
    assert out.split()[:2] == ["1", "True"]


def test_a_kernel_shut_down_under_a_playing_recording_live_widget_leaves_a_store_that_verifies(kernel, tmp_path):
    """Jupyter's "Shut Down Kernel" (a shutdown request, then a kill after the grace period) while
    the widget plays, its frames in flight, and the simulation records: the kernel is gone, and the
    store passes ``info --check`` whether the kernel exited or was killed mid-step."""
    store = tmp_path / "live.zarr"
    comm = kernel.run(
        "import flocksim\n"
        "from flocksim.io import Recorder\n"
        "params = flocksim.apply_overrides(flocksim.load_preset('boids-2d'), ['agents.n=40'])\n"
        f"sim = flocksim.Simulation(params, seed=1, recorder=Recorder({str(store)!r}, every=1, chunk_frames=4,"
        " checkpoint_every=5))\n"
        "w = flocksim.widget(sim)\n"
        "print(w.comm.comm_id)"
    ).strip()
    kernel.send(comm, {"method": "update", "state": {"playing": True}, "buffer_paths": []})
    for _ in range(12):
        kernel.send(comm, {"method": "custom", "content": {"type": "next"}})
    kernel.updates(comm, lambda s: "frame" in s)  # it plays
    process = kernel.manager.provisioner.process
    kernel.client.stop_channels()
    started = time.monotonic()
    kernel.manager.shutdown_kernel(now=False)  # what the notebook server does
    assert process.poll() is not None
    print(f"kernel gone after {time.monotonic() - started:.1f} s, exit status {process.returncode}")
    check = subprocess.run(
        [sys.executable, "-m", "flocksim.cli", "info", "--check", str(store)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(SRC)},
    )
    assert check.returncode == 0, check.stderr
    assert "check: no damage found" in check.stdout
    resumed = subprocess.run(
        [sys.executable, "-m", "flocksim.cli", "run", "--resume", str(store), "--steps", "40", "-q"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(SRC)},
    )
    assert resumed.returncode == 0, resumed.stderr


def test_a_kernel_restarted_under_a_live_widget_serves_a_new_one(kernel, tmp_path):
    code = (
        "import flocksim\n"
        "params = flocksim.apply_overrides(flocksim.load_preset('boids-2d'), ['agents.n=40'])\n"
        "sim = flocksim.Simulation(params, seed=1)\n"
        "w = flocksim.widget(sim)\n"
        "print(w.comm.comm_id)"
    )
    comm = kernel.run(code).strip()
    kernel.send(comm, {"method": "update", "state": {"playing": True}, "buffer_paths": []})
    for _ in range(5):
        kernel.send(comm, {"method": "custom", "content": {"type": "next"}})
    kernel.updates(comm, lambda s: "frame" in s)
    old = kernel.manager.provisioner.process
    kernel.client.stop_channels()
    kernel.manager.restart_kernel(now=False)  # the notebook's "Restart Kernel"
    assert old.poll() is not None  # the old kernel is gone (exited, or killed after the grace period)
    kernel.connect()
    comm2 = kernel.run(code).strip()
    assert comm2 and comm2 != comm
    kernel.send(comm2, {"method": "custom", "content": {"type": "step"}})
    state = kernel.updates(comm2, lambda s: "frame" in s)
    assert state["frame"] is not None
    assert kernel.run("print(sim.steps)").strip() == "1"

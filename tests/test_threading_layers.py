"""numba's threading layers: flocksim prefers tbb (work stealing, fast on a busy machine), a user's
NUMBA_THREADING_LAYER wins, and a run gives bitwise the same states under every layer and thread
count (the parallel loops' results do not depend on which thread ran which share)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import numba
import pytest

from flocksim import _threading

# Each preset at a size that takes its parallel paths (grid search, several cells per thread),
# stepped on 1 and 2 threads; prints the layer in use and a digest of each final state.
RUN = """
import hashlib, json, sys
import numba
import flocksim
from flocksim.config import apply_overrides

out = {}
for preset, n in [("boids-2d", 1500), ("starlings-3d", 1500), ("abm-flocking-small", 2000), ("couzin", 600),
                  ("vicsek", 1500), ("crowd-maze", 800)]:
    for threads in (1, 2):
        params = apply_overrides(flocksim.load_preset(preset), [f"agents.n={n}"])
        sim = flocksim.Simulation(params, seed=5, threads=threads)
        sim.step(12)
        h = hashlib.sha256(sim.state.position.tobytes() + sim.state.velocity.tobytes()).hexdigest()
        out[f"{preset}/{threads}"] = h
print(json.dumps({"layer": numba.threading_layer(), "digests": out}))
"""


def run_under(layer: str | None) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_THREADING_LAYER")}
    env["NUMBA_NUM_THREADS"] = "2"
    if layer is not None:
        env["NUMBA_THREADING_LAYER"] = layer
    done = subprocess.run([sys.executable, "-c", RUN], env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(not _threading.preload_tbb(), reason="the tbb wheel is not installed (omp is the default here)")
def test_tbb_is_the_default_layer():
    assert run_under(None)["layer"] == "tbb"


def test_every_layer_and_thread_count_gives_bitwise_the_same_run():
    layers = ["omp", "workqueue"] + (["tbb"] if _threading.preload_tbb() else [])
    runs = {layer: run_under(layer) for layer in layers}
    assert {layer: r["layer"] for layer, r in runs.items()} == {layer: layer for layer in layers}
    first = runs[layers[0]]["digests"]
    assert len(first) == 12
    for layer in layers:
        digests = runs[layer]["digests"]
        assert digests == first, f"{layer} differs from {layers[0]}"
        for key, value in digests.items():
            if key.endswith("/2"):
                assert value == digests[key[:-2] + "/1"], f"{key}: 2 threads differ from 1 under {layer}"


def test_a_user_choice_of_layer_is_kept(monkeypatch):
    monkeypatch.setenv("NUMBA_THREADING_LAYER", "workqueue")
    before = list(numba.config.THREADING_LAYER_PRIORITY)
    numba.config.THREADING_LAYER_PRIORITY = ["workqueue", "omp", "tbb"]
    try:
        _threading.configure()
        assert numba.config.THREADING_LAYER_PRIORITY == ["workqueue", "omp", "tbb"]
        monkeypatch.delenv("NUMBA_THREADING_LAYER")
        _threading.configure()
        assert _threading.layer_priority() == numba.config.THREADING_LAYER_PRIORITY
    finally:
        numba.config.THREADING_LAYER_PRIORITY = before


def test_one_cpu_puts_omp_first_and_a_cgroup_quota_counts(tmp_path):
    assert _threading.layer_priority(2) == ["tbb", "omp", "workqueue"]
    assert _threading.layer_priority(1) == ["omp", "tbb", "workqueue"]
    assert _threading.layer_priority(1.5) == ["omp", "tbb", "workqueue"]  # oneTBB rounds a quota down
    assert _threading._cgroup_cpu_quota(tmp_path) is None  # no cgroup files: no quota
    (tmp_path / "cpu.max").write_text("max 100000\n")
    assert _threading._cgroup_cpu_quota(tmp_path) is None
    (tmp_path / "cpu.max").write_text("150000 100000\n")
    assert _threading._cgroup_cpu_quota(tmp_path) == 1.5
    (tmp_path / "cpu.max").unlink()
    (tmp_path / "cpu").mkdir()
    (tmp_path / "cpu" / "cpu.cfs_quota_us").write_text("-1\n")
    (tmp_path / "cpu" / "cpu.cfs_period_us").write_text("100000\n")
    assert _threading._cgroup_cpu_quota(tmp_path) is None
    (tmp_path / "cpu" / "cpu.cfs_quota_us").write_text("100000\n")
    assert _threading._cgroup_cpu_quota(tmp_path) == 1.0


VIEWER_ON_ONE_CPU = """
import json, warnings
warnings.simplefilter("ignore")
import numba
from starlette.testclient import TestClient
from flocksim.viewer.server import create_app

app = create_app(preset="boids-2d", overrides=["agents.n=60"], sps=60)
with TestClient(app) as client:
    with client.websocket_connect("/ws?protocol=2&preset=boids-2d") as ws:
        ws.send_text(json.dumps({"type": "next"}))
        while not ws.receive().get("bytes"):
            pass
print(numba.threading_layer(), flush=True)
"""


@pytest.mark.skipif(shutil.which("taskset") is None or not hasattr(os, "sched_getaffinity"), reason="needs taskset")
def test_the_viewer_exits_on_one_cpu():
    """The server steps on worker threads; on one CPU, with tbb, the process hung at exit in
    numba's unload_tbb after its last line (oneTBB starts no worker there)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_THREADING_LAYER")}
    cpu = sorted(os.sched_getaffinity(0))[0]
    done = subprocess.run(["taskset", "-c", str(cpu), sys.executable, "-c", VIEWER_ON_ONE_CPU], env=env,
                          capture_output=True, text=True, timeout=240)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split()[-1] == "omp"

"""numba's threading layers: flocksim prefers tbb (work stealing, fast on a busy machine), a user's
NUMBA_THREADING_LAYER wins, and a run gives bitwise the same states under every layer and thread
count (the parallel loops' results do not depend on which thread ran which share)."""

from __future__ import annotations

import json
import os
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
        assert numba.config.THREADING_LAYER_PRIORITY == _threading.LAYER_PRIORITY
    finally:
        numba.config.THREADING_LAYER_PRIORITY = before

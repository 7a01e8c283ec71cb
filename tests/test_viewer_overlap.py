"""Frames packed beside the next step (flocksim.viewer.session): the frame's arrays are copied
out of the simulation first (capture_frame), packed later (pack_frame) while the simulation steps
on. Frames keep their order and each one shows exactly the state of the step it names."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx")

from starlette.testclient import TestClient

from flocksim import Simulation, apply_overrides, load_preset
from flocksim.viewer.protocol import capture_frame, decode_frame, encode_frame, pack_frame
from flocksim.viewer.server import create_app

OVERRIDES = ["agents.n=80", "predator.enabled=true"]
STATUS = [0.5, 7.0, 0.0, 80.0, 60.0]


def birds() -> Simulation:
    return Simulation(apply_overrides(load_preset("starlings-3d"), OVERRIDES))


@pytest.mark.parametrize("layout", ["f32", "q16"])
def test_a_captured_frame_does_not_change_when_the_simulation_steps_on(layout):
    sim = birds()
    sim.step(2)
    before = encode_frame(sim, 4, layout=layout, status=STATUS)
    parts = capture_frame(sim, 4, layout=layout, status=STATUS)
    sim.step(3)  # the next steps overwrite positions and velocities in place
    packed = pack_frame(parts)
    assert packed == before
    assert packed != encode_frame(sim, 4, layout=layout, status=STATUS)
    assert decode_frame(packed).step == 2


def test_frames_are_in_order_and_each_shows_its_step():
    """With the server stepping as fast as it can, every frame equals the reference simulation's
    state at the frame's step (f32 positions bitwise), frame indices count up by one and steps rise."""
    query = "/ws?protocol=2&preset=starlings-3d&" + "&".join(f"set={o.replace('=', '%3D')}" for o in OVERRIDES)
    reference = birds()
    frames = []
    with TestClient(create_app(sps=0)) as client, client.websocket_connect(query) as ws:
        kinds = []
        while len(kinds) < 2:
            message = ws.receive_json()
            if message["type"] != "compiling":
                kinds.append(message["type"])
        assert kinds == ["hello", "params"]
        for _ in range(25):
            ws.send_text('{"type": "next"}')
            frames.append(decode_frame(ws.receive_bytes()))
    indices = [f.frame_index for f in frames]
    steps = [f.step for f in frames]
    assert indices == list(range(indices[0], indices[0] + len(frames)))
    assert all(b > a for a, b in itertools.pairwise(steps)), steps
    for f in frames:
        reference.step(f.step - reference.steps)
        state = reference.state
        rows = np.flatnonzero(state.alive)
        assert f.layout == "f32" and f.n_agents == len(rows)
        np.testing.assert_array_equal(f.positions[: f.n_agents], state.position[rows].astype(np.float32))
        velocity = state.velocity[rows]
        unit = velocity / np.linalg.norm(velocity, axis=1, keepdims=True)
        np.testing.assert_array_equal(f.headings[: f.n_agents], unit.astype(np.float32))
        assert f.time == pytest.approx(reference.time, abs=0)

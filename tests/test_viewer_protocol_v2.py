"""Viewer protocol version 2: two-byte octahedral 3D headings (hand-computed codes, the error
bound, Python encode -> JavaScript decode through node) and the version check that refuses
version-1 clients with one error (docs/protocol.md, "Versions")."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx")

from starlette.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from flocksim import Simulation, apply_overrides, load_preset
from flocksim.kernels.octahedral import MAX_ERROR_DEG, NONE, decode_octahedral, encode
from flocksim.viewer.protocol import SECTION_BANK, VERSION, decode_frame, encode_frame, frame_size
from flocksim.viewer.server import create_app
from flocksim.viewer.versions import CLOSE_PROTOCOL, version_refusal

WEB = Path(__file__).resolve().parent.parent / "web"
QUERY = "preset=boids-2d&set=agents.n%3D40"


def angles_deg(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.degrees(np.arctan2(np.linalg.norm(np.cross(a, b), axis=1), np.einsum("ij,ij->i", a, b)))


def test_octahedral_codes_by_hand():
    s = 1 / math.sqrt(3)
    headings = np.array([[1, 0, 0], [-1, 0, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1], [s, s, s], [s, -s, -s], [0, 0, 0]])
    # (s, -s, -s): u = v = -1/3 folded to ((1 - 1/3) x +1, (1 - 1/3) x -1) = (2/3, -2/3) -> 84.67 -> 85
    expected = [[127, 0], [-127, 0], [0, -127], [0, 0], [127, 127], [42, 42], [85, -85], [NONE, NONE]]
    codes = encode(headings)
    assert codes.dtype == np.int8
    np.testing.assert_array_equal(codes, expected)
    decoded = decode_octahedral(codes)
    np.testing.assert_allclose(decoded[:5], headings[:5], atol=1e-15)
    np.testing.assert_array_equal(decoded[7], [0, 0, 0])


def test_octahedral_error_is_within_the_documented_bound():
    rng = np.random.default_rng(5)
    v = rng.normal(size=(400_000, 3))
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    err = angles_deg(v, decode_octahedral(encode(v)))
    assert err.max() <= MAX_ERROR_DEG
    assert err.max() > 0.85  # the bound is close to what the codes lose (0.955 over 4e7 directions)
    assert MAX_ERROR_DEG < 1.0


def v2_frames() -> list[bytes]:
    birds = Simulation(apply_overrides(load_preset("starlings-3d"), ["agents.n=300", "predator.enabled=true"]), seed=2)
    birds.step(3)
    flat = Simulation(apply_overrides(load_preset("starlings-2d"), ["agents.n=50"]), seed=2)
    flat.step(2)
    return [encode_frame(birds, 9, layout="q16"), encode_frame(flat, 3, layout="q16"), encode_frame(birds, 1)]


NODE_READER = """
import { readFileSync } from "node:fs";
import { readFrame, positionAt, bankAt } from "%s";
const out = process.argv.slice(2).map((path) => {
  const bytes = readFileSync(path);
  const f = readFrame(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
  const positions = [];
  for (let i = 0; i < f.n; i++) for (let a = 0; a < f.dim; a++) positions.push(positionAt(f, i, a));
  return { version: %d, n: f.n, dim: f.dim, layout: f.layout, step: f.step, frameIndex: f.frameIndex,
           positions, headings: Array.from(f.headings), flags: Array.from(f.flags), status: Array.from(f.status),
           bank: f.bank ? Array.from(f.bank, (_, i) => bankAt(f, i)) : null };
});
console.log(JSON.stringify(out));
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node (web/ tests)")
def test_python_frames_read_the_same_in_javascript(tmp_path):
    frames = v2_frames()
    paths = []
    for k, data in enumerate(frames):
        paths.append(tmp_path / f"frame{k}.bin")
        paths[-1].write_bytes(data)
    script = tmp_path / "read.mjs"
    script.write_text(NODE_READER % ((WEB / "src" / "protocol.js").as_uri(), VERSION))
    run = subprocess.run(["node", str(script), *map(str, paths)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    for data, js in zip(frames, json.loads(run.stdout), strict=True):
        py = decode_frame(data)
        assert (js["n"], js["dim"], js["step"], js["frameIndex"]) == (py.n, py.dim, py.step, py.frame_index)
        assert js["layout"] == (1 if py.layout == "q16" else 0)
        sections = SECTION_BANK if py.bank is not None else 0
        assert len(data) == frame_size(py.n, py.dim, py.layout, n_agents=py.n_agents, sections=sections)
        if py.bank is None:
            assert js["bank"] is None
        else:  # the same radians from the same codes
            np.testing.assert_allclose(js["bank"], py.bank, rtol=1e-15, atol=0)
        np.testing.assert_allclose(np.reshape(js["positions"], (py.n, py.dim)), py.positions, rtol=1e-6, atol=1e-9)
        heads = np.reshape(js["headings"], (py.n, py.dim)).astype(np.float64)
        if py.layout == "q16" and py.dim == 2:  # components x 127: normalized by the reader's user
            norm = np.linalg.norm(heads, axis=1, keepdims=True)
            heads = np.divide(heads, norm, out=np.zeros_like(heads), where=norm > 0)
        np.testing.assert_allclose(heads, py.headings, atol=2e-7)  # float32 in the page
        np.testing.assert_array_equal(js["flags"], py.flags)
        np.testing.assert_array_equal(js["status"], np.nan_to_num(py.status, nan=np.nan))
    assert decode_frame(frames[0]).layout == "q16" and decode_frame(frames[0]).dim == 3
    assert decode_frame(frames[0]).bank is not None and decode_frame(frames[1]).bank is None  # 3D banks, 2D not


@pytest.fixture(scope="module")
def client():
    with TestClient(create_app(sps=30)) as c:
        yield c


@pytest.mark.parametrize("query", [QUERY, f"protocol=1&{QUERY}", f"protocol=2&protocol=2&{QUERY}", "protocol=two"])
def test_a_client_of_another_version_gets_one_error_and_no_frame(client, query):
    with client.websocket_connect(f"/ws?{query}") as ws:
        first = json.loads(ws.receive_text())
        assert first["type"] == "error"
        assert first["message"].startswith("protocol: this server sends viewer protocol version 2")
        assert "allowed: protocol=2" in first["message"]
        assert len(first["message"]) <= 500 and "\n" not in first["message"]
        with pytest.raises(WebSocketDisconnect) as closed:
            ws.receive_text()
        assert closed.value.code == CLOSE_PROTOCOL
    assert client.app.state.viewer.connections == 0


def test_a_version_2_client_is_served(client):
    with client.websocket_connect(f"/ws?protocol=2&{QUERY}") as ws:
        hello = json.loads(ws.receive_text())
        while hello["type"] == "compiling":
            hello = json.loads(ws.receive_text())
        assert (hello["type"], hello["version"]) == ("hello", 2)
        message = json.loads(ws.receive_text())
        while message["type"] == "compiling":
            message = json.loads(ws.receive_text())
        assert message["type"] == "params"
        ws.send_text('{"type": "next"}')
        data = ws.receive_bytes()
        assert decode_frame(data).version == 2


def test_refusal_texts():
    assert version_refusal(["2"]) is None
    assert "did not name a version" in version_refusal([])
    assert "reads version '1'" in version_refusal(["1"])
    assert "2 times" in version_refusal(["2", "2"])

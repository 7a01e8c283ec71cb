"""Hostile input never crashes the viewer: arbitrary text, bytes and JSON (hypothesis) sent over one
WebSocket; after each message the connection still answers ``next`` with a valid frame.

Every reply is checked too: text replies are JSON objects of a known type (error messages one line
of at most 500 characters), binary replies decode as frames. Messages are synchronised with a
sentinel: an unknown message type whose error reply names it.
"""

import itertools
import json
import string
import warnings

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

warnings.filterwarnings("ignore", message="Using `httpx` with `starlette.testclient`")

from starlette.testclient import TestClient  # noqa: E402

from flocksim.viewer.controls import FIELDS  # noqa: E402
from flocksim.viewer.protocol import decode_frame  # noqa: E402
from flocksim.viewer.server import create_app  # noqa: E402

TIMEOUT = 900.0  # [s] a first step may compile kernels (minutes on a busy host)
REPLY_TYPES = {"error", "params", "state"}
_counter = itertools.count()


def _receive(ws):
    """The next message, skipping ``compiling`` progress (sent whenever numba compiles)."""

    async def get():
        with anyio.fail_after(TIMEOUT):
            return await ws._send_rx.receive()

    while True:
        message = ws.portal.call(get)
        assert message["type"] == "websocket.send", f"the server closed the socket: {message}"
        if not (message.get("text") or "").startswith('{"type": "compiling"'):
            return message


def _check(message):
    """A reply must be a known JSON object or a decodable frame; returns it parsed."""
    if message.get("text") is not None:
        reply = json.loads(message["text"])
        assert isinstance(reply, dict)
        assert reply.get("type") in REPLY_TYPES, reply
        if reply["type"] == "error":
            assert "\n" not in reply["message"]
            assert 0 < len(reply["message"]) <= 500
        return reply
    return decode_frame(message["bytes"])


def sync(ws):
    """Send a sentinel and read (checking) every reply up to its error."""
    marker = f"sentinel-{next(_counter)}"
    ws.send_text(json.dumps({"type": marker}))
    while True:
        reply = _check(_receive(ws))
        if isinstance(reply, dict) and reply["type"] == "error" and marker in reply["message"]:
            return


def still_answers(ws):
    sync(ws)
    ws.send_text('{"type": "next"}')
    while True:
        reply = _check(_receive(ws))
        if not isinstance(reply, dict):
            assert reply.n_agents <= 500
            return reply


@pytest.fixture(scope="module")
def viewer():
    app = create_app(preset="boids-2d", overrides=["agents.n=60"], sps=0, max_agents=500)
    with TestClient(app) as client, client.websocket_connect("/ws?protocol=2") as ws:
        assert json.loads(_receive(ws)["text"])["type"] == "hello"
        assert _check(_receive(ws))["type"] == "params"
        yield app.state.viewer, ws


def send_and_check(viewer, payload):
    server, ws = viewer
    if isinstance(payload, bytes):
        ws.send_bytes(payload)
    else:
        ws.send_text(payload)
    still_answers(ws)
    assert len(server.sessions) == 1
    (session,) = server.sessions
    assert not session.closed


FUZZ = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=12,
)
KEYS = [
    "agents.n",
    "rules.alignment.weight",
    "rules.separation.radius",
    "neighbors.mode",
    "neighbors.k",
    "predator.enabled",
    "turning.enabled",
    "world.dt",
    "world.dim",
    "world.bounds.size",
    "pointer.turn_rate_deg",
    "obstacles.circles",
    "model",
    "seed",
]
keys = st.sampled_from(KEYS) | st.text(alphabet=string.ascii_letters + "._-", min_size=1, max_size=30)
small_values = (
    st.integers(-5, 600)
    | st.floats(-1e3, 1e3, allow_nan=False)
    | st.sampled_from(["metric", "topological", "reynolds", "box", ""])
    | st.booleans()
    | st.lists(st.floats(1.0, 500.0), max_size=4)
)
coordinate = st.floats(-1e4, 1e4, allow_nan=False)
well_formed = st.one_of(
    st.fixed_dictionaries(
        {"type": st.just("set"), "changes": st.dictionaries(keys, small_values, min_size=1, max_size=3)}
    ),
    st.fixed_dictionaries({"type": st.just("preset"), "name": st.sampled_from(["boids-2d", "starlings-2d", "nope"])}),
    st.fixed_dictionaries({"type": st.just("turn"), "direction": st.sampled_from(["left", "right"])}),
    st.fixed_dictionaries(
        {"type": st.just("pointer"), "mode": st.sampled_from(["attract", "repel", "off"]), "x": coordinate},
        optional={"y": coordinate, "z": coordinate},
    ),
    st.sampled_from([{"type": t} for t in ("pause", "resume", "reset", "next")]),
)
"""Messages of the right shape, mostly valid: they change the simulation between the hostile ones."""
noisy = st.fixed_dictionaries(
    {"type": st.sampled_from([*FIELDS, "bogus"])},
    optional={
        "changes": st.dictionaries(keys, small_values | json_values, max_size=4) | json_values,
        "name": st.sampled_from(["boids-2d", "starlings-2d", "nope", ""]) | json_values,
        "direction": st.sampled_from(["left", "right", "up"]) | json_values,
        "mode": st.sampled_from(["attract", "repel", "off", "on"]) | json_values,
        "x": st.floats(-1e3, 1e3) | json_values,
        "y": st.floats(-1e3, 1e3) | json_values,
        "z": st.floats(-1e3, 1e3) | json_values,
        "extra": json_values,
    },
)
controls = well_formed | noisy


@FUZZ
@given(text=st.text(max_size=400))
def test_arbitrary_text(viewer, text):
    send_and_check(viewer, text)


@FUZZ
@given(data=st.binary(max_size=400))
def test_arbitrary_bytes(viewer, data):
    send_and_check(viewer, data)


@FUZZ
@given(value=json_values)
def test_arbitrary_json(viewer, value):
    send_and_check(viewer, json.dumps(value))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(message=controls)
def test_control_shaped_messages(viewer, message):
    send_and_check(viewer, json.dumps(message))


@settings(max_examples=20, deadline=None)
@given(size=st.integers(65_537, 200_000), binary=st.booleans())
def test_oversized_messages(viewer, size, binary):
    payload = '{"type": "next", "pad": "' + "x" * size + '"}'
    send_and_check(viewer, payload.encode() if binary else payload)


def test_deeply_nested_json(viewer):
    send_and_check(viewer, "[" * 5000 + "]" * 5000)
    send_and_check(
        viewer, json.dumps({"type": "set", "changes": {"obstacles.circles": [[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]}})
    )

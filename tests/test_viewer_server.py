"""The viewer server (flocksim.viewer.server / session): routes, the WebSocket conversation, the guards.

Starlette's TestClient runs the app in a thread; every receive below has a timeout so that a
server that stays silent fails the test instead of hanging it. Small flocks (boids-2d, 60 birds).
"""

import gc
import itertools
import json
import math
import threading
import time
import warnings
import weakref

import anyio
import numpy as np
import pytest

warnings.filterwarnings("ignore", message="Using `httpx` with `starlette.testclient`")

from starlette.testclient import TestClient  # noqa: E402
from starlette.websockets import WebSocketDisconnect  # noqa: E402

from flocksim import load_preset  # noqa: E402
from flocksim.config import MODEL_CLASSES, apply_overrides  # noqa: E402
from flocksim.simulation import Simulation  # noqa: E402
from flocksim.viewer.http import GuardedHttpProtocol  # noqa: E402
from flocksim.viewer.protocol import FLAG_NEIGHBOR, FLAG_SELECTED, decode_frame  # noqa: E402
from flocksim.viewer.server import create_app, is_loopback, origin_allowed  # noqa: E402
from flocksim.viewer.session import StepRate, ViewerSession, same_flock  # noqa: E402

SMALL = "/ws?protocol=2&preset=boids-2d&set=agents.n%3D60"
TIMEOUT = 900.0  # [s] generous: the first step of a model may compile its kernels (minutes on a busy host)


def receive(ws, timeout=TIMEOUT, progress=False):
    """The next message: parsed JSON for text, bytes for a frame; WebSocketDisconnect on close.
    ``compiling`` progress messages (sent whenever numba compiles) are skipped unless ``progress``."""

    async def get():
        with anyio.fail_after(timeout):
            return await ws._send_rx.receive()

    while True:
        message = ws.portal.call(get)
        if message["type"] == "websocket.close":
            raise WebSocketDisconnect(code=message.get("code", 1000), reason=message.get("reason", ""))
        if message.get("text") is None:
            return message["bytes"]
        parsed = json.loads(message["text"])
        if progress or parsed.get("type") != "compiling":
            return parsed


def expect(ws, kind):
    message = receive(ws)
    assert isinstance(message, dict), f"expected a {kind} message, got a binary frame"
    assert message["type"] == kind, message
    return message


def frame(ws):
    ws.send_text('{"type": "next"}')
    data = receive(ws)
    assert isinstance(data, bytes), f"expected a frame, got {data}"
    return decode_frame(data)


def opened(ws):
    """Read hello and the first params; return the params message."""
    expect(ws, "hello")
    return expect(ws, "params")


def send(ws, **message):
    ws.send_text(json.dumps(message))


@pytest.fixture
def client():
    with TestClient(create_app(sps=0, port=8000)) as c:
        yield c


def server_of(client):
    return client.app.state.viewer


# ------------------------------------------------------------------------------ HTTP


def test_api_presets_and_schema(client):
    presets = client.get("/api/presets").json()
    names = [p["name"] for p in presets]
    assert "starlings-3d" in names
    assert "boids-2d" in names
    star = next(p for p in presets if p["name"] == "starlings-3d")
    assert star["model"] == "reynolds"
    assert star["dim"] == 3
    assert star["n"] == load_preset("starlings-3d").agents.n
    assert star["description"]
    schema = client.get("/api/schema").json()
    assert sorted(schema) == sorted(MODEL_CLASSES)
    weight = schema["reynolds"]["$defs"]["Alignment"]["properties"]["weight"]
    assert weight["unit"] == "dimensionless"
    assert "minimum" in weight


def test_page_missing_gives_503_with_the_setup_hint(tmp_path):
    with TestClient(create_app(static_dir=tmp_path)) as c:
        r = c.get("/")
        assert r.status_code == 503
        assert "./dev.sh setup" in r.text
        assert len(r.text.strip().splitlines()) == 1
        assert c.get("/assets/main.js").status_code == 404


def test_built_page_and_assets_are_served(tmp_path):
    (tmp_path / "assets").mkdir()
    (tmp_path / "index.html").write_text("<!doctype html><title>flocksim</title>")
    (tmp_path / "assets" / "main.js").write_text("console.log(1)")
    with TestClient(create_app(static_dir=tmp_path)) as c:
        assert "flocksim" in c.get("/").text
        js = c.get("/assets/main.js")
        assert js.status_code == 200
        assert js.text == "console.log(1)"
        assert c.get("/assets/nope.js").status_code == 404


# ------------------------------------------------------------------------------ the conversation


def test_hello_then_params(client):
    with client.websocket_connect(SMALL) as ws:
        hello = expect(ws, "hello")
        assert hello["version"] == 2
        assert hello["limits"] == {"max_agents": 200_000, "max_control_bytes": 65536, "max_pairs": 10_000_000}
        assert hello["images"] == []
        assert {p["name"] for p in hello["presets"]} >= {"boids-2d", "starlings-3d"}
        assert sorted(hello["schemas"]) == sorted(MODEL_CLASSES)
        params = expect(ws, "params")
        assert params["preset"] == "boids-2d"
        assert params["model"] == "reynolds"
        assert params["dim"] == 2
        assert params["params"]["agents"]["n"] == 60
        assert params["reset"] is True
        assert params["paused"] is False
        assert params["engine"]["name"] == "cpu" and params["engine"]["threads"] >= 1
        assert params["engine"]["layer"] in {"tbb", "omp", "workqueue", "none"}


def test_frames_decode_and_never_repeat_a_step_while_running():
    # 10 steps/s: a client asking faster must wait for each new step, never get one twice
    with TestClient(create_app(sps=10)) as c, c.websocket_connect(SMALL) as ws:
        opened(ws)
        frames = [frame(ws) for _ in range(6)]
    assert [f.frame_index for f in frames] == list(range(6))
    steps = [f.step for f in frames]
    assert all(b > a for a, b in itertools.pairwise(steps)), steps
    last = frames[-1]
    assert last.dim == 2
    assert last.n_agents == 60
    assert len(last.having(FLAG_SELECTED)) == 1
    assert len(last.having(FLAG_NEIGHBOR)) == 7
    assert math.isclose(last.time, last.step / 60.0)
    status = last.status_dict
    assert 0.0 <= status["polarization"] <= 1.0
    assert status["remaining"] == 60
    assert status["steps_per_second"] > 0


def test_set_keeps_the_flock_and_n_refills(client):
    with client.websocket_connect(SMALL) as ws:
        opened(ws)
        send(ws, type="pause")
        assert expect(ws, "state") == {"type": "state", "paused": True}
        before = frame(ws)
        send(ws, type="set", changes={"rules.alignment.weight": 0.5})
        params = expect(ws, "params")
        assert params["reset"] is False
        assert params["preset"] is None
        assert params["paused"] is True
        assert params["params"]["rules"]["alignment"]["weight"] == 0.5
        after = frame(ws)
        assert after.step == before.step
        np.testing.assert_array_equal(after.positions, before.positions)
        send(ws, type="set", changes={"agents.n": 30})
        params = expect(ws, "params")
        assert params["reset"] is True
        refilled = frame(ws)
        assert refilled.n_agents == 30
        assert refilled.frame_index == after.frame_index + 1


def test_preset_switches_the_scene(client):
    with client.websocket_connect(SMALL) as ws:
        opened(ws)
        send(ws, type="preset", name="starlings-2d")
        params = expect(ws, "params")
        assert params["preset"] == "starlings-2d"
        assert params["reset"] is True
        assert params["params"]["neighbors"]["mode"] == "topological"
        f = frame(ws)
        assert f.n_agents == load_preset("starlings-2d").agents.n
        assert f.status_dict["mean_neighbors"] == 7.0


def test_reset_refills_and_steps_restart(client):
    with client.websocket_connect(SMALL) as ws:
        opened(ws)
        for _ in range(5):
            running = frame(ws)
        send(ws, type="pause")
        expect(ws, "state")
        send(ws, type="reset")
        params = expect(ws, "params")
        assert params["reset"] is True
        assert params["preset"] == "boids-2d"
        fresh = frame(ws)
        assert fresh.step == 0
        assert fresh.frame_index > running.frame_index


def test_pause_holds_the_state_and_resume_continues(client):
    with client.websocket_connect(SMALL) as ws:
        opened(ws)
        send(ws, type="pause")
        expect(ws, "state")
        a, b = frame(ws), frame(ws)
        assert a.step == b.step
        assert b.status_dict["steps_per_second"] == 0.0
        time.sleep(0.2)
        assert frame(ws).step == a.step
        send(ws, type="resume")
        assert expect(ws, "state") == {"type": "state", "paused": False}
        assert frame(ws).step > a.step


def _heading_angle(f):
    h = f.headings[f.having(FLAG_SELECTED)[0]]
    return math.atan2(h[1], h[0])


@pytest.mark.parametrize(("direction", "degrees"), [("left", 120.0), ("right", -120.0)])
def test_turn_rotates_the_selected_birds(client, direction, degrees):
    with client.websocket_connect(SMALL) as ws:
        opened(ws)
        send(ws, type="pause")
        expect(ws, "state")
        before = frame(ws)
        send(ws, type="turn", direction=direction)
        after = frame(ws)
    turned = math.degrees(_heading_angle(after) - _heading_angle(before))
    turned = (turned + 180.0) % 360.0 - 180.0
    assert turned == pytest.approx(degrees, abs=0.01)
    assert after.step == before.step


def test_pointer_attract_turns_the_flock_toward_the_point(client):
    with client.websocket_connect(SMALL) as ws:
        opened(ws)
        start = frame(ws)
        point = start.positions[: start.n_agents].mean(axis=0) + np.array([200.0, 0.0])
        send(ws, type="pointer", mode="attract", x=float(point[0]), y=float(point[1]))
        (session,) = server_of(client).sessions
        for _ in range(400):  # 1 s of simulated time: up to a 90 degree turn at the default rate
            later = frame(ws)
            if later.step >= start.step + 60:
                break
        pointer = next(c for c in session.sim.components if c.name == "pointer")
        assert pointer.mode == "attract"
        np.testing.assert_allclose(pointer.point, point)
        send(ws, type="pointer", mode="off")
        frame(ws)
        assert pointer.mode == "off"

    def facing(f):
        h = f.headings[: f.n_agents]
        d = point - f.positions[: f.n_agents]
        return np.mean(np.einsum("ij,ij->i", h, d) / np.linalg.norm(d, axis=1))

    assert facing(later) > facing(start) + 0.3


def test_the_camera_moves_the_level_of_detail_focus_only_when_detail_is_on(client):
    with client.websocket_connect(SMALL) as ws:
        opened(ws)
        frame(ws)
        (session,) = server_of(client).sessions
        send(ws, type="view", x=10.0, y=20.0)  # no level of detail: nothing to move, no error
        frame(ws)
        assert not any(c.name == "detail" for c in session.sim.components)
        send(ws, type="set", changes={"detail.enabled": True, "detail.near": 100.0})
        assert expect(ws, "params")["params"]["detail"]["enabled"] is True
        send(ws, type="view", x=10.0, y=20.0)
        frame(ws)
        detail = next(c for c in session.sim.components if c.name == "detail")
        np.testing.assert_array_equal(detail.focus, [10.0, 20.0])
        assert detail.direction is None


def test_a_huge_view_direction_from_the_socket_keeps_its_axis(client):
    """dx = dy = 1e308 has no finite length: the cone's axis used to become [0, 0]."""
    with client.websocket_connect(SMALL) as ws:
        opened(ws)
        frame(ws)
        (session,) = server_of(client).sessions
        send(ws, type="set", changes={"detail.enabled": True, "detail.near": 100.0})
        assert expect(ws, "params")["params"]["detail"]["enabled"] is True
        send(ws, type="view", x=10.0, y=20.0, dx=1e308, dy=-1e308)
        frame(ws)
        detail = next(c for c in session.sim.components if c.name == "detail")
        np.testing.assert_allclose(detail.direction, [math.sqrt(0.5), -math.sqrt(0.5)], rtol=0, atol=1e-15)


def test_invalid_messages_get_errors_and_the_simulation_goes_on(client):
    bad = [
        "not json",
        "[1, 2]",
        '{"type": "fly"}',
        '{"type": "set", "changes": {"agents.n": -1}}',
        '{"type": "set", "changes": {"rules.nope": 1}}',
        '{"type": "set", "changes": {"rules.alignment.weight": null}}',
        '{"type": "pointer", "mode": "attract", "x": 1}',
        '{"type": "turn", "direction": "up"}',
        '{"type": "preset", "name": "nope"}',
        '{"type": "next", "extra": 1}',
        '{"type": "set", "changes": {"world.dt": NaN}}',
    ]
    with client.websocket_connect(SMALL) as ws:
        opened(ws)
        first = frame(ws)
        for text in bad:
            ws.send_text(text)
            error = expect(ws, "error")
            assert "\n" not in error["message"]
            assert len(error["message"]) <= 500
        ws.send_bytes(b"\xff\xfe")
        assert "UTF-8" in expect(ws, "error")["message"]
        ws.send_text('{"type": "next", "pad": "' + "x" * 70_000 + '"}')
        assert "65536" in expect(ws, "error")["message"]
        ws.send_bytes(b'{"type": "next"}')  # JSON as UTF-8 bytes is read as text
        assert isinstance(receive(ws), bytes)
        last = frame(ws)
    assert last.step > first.step
    assert last.n_agents == 60


def test_error_messages_name_the_field_and_the_allowed_values(client):
    with client.websocket_connect(SMALL) as ws:
        opened(ws)
        send(ws, type="set", changes={"rules.alignment.weight": -1})
        message = expect(ws, "error")["message"]
    assert message.startswith("rules.alignment.weight:")
    assert "allowed" in message


def test_turn_with_the_selected_bird_dead_is_an_error(client):
    with client.websocket_connect(SMALL) as ws:
        opened(ws)
        send(ws, type="pause")
        expect(ws, "state")
        frame(ws)  # after the step that may have been in flight at the pause
        (session,) = server_of(client).sessions
        session.sim.state.alive[session.sim.state.ids == 0] = False
        session.sim.invalidate_queries()
        send(ws, type="turn", direction="left")
        assert "not alive" in expect(ws, "error")["message"]
        assert frame(ws).n_agents == 59


def test_a_bad_query_shows_an_error_and_the_default_scene(client):
    with client.websocket_connect("/ws?protocol=2&preset=nope&set=agents.n%3D50") as ws:
        expect(ws, "hello")
        params = expect(ws, "params")
        assert params["preset"] == "starlings-3d"
        message = expect(ws, "error")["message"]
    assert message.startswith("preset: unknown preset 'nope'")
    with client.websocket_connect("/ws?protocol=2&preset=boids-2d&set=agents.n%3Dlots") as ws:
        expect(ws, "hello")
        expect(ws, "params")
        assert expect(ws, "error")["message"].startswith("agents.n:")


# ------------------------------------------------------------------------------ guards


@pytest.mark.parametrize(
    ("origin", "allowed"),
    [
        (None, True),
        ("http://127.0.0.1:8000", True),
        ("http://localhost:8000", True),
        ("http://[::1]:8000", True),
        ("https://localhost:8000", True),
        ("http://evil.example", False),
        ("http://evil.example:8000", False),
        ("http://127.0.0.1:9000", False),
        ("http://localhost", False),
        ("null", False),
        ("file://", False),
        ("http://127.0.0.1:bad", False),
    ],
)
def test_origin_check(origin, allowed):
    assert origin_allowed(origin, "127.0.0.1:8000", "127.0.0.1", 8000) is allowed


def test_origin_on_other_interfaces():
    # bound to all interfaces: the IP the client reached is fine, a name (DNS rebinding) is not
    assert origin_allowed("http://192.168.1.5:8000", "192.168.1.5:8000", "0.0.0.0", 8000)
    assert not origin_allowed("http://rebind.example:8000", "rebind.example:8000", "0.0.0.0", 8000)
    assert not origin_allowed("http://192.168.1.6:8000", "192.168.1.5:8000", "0.0.0.0", 8000)
    assert origin_allowed("http://viewer.lan:8000", None, "viewer.lan", 8000)
    assert is_loopback("127.0.0.1")
    assert is_loopback("::1")
    assert is_loopback("localhost")
    assert not is_loopback("0.0.0.0")
    assert not is_loopback("192.168.1.5")


def test_foreign_origin_is_refused_with_1008(client):
    with (
        pytest.raises(WebSocketDisconnect) as refused,
        client.websocket_connect(SMALL, headers={"origin": "http://evil.example"}),
    ):
        pass
    assert refused.value.code == 1008
    assert not server_of(client).sessions
    with client.websocket_connect(SMALL, headers={"origin": "http://127.0.0.1:8000"}) as ws:
        assert opened(ws)["preset"] == "boids-2d"


def test_connection_cap_answers_1013():
    with TestClient(create_app(sps=0, max_connections=1)) as c, c.websocket_connect(SMALL) as first:
        opened(first)
        with c.websocket_connect(SMALL) as second:
            message = expect(second, "error")["message"]
            assert "--max-connections" in message
            with pytest.raises(WebSocketDisconnect) as closed:
                receive(second)
            assert closed.value.code == 1013
        assert isinstance(frame(first), object)  # the first one is unaffected


def test_agent_cap():
    app = create_app(preset="boids-2d", overrides=["agents.n=60"], sps=0, max_agents=100)
    with TestClient(app) as c:
        with c.websocket_connect("/ws?protocol=2&preset=boids-2d&set=agents.n%3D500") as ws:
            assert expect(ws, "hello")["limits"]["max_agents"] == 100
            expect(ws, "params")
            message = expect(ws, "error")["message"]
            assert message.startswith("agents.n:")
            assert "0 to 100" in message
        with c.websocket_connect(SMALL) as ws:
            opened(ws)
            send(ws, type="set", changes={"agents.n": 101})
            assert "allowed: 0 to 100" in expect(ws, "error")["message"]
            send(ws, type="preset", name="starlings-2d")  # 500 birds
            assert expect(ws, "error")["message"].startswith("agents.n:")
            assert frame(ws).n_agents == 60


def test_server_defaults_are_checked():
    with pytest.raises(ValueError, match="allowed: 0 to 100"):
        create_app(max_agents=100)  # starlings-3d has 500
    with pytest.raises(ValueError, match=r"agents\.n"):
        create_app(overrides=["agents.n=300000"])
    with pytest.raises(ValueError, match="preset: unknown preset"):
        create_app(preset="nope")
    with pytest.raises(ValueError, match=r"rules\.nope"):
        create_app(overrides=["rules.nope=1"])


def _viewer_threads():
    return [t for t in threading.enumerate() if t.name.startswith("flocksim-viewer")]


def test_disconnect_mid_frame_frees_the_simulation(client):
    viewer = server_of(client)
    with client.websocket_connect(SMALL) as ws:
        opened(ws)
        frame(ws)
        (session,) = viewer.sessions
        sim_ref = weakref.ref(session.sim)
        steps = session.sim.steps
        assert steps > 0
        ws.send_text('{"type": "next"}')
        ws.close()  # without reading the frame
        deadline = time.monotonic() + 30
        while viewer.sessions and time.monotonic() < deadline:
            time.sleep(0.02)
    assert not viewer.sessions
    assert viewer.connections == 0
    assert session.closed
    assert session.sim is None
    deadline = time.monotonic() + 30
    while (sim_ref() is not None or _viewer_threads()) and time.monotonic() < deadline:
        gc.collect()
        time.sleep(0.05)
    assert sim_ref() is None, "the simulation is still referenced"
    assert not _viewer_threads(), "the session's worker thread still runs"


def test_steps_are_paced_by_sps():
    with TestClient(create_app(sps=20)) as c, c.websocket_connect(SMALL) as ws:
        opened(ws)
        first = frame(ws)
        started = time.monotonic()
        while time.monotonic() - started < 1.0:
            last = frame(ws)
        elapsed = time.monotonic() - started
    rate = (last.step - first.step) / elapsed
    assert rate <= 24.0
    assert last.status_dict["steps_per_second"] <= 24.0


# ------------------------------------------------------------------------------ session helpers


def test_step_rate_measures_the_last_second():
    rate = StepRate()
    assert rate.rate == 0.0
    for k in range(50):
        rate.tick(now=k * 0.01)
    assert rate.rate == pytest.approx(100.0)
    rate.tick(now=10.0)  # a long gap: the window keeps the last two steps
    assert rate.rate == pytest.approx(1 / (10.0 - 0.49))
    rate.clear()
    assert rate.rate == 0.0


def test_same_flock_rule():
    base = apply_overrides(load_preset("boids-2d"), ["agents.n=60"])
    assert same_flock(base, apply_overrides(base, ["rules.cohesion.weight=2"]))
    assert same_flock(base, apply_overrides(base, ["predator.enabled=true"]))
    assert not same_flock(base, apply_overrides(base, ["agents.n=61"]))
    assert not same_flock(base, apply_overrides(base, ["world.dt=0.02"]))
    assert not same_flock(base, apply_overrides(base, ["model=abm-flocking"]))


def test_topological_mean_neighbours_match_the_search():
    for n, dead in ((60, 0), (5, 0), (40, 36)):
        params = apply_overrides(load_preset("starlings-2d"), [f"agents.n={n}"])
        sim = Simulation(params)
        sim.state.alive[:dead] = False
        session = ViewerSession(send=None, sps=0)
        counts = sim.neighbors().counts[sim.state.alive]
        assert session._mean_neighbors(sim) == pytest.approx(counts.mean())
        session.stop()


# ------------------------------------------------------------------------------ flocksim serve


def serve(*args):
    from typer.testing import CliRunner

    from flocksim.cli import app

    return CliRunner().invoke(app, ["serve", *[str(a) for a in args]], catch_exceptions=False)


def _free_port():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--preset", "nope"], "error: preset: unknown preset 'nope'"),
        (["--set", "agents.n=300000"], "error: agents.n: 300000 is more than this server allows"),
        (["--max-agents", "100"], "error: agents.n: 500 is more than this server allows"),
        (["--set", "rules.nope=1"], "error: rules.nope: unknown key"),
        (["--threads", "100000"], "error: --threads: must be between 1 and"),
        (["--sps", "-1"], "error: Invalid value for '--sps'"),
        (["--sps", "nan"], "error: Invalid value for '--sps': must be a finite number from 0 to 100000"),
        (["--sps", "inf"], "error: Invalid value for '--sps': must be a finite number from 0 to 100000"),
        (["--max-pairs", "0"], "error: Invalid value for '--max-pairs'"),
        (["--port", "70000"], "error: Invalid value for '--port'"),
    ],
)
def test_serve_rejects_bad_input_in_one_line(args, message):
    result = serve(*args)
    assert result.exit_code == 2
    text = result.output.strip()
    assert text.startswith(message), text
    assert len(text.splitlines()) == 1


def test_serve_port_in_use_is_one_line_exit_2():
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = serve("--port", port)
    assert result.exit_code == 2
    assert (
        result.output.strip()
        == f"error: --port: 127.0.0.1:{port} is already in use; allowed: a free port, e.g. --port {port + 1}"
    )


def test_serve_warns_on_public_hosts_and_opens_the_browser(monkeypatch):
    import uvicorn

    ran, opened_urls = [], []

    def fake_run(self, sockets=None):
        ran.append((self.config, [sock.getsockname()[1] for sock in sockets]))
        self.started = True
        time.sleep(0.5)  # the --open thread sees the server up

    monkeypatch.setattr(uvicorn.Server, "run", fake_run)
    monkeypatch.setattr("webbrowser.open", opened_urls.append)
    port = _free_port()
    result = serve("--host", "0.0.0.0", "--port", port, "--open")
    assert result.exit_code == 0, result.output
    assert "WARNING: serving on 0.0.0.0" in result.output
    assert f"http://127.0.0.1:{port}/" in result.output
    assert opened_urls == [f"http://127.0.0.1:{port}/"]
    config, ports = ran[0]
    assert config.ws_max_size == 65536
    assert config.ws_per_message_deflate is False
    assert issubclass(config.http, GuardedHttpProtocol)  # half-sent requests are timed out
    assert ports == [port]
    quiet = serve("--port", _free_port())
    assert quiet.exit_code == 0
    assert "WARNING" not in quiet.output

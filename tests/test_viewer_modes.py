"""The viewer server's 2D/3D modes, forced spontaneous turns and compile progress (issue 16).

Each connection keeps one simulation per mode: ``{"type": "mode", "dim": d}`` parks the current
one (it stops stepping) and resumes the other, or builds it from the scene's twin preset
(``NAME-2d`` / ``NAME-3d``) or, without a twin, from the current parameters carried to the other
dimension. ``{"type": "wave", "delay": s}`` schedules a spontaneous turn. While numba compiles,
``compiling`` messages report progress; the first scene's kernels are compiled ahead
(flocksim.viewer.warmup). Same harness as tests/test_viewer_server.py.
"""

import json
import math
import socket
import time

import numpy as np
import pytest
from numba.core import event
from starlette.testclient import TestClient

from flocksim import load_preset
from flocksim.viewer.protocol import FLAG_TURNING
from flocksim.viewer.server import create_app
from test_viewer_server import expect, frame, opened, receive, send, server_of

SMALL = "/ws?protocol=2&preset=boids-2d&set=agents.n%3D60"
STAR3 = "/ws?protocol=2&preset=starlings-3d-reference&set=agents.n%3D60"


@pytest.fixture
def client():
    with TestClient(create_app(sps=0, port=8000)) as c:
        yield c


def pause(ws):
    send(ws, type="pause")
    assert expect(ws, "state")["paused"] is True


def fly_then_switch(ws, dim):
    """A few frames, pause, the frame left behind; then switch to ``dim``: (that frame, params)."""
    for _ in range(3):
        frame(ws)
    pause(ws)
    left = frame(ws)
    send(ws, type="mode", dim=dim)
    return left, expect(ws, "params")


def test_params_name_the_origin_and_whether_it_was_modified(client):
    with client.websocket_connect(SMALL) as ws:
        params = opened(ws)
        assert (params["preset"], params["origin"], params["modified"]) == ("boids-2d", "boids-2d", True)
        assert params["parked"] == []
        send(ws, type="preset", name="starlings-2d-reference")
        params = expect(ws, "params")
        assert (params["preset"], params["origin"], params["modified"]) == (
            "starlings-2d-reference",
            "starlings-2d-reference",
            False,
        )
        send(ws, type="set", changes={"rules.cohesion.weight": 2.0})
        params = expect(ws, "params")
        assert (params["preset"], params["origin"], params["modified"]) == (None, "starlings-2d-reference", True)


def test_twin_preset_after_a_change_and_back_resumes_the_parked_flock(client):
    """starlings-3d-reference, a change, 2D: starlings-2d-reference's own world (not the ellipsoid cut to 2D); back to
    3D: the parked 3D flock exactly where it was, with the change."""
    with client.websocket_connect(STAR3) as ws:
        opened(ws)
        send(ws, type="set", changes={"rules.separation.weight": 2.5})
        expect(ws, "params")
        left, params = fly_then_switch(ws, 2)
        assert params["dim"] == 2 and params["reset"] is True
        assert params["preset"] == "starlings-2d-reference" and params["modified"] is False
        assert params["params"]["world"]["bounds"]["size"] == [960.0, 540.0]
        assert params["params"]["description"] == load_preset("starlings-2d-reference").description
        assert params["parked"] == [3]
        send(ws, type="resume")
        expect(ws, "state")
        steps_2d = [frame(ws).step for _ in range(5)]
        assert steps_2d[-1] > 0
        pause(ws)
        send(ws, type="mode", dim=3)
        params = expect(ws, "params")
        assert params["dim"] == 3 and params["reset"] is False
        assert (params["preset"], params["origin"], params["modified"]) == (None, "starlings-3d-reference", True)
        assert params["params"]["world"]["bounds"]["size"] == [520.0, 260.0, 420.0]
        assert params["params"]["rules"]["separation"]["weight"] == 2.5
        assert params["parked"] == [2]
        back = frame(ws)
    assert back.dim == 3
    assert back.step == left.step  # parked: it did not step while 2D ran
    np.testing.assert_array_equal(back.positions, left.positions)


def test_a_scene_without_twin_is_carried_to_the_other_dimension(client):
    with client.websocket_connect(SMALL) as ws:
        opened(ws)
        left, params = fly_then_switch(ws, 3)
        bounds = params["params"]["world"]["bounds"]
        assert params["dim"] == 3 and params["reset"] is True
        assert bounds["size"] == [400.0, 250.0, 250.0]  # a third side equal to the smaller one
        assert (params["preset"], params["origin"], params["modified"]) == (None, "boids-2d", True)
        assert "3D" in params["params"]["description"]
        assert frame(ws).dim == 3
        send(ws, type="mode", dim=2)
        params = expect(ws, "params")
        assert params["reset"] is False and params["dim"] == 2
        assert params["params"]["world"]["bounds"]["size"] == [400.0, 250.0]
        assert frame(ws).step == left.step
        send(ws, type="mode", dim=2)  # already 2D: nothing changes
        params = expect(ws, "params")
        assert params["reset"] is False and params["parked"] == [3]


def test_a_preset_drops_the_parked_mode(client):
    with client.websocket_connect(STAR3) as ws:
        opened(ws)
        send(ws, type="mode", dim=2)
        assert expect(ws, "params")["parked"] == [3]
        send(ws, type="preset", name="boids-2d")
        assert expect(ws, "params")["parked"] == []
        send(ws, type="mode", dim=3)
        params = expect(ws, "params")
        assert params["reset"] is True and params["origin"] == "boids-2d"


def test_both_modes_together_stay_within_the_agent_cap():
    """A connection's simulations together hold at most --max-agents agents: a parked mode that
    would exceed it is dropped (its next visit starts afresh)."""
    app = create_app(preset="boids-2d", overrides=["agents.n=60"], sps=0, max_agents=700)
    with (
        TestClient(app) as c,
        c.websocket_connect("/ws?protocol=2&preset=starlings-2d-reference&set=agents.n%3D300") as ws,
    ):
        opened(ws)
        send(ws, type="mode", dim=3)  # starlings-3d-reference: 500 birds, 300 + 500 > 700
        params = expect(ws, "params")
        assert params["params"]["agents"]["n"] == 500 and params["parked"] == []
        send(ws, type="set", changes={"agents.n": 200})
        expect(ws, "params")
        send(ws, type="mode", dim=2)  # a fresh starlings-2d-reference (500) + the parked 200 <= 700
        params = expect(ws, "params")
        assert params["reset"] is True and params["parked"] == [3]
        send(ws, type="set", changes={"agents.n": 600})  # 600 + 200 > 700: the 3D flock goes
        params = expect(ws, "params")
        assert params["params"]["agents"]["n"] == 600 and params["parked"] == []
        (session,) = server_of(c).sessions
        assert sum(s.state.n for s in session.simulations()) <= 700


def test_a_new_mode_is_built_within_the_servers_budgets():
    """A mode's simulation is built like any other: over --max-pairs it is refused with one error
    and the shown mode goes on unchanged (7 nearest of 60 birds: 420 pairs; of 500: 3500)."""
    app = create_app(preset="starlings-2d-reference", overrides=["agents.n=60"], sps=0, max_pairs=1000)
    with TestClient(app) as c, c.websocket_connect("/ws?protocol=2") as ws:
        opened(ws)
        send(ws, type="mode", dim=3)  # the twin starlings-3d-reference: 500 birds
        message = expect(ws, "error")["message"]
        assert "3,500" in message and "1,000 pairs" in message, message
        assert frame(ws).n_agents == 60
        (session,) = server_of(c).sessions
        assert session.sim.params.world.dim == 2 and session.modes.dims == []
        send(ws, type="set", changes={"agents.n": 40})
        params = expect(ws, "params")
        assert params["dim"] == 2 and params["params"]["agents"]["n"] == 40


@pytest.mark.parametrize(
    ("message", "words"),
    [
        ({"type": "mode"}, "mode: missing field 'dim'"),
        ({"type": "mode", "dim": 4}, "mode.dim: allowed: 2, 3"),
        ({"type": "mode", "dim": "3"}, "mode.dim: allowed: 2, 3"),
        ({"type": "wave", "delay": -1}, "wave.delay"),
        ({"type": "wave", "delay": 61}, "wave.delay"),
        ({"type": "wave", "delay": True}, "wave.delay"),
        ({"type": "wave", "extra": 1}, "wave: unknown field"),
    ],
)
def test_bad_mode_and_wave_messages_get_one_line_errors(client, message, words):
    with client.websocket_connect(SMALL) as ws:
        opened(ws)
        send(ws, **message)
        assert words in expect(ws, "error")["message"]
        assert frame(ws).n_agents == 60  # the simulation goes on


def _turning_birds(f):
    return int(np.count_nonzero(f.flags[: f.n_agents] & FLAG_TURNING))


def test_wave_starts_a_spontaneous_turn_after_the_delay(client):
    quiet = "/ws?protocol=2&preset=starlings-2d-reference&set=agents.n%3D60&set=turning.mean_interval%3D100000"
    with client.websocket_connect(quiet) as ws:
        opened(ws)
        pause(ws)
        start = frame(ws)
        assert _turning_birds(start) == 0
        send(ws, type="wave", delay=1.0)
        send(ws, type="resume")
        expect(ws, "state")
        for _ in range(2000):
            f = frame(ws)
            if _turning_birds(f):
                break
        (session,) = server_of(client).sessions
        turning = next(c for c in session.sim.components if c.name == "turning")
    assert _turning_birds(f) > 0
    assert 1.0 <= f.time - start.time <= 1.0 + 0.2
    assert turning.waves == 1


def test_wave_needs_spontaneous_turning_on(client):
    off = "/ws?protocol=2&preset=starlings-2d-reference&set=agents.n%3D60&set=turning.enabled%3Dfalse"
    with client.websocket_connect(off) as ws:
        opened(ws)
        send(ws, type="wave")
        message = expect(ws, "error")["message"]
        assert "turning.enabled" in message
    with client.websocket_connect("/ws?protocol=2&preset=vicsek&set=agents.n%3D60") as ws:
        opened(ws)
        send(ws, type="wave")
        assert "spontaneous turns" in expect(ws, "error")["message"]


def test_turning_switched_on_mid_run_waits_for_its_first_interval(client):
    """A turning component switched on at time t schedules its first wave an exponential interval
    after t (mean 6 s here), not at time 0: switched on after 60 s it would otherwise start a wave
    at once (probability 1 - exp(-10))."""
    off = "/ws?protocol=2&preset=starlings-2d-reference&set=agents.n%3D60&set=turning.enabled%3Dfalse"
    with client.websocket_connect(off) as ws:
        opened(ws)
        (session,) = server_of(client).sessions
        deadline = time.monotonic() + 300
        while session.sim.time < 60.0 and time.monotonic() < deadline:  # stepping as fast as it goes
            time.sleep(0.05)
        pause(ws)
        send(ws, type="set", changes={"turning.enabled": True})
        assert expect(ws, "params")["reset"] is False
        turning = next(c for c in session.sim.components if c.name == "turning")
        assert turning.next_event > session.sim.time >= 60.0
        assert turning.waves == 0


def test_compiling_is_reported_while_numba_compiles(client):
    """numba's compile events (a real compile sends the same) become ``compiling`` messages:
    active with the kernels compiled so far and the seconds since it began, then inactive."""
    with client.websocket_connect(SMALL) as ws:
        opened(ws)
        frame(ws)  # the session's own kernels are ready: no real compile from here on
        data = {"dispatcher": None, "args": (), "return_type": None}
        event.start_event("numba:compile", data=data)
        try:
            message = receive(ws, timeout=30, progress=True)  # at most a second later
            assert message["type"] == "compiling" and message["active"] is True, message
            assert message["kernels"] >= 0 and message["seconds"] >= 0
        finally:
            event.end_event("numba:compile", data=data)
        deadline = time.monotonic() + 30
        while True:
            message = receive(ws, timeout=30, progress=True)
            assert isinstance(message, dict) and message["type"] == "compiling", message
            if not message["active"]:
                break
            assert time.monotonic() < deadline
        assert message["kernels"] >= 1
        assert math.isfinite(message["seconds"])


def test_warm_up_compiles_a_scene_once_per_source_version(tmp_path, monkeypatch, capsys):
    """``python -m flocksim.viewer.warmup PRESET`` (run by ./dev.sh setup) runs the scene as a
    session does, then leaves a stamp in the numba cache folder (keyed on the sources): the next
    call does nothing."""
    from flocksim.viewer import warmup

    calls = []
    real = warmup.warm_up
    monkeypatch.setattr(warmup, "_stamp", lambda name: tmp_path / f"viewer-warm-{name}.stamp")
    monkeypatch.setattr(warmup, "warm_up", lambda params, **kw: calls.append((params.model, kw)) or real(params, **kw))
    assert warmup.main(["boids-2d"]) == 0
    assert (tmp_path / "viewer-warm-boids-2d.stamp").exists()
    assert "kernels ready" in capsys.readouterr().out
    assert warmup.main(["boids-2d"]) == 0
    assert calls == [("reynolds", {"name": "boids-2d"})]
    assert capsys.readouterr().out == ""


def test_serve_warms_its_first_scene_up_in_the_background(monkeypatch):
    import uvicorn
    from typer.testing import CliRunner

    from flocksim.cli import app
    from flocksim.viewer import warmup

    warmed = []
    monkeypatch.setattr(uvicorn.Server, "run", lambda self, sockets=None: None)
    monkeypatch.setattr(warmup, "warm_up_in_background", lambda params, **options: warmed.append((params, options)))
    with socket.socket() as s:  # a free port
        s.bind(("127.0.0.1", 0))
        port = str(s.getsockname()[1])
    result = CliRunner().invoke(app, ["serve", "--port", port, "--preset", "boids-2d", "--set", "agents.n=30"])
    assert result.exit_code == 0, result.output
    options = {"engine": "cpu", "threads": None, "name": "boids-2d"}  # the page names the scene it compiles
    assert [(p.agents.n, p.world.dim, o) for p, o in warmed] == [(30, 2, options)]


def test_dimension_changes_and_twins_by_hand():
    from types import SimpleNamespace

    from flocksim.viewer.modes import Parked, ParkedModes, dimension_changes, twin_preset

    params = {
        "description": "d",
        "world": {"dim": 2, "bounds": {"kind": "box", "size": [40.0, 20.0]}},
        "agents": {"planar": False},
        "obstacles": {
            "circles": [{"center": [1.0, 2.0], "body_radius": 1.0}],
            "segments": [{"a": [0.0, 0.0], "b": [4.0, 0.0], "body_radius": 0.5}],
            "boxes": [{"min_corner": [1.0, 1.0], "max_corner": [3.0, 2.0], "body_radius": 0.0}],
        },
        "rules": {
            "seek": {"target": [5.0, 5.0], "route": [[1.0, 1.0]], "group_targets": []},
            "roost": {"weight": 1.0, "center": [3.0, 4.0]},
        },
    }
    c = dimension_changes(params, 3)
    assert c["world.dim"] == 3 and c["world.bounds.size"] == [40.0, 20.0, 20.0]  # third side = smaller side
    assert c["obstacles.circles"][0]["center"] == [1.0, 2.0, 10.0]  # middle height of a box world
    assert c["obstacles.segments"][0]["b"] == [4.0, 0.0, 10.0]
    assert c["obstacles.boxes"][0]["min_corner"] == [1.0, 1.0, 5.0]  # middle -/+ a quarter of the height
    assert c["obstacles.boxes"][0]["max_corner"] == [3.0, 2.0, 15.0]
    assert c["rules.seek.target"] == [5.0, 5.0, 10.0] and c["rules.seek.route"] == [[1.0, 1.0, 10.0]]
    assert "rules.seek.group_targets" not in c and "agents.planar" not in c
    assert c["rules.roost.center"] == [3.0, 4.0, 0.0]  # the roost's height: 0
    assert c["description"] == "3D version of: d"
    flat = {**params, "world": {"dim": 3, "bounds": {"kind": "ellipsoid", "size": [5.0, 6.0, 7.0]}}}
    flat["agents"] = {"planar": True}
    back = dimension_changes(flat, 2)
    assert back["world.bounds.size"] == [5.0, 6.0] and back["agents.planar"] is False
    assert twin_preset("starlings-3d", 2) == "starlings-2d" and twin_preset("starlings-2d", 3) == "starlings-3d"
    assert twin_preset("starlings-3d-reference", 2) == "starlings-2d-reference"
    assert twin_preset("starlings-2d-reference", 3) == "starlings-3d-reference"
    assert twin_preset("starlings-3d-large-reference", 2) is None  # no such 2D scene
    assert twin_preset("boids-2d", 3) is None and twin_preset(None, 3) is None and twin_preset("reef", 2) is None
    # the agent cap over both modes drops the largest parked simulation first
    modes = ParkedModes()
    for dim, n in ((2, 300), (3, 500)):
        modes.park(dim, Parked(SimpleNamespace(state=SimpleNamespace(n=n)), None, None, None))
    modes.fit_cap(100, 900)
    assert modes.dims == [2, 3]
    modes.fit_cap(101, 900)
    assert modes.dims == [2]


class FakeClock:
    """A monotonic clock that reads what the test sets (seconds since an arbitrary start, as large
    as a machine's uptime)."""

    def __init__(self, now: float):
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_compile_clock_counts_from_the_first_event_seen_not_from_zero():
    """A tracker that starts listening while a compile runs (the server's warm-up began before
    the page connected) sees an end first: the busy stretch begins there, and the next start
    within the quiet interval continues it. The page read "14 min 45 s" (the machine's uptime)
    five seconds after opening when the stretch began at clock 0."""
    from flocksim.viewer.compiling import QUIET_S, CompileTracker

    clock = FakeClock(885.0)  # 14 min 45 s of uptime
    tracker = CompileTracker(clock=clock)
    data = {"dispatcher": None, "args": (), "return_type": None}
    tracker.on_end(event.Event("numba:compile", event.EventStatus.END, data=data))
    clock.now += QUIET_S / 2
    tracker.on_start(event.Event("numba:compile", event.EventStatus.START, data=data))
    clock.now += 4.0
    status = tracker.status()
    assert status.active and status.kernels == 1
    assert status.seconds == pytest.approx(QUIET_S / 2 + 4.0)
    tracker.on_end(event.Event("numba:compile", event.EventStatus.END, data=data))
    clock.now += 2 * QUIET_S
    done = tracker.status()
    assert not done.active and done.kernels == 2 and done.seconds == pytest.approx(QUIET_S / 2 + 4.0)


def test_compiling_names_the_scene_with_the_estimate_of_the_server_s_line():
    """A compile inside a simulation's notice scope (here one named starlings-3d, estimated at
    52 s): the ``compiling`` message names the scene and says what the server's line says."""
    import io

    from flocksim.compile_notice import CompileNotice, notice_line
    from flocksim.viewer.compiling import CompileTracker

    tracker = CompileTracker(clock=FakeClock(10.0))
    line = io.StringIO()
    data = {"dispatcher": None, "args": (), "return_type": None}
    with CompileNotice("starlings-3d", 52.0, stream=line):
        event.start_event("numba:compile", data=data)  # the notice's listener announces
        try:
            tracker.on_start(event.Event("numba:compile", event.EventStatus.START, data=data))
        finally:
            event.end_event("numba:compile", data=data)
    status = tracker.status()
    assert status.scene == "starlings-3d" and status.estimate == "about 50 s"
    assert line.getvalue() == notice_line("starlings-3d", 52.0) + "\n"
    assert status.estimate in line.getvalue()
    message = json.loads(status.message())
    assert message["scene"] == "starlings-3d" and message["estimate"] == "about 50 s"
    # outside any scope (a compile the server did not name): nothing is made up
    other = CompileTracker(clock=FakeClock(10.0))
    other.on_start(event.Event("numba:compile", event.EventStatus.START, data=data))
    assert other.status().scene == "" and other.status().estimate == ""


def test_a_compile_outside_any_scope_keeps_the_scene_and_estimate_last_named():
    """A busy machine's gap longer than QUIET_S splits one scene's compile in two stretches, and
    the second's kernels may compile on a thread with no notice scope (a frame packed): the
    message still names the scene with the server's estimate. Before, it had neither, and the
    page said "usually 1 to 3 minutes" while the server's line said "about 30 s"."""
    import io

    from flocksim.compile_notice import CompileNotice
    from flocksim.viewer.compiling import QUIET_S, CompileTracker

    clock = FakeClock(10.0)
    tracker = CompileTracker(clock=clock)
    data = {"dispatcher": None, "args": (), "return_type": None}
    with CompileNotice("starlings-3d", 43.7, stream=io.StringIO()):
        event.start_event("numba:compile", data=data)
        try:
            tracker.on_start(event.Event("numba:compile", event.EventStatus.START, data=data))
            tracker.on_end(event.Event("numba:compile", event.EventStatus.END, data=data))
        finally:
            event.end_event("numba:compile", data=data)
    clock.now += 3 * QUIET_S  # a new stretch, outside any scope
    tracker.on_start(event.Event("numba:compile", event.EventStatus.START, data=data))
    status = tracker.status()
    assert status.active and status.kernels == 0 and status.seconds == 0.0
    assert (status.scene, status.estimate) == ("starlings-3d", "about 40 s")


def test_a_connection_names_its_own_scene_when_no_scope_has(client):
    """A compile no notice scope has named yet: the connection's ``compiling`` messages name its
    own scene with the estimate the server's line gives it (one measured figure for both), and the
    ``hello`` names the scene the connection starts on, so the page's scene list shows it while
    the first simulation is built."""
    with client.websocket_connect(SMALL) as ws:
        assert expect(ws, "hello").get("scene") == {"name": "boids-2d", "modified": True}
    with client.websocket_connect("/ws?protocol=2") as ws:
        assert expect(ws, "hello")["scene"] == {"name": "starlings-3d", "modified": False}

    import asyncio

    from flocksim.compile_notice import compile_estimate, notice_line
    from flocksim.viewer.compiling import CompileTracker, report_compiling, scene_estimate

    params = load_preset("boids-2d")
    tracker = CompileTracker(clock=FakeClock(10.0))  # has seen no scope
    data = {"dispatcher": None, "args": (), "return_type": None}
    tracker.on_start(event.Event("numba:compile", event.EventStatus.START, data=data))
    sent = []

    async def send(text: str) -> None:
        sent.append(json.loads(text))

    async def run() -> None:
        fallback = lambda: scene_estimate(params, "boids-2d")  # noqa: E731
        task = asyncio.create_task(report_compiling(send, interval=0.01, fallback=fallback, source=tracker))
        while not sent:
            await asyncio.sleep(0.01)
        task.cancel()

    asyncio.run(run())
    message = sent[0]
    assert message["active"] and message["scene"] == "boids-2d"
    assert notice_line("boids-2d", compile_estimate(params, "boids-2d")).endswith(message["estimate"])
    assert message["estimate"] == "about 40 s"  # boids-2d's 44.5 s (compile_estimates.json)
    assert scene_estimate(params, None)[0] == "reynolds 2D (metric neighbours)"  # no preset: the server line's words


def test_the_warm_up_thread_starts_after_the_compile_tracker_listens(monkeypatch):
    from flocksim.viewer import compiling, warmup

    order = []
    monkeypatch.setattr(warmup, "tracker", lambda: order.append("tracker"))
    monkeypatch.setattr(warmup, "warm_up", lambda params, **options: order.append("warm-up") or 0.0)
    warmup.warm_up_in_background(None).join(timeout=30)
    assert order == ["tracker", "warm-up"]
    assert compiling.tracker() is compiling.tracker()


# ---- issue 28: a scene is offered only in the modes where it has a meaning --------------------


def test_hello_lists_each_scenes_modes_agents_and_look(client):
    with client.websocket_connect(SMALL) as ws:
        rows = {p["name"]: p for p in expect(ws, "hello")["presets"]}
    assert rows["crowd"]["modes"] == [2] and rows["crowd"]["agent"] == "person"
    assert rows["flappy-boids"]["modes"] == [3] and rows["flappy-boids"]["look"] == "sea"
    assert rows["reef"]["agent"] == "fish" and rows["starlings-2d"]["modes"] == [2, 3]
    for row in rows.values():
        assert row["dim"] in row["modes"], row  # a scene is offered in its own dimension


@pytest.mark.parametrize(("preset", "dim"), [("crowd", 3), ("crowd-maze", 3), ("flappy-boids", 2), ("couzin", 2)])
def test_a_mode_the_scene_is_not_offered_in_is_refused(client, preset, dim):
    with client.websocket_connect(f"/ws?protocol=2&preset={preset}&set=agents.n%3D30") as ws:
        opened(ws)
        send(ws, type="mode", dim=dim)
        message = expect(ws, "error")["message"]
        assert message.startswith("mode.dim:") and f"{preset} is shown in {5 - dim}D only" in message, message
        if preset != "flappy-boids":  # (the game also sends rock meshes and scores)
            assert frame(ws).dim == 5 - dim  # the scene goes on in its own mode

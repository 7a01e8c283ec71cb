"""What a viewer client leaves behind when it leaves, or when it switches scenes: nothing
(docs/reliability.md, "Soak: mixed use").

Before: every simulation stayed in memory after it was dropped (a reference cycle through its
compile notice), until Python's cyclic collector happened to run, which an idle server may not do
for a long time (numpy arrays do not count towards its thresholds); and each connection that ended
at the same time as others left a thread in the event loop's pool, waiting for its last step.
These tests turn the cyclic collector off, so that only what reference counting frees is freed.
"""

import contextlib
import gc
import threading
import time
import warnings
import weakref

import pytest

warnings.filterwarnings("ignore", message="Using `httpx` with `starlette.testclient`")

from starlette.testclient import TestClient  # noqa: E402

from flocksim import load_preset  # noqa: E402
from flocksim.config import apply_overrides  # noqa: E402
from flocksim.simulation import Simulation  # noqa: E402
from flocksim.viewer.server import create_app  # noqa: E402
from flocksim.viewer.session import ViewerSession  # noqa: E402
from test_viewer_server import SMALL, frame, opened, send  # noqa: E402


@pytest.fixture
def no_cyclic_collector():
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def test_a_dropped_simulation_is_freed_at_once(no_cyclic_collector):
    sim = Simulation(apply_overrides(load_preset("boids-2d"), ["agents.n=30"]), seed=1)
    sim.name_compiles("boids-2d")
    sim.step(1)
    ref = weakref.ref(sim)
    del sim
    assert ref() is None, "a reference cycle keeps the simulation"


def _threads() -> int:
    return threading.active_count()


def test_clients_that_leave_or_switch_leave_no_simulation_and_no_thread(monkeypatch, no_cyclic_collector):
    built: list[weakref.ref] = []
    new_simulation = ViewerSession._new_simulation

    def recorded(self, params):
        sim = new_simulation(self, params)
        built.append(weakref.ref(sim))
        return sim

    step = ViewerSession._step

    def slow_step(self):  # a large flock's step: the job in flight when its client leaves
        time.sleep(0.3)
        step(self)

    monkeypatch.setattr(ViewerSession, "_new_simulation", recorded)
    with TestClient(create_app(sps=0, max_connections=8)) as client:
        viewer = client.app.state.viewer
        with client.websocket_connect(SMALL) as ws:  # the threads a served process keeps anyway
            opened(ws)
            frame(ws)
            ws.close()
            _wait(lambda: viewer.connections == 0)
            time.sleep(0.5)  # its memory given back
        monkeypatch.setattr(ViewerSession, "_step", slow_step)
        with client.websocket_connect(SMALL) as stays, contextlib.ExitStack() as leaving:
            opened(stays)  # one client stays: the server is never idle
            frame(stays)
            threads_before = _threads()
            sockets = [leaving.enter_context(client.websocket_connect(SMALL)) for _ in range(4)]
            for ws in sockets:
                opened(ws)
                send(ws, type="set", changes={"agents.n": 40})  # a new flock: the old one is dropped
                send(ws, type="next")
            for ws in sockets:
                ws.close()  # all four leave at once, each while its step runs
            _wait(lambda: viewer.connections == 1)
            threads_back = _wait(lambda: _threads() == threads_before, seconds=5.0, fail=False)
            (stayed,) = viewer.sessions
            alive = [ref() for ref in built if ref() is not None]
            assert alive == [stayed.sim], f"{len(alive) - 1} dropped simulation(s) still in memory"
            assert threads_back, ("threads before:", threads_before, "now:", [t.name for t in threading.enumerate()])


def _wait(condition, seconds: float = 60.0, fail: bool = True) -> bool:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            assert not fail, "timed out"
            return False
        time.sleep(0.02)
    return True

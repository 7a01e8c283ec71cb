"""Control confirmations do not wait for the simulation (flocksim.viewer.session): a ``pause``'s
``state`` reply goes out while a step is still running and while a frame is being packed, and the
frames around it keep their order (frame indices count up by one, none lost or sent twice; no
frame of the old flock after the ``params`` of a refill).

The session is driven directly (no socket): its ``send`` collects the messages, and a step or the
packing of a frame is held on a gate the test opens. Ordering, not time, is asserted: a reply
counts as "at once" when it was sent before the gate it would otherwise wait for was opened.
``GUARD`` only bounds how long a session that does wait is given before the test opens the gate
and reports it.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable
from typing import Any

import pytest

from flocksim import load_preset
from flocksim.config import apply_overrides
from flocksim.viewer import session as session_module
from flocksim.viewer.protocol import Frame, decode_frame
from flocksim.viewer.session import ViewerSession

GUARD = 60.0
"""[s] the longest a held reply is waited for before the gate is opened anyway (a hang guard)."""
TIMEOUT = 900.0
"""[s] for anything that may compile kernels first (minutes on a busy host)."""
NEXT = '{"type": "next"}'
PAUSE = '{"type": "pause"}'
RESUME = '{"type": "resume"}'


class Client:
    """Collects what a session sends; ``wait_for`` blocks (asynchronously) until a condition on the
    collected messages holds."""

    def __init__(self) -> None:
        self.messages: list[dict | Frame] = []
        self._changed = asyncio.Event()

    async def send(self, message: str | bytes) -> None:
        self.messages.append(json.loads(message) if isinstance(message, str) else decode_frame(message))
        self._changed.set()

    async def wait_for(self, condition: Callable[[], bool], timeout: float = TIMEOUT) -> None:
        async with asyncio.timeout(timeout):
            while not condition():
                self._changed.clear()
                await self._changed.wait()

    @property
    def frames(self) -> list[Frame]:
        return [m for m in self.messages if isinstance(m, Frame)]

    def texts(self, kind: str) -> list[dict]:
        return [m for m in self.messages if isinstance(m, dict) and m["type"] == kind]


async def started(client: Client, n: int = 30) -> ViewerSession:
    session = ViewerSession(client.send, sps=0)
    await session.start(apply_overrides(load_preset("boids-2d"), [f"agents.n={n}"]), "boids-2d")
    return session


async def wait_thread_event(event: threading.Event) -> None:
    assert await asyncio.to_thread(event.wait, TIMEOUT), "the gate was never reached"


async def within_guard(coroutine: Any) -> bool:
    """Run ``coroutine`` (a task) for at most :data:`GUARD` seconds; whether it finished."""
    task = asyncio.ensure_future(coroutine)
    done, _ = await asyncio.wait({task}, timeout=GUARD)
    return task in done


def check_frames(frames: list[Frame]) -> None:
    """Frame indices count up by one from the first (none lost, none twice); steps never go back."""
    indices = [f.frame_index for f in frames]
    assert indices == list(range(indices[0], indices[0] + len(indices))), indices
    steps = [f.step for f in frames]
    assert steps == sorted(steps), steps


def test_a_pause_is_confirmed_while_a_step_is_still_running(monkeypatch):
    """A frame's capture waits on the worker thread behind a step that does not end until the test
    lets it; the pause's ``state`` reply is sent meanwhile, and the frame follows once the step
    ends."""
    entered, release = threading.Event(), threading.Event()
    hold_after: list[int] = []  # hold the first step that starts from a state after this step

    def gated_step(session: ViewerSession) -> None:
        if hold_after and session.sim is not None and session.sim.steps > hold_after[0]:
            entered.set()
            release.wait()
        original(session)

    original = ViewerSession._step
    monkeypatch.setattr(ViewerSession, "_step", gated_step)
    captures_queued = asyncio.Event()
    original_work = ViewerSession._work

    async def work(session: ViewerSession, fn: Callable, *args: Any) -> Any:
        if getattr(fn, "__name__", "") == "_capture":
            captures_queued.set()
        return await original_work(session, fn, *args)

    monkeypatch.setattr(ViewerSession, "_work", work)
    client = Client()

    async def scenario() -> tuple[bool, bool]:
        session = await started(client)
        try:
            session.submit(NEXT)
            await client.wait_for(lambda: len(client.frames) == 1)
            hold_after.append(client.frames[0].step)
            await wait_thread_event(entered)  # a step is running (held), the state moved past frame 1
            captures_queued.clear()
            session.submit(NEXT)
            await asyncio.wait_for(captures_queued.wait(), TIMEOUT)  # the capture waits behind the step
            confirmed = await within_guard(session.receive(PAUSE))
            step_still_held = not release.is_set()
            release.set()
            await client.wait_for(lambda: len(client.frames) == 2)
            return confirmed, step_still_held
        finally:
            release.set()
            await session.close()

    confirmed, step_still_held = asyncio.run(scenario())
    assert confirmed and step_still_held, "the pause's state reply waited for the running step"
    kinds = ["frame" if isinstance(m, Frame) else m["type"] for m in client.messages]
    assert kinds == ["params", "frame", "state", "frame"], kinds
    assert client.texts("state") == [{"type": "state", "paused": True}]
    check_frames(client.frames)
    assert client.frames[1].step > client.frames[0].step


def test_a_pause_is_confirmed_while_a_frame_is_packed(monkeypatch):
    """The packing of a frame is held; the pause's reply is sent meanwhile and the frame after it."""
    entered, release = threading.Event(), threading.Event()
    original = session_module.pack_frame

    def gated_pack(parts: Any) -> bytes:
        entered.set()
        release.wait()
        return original(parts)

    monkeypatch.setattr(session_module, "pack_frame", gated_pack)
    client = Client()

    async def scenario() -> tuple[bool, bool]:
        session = await started(client)
        try:
            session.submit(NEXT)
            await wait_thread_event(entered)
            confirmed = await within_guard(session.receive(PAUSE))
            pack_still_held = not release.is_set()
            release.set()
            await client.wait_for(lambda: len(client.frames) == 1)
            return confirmed, pack_still_held
        finally:
            release.set()
            await session.close()

    confirmed, pack_still_held = asyncio.run(scenario())
    assert confirmed and pack_still_held, "the pause's state reply waited for a frame's packing"
    kinds = ["frame" if isinstance(m, Frame) else m["type"] for m in client.messages]
    assert kinds == ["params", "state", "frame"], kinds


def test_a_frame_packed_across_a_refill_is_not_sent_after_its_params(monkeypatch):
    """A frame of 30 birds is held in packing while ``set agents.n=20`` refills the flock: after
    the ``params`` that announce the refill, every frame shows 20 birds; the frame indices stay
    consecutive (the old frame is either sent before the params or captured again)."""
    entered, release = threading.Event(), threading.Event()
    original = session_module.pack_frame
    held: list[bool] = [True]

    def gated_pack(parts: Any) -> bytes:
        if held[0]:
            held[0] = False
            entered.set()
            release.wait()
        return original(parts)

    monkeypatch.setattr(session_module, "pack_frame", gated_pack)
    client = Client()

    async def scenario() -> None:
        session = await started(client, n=30)
        try:
            session.submit(NEXT)
            await wait_thread_event(entered)
            change = json.dumps({"type": "set", "changes": {"agents.n": 20}})
            await within_guard(session.receive(change))  # the old code sent the set's params only after the frame
            release.set()
            await client.wait_for(lambda: len(client.texts("params")) == 2)
            await client.wait_for(lambda: len(client.frames) >= 1)
            session.submit(NEXT)
            await client.wait_for(lambda: any(isinstance(m, Frame) and m.n_agents == 20 for m in client.messages))
        finally:
            release.set()
            await session.close()

    asyncio.run(scenario())
    refill = next(k for k, m in enumerate(client.messages) if isinstance(m, dict) and m.get("reset") and k > 0)
    before = [m for m in client.messages[:refill] if isinstance(m, Frame)]
    after = [m for m in client.messages[refill:] if isinstance(m, Frame)]
    assert all(f.n_agents == 30 for f in before), [f.n_agents for f in before]
    assert after and all(f.n_agents == 20 for f in after), [f.n_agents for f in after]
    check_frames(client.frames)


@pytest.mark.parametrize("pause_after", [1, 3])
def test_frames_around_a_pause_and_resume_are_neither_lost_nor_repeated(pause_after):
    """A client pulling frames one after another (a ``next`` as each frame arrives) pauses after
    ``pause_after`` frames and resumes three frames later: every ``next`` gets exactly one frame,
    indices count up by one, steps never go back, paused frames all show one step, and frames
    after the resume move on."""
    client = Client()
    total = pause_after + 6

    async def scenario() -> None:
        session = await started(client)
        try:
            for k in range(total):
                session.submit(NEXT)
                await client.wait_for(lambda k=k: len(client.frames) == k + 1)
                if k + 1 == pause_after:
                    await session.receive(PAUSE)
                elif k + 1 == pause_after + 3:
                    await session.receive(RESUME)
            session.submit(PAUSE)  # a last reply: every frame asked for was sent before it
            await client.wait_for(lambda: len(client.texts("state")) == 3)
        finally:
            await session.close()

    asyncio.run(scenario())
    frames = client.frames
    assert len(frames) == total
    check_frames(frames)
    paused_at = next(k for k, m in enumerate(client.messages) if isinstance(m, dict) and m["type"] == "state")
    resumed_at = [k for k, m in enumerate(client.messages) if isinstance(m, dict) and m["type"] == "state"][1]
    paused_frames = [m for m in client.messages[paused_at:resumed_at] if isinstance(m, Frame)]
    assert len(paused_frames) == 3
    assert len({f.step for f in paused_frames}) == 1, [f.step for f in paused_frames]
    assert frames[-1].step > paused_frames[-1].step


def test_the_rocks_of_a_dropped_frame_are_sent_with_the_next_one():
    """Flappy Boids: the rock meshes a dropped frame carried are sent again before the next frame
    of the same flock (and not for another flock, whose meshes all go out anyway)."""
    from flocksim.simulation import Simulation
    from flocksim.viewer.game import GameFeed

    sim = Simulation(apply_overrides(load_preset("flappy-boids"), ["agents.n=30"]))
    sim.step()  # the game meshes its first rock chunks as it steps
    feed = GameFeed()
    first = feed.messages(sim, generation=1)
    meshes = [m for m in first if isinstance(m, bytes)]
    assert meshes and feed.last_chunks
    assert [m for m in feed.messages(sim, generation=1) if isinstance(m, bytes)] == []
    feed.forget(1, feed.last_chunks)  # nothing new was sent by the last call: nothing to forget
    assert [m for m in feed.messages(sim, generation=1) if isinstance(m, bytes)] == []
    feed.forget(1, frozenset(k for k in feed.sent))
    assert [m for m in feed.messages(sim, generation=1) if isinstance(m, bytes)] == meshes
    chunks = feed.last_chunks
    feed.forget(0, chunks)  # another flock's: ignored
    assert [m for m in feed.messages(sim, generation=1) if isinstance(m, bytes)] == []

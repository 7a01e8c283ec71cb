"""The notebook widget (docs/notebook.md): its Python side in process (frames, play/step, Basic
changes, replay), and a notebook executed headless by nbclient in a real kernel whose saved
widget state holds the frames.

Small flocks (40-60 agents) and few steps: the kernel's first import compiles nothing new (the
numba cache is shared with this process).
"""

from __future__ import annotations

import base64
from pathlib import Path

import numpy as np
import pytest

import flocksim
from flocksim.io import Recorder, TrajectoryError, TrajectoryStore, open_run
from flocksim.notebook import ReplayWidget, SimulationWidget, WidgetNotBuiltError, base
from flocksim.viewer.protocol import FLAG_PREDATOR, FLAG_SELECTED, decode_frame

WIDGET_JS = base.STATIC_DIR / "widget.js"

pytestmark = pytest.mark.skipif(
    not WIDGET_JS.exists(), reason=f"widget front end not built ({WIDGET_JS} missing: run ./dev.sh setup)"
)


def small(name: str = "boids-2d", n: int = 40, *extra: str):
    return flocksim.apply_overrides(flocksim.load_preset(name), [f"agents.n={n}", *extra])


def message(widget, **content) -> None:
    """What the front end sends (a custom message)."""
    widget._on_message(widget, content, [])


def record(path: Path, params, steps: int, every: int = 2) -> Path:
    rec = Recorder(path, every=every, chunk_frames=4)
    sim = flocksim.Simulation(params, seed=5, recorder=rec)
    sim.step(steps)
    rec.close()
    return path


# ---- live ---------------------------------------------------------------------------------


def test_live_widget_sends_the_simulations_frame_and_schema():
    sim = flocksim.Simulation(small(n=50), seed=2)
    sim.step(3)
    w = flocksim.widget(sim)
    assert isinstance(w, SimulationWidget)
    frame = decode_frame(w.frame)
    assert (frame.n_agents, frame.step, frame.dim) == (50, 3, 2)
    np.testing.assert_allclose(frame.positions[:50], sim.state.position, rtol=1e-6, atol=1e-4)
    assert frame.flags[0] & FLAG_SELECTED
    assert w.params["agents"]["n"] == 50
    assert "rules" in w.schema["properties"]
    assert w.max_agents > 0
    assert w._esm.startswith(WIDGET_JS.read_text(encoding="utf-8")[:200])


def test_update_follows_steps_made_elsewhere_and_only_then():
    sim = flocksim.Simulation(small(), seed=2)
    w = flocksim.widget(sim)
    sent = w.frames_sent
    assert not w.update()  # nothing changed
    sim.step(4)
    assert w.update()
    assert decode_frame(w.frame).step == 4
    assert w.frames_sent == sent + 1
    sim.perturb_turn(center_id=0, count=10, angle_deg=120)  # no step, but the flock changed
    assert w.update()


def test_play_pulls_steps_per_frame_and_step_advances_one():
    sim = flocksim.Simulation(small(), seed=2)
    w = flocksim.widget(sim, steps_per_frame=3)
    message(w, type="next")  # not playing: ignored
    assert sim.steps == 0
    w.playing = True
    message(w, type="next")
    message(w, type="next")
    assert sim.steps == 6
    assert decode_frame(w.frame).step == 6
    message(w, type="step")  # playing: Step does nothing
    assert sim.steps == 6
    w.playing = False
    message(w, type="step")
    assert sim.steps == 7
    assert decode_frame(w.frame).step == 7


def test_basic_change_rebuilds_the_same_simulation_object_in_place():
    sim = flocksim.Simulation(small(), seed=2)
    sim.step(5)
    before = sim.state.position.copy()
    w = flocksim.widget(sim)
    message(w, type="set", changes={"rules.alignment.weight": 2.5})
    assert w.error == ""
    assert w.sim is sim
    assert sim.params.rules.alignment.weight == 2.5
    assert w.params["rules"]["alignment"]["weight"] == 2.5
    # same model, world and agent count: the flock and the step count are kept
    assert sim.steps == 5
    np.testing.assert_array_equal(sim.state.position, before)
    sim.step(1)  # the rebuilt simulation steps
    assert sim.steps == 6
    message(w, type="set", changes={"agents.n": 30})
    assert sim.state.n == 30
    assert decode_frame(w.frame).n_agents == 30


@pytest.mark.parametrize(
    ("changes", "words"),
    [
        ({"agents.n": -3}, ["agents.n", ">= 0"]),
        ({"agents.n": 10**7}, ["agents.n", "allowed"]),
        ({"rules.alignment.mode": "sideways"}, ["rules.alignment.mode", "allowed"]),
        ({"no.such.key": 1}, ["no", "unknown key"]),
        ("not a mapping", ["changes"]),
    ],
)
def test_refused_change_names_the_field_and_changes_nothing(changes, words):
    sim = flocksim.Simulation(small(), seed=2)
    w = flocksim.widget(sim, max_agents=1000)
    params = sim.params
    message(w, type="set", changes=changes)
    assert all(word in w.error for word in words), w.error
    assert "\n" not in w.error
    assert sim.params is params
    assert w.params["agents"]["n"] == 40
    message(w, type="set", changes={"rules.cohesion.weight": 0.5})  # a good change clears the error
    assert w.error == ""


def test_a_failing_step_is_shown_and_stops_playing(monkeypatch):
    sim = flocksim.Simulation(small(), seed=2)
    w = flocksim.widget(sim)
    w.playing = True

    def broken(n: int = 1) -> None:
        raise RuntimeError("engine exploded\non two lines")

    monkeypatch.setattr(sim, "step", broken)
    message(w, type="next")
    assert w.error == "next: RuntimeError: engine exploded on two lines"
    assert not w.playing


def test_widget_refuses_what_it_cannot_show():
    with pytest.raises(TypeError, match=r"flocksim\.widget: expected a flocksim\.Simulation"):
        flocksim.widget(42)
    with pytest.raises(ValueError, match="steps_per_frame"):
        flocksim.widget(flocksim.Simulation(small(), seed=1), steps_per_frame=0)


def test_missing_front_end_is_one_clear_error(monkeypatch, tmp_path):
    monkeypatch.setattr(base, "STATIC_DIR", tmp_path)
    with pytest.raises(WidgetNotBuiltError, match=r"not built; run \./dev\.sh setup"):
        flocksim.widget(flocksim.Simulation(small(), seed=1))


# ---- replay -------------------------------------------------------------------------------


def test_replay_scrubs_plays_and_stops_at_the_end(tmp_path):
    path = record(tmp_path / "run.zarr", small("starlings-2d", 40, "predator.enabled=true"), steps=10)
    store = TrajectoryStore.open(path)
    steps = store.read("step")
    w = flocksim.widget(str(path))
    assert isinstance(w, ReplayWidget)
    assert w.source == "replay" and w.n_frames == store.n_frames == len(steps)
    first = decode_frame(w.frame)
    assert first.step == steps[0]
    np.testing.assert_allclose(first.positions[: first.n_agents], store.read("position", 0, 1)[0], atol=1e-4)
    assert len(first.having(FLAG_PREDATOR)) == 1  # the recorded predator track
    w.index = 3
    assert decode_frame(w.frame).step == steps[3]
    w.index = 999  # clamped to the last frame
    assert w.index == w.n_frames - 1
    assert decode_frame(w.frame).step == steps[-1]
    w.playing = True  # Play at the end starts over
    assert w.index == 0
    for _ in range(w.n_frames - 1):
        message(w, type="next")
    assert w.index == w.n_frames - 1 and w.playing
    message(w, type="next")
    assert not w.playing
    w.index = 0
    message(w, type="step")
    assert decode_frame(w.frame).step == steps[1]


def test_replay_of_open_run_dataset_matches_the_store(tmp_path):
    path = record(tmp_path / "run.zarr", small("starlings-3d"), 6)
    from_store = flocksim.widget(TrajectoryStore.open(path))
    from_dataset = flocksim.widget(open_run(path, chunks=None))
    for w in (from_store, from_dataset):
        w.index = 2
    a, b = decode_frame(from_store.frame), decode_frame(from_dataset.frame)
    assert a.dim == 3
    np.testing.assert_array_equal(a.positions, b.positions)
    assert (a.step, a.time) == (b.step, b.time)


def test_replay_of_something_else_is_one_clear_error(tmp_path):
    with pytest.raises(TrajectoryError):
        flocksim.widget(str(tmp_path / "missing.zarr"))
    with pytest.raises(TypeError, match="a replay takes no options"):
        flocksim.widget(str(tmp_path / "missing.zarr"), steps_per_frame=2)


# ---- a notebook in a real kernel ----------------------------------------------------------

NOTEBOOK_CELLS = [
    "import flocksim\n"
    "params = flocksim.apply_overrides(flocksim.load_preset('boids-2d'), ['agents.n=60'])\n"
    "sim = flocksim.Simulation(params, seed=1)\n"
    "flocksim.widget(sim)",
    "sim.step(7)",  # the widget follows a step made in another cell
    "flocksim.widget({run!r})",
]


def widget_states(nb) -> dict[str, dict]:
    """{model id: state with binary buffers put back as bytes} of the notebook's saved widgets."""
    saved = nb.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    states = {}
    for model_id, entry in saved.items():
        state = dict(entry["state"])
        for buffer in entry.get("buffers", []):
            assert buffer["encoding"] == "base64"
            state[buffer["path"][0]] = base64.b64decode(buffer["data"])
        states[model_id] = state
    return states


def test_notebook_runs_headless_and_holds_frames(tmp_path):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    run = record(tmp_path / "run.zarr", small("boids-2d", 30), steps=6)
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src.format(run=str(run))) for src in NOTEBOOK_CELLS]
    client = nbclient.NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": tmp_path}})
    client.execute()
    for cell in nb.cells:
        assert not [o for o in cell.outputs if o.output_type == "error"], cell.outputs
    views = [
        o.data["application/vnd.jupyter.widget-view+json"]["model_id"]
        for cell in nb.cells
        for o in cell.outputs
        if o.output_type == "display_data" or o.output_type == "execute_result"
        if "application/vnd.jupyter.widget-view+json" in o.get("data", {})
    ]
    assert len(views) == 2, [c.outputs for c in nb.cells]
    states = widget_states(nb)
    live, replay = states[views[0]], states[views[1]]
    assert live["_esm"] and live["source"] == "live"
    frame = decode_frame(live["frame"])
    assert frame.n_agents == 60
    assert frame.step == 7  # the frame sent after the cell that stepped
    assert replay["source"] == "replay" and replay["n_frames"] == TrajectoryStore.open(run).n_frames
    assert decode_frame(replay["frame"]).n_agents == 30

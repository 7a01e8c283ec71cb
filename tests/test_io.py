"""Trajectory stores, checkpoints and resume (flocksim.io): layout seen by plain xarray, lossless
checkpoints, agents that die or appear, and resume that is bitwise an uninterrupted run."""

from __future__ import annotations

import json
import math
import re
import tomllib
from dataclasses import fields, replace
from pathlib import Path

import numpy as np
import pytest
import xarray as xr
import zarr

import flocksim
from flocksim import Simulation, apply_overrides, load_preset
from flocksim.config import loads_toml, to_dict
from flocksim.io import Recorder, TrajectoryError, TrajectoryStore, frame_metrics, open_run, resume, run_summary
from flocksim.io.codec import CodecError, decode, encode
from flocksim.state import FlockState


def small(name: str = "starlings-2d-reference", *extra: str):
    return apply_overrides(load_preset(name), ["agents.n=40", *extra])


def record(path, params, steps: int, seed: int = 3, close: bool = True, **kwargs) -> Simulation:
    kwargs.setdefault("every", 3)
    kwargs.setdefault("chunk_frames", 4)
    rec = Recorder(path, **kwargs)
    sim = Simulation(params, seed=seed, recorder=rec)
    sim.step(steps)
    if close:
        rec.close()
    return sim


def arrays_of(path) -> dict[str, np.ndarray]:
    group = zarr.open_group(str(path), mode="r")
    return {name: np.asarray(arr[...]) for name, arr in group.arrays()}


def assert_stores_bitwise(a, b) -> None:
    x, y = arrays_of(a), arrays_of(b)
    assert sorted(x) == sorted(y)
    for name in x:
        assert x[name].dtype == y[name].dtype and x[name].shape == y[name].shape, name
        assert x[name].tobytes() == y[name].tobytes(), f"{name} differs"


# --- codec ---------------------------------------------------------------------------------------------


def test_codec_round_trip_is_exact_for_every_supported_type():
    tree = {
        "floats": [1.5, -0.0, math.inf, -math.inf, math.nan, 1e-310],
        "ints": [0, -7, 2**53, -(2**80), 2**127 + 3],
        "np": {"f": np.float64(0.1), "i": np.int32(-5), "b": np.bool_(True), "u": np.uint64(2**64 - 1)},
        "arrays": {"pos": np.arange(12.0).reshape(4, 3), "empty": np.zeros((0, 3)), "flags": np.array([True, False])},
        "scalar0d": np.array(2.5),
        "tuple": (1, "a", None),
        "bytes": b"\x00\xff",
        "odd keys": {1: "one", (2, 3): "pair", "$x": "dollar"},
        "nested": [{"queue": [(0.5, 3), (1.25, 7)]}],
        "text": "ünï",
        "flag": False,
    }
    doc, arrays = encode(tree)
    back = decode(json.loads(json.dumps(doc, allow_nan=False)), arrays)  # through strict JSON
    assert back.keys() == tree.keys()
    assert [math.copysign(1, v) for v in back["floats"][:2]] == [1, -1]
    assert back["floats"][2:4] == [math.inf, -math.inf] and math.isnan(back["floats"][4])
    assert back["floats"][5] == 1e-310
    assert back["ints"] == tree["ints"]
    for key, value in tree["np"].items():
        assert type(back["np"][key]) is type(value) and back["np"][key] == value
    for key, value in tree["arrays"].items():
        assert back["arrays"][key].dtype == value.dtype and np.array_equal(back["arrays"][key], value)
    assert back["scalar0d"].shape == () and back["scalar0d"] == 2.5
    assert back["tuple"] == (1, "a", None) and back["bytes"] == b"\x00\xff"
    assert back["odd keys"] == {1: "one", (2, 3): "pair", "$x": "dollar"}
    assert back["nested"] == [{"queue": [(0.5, 3), (1.25, 7)]}]
    assert back["text"] == "ünï" and back["flag"] is False


def test_codec_copies_arrays():
    a = np.zeros(3)
    _, arrays = encode({"a": a})
    a[0] = 1.0
    assert arrays[0][0] == 0.0


def test_codec_rejects_what_it_cannot_store_naming_where():
    with pytest.raises(CodecError, match=r"checkpoint\.components\.x: cannot store a value of type set"):
        encode({"components": {"x": {1, 2}}})
    with pytest.raises(CodecError, match="dtype object"):
        encode({"a": np.array([object()])})


# --- checkpoint and restore -----------------------------------------------------------------------------


def starling_params():
    return small("starlings-2d-reference", "predator.enabled=true", "turning.enabled=true", "turning.mean_interval=0.3")


def test_restore_continues_bitwise_with_components():
    params = starling_params()
    a = Simulation(params, seed=5)
    assert [c.name for c in a.components] == ["predator", "turning"]
    a.step(37)
    doc, arrays = encode(a.checkpoint())
    checkpoint = decode(json.loads(json.dumps(doc)), arrays)  # as stored on disk
    a.step(41)
    b = Simulation(params, seed=5)
    b.restore(checkpoint)
    assert b.steps == 37
    b.step(41)
    for f in fields(FlockState):
        x, y = getattr(a.state, f.name), getattr(b.state, f.name)
        if isinstance(x, np.ndarray):
            assert x.tobytes() == y.tobytes(), f.name
        else:
            assert x == y, f.name
    assert a.rng.bit_generator.state == b.rng.bit_generator.state
    for ca, cb in zip(a.components, b.components, strict=True):
        sa, sb = encode(ca.state_dict()), encode(cb.state_dict())
        assert sa[0] == sb[0] and all(p.tobytes() == q.tobytes() for p, q in zip(sa[1], sb[1], strict=True))


def test_checkpoint_is_a_copy():
    sim = Simulation(small(), seed=1)
    checkpoint = sim.checkpoint()
    before = checkpoint["state"]["position"].copy()
    sim.step(3)
    assert np.array_equal(checkpoint["state"]["position"], before)


def test_restore_rejects_other_parameters_and_components():
    checkpoint = Simulation(small(), seed=1).checkpoint()
    with pytest.raises(ValueError, match="parameters differ"):
        Simulation(small("starlings-2d-reference", "agents.max_speed=150"), seed=1).restore(checkpoint)
    with pytest.raises(ValueError, match="components"):
        other = Simulation(small(), seed=1)
        other.components = []
        other.restore({**checkpoint, "components": {"predator": {}}})
    with pytest.raises(ValueError, match="not a flocksim checkpoint"):
        Simulation(small(), seed=1).restore({"steps": 3})


# --- the store as xarray sees it ------------------------------------------------------------------------


def test_store_opens_with_plain_xarray_with_named_dims_coords_and_attrs(tmp_path):
    path = tmp_path / "run.zarr"
    params = starling_params()
    sim = record(path, params, steps=20, seed=4, attrs={"preset": "starlings-2d", "steps_requested": 20})
    ds = xr.open_zarr(path)
    assert dict(ds.sizes) == {"time": 8, "agent": 40, "space": 2, "predator": 1, "xyz": 3}  # steps 0, 3, ..., 20
    assert ds.spin.dims == ("time", "agent", "xyz")  # inertial spin (a 3-vector also in 2D)
    assert ds.position.dims == ("time", "agent", "space") and ds.position.dtype == np.float32
    assert ds.velocity.dims == ("time", "agent", "space")
    assert ds.alive.dims == ("time", "agent") and ds.alive.dtype == bool
    assert ds.turning.dims == ("time", "agent")
    assert ds.predator_position.dims == ("time", "predator", "space")
    assert list(ds.step.values) == [0, 3, 6, 9, 12, 15, 18, 20]
    np.testing.assert_allclose(ds.time.values, ds.step.values * params.world.dt, rtol=0, atol=1e-12)
    assert ds.time.attrs["units"] == "s"
    assert list(ds.agent.values) == list(range(40))
    assert [str(s) for s in ds.space.values] == ["x", "y"]
    assert {"step", "kind"} <= set(ds.coords)
    for name in ("polarization", "milling", "mean_neighbors", "speed_mean", "speed_std", "n_alive", "caught"):
        assert ds[name].dims == ("time",), name
    attrs = ds.attrs
    assert attrs["flocksim_format"] == "flocksim-trajectory" and attrs["flocksim_format_version"] == 2
    assert attrs["flocksim_version"] == flocksim.__version__
    assert attrs["seed"] == 4 and attrs["engine"] == "cpu" and attrs["model"] == "reynolds"
    assert attrs["every"] == 3 and attrs["preset"] == "starlings-2d"
    assert "T" in attrs["created"] and attrs["created"].endswith("+00:00")
    assert loads_toml(attrs["params_toml"]) == sim.params
    assert attrs["params"] == to_dict(sim.params) == tomllib.loads(attrs["params_toml"])  # plain xarray: a mapping
    # the last frame is the simulation's final state, rounded to float32
    last = ds.isel(time=-1)
    assert np.array_equal(last.position.values, sim.state.position.astype(np.float32))
    assert np.array_equal(last.alive.values, sim.state.alive)
    assert float(last.polarization) == pytest.approx(flocksim.metrics.polarization(sim.state.velocity[sim.state.alive]))


def test_open_run_gives_the_dataset_and_float64_precision(tmp_path):
    path = tmp_path / "run.zarr"
    sim = record(path, small(), steps=6, precision="float64")
    ds = open_run(path, chunks=None)
    assert ds.position.dtype == np.float64
    assert np.array_equal(ds.position.isel(time=-1).values, sim.state.position)
    assert ds.attrs["precision"] == "float64"


def test_open_run_writes_to_netcdf_whole(tmp_path):
    """Before, open_run(...).to_netcdf() failed on an intact store: TypeError: Invalid value for attr
    'checkpoint_every' / 'params' (None, a dict: netCDF holds neither)."""
    import json

    path = tmp_path / "run.zarr"
    sim = record(path, small(), steps=6, attrs={"preset": "boids-2d", "overrides": []})
    ds = open_run(path)
    assert json.loads(ds.attrs["params"]) == to_dict(sim.params)
    assert json.loads(ds.attrs["overrides"]) == []
    out = tmp_path / "run.nc"
    ds.to_netcdf(out)
    back = xr.open_dataset(out)
    assert np.array_equal(back.position.values, ds.position.values)
    assert loads_toml(back.attrs["params_toml"]) == sim.params
    assert json.loads(back.attrs["params"]) == to_dict(sim.params)
    back.close()


def test_frame_metrics_agree_with_simulation_metrics():
    sim = Simulation(small("boids-2d"), seed=2)  # metric neighbourhoods
    sim.step(5)
    ours, theirs = frame_metrics(sim), sim.metrics()
    for key in ("polarization", "milling", "mean_neighbors", "speed_mean", "speed_std", "n_alive"):
        assert ours[key] == pytest.approx(theirs[key], rel=1e-12), key
    sim = Simulation(small("starlings-2d-reference"), seed=2)  # topological: k neighbours without a search
    sim.state.alive[:35] = False
    assert frame_metrics(sim)["mean_neighbors"] == sim.metrics()["mean_neighbors"] == 4.0


def test_dead_agents_keep_their_column_and_new_agents_get_new_ones(tmp_path):
    path = tmp_path / "run.zarr"
    rec = Recorder(path, every=1, chunk_frames=2)
    sim = Simulation(small("boids-2d"), seed=1, recorder=rec)
    sim.step(2)
    sim.state.alive[[3, 7]] = False  # removal
    sim.step(1)
    s = sim.state  # two agents born after step 3, with new ids
    born = 2
    rows = np.arange(born)
    sim.state = replace(
        s,
        position=np.vstack([s.position, s.position[rows] + 0.5]),
        velocity=np.vstack([s.velocity, s.velocity[rows]]),
        alive=np.concatenate([s.alive, np.ones(born, bool)]),
        mass=np.concatenate([s.mass, s.mass[rows]]),
        radius=np.concatenate([s.radius, s.radius[rows]]),
        kind=np.concatenate([s.kind, np.full(born, 2, np.int32)]),
        ids=np.concatenate([s.ids, s.next_id + np.arange(born)]),
        next_id=s.next_id + born,
        spin=np.vstack([s.spin, s.spin[rows]]),
        turning=np.concatenate([s.turning, np.zeros(born, bool)]),
    )
    sim.step(2)
    rec.close()
    ds = open_run(path, chunks=None)
    assert ds.sizes["agent"] == 42 and ds.sizes["time"] == 6
    assert list(ds.agent.values[-2:]) == [40, 41] and list(ds.kind.values[-2:]) == [2, 2]
    alive = ds.alive.values
    assert alive[:3, 3].all() and not alive[3:, 3].any()  # the dead keep their column
    assert not alive[:4, 40:].any() and alive[4:, 40:].all()  # the born appear at step 4
    assert np.isnan(ds.position.values[:4, 40:]).all() and np.isfinite(ds.position.values[4:, 40:]).all()
    assert np.array_equal(ds.position.values[-1], sim.state.position.astype(np.float32))
    assert list(ds.n_alive.values) == [40, 40, 40, 38, 40, 40]


def test_agents_missing_from_the_state_read_as_absent(tmp_path):
    path = tmp_path / "run.zarr"
    rec = Recorder(path, every=1)
    sim = Simulation(small("boids-2d"), seed=1, recorder=rec)
    sim.step(1)
    keep = np.arange(40) != 5  # a state that dropped the row of agent 5 entirely
    s = sim.state
    sim.state = FlockState(
        s.position[keep], s.velocity[keep], s.alive[keep], s.mass[keep], s.radius[keep], s.kind[keep], s.ids[keep],
        s.next_id, s.spin[keep], s.turning[keep],
    )  # fmt: skip
    sim.step(1)
    rec.close()
    ds = open_run(path, chunks=None)
    assert ds.sizes["agent"] == 40
    assert ds.alive.values[:2, 5].all() and not ds.alive.values[2, 5]
    assert np.isnan(ds.position.values[2, 5]).all()
    assert np.array_equal(ds.position.values[2, 6], sim.state.position[5].astype(np.float32))


# --- resume ---------------------------------------------------------------------------------------------


def test_resume_equals_the_uninterrupted_run_bitwise(tmp_path):
    params = starling_params()
    record(tmp_path / "a.zarr", params, steps=90, checkpoint_every=20)
    record(tmp_path / "b.zarr", params, steps=57, close=False, checkpoint_every=20)  # "killed" at step 57
    assert [c["steps"] for c in TrajectoryStore.open(tmp_path / "b.zarr").checkpoints()] == [20, 40]
    sim = resume(tmp_path / "b.zarr")
    assert sim.steps == 40 and sim.recorder.frames == 14  # frames at steps 0..39 every 3
    sim.step(90 - sim.steps)
    sim.recorder.close()
    assert_stores_bitwise(tmp_path / "a.zarr", tmp_path / "b.zarr")


def test_resume_before_the_first_checkpoint_starts_over(tmp_path):
    params = small()
    record(tmp_path / "a.zarr", params, steps=12)
    rec = Recorder(tmp_path / "b.zarr", every=3, chunk_frames=4)
    Simulation(params, seed=3, recorder=rec)  # killed before its first step: no frame, no checkpoint
    assert TrajectoryStore.open(tmp_path / "b.zarr").checkpoints() == []
    sim = resume(tmp_path / "b.zarr")
    assert sim.steps == 0
    sim.step(12)
    sim.recorder.close()
    assert_stores_bitwise(tmp_path / "a.zarr", tmp_path / "b.zarr")


def test_resume_can_extend_a_finished_run(tmp_path):
    params = small()
    record(tmp_path / "a.zarr", params, steps=30)
    record(tmp_path / "b.zarr", params, steps=15)
    sim = resume(tmp_path / "b.zarr")
    assert sim.steps == 15
    sim.step(15)
    sim.recorder.close()
    # frames at 0, 3, ..., 15 (the first run's last step) then 18, ..., 30: the same as a 30-step run
    assert_stores_bitwise(tmp_path / "a.zarr", tmp_path / "b.zarr")


def test_only_complete_checkpoints_count_and_old_ones_are_pruned(tmp_path):
    path = tmp_path / "run.zarr"
    record(path, small(), steps=50, checkpoint_every=10, keep_checkpoints=2)
    store = TrajectoryStore.open(path)
    assert [c["steps"] for c in store.checkpoints()] == [40, 50]
    assert sorted(p.name for p in (path / "checkpoints").iterdir() if p.is_dir()) == [
        "step_000000000040",
        "step_000000000050",
    ]
    half = path / "checkpoints" / "step_000000000060"  # a checkpoint a crash interrupted
    half.mkdir()
    (half / "zarr.json").write_text('{"zarr_format": 3, "node_type": "group", "attributes": {"steps": 60}}')
    assert [c["steps"] for c in store.checkpoints()] == [40, 50]
    assert store.read_checkpoint()["steps"] == 50


def test_recorder_rejects_bad_options_and_existing_paths(tmp_path):
    with pytest.raises(TrajectoryError, match="every: must be an integer >= 1"):
        Recorder(tmp_path / "x.zarr", every=0)
    with pytest.raises(TrajectoryError, match="precision: unknown precision 'float16'; allowed: float32, float64"):
        Recorder(tmp_path / "x.zarr", precision="float16")
    (tmp_path / "taken.zarr").mkdir()
    with pytest.raises(TrajectoryError, match="already exists"):
        Simulation(small(), recorder=Recorder(tmp_path / "taken.zarr"))


def test_run_summary(tmp_path):
    path = tmp_path / "run.zarr"
    params = apply_overrides(load_preset("boids-2d"), ["agents.n=30", "rules.alignment.weight=0.5"])
    record(path, params, steps=9, attrs={"preset": "boids-2d", "steps_requested": 9})
    s = run_summary(path)
    assert (s["frames"], s["first_step"], s["last_step"], s["agents"]) == (4, 0, 9, 30)
    assert s["complete"] and s["checkpoints"] == [0, 9]
    assert s["size_bytes"] > 1000
    assert s["baseline"] == "preset boids-2d"
    diff = {key: (before, after) for key, before, after in s["params_diff"]}
    assert diff["agents.n"][1] == 30 and diff["rules.alignment.weight"][1] == 0.5
    assert diff["seed"] == (0, 3)


def test_docs_round_trip(tmp_path, monkeypatch):
    """The Python block of docs/data.md runs as written (record, analyse in xarray, render)."""
    text = (Path(__file__).resolve().parent.parent / "docs" / "data.md").read_text(encoding="utf-8")
    block = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    exec(compile(block, "docs/data.md", "exec"), namespace)
    assert (tmp_path / "birds.mp4").stat().st_size > 1000
    table = namespace["table"]
    assert len(table) == 61 and {"polarization", "milling", "mean_neighbors", "step"} == set(table.columns)
    assert 0.0 <= namespace["ordered"] <= 1.0
    assert namespace["bird_7"].shape == (61, 3)

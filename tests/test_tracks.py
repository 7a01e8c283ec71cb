"""Field data in, same analyses out: open_tracks on runs, movement datasets and CSV; resampling;
gaps; the analyses on imported tracks against hand-computed values and against the run itself."""

from __future__ import annotations

import math
import os
import re
from pathlib import Path

import numpy as np
import pytest
import xarray as xr
from typer.testing import CliRunner

from flocksim import Simulation, apply_overrides, load_preset
from flocksim.budgets import BudgetError
from flocksim.cli import app
from flocksim.io import Recorder, TracksError, open_tracks
from flocksim.io.movement import export_run, run_to_movement
from flocksim.io.resample import MAX_TRACK_VALUES
from flocksim.metrics.series import analyze

runner = CliRunner()


def write_csv(path: Path, header: str, rows: list[tuple]) -> Path:
    path.write_text(header + "\n" + "".join(",".join(str(v) for v in row) + "\n" for row in rows), encoding="utf-8")
    return path


def analysis_of(ds: xr.Dataset, **kwargs):
    return analyze(ds["time"].values, ds["position"].values, ds["velocity"].values, ds["present"].values, **kwargs)


@pytest.fixture(scope="module")
def run_store(tmp_path_factory) -> Path:
    """A small recorded starlings run in which two birds are removed half-way (absent afterwards)."""
    path = tmp_path_factory.mktemp("run") / "run.zarr"
    params = apply_overrides(load_preset("starlings-2d"), ["agents.n=30"])
    with Recorder(path, every=3, chunk_frames=4) as recorder:
        sim = Simulation(params, seed=5, recorder=recorder)
        sim.step(15)
        sim.remove_agents([3, 17])
        sim.step(15)
    return path


# --- hand-computed cases ------------------------------------------------------------------------------


def test_three_birds_with_known_headings_give_known_polarization_and_speed(tmp_path):
    # birds a and b fly along +x at 2 units/s, c along +y at 2 units/s; 25 frames per second
    rows = []
    for f in range(4):
        t = f / 25
        rows += [(f, "a", 2 * t, 0.0), (f, "b", 2 * t, 5.0), (f, "c", 10.0, 2 * t)]
    ds = open_tracks(write_csv(tmp_path / "three.csv", "frame,id,x,y", rows), fps=25)
    assert ds.attrs["time_unit"] == "s" and ds.attrs["velocity_from"] == "positions" and not ds.attrs["resampled"]
    np.testing.assert_allclose(ds["time"].values, np.arange(4) / 25)
    np.testing.assert_allclose(ds["velocity"].sel(agent="c").values, [[0.0, 2.0]] * 4, atol=1e-12)
    result = analysis_of(ds)
    np.testing.assert_allclose(result.series["polarization"], math.sqrt(5) / 3)  # |(2, 1)| / 3
    np.testing.assert_allclose(result.series["speed_mean"], 2.0)
    np.testing.assert_allclose(result.series["speed_fluctuation"], 0.0, atol=1e-12)
    np.testing.assert_allclose(result.series["n_present"], 3)
    assert result.summary["polarization"] == pytest.approx(math.sqrt(5) / 3)


def test_a_rotating_ring_mills(tmp_path):
    # 8 birds on a circle of radius 3 turning together at 0.2 rad per frame: milling 1, polarization 0
    rows = []
    for f in range(6):
        for i in range(8):
            a = 2 * math.pi * i / 8 + 0.2 * f
            rows.append((f, i, 3 * math.cos(a), 3 * math.sin(a)))
    ds = open_tracks(write_csv(tmp_path / "ring.csv", "frame,id,x,y", rows))
    assert ds.attrs["time_unit"] == "frames"
    result = analysis_of(ds)
    np.testing.assert_allclose(result.series["milling"][1:-1], 1.0, atol=1e-12)
    # first and last frame: one-sided differences follow the chord, 0.1 rad off the tangent
    np.testing.assert_allclose(result.series["milling"][[0, -1]], math.cos(0.1), atol=1e-12)
    np.testing.assert_allclose(result.series["polarization"], 0.0, atol=1e-12)
    assert set(result.state) == {"milling"} and result.summary["state_milling"] == 1.0
    # chord of 0.2 rad on radius 3 per frame, the central difference over two frames: 3 sin(0.2) / 1 frame
    np.testing.assert_allclose(result.series["speed_mean"][1:-1], 3 * math.sin(0.2), rtol=1e-12)


def test_csv_with_gaps_uses_the_birds_present_in_each_frame(tmp_path):
    # c is missing from frame 2 (no row) and has an empty x in frame 4; frame 5 has no rows at all
    rows = []
    for f in range(7):
        if f == 5:
            continue
        rows += [(f, "a", f, 0.0), (f, "b", f, 1.0)]
        if f != 2:
            rows.append((f, "c", 5.0, "" if f == 4 else -f))
    ds = open_tracks(write_csv(tmp_path / "gaps.csv", "frame,id,x,y", rows))
    assert ds.sizes["time"] == 7 and list(ds["agent"].values) == ["a", "b", "c"]
    present = ds["present"].values
    # c: frames 0, 1 (one-sided before the gap), 3 (alone between two gaps: no velocity), 6 alone at the end
    assert present[:, 2].tolist() == [True, True, False, False, False, False, False]
    # a and b: frame 5 is empty, so 4 and 6 have one-sided or no differences
    assert present[:, 0].tolist() == [True, True, True, True, True, False, False]
    np.testing.assert_allclose(ds["velocity"].values[4, 0], [1.0, 0.0])  # backward difference from frame 3
    result = analysis_of(ds)
    assert result.series["n_present"].tolist() == [3, 3, 2, 2, 2, 0, 0]
    np.testing.assert_allclose(result.series["polarization"][2:5], 1.0)  # a and b fly alike
    # frames 0, 1: headings (1, 0), (1, 0), (0, -1): |(2, -1)| / 3
    np.testing.assert_allclose(result.series["polarization"][:2], math.sqrt(5) / 3)
    assert np.isnan(result.series["polarization"][5:]).all()
    assert result.summary["birds_present_mean"] == pytest.approx(12 / 7)


def test_irregular_times_are_resampled_linearly_and_gaps_stay_gaps(tmp_path):
    # frames 0..4 at irregular times; x = 10 t for bird a; bird b missing from frame 2
    times = [0.0, 0.1, 0.3, 0.4, 0.55]
    rows = [(f, "a", 10 * t, 0.0, t) for f, t in enumerate(times)]
    rows += [(f, "b", 10 * t, 1.0, t) for f, t in enumerate(times) if f != 2]
    ds = open_tracks(write_csv(tmp_path / "irregular.csv", "frame,id,x,y,time", rows))
    assert ds.attrs["resampled"] == 1 and ds.attrs["dt"] == pytest.approx(0.125)  # median of 0.1, 0.2, 0.1, 0.15
    np.testing.assert_allclose(ds["time"].values, [0.0, 0.125, 0.25, 0.375, 0.5])
    np.testing.assert_allclose(ds["position"].sel(agent="a", space="x").values, [0.0, 1.25, 2.5, 3.75, 5.0])
    bx = ds["position"].sel(agent="b", space="x").values
    np.testing.assert_allclose(bx[[0, 4]], [0.0, 5.0])
    assert np.isnan(bx[1:4]).all()  # 0.125 to 0.375 lie next to frame 2 (t = 0.3), where b was not seen
    np.testing.assert_allclose(ds["velocity"].sel(agent="a", space="x").values, 10.0)


def test_resampling_never_draws_across_a_missing_frame(tmp_path):
    # frames 0, 1, 3, 4 at irregular times (off any clock): nothing between frame 1 and frame 3
    rows = [(f, "a", 10 * t, 0.0, t) for f, t in ((0, 0.0), (1, 0.1), (3, 0.35), (4, 0.45))]
    ds = open_tracks(write_csv(tmp_path / "skip.csv", "frame,id,x,y,time", rows))
    assert ds.attrs["resampled"] == 1 and ds.attrs["dt"] == pytest.approx(0.1)  # median of the linked spacings
    x = ds["position"].sel(agent="a", space="x").values
    np.testing.assert_allclose(ds["time"].values, [0.0, 0.1, 0.2, 0.3, 0.4])
    np.testing.assert_allclose(x[[0, 1, 4]], [0.0, 1.0, 4.0])
    assert np.isnan(x[2:4]).all()


def test_explicit_dt_resamples_and_frame_clocks_fill_missing_frames(tmp_path):
    # times on a clock of 0.1 s per frame, frame 2 absent: kept on the clock, frame 2 empty
    rows = [(f, "a", f, 0.0, round(0.1 * f, 3)) for f in (0, 1, 3, 4)]
    ds = open_tracks(write_csv(tmp_path / "clock.csv", "frame,id,x,y,time", rows))
    assert not ds.attrs["resampled"] and ds.sizes["time"] == 5
    np.testing.assert_allclose(ds["time"].values, [0.0, 0.1, 0.2, 0.3, 0.4])
    assert np.isnan(ds["position"].values[2]).all()
    finer = open_tracks(tmp_path / "clock.csv", dt=0.05)
    assert finer.attrs["resampled"] == 1 and finer.sizes["time"] == 9
    x = finer["position"].sel(space="x").values[:, 0]
    np.testing.assert_allclose(x[[0, 1, 2, 6, 7, 8]], [0.0, 0.5, 1.0, 3.0, 3.5, 4.0])
    assert np.isnan(x[3:6]).all()


def test_sizes_are_bounded_before_allocation(tmp_path):
    far = write_csv(tmp_path / "far.csv", "frame,id,x,y", [(0, "a", 0, 0), (10**12, "a", 1, 1)])
    with pytest.raises(BudgetError, match=r"frames 0 to 1000000000000.*budget"):
        open_tracks(far)
    ok = write_csv(tmp_path / "ok.csv", "frame,id,x,y,time", [(0, "a", 0, 0, 0.0), (1, "a", 1, 1, 1.0)])
    with pytest.raises(BudgetError, match="--dt"):
        open_tracks(ok, dt=1e-300)
    with pytest.raises(BudgetError, match="--dt"):
        open_tracks(ok, dt=1.0 / MAX_TRACK_VALUES)


# --- runs, export, movement ------------------------------------------------------------------------------


def test_run_export_open_tracks_round_trip_and_same_analyses(run_store, tmp_path):
    run = open_tracks(run_store)
    assert run.attrs["source"] == "flocksim run" and run.attrs["velocity_from"] == "recorded"
    frames, birds = export_run(run_store, tmp_path / "tracks.nc")
    assert (frames, birds) == (run.sizes["time"], 30)
    back = open_tracks(tmp_path / "tracks.nc")
    assert back.attrs["source"] == "movement" and back.attrs["velocity_from"] == "recorded"
    np.testing.assert_array_equal(back["time"].values, run["time"].values)
    np.testing.assert_array_equal(back["position"].values, run["position"].values)  # NaN where absent, too
    np.testing.assert_array_equal(back["velocity"].values, run["velocity"].values)
    assert list(back["agent"].values) == [f"id_{i}" for i in run["agent"].values]
    assert (~run["present"].values[-1]).sum() == 2  # the two removed birds
    a, b = analysis_of(run), analysis_of(back)
    for name in a.series:
        np.testing.assert_array_equal(a.series[name], b.series[name], err_msg=name)
    assert a.summary.keys() == b.summary.keys()
    for name in a.summary:
        assert a.summary[name] == b.summary[name] or (math.isnan(a.summary[name]) and math.isnan(b.summary[name]))


def test_analyses_on_imported_tracks_equal_the_metrics_the_run_recorded(run_store, tmp_path):
    export_run(run_store, tmp_path / "tracks.nc")
    result = analysis_of(open_tracks(tmp_path / "tracks.nc"))
    recorded = xr.open_zarr(run_store)
    for name, ours in (("polarization", "polarization"), ("milling", "milling"), ("speed_mean", "speed_mean")):
        np.testing.assert_allclose(result.series[ours], recorded[name].values, rtol=1e-5, atol=1e-5, err_msg=name)
    np.testing.assert_array_equal(result.series["n_present"], recorded["n_alive"].values)


def test_export_is_a_movement_poses_dataset(run_store, tmp_path):
    """The rules of movement's poses schema (ValidPosesInputs and its to_dataset), checked on the file
    as plain xarray opens it."""
    export_run(run_store, tmp_path / "tracks.nc")
    with xr.open_dataset(tmp_path / "tracks.nc") as ds:
        assert {"position", "confidence"} <= set(ds.data_vars)
        assert ds["position"].dims == ("time", "space", "keypoints", "individuals")
        assert ds["confidence"].dims == ("time", "keypoints", "individuals")
        assert ds.sizes["space"] in (2, 3) and list(ds["space"].values) == ["x", "y"][: ds.sizes["space"]]
        names = [str(n) for n in ds["individuals"].values]
        assert len(set(names)) == len(names) == 30
        assert list(ds["keypoints"].values) == ["centroid"]
        assert ds.attrs["ds_type"] == "poses" and ds.attrs["time_unit"] == "seconds"
        assert ds.attrs["source_software"] == "flocksim"
        run = xr.open_zarr(run_store)
        assert ds.attrs["fps"] == pytest.approx(1 / (run.attrs["dt"] * run.attrs["every"]))
        np.testing.assert_allclose(np.diff(ds["time"].values), 1 / ds.attrs["fps"])
        conf = ds["confidence"].values[:, 0, :]
        alive = np.isfinite(ds["position"].values[:, 0, 0, :])
        assert (conf[alive] == 1).all() and np.isnan(conf[~alive]).all()


def _poses(
    frames: int, birds: int, keypoints: int, fps: float | None, order=("time", "space", "keypoints", "individuals")
):
    """A poses dataset as movement builds it (position + confidence, time in seconds when fps is given)."""
    rng = np.random.default_rng(1)
    shape = {"time": frames, "space": 2, "keypoints": keypoints, "individuals": birds}
    pos = rng.random([shape[d] for d in ("time", "space", "keypoints", "individuals")])
    da = xr.DataArray(pos, dims=("time", "space", "keypoints", "individuals")).transpose(*order)
    coords = {
        "time": np.arange(frames) / fps if fps else np.arange(frames),
        "space": ["x", "y"],
        "keypoints": [f"keypoint_{k}" for k in range(keypoints)],
        "individuals": [f"id_{i}" for i in range(birds)],
    }
    attrs = {"ds_type": "poses", "source_software": "test", "time_unit": "seconds" if fps else "frames"}
    if fps:
        attrs["fps"] = fps
    conf = xr.DataArray(np.ones((frames, keypoints, birds)), dims=("time", "keypoints", "individuals"))
    return xr.Dataset({"position": da, "confidence": conf}, coords=coords, attrs=attrs), pos


def test_movement_poses_with_keypoints_in_either_dim_order(tmp_path):
    ds, pos = _poses(5, 4, 2, fps=None)
    ds.to_netcdf(tmp_path / "poses.nc")
    tracks = open_tracks(tmp_path / "poses.nc")
    assert tracks.attrs["time_unit"] == "frames" and tracks.attrs["velocity_from"] == "positions"
    np.testing.assert_allclose(tracks["position"].values, pos.mean(axis=2).transpose(0, 2, 1))
    one = open_tracks(tmp_path / "poses.nc", keypoint="keypoint_1", fps=50)
    np.testing.assert_allclose(one["position"].values, pos[:, :, 1, :].transpose(0, 2, 1))
    np.testing.assert_allclose(one["time"].values, np.arange(5) / 50)
    old, pos_old = _poses(5, 4, 1, fps=30.0, order=("time", "individuals", "keypoints", "space"))
    old.to_netcdf(tmp_path / "old.nc")
    tracks = open_tracks(tmp_path / "old.nc")
    assert tracks.attrs["time_unit"] == "s"
    np.testing.assert_allclose(tracks["position"].values, pos_old[:, :, 0, :].transpose(0, 2, 1))
    np.testing.assert_allclose(tracks["time"].values, np.arange(5) / 30)


def test_movement_bboxes_and_frames_missing_from_the_time_axis(tmp_path):
    centres = np.arange(2 * 2 * 3, dtype=float).reshape(3, 2, 2)  # (time, space, individuals)
    ds = xr.Dataset(
        {"position": (("time", "space", "individuals"), centres), "shape": (("time", "space", "individuals"), centres)},
        coords={"time": [0, 1, 3], "space": ["x", "y"], "individuals": ["a", "b"]},
        attrs={"ds_type": "bboxes", "time_unit": "frames", "fps": 10.0},
    )
    ds.to_netcdf(tmp_path / "boxes.nc")
    tracks = open_tracks(tmp_path / "boxes.nc")
    np.testing.assert_allclose(tracks["time"].values, [0.0, 0.1, 0.2, 0.3])
    assert np.isnan(tracks["position"].values[2]).all()
    np.testing.assert_allclose(tracks["position"].values[3], centres[2].T)


def test_movement_time_with_units_and_time_that_is_not_a_number(tmp_path):
    ds = _poses(4, 2, 1, fps=None)[0]
    ds = ds.assign_coords(time=np.arange(4) * np.timedelta64(500, "ms"))  # netCDF units "milliseconds"
    ds.attrs["time_unit"] = "seconds"
    ds.to_netcdf(tmp_path / "td.nc")
    tracks = open_tracks(tmp_path / "td.nc")
    np.testing.assert_allclose(tracks["time"].values, [0.0, 0.5, 1.0, 1.5])
    assert tracks.attrs["time_unit"] == "s"
    ds.assign_coords(time=["a", "b", "c", "d"]).to_netcdf(tmp_path / "text.nc")
    with pytest.raises(TracksError, match="coordinate 'time' has dtype"):
        open_tracks(tmp_path / "text.nc")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("frame,id,x\n0,a,1\n", "missing column 'y'"),
        ("frame,id,x,y,speed\n0,a,1,2,3\n", "unknown column 'speed'; allowed: frame, id, x, y, z, time"),
        ("0,a,1,2\n1,a,2,2\n", "unknown column '0'"),
        ("frame,id,x,y\n0,a,1,2\n1,a,abc,2\n", "line 3, column 'x': 'abc' is not a number"),
        ("frame,id,x,y\n0.5,a,1,2\n", "line 2, column 'frame'"),
        ("frame,id,x,y\n0,a,1,2\n0,a,2,2\n", "bird 'a' appears twice in frame 0"),
        ("frame,id,x,y,time\n0,a,1,2,0\n0,b,1,2,0.5\n", "frame 0 has two times"),
        ("frame,id,x,y,time\n0,a,1,2,1\n1,a,1,2,0.5\n", "frame 1 is not later than frame 0"),
        ("frame,id,x,y\n0,,1,2\n", "column 'id': empty"),
        ("frame,id,x,y\n", "no rows"),
        ("frame,id,x,x,y\n0,a,1,1,2\n", "appears twice"),
        ("frame,id,x,y\n0,a,1,2\n1,a,inf,2\n", "line 3: an infinite coordinate"),
        ("frame,id,x,y\n0,a,1,2\n1,a,1,9.969209968386869e36\n", "line 3, column 'y': 9.96921e+36 is netCDF's fill"),
        ("frame,id,x,y\n0,a,1,2\n1,a,1,9.96921e+36\n", "line 3, column 'y': 9.96921e+36 is netCDF's fill"),
        ("frame,id,x,y,z\n0,a,1,2,3\n1,a,-999,-999,-999\n", "line 3, columns x, y, z: all -999, a missing-data"),
        ("frame,id,x,y\n0,a,1,2\n0,b,-9999,-9999.0\n", "line 3, columns x, y: all -9999, a missing-data sentinel"),
    ],
)
def test_bad_csv_gets_one_line_naming_the_field(tmp_path, text, message):
    path = tmp_path / "bad.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(TracksError, match=re.escape(message)):
        open_tracks(path)


def test_bad_movement_files_get_one_line_naming_the_field(tmp_path):
    xr.Dataset({"pos": (("time", "space", "individuals"), np.zeros((2, 2, 1)))}).to_netcdf(tmp_path / "a.nc")
    with pytest.raises(TracksError, match="no variable 'position'"):
        open_tracks(tmp_path / "a.nc")
    xr.Dataset({"position": (("time", "xy", "individuals"), np.zeros((2, 2, 1)))}).to_netcdf(tmp_path / "b.nc")
    with pytest.raises(TracksError, match=r"'position' has dims \(time, xy, individuals\)"):
        open_tracks(tmp_path / "b.nc")
    xr.Dataset({"position": (("time", "space", "individuals"), np.full((2, 2, 1), "a"))}).to_netcdf(tmp_path / "c.nc")
    with pytest.raises(TracksError, match="'position' has dtype"):
        open_tracks(tmp_path / "c.nc")
    xr.Dataset({"position": (("time", "space", "individuals"), np.zeros((2, 4, 1)))}).to_netcdf(tmp_path / "d.nc")
    with pytest.raises(TracksError, match="dimension 'space'"):
        open_tracks(tmp_path / "d.nc")
    (tmp_path / "e.nc").write_bytes(b"not netcdf at all")
    with pytest.raises(TracksError, match="not a netCDF file"):
        open_tracks(tmp_path / "e.nc")
    ds, _ = _poses(3, 2, 1, fps=None)
    ds.to_netcdf(tmp_path / "f.nc")
    with pytest.raises(TracksError, match="--keypoint: 'nose' is not in"):
        open_tracks(tmp_path / "f.nc", keypoint="nose")


# --- fill values: entries never written are no positions (written by netCDF libraries, not flocksim) ---

NC_FILL = {"f8": 9.969209968386869e36, "f4": np.float32(9.96921e36), "i4": -2147483647, "i2": -32767}


def _netcdf3(path: Path, dtype: str, absent, attrs: dict | None = None, keypoints: int = 0, time=None) -> np.ndarray:
    """A movement dataset written by scipy's netCDF-3 writer: 12 frames of 5 birds in frames, bird 4
    holding ``absent`` from frame 3 on (in every keypoint but the first when ``keypoints``); the
    positions as written."""
    from scipy.io import netcdf_file

    dims = ("time", "space", "keypoints", "individuals") if keypoints else ("time", "space", "individuals")
    shape = (12, 2, keypoints, 5) if keypoints else (12, 2, 5)
    values = (np.random.default_rng(1).random(shape) * 10).astype(dtype)
    with netcdf_file(path, "w", version=2) as f:
        for name, size in zip(dims, shape, strict=True):
            f.createDimension(name, size)
        f.createVariable("time", "i4", ("time",))[:] = np.arange(12) if time is None else time
        if keypoints:
            values[3:, :, 1:, 4] = absent
        else:
            values[3:, :, 4] = absent
        position = f.createVariable("position", dtype, dims)
        position[:] = values
        for key, value in (attrs or {}).items():
            setattr(position, key, value)
    return values


@pytest.mark.parametrize("dtype", NC_FILL)
def test_netcdf_default_fill_values_are_birds_absent(tmp_path, dtype):
    written = _netcdf3(tmp_path / "t.nc", dtype, NC_FILL[dtype])
    position = open_tracks(tmp_path / "t.nc")["position"].values
    assert np.all(np.isnan(position[3:, 4])) and np.all(np.isfinite(position[:3]))
    assert np.array_equal(position[:, :4], written[:, :, :4].transpose(0, 2, 1).astype(np.float64))


@pytest.mark.parametrize(
    ("attrs", "absent"),
    [({"_FillValue": -1.0}, -1.0), ({"missing_value": -999.0}, -999.0), ({"missing_value": -999.0}, NC_FILL["f8"])],
)
def test_netcdf_declared_fill_and_missing_values_are_birds_absent(tmp_path, attrs, absent):
    _netcdf3(tmp_path / "t.nc", "f8", absent, attrs)
    position = open_tracks(tmp_path / "t.nc")["position"].values
    assert np.all(np.isnan(position[3:, 4])) and np.all(np.isfinite(position[:3]))


def test_a_keypoint_never_written_is_left_out_of_the_birds_mean(tmp_path):
    written = _netcdf3(tmp_path / "t.nc", "f8", NC_FILL["f8"], keypoints=3)
    position = open_tracks(tmp_path / "t.nc")["position"].values
    assert np.allclose(position[3:, 4], written[3:, :, 0, 4])  # the one keypoint written


def test_a_time_never_written_is_refused_naming_the_coordinate(tmp_path):
    time = np.arange(12)
    time[11] = -2147483647
    _netcdf3(tmp_path / "t.nc", "f8", 1.0, time=time)
    with pytest.raises(
        TracksError, match=re.escape("coordinate 'time' holds netCDF's default fill value -2.14748e+09 at index 11")
    ):
        open_tracks(tmp_path / "t.nc")


def test_analyze_a_netcdf4_file_with_entries_never_written(tmp_path):
    """netCDF4 (HDF5) as netCDF-C tools leave it: bird 4's positions after frame 2 never written, no
    _FillValue attribute. Before: nearest-neighbour distances of about 7e35 and every bird present."""
    netCDF4 = pytest.importorskip("netCDF4")
    path = tmp_path / "t.nc"
    values = np.random.default_rng(1).random((12, 2, 5)) * 10
    with netCDF4.Dataset(path, "w") as d:
        for name, size in (("time", 12), ("space", 2), ("individuals", 5)):
            d.createDimension(name, size)
        d.time_unit = "seconds"
        d.createVariable("time", "f8", ("time",))[:] = np.arange(12) / 25
        position = d.createVariable("position", "f8", ("time", "space", "individuals"))
        position[:, :, :4] = values[:, :, :4]
        position[:3, :, 4] = values[:3, :, 4]
        assert "_FillValue" not in position.ncattrs()
    result = runner.invoke(app, ["analyze", str(path)])
    assert result.exit_code == 0, result.output
    rows = {
        line.split("│")[1].strip(): line.split("│")[2].strip() for line in result.output.splitlines() if "│" in line
    }
    assert rows["birds present"] == "4.2"  # 4 birds, and the fifth in 3 of 12 frames
    assert 0 < float(rows["nearest-neighbour distance"]) < 15  # birds in a 10 x 10 square


def test_a_csv_coordinate_of_minus_999_beside_other_values_is_a_position(tmp_path):
    path = write_csv(tmp_path / "t.csv", "frame,id,x,y", [(0, "a", -999, 2), (1, "a", -998, 2)])
    assert open_tracks(path)["position"].values[:, 0, 0].tolist() == [-999.0, -998.0]


def test_paths_that_are_not_tracks_are_refused_without_opening(tmp_path):
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    with pytest.raises(TracksError, match="not a regular file"):
        open_tracks(fifo)  # never blocks on the FIFO
    (tmp_path / "t.txt").write_text("frame,id,x,y\n", encoding="utf-8")
    with pytest.raises(TracksError, match=r"allowed: a run store \(.zarr"):
        open_tracks(tmp_path / "t.txt")
    with pytest.raises(TracksError, match="cannot be read"):
        open_tracks(tmp_path / "missing.csv")
    with pytest.raises(TracksError, match="dt: -1 is not a positive"):
        open_tracks(tmp_path / "t.txt", dt=-1)


# --- command line --------------------------------------------------------------------------------------


def test_cli_analyze_prints_the_table_and_plots(run_store, tmp_path):
    result = runner.invoke(app, ["analyze", str(run_store), "--plot", str(tmp_path / "a.png")])
    assert result.exit_code == 0, result.output
    for label in ("polarization", "milling", "state: polarized", "speed fluctuation", "edge heading deviation"):
        assert label in result.output
    assert "orientation correlation length" in result.output and "flocksim run" in result.output
    assert "[units/s]" in result.output and "[rad]" in result.output  # units are text, not rich markup
    assert (tmp_path / "a.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_cli_export_writes_whole_files_and_refuses_bad_paths(run_store, tmp_path):
    out = tmp_path / "t.nc"
    result = runner.invoke(app, ["export", str(run_store), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "movement poses dataset" in result.output
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".t.nc.")]  # no temporary file left
    target = tmp_path / "target.nc"
    target.write_bytes(b"old")
    link = tmp_path / "link.nc"
    link.symlink_to(target)
    refused = runner.invoke(app, ["export", str(run_store), "-o", str(link)])  # an existing file: only with --force
    assert refused.exit_code == 2 and "already exists" in refused.output and target.read_bytes() == b"old"
    assert runner.invoke(app, ["export", str(run_store), "-o", str(link), "--force"]).exit_code == 0
    assert link.is_symlink() and open_tracks(target).sizes["agent"] == 30  # written through the link
    for args, message in (
        (["-o", str(tmp_path / "t.csv")], "allowed: a file ending in .nc"),
        (["-o", str(tmp_path / "missing" / "t.nc")], "does not exist"),
    ):
        result = runner.invoke(app, ["export", str(run_store), *args])
        assert result.exit_code == 2 and message in result.output, result.output
    result = runner.invoke(app, ["export", str(tmp_path / "none.zarr"), "-o", str(tmp_path / "x.nc")])
    assert result.exit_code == 2 and len(result.output.strip().splitlines()) == 1


def test_cli_analyze_bad_input_exits_2_with_one_line(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("frame,id,x,y\n0,a,1,zz\n", encoding="utf-8")
    result = runner.invoke(app, ["analyze", str(bad)])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        f"error: {bad}: line 2, column 'y': 'zz' is not a number; allowed: a number or empty (not seen)"
    ]
    good = write_csv(tmp_path / "g.csv", "frame,id,x,y", [(0, "a", 0, 0), (1, "a", 1, 0)])
    result = runner.invoke(app, ["analyze", str(good), "--plot", str(tmp_path / "fig.txt")])
    assert result.exit_code == 2 and "--plot" in result.output
    result = runner.invoke(app, ["analyze", str(good), "--keypoint", "nose"])
    assert result.exit_code == 2 and "--keypoint" in result.output


def test_the_readmes_analyze_command_reads_the_csv_field_data_describes(tmp_path, monkeypatch):
    """The README's example of analyze, as written, on a CSV with the time column docs/field-data.md
    describes: it was `analyze tracks.csv --fps 25`, refused for such a file (--fps is for files
    without times); --fps still reads one without."""
    import re
    import shlex

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    line = re.search(r"^flocksim (analyze tracks\.csv[^#\n]*)", readme, re.M).group(1)
    rows = [(f, b, 0.5 * f + b, 2.0 * b, f / 25) for f in range(6) for b in range(4)]
    monkeypatch.chdir(tmp_path)
    write_csv(tmp_path / "tracks.csv", "frame,id,x,y,time", rows)
    result = runner.invoke(app, shlex.split(line))
    assert result.exit_code == 0, result.output
    assert "polarization" in result.output
    with_fps = runner.invoke(app, ["analyze", "tracks.csv", "--fps", "25"])
    assert with_fps.exit_code == 2 and "allowed: leave --fps out (the file's times are used)" in with_fps.output
    write_csv(tmp_path / "frames.csv", "frame,id,x,y", [r[:4] for r in rows])
    assert runner.invoke(app, ["analyze", "frames.csv", "--fps", "25"]).exit_code == 0


def test_run_to_movement_keeps_the_runs_precision(run_store):
    ds = run_to_movement(run_store)
    assert ds["position"].dtype == np.float32 and ds["velocity"].dtype == np.float32


def test_docs_example(tmp_path, monkeypatch):
    """The Python block of docs/field-data.md runs as written and says what its comments say."""
    import re

    text = (Path(__file__).resolve().parent.parent / "docs" / "field-data.md").read_text(encoding="utf-8")
    block = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    exec(compile(block, "docs/field-data.md", "exec"), namespace)
    result = namespace["result"]
    assert dict(namespace["ds"].sizes) == {"time": 5, "agent": 3, "space": 2}
    assert result.series["n_present"].tolist() == [3, 3, 2, 3, 3]
    assert result.series["polarization"][0] == pytest.approx(math.sqrt(5) / 3)
    assert result.summary["speed_mean"] == pytest.approx(2.0)

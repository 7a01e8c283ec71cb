"""Tracks from a periodic box (docs/field-data.md): wraps refused without --box, unwrapped with it;
distances by the minimum image; the velocity estimators on hand-made tracks of known velocity."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from flocksim import Simulation, apply_overrides, load_preset
from flocksim.cli import app
from flocksim.io import Recorder, TracksError, open_tracks
from flocksim.io.movement import export_run
from flocksim.io.resample import velocity_from_positions
from flocksim.io.unwrap import WrapError, box_sizes, find_wrap_jump, unwrap
from flocksim.metrics.series import analyze, centred_images, frame_analyses

runner = CliRunner()


def write_csv(path: Path, header: str, rows: list[tuple]) -> Path:
    path.write_text(header + "\n" + "".join(",".join(str(v) for v in row) + "\n" for row in rows), encoding="utf-8")
    return path


def wrapping_csv(path: Path) -> Path:
    """Three birds flying along +x at 0.03 units per frame in a periodic box of side 1 for 60 frames:
    b0 and b1 side by side 0.1 apart through the edge x = 1 (b0 at x = 0.905, b1 at 0.005, both at
    y = 0.1), b2 at x = 0.505, y = 0.6; each crosses the edge once or twice."""
    rows = []
    for f in range(60):
        for i, (x0, y) in enumerate(((0.905, 0.1), (0.005, 0.1), (0.505, 0.6))):
            rows.append((f, f"b{i}", round((x0 + 0.03 * f) % 1.0, 12), y))
    return write_csv(path, "frame,id,x,y", rows)


def analysis_of(ds, **kwargs):
    return analyze(
        ds["time"].values, ds["position"].values, ds["velocity"].values, ds["present"].values, box=ds.attrs["box"]
    )


# --- unwrapping and spotting wraps, by hand ----------------------------------------------------------


def test_unwrap_takes_each_step_as_its_shortest_image():
    x = np.array([0.9, 0.95, 0.02, 0.07, 0.98, np.nan, 0.5, 0.45])  # up across the edge, back down, a gap
    position = np.stack([x, np.zeros_like(x)], axis=1)[:, None, :]  # (S, 1 bird, 2)
    out = unwrap(position, np.ones(len(x) - 1, dtype=bool), np.array([1.0, 1.0]))
    np.testing.assert_allclose(out[:5, 0, 0], [0.9, 0.95, 1.02, 1.07, 0.98])
    assert np.isnan(out[5, 0, 0])
    # after the gap the bird keeps the offset it had (+0 here): nothing is guessed across a gap
    np.testing.assert_allclose(out[6:, 0, 0], [0.5, 0.45])
    linked = np.ones(len(x) - 1, dtype=bool)
    linked[1] = False  # frames 1 and 2 are not consecutive: that step is not folded
    np.testing.assert_allclose(unwrap(position, linked, np.array([1.0, 1.0]))[:3, 0, 0], [0.9, 0.95, 0.02])


def test_wrap_jumps_are_found_and_straight_flight_is_not_a_jump():
    time = np.arange(6.0)
    x = np.array([0.92, 0.94, 0.96, 0.98, 0.0, 0.02])[:, None, None] * np.ones((1, 1, 2))
    message = find_wrap_jump(x, np.ones(5, dtype=bool), time, np.array(["a"]))
    assert message is not None and "bird 'a' jumps -0.98 units on x between times 3 and 4" in message
    # the same track at 0.05 a step: the wrap is 19 median steps, under the factor 20: not called a jump
    slow = np.array([0.8, 0.85, 0.9, 0.95, 0.0, 0.05])[:, None, None] * np.ones((1, 1, 2))
    assert find_wrap_jump(slow, np.ones(5, dtype=bool), time, np.array(["a"])) is None
    straight = np.arange(6.0)[:, None, None] * np.ones((1, 1, 2))  # one unit a frame, span 5: no jump
    assert find_wrap_jump(straight, np.ones(5, dtype=bool), time, np.array(["a"])) is None
    two = np.array([[[0.0, 0.0]], [[3.0, 0.0]]])  # one step only: its own median, not a jump
    assert find_wrap_jump(two, np.ones(1, dtype=bool), time[:2], np.array(["a"])) is None


@pytest.mark.parametrize(
    ("text", "dim", "message"),
    [
        ("abc", 2, "is not a number"),
        ("1,2,3", 2, "gives 3 sides for 2D tracks"),
        ("0", 2, "not a positive finite number"),
        ("1,nan", 2, "not a positive finite number"),
    ],
)
def test_bad_box_gets_one_line_naming_box(text, dim, message):
    with pytest.raises(WrapError, match=f"^--box: .*{message}"):
        box_sizes(text, dim)


def test_box_sizes():
    np.testing.assert_array_equal(box_sizes("15.8", 3), [15.8, 15.8, 15.8])
    np.testing.assert_array_equal(box_sizes("4, 5", 2), [4.0, 5.0])


# --- open_tracks and the analyses ------------------------------------------------------------------


def test_wrapping_csv_is_refused_without_a_box_and_exact_with_it(tmp_path):
    path = wrapping_csv(tmp_path / "wrap.csv")
    with pytest.raises(TracksError, match=r"bird 'b0' jumps -0\.97 units on x between times 3 and 4,.*--box L"):
        open_tracks(path)
    ds = open_tracks(path, box="1")
    assert ds.attrs["box"] == [1.0, 1.0]
    result = analysis_of(ds)
    np.testing.assert_allclose(result.series["speed_mean"], 0.03, rtol=1e-9)  # per frame
    np.testing.assert_allclose(result.series["speed_fluctuation"], 0.0, atol=1e-12)
    np.testing.assert_allclose(result.series["polarization"], 1.0)
    # b0 and b1 0.1 apart through the edge (0.9 the long way round); b2's nearest is b0, at (0.4, 0.5)
    np.testing.assert_allclose(result.series["nnd_mean"], (0.1 + 0.1 + math.hypot(0.4, 0.5)) / 3, rtol=1e-9)
    with pytest.raises(TracksError, match=r"spans 0\.9\d+ units on x, more than the box side 0\.5"):
        open_tracks(path, box="0.5")


def test_minimum_image_distances_and_a_flock_across_the_edge():
    # two birds at x = 0.95 and 0.05 in a box of side 1, both flying +x: 0.1 apart through the edge
    p = np.array([[0.95, 0.5], [0.05, 0.5]])
    v = np.array([[1.0, 0.0], [1.0, 0.0]])
    box = np.array([1.0, 1.0])
    images = centred_images(p, box)[:, 0]
    assert abs(images[1] - images[0]) == pytest.approx(0.1)  # side by side, not a box apart
    np.testing.assert_allclose(images % 1.0, [0.95, 0.05])
    assert frame_analyses(p, v, box)["nnd_mean"] == pytest.approx(0.1)
    assert frame_analyses(p, v)["nnd_mean"] == pytest.approx(0.9)  # open space: the long way round
    # a ring of 8 birds milling around the edge corner (0, 0): milling 1 only with the box
    a = 2 * np.pi * np.arange(8) / 8
    ring = np.stack([0.1 * np.cos(a), 0.1 * np.sin(a)], axis=1) % 1.0
    tangent = np.stack([-np.sin(a), np.cos(a)], axis=1)
    assert frame_analyses(ring, tangent, box)["milling"] == pytest.approx(1.0)
    assert frame_analyses(ring, tangent)["milling"] < 0.9


def test_cli_refuses_wrapping_tracks_with_one_line_naming_box(tmp_path):
    path = wrapping_csv(tmp_path / "wrap.csv")
    result = runner.invoke(app, ["analyze", str(path)])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "--box" in lines[0] and "jumps" in lines[0], result.output
    result = runner.invoke(app, ["analyze", str(path), "--box", "1"])
    assert result.exit_code == 0, result.output
    assert "periodic box 1 x 1" in result.output and "velocity central differences" in result.output
    row = next(line for line in result.output.splitlines() if "speed fluctuation" in line)
    assert float(row.split("│")[2]) < 1e-20  # var(|v|) / mean^2 of three birds at one speed: 0 up to rounding
    result = runner.invoke(app, ["analyze", str(path), "--box", "1,2,3"])
    assert result.exit_code == 2 and result.output.startswith("error: --box:")
    result = runner.invoke(app, ["analyze", str(path), "--box", "1", "--velocity", "sideways"])
    assert result.exit_code == 2 and "--velocity" in result.output and "central, backward, forward" in result.output


# --- velocity estimators -----------------------------------------------------------------------------


def zigzag(theta: float, frames: int = 12) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Two birds whose headings alternate +-theta about x every frame, mirror images of each other,
    moved as p[k] = p[k-1] + v[k] (one unit of time a frame): (time, position, true velocity)."""
    sign = np.where(np.arange(frames) % 2 == 0, 1.0, -1.0)
    va = np.stack([np.full(frames, math.cos(theta)), sign * math.sin(theta)], axis=1)
    vb = va * np.array([1.0, -1.0])
    velocity = np.stack([va, vb], axis=1)  # (T, 2, 2)
    position = np.cumsum(velocity, axis=0) + np.array([[0.0, 0.0], [0.0, 5.0]])
    return np.arange(frames, dtype=float), position, velocity


def test_central_differences_raise_polarization_and_backward_ones_recover_it():
    theta = math.radians(60)
    time, position, velocity = zigzag(theta)
    present = np.ones(position.shape[:2], dtype=bool)
    true = analyze(time, position, velocity, present).series["polarization"]
    np.testing.assert_allclose(true, math.cos(theta))  # 0.5 in every frame
    backward = velocity_from_positions(time, position, "backward")
    np.testing.assert_allclose(backward[1:], velocity[1:], atol=1e-12)  # exact after the first frame
    np.testing.assert_allclose(analyze(time, position, backward, present).series["polarization"], 0.5)
    central = velocity_from_positions(time, position, "central")
    # each central difference averages two mirrored headings: along x, so every bird agrees
    np.testing.assert_allclose(analyze(time, position, central, present).series["polarization"][1:-1], 1.0)
    forward = velocity_from_positions(time, position, "forward")
    np.testing.assert_allclose(forward[:-1], velocity[1:], atol=1e-12)
    with pytest.raises(ValueError, match="--velocity: 'sideways' is unknown"):
        velocity_from_positions(time, position, "sideways")


def test_velocity_option_on_a_csv(tmp_path):
    time, position, _ = zigzag(math.radians(60))
    rows = [(f, f"b{i}", position[f, i, 0], position[f, i, 1]) for f in range(len(time)) for i in range(2)]
    path = write_csv(tmp_path / "zigzag.csv", "frame,id,x,y", rows)
    assert open_tracks(path).attrs["velocity_estimator"] == "central"
    central = analysis_of(open_tracks(path)).summary["polarization"]
    backward = analysis_of(open_tracks(path, velocity="backward")).summary["polarization"]
    assert backward == pytest.approx(0.5) and central > 0.9


# --- a recorded run in periodic bounds ----------------------------------------------------------------


@pytest.fixture(scope="module")
def vicsek_store(tmp_path_factory) -> Path:
    """A small Vicsek run in its periodic 10 x 10 box (100 particles, 40 frames)."""
    path = tmp_path_factory.mktemp("vicsek") / "run.zarr"
    params = apply_overrides(load_preset("vicsek"), ["agents.n=100"])
    with Recorder(path, every=1) as recorder:
        Simulation(params, seed=3, recorder=recorder).step(40)
    return path


def test_a_periodic_run_brings_its_box_and_matches_what_it_recorded(vicsek_store, tmp_path):
    import xarray as xr

    ds = open_tracks(vicsek_store)
    assert ds.attrs["box"] == [10.0, 10.0] and ds.attrs["velocity_estimator"] == "recorded"
    result = analysis_of(ds)
    recorded = xr.open_zarr(vicsek_store)
    np.testing.assert_allclose(result.series["polarization"], recorded["polarization"].values, rtol=1e-5, atol=1e-6)
    for frame in (0, 20, 39):  # nearest neighbours by the minimum image, all pairs by hand
        p = recorded["position"].values[frame].astype(np.float64)
        d = p[None, :, :] - p[:, None, :]
        d -= 10.0 * np.round(d / 10.0)
        r = np.hypot(d[..., 0], d[..., 1]) + np.diag(np.full(len(p), np.inf))
        assert result.series["nnd_mean"][frame] == pytest.approx(r.min(axis=1).mean(), rel=1e-9)
    # differences of the unwrapped positions: the speed v0 = 0.03 per step, within float32 rounding
    for method in ("forward", "backward", "central"):
        speed = analysis_of(open_tracks(vicsek_store, velocity=method)).series["speed_mean"][1:-1]
        assert np.all(speed <= 0.03 * (1 + 1e-3)) and np.all(speed > 0.03 * 0.8), method
    with pytest.raises(TracksError, match="differs from the run's periodic bounds 10,10"):
        open_tracks(vicsek_store, box="12")
    export_run(vicsek_store, tmp_path / "v.nc")  # the export has no box: wraps are found
    with pytest.raises(TracksError, match="allowed: --box"):
        open_tracks(tmp_path / "v.nc")
    exported = analysis_of(open_tracks(tmp_path / "v.nc", box="10"))
    np.testing.assert_allclose(exported.series["nnd_mean"], result.series["nnd_mean"])

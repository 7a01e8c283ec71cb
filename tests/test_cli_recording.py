"""`flocksim run --out/--resume`, `render`, `plot`, `info` from the command line: a run killed with
SIGKILL leaves a store that opens, resume gives the uninterrupted run bitwise, Ctrl-C stops
cleanly, and damaged or foreign stores give one line and exit status 2."""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import av
import numpy as np
import pytest
import xarray as xr
import zarr
from PIL import Image
from typer.testing import CliRunner

from flocksim.cli import app
from flocksim.io import TrajectoryError, TrajectoryStore

CONSOLE_SCRIPT = Path(sys.executable).with_name("flocksim")
RUN = ["boids-2d", "--set", "agents.n=60", "--seed", "2", "--every", "5", "--checkpoint-every", "40"]


@pytest.fixture(scope="module")
def runner() -> CliRunner:
    return CliRunner()


def invoke(runner: CliRunner, *args):
    return runner.invoke(app, [str(a) for a in args], catch_exceptions=False)


def one_error_line(result) -> str:
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


def assert_same_arrays(a: Path, b: Path) -> None:
    x, y = zarr.open_group(str(a), mode="r"), zarr.open_group(str(b), mode="r")
    names = sorted(n for n, _ in x.arrays())
    assert names == sorted(n for n, _ in y.arrays())
    for name in names:
        p, q = np.asarray(x[name][...]), np.asarray(y[name][...])
        assert p.shape == q.shape and p.tobytes() == q.tobytes(), f"{name} differs"


@pytest.fixture(scope="module")
def reference(tmp_path_factory, runner) -> Path:
    """An uninterrupted 400-step recorded run."""
    path = tmp_path_factory.mktemp("ref") / "ref.zarr"
    result = invoke(runner, "run", *RUN, "--steps", "400", "--out", path, "-q")
    assert result.exit_code == 0, result.output
    assert result.stdout.strip().endswith(f"81 frames in {path}")
    return path


def start_child(path: Path, steps: int = 10**7) -> subprocess.Popen:
    env = dict(os.environ, NUMBA_NUM_THREADS="1")
    cmd = [str(CONSOLE_SCRIPT), "run", *RUN, "--steps", str(steps), "--out", str(path), "-q"]
    return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_for_checkpoints(path: Path, count: int, child: subprocess.Popen, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if len(TrajectoryStore.open(path).checkpoints()) >= count:
                return
        except TrajectoryError:  # not created yet
            pass
        assert child.poll() is None, child.communicate()
        time.sleep(0.005)
    raise AssertionError(f"no {count} checkpoints in {timeout} s")


def test_sigkill_leaves_a_readable_store_and_resume_is_bitwise(tmp_path, runner, reference):
    path = tmp_path / "killed.zarr"
    child = start_child(path)
    wait_for_checkpoints(path, 2, child)  # steps 0 and 40 at least
    child.send_signal(signal.SIGKILL)
    child.wait()
    assert child.returncode == -signal.SIGKILL
    ds = xr.open_zarr(path)  # plain xarray, no repair
    newest = TrajectoryStore.open(path).checkpoints()[-1]
    assert 40 <= newest["steps"] < 400
    assert ds.sizes["time"] >= newest["frames"] and ds.sizes["agent"] == 60
    assert np.isfinite(ds.position.isel(time=-1).values).all()
    result = invoke(runner, "run", "--resume", path, "--steps", "400", "-q")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(f"boids-2d: {400 - newest['steps']} steps")
    assert_same_arrays(reference, path)
    assert TrajectoryStore.open(path).verify()["frames"] == 81  # every chunk there and sound


@pytest.mark.parametrize("trial", range(3))
def test_killed_at_a_random_moment_the_store_opens(tmp_path, trial):
    path = tmp_path / "killed.zarr"
    child = start_child(path)
    wait_for_checkpoints(path, 1, child)
    time.sleep(random.Random(trial).uniform(0.0, 0.4))
    child.send_signal(signal.SIGKILL)
    child.wait()
    ds = xr.open_zarr(path)
    assert set(ds.position.dims) == {"time", "agent", "space"}
    steps = ds.step.values
    assert (np.diff(steps) == 5).all() and steps[0] == 0  # every committed frame, in order
    assert np.isfinite(ds.position.values).all() and ds.alive.values.all()
    assert np.isfinite(ds.polarization.values).all()


def test_ctrl_c_stops_with_a_checkpoint_and_resume_finishes(tmp_path, runner, reference):
    path = tmp_path / "stopped.zarr"
    child = start_child(path)
    wait_for_checkpoints(path, 1, child)
    child.send_signal(signal.SIGINT)
    _, stderr = child.communicate(timeout=60)
    assert child.returncode == 130, stderr
    assert stderr.strip().splitlines()[-1].endswith(f"resume with: flocksim run --resume {path}")
    stopped = int(stderr.split("interrupted at step ")[1].split(";")[0])
    assert stopped % 5 == 0 and stopped < 400  # at a frame boundary
    assert TrajectoryStore.open(path).checkpoints()[-1]["steps"] == stopped
    info = invoke(runner, "info", path)
    assert "incomplete" in info.stdout
    result = invoke(runner, "run", "--resume", path, "--steps", "400", "-q")  # a new total, kept in the store
    assert result.exit_code == 0, result.output
    assert_same_arrays(reference, path)
    again = invoke(runner, "run", "--resume", path)
    assert again.exit_code == 0 and "nothing to run" in again.stdout


def test_render_plot_info_from_the_command_line(tmp_path, runner, reference):
    video = tmp_path / "flock.mp4"
    result = invoke(runner, "render", reference, "-o", video, "--size", "128x96", "--fps", "20", "--color-by", "speed")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("flock.mp4: 81 frames, 128x96, 4.05 s at 20 fps")
    with av.open(str(video)) as container:
        stream = container.streams.video[0]
        assert (stream.codec_context.width, stream.codec_context.height) == (128, 96)
        assert float(stream.duration * stream.time_base) == pytest.approx(81 / 20)
        frames = [f.to_ndarray(format="rgb24") for f in container.decode(video=0)]
    assert len(frames) == 81
    assert all(f.std() > 3.0 for f in frames)  # not blank
    gif = tmp_path / "flock.gif"
    result = invoke(runner, "render", reference, "-o", gif, "--size", "64x48", "--stop", "1", "--trail", "4")
    assert result.exit_code == 0, result.output
    with Image.open(gif) as im:
        assert im.n_frames == 13 and im.size == (64, 48)  # steps 0, 5, ..., 60 (1 s at dt = 1/60)
    figure = tmp_path / "m.png"
    result = invoke(runner, "plot", reference, "-o", figure)
    assert result.exit_code == 0, result.output
    with Image.open(figure) as im:
        assert im.format == "PNG" and im.size[0] > 400
    csv_path = tmp_path / "m.csv"
    assert invoke(runner, "run", *RUN[:-2], "--steps", "20", "--metrics", csv_path, "-q").exit_code == 0
    result = invoke(runner, "plot", csv_path)  # its default figure, m.png, is the one drawn above
    assert result.exit_code == 2 and "--output: " in result.stderr and "already exists" in result.stderr
    result = invoke(runner, "plot", csv_path, "--force")
    assert result.exit_code == 0 and (tmp_path / "m.png").exists()
    info = invoke(runner, "info", reference)
    assert info.exit_code == 0
    text = info.stdout
    assert "81 frames: steps 0 to 400 every 5" in text and "60 agents" in text
    assert "checkpoints at steps 360, 400, 400 steps requested; complete" in text
    assert "parameters that differ from preset boids-2d:" in text and "agents.n: 300 -> 60" in text
    assert "size on disk:" in text


def test_help_texts_have_examples(runner):
    for command in ("render", "plot", "info", "run"):
        result = invoke(runner, command, "--help")
        assert result.exit_code == 0 and "Example: flocksim" in result.stdout


# --- bad input: one line, exit 2 ------------------------------------------------------------------------


@pytest.fixture
def bad_stores(tmp_path, reference) -> dict[str, Path]:
    foreign = tmp_path / "foreign.zarr"
    group = zarr.open_group(str(foreign), mode="w")
    group.create_array("x", shape=(3,), dtype="f8")
    garbage = tmp_path / "garbage.zarr"
    garbage.mkdir()
    (garbage / "zarr.json").write_text("{not json")
    plain = tmp_path / "plain.zarr"
    plain.mkdir()
    file = tmp_path / "file.zarr"
    file.write_text("hello")
    truncated = tmp_path / "truncated.zarr"
    shutil.copytree(reference, truncated)
    (truncated / "zarr.json").write_bytes((truncated / "zarr.json").read_bytes()[:200])
    return {"foreign": foreign, "garbage": garbage, "plain": plain, "file": file, "truncated": truncated}


@pytest.mark.parametrize("kind", ["foreign", "garbage", "plain", "file", "truncated", "missing"])
def test_damaged_or_foreign_stores_give_one_line_and_exit_2(runner, bad_stores, tmp_path, kind):
    path = bad_stores.get(kind, tmp_path / "missing.zarr")
    for args in (["info", path], ["plot", path, "-o", tmp_path / "x.png"], ["render", path, "-o", tmp_path / "x.mp4"]):
        line = one_error_line(invoke(runner, *args))
        assert str(path) in line and "allowed: a trajectory store written by" in line
    line = one_error_line(invoke(runner, "run", "--resume", path))
    assert str(path) in line
    assert not (tmp_path / "x.png").exists() and not (tmp_path / "x.mp4").exists()


def test_corrupt_chunk_data_gives_one_line(runner, reference, tmp_path):
    path = tmp_path / "corrupt.zarr"
    shutil.copytree(reference, path)
    chunk = next(p for p in (path / "position").rglob("*") if p.is_file() and p.name != "zarr.json")
    chunk.write_bytes(b"\x00garbage" * 10)
    line = one_error_line(invoke(runner, "render", path, "-o", tmp_path / "x.mp4", "--size", "64x48"))
    assert "damaged store: position, steps 0 to 400 (frames 0 to 80): a chunk fails its CRC-32C checksum" in line
    assert not (tmp_path / "x.mp4").exists() and not list(tmp_path.glob(".x.mp4*"))


def test_bad_run_and_render_options(runner, reference, tmp_path):
    cases = [
        (["run", "boids-2d", "--out", reference], "--out: "),
        (["run", "--resume", reference, "--set", "agents.n=3"], "--resume: parameters, seed, precision and store"),
        (["run", "--resume", reference, "--every", "3"], "--every: the run records every 5 steps"),
        (["run", "boids-2d", "--checkpoint-every", "5"], "add --out STORE"),
        (["run", "boids-2d", "--out", tmp_path / "p.zarr", "--precision", "half"], "precision: unknown precision"),
        (["run"], "target: missing"),
        (["render", reference, "-o", tmp_path / "v.avi"], "allowed: a file ending in .mp4 or .gif"),
        (["render", reference, "-o", tmp_path / "v.mp4", "--size", "100x75"], "--size: '100x75' has an odd side"),
        (["render", reference, "-o", tmp_path / "v.mp4", "--camera", "spin=2"], "--camera: unknown key 'spin'"),
        (["render", reference, "-o", tmp_path / "v.mp4", "--color-by", "mood"], "--color-by: unknown mode 'mood'"),
        (["render", reference, "-o", tmp_path / "v.mp4", "--start", "99"], "--start/--stop: no frame between"),
        (["plot", reference, "-o", tmp_path / "p.jpg"], "allowed: a file ending in .png, .svg, .pdf"),
        (["plot", reference, "-x", "agents.n"], "-x, -y, --hue: apply to sweep results"),
    ]
    for args, message in cases:
        line = one_error_line(invoke(runner, *args))
        assert message in line, (args, line)
    assert not (tmp_path / "p.zarr").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == []

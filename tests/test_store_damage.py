"""Stores that never lie: a damaged trajectory store gives one line naming the damaged array and
steps (exit status 2 on the command line) wherever it is read (info, info --check, open_run,
render, plot, resume), and resume never writes into a store it could not verify."""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

import flocksim
from flocksim.cli import app
from flocksim.config import apply_overrides
from flocksim.io import Recorder, TrajectoryError, TrajectoryStore, open_run, resume
from flocksim.io.verify import checkpoint_checksum

# 31 frames (steps 0, 2, ..., 60) in time chunks of 8 frames: chunk 1 holds frames 8-15, steps 16-30
CHUNK_1 = "steps 16 to 30 (frames 8 to 15)"
NEWEST = "checkpoint step_000000000060 (step 60)"


@pytest.fixture(scope="module")
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture(scope="module")
def pristine(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("pristine") / "run.zarr"
    params = apply_overrides(flocksim.load_preset("boids-2d"), ["agents.n=30"])
    recorder = Recorder(path, every=2, chunk_frames=8, checkpoint_every=20, attrs={"steps_requested": 60})
    with recorder:
        flocksim.Simulation(params, seed=3, recorder=recorder).step(60)
    return path


def chunk(store: Path, array: str, key: str) -> Path:
    return store / array / key


def checkpoint_array(store: Path, what: str) -> Path:
    """The folder of the newest checkpoint's array that holds ``what`` (e.g. state.position)."""
    from flocksim.io.verify import array_paths

    folder = sorted(p for p in (store / "checkpoints").iterdir() if p.is_dir())[-1]
    attrs = json.loads((folder / "zarr.json").read_text())["attributes"]
    index = next(i for i, where in array_paths(json.loads(attrs["tree"])).items() if where == what)
    return folder / f"a{index}"


def edit_checkpoint_attrs(store: Path, change: Callable[[dict], None]) -> None:
    folder = sorted(p for p in (store / "checkpoints").iterdir() if p.is_dir())[-1]
    meta = json.loads((folder / "zarr.json").read_text())
    change(meta["attributes"])
    (folder / "zarr.json").write_text(json.dumps(meta))


def truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def forge_frames(store: Path) -> None:
    """Lower the newest checkpoint's frame count by 4 and recompute its checksum, as a careful
    forger would: only the frame count's agreement with the step array can tell."""

    def change(attrs: dict) -> None:
        import zarr

        folder = sorted(p for p in (store / "checkpoints").iterdir() if p.is_dir())[-1]
        arrays = [zarr.open_array(str(folder / f"a{i}"), mode="r")[...] for i in range(attrs["arrays"])]
        attrs["frames"] -= 4
        attrs["checksum"] = checkpoint_checksum(attrs["tree"], attrs["steps"], attrs["frames"], attrs["agents"], arrays)

    edit_checkpoint_attrs(store, change)


# damage -> (what to do to a copy of the store, the one line every reader gives, which readers see it)
DAMAGE: dict[str, tuple[Callable[[Path], None], str, set[str]]] = {
    "deleted checkpoint chunk": (
        lambda s: chunk(checkpoint_array(s, "state.position"), "", "c/0/0").unlink(),
        f"{NEWEST}, array a{{}} (state.position): chunk c/0/0 is missing",
        {"check", "resume"},
    ),
    "deleted position chunk": (
        lambda s: chunk(s, "position", "c/1/0/0").unlink(),
        f"position, {CHUNK_1}: chunk c/1/0/0 is missing",
        {"info", "check", "open_run", "render", "plot", "resume"},
    ),
    "deleted alive chunk": (
        lambda s: chunk(s, "alive", "c/1/0").unlink(),
        f"alive, {CHUNK_1}: chunk c/1/0 is missing",
        {"info", "check", "open_run", "render", "plot", "resume"},
    ),
    "deleted step chunk": (
        lambda s: chunk(s, "step", "c/1").unlink(),
        "step, frames 8 to 15: chunk c/1 is missing",
        {"info", "check", "open_run", "render", "plot", "resume"},
    ),
    "deleted velocity folder": (
        lambda s: shutil.rmtree(s / "velocity"),
        "array velocity is missing (its folder velocity/ or its zarr.json is gone)",
        {"info", "check", "open_run", "render", "plot", "resume"},
    ),
    "edited frames attribute": (
        lambda s: edit_checkpoint_attrs(s, lambda a: a.update(frames=a["frames"] - 4)),
        f"{NEWEST}: its checksum does not match its arrays and counts (edited or corrupted)",
        {"check", "resume"},
    ),
    "forged frames attribute": (
        forge_frames,
        f"{NEWEST}: it counts 27 frames, which disagrees with the step array (frame 27 is at step 54)",
        {"check", "resume"},
    ),
    "truncated position chunk": (
        lambda s: truncate(chunk(s, "position", "c/1/0/0")),
        f"position, {CHUNK_1}: a chunk fails its CRC-32C checksum (corrupted or truncated)",
        {"check", "render", "resume"},
    ),
    "deleted checkpoints": (
        lambda s: [shutil.rmtree(p) for p in (s / "checkpoints").iterdir() if p.is_dir()],
        "checkpoint step_000000000040 (step 40) (and 1 more) is missing: the store recorded writing it, and its "
        "folder checkpoints/step_000000000040/ is gone or incomplete",
        {"check", "resume"},
    ),
    "deleted newest checkpoint": (
        lambda s: shutil.rmtree(s / "checkpoints" / "step_000000000060"),
        "checkpoint step_000000000060 (step 60) is missing: the store recorded writing it, and its folder "
        "checkpoints/step_000000000060/ is gone or incomplete",
        {"check", "resume"},
    ),
    "truncated checkpoint chunk": (
        lambda s: truncate(chunk(checkpoint_array(s, "state.velocity"), "", "c/0/0")),
        f"{NEWEST}, array a{{}} (state.velocity): a chunk fails its CRC-32C checksum (corrupted or truncated)",
        {"check", "resume"},
    ),
}


def fingerprint(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` and a hash of its bytes."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


# what resume adds to the line when a checkpoint is damaged: the way forward, or that there is none
FROM_40 = (
    "; allowed: --from-intact-checkpoint to resume from step 40 (the newest intact checkpoint), "
    "rewriting the frames after it"
)
RESUME_HINT = {
    "deleted checkpoint chunk": FROM_40,
    "edited frames attribute": FROM_40,
    "forged frames attribute": FROM_40,
    "deleted newest checkpoint": FROM_40,
    "truncated checkpoint chunk": FROM_40,
    "deleted checkpoints": "; no checkpoint is intact, so it cannot be resumed",
}


@pytest.fixture(params=list(DAMAGE))
def damaged(request, pristine, tmp_path) -> tuple[Path, str, set[str], str]:
    damage, message, readers = DAMAGE[request.param]
    path = tmp_path / "damaged.zarr"
    shutil.copytree(pristine, path)
    damage(path)
    if "{}" in message:  # the checkpoint array's index
        what = "state.position" if "position" in message else "state.velocity"
        message = message.format(checkpoint_array(path, what).name[1:])
    return path, message, readers, RESUME_HINT.get(request.param, "")


def test_the_pristine_store_verifies(pristine, runner):
    result = runner.invoke(app, ["info", "--check", str(pristine)])
    assert result.exit_code == 0, result.output
    assert "check: no damage found" in result.stdout


def test_every_reader_names_the_damage_in_one_line(damaged, runner, tmp_path):
    path, message, readers, hint = damaged
    expected = f"error: {path}: damaged store: {message}"
    commands = {
        "info": ["info", path],
        "check": ["info", "--check", path],
        "render": ["render", path, "-o", tmp_path / "v.gif", "--size", "32x24", "-q"],
        "plot": ["plot", path, "-o", tmp_path / "p.png"],
        "resume": ["run", "--resume", path, "--steps", "80", "-q"],
    }
    before = fingerprint(path)
    for reader, args in commands.items():
        result = runner.invoke(app, [str(a) for a in args])
        if reader in readers:
            assert result.exit_code == 2, (reader, result.output)
            assert result.stderr.strip().splitlines() == [expected + (hint if reader == "resume" else "")], reader
        else:
            assert result.exit_code == 0, (reader, result.output)
    assert not (tmp_path / "v.gif").exists() or "render" not in readers
    assert fingerprint(path) == before  # resume wrote nothing into the store it could not verify
    if "open_run" in readers:
        with pytest.raises(TrajectoryError) as exc:
            open_run(path)
        assert str(exc.value) == f"{path}: damaged store: {message}"
    if "resume" in readers:
        with pytest.raises(TrajectoryError) as exc:
            resume(path)
        assert str(exc.value) == f"{path}: damaged store: {message}{hint}"
        assert fingerprint(path) == before


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory) -> Path:
    """The pristine store's run carried on to step 80 without a stop."""
    path = tmp_path_factory.mktemp("uninterrupted") / "run.zarr"
    params = apply_overrides(flocksim.load_preset("boids-2d"), ["agents.n=30"])
    recorder = Recorder(path, every=2, chunk_frames=8, checkpoint_every=20, attrs={"steps_requested": 80})
    with recorder:
        flocksim.Simulation(params, seed=3, recorder=recorder).step(80)
    return path


def assert_same_arrays(a: Path, b: Path) -> None:
    import numpy as np
    import zarr

    x, y = zarr.open_group(str(a), mode="r"), zarr.open_group(str(b), mode="r")
    names = sorted(n for n, _ in x.arrays())
    assert names == sorted(n for n, _ in y.arrays())
    for name in names:
        p, q = np.asarray(x[name][...]), np.asarray(y[name][...])
        assert p.shape == q.shape and p.tobytes() == q.tobytes(), f"{name} differs"


@pytest.mark.parametrize(
    ("damage", "intact"),
    [
        ("truncated checkpoint chunk", 40),
        ("forged frames attribute", 40),
        ("deleted newest checkpoint", 40),
        ("deleted older checkpoint", 60),
    ],
)
def test_a_damaged_checkpoint_resumes_from_the_newest_intact_one_when_asked(
    pristine, uninterrupted, tmp_path, runner, damage, intact
):
    """Refused with the way forward named (the flag and the intact step), the store untouched;
    with --from-intact-checkpoint the run goes on from that step, the frames after it rewritten:
    the finished store equals an uninterrupted run byte for byte, and passes info --check."""
    path = tmp_path / "run.zarr"
    shutil.copytree(pristine, path)
    if damage == "deleted older checkpoint":
        shutil.rmtree(path / "checkpoints" / "step_000000000040")
    else:
        DAMAGE[damage][0](path)
    before = fingerprint(path)
    refused = runner.invoke(app, ["run", "--resume", str(path), "--steps", "80", "-q"])
    assert refused.exit_code == 2, refused.output
    (line,) = refused.stderr.strip().splitlines()
    assert line.endswith(
        f"; allowed: --from-intact-checkpoint to resume from step {intact} (the newest intact checkpoint), "
        "rewriting the frames after it"
    ), line
    assert fingerprint(path) == before
    result = runner.invoke(app, ["run", "--resume", str(path), "--steps", "80", "--from-intact-checkpoint", "-q"])
    assert result.exit_code == 0, result.output
    (note,) = [line for line in result.stderr.strip().splitlines() if not line.startswith("flocksim: compiling")]
    assert note.startswith(f"note: {path}: damaged store: ")
    assert note.endswith(
        f"; resuming from checkpoint step_{intact:012d} (step {intact}), the newest intact one, and rewriting "
        "the frames after it"
    ), note
    assert f": {80 - intact} steps" in result.stdout
    assert_same_arrays(uninterrupted, path)
    store = TrajectoryStore.open(path)
    assert store.verify()["frames"] == 41
    assert [c["steps"] for c in store.recorded_checkpoints()] == [60, 80]


def test_resume_from_python_takes_the_same_way_forward(pristine, uninterrupted, tmp_path):
    path = tmp_path / "run.zarr"
    shutil.copytree(pristine, path)
    shutil.rmtree(path / "checkpoints" / "step_000000000060")
    sim = resume(path, from_intact_checkpoint=True)
    assert sim.steps == 40
    sim.step(40)
    sim.recorder.close()
    assert_same_arrays(uninterrupted, path)


def info_state(runner, path: Path) -> str:
    result = runner.invoke(app, ["info", str(path)])
    assert result.exit_code == 0, result.output
    return next(line for line in result.stdout.splitlines() if "checkpoints at steps" in line).strip()


def test_info_says_whether_and_how_a_run_resumes_when_checkpoints_are_gone(pristine, tmp_path, runner):
    """A complete run whose checkpoints were deleted is complete; an incomplete one says which
    command continues it, or that none can."""
    path = tmp_path / "run.zarr"
    shutil.copytree(pristine, path)
    assert info_state(runner, path) == "checkpoints at steps 40, 60, 60 steps requested; complete"
    for sub in ("step_000000000040", "step_000000000060"):
        shutil.rmtree(path / "checkpoints" / sub)
    assert info_state(runner, path) == "checkpoints at steps none (40, 60 missing), 60 steps requested; complete"
    longer = tmp_path / "longer.zarr"
    shutil.copytree(pristine, longer)
    TrajectoryStore.open(longer, writable=True).set_attrs(steps_requested=80)
    assert info_state(runner, longer) == (
        "checkpoints at steps 40, 60, 80 steps requested; incomplete: flocksim run --resume continues it"
    )
    shutil.rmtree(longer / "checkpoints" / "step_000000000060")
    assert info_state(runner, longer) == (
        "checkpoints at steps 40 (60 missing), 80 steps requested; incomplete: "
        f"flocksim run --resume {longer} --from-intact-checkpoint continues it from step 40"
    )
    shutil.rmtree(longer / "checkpoints" / "step_000000000040")
    assert info_state(runner, longer) == (
        "checkpoints at steps none (40, 60 missing), 80 steps requested; incomplete, and it cannot be resumed: "
        "no checkpoint is left"
    )


def test_the_store_records_the_checkpoints_it_keeps(pristine, tmp_path, runner):
    store = TrajectoryStore.open(pristine)
    assert store.recorded_checkpoints() == [
        {"name": "step_000000000040", "steps": 40},
        {"name": "step_000000000060", "steps": 60},
    ]
    assert [c["name"] for c in store.checkpoints()] == ["step_000000000040", "step_000000000060"]
    # a store that does not record them (written by an older flocksim) passes, with a note
    path = tmp_path / "unrecorded.zarr"
    shutil.copytree(pristine, path)
    root = json.loads((path / "zarr.json").read_text())
    root["attributes"].pop("checkpoints_kept")
    root["consolidated_metadata"]["metadata"]  # the root's own attributes live outside it
    (path / "zarr.json").write_text(json.dumps(root))
    shutil.rmtree(path / "checkpoints" / "step_000000000060")
    result = runner.invoke(app, ["info", "--check", str(path)])
    assert result.exit_code == 0, result.output
    assert "does not record which checkpoints it wrote" in result.stdout and "1 checkpoints read" in result.stdout
    # resumed, the store records what the resumed run keeps
    resumed = tmp_path / "resumed.zarr"
    shutil.copytree(pristine, resumed)
    assert runner.invoke(app, ["run", "--resume", str(resumed), "--steps", "100", "-q"]).exit_code == 0
    assert [c["steps"] for c in TrajectoryStore.open(resumed).recorded_checkpoints()] == [80, 100]
    assert runner.invoke(app, ["info", "--check", str(resumed)]).exit_code == 0


def test_resume_on_a_read_only_file_system_stops_before_any_work(pristine, tmp_path, runner, read_only):
    folder = tmp_path / "ro"
    folder.mkdir()
    shutil.copytree(pristine, folder / "run.zarr")
    with read_only(folder):
        result = runner.invoke(app, ["run", "--resume", str(folder / "run.zarr"), "--steps", "80", "-q"])
    assert result.exit_code == 2
    (line,) = result.stderr.strip().splitlines()
    assert "cannot be written" in line and "read-only" in line


def test_a_store_of_format_1_reads_but_does_not_resume(pristine, tmp_path, runner):
    """Stores written before format 2 (no chunk checksums, no checkpoint checksum, empty chunks
    left out): readable when every chunk is there, never resumed, a gap named as such."""
    path = tmp_path / "old.zarr"
    shutil.copytree(pristine, path)
    root = json.loads((path / "zarr.json").read_text())
    root["attributes"]["flocksim_format_version"] = 1
    (path / "zarr.json").write_text(json.dumps(root))
    edit_checkpoint_attrs(path, lambda a: a.pop("checksum"))  # the newest, which resume reads
    assert runner.invoke(app, ["info", str(path)]).exit_code == 0
    assert open_run(path).sizes["time"] == 31
    result = runner.invoke(app, ["run", "--resume", str(path), "--steps", "80", "-q"])
    assert result.exit_code == 2 and "written by an older flocksim (trajectory format 1)" in result.stderr
    (path / "alive" / "c" / "1" / "0").unlink()
    result = runner.invoke(app, ["info", str(path)])
    assert result.exit_code == 2 and "chunk c/1/0 is missing; it was written by an older flocksim" in result.stderr


def test_every_chunk_is_written_even_when_it_holds_only_fill_values(tmp_path):
    """An all-dead chunk (alive all false) and the columns of agents born later exist on disk, so a
    missing chunk is always damage."""
    path = tmp_path / "grow.zarr"
    params = apply_overrides(flocksim.load_preset("boids-2d"), ["agents.n=4"])
    with Recorder(path, every=1, chunk_frames=2) as recorder:
        sim = flocksim.Simulation(params, seed=1, recorder=recorder)
        sim.step(3)
        sim.remove_agents([0, 1, 2, 3])
        sim.step(3)
        sim.add_agents([[1.0, 1.0]] * 5)  # a new agent chunk: filled for the 7 earlier frames
        sim.step(2)
    store = TrajectoryStore.open(path)
    assert store.n_agents == 9
    assert (path / "alive" / "c" / "2" / "0").is_file()  # frames 4-5: everyone dead, still written
    assert (path / "position" / "c" / "0" / "2" / "0").is_file()  # frames 0-1 of the agents born at step 6
    assert store.verify()["frames"] == 9


def flip_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x10
    path.write_bytes(bytes(data))


LAZY_READS: dict[str, Callable] = {
    "values": lambda ds: ds["position"].values,
    "compute": lambda ds: ds["position"].compute(),
    "load": lambda ds: ds.load(),
    "isel": lambda ds: ds["position"].isel(time=10).values,
    "slice": lambda ds: ds["position"][9:11].values,
    "reduction": lambda ds: float(ds["position"].sum()),
    "to_numpy": lambda ds: ds["position"].to_numpy(),
}


@pytest.mark.parametrize("chunks", ["dask", "none"])
@pytest.mark.parametrize("damage", ["flipped", "deleted"])
def test_lazy_reads_of_open_run_name_the_array_and_steps(pristine, tmp_path, chunks, damage):
    """A store damaged after open_run returned: every lazy read path raises flocksim's one line (as
    info --check does), not zarr's error; reads of the undamaged frames still work."""
    import xarray as xr

    path = tmp_path / "run.zarr"
    shutil.copytree(pristine, path)
    ds = open_run(path) if chunks == "dask" else open_run(path, chunks=None)
    if damage == "flipped":
        flip_byte(chunk(path, "position", "c/1/0/0"))
        problem = "a chunk fails its CRC-32C checksum (corrupted or truncated)"
    else:
        chunk(path, "position", "c/1/0/0").unlink()
        problem = "chunk c/1/0/0 is missing"
    expected = f"{path}: damaged store: position, {CHUNK_1}: {problem}"
    reads = dict(LAZY_READS)
    if chunks == "none":  # vectorized (point-wise) indexing reaches the backend as is
        reads["vindex"] = lambda ds: ds["position"].isel(time=xr.DataArray([3, 12]), agent=xr.DataArray([0, 1])).values
    for label, read in reads.items():
        with pytest.raises(TrajectoryError) as exc:
            read(ds)
        assert str(exc.value) == expected, label
    assert ds["position"][:8].values.shape == (8, 30, 2)  # frames 0 to 7: chunk 0, intact


def test_a_crash_between_an_attribute_write_and_its_commit_leaves_a_readable_store(pristine, tmp_path, monkeypatch):
    path = tmp_path / "run.zarr"
    shutil.copytree(pristine, path)
    store = TrajectoryStore.open(path, writable=True)

    def killed() -> None:
        raise KeyboardInterrupt("killed before the commit")

    monkeypatch.setattr(store, "commit", killed)
    with pytest.raises(KeyboardInterrupt):
        store.set_attrs(steps_requested=80)
    reopened = TrajectoryStore.open(path)  # the root still lists every array (consolidated metadata)
    assert reopened.attrs["steps_requested"] == 80 and reopened.n_frames == 31
    assert reopened.verify()["checkpoints"] == 2


class _InterruptedAfterTaking(list):
    """A frame buffer whose ``append`` takes the frame, then is interrupted (a kernel's
    KeyboardInterrupt at that instant)."""

    def append(self, frame) -> None:
        super().append(frame)
        raise KeyboardInterrupt


@pytest.mark.parametrize("frames_before", [2, 3])
def test_an_interrupt_between_taking_a_frame_and_noting_it_leaves_a_store_that_verifies(
    runner, tmp_path, frames_before
):
    """Interrupted right after a frame is taken, then closed (what a kernel's shutdown does): the
    store holds that step once, and passes ``info --check``. With 3 frames taken before, the
    interrupted frame completes a time chunk (chunk_frames=4)."""
    path = tmp_path / "run.zarr"
    params = apply_overrides(flocksim.load_preset("boids-2d"), ["agents.n=20"])
    recorder = Recorder(path, every=1, chunk_frames=4, checkpoint_every=1000)
    sim = flocksim.Simulation(params, seed=1, recorder=recorder)
    sim.step(frames_before - 1)  # frames 0 to frames_before - 1, frame 0 the start
    recorder._buffer = _InterruptedAfterTaking(recorder._buffer)
    with pytest.raises(KeyboardInterrupt):
        sim.step(1)
    recorder._buffer = list(recorder._buffer)
    recorder.close(sim)
    result = runner.invoke(app, ["info", "--check", str(path)])
    assert result.exit_code == 0, result.output
    assert open_run(path)["step"].values.tolist() == list(range(frames_before + 1))


def test_an_interrupt_right_after_a_chunk_is_written_leaves_a_store_that_verifies(runner, tmp_path, monkeypatch):
    """Interrupted just after a time chunk's frames are appended to the store, then closed: the
    chunk's frames are not written a second time."""
    path = tmp_path / "run.zarr"
    params = apply_overrides(flocksim.load_preset("boids-2d"), ["agents.n=20"])
    recorder = Recorder(path, every=1, chunk_frames=4, checkpoint_every=1000)
    sim = flocksim.Simulation(params, seed=1, recorder=recorder)
    sim.step(2)  # frames 0 to 2 taken
    append = recorder.store.append

    def append_then_interrupt(data) -> None:
        append(data)
        raise KeyboardInterrupt

    monkeypatch.setattr(recorder.store, "append", append_then_interrupt)
    with pytest.raises(KeyboardInterrupt):
        sim.step(1)  # frame 3 completes the chunk
    monkeypatch.setattr(recorder.store, "append", append)
    recorder.close(sim)
    result = runner.invoke(app, ["info", "--check", str(path)])
    assert result.exit_code == 0, result.output
    assert open_run(path)["step"].values.tolist() == [0, 1, 2, 3]

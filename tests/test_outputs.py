"""Outputs never clobber (flocksim/atomic.py): every writer of the command line refuses an output
file that exists (or a link to one) unless given ``--force``, leaving it byte-identical; with
``--force`` it writes through a symbolic link to the file it points to (the link stays a link);
it writes straight into a FIFO or a device (never replacing it), to standard output for ``-``
where it offers that, and refuses a path it cannot write before any work starts."""

from __future__ import annotations

import contextlib
import os
import stat
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from flocksim.atomic import OutputError, atomic_open, atomic_path, check_output, resolve
from flocksim.cli import app

RUN = ["run", "boids-2d", "--set", "agents.n=12", "--steps", "4", "--every", "2", "-q"]
SWEEP = """
base = "boids-2d"
steps = 2
[[axes]]
key = "agents.n"
values = [5, 6]
[[summaries]]
metric = "polarization"
"""


@pytest.fixture(scope="module")
def runner() -> CliRunner:
    return CliRunner()


def invoke(runner: CliRunner, *args):
    return runner.invoke(app, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture(scope="module")
def store(tmp_path_factory, runner) -> Path:
    path = tmp_path_factory.mktemp("store") / "run.zarr"
    assert invoke(runner, *RUN, "--out", path).exit_code == 0
    return path


@pytest.fixture(scope="module")
def metrics_csv(tmp_path_factory, runner) -> Path:
    path = tmp_path_factory.mktemp("csv") / "m.csv"
    assert invoke(runner, *RUN, "--metrics", path).exit_code == 0
    return path


def fake_experiment(monkeypatch) -> None:
    """`flocksim experiment` with canned rows instead of minutes of runs (only its output is tested here)."""
    import flocksim.experiments as experiments

    rows = [
        {"experiment": "shape", "dim": 2, "condition": "c", "seed": 0, "metric": "aspect", "value": 1.5},
        {"experiment": "shape", "dim": 2, "condition": "c", "seed": 0, "metric": "axis_cos", "value": 0.5},
    ]
    monkeypatch.setattr(experiments, "run_experiment", lambda *a, **k: rows)


def write_sweep_results(path: Path) -> None:
    """The sweep's own writer (ResultsStore.finalize), without a Dask cluster."""
    from flocksim.sweep import parse_sweep
    from flocksim.sweep.results import ResultsStore

    sweep = parse_sweep(SWEEP, name="tiny")
    results = ResultsStore(sweep, path, force=True)
    results.add({f.name: None for f in results.schema} | {"task_id": "t0", "status": "ok", "seed": 0})
    results.finalize(["t0"])


# writer -> (file suffix, function(runner, store, metrics_csv, path, monkeypatch, *more arguments) -> exit code,
# first bytes written)
Writer = Callable[..., int]
WRITERS: dict[str, tuple[str, Writer, bytes]] = {
    "run --metrics": (".csv", lambda r, s, m, p, mp, *x: invoke(r, *RUN, "--metrics", p, *x).exit_code, b"step,time,"),
    "schema -o": (".json", lambda r, s, m, p, mp, *x: invoke(r, "schema", "-o", p, *x).exit_code, b"{"),
    "experiment --csv": (
        ".csv",
        lambda r, s, m, p, mp, *x: (
            fake_experiment(mp),
            invoke(r, "experiment", "shape", "--csv", p, "-q", *x).exit_code,
        )[1],
        b"experiment,dim,",
    ),
    "plot -o": (".png", lambda r, s, m, p, mp, *x: invoke(r, "plot", m, "-o", p, *x).exit_code, b"\x89PNG"),
    "render -o": (
        ".gif",
        lambda r, s, m, p, mp, *x: invoke(r, "render", s, "-o", p, "--size", "32x24", "-q", *x).exit_code,
        b"GIF8",
    ),
    "sweep -o": (".parquet", lambda r, s, m, p, mp, *x: (write_sweep_results(p), 0)[1], b"PAR1"),
}
# the command-line writers that refuse an existing output unless given --force (sweep -o: tests/test_sweep.py)
REFUSERS: dict[str, tuple[str, Writer, bytes]] = {k: v for k, v in WRITERS.items() if k != "sweep -o"} | {
    "analyze --plot": (
        ".png",
        lambda r, s, m, p, mp, *x: invoke(r, "analyze", s, "--plot", p, *x).exit_code,
        b"\x89PNG",
    ),
    "export -o": (".nc", lambda r, s, m, p, mp, *x: invoke(r, "export", s, "-o", p, *x).exit_code, b"\x89HDF"),
}


@pytest.mark.parametrize("writer", WRITERS)
def test_a_symlink_stays_a_link_and_its_target_gets_the_content(
    writer, runner, store, metrics_csv, tmp_path, monkeypatch
):
    suffix, write, magic = WRITERS[writer]
    target = tmp_path / "elsewhere" / f"real{suffix}"
    target.parent.mkdir()
    target.write_bytes(b"old")
    target.chmod(0o640)
    link = tmp_path / f"link{suffix}"
    link.symlink_to(target)
    assert write(runner, store, metrics_csv, link, monkeypatch, "--force") == 0
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_bytes().startswith(magic)
    assert stat.S_IMODE(target.stat().st_mode) == 0o640  # the file it replaced kept its permission bits
    assert not [p for p in target.parent.iterdir() if p != target]  # no temporary file left


@pytest.mark.parametrize("writer", WRITERS)
def test_a_fifo_read_by_a_thread_gets_the_bytes_and_stays_a_fifo(
    writer, runner, store, metrics_csv, tmp_path, monkeypatch
):
    suffix, write, magic = WRITERS[writer]
    fifo = tmp_path / f"pipe{suffix}"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()), daemon=True)
    reader.start()
    try:
        assert write(runner, store, metrics_csv, fifo, monkeypatch) == 0
        reader.join(timeout=60)
    finally:
        if reader.is_alive():  # the writer never opened it: release the reader
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    assert not reader.is_alive() and received and received[0].startswith(magic)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.endswith(".parts")) == [fifo.name]


@pytest.mark.parametrize("writer", WRITERS)
def test_a_device_stays_a_device(writer, runner, store, metrics_csv, tmp_path, monkeypatch):
    suffix, write, _magic = WRITERS[writer]
    device = tmp_path / f"null{suffix}"  # a /dev/null of our own, named as the writer wants
    try:
        os.mknod(device, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except PermissionError:
        device = Path("/dev/null")
        if suffix not in (".csv", ".json"):
            pytest.skip("creating a device node needs root; the writer wants a file suffix")
    assert write(runner, store, metrics_csv, device, monkeypatch) == 0
    assert stat.S_ISCHR(os.lstat(device).st_mode)
    assert os.stat(device).st_rdev == os.makedev(1, 3)


@pytest.mark.parametrize("writer", REFUSERS)
def test_an_existing_output_is_refused_in_one_line_and_kept_byte_identical(
    writer, runner, store, metrics_csv, tmp_path, monkeypatch
):
    suffix, write, magic = REFUSERS[writer]
    earlier = tmp_path / f"earlier{suffix}"
    earlier.write_bytes(b"an earlier result\x00\xff")
    earlier.chmod(0o640)
    link = tmp_path / f"link{suffix}"
    link.symlink_to(earlier)
    for path in (earlier, link):
        code = write(runner, store, metrics_csv, path, monkeypatch)
        assert code == 2, writer
        assert earlier.read_bytes() == b"an earlier result\x00\xff" and link.is_symlink()
        assert stat.S_IMODE(earlier.stat().st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([earlier.name, link.name])  # nothing else written
    assert write(runner, store, metrics_csv, earlier, monkeypatch, "--force") == 0
    assert earlier.read_bytes().startswith(magic)


@pytest.mark.parametrize("writer", REFUSERS)
def test_the_refusal_names_the_option_the_path_and_force(writer, runner, store, metrics_csv, tmp_path, monkeypatch):
    suffix, _write, _magic = REFUSERS[writer]
    earlier = tmp_path / f"earlier{suffix}"
    earlier.write_text("earlier")
    command, option = writer.split()
    source = {"run": None, "schema": None, "experiment": None, "plot": metrics_csv}.get(command, store)
    args = {
        "run --metrics": [*RUN, "--metrics", earlier],
        "schema -o": ["schema", "-o", earlier],
        "experiment --csv": ["experiment", "shape", "--csv", earlier, "-q"],
        "plot -o": ["plot", source, "-o", earlier],
        "render -o": ["render", source, "-o", earlier, "--size", "32x24", "-q"],
        "analyze --plot": ["analyze", source, "--plot", earlier],
        "export -o": ["export", source, "-o", earlier],
    }[writer]
    fake_experiment(monkeypatch)
    result = invoke(runner, *args)
    assert result.exit_code == 2
    long = {"-o": "--output"}.get(option, option)
    assert result.stderr.strip() == (
        f"error: {long}: {earlier} already exists; allowed: --force to replace it, or another path"
    ), result.stderr
    assert earlier.read_text() == "earlier"


def test_a_sweep_figure_and_a_validation_report_that_exist_are_refused(runner, tmp_path, monkeypatch):
    results = tmp_path / "results.parquet"
    write_sweep_results(results)
    figure = tmp_path / "results.png"  # the default figure path
    figure.write_text("earlier figure")
    result = invoke(runner, "plot", results, "-x", "agents.n", "-y", "polarization_mean")
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        f"error: -o: {figure} already exists; allowed: --force to replace it, or another path"
    )
    assert figure.read_text() == "earlier figure"
    forced = invoke(runner, "plot", results, "-x", "agents.n", "-y", "polarization_mean", "--force")
    assert forced.exit_code == 0 and figure.read_bytes().startswith(b"\x89PNG"), forced.stderr

    import flocksim.validate as validate

    monkeypatch.setattr(validate, "run_checks", lambda *a, **k: pytest.fail("a check ran"))
    report = tmp_path / "report"
    report.mkdir()
    (report / "validation.md").write_text("earlier report")
    result = invoke(runner, "validate", "--quick", "-o", report)
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        f"error: --output: {report} already holds a report ({report / 'validation.md'}); "
        "allowed: --force to replace it, or another folder"
    )
    assert (report / "validation.md").read_text() == "earlier report"


def test_a_fifo_or_device_is_written_into_without_force(runner, tmp_path):
    """Writing into a FIFO or a device replaces nothing: no --force needed (each writer: the tests above)."""
    check_output("--metrics", "/dev/null", replace=False)
    path = tmp_path / "m.csv"
    path.write_text("x")
    with pytest.raises(OutputError, match="already exists; allowed: --force"):
        check_output("--metrics", path, replace=False)


def test_dash_is_standard_output_where_offered(runner, monkeypatch):
    result = invoke(runner, *RUN, "--metrics", "-")
    assert result.exit_code == 0
    assert result.stdout.startswith("step,time,") and len(result.stdout.splitlines()) == 4  # header, steps 0, 2, 4
    assert "boids-2d: 4 steps" in result.stderr  # the summary steps aside
    schema = invoke(runner, "schema", "-o", "-")
    assert schema.exit_code == 0 and schema.stdout.startswith("{")
    fake_experiment(monkeypatch)
    experiment = invoke(runner, "experiment", "shape", "--csv", "-", "-q")
    assert experiment.exit_code == 0 and experiment.stdout.startswith("experiment,dim,condition")
    assert "every run's numbers in standard output" in experiment.stderr


def test_dash_is_refused_in_one_line_where_not_offered(runner, store, metrics_csv, tmp_path):
    for args in (["plot", metrics_csv, "-o", "-"], ["render", store, "-o", "-"]):
        result = invoke(runner, *args)
        assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1, args


def test_unwritable_outputs_are_refused_before_any_work(runner, tmp_path, read_only):
    folder = tmp_path / "locked"
    folder.mkdir()
    loop = tmp_path / "loop.csv"
    loop.symlink_to(tmp_path / "loop2.csv")
    (tmp_path / "loop2.csv").symlink_to(loop)
    cases = [
        (["schema", "-o", tmp_path], "is a directory"),
        (["schema", "-o", tmp_path / "missing" / "s.json"], "does not exist"),
        (["schema", "-o", loop], "a loop of symbolic links"),
        ([*RUN, "--metrics", loop], "a loop of symbolic links"),
    ]
    for args, words in cases:
        result = invoke(runner, *args)
        assert result.exit_code == 2 and words in result.stderr, (args, result.stderr)
    with read_only(folder):
        result = invoke(runner, *RUN, "--metrics", folder / "m.csv")
        assert result.exit_code == 2 and "is not writable" in result.stderr
    assert list(folder.iterdir()) == []


def test_atomic_path_keeps_the_old_file_when_the_block_fails(tmp_path):
    path = tmp_path / "out.txt"
    path.write_text("old")
    with pytest.raises(RuntimeError), atomic_path(path) as tmp:
        tmp.write_text("half")
        raise RuntimeError("crash")
    assert path.read_text() == "old" and list(tmp_path.iterdir()) == [path]


def test_a_file_in_a_read_only_folder_is_written_in_place(tmp_path, read_only):
    folder = tmp_path / "ro"
    folder.mkdir()
    path = folder / "out.csv"
    path.write_text("old")
    writable = tmp_path / "rw.csv"  # as root: a writable file mounted over it inside the read-only mount
    writable.write_text("old")
    with read_only(folder), contextlib.ExitStack() as stack:
        if os.geteuid() == 0:
            subprocess.run(["mount", "--bind", str(writable), str(path)], check=True)
            stack.callback(subprocess.run, ["umount", str(path)], check=True)
        assert resolve(path)[0] == "in-place"
        check_output("--metrics", path)
        with atomic_open(path) as handle:
            handle.write("new")
        assert path.read_text() == "new"


def test_resolve_names_how_each_kind_of_path_is_written(tmp_path):
    assert resolve("-")[0] == "stdout"
    assert resolve(tmp_path / "new.csv") == ("file", tmp_path / "new.csv")
    assert resolve("/dev/null") == ("stream", Path("/dev/null"))
    assert resolve("/dev/stdout")[0] == "stream"
    with pytest.raises(OutputError, match="is a directory"):
        resolve(tmp_path)
    with pytest.raises(OutputError, match="not offered here"):
        check_output("-o", "-")


def test_a_store_goes_where_a_dangling_link_points(runner, tmp_path):
    target = tmp_path / "big-disk" / "run.zarr"
    target.parent.mkdir()
    link = tmp_path / "run.zarr"
    link.symlink_to(target)
    assert invoke(runner, *RUN, "--out", link).exit_code == 0
    assert link.is_symlink() and (target / "zarr.json").is_file()
    assert invoke(runner, "info", "--check", link).exit_code == 0
    result = invoke(runner, *RUN, "--out", link)  # now it exists: refused, never replaced
    assert result.exit_code == 2 and "already exists" in result.stderr

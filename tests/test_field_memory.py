"""Field data cannot exhaust memory: every structure built from a file's declared sizes is
budgeted before it is allocated, and a file too large for the memory left is refused with one line
(exit 2), also inside a 1 GiB address-space limit (docs/reliability.md, "Field data")."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from flocksim import budgets
from flocksim.budgets import BudgetError, check_memory, memory_headroom
from flocksim.io import tracks_csv
from flocksim.io.resample import track_memory
from flocksim.io.tracks_csv import CsvTracksError, scan_lines
from flocksim.metrics import correlation
from flocksim.metrics.correlation import chunk_rows, correlation_function, pair_bytes
from flocksim.metrics.series import analyze, frame_memory

GIB = 2**30
SRC = Path(__file__).resolve().parents[1] / "src"


def netcdf_declaring(path: Path, individuals: int, frames: int = 3) -> Path:
    """A movement poses file whose position (time, space, keypoints, individuals) is declared, never
    written: a few KiB on disk, ``frames x 2 x individuals`` values when read."""
    netCDF4 = pytest.importorskip("netCDF4")
    with netCDF4.Dataset(path, "w", format="NETCDF4") as nc:
        for name, size in (("time", frames), ("space", 2), ("keypoints", 1), ("individuals", individuals)):
            nc.createDimension(name, size)
        nc.createVariable("time", "f8", ("time",))[:] = np.arange(frames) / 25.0
        space = nc.createVariable("space", str, ("space",))
        space[0], space[1] = "x", "y"
        dims = ("time", "space", "keypoints", "individuals")
        nc.createVariable("position", "f4", dims, zlib=True, chunksizes=(1, 2, 1, 1 << 16), fill_value=np.float32(1))
        nc.setncattr("time_unit", "seconds")
    return path


def analyze_within(limit: int, *args: str) -> subprocess.CompletedProcess:
    """``flocksim analyze ARGS`` in a process whose address space is limited to ``limit`` bytes."""

    def cap() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    env = {**os.environ, "PYTHONPATH": f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    command = [sys.executable, "-m", "flocksim.cli", "analyze", *args]
    return subprocess.run(command, capture_output=True, text=True, preexec_fn=cap, env=env, timeout=120)


def one_line_exit_2(result: subprocess.CompletedProcess) -> str:
    assert result.returncode == 2, result.stderr[-2000:]
    assert "Traceback" not in result.stderr and "MemoryError" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


# --- the files, inside 1 GiB of address space -----------------------------------------------------


def test_netcdf_declaring_ten_million_birds_is_refused_in_one_line_within_1_gib(tmp_path):
    path = netcdf_declaring(tmp_path / "big.nc", 10**7)
    assert path.stat().st_size < 100_000
    line = one_line_exit_2(analyze_within(GIB, str(path)))
    assert "3 frames x 10,000,000 birds x 2 coordinates" in line and "of memory" in line


def test_csv_of_a_header_and_2_gib_of_nul_bytes_is_refused_in_one_line_within_1_gib(tmp_path):
    path = tmp_path / "nul.csv"
    with path.open("w") as handle:
        handle.write("frame,id,x,y\n")
        handle.truncate(2 * GIB)  # sparse: NUL bytes that take no disk
    line = one_line_exit_2(analyze_within(GIB, str(path), "--fps", "25"))
    assert "line 2: a NUL byte" in line


def test_csv_of_one_2_gib_line_is_refused_in_one_line_within_1_gib(tmp_path):
    path = tmp_path / "long.csv"
    with path.open("wb") as handle:
        handle.write(b"frame,id,x,y\n0,a,1," + b"9" * (1 << 20))  # the line's first MiB: digits
        handle.truncate(2 * GIB)  # then a hole (NUL bytes), found after the line's length
    line = one_line_exit_2(analyze_within(GIB, str(path)))
    assert "line 2: longer than 4,096 bytes" in line


def test_a_small_file_is_still_analysed_within_1_gib(tmp_path):
    path = tmp_path / "four.csv"
    rows = "".join(f"{f},a,{f / 10},0\n{f},b,{f / 10},5\n{f},c,10,{f / 10}\n{f},d,3,{f / 20}\n" for f in range(50))
    path.write_text("frame,id,x,y\n" + rows, encoding="utf-8")
    result = analyze_within(GIB, str(path), "--fps", "25")
    assert result.returncode == 0, result.stderr
    assert "polarization" in result.stdout


# --- the budgets, by hand ---------------------------------------------------------------------------------


def test_track_and_frame_memory_by_hand():
    # 3 frames x 10^7 birds x 2: 6e7 values x 80 B; a frame: 10^7 x 400 B; a pair row: 10^7 x (16 x 2 + 40) B
    assert pair_bytes(2) == 72 and pair_bytes(3) == 88
    assert frame_memory(10**7, 2) == 4 * 10**9 + 72 * 10**7
    assert track_memory(3, 10**7, 2) == 4_800_000_000 + 4_000_000_000 + 720_000_000
    # few birds: the pair rows take their chunk's 32 MiB
    assert frame_memory(10, 3) == 4000 + 32 * 2**20


def test_the_track_refusal_says_what_its_estimate_is_made_of(monkeypatch):
    """6x10^7 values are 458 MiB as float64; the 8.9 GiB asked for is reading at 80 bytes a value
    (4.5 GiB) and one frame's analyses of 10^7 birds (4.4 GiB): the line says so, and the parts add up."""
    from flocksim.io.resample import check_track_size

    monkeypatch.setattr(budgets, "memory_headroom", lambda: 174 * 2**20)
    with pytest.raises(BudgetError) as info:
        check_track_size(3, 10**7, 2, "f.nc: variable 'position'")
    assert str(info.value) == (
        "f.nc: variable 'position': 3 frames x 10,000,000 birds x 2 coordinates: needs about 8.9 GiB of memory "
        "(4.5 GiB to read, resample and difference 60,000,000 values at about 80 bytes each, not only their "
        "457.8 MiB as float64; 4.4 GiB for one frame's analyses of 10,000,000 birds), more than the 174.0 MiB this "
        "process can still allocate; allowed: fewer frames or birds (a larger --dt, a shorter file), or a machine "
        "with more memory"
    )
    assert track_memory(3, 10**7, 2) == 6 * 10**7 * 80 + frame_memory(10**7, 2)


def test_check_memory_refuses_what_does_not_fit_the_headroom(monkeypatch):
    monkeypatch.setattr(budgets, "memory_headroom", lambda: 1000)
    check_memory(1000, "x", "allowed: less")
    with pytest.raises(BudgetError, match=r"^x: needs about 1001 bytes of memory, more than the 1000 bytes"):
        check_memory(1001, "x", "allowed: less")
    monkeypatch.setattr(budgets, "memory_headroom", lambda: None)  # nothing known: nothing refused
    check_memory(10**30, "x", "allowed: less")


def test_memory_headroom_sees_the_address_space_limit():
    code = (
        "import resource; from flocksim.budgets import memory_headroom, _status_bytes\n"
        "resource.setrlimit(resource.RLIMIT_AS, (2**31, 2**31))\n"
        "print(memory_headroom(), 2**31 - _status_bytes('VmSize'))"
    )
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True).stdout
    room, expected = map(int, out.split())
    assert 0 < room <= 2**31 and abs(room - expected) < 16 * 2**20  # the same, up to what the print allocated
    assert memory_headroom() is None or memory_headroom() > 0


def test_analyze_checks_a_frame_before_computing(monkeypatch):
    monkeypatch.setattr(budgets, "memory_headroom", lambda: 10 * 2**20)  # less than one chunk of pair rows
    p = np.zeros((2, 5, 2))
    with pytest.raises(BudgetError, match=r"analyze: frames of 5 birds: needs about 32\.0 MiB"):
        analyze(np.arange(2.0), p, p + 1.0, np.ones((2, 5), dtype=bool))


def test_correlation_rows_are_bounded_and_do_not_change_the_result(monkeypatch):
    assert chunk_rows(10, 3) == 512  # few agents: the row cap
    assert chunk_rows(1000, 3) == 32 * 2**20 // (1000 * 88) == 381
    assert chunk_rows(10**7, 3) == 1  # one row at least
    rng = np.random.default_rng(1)
    p, v = rng.normal(size=(300, 3)), rng.normal(size=(300, 3))
    whole = correlation_function(p, v, "orientation", bins=12)
    monkeypatch.setattr(correlation, "CHUNK_BYTES", 7 * 300 * 88)  # 7 rows at a time
    assert chunk_rows(300, 3) == 7
    parts = correlation_function(p, v, "orientation", bins=12)
    np.testing.assert_array_equal(whole.pairs, parts.pairs)
    np.testing.assert_allclose(whole.pair_sums, parts.pair_sums, rtol=1e-12, atol=1e-12)


# --- the CSV scan ----------------------------------------------------------------------------------------


def test_scan_counts_rows_and_names_the_line_of_a_nul_or_an_overlong_line(tmp_path, monkeypatch):
    ok = tmp_path / "ok.csv"
    ok.write_bytes(b"frame,id,x,y\n0,a,1,2\n1,a,1,2")  # no newline at the end: still a row
    assert scan_lines(ok) == 2
    monkeypatch.setattr(tracks_csv, "SCAN_BLOCK", 5)  # lines cross blocks
    assert scan_lines(ok) == 2
    nul = tmp_path / "nul.csv"
    nul.write_bytes(b"frame,id,x,y\n0,a,1,2\n1,a,\x00,2\n")
    with pytest.raises(CsvTracksError, match="line 3: a NUL byte"):
        scan_lines(nul)
    monkeypatch.setattr(tracks_csv, "MAX_LINE_BYTES", 12)
    long = tmp_path / "long.csv"
    long.write_bytes(b"frame,id,x,y\n0,a,1,2\n0,abcdefgh,1,2\n")  # line 3 holds 14 bytes
    with pytest.raises(CsvTracksError, match="line 3: longer than 12 bytes"):
        scan_lines(long)
    tail = tmp_path / "tail.csv"
    tail.write_bytes(b"frame,id,x,y\n0,a,1,2\n" + b"9" * 13)  # an overlong last line without a newline
    with pytest.raises(CsvTracksError, match="line 3: longer than 12 bytes"):
        scan_lines(tail)


def test_scan_refuses_rows_the_parser_could_not_hold(tmp_path, monkeypatch):
    path = tmp_path / "rows.csv"
    path.write_bytes(b"frame,id,x,y\n" + b"0,a,1,2\n" * 100)
    monkeypatch.setattr(budgets, "memory_headroom", lambda: 100 * tracks_csv.CSV_BYTES_PER_ROW - 1)
    with pytest.raises(BudgetError, match="100 rows: needs about"):
        scan_lines(path)
    monkeypatch.setattr(budgets, "memory_headroom", lambda: 100 * tracks_csv.CSV_BYTES_PER_ROW)
    assert scan_lines(path) == 100

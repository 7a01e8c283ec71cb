"""Messages in the user's terms: one line, numbers in readable form, no library's own text quoted
(a foreign Zarr store, a file that is not netCDF, a CSV that is not a table or not UTF-8, a count
of hundreds of digits)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from flocksim.cli import app

runner = CliRunner()
LIBRARY_WORDS = re.compile(
    r"consolidated|xarray|ValueError|backend|engine|Error tokenizing|codec|C error|Traceback", re.I
)


def error_line(args: list[str]) -> str:
    result = runner.invoke(app, [str(a) for a in args])
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert not LIBRARY_WORDS.search(lines[0]), lines[0]
    return lines[0]


def test_readable_counts_and_sizes_by_hand():
    from flocksim import readable

    assert readable.count(0) == "0" and readable.count(1_048_576) == "1,048,576"
    assert readable.count(10**15 - 1) == "999,999,999,999,999"  # the longest written in full
    assert readable.count(10**15) == "1e+15"
    assert readable.count(16 * 10**304) == "1.6e+305"  # far beyond float's range
    assert readable.count(99_999 * 10**300) == "1e+305"  # 9.9999 rounds up to the next power
    assert readable.count(-5 * 10**20) == "-5e+20"
    assert readable.count(8000, grouped=False) == "8000"
    assert readable.nbytes(1023) == "1023 bytes" and readable.nbytes(1536 * 1024) == "1.5 MiB"
    assert readable.nbytes(3 * 2**30) == "3.0 GiB"


def test_a_cell_size_of_1e_300_gives_a_short_line_with_readable_numbers():
    line = error_line(
        ["run", "boids-2d", "--steps", "1"]
        + [f"--set={s}" for s in ("navigation.enabled=true", "navigation.source=obstacles", "rules.seek.weight=1")]
        + ["--set=navigation.cell_size=1e-300"]
    )
    assert "a navigation grid of 4e+302 x 2.5e+302 = 1e+605 cells is more than the budget of 1,048,576 cells" in line
    assert len(line) < 300 and not re.search(r"\d{16}", line)


def test_a_foreign_zarr_store_is_named_as_such(tmp_path):
    zarr = pytest.importorskip("zarr")
    foreign = tmp_path / "foreign.zarr"
    zarr.open_group(str(foreign), mode="w").create_array("x", shape=(3,), dtype="f8")
    line = error_line(["info", foreign])
    assert "not a flocksim trajectory (a Zarr store without flocksim's attributes)" in line
    ours = tmp_path / "ours.zarr"  # flocksim's attributes, no list of arrays
    ours.mkdir()
    (ours / "zarr.json").write_text(
        '{"zarr_format": 3, "node_type": "group", "attributes": {"flocksim_format": "flocksim-trajectory"}}'
    )
    assert "damaged store: its zarr.json does not list the store's arrays" in error_line(["info", ours])


def test_files_that_are_not_netcdf_are_named_as_such(tmp_path):
    garbage = tmp_path / "garbage.nc"
    garbage.write_bytes(b"hello, this is not netCDF " * 20)
    line = error_line(["analyze", garbage])
    assert "not a netCDF file (it begins with neither the netCDF nor the HDF5 signature)" in line
    xr = pytest.importorskip("xarray")
    whole = tmp_path / "whole.nc"
    xr.Dataset({"position": (("time", "space", "individuals"), [[[0.0]] * 2] * 3)}).to_netcdf(whole)
    cut = tmp_path / "cut.nc"
    cut.write_bytes(whole.read_bytes()[:600])  # the HDF5 signature, then nothing readable
    assert "a netCDF file that cannot be read (truncated or damaged)" in error_line(["analyze", cut])


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"frame,id,x,y\n0,a,1,2\n1,a,1,2,5,6\n", "line 3: 6 fields; allowed: 4, one per header column"),
        (b"frame,id,x,y\n0,a,1,2\n1,\xff\xfe,1,2\n", "line 3: not UTF-8 text; allowed: CSV text in UTF-8"),
        (b"frame,id,x,y\n0,a,1,2\n1,\xc3", "line 3: not UTF-8 text (it ends inside a character)"),
    ],
)
def test_csv_that_is_not_a_table_or_not_utf8_names_the_line(tmp_path: Path, data: bytes, message: str):
    path = tmp_path / "t.csv"
    path.write_bytes(data)
    assert message in error_line(["analyze", path])

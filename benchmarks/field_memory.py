"""Field data against memory: the peak memory behind the budgets of ``flocksim analyze``, and the
issue's hostile files inside a 1 GiB address-space limit (docs/reliability.md, "Field data").

1. Peak memory (tracemalloc: every NumPy and Python allocation) per value of reading and
   resampling a track (``open_tracks`` of a CSV with jittered times, resampled; and of a movement
   netCDF), and per bird of one frame's analyses (``analyze`` of one frame, correlations
   included, minus their chunk of pair rows): the measured figures behind
   ``TRACK_BYTES_PER_VALUE`` (80) and ``FRAME_BYTES_PER_BIRD`` (400), and per row of parsing a CSV
   (``CSV_BYTES_PER_ROW``, 600).
2. ``flocksim analyze`` in a process limited to 1 GiB of address space (RLIMIT_AS) on: a netCDF
   declaring 10^7 individuals (9 KiB on disk), a CSV of a header and 2 GiB of NUL bytes, a CSV whose
   second line is 2 GiB long (both sparse files): exit status, stderr's last line, seconds, peak RSS.

Usage: python benchmarks/field_memory.py [--birds 2000] [--frames 200] [--folder DIR]
Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import netCDF4
import numpy as np

from flocksim.io import open_tracks
from flocksim.io.tracks_csv import read_csv_samples
from flocksim.metrics.correlation import CHUNK_BYTES
from flocksim.metrics.series import analyze

GIB = 2**30


def write_csv(path: Path, frames: int, birds: int, rng: np.random.Generator) -> None:
    """Birds in 3D at jittered times (so that open_tracks resamples), one row per bird and frame."""
    with path.open("w") as handle:
        handle.write("frame,id,x,y,z,time\n")
        for f in range(frames):
            x = rng.normal(size=(birds, 3)) * 50 + f
            t = f / 25 + rng.uniform(-0.004, 0.004)
            handle.write("".join(f"{f},b{i},{x[i, 0]:.4f},{x[i, 1]:.4f},{x[i, 2]:.4f},{t:.5f}\n" for i in range(birds)))


def write_netcdf(path: Path, frames: int, birds: int, rng: np.random.Generator | None, dim: int = 2) -> None:
    """A movement poses file; ``rng`` None: position declared, never written (a few KiB on disk)."""
    with netCDF4.Dataset(path, "w", format="NETCDF4") as nc:
        for name, size in (("time", frames), ("space", dim), ("keypoints", 1), ("individuals", birds)):
            nc.createDimension(name, size)
        nc.createVariable("time", "f8", ("time",))[:] = np.arange(frames) / 25.0
        space = nc.createVariable("space", str, ("space",))
        for k in range(dim):
            space[k] = "xyz"[k]
        dims = ("time", "space", "keypoints", "individuals")
        chunks = (1, dim, 1, min(birds, 1 << 16))
        position = nc.createVariable("position", "f4", dims, zlib=True, chunksizes=chunks, fill_value=np.float32(1))
        if rng is not None:
            position[:] = rng.normal(size=(frames, dim, 1, birds)).astype(np.float32) * 50
        nc.setncattr("time_unit", "seconds")


def peak_of(work) -> tuple[int, object]:
    tracemalloc.start()
    tracemalloc.reset_peak()
    result = work()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak, result


def measure(folder: Path, frames: int, birds: int) -> dict:
    rng = np.random.default_rng(0)
    csv = folder / "tracks.csv"
    write_csv(csv, frames, birds, rng)
    rows = frames * birds
    parse_peak, _ = peak_of(lambda: read_csv_samples(csv))
    csv_peak, ds = peak_of(lambda: open_tracks(csv))
    values = ds["position"].size
    nc = folder / "tracks.nc"
    write_netcdf(nc, frames, birds, rng, dim=3)
    nc_peak, ds_nc = peak_of(lambda: open_tracks(nc))
    one = slice(0, 1)
    analyze(ds["time"].values[one], ds["position"].values[one], ds["velocity"].values[one], ds["present"].values[one])
    frame_peak, _ = peak_of(
        lambda: analyze(
            ds["time"].values[one], ds["position"].values[one], ds["velocity"].values[one], ds["present"].values[one]
        )
    )
    correlation_rows = min(CHUNK_BYTES, 512 * birds * (16 * 3 + 40))
    return {
        "frames": frames,
        "birds": birds,
        "csv_parse_bytes_per_row": round(parse_peak / rows, 1),
        "csv_open_tracks_bytes_per_value": round(csv_peak / values, 1),
        "csv_resampled": int(ds.attrs["resampled"]),
        "netcdf_open_tracks_bytes_per_value": round(nc_peak / ds_nc["position"].size, 1),
        "frame_analyses_bytes_per_bird": round(max(frame_peak - correlation_rows, 0) / birds, 1),
        "frame_analyses_peak_mib": round(frame_peak / 2**20, 1),
    }


def limited(limit: int, args: list[str]) -> dict:
    """``flocksim analyze ARGS`` with its address space limited to ``limit`` bytes."""

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    with tempfile.TemporaryFile("w+") as err:
        started = time.monotonic()
        command = [sys.executable, "-m", "flocksim.cli", "analyze", *args]
        run = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=err, preexec_fn=cap)
        _, status, usage = os.wait4(run.pid, 0)
        seconds = time.monotonic() - started
        run.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        lines = err.read().strip().splitlines()
    return {
        "exit": run.returncode,
        "stderr_last_line": lines[-1] if lines else "",
        "stderr_lines": len(lines),
        "seconds": round(seconds, 2),
        "peak_rss_mib": round(usage.ru_maxrss / 1024, 1),
    }


def hostile(folder: Path) -> dict:
    big = folder / "big.nc"
    write_netcdf(big, 3, 10**7, None)
    nul = folder / "nul.csv"
    with nul.open("w") as handle:
        handle.write("frame,id,x,y\n")
        handle.truncate(2 * GIB)
    long = folder / "long.csv"
    with long.open("wb") as handle:
        handle.write(b"frame,id,x,y\n0,a,1," + b"9" * (1 << 20))
        handle.truncate(2 * GIB)
    return {
        "netcdf_declaring_1e7_birds": {"bytes_on_disk": big.stat().st_size, **limited(GIB, [str(big)])},
        "csv_header_and_2GiB_of_NUL": limited(GIB, [str(nul), "--fps", "25"]),
        "csv_one_2GiB_line": limited(GIB, [str(long)]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--birds", type=int, default=2000)
    parser.add_argument("--frames", type=int, default=200)
    parser.add_argument("--folder", type=Path, default=None, help="where to write the files (default: a temporary one)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.folder) as folder:
        result = {"measured": measure(Path(folder), args.frames, args.birds), "within_1GiB": hostile(Path(folder))}
    result["machine"] = f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}"
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()

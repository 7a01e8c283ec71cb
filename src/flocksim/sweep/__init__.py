"""Parameter sweeps on Dask distributed: parameters x seeds, one tidy Parquet row per run.

Quick use::

    from flocksim.sweep import load_sweep, run_sweep, read_results

    sweep = load_sweep("boids-separation")           # a shipped sweep, or a sweep TOML file
    report = run_sweep(sweep, "results.parquet")     # a local cluster, one worker process per core
    table = read_results("results.parquet")          # a pyarrow Table; .to_pandas() for pandas

See :mod:`flocksim.sweep.spec` for the sweep file and ``docs/sweeps.md`` for cluster use.
"""

# the extra is checked (require) before the modules below import pyarrow and dask
# ruff: noqa: E402
from __future__ import annotations

from flocksim._extras import require

require("sweep", "flocksim.sweep")

from flocksim.sweep.expand import Task, expand
from flocksim.sweep.results import read_results, sweep_metadata
from flocksim.sweep.runner import SweepReport, dask_client, run_sweep
from flocksim.sweep.spec import Sweep, SweepError, SweepFile, load_sweep, parse_sweep, shipped_sweeps

__all__ = [
    "Sweep",
    "SweepError",
    "SweepFile",
    "SweepReport",
    "Task",
    "dask_client",
    "expand",
    "load_sweep",
    "parse_sweep",
    "read_results",
    "run_sweep",
    "shipped_sweeps",
    "sweep_metadata",
]

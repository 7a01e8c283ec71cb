"""flocksim: flocks, schools, crowds and swarms, from Reynolds boids to starling murmurations."""

from __future__ import annotations

from typing import Any

from flocksim import game as _game  # noqa: F401  (the game registers its component; so do the scenarios below)
from flocksim import io, metrics
from flocksim._version import __version__
from flocksim.config import ConfigError, apply_overrides, load_toml, save_toml
from flocksim.params import AbmFlockingParams, CouzinParams, Params, ReynoldsParams, VicsekParams, parse_params
from flocksim.scenarios import load_preset, preset_names
from flocksim.simulation import Simulation
from flocksim.state import FlockState


def widget(source: Any, **options: Any) -> Any:
    """A notebook view of a Simulation (live) or of a recorded ``.zarr`` run (replay with a
    scrubber): see :func:`flocksim.notebook.widget` and docs/notebook.md. Imports the notebook
    machinery (anywidget) only when called: pip install 'flocksim[notebook]'."""
    from flocksim._extras import require

    require("notebook", "flocksim.widget")
    from flocksim.notebook import widget as make_widget

    return make_widget(source, **options)


def fit(tracks: Any, params: Any, priors: Any, **options: Any) -> Any:
    """Fit a model's parameters to tracks by simulation-based inference (ABC-SMC on Dask): see
    :func:`flocksim.inference.fit` and docs/fitting.md. Imports pyabc and Dask only when called:
    pip install 'flocksim[fit]'."""
    from flocksim._extras import require

    require("fit", "flocksim.fit")
    from flocksim.inference import fit as run_fit

    return run_fit(tracks, params, priors, **options)


__all__ = [
    "AbmFlockingParams",
    "ConfigError",
    "CouzinParams",
    "FlockState",
    "Params",
    "ReynoldsParams",
    "Simulation",
    "VicsekParams",
    "__version__",
    "apply_overrides",
    "fit",
    "io",
    "load_preset",
    "load_toml",
    "metrics",
    "parse_params",
    "preset_names",
    "save_toml",
    "widget",
]

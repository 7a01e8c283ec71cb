"""Optional dependencies: the extras of ``pip install 'flocksim[...]'`` and the one check that names them.

``pip install flocksim`` gives the simulation, the command line, the viewer (``flocksim serve``) and
trajectory stores (``flocksim run --out``, ``info``). The rest needs an extra (pyproject.toml lists
their packages with version ranges; ``[all]`` is every one of them)::

    sweep     dask, distributed, pyarrow   flocksim sweep, flocksim plot of .parquet, flocksim.sweep
    plot      matplotlib                   flocksim plot, analyze --plot, validate (its report's figures)
    video     av (PyAV), matplotlib        flocksim render (.mp4, .gif), flocksim.render
    field     xarray, netCDF4, pandas      flocksim analyze, export, flocksim.io.open_run / open_tracks
    notebook  anywidget, traitlets         flocksim.widget, flocksim.notebook
    fit       pyabc, dask, distributed,    flocksim fit, flocksim.fit (with the field extra's
              xarray, pandas, scikit-learn packages: it reads tracks as analyze does; scikit-learn
                                           for the informative distance's regression)

Code that needs one calls :func:`require` before importing it (every such import is inside the
function that needs it): a missing package raises :class:`MissingExtraError`, one line naming the extra
to install, which the command line prints as ``error: ...`` with exit status 2.
"""

from __future__ import annotations

import importlib.util

EXTRAS: dict[str, tuple[str, ...]] = {
    "sweep": ("dask", "distributed", "pyarrow"),
    "plot": ("matplotlib",),
    "video": ("av", "matplotlib"),
    "field": ("xarray", "netCDF4", "pandas"),
    "notebook": ("anywidget", "traitlets"),
    "fit": ("pyabc", "dask", "distributed", "xarray", "netCDF4", "pandas", "sklearn"),
}
"""Each extra's top-level modules (their packages and version ranges are in pyproject.toml)."""
PACKAGES: dict[str, str] = {"sklearn": "scikit-learn"}
"""The package pip installs, where its name is not the module's: what a refusal names."""


class MissingExtraError(ImportError):
    """A package of an extra is not installed; the message is one line naming the extra to install.
    The command line prints it and exits with status 2 (no traceback)."""


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a finder that refuses the name; a module whose __spec__ is unset
        return False


def require(extra: str, what: str) -> None:
    """Raise :class:`MissingExtraError` unless every package of ``extra`` can be imported; ``what`` names
    the command or function that needs it, e.g. ``require("video", "flocksim render")`` ->
    ``flocksim render: needs the video extra (av is not installed): pip install 'flocksim[video]'``.
    Looks the modules up without importing them (cheap; the caller imports what it uses)."""
    missing = [module for module in EXTRAS[extra] if not _installed(module)]
    if missing:
        names = ", ".join(PACKAGES.get(module, module) for module in missing)
        raise MissingExtraError(
            f"{what}: needs the {extra} extra ({names} {'is' if len(missing) == 1 else 'are'} not "
            f"installed): pip install 'flocksim[{extra}]'",
            name=missing[0],
        )

"""numba's threading layer for flocksim's parallel kernels.

A step runs a few parallel loops, each ending at a barrier. Under OpenMP's static schedule
every thread owns a fixed share of a loop, so when the machine is busy (a browser, an IDE, a
notebook beside the simulation) and the OS has not scheduled one of the threads, the others
wait for it at every barrier: a step can take a hundred times as long as on one thread. Intel
oneTBB (numba's ``tbb`` layer) steals work instead: a thread that runs takes the share of one
that does not. flocksim therefore prefers tbb, installed with it (the ``tbb`` wheel, pinned),
then omp, then numba's own workqueue (docs/benchmarks.md, "Busy machines", has the figures).

The ``tbb`` wheel puts ``libtbb.so.12`` in the environment's ``lib/`` folder, where numba's
``tbbpool`` extension does not look in a pip virtual environment; it is loaded here first.
A user's ``NUMBA_THREADING_LAYER`` (or ``NUMBA_THREADING_LAYER_PRIORITY``) wins.
"""

from __future__ import annotations

import ctypes
import os
import sys
from pathlib import Path

import numba

LAYER_PRIORITY = ["tbb", "omp", "workqueue"]
TBB_LIBRARY = "libtbb.so.12"


def preload_tbb() -> bool:
    """Load oneTBB from this environment's ``lib/`` (where the ``tbb`` wheel installs it) so that
    numba's tbb layer finds it; False where it is not installed or cannot be loaded."""
    for prefix in dict.fromkeys([sys.prefix, sys.base_prefix]):
        path = Path(prefix) / "lib" / TBB_LIBRARY
        if path.is_file():
            try:
                ctypes.CDLL(str(path), mode=ctypes.RTLD_GLOBAL)
            except OSError:
                return False
            return True
    return False


def configure() -> None:
    """Choose the layer before the first parallel kernel runs (numba starts its threads then)."""
    preload_tbb()  # numba falls back along the priority where tbb is missing
    if os.environ.get("NUMBA_THREADING_LAYER") or os.environ.get("NUMBA_THREADING_LAYER_PRIORITY"):
        return
    numba.config.THREADING_LAYER_PRIORITY = LAYER_PRIORITY


def layer_in_use() -> str:
    """numba's threading layer in this process ("tbb", "omp", "workqueue"), or "none" before a
    parallel kernel ran (numba starts its threads then; the CUDA engine runs none)."""
    try:
        return numba.threading_layer()
    except ValueError:
        return "none"

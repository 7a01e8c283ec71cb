"""Shared by the tests of the CUDA engine: numba-cuda's simulator unless the environment says otherwise.

Importing this module before anything imports ``numba.cuda`` makes the CUDA engine run in the
simulator (NUMBA_ENABLE_CUDASIM=1). ``NUMBA_ENABLE_CUDASIM=0 pytest -m cuda_sim`` runs the same
tests on a real GPU; the tests skip when numba-cuda is not installed.
"""

from __future__ import annotations

import importlib.util
import os

import numba
import pytest

if os.environ.get("NUMBA_ENABLE_CUDASIM", "1") != "0":
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"  # subprocesses too
    numba.config.ENABLE_CUDASIM = 1

HAVE_NUMBA_CUDA = importlib.util.find_spec("numba_cuda") is not None
needs_numba_cuda = pytest.mark.skipif(not HAVE_NUMBA_CUDA, reason="numba-cuda is not installed (flocksim[cuda])")

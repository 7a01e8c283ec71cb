"""numba's inliner copies an inlined function's scope once per inlining (flocksim/_numba_inline.py),
and the code it compiles is the same as with numba's own copying."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import pytest

from flocksim import _numba_inline

COUNT_VARIABLE_COPIES = """
copies = [0]
var_deepcopy = ir.Var.__deepcopy__


def counting(self, memo):
    copies[0] += 1
    return var_deepcopy(self, memo)


ir.Var.__deepcopy__ = counting
"""
"""Counts the deep copies of IR variables (``ir``: numba's or numba-cuda's IR module) in ``copies[0]``."""

PROBE = (
    """
import json, re, sys
from numba.core import ir
import flocksim.jit  # installs the shared memos unless FLOCKSIM_NUMBA_INLINER=numba
from flocksim import _numba_inline
import numba
from flocksim.neighbors.pairs import knn_insert_keyed
from flocksim.space import displacement

"""
    + COUNT_VARIABLE_COPIES
    + """


@numba.njit(nogil=True, error_model="numpy", _nrt=False)  # a serial kernel, not cached
def nearest(xs, ys, zs, space, k, rs, rk, rd):
    # every pair through two inlined device functions (displacement inlines min_image three times)
    for i in range(len(xs)):
        m = 0
        for j in range(len(xs)):
            dx, dy, dz = displacement(xs[i], ys[i], zs[i], xs[j], ys[j], zs[j], space)
            d2 = dx * dx + dy * dy + dz * dz
            if j != i:
                m = knn_insert_keyed(rs, rk, rd, i, m, k, j, j, d2)
    return 0


import numpy as np
from flocksim.space import make_space

n, k = 50, 4
rng = np.random.default_rng(1)
xs, ys, zs = rng.random(n), rng.random(n), rng.random(n)
rs = np.zeros((n, k), np.int64); rk = np.zeros((n, k), np.int64); rd = np.zeros((n, k))
nearest(xs, ys, zs, make_space("periodic", [1.0, 1.0, 1.0]), k, rs, rk, rd)
llvm = nearest.inspect_llvm(nearest.signatures[0])
llvm = "\\n".join(line for line in llvm.splitlines() if not line.startswith("; ModuleID"))
llvm = re.sub(r"_ZN\\w+", "_Z", llvm)  # mangled names carry a per-process tag
print(json.dumps({"installed": _numba_inline.installed(), "var_copies": copies[0], "llvm": llvm,
                  "rk": rk.tolist(), "rd": rd.tolist()}))
"""
)


def _probe(tmp_path, inliner: str | None) -> dict:
    env = {k: v for k, v in os.environ.items() if k != _numba_inline.ENV_VARIABLE}
    if inliner is not None:
        env[_numba_inline.ENV_VARIABLE] = inliner
    env["NUMBA_CACHE_DIR"] = str(tmp_path / f"cache-{inliner}")  # nothing loaded: both compile
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def probes(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("inline")
    return _probe(tmp, None), _probe(tmp, "numba")


def test_the_inliner_copies_each_variable_once_per_inlining_not_once_per_block(probes):
    shared, plain = probes
    assert shared["installed"] and not plain["installed"]
    # measured: 1 024 variable copies against 9 866 with numba's per-block copies
    assert shared["var_copies"] * 5 < plain["var_copies"]


def test_the_compiled_code_is_the_same_instruction_for_instruction(probes):
    shared, plain = probes
    assert shared["llvm"] == plain["llvm"]
    assert shared["rk"] == plain["rk"] and shared["rd"] == plain["rd"]


def test_install_is_idempotent():
    import flocksim.jit  # noqa: F401  (installs it)

    assert _numba_inline.install() is _numba_inline.installed()


CUDA_PROBE = (
    """
import json, re
from numba import cuda, float64, int64, void
from numba.cuda.core import ir
from flocksim import _numba_inline
from flocksim.neighbors.pairs import knn_insert_keyed
from flocksim.space import displacement, make_space

installed = _numba_inline.install_cuda()
"""
    + COUNT_VARIABLE_COPIES
    + """


def nearest(xs, ys, zs, space, k, rs, rk, rd):
    i = cuda.grid(1)
    if i < xs.shape[0]:
        m = 0
        for j in range(xs.shape[0]):
            dx, dy, dz = displacement(xs[i], ys[i], zs[i], xs[j], ys[j], zs[j], space)
            if j != i:
                m = knn_insert_keyed(rs, rk, rd, i, m, k, j, j, dx * dx + dy * dy + dz * dz)


import numba
space = numba.typeof(make_space("periodic", [1.0, 1.0, 1.0]))
sig = void(float64[:], float64[:], float64[:], space, int64, int64[:, :], int64[:, :], float64[:, :])
ptx, _ = cuda.compile_ptx(nearest, sig, cc=(9, 0))
print(json.dumps({"installed": installed, "var_copies": copies[0], "ptx": re.sub(r"_ZN\\\\w+", "_Z", ptx)}))
"""
)


NO_NUMBA_CUDA = importlib.util.find_spec("numba_cuda") is None


@pytest.mark.skipif(NO_NUMBA_CUDA, reason="numba-cuda is not installed (flocksim[cuda])")
def test_numba_cudas_inliner_too_with_the_same_ptx(tmp_path):
    """numba-cuda's own copy of the inliner (GPU kernels): the same PTX, far fewer copies."""
    runs = {}
    for inliner in (None, "numba"):
        env = {k: v for k, v in os.environ.items() if k != _numba_inline.ENV_VARIABLE}
        env.update({"NUMBA_ENABLE_CUDASIM": "0", "NUMBA_CACHE_DIR": str(tmp_path / f"cache-{inliner}")})
        if inliner is not None:
            env[_numba_inline.ENV_VARIABLE] = inliner
        done = subprocess.run([sys.executable, "-c", CUDA_PROBE], capture_output=True, text=True, env=env, timeout=300)
        assert done.returncode == 0, done.stderr[-3000:]
        runs[inliner] = json.loads(done.stdout.strip().splitlines()[-1])
    shared, plain = runs[None], runs["numba"]
    assert shared["installed"] and not plain["installed"]
    assert shared["ptx"] == plain["ptx"] and ".entry" in shared["ptx"]
    assert shared["var_copies"] * 5 < plain["var_copies"]

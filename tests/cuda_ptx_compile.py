"""Compile recorded CUDA kernel launches to PTX without a GPU (run by tests/test_cuda_ptx.py).

Usage: python cuda_ptx_compile.py LAUNCHES.pkl PART PARTS. LAUNCHES.pkl maps (module, function)
to the argument specs recorded by flocksim.engines.cuda_runtime.LAUNCHES; this process compiles
every PARTth kernel (PART of PARTS) for compute capability 9.0 with NUMBA_ENABLE_CUDASIM=0 and
prints one line per kernel: numba-cuda types and lowers each kernel and NVVM turns it into PTX,
which catches the type errors the simulator cannot see.
"""

from __future__ import annotations

import importlib
import pickle
import sys

import numba
import numpy as np
from numba import cuda

CC = (9, 0)


def placeholder(spec):
    if isinstance(spec, tuple) and len(spec) == 3 and spec[0] == "array":
        return np.empty((0,) * spec[2], dtype=spec[1])
    return spec


def main(path: str, part: int, parts: int) -> None:
    with open(path, "rb") as f:
        launches = pickle.load(f)
    for number, ((module, name), specs) in enumerate(sorted(launches.items())):
        if number % parts != part:
            continue
        fn = getattr(importlib.import_module(module), name)
        for sig in sorted({tuple(numba.typeof(placeholder(s)) for s in spec) for spec in specs}, key=str):
            ptx, _ = cuda.compile_ptx(fn, sig, cc=CC)
            assert ".entry" in ptx
            print(f"{module}.{name}: {len(ptx)} characters of PTX", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))

"""numba-cuda for the CUDA engine: is it usable, kernels from plain functions, launch sizes.

Nothing here imports ``numba.cuda`` at module import, so flocksim imports without numba-cuda;
:func:`require_cuda` explains in one line what is missing. With ``NUMBA_ENABLE_CUDASIM=1``
numba-cuda runs kernels in its simulator (on the CPU, in Python, one thread per CUDA thread:
for tests at tens to hundreds of agents).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from typing import Any

import numba

from flocksim import _numba_inline
from flocksim.kernels.compile import python_twin

BLOCK = 128
"""Threads per block of the per-agent kernels."""

INSTALL_HINT = "pip install 'flocksim[cuda]'"


class CudaUnavailableError(ValueError):
    """engine="cuda" cannot run here; the message names what is missing."""


def simulated() -> bool:
    """True when numba-cuda's simulator stands in for a GPU (NUMBA_ENABLE_CUDASIM=1)."""
    return bool(numba.config.ENABLE_CUDASIM)


def cuda_problem() -> str | None:
    """Why the CUDA engine cannot run here, or None when it can."""
    if importlib.util.find_spec("numba_cuda") is None:
        return f"engine cuda: needs the numba-cuda package, which is not installed; {INSTALL_HINT}"
    if simulated():
        return None
    from numba import cuda

    try:
        available = cuda.is_available()
    except Exception as exc:  # a broken driver install raises instead of answering False
        available = False
        detail = f"{type(exc).__name__}: {exc}"
    else:
        detail = ""
    if available:
        return None
    if not detail:
        try:
            cuda.detect()
            cuda.current_context()
        except Exception as exc:
            detail = " ".join(str(exc).split())
    reason = detail.rstrip(" :.") or "no CUDA-capable GPU was found"
    return (
        f"engine cuda: no usable NVIDIA GPU ({reason}); it needs an NVIDIA GPU with its driver, "
        "or NUMBA_ENABLE_CUDASIM=1 for numba-cuda's simulator (slow: for tests); allowed engines here: cpu"
    )


def require_cuda() -> None:
    """Raise :class:`CudaUnavailableError` (one line naming what is missing) unless the engine can run."""
    problem = cuda_problem()
    if problem is not None:
        raise CudaUnavailableError(problem)


def kernel(fn: Callable) -> Any:
    """A CUDA kernel from a plain Python function. The kernel calls flocksim's scalar kernel
    functions (numba CPU dispatchers) directly: numba-cuda compiles their ``py_func`` for the GPU;
    in the simulator the kernel and everything it calls run as their :func:`python_twin`."""
    from numba import cuda

    _numba_inline.install_cuda()  # before numba-cuda compiles anything (flocksim/_numba_inline.py)
    return _LazyKernel(fn, cuda)


class _LazyKernel:
    """``kernel[blocks, threads](...)`` compiles on first launch (numba-cuda compiles per signature)."""

    def __init__(self, fn: Callable, cuda: Any):
        self.fn = fn
        self._cuda = cuda
        self._jitted: Any = None

    @property
    def jitted(self) -> Any:
        if self._jitted is None:
            source = python_twin(self.fn) if simulated() else self.fn
            self._jitted = self._cuda.jit(source)
        return self._jitted

    def __getitem__(self, config: tuple[int, int]) -> Callable[..., None]:
        launcher = self.jitted[config]

        def launch(*args: Any) -> None:
            if LAUNCHES is not None:
                LAUNCHES.setdefault(self.fn, set()).add(tuple(argument_spec(a) for a in args))
            launcher(*args)

        return launch

    def launch(self, n: int, *args: Any) -> None:
        """Run with one thread per item 0..n-1 (nothing for n = 0)."""
        if n > 0:
            self[blocks(n), BLOCK](*args)


LAUNCHES: dict[Callable, set[tuple]] | None = None
"""When a dict: every kernel launch records its argument types here (kernel function -> specs
from :func:`argument_spec`), so that tests can compile each kernel as it was launched."""


def argument_spec(value: Any) -> Any:
    """A picklable stand-in with the numba type of a kernel argument: arrays become
    ("array", dtype, ndim); tuples and scalars stay as they are."""
    if hasattr(value, "dtype") and getattr(value, "ndim", 0) > 0:
        return ("array", str(value.dtype), int(value.ndim))
    return value


def blocks(n: int, threads: int = BLOCK) -> int:
    """Blocks of ``threads`` covering n items."""
    return max(1, (n + threads - 1) // threads)

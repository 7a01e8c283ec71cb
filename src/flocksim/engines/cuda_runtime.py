"""The CUDA runtime's names where the engines used to import them: it is :mod:`flocksim.kernels.cuda_runtime`
(below the neighbour searches that launch kernels with it too). Set ``LAUNCHES`` there, not here."""

from __future__ import annotations

from flocksim.kernels.cuda_runtime import (  # noqa: F401  (_LazyKernel: re-exported)
    BLOCK,
    INSTALL_HINT,
    LAUNCHES,
    CudaUnavailableError,
    _LazyKernel,
    argument_spec,
    blocks,
    cuda_problem,
    kernel,
    require_cuda,
    simulated,
)

__all__ = [
    "BLOCK",
    "INSTALL_HINT",
    "LAUNCHES",
    "CudaUnavailableError",
    "argument_spec",
    "blocks",
    "cuda_problem",
    "kernel",
    "require_cuda",
    "simulated",
]

"""Engines run a model's kernels on some hardware; chosen by name from an explicit registry."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from flocksim.engines.cpu import CpuEngine
from flocksim.models.base import Model
from flocksim.neighbors import NeighborList
from flocksim.state import FlockState


class Engine(Protocol):
    name: str

    def neighbors(self, state: FlockState) -> NeighborList: ...

    def step(self, state: FlockState, dt: float) -> None: ...

    def check_budget(self, state: FlockState) -> None: ...


def cuda_engine(model: Model, threads: int | None = None, max_pairs: int | None = None) -> Engine:
    """The CUDA engine (numba-cuda, imported only when asked for); one clear error when it cannot run."""
    from flocksim.kernels.cuda_runtime import require_cuda

    require_cuda()
    from flocksim.engines.cuda import CudaEngine

    return CudaEngine(model, threads=threads, max_pairs=max_pairs)


ENGINES: dict[str, Callable[..., Engine]] = {"cpu": CpuEngine, "cuda": cuda_engine}


def make_engine(name: str, model: Model, threads: int | None = None, max_pairs: int | None = None) -> Engine:
    """The engine called ``name``; unknown names are rejected with the allowed ones. ``max_pairs``:
    most neighbour pairs one search may hold (None: :data:`flocksim.budgets.DEFAULT_MAX_PAIRS`)."""
    if name not in ENGINES:
        raise ValueError(f"engine: unknown engine {name!r}; allowed: {', '.join(ENGINES)}")
    detail = getattr(getattr(model, "params", None), "detail", None)
    if name != "cpu" and detail is not None and detail.enabled:
        raise ValueError(f"detail.enabled: the level of detail runs on the cpu engine only (engine {name!r}); "
                         "allowed: engine 'cpu', or detail.enabled = false")  # fmt: skip
    return ENGINES[name](model, threads=threads, max_pairs=max_pairs)


__all__ = ["ENGINES", "Engine", "make_engine"]

"""CUDA engine: the CPU engine's scalar kernel functions, one GPU thread per agent (numba-cuda).

Every model runs from the same per-agent functions as :class:`flocksim.engines.cpu.CpuEngine`
(numba-cuda compiles their ``py_func`` as device functions); only the loops around them differ
(``engines/cuda_models.py``, ``engines/cuda_abm.py``), and neighbours are searched on the GPU
(``neighbors/cuda_*.py``). The state lives on the GPU between steps
(:class:`~flocksim.engines.cuda_state.DeviceFlockState`): :class:`~flocksim.Simulation` hands its
state to :meth:`CudaEngine.attach`, and host arrays are copied only when something reads them.
See docs/gpu.md for what is copied when.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numba import cuda

from flocksim import budgets
from flocksim.budgets import PairBudget
from flocksim.engines import cuda_frames
from flocksim.engines.cuda_abm import CudaAbmStepper
from flocksim.engines.cuda_models import (
    constant_speed_moves,
    couzin_headings,
    integrate,
    resolve_overlaps_device,
    reynolds_accelerations,
    vicsek_headings,
    vicsek_moves,
)
from flocksim.engines.cuda_state import DEVICE_FIELDS, DEVICE_WRITES, DeviceFlockState, DeviceMirror
from flocksim.kernels.cuda_runtime import require_cuda
from flocksim.models.base import Model
from flocksim.neighbors import NeighborList
from flocksim.neighbors.cuda_search import device_neighbor_lists, to_host
from flocksim.state import FlockState


@dataclass
class DeviceArrays:
    """One step's view of the state on the GPU, plus its sizes (from the host, without copies)."""

    position: Any
    velocity: Any
    spin: Any
    alive: Any
    mass: Any
    radius: Any
    n: int
    dim: int
    n_alive: int


def device_arrays(state: DeviceFlockState) -> DeviceArrays:
    mirror = state.mirror
    arrays = {name: mirror.device(state.raw(name), name) for name in DEVICE_FIELDS}
    return DeviceArrays(**arrays, n=state.n, dim=state.dim, n_alive=state.n_alive)


def host_view(state: DeviceFlockState) -> FlockState:
    """A plain FlockState sharing the host arrays as they are (for model code that checks shapes)."""
    from dataclasses import fields

    return FlockState(**{f.name: state.raw(f.name) for f in fields(FlockState)})


class Buffers:
    """Per-engine scratch on the GPU, reallocated when the agent count changes."""

    def __init__(self) -> None:
        self.n = -1
        self.heading: Any = None  # (N, 3) phase one -> phase two
        self.aux: Any = None  # (N, 4) reynolds J tau and speed limit
        self.counts: Any = None  # (N,) abm neighbour counts
        self.correction: Any = None  # (N, 3) overlap corrections
        self.uploaded: dict[str, tuple[Any, Any]] = {}  # name -> (host array, device copy) of static inputs

    def ensure(self, n: int) -> None:
        if n != self.n:
            rows = max(n, 1)
            self.heading = cuda.device_array((rows, 3))
            self.aux = cuda.to_device(np.zeros((rows, 4)))
            self.counts = cuda.to_device(np.zeros(rows, dtype=np.int64))
            self.correction = cuda.device_array((rows, 3))
            self.n = n

    def static(self, name: str, host: np.ndarray) -> Any:
        """``host`` on the GPU, copied again only when a different array object comes (obstacles)."""
        held = self.uploaded.get(name)
        if held is None or held[0] is not host:
            held = (host, cuda.to_device(np.ascontiguousarray(host)))
            self.uploaded[name] = held
        return held[1]


def step_reynolds(engine: CudaEngine, state: DeviceFlockState, d: DeviceArrays, dt: float) -> None:
    model = engine.model
    q = model.neighbor_query()
    start, index = device_neighbor_lists(d.position, d.alive, d.n, d.dim, d.n_alive, model.space, q.mode, q.radius,
                                         q.k, q.method, engine.budget)  # fmt: skip
    inputs = model.inputs(host_view(state))  # checks the shapes of the per-step inputs
    b = engine.buffers
    predators = cuda.to_device(inputs.predators)
    turn = cuda.to_device(inputs.turn)
    targets = cuda.to_device(inputs.targets)
    wander = cuda.to_device(inputs.wander)
    obstacles = tuple(b.static(name, getattr(inputs, name)) for name in ("obstacle_shapes", "obstacle_grid",
                                                                          "obstacle_cells"))  # fmt: skip
    c = model.coefficients
    reynolds_accelerations.launch(d.n, d.position, d.velocity, d.alive, start, index, d.dim, model.space, c, d.spin,
                                  predators, turn, targets, wander, *obstacles, b.heading, b.aux)  # fmt: skip
    integrate.launch(d.n, d.position, d.velocity, d.alive, b.heading, b.aux, d.spin, turn, wander, d.dim, model.space,
                     dt, c)  # fmt: skip
    overlap = model.params.overlap
    if overlap.enabled:
        resolve_overlaps_device(d, state.raw("radius"), state.raw("alive"), model.space, obstacles, overlap.iterations,
                                c.planar, b.correction)  # fmt: skip


def _noisy_step(
    headings: Callable[..., None], moves: Callable[..., None]
) -> Callable[[CudaEngine, DeviceFlockState, DeviceArrays, float], None]:
    """Step of a constant-speed model whose phase one takes pre-drawn noise (vicsek, couzin); phase two
    is ``moves``."""

    def step(engine: CudaEngine, state: DeviceFlockState, d: DeviceArrays, dt: float) -> None:
        model = engine.model
        q = model.neighbor_query()
        start, index = device_neighbor_lists(d.position, d.alive, d.n, d.dim, d.n_alive, model.space, q.mode,
                                             q.radius, q.k, q.method, engine.budget)  # fmt: skip
        noise = cuda.to_device(model.noise.for_agents(d.n))  # drawn on the host by the run's one Generator
        headings(model, d, start, index, noise, engine.buffers.heading)
        moves(model, d, engine.buffers.heading, dt)

    return step


def _vicsek(model: Any, d: DeviceArrays, start: Any, index: Any, noise: Any, out: Any) -> None:
    vicsek_headings.launch(d.n, d.velocity, d.alive, start, index, d.dim, model.eta, noise, out)


def _vicsek_moves(model: Any, d: DeviceArrays, heading: Any, dt: float) -> None:
    """Along the heading of step t (``vicsek.update = "paper"``) or the new one (``"forward"``)."""
    vicsek_moves.launch(d.n, d.position, d.velocity, d.alive, heading, d.dim, model.space, model.speed, dt,
                        model.paper)  # fmt: skip


def _constant_speed_moves(model: Any, d: DeviceArrays, heading: Any, dt: float) -> None:
    constant_speed_moves.launch(d.n, d.position, d.velocity, d.alive, heading, d.dim, model.space, model.speed, dt)


def _couzin(model: Any, d: DeviceArrays, start: Any, index: Any, noise: Any, out: Any) -> None:
    couzin_headings.launch(d.n, d.position, d.velocity, d.alive, start, index, d.dim, model.space, model.coefficients,
                           noise, out)  # fmt: skip


def step_abm(engine: CudaEngine, state: DeviceFlockState, d: DeviceArrays, dt: float) -> None:
    engine.abm(engine.model, d, dt, engine.buffers.heading, engine.buffers.counts)


CUDA_STEPPERS: dict[str, Callable[[CudaEngine, DeviceFlockState, DeviceArrays, float], None]] = {
    "reynolds": step_reynolds,
    "abm-flocking": step_abm,
    "vicsek": _noisy_step(_vicsek, _vicsek_moves),
    "couzin": _noisy_step(_couzin, _constant_speed_moves),
}
"""Model name -> its CUDA step."""


class CudaEngine:
    """Runs a model's kernels on an NVIDIA GPU (or numba-cuda's simulator). ``threads`` must be None:
    the GPU's threads are not chosen by the caller."""

    name = "cuda"

    def __init__(self, model: Model, threads: int | None = None, max_pairs: int | None = None):
        require_cuda()
        if threads is not None:
            raise ValueError(f"threads: only for engine cpu (CPU threads); engine cuda takes none, got {threads}")
        if model.name not in CUDA_STEPPERS:
            raise ValueError(f"engine cuda: cannot run model {model.name!r}; allowed: {', '.join(CUDA_STEPPERS)}")
        self.model = model
        self.threads = None
        self.budget = PairBudget(budgets.DEFAULT_MAX_PAIRS if max_pairs is None else max_pairs,
                                 model.neighbor_query().radius_key)  # fmt: skip
        self.buffers = Buffers()
        self.abm = CudaAbmStepper(self.budget)
        self._step = CUDA_STEPPERS[model.name]

    def attach(self, state: FlockState) -> DeviceFlockState:
        """The state to keep: ``state``'s arrays, on the GPU from the next step on (no copy yet)."""
        if isinstance(state, DeviceFlockState) and state.mirror.cuda is cuda:
            return state
        return DeviceFlockState(state, DeviceMirror(cuda))

    def _device_state(self, state: FlockState) -> tuple[DeviceFlockState, bool]:
        if isinstance(state, DeviceFlockState):
            return state, False
        return DeviceFlockState(state, DeviceMirror(cuda)), True  # a state not attached: copied both ways

    def neighbors(self, state: FlockState) -> NeighborList:
        """The neighbour list of ``state``, searched on the GPU and copied to the host."""
        dstate, _ = self._device_state(state)
        d = device_arrays(dstate)
        q = self.model.neighbor_query()
        start, index = device_neighbor_lists(d.position, d.alive, d.n, d.dim, d.n_alive, self.model.space, q.mode,
                                             q.radius, q.k, q.method, self.budget)  # fmt: skip
        return to_host(start, index, d.n)

    def check_budget(self, state: FlockState) -> None:
        """BudgetError when the neighbour list of ``state`` would hold more pairs than ``max_pairs``
        (counted on the GPU before the list is allocated)."""
        dstate, _ = self._device_state(state)
        d = device_arrays(dstate)
        q = self.model.neighbor_query()
        device_neighbor_lists(d.position, d.alive, d.n, d.dim, d.n_alive, self.model.space, q.mode, q.radius, q.k,
                              q.method, self.budget)  # fmt: skip

    # What the viewer asks of a flock on the GPU (engines/cuda_frames.py): small results only.

    def _arrays(self, state: FlockState) -> DeviceArrays:
        return device_arrays(self._device_state(state)[0])

    def agent_bounds(self, state: FlockState) -> tuple[np.ndarray, np.ndarray, int]:
        return cuda_frames.agent_bounds(self._arrays(state))

    def quantized_agents(self, state: FlockState, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return cuda_frames.quantized_agents(self._arrays(state), lo, hi)

    def quantized_banks(self, state: FlockState, bank_range: float) -> np.ndarray:
        return cuda_frames.quantized_banks(self._arrays(state), bank_range)

    def state_is_finite(self, state: FlockState) -> bool:
        return cuda_frames.all_finite(self._arrays(state))

    def heading_sum(self, state: FlockState) -> np.ndarray:
        return cuda_frames.heading_sum(self._arrays(state))

    def nearest_rows(self, state: FlockState, point: np.ndarray, k: int) -> np.ndarray:
        return cuda_frames.nearest_rows(self._arrays(state), self.model.space, point, k)

    def row_position(self, state: FlockState, row: int) -> np.ndarray:
        return cuda_frames.row_position(self._arrays(state), row)

    def step(self, state: FlockState, dt: float) -> None:
        """Advance ``state`` in place by one step (on the GPU; see :meth:`attach`)."""
        dstate, temporary = self._device_state(state)
        self.buffers.ensure(dstate.n)
        d = device_arrays(dstate)
        self._step(self, dstate, d, dt)
        dstate.mirror.stepped()
        if temporary:
            for name in DEVICE_WRITES:
                dstate.mirror.to_host(dstate.raw(name), name)


__all__ = ["CUDA_STEPPERS", "CudaEngine"]

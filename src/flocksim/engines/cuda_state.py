"""The flock's state kept on the GPU between steps, copied to the host only when asked for.

:class:`DeviceFlockState` is a :class:`~flocksim.state.FlockState` whose arrays the kernels
use live in GPU memory (:class:`DeviceMirror`). Reading one of them from Python (``state.position``)
first copies it from the GPU if a step changed it, and marks it as possibly edited, so it is
copied back to the GPU before the next step; assigning a new array (``append_agents``) does the
same. ``n``, ``dim`` and ``n_alive`` answer without a copy. So a run that nobody looks at copies
nothing per step, and each reader pays for exactly the arrays it reads:

- written by the kernels: position, velocity (N x dim float64 each), spin (N x 3 float64):
  copied GPU -> host on the first read after a step, host -> GPU before the next step;
- read by the kernels only: alive (bool), mass, radius (float64): host -> GPU after a read;
- never on the GPU: kind, ids, turning (the host's copy is the only one).
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

import numpy as np

from flocksim.state import FlockState

DEVICE_WRITES = ("position", "velocity", "spin")
"""State arrays the kernels write."""
DEVICE_FIELDS = (*DEVICE_WRITES, "alive", "mass", "radius")
"""State arrays that live on the GPU."""


class DeviceMirror:
    """GPU copies of a state's :data:`DEVICE_FIELDS` and which side holds the newer copy."""

    def __init__(self, cuda: Any):
        self.cuda = cuda
        self.arrays: dict[str, Any] = {}
        self.host_stale: set[str] = set()  # the GPU copy is newer
        self.device_stale: set[str] = set(DEVICE_FIELDS)  # the host copy is (possibly) newer
        self.uploads = 0  # bytes copied host -> GPU, for docs and tests
        self.downloads = 0

    def device(self, host: Any, name: str) -> Any:
        """The GPU copy of field ``name`` (``host``: the host array), uploaded first if stale."""
        if name in self.device_stale or name not in self.arrays:
            arr = np.ascontiguousarray(host)
            current = self.arrays.get(name)
            if current is not None and current.shape == arr.shape and current.dtype == arr.dtype:
                current.copy_to_device(arr)
            else:
                self.arrays[name] = self.cuda.to_device(arr)
            self.uploads += arr.nbytes
            self.device_stale.discard(name)
        return self.arrays[name]

    def stepped(self) -> None:
        """A step wrote the GPU copies of :data:`DEVICE_WRITES`."""
        self.host_stale.update(DEVICE_WRITES)

    def to_host(self, host: np.ndarray, name: str) -> None:
        """Copy field ``name`` into the host array ``host`` if the GPU holds a newer copy."""
        if name in self.host_stale:
            self.arrays[name].copy_to_host(host)
            self.downloads += host.nbytes
            self.host_stale.discard(name)

    def host_touched(self, name: str) -> None:
        """The host copy of ``name`` was handed out (it may be edited) or replaced."""
        if name in DEVICE_FIELDS:
            self.device_stale.add(name)
            self.host_stale.discard(name)


_MIRRORED = frozenset(DEVICE_FIELDS)


class DeviceFlockState(FlockState):
    """A FlockState whose :data:`DEVICE_FIELDS` live on the GPU between steps (see the module text)."""

    def __init__(self, host: FlockState, mirror: DeviceMirror):
        object.__setattr__(self, "_mirror", mirror)
        for f in fields(FlockState):
            object.__setattr__(self, f.name, getattr(host, f.name))

    def __getattribute__(self, name: str) -> Any:
        if name in _MIRRORED:
            mirror = object.__getattribute__(self, "_mirror")
            value = object.__getattribute__(self, name)
            mirror.to_host(value, name)
            mirror.host_touched(name)
            return value
        return object.__getattribute__(self, name)

    def __setattr__(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)
        if name in _MIRRORED:
            object.__getattribute__(self, "_mirror").host_touched(name)

    def raw(self, name: str) -> Any:
        """The host array ``name`` as it is, without copying or marking it (for the engine)."""
        return object.__getattribute__(self, name)

    @property
    def mirror(self) -> DeviceMirror:
        return object.__getattribute__(self, "_mirror")

    @property
    def n(self) -> int:
        return int(self.raw("position").shape[0])

    @property
    def dim(self) -> int:
        return int(self.raw("position").shape[1])

    @property
    def n_alive(self) -> int:
        return int(np.count_nonzero(self.raw("alive")))  # the kernels never write alive: the host copy is current


def raw_field(state: FlockState, name: str) -> Any:
    """Host array ``name`` of any state, without triggering a copy."""
    return state.raw(name) if isinstance(state, DeviceFlockState) else getattr(state, name)

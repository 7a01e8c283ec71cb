"""How kernel functions are compiled: the decorators of :mod:`flocksim.jit`, under the name the kernels
import them by (``from flocksim.kernels.compile import device``)."""

from __future__ import annotations

from flocksim.jit import block_device, device, inlined_on_the_gpu, python_twin, serial_kernel

__all__ = ["block_device", "device", "inlined_on_the_gpu", "python_twin", "serial_kernel"]

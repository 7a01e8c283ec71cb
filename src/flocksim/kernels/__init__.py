"""Per-agent rule math as scalar functions, single-source (docs/design.md §3-§5).

Every function here takes and returns scalars or tuples of scalars and never
allocates, so numba compiles it for the CPU (``device`` below) and
numba-cuda can compile its ``py_func`` as a CUDA device function. Vectors are
passed as three components (x, y, z); 2D code passes z = 0 and the z results
stay 0. Displacements point from the agent to its neighbour.
"""

from flocksim.kernels.compile import device

__all__ = ["device"]

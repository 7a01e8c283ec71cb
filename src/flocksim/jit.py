"""How kernel functions are compiled: for the CPU (numba), and as Python twins for numba-cuda's simulator.

Below every module that defines kernel functions (``space`` included), so that none imports
upward for its decorators; the kernels import them as :mod:`flocksim.kernels.compile`, which
gives these names."""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import TypeVar

import numba

from flocksim import _compile_lock, _numba_inline, _threading
from flocksim._numba_cache import configure

configure()  # before any function of the package is compiled with cache=True
_numba_inline.install()  # before any function of the package is compiled
_compile_lock.install()  # one compile of a kernel across processes sharing the cache
_threading.configure()  # before any parallel kernel starts numba's threads
F = TypeVar("F", bound=Callable)


def device(fn: F) -> F:
    """Compile a scalar kernel function with numba for the CPU, inlined into its callers.

    Inlined at numba's IR level: a call between separately compiled numba functions
    passes every array as several scalars, which costs more than a small per-pair
    function's body (measured: 3x on the k-nearest search). No fastmath: results
    must not depend on instruction scheduling, so that fast paths can be compared
    bitwise with the reference. The plain Python function stays available as
    ``.py_func`` for other back ends.
    """
    return numba.njit(cache=True, nogil=True, inline="always")(fn)  # type: ignore[return-value]


def block_device(fn: F) -> F:
    """Compile a kernel function with numba for the CPU as a function of its own, called, not inlined.

    For work done once per agent or on a rare path (obstacle avoidance, predators, a scratch
    overflow): inlining copies the callee's IR into every caller, and numba's inliner and type
    inference take time that grows faster than the function's size, so one large function inlined
    in several kernels cost minutes of compile time; compiled once, it is also cached once. Per-pair
    functions stay :func:`device` (a call passes every array as several scalars). Also for per-cell
    functions that take tuples of arrays (numba's IR inliner crashes on such functions inside
    parallel loops). Compiled with numpy's error model and without reference counting, as
    :func:`serial_kernel` is. numba-cuda inlines it into GPU kernels (:func:`inlined_on_the_gpu`)."""
    return numba.njit(cache=True, nogil=True, error_model="numpy", _nrt=False, inline=inlined_on_the_gpu)(fn)  # type: ignore[return-value]


def inlined_on_the_gpu(expr, caller_ir, callee_ir) -> bool:
    """numba's inlining cost model for :func:`block_device` functions: a call on the CPU, inlined
    when numba-cuda compiles a GPU kernel (whose IR classes live in ``numba.cuda``), where a
    separately compiled device function would need a GPU present to compile."""
    return type(caller_ir).__module__.startswith("numba.cuda")


def serial_kernel(fn: F) -> F:
    """Compile the serial body of a parallel loop (a block of agents, cells or stripes; see
    :mod:`flocksim.kernels.blocks`) as numba compiles a parallel loop's body: numpy's error model,
    so that a division by zero gives inf or nan as it did inside the loop, and no division pays
    for a zero check (with Python's error model, which raises ZeroDivisionError, the reynolds grid
    sums measured twice as slow).

    Without numba's reference counting (``_nrt=False``): a compiled function takes a reference to
    every array it is passed, two atomic operations per array and call, which made small
    flocks' steps up to 1.4 times slower than the same loops inlined in the parallel loop's body
    (docs/benchmarks.md, steady-state speed). The caller holds its
    arrays for the call, so none is needed; the price is that a serial kernel (and what it
    inlines) cannot allocate arrays: scratch comes from the caller, and numba refuses to compile
    an allocation there."""
    return numba.njit(cache=True, nogil=True, error_model="numpy", _nrt=False)(fn)  # type: ignore[return-value]


def python_twin(fn: Callable) -> Callable:
    """The plain Python version of a kernel function, with every call to another numba-compiled
    function rebound to that function's Python twin, recursively.

    numba-cuda's simulator runs kernels as Python and cannot pass its device arrays into
    functions compiled for the CPU, so a kernel run there must call these twins; on a real GPU
    numba-cuda compiles the same ``py_func`` sources as device functions. A function that is not
    numba-compiled is returned as it is, except at the top: a plain function (a kernel's body)
    gets its calls rebound too.
    """
    return _twin(fn, {}, top=True)


def _twin(fn: Callable, memo: dict[int, Callable], top: bool = False) -> Callable:
    if isinstance(fn, numba.core.dispatcher.Dispatcher):
        py_func = fn.py_func
    elif top and isinstance(fn, types.FunctionType):
        py_func = fn
    else:
        return fn
    if id(fn) in memo:
        return memo[id(fn)]
    names: dict = {}
    twin = types.FunctionType(py_func.__code__, names, py_func.__name__, py_func.__defaults__, py_func.__closure__)
    twin.__doc__ = py_func.__doc__
    twin.__module__ = py_func.__module__
    memo[id(fn)] = twin  # before the globals: kernel functions may call each other recursively
    for name, value in py_func.__globals__.items():
        names[name] = _twin(value, memo) if name in py_func.__code__.co_names else value
    return twin

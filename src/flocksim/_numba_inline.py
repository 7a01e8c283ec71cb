"""numba's IR inliner, made to copy an inlined function's variables once per inlining, not once per block.

numba 0.68 inlines an ``inline="always"`` function (every :func:`flocksim.jit.device` function)
by deep-copying the callee's IR one block at a time, each with a memo of its own. Every block
refers to the function's scope, which holds every variable of the function, so each block's copy
copies the whole scope again: an inlining costs blocks x variables, and a kernel that inlines
per-pair rules into rules spends most of its compile in ``copy.deepcopy`` (measured: 23 of the
61 s that the grid k-nearest search took to compile; numba issue 8989 and numba-cuda pull request
689 report the same).

While numba's inliner runs, :func:`install` makes a block's deep copy share one memo with the
other blocks of its scope, so that the scope and its variables are copied once per inlining.
The IR that results is the one numba builds (every block's copy of the scope compared equal, and
the inliner uses only the first), so the compiled code is the same, instruction for instruction
(tests/test_numba_inline.py compares the LLVM IR of kernels compiled with and without it).

numba-cuda carries its own copy of the inliner, with the same copying, for GPU kernels:
:func:`install_cuda` treats it alike. Both rely on the private inliner (``InlineWorker.inline_ir``)
and on ``ir.Block`` having no deep copy of its own; with a version where either differs, or with
``FLOCKSIM_NUMBA_INLINER=numba`` in the environment, the copying is left as it is.
"""

from __future__ import annotations

import copy
import functools
import os
import threading

ENV_VARIABLE = "FLOCKSIM_NUMBA_INLINER"
"""Set to ``numba`` to leave numba's inliner as it is (for comparison and debugging)."""

_state = threading.local()
_installed = False
_installed_cuda = False


def install() -> bool:
    """Make numba's inliner copy a callee's scope once per inlining; True if it now does.

    Idempotent; does nothing (and returns False) with ``FLOCKSIM_NUMBA_INLINER=numba`` or a numba
    whose inliner is not the one this was measured on."""
    global _installed
    if not _installed and _wanted():
        try:
            from numba.core import inline_closurecall, ir
        except ImportError:  # pragma: no cover - numba without the module
            return False
        _installed = _patch(inline_closurecall, ir)
    return _installed


def install_cuda() -> bool:
    """The same for numba-cuda's own copy of the inliner (``numba.cuda.core``), which compiles the
    GPU kernels; called where flocksim first imports numba-cuda (it is not imported otherwise).
    True if it now copies once per inlining."""
    global _installed_cuda
    if not _installed_cuda and _wanted():
        try:
            from numba.cuda.core import inline_closurecall, ir
        except ImportError:  # numba-cuda not installed, or without its own inliner
            return False
        _installed_cuda = _patch(inline_closurecall, ir)
    return _installed_cuda


def installed() -> bool:
    """Whether :func:`install` has changed numba's inliner in this process."""
    return _installed


def _wanted() -> bool:
    return os.environ.get(ENV_VARIABLE, "").strip().lower() != "numba"


def _patch(inline_closurecall, ir) -> bool:
    worker = getattr(inline_closurecall, "InlineWorker", None)
    if worker is None or not callable(getattr(worker, "inline_ir", None)) or "__deepcopy__" in vars(ir.Block):
        return False
    worker.inline_ir = _sharing_memos(worker.inline_ir)
    ir.Block.__deepcopy__ = _block_deepcopy
    return True


def _sharing_memos(inline_ir):
    """``InlineWorker.inline_ir`` with one memo per source scope for the blocks it deep-copies."""

    @functools.wraps(inline_ir)
    def wrapper(*args, **kwargs):
        outer = getattr(_state, "memos", None)
        _state.memos = {}
        try:
            return inline_ir(*args, **kwargs)
        finally:
            _state.memos = outer

    return wrapper


def _block_deepcopy(self, memo):
    """Deep copy of an ``ir.Block``: as Python's default, but inside the inliner with the memo of
    its scope, so that blocks of one scope share the copy of the scope and of its variables."""
    memos = getattr(_state, "memos", None)
    if memos is not None:
        scope = self.__dict__.get("scope")
        shared = memos.get(id(scope))
        if shared is None:
            shared = memos[id(scope)] = {}
            shared[id(shared)] = [scope]  # keeps the scope alive while its id keys the memo
        if shared is not memo:
            return copy.deepcopy(self, shared)
    new = self.__class__.__new__(self.__class__)
    memo[id(self)] = new
    new.__dict__.update(copy.deepcopy(self.__dict__, memo))
    return new

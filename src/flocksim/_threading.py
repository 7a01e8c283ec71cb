"""numba's threading layer for flocksim's parallel kernels.

A step runs a few parallel loops, each ending at a barrier. Under OpenMP's static schedule
every thread owns a fixed share of a loop, so when the machine is busy (a browser, an IDE, a
notebook beside the simulation) and the OS has not scheduled one of the threads, the others
wait for it at every barrier: a step can take a hundred times as long as on one thread. Intel
oneTBB (numba's ``tbb`` layer) steals work instead: a thread that runs takes the share of one
that does not. flocksim therefore prefers tbb, installed with it (the ``tbb`` wheel, pinned),
then omp, then numba's own workqueue (docs/benchmarks.md, "Busy machines", has the figures).

With fewer than two CPUs to run on (an affinity mask such as ``taskset -c 0``, or a container's
CPU quota), oneTBB starts no worker thread, and a process whose parallel kernels were first
launched from a thread other than the main one (the viewer's server steps on worker threads)
hangs at exit in numba's ``unload_tbb`` (numba issue 10556, oneTBB issue 2056; seen with
``flocksim serve``'s app under ``taskset -c 1``). Work stealing has nothing to steal from on one
CPU, so there omp comes first.

The ``tbb`` wheel puts ``libtbb.so.12`` in the environment's ``lib/`` folder, where numba's
``tbbpool`` extension does not look in a pip virtual environment; it is loaded here first.
A user's ``NUMBA_THREADING_LAYER`` (or ``NUMBA_THREADING_LAYER_PRIORITY``) wins.
"""

from __future__ import annotations

import ctypes
import os
import sys
from pathlib import Path

import numba

LAYER_PRIORITY = ["tbb", "omp", "workqueue"]
ONE_CPU_LAYER_PRIORITY = ["omp", "tbb", "workqueue"]
TBB_LIBRARY = "libtbb.so.12"


def preload_tbb() -> bool:
    """Load oneTBB from this environment's ``lib/`` (where the ``tbb`` wheel installs it) so that
    numba's tbb layer finds it; False where it is not installed or cannot be loaded."""
    for prefix in dict.fromkeys([sys.prefix, sys.base_prefix]):
        path = Path(prefix) / "lib" / TBB_LIBRARY
        if path.is_file():
            try:
                ctypes.CDLL(str(path), mode=ctypes.RTLD_GLOBAL)
            except OSError:
                return False
            return True
    return False


def configure() -> None:
    """Choose the layer before the first parallel kernel runs (numba starts its threads then)."""
    preload_tbb()  # numba falls back along the priority where tbb is missing
    if os.environ.get("NUMBA_THREADING_LAYER") or os.environ.get("NUMBA_THREADING_LAYER_PRIORITY"):
        return
    numba.config.THREADING_LAYER_PRIORITY = layer_priority()


def layer_priority(cpus: float | None = None) -> list[str]:
    """numba's threading layers in flocksim's order of preference for ``cpus`` usable CPUs
    (default: :func:`usable_cpus`): omp first below two (module docstring), tbb first otherwise."""
    cpus = usable_cpus() if cpus is None else cpus
    return list(ONE_CPU_LAYER_PRIORITY if cpus < 2 else LAYER_PRIORITY)


def usable_cpus() -> float:
    """CPUs this process may run on: its affinity mask, capped by a cgroup CPU quota (v2's
    ``cpu.max`` or v1's ``cpu.cfs_quota_us`` / ``cpu.cfs_period_us``) where one is set."""
    try:
        cpus: float = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        cpus = os.cpu_count() or 1
    quota = _cgroup_cpu_quota()
    return min(cpus, quota) if quota is not None else cpus


def _cgroup_cpu_quota(root: Path = Path("/sys/fs/cgroup")) -> float | None:
    try:
        limit, period = (root / "cpu.max").read_text().split()[:2]
        return None if limit == "max" else int(limit) / int(period)
    except (OSError, ValueError):
        pass
    try:
        limit = int((root / "cpu" / "cpu.cfs_quota_us").read_text())
        period = int((root / "cpu" / "cpu.cfs_period_us").read_text())
    except (OSError, ValueError):
        return None
    return limit / period if limit > 0 and period > 0 else None


def layer_in_use() -> str:
    """numba's threading layer in this process ("tbb", "omp", "workqueue"), or "none" before a
    parallel kernel ran (numba starts its threads then; the CUDA engine runs none)."""
    try:
        return numba.threading_layer()
    except ValueError:
        return "none"

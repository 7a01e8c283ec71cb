"""Compile a viewer scene's kernels ahead of its first viewer (numba caches them on disk).

The first start after an install or an update compiles the numba kernels a scene needs (minutes
on two cores: ``flocksim/compile_estimates.json`` has the measured figures). :func:`warm_up` runs
what a viewer session runs (steps, a frame, the neighbour count) on a throwaway copy of the scene,
so that the kernels are in numba's cache before anyone waits for them: ``flocksim serve`` does it
in the background at start-up (:func:`warm_up_in_background`) and ``./dev.sh setup`` once per
source version:

    python -m flocksim.viewer.warmup [PRESET]      # default: the viewer's first scene

which does nothing when the scene was already compiled for these sources (a stamp file in the
numba cache folder, which is keyed on the package's source digest), and says so in one line when
a kernel compiles (:mod:`flocksim.compile_notice`).
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import sys
import threading
import time
from pathlib import Path

from flocksim.compile_notice import announce_compiles, compile_estimate
from flocksim.config import AnyParams, apply_overrides
from flocksim.scenarios import load_preset
from flocksim.simulation import Simulation
from flocksim.viewer.compiling import tracker
from flocksim.viewer.pacing import engine_guard
from flocksim.viewer.protocol import encode_frame, status_values

log = logging.getLogger("flocksim.viewer")
DEFAULT_SCENE = "starlings-3d"
"""The scene ``flocksim serve`` shows first."""


def warm_up(params: AnyParams, engine: str = "cpu", threads: int | None = None, name: str | None = None) -> float:
    """Step a throwaway simulation of ``params`` (image paths resolved) on ``engine`` twice,
    encode a frame and count neighbours as a viewer session does, and take its metrics as
    ``flocksim run`` does, compiling (or loading from numba's cache) every kernel on the way.
    ``name``: the preset's, for the compile notice and the page. Returns the seconds it took."""
    started = time.perf_counter()
    sim = Simulation(params, engine=engine, threads=threads)
    if name is not None:
        sim.name_compiles(name)
    with engine_guard():
        sim.step(2)
        if sim.model.neighbor_query().mode == "metric":  # the session counts metric neighbours
            sim.neighbors()
        encode_frame(sim, 0, selected=0, status=status_values(sim, 0.0, mean_neighbors=0.0))
        sim.metrics()  # the run's summary (the nearest-neighbour distance's search)
    return time.perf_counter() - started


def warm_up_in_background(
    params: AnyParams, engine: str = "cpu", threads: int | None = None, name: str | None = None
) -> threading.Thread:
    """Run :func:`warm_up` in a daemon thread (a failure is logged, never raised). The viewer's
    compile tracker listens from before the first compile, so that the page's clock counts
    from its start."""
    tracker()

    def run() -> None:
        try:
            seconds = warm_up(params, engine=engine, threads=threads, name=name)
            log.debug("viewer: kernels ready after %.1f s", seconds)
        except Exception:  # the server serves anyway; the session will say what fails
            log.exception("viewer: warming up the kernels failed")

    thread = threading.Thread(target=run, name="flocksim-warm-up", daemon=True)
    thread.start()
    return thread


def _stamp(name: str) -> Path | None:
    import numba

    folder = numba.config.CACHE_DIR
    return Path(folder) / f"viewer-warm-{name}-with-metrics.stamp" if folder else None


def main(argv: list[str] | None = None) -> int:
    """``python -m flocksim.viewer.warmup [PRESET] [--set KEY=VALUE ...]``: compile once per
    source version (with overrides: every time; numba loads what its cache holds)."""
    parser = argparse.ArgumentParser(prog="python -m flocksim.viewer.warmup")
    parser.add_argument("preset", nargs="?", default=DEFAULT_SCENE)
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    name, overrides = args.preset, args.overrides
    stamp = None if overrides else _stamp(name)
    if stamp is not None and stamp.exists():
        return 0
    params = apply_overrides(load_preset(name), overrides)
    with announce_compiles(name, lambda: compile_estimate(params, name), stream=sys.stdout):  # when one compiles
        seconds = warm_up(params, name=name)
    print(f"flocksim: kernels ready in {seconds:.0f} s", flush=True)
    if stamp is not None:
        with contextlib.suppress(OSError):
            stamp.write_text(f"{seconds:.1f}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Fill numba's kernel cache ahead of time, several presets at once (``flocksim compile``).

The first run of a preset after an install or an update compiles its kernels (a minute or two
per preset on two cores, ``flocksim/compile_estimates.json``). Each preset's kernels compile in
a process of their own, :func:`flocksim.viewer.warmup.main` (what ``flocksim serve`` and
``flocksim run`` need: steps, a frame, the neighbour count, the metrics), ``jobs`` processes at
a time, longest first (the measured figures), all into the one cache folder (numba writes each
entry whole, so processes that compile the same kernel leave one good copy). Later runs load
the kernels in a second or two; a preset whose kernels are already cached for these sources
finishes at once.

Presets share most of their kernels (the neighbour searches, the integration): after couzin's
50 s, vicsek compiled in 7 s. Two processes that compile the same kernel both do the whole
work, so on two cores ``jobs = 2`` was slower than one process (docs/benchmarks.md, "Compiling
ahead"); one process, the longest preset first, is the default.

For an install script, a Docker image, or a cluster's workers before a sweep: run it once where
the cache folder lives (``~/.cache/flocksim/numba``, or ``NUMBA_CACHE_DIR``).
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass

from flocksim.compile_notice import compile_estimate, duration_text
from flocksim.config import apply_overrides
from flocksim.scenarios import load_preset, preset_names

MAX_JOBS = 64
"""Most compile processes at once (each holds numba and LLVM: a few hundred MB)."""
SILENT_S = 30.0
"""Longest wait without a line: while presets compile, a line says which, this often [s]."""


class CompileAheadError(ValueError):
    """A request ``flocksim compile`` refuses: one line naming the option and the allowed values."""


@dataclass(frozen=True)
class Outcome:
    """One preset's compile: ``ok``, its wall time [s], and the end of its output if it failed."""

    name: str
    ok: bool
    seconds: float
    error: str = ""


def check_request(names: Sequence[str], jobs: int) -> list[str]:
    """The presets to compile (all shipped ones when ``names`` is empty), each once, in the
    order given; refuses an unknown name or a ``jobs`` outside 1..:data:`MAX_JOBS`."""
    known = preset_names()
    unknown = [n for n in names if n not in known]
    if unknown:
        raise CompileAheadError(f"preset: unknown {unknown[0]!r}; allowed: {', '.join(known)}")
    if isinstance(jobs, bool) or not isinstance(jobs, int) or not 1 <= jobs <= MAX_JOBS:
        raise CompileAheadError(f"--jobs: {jobs!r}; allowed: a whole number from 1 to {MAX_JOBS}")
    return list(dict.fromkeys(names or known))


def estimates(names: Sequence[str], overrides: Sequence[str]) -> dict[str, float | None]:
    """Measured cold-compile seconds per preset (None: not measured); overrides are checked here,
    so a bad one is refused before any process starts (:class:`flocksim.config.ConfigError`)."""
    found = {}
    for name in names:
        params = apply_overrides(load_preset(name), list(overrides))
        found[name] = compile_estimate(params, name)
    return found


def _compile_one(name: str, overrides: Sequence[str], env: Mapping[str, str] | None = None) -> Outcome:
    """Compile one preset's kernels in a fresh process (``env``: its environment, default this one's)."""
    command = [sys.executable, "-m", "flocksim.viewer.warmup", name]
    for item in overrides:
        command += ["--set", item]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False, env=env)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-12:]
        return Outcome(name, False, seconds, "\n".join(tail))
    return Outcome(name, True, seconds)


def compile_ahead(
    names: Sequence[str],
    jobs: int,
    overrides: Sequence[str] = (),
    say: Callable[[str], None] = print,
    compile_one: Callable[[str, Sequence[str]], Outcome] | None = None,
) -> list[Outcome]:
    """Compile the kernels of ``names`` (see :func:`check_request`), ``jobs`` processes at a time,
    longest first; ``say`` gets one line when it starts, one per preset done and one at least
    every :data:`SILENT_S` seconds while any compiles. ``compile_one``: how one preset compiles
    (default: a process of its own). Returns the outcomes in finishing order."""
    names = check_request(names, jobs)
    compile_one = compile_one or _compile_one
    guess = estimates(names, overrides)
    order = sorted(names, key=lambda n: -(guess[n] if guess[n] is not None else 60.0))
    known = [s for s in guess.values() if s is not None]
    total = sum(known) / min(jobs, len(names)) if known else None
    say(
        f"flocksim compile: {len(names)} preset{'s' if len(names) != 1 else ''}, {min(jobs, len(names))} at a time; "
        f"{duration_text(total) if total is not None else 'a minute or more'} on an empty cache "
        "(the measured figures shared out), seconds when already compiled"
    )
    outcomes: list[Outcome] = []
    started: dict[str, float] = {}
    lock = threading.Lock()

    def run(name: str) -> Outcome:
        with lock:
            started[name] = time.perf_counter()
        return compile_one(name, overrides)

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        pending: set[Future[Outcome]] = {pool.submit(run, name) for name in order}
        while pending:
            finished, pending = wait(pending, timeout=SILENT_S, return_when=FIRST_COMPLETED)
            for future in finished:
                outcome = future.result()
                outcomes.append(outcome)
                state = "ready" if outcome.ok else "FAILED"
                say(f"compile: {outcome.name} {state} in {outcome.seconds:.0f} s ({len(outcomes)}/{len(names)})")
            if not finished:
                now = time.perf_counter()
                with lock:
                    running = [n for n in order if n in started and n not in {o.name for o in outcomes}]
                    doing = ", ".join(f"{n} {now - started[n]:.0f} s" for n in running)
                say(f"compile: compiling {doing}; {len(outcomes)}/{len(names)} done")
    return outcomes

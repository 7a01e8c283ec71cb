"""One line on standard error when numba compiles flocksim's kernels: what for and roughly how long.

The first run after an install or an update compiles the kernels (they are cached on disk
afterwards, :mod:`flocksim._numba_cache`), which takes a while; without a word a run whose output
is not a terminal would look hung. Code that may compile opens a scope::

    with announce_compiles("boids-2d", estimate_s=20.0):
        sim.step()

and the first compile started in it, in this thread, prints::

    flocksim: compiling the kernels for boids-2d: first run only, about 20 s

at most once per scope (a scope object entered again keeps its word: :class:`Simulation` holds one
for its lifetime), and nothing when every kernel loads from the cache. Scopes nest: the outermost
one open in the thread speaks, so a command that opens its own scope (``flocksim run``) prints one
line even though every ``Simulation.step`` opens one too.

Compiles are seen through numba's event API (``numba:compile``, sent for every function compiled,
never for one loaded from the cache), as the viewer's :mod:`flocksim.viewer.compiling` sees them.

The estimate comes from ``compile_estimates.json`` beside this module: seconds measured by
``benchmarks/bench_compile.py --write-estimates`` (the cold minus the warm wall time of
``flocksim run PRESET``) per preset, and per model. :func:`compile_estimate` takes a preset's own
figure, or else that of the closest measured preset of the same model and neighbour mode (fewest
parameters that differ), or else the model's; unknown: "about a minute".
"""

from __future__ import annotations

import contextlib
import json
import sys
import threading
from collections.abc import Callable, Mapping
from functools import lru_cache
from importlib import resources
from typing import Any, TextIO

from numba.core import event

ESTIMATES_FILE = "compile_estimates.json"
"""Measured compile times, shipped with the package (written by benchmarks/bench_compile.py)."""
UNKNOWN = "about a minute"
"""What the notice says about the duration when nothing was measured for the model."""

Estimate = float | None | Callable[[], float | None]


def kernel_name(data: Any) -> str:
    """The name of the function a ``numba:compile`` event is about ("" when unknown)."""
    dispatcher = data.get("dispatcher") if isinstance(data, dict) else None
    func = getattr(dispatcher, "py_func", None)
    return str(getattr(func, "__qualname__", "") or getattr(dispatcher, "__name__", "") or "")


def register_listener(listener: event.Listener) -> None:
    """Register ``listener`` for numba's ``numba:compile`` events (every thread of the process)."""
    event.register("numba:compile", listener)


def duration_text(seconds: float | None) -> str:
    """A friendly "about ..." for ``seconds`` (None: :data:`UNKNOWN`)."""
    if seconds is None or seconds != seconds or seconds < 0:
        return UNKNOWN
    if seconds < 17.5:
        return f"about {max(5, 5 * round(seconds / 5))} s"
    if seconds < 55:
        return f"about {10 * round(seconds / 10)} s"
    if seconds < 90:
        return "about a minute"
    minutes = round(seconds / 30) / 2  # half minutes
    return f"about {minutes:g} min"


def notice_line(what: str, seconds: float | None) -> str:
    """The line printed when a compile starts."""
    return f"flocksim: compiling the kernels for {what}: first run only, {duration_text(seconds)}"


_local = threading.local()
_listener: _ScopeListener | None = None
_listener_lock = threading.Lock()
_announce_lock = threading.Lock()


class _ScopeListener(event.Listener):
    """Hands every compile start to the outermost scope open in the compiling thread."""

    def on_start(self, ev: event.Event) -> None:
        stack = getattr(_local, "stack", None)
        if stack:
            stack[0]._compile_started()

    def on_end(self, ev: event.Event) -> None:
        pass


def _listen() -> None:
    global _listener
    with _listener_lock:
        if _listener is None:
            listener = _ScopeListener()
            register_listener(listener)
            _listener = listener


class CompileNotice:
    """A scope (``with notice:``) that prints :func:`notice_line` to ``stream`` (default: the
    ``sys.stderr`` of the moment) at the first compile started inside it in the same thread, once
    per object. ``estimate_s``: seconds, None, or a function returning either, called only when a
    compile starts. ``on_compile(notice)`` is called after the line is printed (e.g. to change a
    progress display); :attr:`duration` then holds the "about ..." text and :attr:`seconds` the
    estimate (None: unknown). Thread-safe; cheap to
    enter (a list append)."""

    __slots__ = ("announced", "duration", "estimate_s", "on_compile", "seconds", "stream", "what")

    def __init__(
        self,
        what: str,
        estimate_s: Estimate = None,
        stream: TextIO | None = None,
        on_compile: Callable[[CompileNotice], None] | None = None,
    ):
        self.what = what
        self.estimate_s = estimate_s
        self.stream = stream
        self.on_compile = on_compile
        self.announced = False
        self.duration = ""
        self.seconds: float | None = None

    def __enter__(self) -> CompileNotice:
        if _listener is None:
            _listen()
        try:
            _local.stack.append(self)
        except AttributeError:
            _local.stack = [self]
        return self

    def __exit__(self, *exc: object) -> None:
        _local.stack.pop()

    def _compile_started(self) -> None:
        with _announce_lock:  # module-wide, so that a notice holds no lock (a Simulation deep-copies)
            if self.announced:
                return
            self.announced = True
        try:  # a message must never break a compile
            estimate = self.estimate_s() if callable(self.estimate_s) else self.estimate_s
        except Exception:
            estimate = None
        self.seconds, self.duration = estimate, duration_text(estimate)
        try:
            stream = self.stream if self.stream is not None else sys.stderr
            stream.write(notice_line(self.what, estimate) + "\n")
            stream.flush()
        except (OSError, ValueError, AttributeError):  # closed or missing stream
            pass
        if self.on_compile is not None:
            with contextlib.suppress(Exception):
                self.on_compile(self)


def current_scope() -> CompileNotice | None:
    """The outermost scope open in the calling thread (the one that speaks), or None. A
    ``numba:compile`` listener runs in the compiling thread, so it learns there what compiles."""
    stack = getattr(_local, "stack", None)
    return stack[0] if stack else None


def announce_compiles(
    what: str,
    estimate_s: Estimate = None,
    stream: TextIO | None = None,
    on_compile: Callable[[CompileNotice], None] | None = None,
) -> CompileNotice:
    """``with announce_compiles("boids-2d", 20.0):`` one line on ``stream`` (default: standard
    error) when a compile starts inside the block; nothing when all loads from the cache."""
    return CompileNotice(what, estimate_s, stream, on_compile)


# ------------------------------------------------------------------ estimates


@lru_cache(maxsize=1)
def estimates() -> Mapping[str, Any]:
    """The shipped ``compile_estimates.json`` ({} when missing or unreadable)."""
    try:
        data = json.loads(resources.files("flocksim").joinpath(ESTIMATES_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _leaves(data: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(data, dict):
        out: dict[str, Any] = {}
        for key, value in data.items():
            out.update(_leaves(value, f"{prefix}{key}."))
        return out
    return {prefix[:-1]: json.dumps(data, sort_keys=True)}


def _distance(a: dict[str, Any], b: dict[str, Any]) -> int:
    return sum(a.get(key) != b.get(key) for key in a.keys() | b.keys())


_preset_source: tuple[Callable[[], list[str]], Callable[[str], Any]] | None = None


def register_presets(names: Callable[[], list[str]], load: Callable[[str], Any]) -> None:
    """Give :func:`compile_estimate` the shipped presets to compare a parameter set with: a
    function of their names and one that loads a preset's parameters (the scenarios register
    theirs on import, from above this module)."""
    global _preset_source
    _preset_source = (names, load)


def compile_estimate(params: Any, name: str | None = None, model: Any = None) -> float | None:
    """Seconds a cold compile of the kernels of ``params`` takes, from the measured table: the
    preset ``name``'s own figure; else the closest measured preset of the same model and
    neighbour mode among the registered presets (:func:`register_presets`; fewest differing
    parameters; a tie: the longer); else the model's figure;
    else None (unknown). ``model``: ``params``'s model object when at hand."""
    table = estimates()
    presets = table.get("presets") or {}
    if name in presets:
        return float(presets[name]["compile_s"])
    from flocksim.config import to_dict
    from flocksim.models import make_model

    mode = (model if model is not None else make_model(params)).neighbor_query().mode
    shipped, load_preset = _preset_source if _preset_source is not None else (list, None)
    same = [
        key
        for key, entry in presets.items()
        if entry.get("model") == params.model and entry.get("neighbors") == mode and key in shipped()
    ]
    if same:
        mine = _leaves(to_dict(params))
        scored = [
            (_distance(mine, _leaves(to_dict(load_preset(key)))), -presets[key]["compile_s"], key) for key in same
        ]
        return float(presets[min(scored)[2]]["compile_s"])
    by_model = (table.get("models") or {}).get(params.model)
    return float(by_model) if by_model is not None else None


def describe(params: Any, model: Any = None) -> str:
    """What the notice calls a parameter set with no preset name: "reynolds 3D (topological neighbours)"."""
    from flocksim.models import make_model

    mode = (model if model is not None else make_model(params)).neighbor_query().mode
    return f"{params.model} {params.world.dim}D ({mode} neighbours)"


__all__ = [
    "UNKNOWN",
    "CompileNotice",
    "announce_compiles",
    "compile_estimate",
    "current_scope",
    "describe",
    "duration_text",
    "estimates",
    "kernel_name",
    "notice_line",
    "register_listener",
    "register_presets",
]

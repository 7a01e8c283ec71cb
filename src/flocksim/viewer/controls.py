"""The viewer's control messages: JSON text browser -> server, parsed into typed messages (docs/protocol.md).

:func:`parse_control` accepts exactly the messages of docs/protocol.md and raises one
:class:`ControlError` for anything else (bad JSON, unknown type or field, wrong types, NaN or
inf, oversized text, unknown preset, a parameter change the schema rejects); its message is one
line meant for the page, which :func:`error_reply` wraps for sending back.

A ``set``'s changes are applied to the parameters by :mod:`flocksim.viewer.changes` (exact TOML
literals through the machinery of ``--set``); the refusals are :mod:`flocksim.viewer.control_errors`'.
"""

from __future__ import annotations

import json
import math
import sys
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from flocksim.config import AnyParams, ConfigError
from flocksim.scenarios import load_preset, preset_names
from flocksim.viewer.changes import (  # noqa: F401  (re-exported: the old import paths)
    MAX_CHANGES,
    MAX_DEPTH,
    apply_changes,
    count_text,
    follow_count,
    with_followed_count,
)
from flocksim.viewer.control_errors import MAX_ERROR_CHARS, ControlError, _one_line, error_reply, plain_reason  # noqa: F401

MAX_CONTROL_BYTES = 64 * 1024
"""Default size limit of one control message [bytes of UTF-8]."""
TURN_ANGLE_DEG = 120.0
"""Angle of a ``turn`` perturbation [degrees]."""
MAX_WAVE_DELAY = 60.0
"""Longest delay of a ``wave`` message [s of simulated time]."""


@dataclass(frozen=True)
class SetControl:
    """Change parameters: ``changes`` {dotted key: value} as sent, ``params`` the validated result."""

    type: ClassVar[str] = "set"
    changes: dict[str, Any]
    params: AnyParams


@dataclass(frozen=True)
class PresetControl:
    """Switch to a shipped preset: ``params`` are its parameters."""

    type: ClassVar[str] = "preset"
    name: str
    params: AnyParams


@dataclass(frozen=True)
class ResetControl:
    """Refill the flock with the current parameters (caught birds return)."""

    type: ClassVar[str] = "reset"


@dataclass(frozen=True)
class PauseControl:
    """Stop stepping (frames may still be pulled)."""

    type: ClassVar[str] = "pause"


@dataclass(frozen=True)
class ResumeControl:
    """Continue stepping."""

    type: ClassVar[str] = "resume"


@dataclass(frozen=True)
class TurnControl:
    """Turn the birds around the selected one to the left or right."""

    type: ClassVar[str] = "turn"
    direction: Literal["left", "right"]

    @property
    def angle_deg(self) -> float:
        """+120 (left) or -120 (right) [degrees], as ``Simulation.perturb_turn`` takes it."""
        return TURN_ANGLE_DEG if self.direction == "left" else -TURN_ANGLE_DEG


@dataclass(frozen=True)
class PointerControl:
    """Pointer attract / repel at ``point`` (world.dim coordinates [units]; None when ``off``)."""

    type: ClassVar[str] = "pointer"
    mode: Literal["attract", "repel", "off"]
    point: tuple[float, ...] | None


@dataclass(frozen=True)
class ViewControl:
    """The camera, for the simulation's level of detail (``params.detail``): ``position`` (world.dim
    coordinates [units]), the view cone's axis ``direction`` (world.dim numbers, not all zero; None:
    no cone) and its full angle ``fov_deg`` [deg] (None: keep the current one)."""

    type: ClassVar[str] = "view"
    position: tuple[float, ...]
    direction: tuple[float, ...] | None
    fov_deg: float | None


@dataclass(frozen=True)
class ModeControl:
    """Show the ``dim`` (2 or 3) mode: its parked simulation, or a new one (flocksim.viewer.modes)."""

    type: ClassVar[str] = "mode"
    dim: int


@dataclass(frozen=True)
class WaveControl:
    """Start a spontaneous turn ``delay`` seconds of simulated time from now (flocksim.viewer.waves)."""

    type: ClassVar[str] = "wave"
    delay: float


@dataclass(frozen=True)
class SteerControl:
    """Flappy Boids: move the game's target across the course; ``y`` (up) and ``z`` (across) are
    fractions of game.lateral_speed, each in [-1, 1] (flocksim.viewer.game)."""

    type: ClassVar[str] = "steer"
    y: float
    z: float


@dataclass(frozen=True)
class NextControl:
    """Pull flow control: the client has drawn a frame and asks for the next (newest) one."""

    type: ClassVar[str] = "next"


Control = (
    SetControl
    | PresetControl
    | ResetControl
    | PauseControl
    | ResumeControl
    | TurnControl
    | PointerControl
    | ViewControl
    | ModeControl
    | WaveControl
    | SteerControl
    | NextControl
)
FIELDS: dict[str, tuple[str, ...]] = {
    "set": ("changes",),
    "preset": ("name",),
    "reset": (),
    "pause": (),
    "resume": (),
    "turn": ("direction",),
    "pointer": ("mode", "x", "y", "z"),
    "view": ("x", "y", "z", "dx", "dy", "dz", "fov_deg"),
    "mode": ("dim",),
    "wave": ("delay",),
    "steer": ("y", "z"),
    "next": (),
}
"""Every message type and its fields besides ``type``."""


# ------------------------------------------------------------------------------------ JSON


class _BadJsonError(ValueError):
    pass


def _reject_constant(name: str) -> Any:
    raise _BadJsonError(f"{name} is not allowed (numbers must be finite)")


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _BadJsonError(f"duplicate key {key!r}")
        out[key] = value
    return out


BUILDING_CONTROLS = ("set", "preset")
"""Message types that build parameters (validation, preset and image files): parsed on a worker thread."""


def builds_parameters(text: str | bytes | bytearray | memoryview, max_bytes: int = MAX_CONTROL_BYTES) -> bool:
    """Whether the control ``text`` is of a type that builds parameters (:data:`BUILDING_CONTROLS`);
    False for anything that is not such a JSON object (its error is cheap to find)."""
    try:
        message = _load_json(text, max_bytes)
    except ControlError:
        return False
    return isinstance(message, dict) and message.get("type") in BUILDING_CONTROLS


def _load_json(text: str | bytes | bytearray | memoryview, max_bytes: int) -> Any:
    if isinstance(text, str):
        if len(text) > max_bytes:  # a character takes at least one byte
            raise ControlError(f"message: larger than the {max_bytes}-byte limit")
        try:
            size = len(text.encode("utf-8"))
        except UnicodeEncodeError:
            raise ControlError("message: not valid Unicode text") from None
    elif isinstance(text, bytes | bytearray | memoryview):
        raw = bytes(text)
        size = len(raw)
        if size <= max_bytes:
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                raise ControlError("message: not valid UTF-8 text") from None
    else:
        raise ControlError(f"message: expected JSON text, got {type(text).__name__}")
    if size > max_bytes:
        raise ControlError(f"message: {size} bytes is larger than the {max_bytes}-byte limit")
    try:
        return json.loads(text, parse_constant=_reject_constant, object_pairs_hook=_no_duplicates)
    except json.JSONDecodeError as exc:
        raise ControlError(f"message: not valid JSON ({exc.msg} at character {exc.pos})") from None
    except _BadJsonError as exc:
        raise ControlError(f"message: not valid JSON ({exc})") from None
    except RecursionError:
        raise ControlError("message: not valid JSON (nested too deeply to read)") from None
    except ValueError:  # an integer of more digits than Python converts
        raise ControlError(
            f"message: not valid JSON (a number of more than {sys.get_int_max_str_digits()} digits)"
        ) from None


# ------------------------------------------------------------------------------------ messages


def _number(message: dict[str, Any], key: str, kind: str) -> float:
    value = message[key]
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ControlError(f"{kind}.{key}: must be a number; got {json.dumps(value)[:80]}")
    try:
        value = float(value)
    except OverflowError:  # a huge JSON integer
        value = math.inf
    if not math.isfinite(value):
        raise ControlError(f"{kind}.{key}: must be a finite number")
    return value


def _choice(message: dict[str, Any], key: str, kind: str, allowed: tuple[str, ...]) -> Any:
    if key not in message:
        raise ControlError(f"{kind}: missing field {key!r}; allowed: {', '.join(allowed)}")
    value = message[key]
    if value not in allowed or not isinstance(value, str):
        raise ControlError(f"{kind}.{key}: allowed: {', '.join(allowed)}; got {json.dumps(value)[:80]}")
    return value


def parse_control(
    text: str | bytes | bytearray | memoryview, params: AnyParams, max_bytes: int = MAX_CONTROL_BYTES
) -> Control:
    """The typed message of one control text (docs/protocol.md). ``params``: the connection's
    current parameters, to which a ``set`` applies. Raises :class:`ControlError` for anything else."""
    message = _load_json(text, max_bytes)
    if not isinstance(message, dict):
        raise ControlError('message: must be a JSON object such as {"type": "pause"}')
    kind = message.get("type")
    if not isinstance(kind, str) or kind not in FIELDS:
        got = f"; got {json.dumps(kind)[:80]}" if "type" in message else " (missing)"
        raise ControlError(f"type: unknown message type; allowed: {', '.join(FIELDS)}{got}")
    allowed = FIELDS[kind]
    for key in message:
        if key != "type" and key not in allowed:
            listed = ", ".join(("type", *allowed))
            raise ControlError(f"{kind}: unknown field {key[:80]!r}; allowed: {listed}")
    if kind == "set":
        changes = message.get("changes")
        if not isinstance(changes, dict):
            raise ControlError('set: needs "changes": {dotted key: value}, e.g. {"rules.alignment.weight": 0.5}')
        return SetControl(changes=changes, params=apply_changes(params, changes))
    if kind == "preset":
        name = _choice(message, "name", kind, tuple(preset_names()))
        try:
            return PresetControl(name=name, params=load_preset(name))
        except ConfigError as exc:
            raise ControlError(str(exc)) from None
    if kind == "turn":
        return TurnControl(direction=_choice(message, "direction", kind, ("left", "right")))
    if kind == "pointer":
        mode = _choice(message, "mode", kind, ("attract", "repel", "off"))
        dim = params.world.dim
        axes = ("x", "y", "z")[:dim]
        present = {key: _number(message, key, kind) for key in ("x", "y", "z") if key in message}
        if mode == "off":
            return PointerControl(mode=mode, point=None)
        missing = [key for key in axes if key not in present]
        if missing:
            raise ControlError(f"pointer: {mode} needs {', '.join(axes)} (world.dim = {dim}); missing {missing[0]}")
        return PointerControl(mode=mode, point=tuple(present[key] for key in axes))
    if kind == "view":
        return _view(message, params.world.dim)
    if kind == "mode":
        if "dim" not in message:
            raise ControlError("mode: missing field 'dim'; allowed: 2, 3")
        dim = message["dim"]
        if isinstance(dim, bool) or dim not in (2, 3):
            raise ControlError(f"mode.dim: allowed: 2, 3; got {json.dumps(dim)[:80]}")
        return ModeControl(dim=int(dim))
    if kind == "wave":
        delay = _number(message, "delay", kind) if "delay" in message else 0.0
        if not 0.0 <= delay <= MAX_WAVE_DELAY:
            raise ControlError(f"wave.delay: allowed: 0 to {MAX_WAVE_DELAY:g} [s of simulated time]; got {delay:g}")
        return WaveControl(delay=delay)
    if kind == "steer":
        values = {}
        for key in ("y", "z"):
            if key not in message:
                raise ControlError(f"steer: missing field {key!r}; allowed: a number from -1 to 1")
            values[key] = _number(message, key, kind)
            if not -1.0 <= values[key] <= 1.0:
                raise ControlError(f"steer.{key}: allowed: -1 to 1; got {values[key]:g}")
        return SteerControl(y=values["y"], z=values["z"])
    return {"reset": ResetControl, "pause": PauseControl, "resume": ResumeControl, "next": NextControl}[kind]()


def _view(message: dict[str, Any], dim: int) -> ViewControl:
    """A ``view`` message: the camera's position (x, y, z), its direction (dx, dy, dz: all of
    world.dim's axes or none) and the view cone's full angle fov_deg (optional, 0 < fov <= 360)."""
    axes = ("x", "y", "z")[:dim]
    values = {key: _number(message, key, "view") for key in FIELDS["view"] if key in message}
    missing = [key for key in axes if key not in values]
    if missing:
        raise ControlError(f"view: needs {', '.join(axes)} (world.dim = {dim}); missing {missing[0]}")
    direction_axes = tuple("d" + key for key in axes)
    given = [key for key in direction_axes if key in values]
    direction = None
    if given:
        if len(given) < dim:
            absent = next(key for key in direction_axes if key not in values)
            raise ControlError(f"view: a direction needs {', '.join(direction_axes)} (world.dim = {dim}); "
                               f"missing {absent}")  # fmt: skip
        direction = tuple(values[key] for key in direction_axes)
        if not any(direction):
            raise ControlError("view: the direction must not be all zeros")
    fov = values.get("fov_deg")
    if fov is not None and not 0.0 < fov <= 360.0:
        raise ControlError(f"view.fov_deg: allowed: more than 0 up to 360 [deg]; got {fov:g}")
    return ViewControl(position=tuple(values[key] for key in axes), direction=direction, fov_deg=fov)


__all__ = [
    "FIELDS",
    "MAX_CONTROL_BYTES",
    "MAX_WAVE_DELAY",
    "Control",
    "ControlError",
    "ModeControl",
    "NextControl",
    "PauseControl",
    "PointerControl",
    "PresetControl",
    "ResetControl",
    "ResumeControl",
    "SetControl",
    "SteerControl",
    "TurnControl",
    "ViewControl",
    "WaveControl",
    "apply_changes",
    "count_text",
    "follow_count",
    "with_followed_count",
    "error_reply",
    "parse_control",
]

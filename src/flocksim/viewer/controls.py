"""The viewer's control messages: JSON text browser -> server, parsed into typed messages (docs/protocol.md).

:func:`parse_control` accepts exactly the messages of docs/protocol.md and raises one
:class:`ControlError` for anything else (bad JSON, unknown type or field, wrong types, NaN or
inf, oversized text, unknown preset, a parameter change the schema rejects); its message is one
line meant for the page, which :func:`error_reply` wraps for sending back.

A ``set`` is validated against the parameter schema with :func:`flocksim.config.apply_overrides`
(the machinery of ``--set``): each JSON value becomes an exact TOML literal, so the changes
apply in order, unknown keys and bad values get the same one-line messages naming the field and
the allowed values, and ``model`` switches keep the fields the new model knows.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from flocksim.config import AnyParams, ConfigError, apply_overrides
from flocksim.scenarios import load_preset, preset_names

MAX_CONTROL_BYTES = 64 * 1024
"""Default size limit of one control message [bytes of UTF-8]."""
MAX_CHANGES = 256
"""Most dotted keys in one ``set``."""
MAX_DEPTH = 16
"""Deepest nesting of lists/objects in a ``set`` value."""
MAX_ERROR_CHARS = 500
"""Error messages are cut to this many characters."""
TURN_ANGLE_DEG = 120.0
"""Angle of a ``turn`` perturbation [degrees]."""
MAX_WAVE_DELAY = 60.0
"""Longest delay of a ``wave`` message [s of simulated time]."""
_KEY = re.compile(r"[A-Za-z0-9_\-]+(\.[A-Za-z0-9_\-]+)*")


class ControlError(ValueError):
    """An invalid control message; ``str(exc)`` is one line to show in the page."""

    def __init__(self, message: str):
        super().__init__(_one_line(message))


def _one_line(message: str) -> str:
    text = " ".join(str(message).split())
    return text if len(text) <= MAX_ERROR_CHARS else text[: MAX_ERROR_CHARS - 3] + "..."


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


# ------------------------------------------------------------------------------------ set


def _toml_string(text: str, key: str) -> str:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ControlError(f"{key}: not valid Unicode text") from None
    out = ['"']
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _toml_literal(value: Any, key: str, depth: int = 0) -> str:
    """The TOML inline literal that reads back as exactly ``value`` (a JSON value)."""
    if depth > MAX_DEPTH:
        raise ControlError(f"{key}: nested deeper than {MAX_DEPTH} levels")
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        if not -(2**63) <= value < 2**63:
            raise ControlError(f"{key}: integer out of range; got {value:.3g}")
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ControlError(f"{key}: must be a finite number (not NaN or inf); got {value!r}")
        return repr(value)
    if isinstance(value, str):
        return _toml_string(value, key)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_literal(v, key, depth + 1) for v in value) + "]"
    if isinstance(value, dict):
        items = (f"{_toml_string(k, key)} = {_toml_literal(v, key, depth + 1)}" for k, v in value.items())
        return "{" + ", ".join(items) + "}"
    if value is None:
        raise ControlError(f"{key}: null is not a value; give a number, true/false, text or a list")
    raise ControlError(f"{key}: unsupported value of type {type(value).__name__}")


def count_text(n: int) -> str:
    """An agent count as the presets' descriptions write it: "500", "2000", and from 10 000 on in
    groups of three digits: "100 000"."""
    text = str(int(n))
    if n < 10_000:
        return text
    groups = []
    while text:
        groups.insert(0, text[-3:])
        text = text[:-3]
    return " ".join(groups)


def follow_count(description: str, old_n: int, new_n: int) -> str:
    """``description`` with its first mention of the agent count ``old_n`` (written "500",
    "100 000" or "100,000", never part of a larger number) changed to ``new_n``: "500 starlings"
    -> "10 000 starlings". Unchanged when it does not mention ``old_n``."""
    if int(old_n) == int(new_n) or not description:
        return description
    digits = str(int(old_n))
    groups = [digits[max(0, i - 3) : i] for i in range(len(digits), 0, -3)][::-1]
    grouped = r"[ ,\u202f]".join(groups) if len(groups) > 1 else None
    pattern = digits if grouped is None else f"(?:{digits}|{grouped})"
    match = re.search(rf"(?<![\d.,])(?<!\d )({pattern})(?![\d]|[.,]\d|[ ,\u202f]\d{{3}})", description)
    if match is None:
        return description
    return description[: match.start(1)] + count_text(new_n) + description[match.end(1) :]


def with_followed_count(before: AnyParams, after: AnyParams, described: bool) -> AnyParams:
    """``after`` with its description following its agent count when the change from ``before``
    set ``agents.n`` and not the description (``described``): :func:`follow_count`."""
    if described or int(before.agents.n) == int(after.agents.n):
        return after
    text = follow_count(after.description or "", int(before.agents.n), int(after.agents.n))
    if text == (after.description or ""):
        return after
    return apply_overrides(after, [f"description={_toml_string(text, 'description')}"])


def apply_changes(params: AnyParams, changes: Mapping[str, Any]) -> AnyParams:
    """``params`` with ``changes`` ({dotted key: JSON value}) applied in order and re-validated;
    :class:`ControlError` naming the field and the allowed values otherwise. A change of
    ``agents.n`` without one of ``description`` changes the count the description mentions
    (:func:`follow_count`: "500 starlings" becomes "10 000 starlings")."""
    if not isinstance(changes, Mapping) or not changes:
        raise ControlError("set: changes must be a non-empty object of {dotted key: value}")
    if len(changes) > MAX_CHANGES:
        raise ControlError(f"set: {len(changes)} changes; at most {MAX_CHANGES} in one message")
    overrides = []
    for key, value in changes.items():
        if not isinstance(key, str) or len(key) > 200 or not _KEY.fullmatch(key):
            raise ControlError(f"set: {str(key)[:80]!r} is not a dotted parameter key, e.g. rules.alignment.weight")
        overrides.append(f"{key}={_toml_literal(value, key)}")
    try:
        return with_followed_count(params, apply_overrides(params, overrides), "description" in changes)
    except ConfigError as exc:
        raise ControlError(str(exc)) from None
    except (ValueError, TypeError, RecursionError) as exc:  # the schema's own checks, whatever their type
        raise ControlError(f"set: invalid change ({plain_reason(exc)})") from None


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


def plain_reason(exc: BaseException) -> str:
    """Why a change was refused, in words: the exception's message on one line, without Python's
    type name (nesting too deep to handle said as such)."""
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    text = " ".join(str(exc).split())
    return text[:300] if text else "refused by the parameter schema"


def error_reply(message: str) -> str:
    """The JSON text the server sends back for a rejected message: {"type": "error", "message": ...}."""
    return json.dumps({"type": "error", "message": _one_line(message)})


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

"""The interactive viewer's wire format (docs/protocol.md): binary frames server -> browser
(:mod:`flocksim.viewer.protocol`) and JSON control messages browser -> server
(:mod:`flocksim.viewer.controls`). The server side: :func:`flocksim.viewer.server.create_app` (the
Starlette app ``flocksim serve`` runs) and :class:`flocksim.viewer.session.ViewerSession` (one
connection's simulation)."""

from __future__ import annotations

from flocksim.viewer.controls import (
    Control,
    ControlError,
    NextControl,
    PauseControl,
    PointerControl,
    PresetControl,
    ResetControl,
    ResumeControl,
    SetControl,
    TurnControl,
    apply_changes,
    error_reply,
    parse_control,
)
from flocksim.viewer.protocol import (
    STATUS_FIELDS,
    Frame,
    ProtocolError,
    choose_layout,
    decode_frame,
    encode_frame,
    frame_size,
    status_values,
)

__all__ = [
    "STATUS_FIELDS",
    "Control",
    "ControlError",
    "Frame",
    "NextControl",
    "PauseControl",
    "PointerControl",
    "PresetControl",
    "ProtocolError",
    "ResetControl",
    "ResumeControl",
    "SetControl",
    "TurnControl",
    "apply_changes",
    "choose_layout",
    "decode_frame",
    "encode_frame",
    "error_reply",
    "frame_size",
    "parse_control",
    "status_values",
]

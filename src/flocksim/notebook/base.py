"""The widget model both notebook widgets share: the front end's module, the synced state and the
dispatch of the front end's messages (docs/notebook.md).

The front end (web/src/widget.js, bundled by ``npm run build`` into ``static/``) draws with the
viewer's renderer. It pulls frames one at a time while playing (``{"type": "next"}``, sent
after the last frame is drawn) and sends ``{"type": "step"}`` and ``{"type": "set", "changes":
{...}}``; the Python side answers by setting ``frame`` (the viewer's binary frame,
docs/protocol.md, synced as a binary buffer) and the other traits.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anywidget
import traitlets

STATIC_DIR = Path(__file__).parent / "static"
"""Where ``npm run build`` (web/build.mjs) writes ``widget.js`` and ``widget.css``."""


class WidgetNotBuiltError(RuntimeError):
    """The front end's module is missing: the web build has not run."""


def asset(name: str) -> Path:
    """A built file of the front end; :class:`WidgetNotBuiltError` naming the fix when missing."""
    path = STATIC_DIR / name
    if not path.is_file():
        raise WidgetNotBuiltError(
            f"flocksim.widget: {path} is missing: the widget's front end is not built; run ./dev.sh setup "
            "(or npm ci --prefix web && npm run --prefix web build) in the flocksim source tree"
        )
    return path


class FlockWidget(anywidget.AnyWidget):
    """A view of flocking frames in a notebook. Subclasses fill ``frame`` and answer
    :meth:`on_next` (playing: the next frame), :meth:`on_step` and :meth:`on_set`."""

    _esm = traitlets.Unicode("").tag(sync=True)
    """The front end's module (static/widget.js), read when a widget is made."""
    _css = traitlets.Unicode("").tag(sync=True)
    """Its style sheet (static/widget.css)."""
    frame = traitlets.Bytes(b"").tag(sync=True)
    """The newest frame (docs/protocol.md); empty before the first."""
    params = traitlets.Dict().tag(sync=True)
    """The parameters shown (the view's world and obstacles, the Basic panel's values)."""
    schema = traitlets.Dict().tag(sync=True)
    """The model's JSON Schema (the Basic panel); empty: no panel."""
    max_agents = traitlets.Int(0).tag(sync=True)
    """Largest ``agents.n`` the Basic panel offers (0: no panel)."""
    source = traitlets.Unicode("live").tag(sync=True)
    """``"live"`` (a simulation) or ``"replay"`` (a recorded run)."""
    playing = traitlets.Bool(False).tag(sync=True)
    """Whether the view advances: the front end's Play/Pause sets it; the end of a replay clears it."""
    index = traitlets.Int(0).tag(sync=True)
    """Replay: the recorded frame shown (0-based); the scrubber sets it."""
    n_frames = traitlets.Int(0).tag(sync=True)
    """Replay: how many frames the run holds."""
    error = traitlets.Unicode("").tag(sync=True)
    """The last refused change, one line naming the field and the allowed values; empty: none."""

    def __init__(self, **kwargs: Any):
        files = {"_esm": "widget.js", "_css": "widget.css"}
        super().__init__(**{key: asset(name).read_text(encoding="utf-8") for key, name in files.items()}, **kwargs)
        self.frames_sent = 0
        """Frames set on ``frame`` so far (each carries this counter as its frame index)."""
        self.on_msg(self._on_message)

    def _on_message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        kind = content.get("type") if isinstance(content, dict) else None
        try:
            if kind == "next":
                if self.playing:
                    self.on_next()
            elif kind == "step":
                if not self.playing:
                    self.on_step()
            elif kind == "set":
                self.on_set(content.get("changes"))
        except Exception as exc:  # e.g. a step over the neighbour budget: shown, playing stops
            self.fail(str(kind), exc)

    def fail(self, what: str, exc: BaseException) -> None:
        """Stop playing and show ``exc`` in one line: flocksim's own errors (a ValueError naming
        the field, a damaged store naming the array and steps) as they are, others with their type."""
        from flocksim.io import TrajectoryError

        text = " ".join(str(exc).split())
        if not isinstance(exc, TrajectoryError):
            text = f"{type(exc).__name__}: {text}"
        with self.hold_sync():
            self.playing = False
            self.error = f"{what}: {text}"

    def on_next(self) -> None:
        """Playing: show the next frame."""
        raise NotImplementedError

    def on_step(self) -> None:
        """Paused: advance by one step (or one recorded frame) and show it."""
        raise NotImplementedError

    def on_set(self, changes: Any) -> None:
        """Apply a Basic-panel change ``{dotted key: value}``; refuse with ``error``."""
        self.error = "this view has no parameters to change"

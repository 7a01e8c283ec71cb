"""Render a recorded run into a video, one frame at a time.

The store is read one time chunk at a time; each recorded frame becomes one video frame
(``fps`` video frames per second of video, so the video lasts frames / fps seconds). Agents
are triangles pointing along their velocity (3D: along its projection on the screen), drawn
far to near; dead or absent agents are not drawn. Colours (``color_by``):

- ``none``: one colour;
- ``speed``: viridis (its brighter 70 %) from slow to fast, over the model's speed limits (see :func:`speed_range`);
- ``group``: the ``kind`` label of each agent (matplotlib's tab10 colours);
- ``turning``: agents in a spontaneous turn in yellow (needs the recorded ``turning`` variable).

3D frames darken with depth (up to 45 % at the far side of the scene). Components that were
recorded with positions (predators) are drawn in orange, twice the agent size. ``trail`` N
draws each agent's path over its last N frames as a line that fades with age.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from flocksim._extras import require
from flocksim.budgets import check_trail
from flocksim.io.store import TrajectoryError, TrajectoryStore
from flocksim.render.camera import Camera, View, scene_box
from flocksim.render.raster import blend_lines, draw_polyline, fill_triangles, triangles
from flocksim.render.writers import open_writer

COLOR_MODES = ("none", "speed", "group", "turning")
BACKGROUND = (12, 16, 24)
AGENT_COLOR = (225, 232, 245)
TURNING_COLOR = (255, 214, 0)
NOT_TURNING_COLOR = (130, 150, 180)
TRACK_COLOR = (255, 140, 0)
BOUNDS_COLOR = (90, 100, 120)
MAX_SIZE = (7680, 4320)


class RenderError(ValueError):
    """Bad render options (one line naming the option and the allowed values)."""


@dataclass
class RenderReport:
    output: Path
    frames: int
    width: int
    height: int
    fps: int
    seconds: float  # wall time

    @property
    def duration(self) -> float:
        """Length of the video [s]."""
        return self.frames / self.fps

    def line(self) -> str:
        rate = self.frames / self.seconds if self.seconds > 0 else float("inf")
        return (
            f"{self.output.name}: {self.frames} frames, {self.width}x{self.height}, {self.duration:.2f} s at "
            f"{self.fps} fps, rendered in {self.seconds:.2f} s ({rate:.1f} frames/s)"
        )


def parse_size(text: str) -> tuple[int, int]:
    """``"1280x720"`` -> (1280, 720)."""
    w, sep, h = text.lower().partition("x")
    try:
        width, height = int(w), int(h)
    except ValueError:
        width = height = 0
    if not sep or width < 16 or height < 16 or width > MAX_SIZE[0] or height > MAX_SIZE[1]:
        raise RenderError(f"--size: {text!r} is not WIDTHxHEIGHT; allowed: 16x16 to {MAX_SIZE[0]}x{MAX_SIZE[1]}")
    if width % 2 or height % 2:
        raise RenderError(f"--size: {text!r} has an odd side; allowed: even width and height (H.264 needs them)")
    return width, height


def _lut(name: str, n: int, lo: float = 0.0) -> np.ndarray:
    """``n`` colours of matplotlib's colour map ``name`` from ``lo`` to its end, as uint8 RGB."""
    import matplotlib

    cmap = matplotlib.colormaps[name]
    return (np.asarray(cmap(np.linspace(lo, 1.0, n)))[:, :3] * 255.0 + 0.5).astype(np.uint8)


class Painter:
    """Colours of the agents in one frame, by ``color_by``."""

    def __init__(
        self, mode: str, store: TrajectoryStore, first_velocity: np.ndarray, first_alive: np.ndarray, params: dict
    ):
        if mode not in COLOR_MODES:
            raise RenderError(f"--color-by: unknown mode {mode!r}; allowed: {', '.join(COLOR_MODES)}")
        self.mode = mode
        if mode == "turning" and "turning" not in store.array_names():
            raise RenderError(
                f"--color-by turning: {store.path} has no turning variable (recorded when spontaneous turning is on)"
            )
        if mode == "speed":
            self.lut = _lut("viridis", 256, lo=0.3)  # viridis' dark end would vanish on the background
            self.range = speed_range(params, first_velocity[first_alive])
        if mode == "group":
            self.kind = np.asarray(store.read("kind"))
            self.lut = _lut("tab10", 10)

    def colors(self, velocity: np.ndarray, turning: np.ndarray | None) -> np.ndarray:
        n = len(velocity)
        if self.mode == "speed":
            lo, hi = self.range
            speed = np.nan_to_num(np.linalg.norm(velocity, axis=1))
            index = np.clip((speed - lo) / (hi - lo) * 255.0, 0, 255).astype(np.int64)
            return self.lut[index]
        if self.mode == "group":
            return self.lut[np.mod(self.kind[:n], 10)]
        if self.mode == "turning":
            out = np.empty((n, 3), dtype=np.uint8)
            out[:] = NOT_TURNING_COLOR
            out[np.asarray(turning, dtype=bool)] = TURNING_COLOR
            return out
        out = np.empty((n, 3), dtype=np.uint8)
        out[:] = AGENT_COLOR
        return out


def speed_range(params: dict, velocity: np.ndarray) -> tuple[float, float]:
    """Speeds [units/s] mapped to the two ends of the colour map: the model's speed limits
    (agents.min_speed, agents.max_speed) where it has them, else the 2nd and 98th percentiles
    of ``velocity``'s speeds, widened to at least 10 % of the top speed."""
    agents = params.get("agents", {})
    hi = agents.get("max_speed")
    lo = agents.get("min_speed", 0.0)
    if isinstance(hi, (int, float)) and hi > 0 and isinstance(lo, (int, float)) and 0 <= lo < hi:
        return float(lo), float(hi)
    speed = np.linalg.norm(velocity, axis=1)
    speed = speed[np.isfinite(speed)]
    lo, hi = (float(x) for x in np.percentile(speed, [2, 98])) if len(speed) else (0.0, 1.0)
    width = 0.1 * max(hi, 1e-12)
    if hi - lo < width:
        lo = max(hi - width, 0.0)
        hi = lo + width
    return lo, hi


def _frame_range(times: np.ndarray, start: float | None, stop: float | None) -> tuple[int, int]:
    first = float(times[0]) if len(times) else 0.0
    last = float(times[-1]) if len(times) else 0.0
    lo = 0 if start is None else int(np.searchsorted(times, start - 1e-9, side="left"))
    hi = len(times) if stop is None else int(np.searchsorted(times, stop + 1e-9, side="right"))
    if start is not None and stop is not None and stop < start:
        raise RenderError(f"--start/--stop: stop {stop:g} is before start {start:g}")
    if hi <= lo:
        raise RenderError(
            f"--start/--stop: no frame between {start if start is not None else first:g} s and "
            f"{stop if stop is not None else last:g} s; allowed: times within {first:g} to {last:g} s"
        )
    return lo, hi


def _bounds_outline(view: View, params: dict) -> np.ndarray | None:
    """Pixel outline of the world's bounds in 2D (box, periodic: rectangle; ellipsoid: ellipse)."""
    if view.dim != 2:
        return None
    bounds = params.get("world", {}).get("bounds", {})
    kind = bounds.get("kind", "open")
    size = bounds.get("size", [])
    if len(size) != 2 or kind == "open":
        return None
    if kind == "ellipsoid":
        t = np.linspace(0.0, 2.0 * np.pi, 180, endpoint=False)
        world = np.stack([size[0] * np.cos(t), size[1] * np.sin(t)], axis=1)
    else:
        world = np.array([[0.0, 0.0], [size[0], 0.0], [size[0], size[1]], [0.0, size[1]]])
    return view.project(world).xy


def render_run(
    store_path: str | Path,
    output: str | Path,
    fps: int = 30,
    size: tuple[int, int] = (1280, 720),
    color_by: str = "none",
    trail: int = 0,
    camera: Camera | None = None,
    start: float | None = None,
    stop: float | None = None,
    agent_size: float | None = None,
    on_frame: Callable[[int, int], None] | None = None,
) -> RenderReport:
    """Render the store at ``store_path`` into ``output`` (.mp4 or .gif); see the module doc.

    ``start``/``stop``: simulated seconds (inclusive); ``agent_size``: triangle length in pixels
    (default: about 1/90 of the frame height, at least 4); ``on_frame(done, total)`` is called
    after every frame (progress bars)."""
    require("video", "flocksim.render.render_run")
    started = time.perf_counter()
    camera = camera or Camera()
    width, height = size
    if not 1 <= fps <= 240:
        raise RenderError(f"--fps: {fps} is out of range; allowed: 1 to 240")
    if trail < 0 or trail > 1000:
        raise RenderError(f"--trail: {trail} is out of range; allowed: 0 to 1000 frames")
    if agent_size is not None and not 0.5 <= agent_size <= 200:
        raise RenderError(f"--agent-size: {agent_size} is out of range; allowed: 0.5 to 200 pixels")
    output = Path(output)
    store = TrajectoryStore.open(store_path)
    if store.n_frames == 0:
        raise TrajectoryError(f"{store_path}: holds no frame yet; nothing to render")
    times = store.read("time")
    lo, hi = _frame_range(times, start, stop)
    params = store.attrs.get("params") or {}
    first_pos = store.read("position", lo, lo + 1)[0]
    first_vel = store.read("velocity", lo, lo + 1)[0]
    first_alive = store.read("alive", lo, lo + 1)[0]
    check_trail(trail, len(first_pos))
    painter = Painter(color_by, store, first_vel, first_alive, params)
    box_lo, box_hi = scene_box(params, first_pos[first_alive] if first_alive.any() else first_pos)
    view = View(camera, width, height, box_lo, box_hi)
    outline = _bounds_outline(view, params)
    base_size = float(agent_size) if agent_size is not None else max(4.0, height / 90.0)
    tracks = [n.removesuffix("_position") for n in store.time_variables() if n.endswith("_position")]
    tracks = [t for t in tracks if store.array(f"{t}_position").attrs.get("flocksim_role") == "track"]
    history: deque[np.ndarray] = deque(maxlen=trail + 1)
    background = np.empty((height, width, 3), dtype=np.uint8)
    background[:] = BACKGROUND
    if outline is not None:
        draw_polyline(background, outline, BOUNDS_COLOR, 0.8)
    writer = open_writer(output, fps, width, height)
    total = hi - lo
    done = 0
    try:
        for c0, c1 in _chunks(lo, hi, store.chunk_frames):
            block = {name: store.read(name, c0, c1) for name in ("position", "velocity", "alive")}
            if color_by == "turning":
                block["turning"] = store.read("turning", c0, c1)
            for t in tracks:
                block[f"{t}_position"] = store.read(f"{t}_position", c0, c1)
                block[f"{t}_velocity"] = store.read(f"{t}_velocity", c0, c1)
            for k in range(c1 - c0):
                frame = background.copy()
                pos = block["position"][k].astype(np.float64)
                vel = block["velocity"][k].astype(np.float64)
                alive = block["alive"][k]
                pos_shown = np.where(alive[:, None], pos, np.nan)
                center = None
                if camera.follow and alive.any():
                    center = np.nanmean(pos_shown, axis=0)
                if trail:
                    history.append(pos_shown)
                    _draw_trails(frame, view, list(history), center, painter, vel, block, k)
                colors = painter.colors(vel, block["turning"][k] if "turning" in block else None)
                _draw_agents(frame, view, pos_shown, vel, colors, base_size, center)
                for t in tracks:
                    tp = block[f"{t}_position"][k].astype(np.float64)
                    tv = block[f"{t}_velocity"][k].astype(np.float64)
                    tc = np.tile(np.array(TRACK_COLOR, dtype=np.uint8), (len(tp), 1))
                    _draw_agents(frame, view, tp, tv, tc, 2.0 * base_size, center)
                writer.write(frame)
                done += 1
                if on_frame is not None:
                    on_frame(done, total)
    except BaseException:
        writer.abort()
        raise
    writer.close()
    return RenderReport(output, done, width, height, fps, time.perf_counter() - started)


def _chunks(lo: int, hi: int, chunk: int):
    """(start, stop) frame ranges along the store's time chunks."""
    c0 = lo
    while c0 < hi:
        c1 = min((c0 // chunk + 1) * chunk, hi)
        yield c0, c1
        c0 = c1


def _draw_agents(frame, view: View, pos, vel, colors, base_size: float, center) -> None:
    proj = view.project(pos, vel, center)
    visible = np.flatnonzero(proj.visible)
    if len(visible) == 0:
        return
    colors = np.ascontiguousarray(colors, dtype=np.uint8)
    if view.dim == 3:
        near, far = view.depth_range()
        fade = 1.0 - 0.45 * np.clip((proj.depth - near) / max(far - near, 1e-12), 0.0, 1.0)
        colors = (colors * fade[:, None]).astype(np.uint8)
        order = visible[np.argsort(-proj.depth[visible], kind="stable")]  # far first
    else:
        order = visible
    tri = triangles(proj.xy, proj.heading, base_size * proj.scale)
    fill_triangles(frame, tri, colors, order.astype(np.int64))


def _draw_trails(frame, view: View, history: list[np.ndarray], center, painter, vel, block, k) -> None:
    if len(history) < 2:
        return
    colors = painter.colors(vel, block["turning"][k] if "turning" in block else None).astype(np.float64)
    xy = [view.project(p, None, center) for p in history]
    n_seg = len(history) - 1
    limit = 0.25 * min(view.width, view.height)
    for age in range(n_seg):  # oldest first
        a, b = xy[age], xy[age + 1]
        ok = a.visible & b.visible
        alpha = np.where(ok, 0.55 * (age + 1) / n_seg, 0.0)
        blend_lines(frame, np.where(ok[:, None], a.xy, np.nan), b.xy, colors, alpha, limit)

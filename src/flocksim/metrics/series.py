"""Every flock analysis over a whole recording: per-frame series and their summary.

Input: ``position``, ``velocity`` (T, N, dim) and ``present`` (T, N) bool, as
:func:`flocksim.io.open_tracks` gives them for a run, a movement dataset or a CSV. Each frame's
analyses use the birds present in that frame (tracked birds that come and go are simply fewer
birds in those frames). Space is open unless ``box`` gives the sides of a periodic box: then
distances (nearest neighbours, correlations, gamma) use the minimum image, and the analyses that
need a centroid (milling, edge deviation, shape, the centroid's path) place each bird at its image
nearest the flock's circular-mean centre, which is exact for a flock spanning less than half the box.

Per frame: birds present, polarization, milling and the group state they give (Tunstrom et al.
2013), mean and standard deviation of speed, speed fluctuation var(|v|)/mean(|v|)^2, mean
nearest-neighbour distance, local misalignment (the mean angle between each bird's heading and the
mean heading of its 6 nearest neighbours), edge and interior heading deviation (Attanasi et al. 2015), the flock's
shape (|cos| between heading and longest axis, aspect width/length). On at most
``correlation_frames`` evenly spaced frames (each is O(N^2)): the connected correlation functions
of orientation and speed (Cavagna et al. 2010) with their correlation lengths, and Ballerini's
anisotropy gamma(1). Over the whole recording: the repetition index of the centroid's path and the
fraction of time with polarization below 0.6.

The summary selects frames as the starling experiments do (docs/starlings.md): edge and interior
deviation over frames with polarization >= 0.85, shape over frames with polarization >= 0.8.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from flocksim import readable
from flocksim.budgets import check_memory
from flocksim.metrics.correlation import (
    CHUNK_BYTES,
    Correlation,
    correlation_function,
    correlation_length,
    pair_bytes,
)
from flocksim.metrics.groupstate import STATES, classify
from flocksim.metrics.neighbors import local_misalignment, nearest_neighbor_stats
from flocksim.metrics.order import milling, polarization, speed_stats
from flocksim.metrics.shape import anisotropy_gamma
from flocksim.metrics.starlings import (
    edge_interior_deviation,
    flock_shape,
    fraction_below,
    repetition_index,
    speed_fluctuation,
)
from flocksim.space import make_space, wrap_array

SERIES = (
    "n_present",
    "polarization",
    "milling",
    "speed_mean",
    "speed_std",
    "speed_fluctuation",
    "nnd_mean",
    "misalignment",
    "edge_deviation",
    "interior_deviation",
    "axis_cos",
    "aspect",
)
"""Per-frame series of :func:`analyze`."""
EDGE_MIN_POLARIZATION = 0.85
SHAPE_MIN_POLARIZATION = 0.8
CORRELATION_BINS = 30
DEFAULT_CORRELATION_FRAMES = 10
FRAME_BYTES_PER_BIRD = 400
"""Peak memory per bird of one frame's analyses [bytes], the correlations' pair rows apart: the
frame's copies, the k-nearest grid and lists, distances to the centroid (measured with tracemalloc:
docs/reliability.md, "Field data")."""


def frame_memory(birds: int, dim: int) -> int:
    """Peak memory of one frame's analyses of ``birds`` birds [bytes], the chunk of the correlations'
    pair rows included (at least one row: :func:`flocksim.metrics.correlation.chunk_rows`)."""
    return birds * FRAME_BYTES_PER_BIRD + max(CHUNK_BYTES, birds * pair_bytes(dim))


@dataclass
class TrackAnalysis:
    """``time`` (T,); ``series`` name -> (T,) values (NaN where a frame has too few birds);
    ``state`` (T,) group state per frame; ``correlation_frames`` indices of the frames with the
    O(N^2) analyses; ``correlation_length`` / ``speed_correlation_length`` / ``gamma1`` per such
    frame; ``curves`` {kind: C(r) of the middle such frame}; ``summary`` name -> value."""

    time: np.ndarray
    series: dict[str, np.ndarray]
    state: np.ndarray
    correlation_frames: np.ndarray
    correlation_length: np.ndarray
    speed_correlation_length: np.ndarray
    gamma1: np.ndarray
    curves: dict[str, Correlation] = field(default_factory=dict)
    summary: dict[str, float] = field(default_factory=dict)


def centred_images(position: np.ndarray, box: np.ndarray) -> np.ndarray:
    """Each bird's periodic image nearest the circular-mean centre of the flock ((n, dim) [units]):
    the centre's coordinate on an axis of side L is L/(2 pi) times the angle of the mean of
    exp(2 pi i x / L) over the birds."""
    p = np.asarray(position, dtype=np.float64)
    if len(p) == 0:
        return p.copy()
    angle = 2.0 * np.pi * p / box
    centre = box / (2.0 * np.pi) * np.arctan2(np.sin(angle).mean(axis=0), np.cos(angle).mean(axis=0))
    d = p - centre
    return centre + d - box * np.round(d / box)


def frame_analyses(position: np.ndarray, velocity: np.ndarray, box: np.ndarray | None = None) -> dict[str, float]:
    """The per-frame analyses of :data:`SERIES` for the birds of one frame ((n, dim) arrays), in the
    periodic box of sides ``box`` [units] if given (positions in any image)."""
    n = len(position)
    space = None
    if box is not None:
        space = make_space("periodic", list(box))
        position = centred_images(position, box)
    speed_mean, speed_std = speed_stats(velocity)
    edge, interior = edge_interior_deviation(position, velocity)
    shape = flock_shape(position, velocity)
    wrapped = _in_box(position, space)
    nnd = nearest_neighbor_stats(wrapped, space)["mean"] if n >= 2 else math.nan
    return {
        "n_present": float(n),
        "polarization": polarization(velocity),
        "milling": milling(position, velocity),
        "speed_mean": speed_mean,
        "speed_std": speed_std,
        "speed_fluctuation": speed_fluctuation(velocity),
        "nnd_mean": nnd,
        "misalignment": local_misalignment(wrapped, velocity, space=space),
        "edge_deviation": edge,
        "interior_deviation": interior,
        "axis_cos": shape["axis_cos"],
        "aspect": shape["aspect"],
    }


def _in_box(position: np.ndarray, space) -> np.ndarray:
    """Positions wrapped into a periodic space's box (as the neighbour search needs), else as they are."""
    return position if space is None else wrap_array(position, space)


def correlation_frame_indices(present: np.ndarray, count: int) -> np.ndarray:
    """At most ``count`` frame indices, evenly spaced over the frames with at least 3 birds present."""
    usable = np.flatnonzero(present.sum(axis=1) >= 3)
    if len(usable) <= count:
        return usable
    return usable[np.unique(np.round(np.linspace(0, len(usable) - 1, count)).astype(int))]


def analyze(
    time: np.ndarray,
    position: np.ndarray,
    velocity: np.ndarray,
    present: np.ndarray,
    correlation_frames: int = DEFAULT_CORRELATION_FRAMES,
    box: np.ndarray | None = None,
) -> TrackAnalysis:
    """Every analysis of the module docstring over a recording; ``box``: sides [units] of the
    periodic box the birds live in (None: open space). BudgetError when one frame's analyses
    (:func:`frame_memory`) would not fit the memory left (checked before any is done)."""
    frames = len(time)
    birds, dim = position.shape[1], position.shape[2]
    check_memory(
        frame_memory(birds, dim),
        f"analyze: frames of {readable.count(birds)} birds",
        "allowed: fewer birds, or a machine with more memory",
    )
    series = {name: np.full(frames, np.nan) for name in SERIES}
    centroid = np.full((frames, position.shape[2]), np.nan)
    box = None if box is None or len(box) == 0 else np.asarray(box, dtype=np.float64)
    space = None if box is None else make_space("periodic", list(box))
    for t in range(frames):
        p, v = position[t][present[t]], velocity[t][present[t]]
        for name, value in frame_analyses(p, v, box).items():
            series[name][t] = value
        if len(p):
            centroid[t] = (p if box is None else centred_images(p, box)).mean(axis=0)
    if box is not None:
        centroid = _unwrap_path(centroid, box)
    state = np.array([classify(p, m) for p, m in zip(series["polarization"], series["milling"], strict=True)])
    chosen = correlation_frame_indices(present, correlation_frames)
    lengths, speed_lengths, gamma1 = (np.full(len(chosen), np.nan) for _ in range(3))
    curves: dict[str, Correlation] = {}
    for i, t in enumerate(chosen):
        p, v = _in_box(position[t][present[t]], space), velocity[t][present[t]]
        orientation = correlation_function(p, v, "orientation", bins=CORRELATION_BINS, space=space)
        speed = correlation_function(p, v, "speed", bins=CORRELATION_BINS, space=space)
        lengths[i] = correlation_length(orientation)
        speed_lengths[i] = correlation_length(speed)
        gamma1[i] = anisotropy_gamma(p, v, n_max=1, space=space)[0]
        if i == len(chosen) // 2:
            curves = {"orientation": orientation, "speed": speed}
    result = TrackAnalysis(time, series, state, chosen, lengths, speed_lengths, gamma1, curves)
    result.summary = summarize(result, centroid)
    return result


def _unwrap_path(path: np.ndarray, box: np.ndarray) -> np.ndarray:
    """A (T, dim) path in a periodic box with each step taken as its shortest image (NaN rows kept;
    a step across them counts from the last known point)."""
    out = path.copy()
    last = None
    for t in range(len(path)):
        if not np.all(np.isfinite(path[t])):
            continue
        if last is not None:
            d = path[t] - path[last]
            out[t] = out[last] + d - box * np.round(d / box)
        last = t
    return out


def _mean(values: np.ndarray) -> float:
    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v)]
    return float(v.mean()) if len(v) else math.nan


def summarize(result: TrackAnalysis, centroid: np.ndarray) -> dict[str, float]:
    """Name -> value over the recording (means over frames unless the name says otherwise)."""
    s = result.series
    pol = s["polarization"]
    counted = np.isfinite(pol)
    edge_frames = counted & (pol >= EDGE_MIN_POLARIZATION)
    shape_frames = counted & (pol >= SHAPE_MIN_POLARIZATION)
    path = centroid[np.all(np.isfinite(centroid), axis=1)]
    out = {
        "frames": float(len(result.time)),
        "birds_present_mean": _mean(s["n_present"]),
        "polarization": _mean(pol),
        "polarization_sd": float(np.std(pol[counted])) if counted.any() else math.nan,
        "milling": _mean(s["milling"]),
    }
    for name in STATES:
        out[f"state_{name}"] = float(np.mean(result.state[counted] == name)) if counted.any() else math.nan
    out |= {
        "speed_mean": _mean(s["speed_mean"]),
        "speed_std": _mean(s["speed_std"]),
        "speed_fluctuation": _mean(s["speed_fluctuation"]),
        "nnd_mean": _mean(s["nnd_mean"]),
        "misalignment": _mean(s["misalignment"]),
        "edge_deviation": _mean(s["edge_deviation"][edge_frames]),
        "interior_deviation": _mean(s["interior_deviation"][edge_frames]),
        "edge_frames": float(edge_frames.sum()),
        "axis_cos": _mean(s["axis_cos"][shape_frames]),
        "aspect": _mean(s["aspect"][shape_frames]),
        "shape_frames": float(shape_frames.sum()),
        "correlation_length": _mean(result.correlation_length),
        "speed_correlation_length": _mean(result.speed_correlation_length),
        "gamma1": _mean(result.gamma1),
        "correlation_frames": float(len(result.correlation_frames)),
        "repetition_index": repetition_index(path),
        "time_polarization_below_0.6": fraction_below(pol[counted], 0.6),
    }
    return out

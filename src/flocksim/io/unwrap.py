"""Tracks from a periodic box: the box size, unwrapping, and spotting wraps (docs/field-data.md).

A bird that leaves a periodic box of side L on one face re-enters on the opposite one, so its
recorded coordinate jumps by about L between two frames. Differences of such positions are
nonsense (a speed of L per frame), so:

- :func:`box_sizes` turns ``--box`` ("L" or "Lx,Ly[,Lz]" [units]) into one side per axis;
- :func:`unwrap` removes the jumps: each step between consecutive frames where the bird is seen
  in both is taken as its shortest periodic image (so no bird may move L/2 or more per frame);
- :func:`find_wrap_jump` finds, without a box, a step that can only be a wrap: longer than half
  the span of all positions on its axis and :data:`JUMP_FACTOR` times the median step.
"""

from __future__ import annotations

import math

import numpy as np

JUMP_FACTOR = 20.0
"""A step counts as a wrap only when it is this many times the median step (and over half the span)."""
SPAN_TOLERANCE = 1e-6
"""Positions may span the box plus this fraction of it (rounding of coordinates written as text)."""


class WrapError(ValueError):
    """Tracks and box that do not fit: one line naming ``--box`` and what is allowed."""


def box_sizes(text: str, dim: int) -> np.ndarray:
    """Side lengths (dim,) [units] from "L" (every axis) or one value per axis, comma-separated."""
    parts = [p.strip() for p in str(text).split(",")]
    try:
        values = [float(p) for p in parts]
    except ValueError:
        raise WrapError(
            f"--box: {text!r} is not a number or a list of numbers; allowed: L or Lx,Ly[,Lz] (each > 0)"
        ) from None
    if len(values) == 1:
        values *= dim
    if len(values) != dim:
        raise WrapError(f"--box: {text!r} gives {len(values)} sides for {dim}D tracks; allowed: one value or {dim}")
    if not all(math.isfinite(v) and v > 0 for v in values):
        raise WrapError(f"--box: {text!r} has a side that is not a positive finite number; allowed: each > 0")
    return np.array(values, dtype=np.float64)


def _steps(position: np.ndarray, linked: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(steps (S-1, N, dim), usable (S-1, N)): differences between consecutive frames, usable where
    the frames are linked and the bird is seen in both."""
    seen = np.all(np.isfinite(position), axis=2)
    usable = linked[:, None] & seen[:-1] & seen[1:]
    return np.diff(position, axis=0), usable


def check_span(position: np.ndarray, box: np.ndarray, what: str) -> None:
    """WrapError when the positions span more than the box on some axis (the box is too small)."""
    if not np.isfinite(position).any():
        return
    span = np.nanmax(position, axis=(0, 1)) - np.nanmin(position, axis=(0, 1))
    for axis, (s, side) in enumerate(zip(span, box, strict=True)):
        if s > side * (1.0 + SPAN_TOLERANCE):
            raise WrapError(
                f"--box: {what} spans {s:g} units on {'xyz'[axis]}, more than the box side {side:g}; "
                "allowed: the size of the periodic box the tracks wrap in"
            )


def unwrap(position: np.ndarray, linked: np.ndarray, box: np.ndarray) -> np.ndarray:
    """Positions (S, N, dim) with the periodic jumps removed: each usable step is replaced by its
    shortest image; a bird keeps the offset it had when it reappears after a gap."""
    steps, usable = _steps(position, linked)
    fold = -box * np.round(steps / box)
    fold[~usable] = 0.0
    offset = np.concatenate([np.zeros((1, *position.shape[1:])), np.cumsum(fold, axis=0)])
    return position + offset


def find_wrap_jump(position: np.ndarray, linked: np.ndarray, time: np.ndarray, ids: np.ndarray) -> str | None:
    """A description of the first step that looks like a periodic wrap, or None.

    A wrap: a step between consecutive frames longer than half the span of all positions on that
    axis and :data:`JUMP_FACTOR` times the median of the nonzero steps (flying birds move a small
    part of their range per frame; a wrap moves one box side)."""
    if len(position) < 2:
        return None
    steps, usable = _steps(position, linked)
    size = np.abs(steps)
    size[~usable] = np.nan
    moving = size[np.isfinite(size) & (size > 0)]
    if len(moving) == 0:
        return None
    span = np.nanmax(position, axis=(0, 1)) - np.nanmin(position, axis=(0, 1))
    with np.errstate(invalid="ignore"):
        jump = (size > 0.5 * span) & (size > JUMP_FACTOR * float(np.median(moving)))
    hits = np.argwhere(jump)
    if len(hits) == 0:
        return None
    s, bird, axis = (int(v) for v in hits[0])
    name = ids[bird].item() if isinstance(ids[bird], np.generic) else ids[bird]
    return (
        f"bird {name!r} jumps {steps[s, bird, axis]:+g} units on {'xyz'[axis]} between times {time[s]:g} and "
        f"{time[s + 1]:g}, over half the span of the tracks ({int(jump.any(axis=2).sum())} such steps in all)"
    )

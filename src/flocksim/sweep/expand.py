"""From axes to tasks: parameter points x seeds, each with a stable id."""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from flocksim.sweep.schema import AxisValue, SweepFile


class Sweep(Protocol):
    """What the expansion reads of a sweep (:class:`flocksim.sweep.spec.Sweep`): its file."""

    @property
    def spec(self) -> SweepFile: ...


@dataclass(frozen=True)
class Task:
    """One run of a sweep.

    ``index`` is its position in the expansion (parameter points in order, the first axis
    varying slowest, and the seeds of a point one after another); ``task_id`` is a hash of
    the point and the seed, the same in every expansion that contains them, which is what
    ``--resume`` matches finished rows by.
    """

    index: int
    task_id: str
    point: tuple[tuple[str, AxisValue], ...]
    seed: int

    @property
    def values(self) -> dict[str, AxisValue]:
        return dict(self.point)


def task_id(point: dict[str, Any], seed: int) -> str:
    """16 hex digits identifying a (parameter point, seed) pair."""
    text = json.dumps({"point": point, "seed": seed}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def points(sweep: Sweep) -> Iterator[dict[str, AxisValue]]:
    """The parameter points: the grid of the axes, or ``samples`` random draws (seeded)."""
    axes = sweep.spec.axes
    sampling = sweep.spec.sampling
    if sampling.kind == "grid":
        for combo in itertools.product(*(a.grid_values() for a in axes)):
            yield {a.key: v for a, v in zip(axes, combo, strict=True)}
        return
    rng = np.random.default_rng(sampling.seed)
    for _ in range(sampling.samples):
        yield {a.key: a.draw(rng) for a in axes}


def expand(sweep: Sweep) -> list[Task]:
    """Every task of the sweep, in order. Random draws that repeat a point (possible on
    ``values`` axes) are kept once."""
    tasks: list[Task] = []
    seen: set[str] = set()
    seeds = range(sweep.spec.seed_start, sweep.spec.seed_start + sweep.spec.seeds)
    for point in points(sweep):
        for seed in seeds:
            tid = task_id(point, seed)
            if tid in seen:
                continue
            seen.add(tid)
            tasks.append(Task(len(tasks), tid, tuple(point.items()), seed))
    return tasks

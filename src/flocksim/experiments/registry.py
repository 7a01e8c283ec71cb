"""The experiments by name, gathered from the family modules of :data:`FAMILIES` in their order (the
order of ``flocksim experiment --list``)."""

from __future__ import annotations

from collections.abc import Iterable
from types import ModuleType

from flocksim.experiments import agitation, cruise, dynamics, hallmarks, predator, spontaneous, turns, waves
from flocksim.experiments.common import Experiment

FAMILIES: tuple[ModuleType, ...] = (predator, cruise, turns, hallmarks, dynamics, waves, agitation, spontaneous)
"""The family modules: each defines ``EXPERIMENTS``, a tuple of :class:`Experiment`."""


def collect(families: Iterable[ModuleType]) -> dict[str, Experiment]:
    """The experiments of ``families`` by name, in order; ValueError naming the name and both modules
    when two experiments share a name."""
    found: dict[str, Experiment] = {}
    where: dict[str, str] = {}
    for family in families:
        for experiment in family.EXPERIMENTS:
            if experiment.name in found:
                first = where[experiment.name]
                raise ValueError(f"experiment {experiment.name!r} is defined twice: in {first} and {family.__name__}")
            found[experiment.name] = experiment
            where[experiment.name] = family.__name__
    return found


EXPERIMENTS: dict[str, Experiment] = collect(FAMILIES)

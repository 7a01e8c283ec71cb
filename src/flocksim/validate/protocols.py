"""The run protocols that flocksim and the independent references share, quick and full.

A protocol fixes everything a reference curve depends on (sizes, steps, averaging, which
seeds); the stored curves (docs/results/validation/) record it beside every number, and a
check refuses curves made with another protocol.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class VicsekProtocol:
    """v_a against eta at density 4: each (eta, seed) one run from a random start, ``relax`` steps,
    then v_a averaged over ``measure`` steps (sampled every ``every``)."""

    name: str
    n: int
    etas: tuple[float, ...]
    relax: int
    measure: int
    every: int
    reference_seeds: int  # seeds 0 .. reference_seeds - 1 of the NumPy reference
    seeds: int  # seeds 0 .. seeds - 1 of flocksim (its own random streams)


@dataclass(frozen=True)
class CouzinProtocol:
    """Couzin's Fig. 3 ramp: ``warmup`` steps at delta_r_o = values[0], then ``hold`` steps per value up
    the ramp and back down (P, M averaged over the second half of each hold, every ``every`` steps)."""

    name: str
    n: int
    values: tuple[float, ...]
    hold: int
    warmup: int
    every: int
    reference_seeds: int
    seeds: int


VICSEK = {
    # the full protocol at eta = 4, near the transition, where the two position updates differ most: with 48
    # reference and 16 flocksim seeds the band is under 7 % of v_a, so a model 10 % off fails (docs/validation.md)
    "quick": VicsekProtocol("quick", 400, (4.0,), 2000, 4000, 10, reference_seeds=48, seeds=16),
    "full": VicsekProtocol(
        "full",
        400,
        tuple(0.5 * k for k in range(1, 13)),
        2000,
        4000,
        10,
        reference_seeds=12,
        seeds=4,
    ),
}
COUZIN = {
    "quick": CouzinProtocol("quick", 100, (0.0, 1.5, 4.0, 12.0), 600, 1000, 5, reference_seeds=16, seeds=2),
    "full": CouzinProtocol(
        "full",
        100,
        (0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 12.0, 14.0),
        1500,
        1000,
        5,
        reference_seeds=12,
        seeds=4,
    ),
}


def protocol_name(quick: bool) -> str:
    return "quick" if quick else "full"

"""The Couzin model (Couzin, Krause, James, Ruxton, Franks 2002, J. theor. Biol. 218:1).

Individuals at constant speed s with zones of repulsion (radius r_r), orientation
(width delta_r_o) and attraction (width delta_r_a), a field of perception alpha
(a blind rear cone of 360 - alpha degrees), a maximum turning rate theta and
Gaussian angular noise sigma; one step is tau = world.dt. The rule is in
kernels/couzin.py (repulsion takes priority; unseen neighbours are ignored in
every zone). Group polarization and angular momentum (milling) are
:func:`flocksim.metrics.polarization` and :func:`flocksim.metrics.milling`; the
group states are classified by :mod:`flocksim.metrics.groupstate`.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from flocksim.initial import initial_state
from flocksim.models.base import NeighborQuery, space_of
from flocksim.models.noisy import NoiseBuffer
from flocksim.params import CouzinParams
from flocksim.state import FlockState


class CouzinCoefficients(NamedTuple):
    r_r: float  # zone of repulsion: d < r_r
    r_o: float  # zone of orientation: r_r <= d < r_o
    r_a: float  # zone of attraction: r_o <= d < r_a
    cos_half_fov: float  # seen when h . r_ij >= cos(alpha / 2) |r_ij|
    all_round: bool  # alpha = 360 deg: everything is seen
    sigma: float  # angular noise standard deviation [rad]
    max_turn: float  # theta tau [rad per step]


def coefficients(p: CouzinParams) -> CouzinCoefficients:
    c = p.couzin
    r_o = c.r_r + c.delta_r_o
    return CouzinCoefficients(
        r_r=c.r_r,
        r_o=r_o,
        r_a=r_o + c.delta_r_a,
        cos_half_fov=math.cos(math.radians(c.field_of_perception_deg) / 2.0),
        all_round=c.field_of_perception_deg >= 360.0,
        sigma=c.noise_sd,
        max_turn=math.radians(c.max_turn_deg) * p.world.dt,
    )


def _gauss_and_azimuth(rng: np.random.Generator, n: int) -> np.ndarray:
    out = np.empty((n, 2))
    out[:, 0] = rng.standard_normal(n)
    out[:, 1] = rng.random(n)
    return out


class CouzinModel:
    name = "couzin"

    def __init__(self, params: CouzinParams):
        self.params = params
        self.space = space_of(params)
        self.dim = params.world.dim
        self.speed = params.couzin.speed
        self.coefficients = coefficients(params)
        self.noise = NoiseBuffer(_gauss_and_azimuth, neutral=(0.0, 0.0))

    def neighbor_query(self) -> NeighborQuery:
        return NeighborQuery(
            "metric", self.coefficients.r_a, 1, self.params.neighbors.method, "couzin.r_r + delta_r_o + delta_r_a"
        )

    def initial_state(self, rng: np.random.Generator) -> FlockState:
        p = self.params
        init = p.agents.init.model_copy(update={"speed_min": 1.0, "speed_max": 1.0})
        return initial_state(p.world, p.agents.n, init, p.couzin.speed, rng)

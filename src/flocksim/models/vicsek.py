"""The Vicsek model (Vicsek, Czirok, Ben-Jacob, Cohen, Shochet 1995, PRL 75:1226).

N particles at constant speed v0 in a periodic box (or open space), 2D or 3D. Per
step, every particle reads step t: its new heading is the mean direction of the
unit headings of all particles within r of it, **itself included**, plus uniform
angular noise of width eta (kernels/vicsek.py: 2D an angle in [-eta/2, eta/2); 3D
uniform on the cap of half-angle eta/2). Position update convention: the new
heading moves the particle, p(t+1) = wrap(p(t) + v0 dt h(t+1)) (Chate et al. 2008;
the paper's text writes v(t); the order parameter curves do not depend on it).
Order parameter v_a = |sum_i h_i| / N (:func:`flocksim.metrics.polarization`).
"""

from __future__ import annotations

import numpy as np

from flocksim.initial import initial_state
from flocksim.models.base import NeighborQuery, space_of
from flocksim.models.noisy import NoiseBuffer
from flocksim.params import VicsekParams
from flocksim.state import FlockState


def _uniforms(rng: np.random.Generator, n: int) -> np.ndarray:
    return rng.random((n, 2))


class VicsekModel:
    name = "vicsek"

    def __init__(self, params: VicsekParams):
        self.params = params
        self.space = space_of(params)
        self.dim = params.world.dim
        self.speed = params.vicsek.speed
        self.eta = params.vicsek.eta
        self.noise = NoiseBuffer(_uniforms, neutral=(0.5, 0.0))

    def neighbor_query(self) -> NeighborQuery:
        return NeighborQuery("metric", self.params.vicsek.radius, 1, self.params.neighbors.method, "vicsek.radius")

    def initial_state(self, rng: np.random.Generator) -> FlockState:
        p = self.params
        init = p.agents.init.model_copy(update={"speed_min": 1.0, "speed_max": 1.0})
        return initial_state(p.world, p.agents.n, init, p.vicsek.speed, rng)

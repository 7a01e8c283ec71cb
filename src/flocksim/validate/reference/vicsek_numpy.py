"""The Vicsek model written from the paper in plain NumPy (no flocksim code).

Vicsek T, Czirok A, Ben-Jacob E, Cohen I, Shochet O (1995). Novel type of phase transition
in a system of self-driven particles. Phys. Rev. Lett. 75:1226.

N particles in a periodic square box of side L (density rho = N / L^2), all moving at the
same speed v0, interaction radius r, time step dt = 1. From step t to t + 1, every particle
reads step t (the paper's Eqs 1 and 2):

    theta_i(t+1) = <theta(t)>_r + dtheta_i
        <theta(t)>_r = atan2(sum_j sin theta_j(t), sum_j cos theta_j(t)) over every particle j
        within distance r of i (periodic minimum image), i itself included;
        dtheta_i uniform in [-eta/2, eta/2]
    x_i(t+1) = x_i(t) + v_i(t) dt,   v_i(t) = v0 (cos theta_i(t), sin theta_i(t))

that is, the position advances with the velocity of step t (not with the new angle).
Start (the paper): positions uniform in the box, angles uniform. Order parameter
v_a = |sum_i v_i| / (N v0).

Reproducible bit for bit: a NumPy Generator seeded with (seed, round(1000 eta), N),
elementwise IEEE arithmetic, sums along one axis, and the ``math`` module's cos, sin
and atan2 per particle (NumPy's vectorised transcendental functions may differ in the
last bit between CPUs).
"""

from __future__ import annotations

import math

import numpy as np

V0 = 0.03
RADIUS = 1.0
RHO = 4.0


def _map(fn, values: np.ndarray) -> np.ndarray:
    """``fn`` of the ``math`` module applied to every element (bitwise the same on every CPU)."""
    return np.fromiter(map(fn, values.tolist()), dtype=np.float64, count=len(values))


def _cos_sin(theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return _map(math.cos, theta), _map(math.sin, theta)


def _pairs(x: np.ndarray, side: float, reach: float) -> tuple[np.ndarray, np.ndarray]:
    """Index arrays (i, j) of every pair within ``reach`` (minimum image), i == j included, sorted by i, then j."""
    dx = x[None, :, 0] - x[:, None, 0]
    dy = x[None, :, 1] - x[:, None, 1]
    dx = dx - side * np.round(dx / side)
    dy = dy - side * np.round(dy / side)
    return np.nonzero(dx * dx + dy * dy <= reach * reach)


class VicsekReference:
    """One run: ``n`` particles at density ``rho`` with noise ``eta`` [rad], seeded by ``seed``.

    Neighbours come from a Verlet list: all pairs within r + SKIN, rebuilt every REBUILD steps.
    Every particle moves exactly v0 per step, so a pair closes in by at most 2 v0 per step and
    no pair outside the list can come within r before the next rebuild (2 v0 REBUILD <= SKIN):
    the neighbour sets are exactly those of an all-pairs search, at a fraction of the cost.
    """

    SKIN = 0.6
    REBUILD = 10

    def __init__(self, n: int, eta: float, seed: int, rho: float = RHO):
        self.side = math.sqrt(n / rho)
        if self.side <= 2 * (RADIUS + self.SKIN) or 2 * V0 * self.REBUILD > self.SKIN:
            raise ValueError(f"box side {self.side:g}: the minimum image needs a side > {2 * (RADIUS + self.SKIN):g}")
        self.eta = float(eta)
        self.rng = np.random.default_rng([seed, round(1000 * eta), n])
        self.x = self.rng.uniform(0.0, self.side, (n, 2))
        self.theta = self.rng.uniform(-math.pi, math.pi, n)
        self.steps = 0

    def neighbours(self) -> tuple[np.ndarray, np.ndarray]:
        """(i, j) of every pair with |x_j - x_i| <= r (minimum image), i == j included, sorted by i, then j."""
        if self.steps % self.REBUILD == 0:
            self._list = _pairs(self.x, self.side, RADIUS + self.SKIN)
        i, j = self._list
        dx = self.x[j, 0] - self.x[i, 0]
        dy = self.x[j, 1] - self.x[i, 1]
        dx = dx - self.side * np.round(dx / self.side)
        dy = dy - self.side * np.round(dy / self.side)
        near = dx * dx + dy * dy <= RADIUS * RADIUS
        return i[near], j[near]

    def step(self) -> None:
        n = len(self.theta)
        cos, sin = _cos_sin(self.theta)
        i, j = self.neighbours()
        sum_sin = np.bincount(i, weights=sin[j], minlength=n)  # in list order: bitwise reproducible
        sum_cos = np.bincount(i, weights=cos[j], minlength=n)
        mean = np.fromiter(map(math.atan2, sum_sin.tolist(), sum_cos.tolist()), dtype=np.float64, count=n)
        noise = self.rng.uniform(-self.eta / 2, self.eta / 2, n)
        self.x = np.mod(self.x + V0 * np.stack([cos, sin], axis=1), self.side)  # with v_i(t)
        self.theta = mean + noise
        self.steps += 1

    def order(self) -> float:
        """v_a = |sum_i v_i| / (N v0) at the current step."""
        cos, sin = _cos_sin(self.theta)
        return math.hypot(float(cos.sum()), float(sin.sum())) / len(self.theta)


def time_averaged_order(n: int, eta: float, seed: int, relax: int, measure: int, every: int = 10) -> float:
    """Mean v_a over steps relax + every, relax + 2 every, ..., relax + measure of one run from a random start."""
    run = VicsekReference(n, eta, seed)
    for _ in range(relax):
        run.step()
    samples = []
    for _ in range(measure // every):
        for _ in range(every):
            run.step()
        samples.append(run.order())
    return float(np.mean(samples))

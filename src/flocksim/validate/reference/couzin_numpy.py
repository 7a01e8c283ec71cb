"""The Couzin zonal model written from the paper in plain NumPy (no flocksim code).

Couzin ID, Krause J, James R, Ruxton GD, Franks NR (2002). Collective memory and spatial
sorting in animal groups. J. theor. Biol. 218:1-11 (section 2, "The model").

N individuals with positions c_i and unit directions v_i move at speed s in open 3D space;
one step is tau. Every individual reads step t. A neighbour j at offset r_ij = c_j - c_i
(distance d) is detected unless it is in the blind volume behind i, the rear cone outside
the field of perception alpha: detected when the angle between v_i and r_ij is at most
alpha / 2. Undetected neighbours take part in no zone.

- Zone of repulsion d < r_r: d_r = -sum_j r_ij / |r_ij| (the paper's Eq. 1). It has
  priority: if it holds anyone, the desired direction is d_r.
- Otherwise, zone of orientation r_r <= d < r_o = r_r + delta_r_o:
  d_o = sum_j v_j / |v_j| (Eq. 2), and zone of attraction r_o <= d < r_a = r_o + delta_r_a:
  d_a = sum_j r_ij / |r_ij| (Eq. 3). The desired direction is d_o if only the zone of
  orientation holds neighbours, d_a if only the zone of attraction does, and the mean of
  the two tendencies, (d_o / |d_o| + d_a / |d_a|) / 2, if both do. Distances put the
  focal individual (d = 0) in none of its zones of orientation or attraction.
- Nobody detected, or a desired direction of length zero: i keeps its direction.
- Noise: the unit desired direction is rotated by an angle sigma g (g standard normal),
  about an axis perpendicular to it at a uniformly random azimuth (3D), or in the plane (2D).
- Turning rate theta: if the angle between v_i and the noisy desired direction is at most
  theta tau, v_i(t + tau) is that direction; otherwise v_i turns by theta tau toward it.
- Move: c_i(t + tau) = c_i(t) + s tau v_i(t + tau).

Group polarization P = |sum_i v_i| / N and angular momentum M = |sum_i r_ic x v_i| / N,
r_ic the unit vector from the group's centroid to i (the paper's p_group and m_group).
Start: positions uniform in a cube of side ``start_side`` centred on the origin,
directions uniform on the sphere.

Reproducible bit for bit: a NumPy Generator seeded with (seed, n); elementwise IEEE
arithmetic, sums along one axis, and the ``math`` module's cos, sin and acos per individual.
"""

from __future__ import annotations

import math

import numpy as np


def _unit_rows(a: np.ndarray) -> np.ndarray:
    """Rows of ``a`` (..., 3) divided by their length; zero rows stay zero."""
    length = np.sqrt(a[..., 0] * a[..., 0] + a[..., 1] * a[..., 1] + a[..., 2] * a[..., 2])
    safe = np.where(length > 0.0, length, 1.0)
    return a / safe[..., None]


def _dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise dot products of (..., 3) arrays, summed in a fixed order (no BLAS)."""
    return a[..., 0] * b[..., 0] + a[..., 1] * b[..., 1] + a[..., 2] * b[..., 2]


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.stack(
        [
            a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1],
            a[..., 2] * b[..., 0] - a[..., 0] * b[..., 2],
            a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0],
        ],
        axis=-1,
    )


def _perpendicular(d: np.ndarray, dim: int) -> tuple[np.ndarray, np.ndarray]:
    """Per row of the unit vectors d (N, 3): two unit vectors perpendicular to it and to each other
    (2D: the in-plane perpendicular twice)."""
    if dim == 2:
        e1 = np.stack([-d[:, 1], d[:, 0], np.zeros(len(d))], axis=1)
        return e1, e1
    helper = np.zeros_like(d)
    x_axis = np.abs(d[:, 0]) < 0.9
    helper[x_axis, 0] = 1.0
    helper[~x_axis, 1] = 1.0
    e1 = _unit_rows(helper - _dot(helper, d)[:, None] * d)
    return e1, _cross(d, e1)


def _map(fn, values: np.ndarray) -> np.ndarray:
    """``fn`` of the ``math`` module applied to every element (bitwise the same on every CPU)."""
    return np.fromiter(map(fn, values.tolist()), dtype=np.float64, count=len(values))


class CouzinReference:
    """One run of ``n`` individuals (``dim`` = 3 as in the paper, or 2), seeded by ``seed``."""

    def __init__(
        self,
        n: int,
        seed: int,
        delta_r_o: float,
        delta_r_a: float = 14.0,
        r_r: float = 1.0,
        alpha_deg: float = 270.0,
        theta_deg: float = 40.0,
        tau: float = 0.1,
        speed: float = 3.0,
        sigma: float = 0.05,
        start_side: float = 8.0,
        dim: int = 3,
    ):
        self.dim = dim
        self.r_r = r_r
        self.delta_r_a = delta_r_a
        self.set_delta_r_o(delta_r_o)
        self.cos_half_alpha = math.cos(math.radians(alpha_deg) / 2)
        self.all_round = alpha_deg >= 360.0
        self.max_turn = math.radians(theta_deg) * tau
        self.step_length = speed * tau
        self.sigma = sigma
        self.rng = np.random.default_rng([seed, n])
        self.c = np.zeros((n, 3))
        self.c[:, :dim] = self.rng.uniform(-start_side / 2, start_side / 2, (n, dim))
        v = np.zeros((n, 3))
        v[:, :dim] = self.rng.standard_normal((n, dim))
        self.v = _unit_rows(v)

    def set_delta_r_o(self, delta_r_o: float) -> None:
        """Change the width of the zone of orientation (the zone of attraction keeps its width)."""
        self.r_o = self.r_r + delta_r_o
        self.r_a = self.r_o + self.delta_r_a

    def desired(self) -> np.ndarray:
        """(N, 3) unit desired directions d_i(t + tau) before noise."""
        c, v = self.c, self.v
        n = len(c)
        rx, ry, rz = (c[None, :, k] - c[:, None, k] for k in range(3))  # r[i, j] = c_j - c_i, per axis
        dist = np.sqrt(rx * rx + ry * ry + rz * rz)
        inverse = 1.0 / np.where(dist > 0.0, dist, 1.0)
        ux, uy, uz = rx * inverse, ry * inverse, rz * inverse  # unit offsets (0 for coincident individuals)
        others = ~np.eye(n, dtype=bool)
        if self.all_round:
            detected = others
        else:
            ahead = v[:, None, 0] * rx + v[:, None, 1] * ry + v[:, None, 2] * rz
            detected = others & (ahead >= self.cos_half_alpha * dist)
        zor = detected & (dist < self.r_r)
        zoo = detected & (dist >= self.r_r) & (dist < self.r_o)
        zoa = detected & (dist >= self.r_o) & (dist < self.r_a)

        def total(zone: np.ndarray, x: np.ndarray, y: np.ndarray, z: np.ndarray) -> np.ndarray:
            """(N, 3): per i, the sum over j in ``zone[i]`` of (x, y, z)[i, j] (each summed along j)."""
            return np.stack([np.where(zone, a, 0.0).sum(axis=1) for a in (x, y, z)], axis=1)

        vx, vy, vz = (np.broadcast_to(v[None, :, k], (n, n)) for k in range(3))
        d_r = -total(zor, ux, uy, uz)
        d_o = total(zoo, vx, vy, vz)
        d_a = total(zoa, ux, uy, uz)
        has_r, has_o, has_a = zor.any(axis=1), zoo.any(axis=1), zoa.any(axis=1)
        both = 0.5 * (_unit_rows(d_o) + _unit_rows(d_a))
        out = np.where(
            has_r[:, None],
            d_r,
            np.where(
                (has_o & has_a)[:, None],
                both,
                np.where(has_o[:, None], d_o, np.where(has_a[:, None], d_a, v)),
            ),
        )
        out = _unit_rows(out)
        zero = ~np.any(out != 0.0, axis=1)
        out[zero] = v[zero]
        return out

    def step(self) -> None:
        d = self.desired()
        n = len(d)
        angle = self.sigma * self.rng.standard_normal(n)
        azimuth = 2.0 * math.pi * self.rng.random(n) if self.dim == 3 else np.zeros(n)
        e1, e2 = _perpendicular(d, self.dim)
        off = _map(math.cos, azimuth)[:, None] * e1 + _map(math.sin, azimuth)[:, None] * e2
        d = _unit_rows(_map(math.cos, angle)[:, None] * d + _map(math.sin, angle)[:, None] * off)
        cos_turn = np.clip(_dot(self.v, d), -1.0, 1.0)
        within = _map(math.acos, cos_turn) <= self.max_turn
        side = d - cos_turn[:, None] * self.v
        opposite = ~np.any(side != 0.0, axis=1)  # exactly opposite: turn about any perpendicular
        side[opposite] = _perpendicular(self.v[opposite], self.dim)[0]
        turned = math.cos(self.max_turn) * self.v + math.sin(self.max_turn) * _unit_rows(side)
        self.v = np.where(within[:, None], d, _unit_rows(turned))
        self.c = self.c + self.step_length * self.v

    def order(self) -> tuple[float, float]:
        """(P, M): group polarization and group angular momentum at the current step."""
        n = len(self.v)
        total = self.v.sum(axis=0)
        p = math.sqrt(float(_dot(total, total))) / n
        r_ic = _unit_rows(self.c - self.c.sum(axis=0) / n)
        spin = _cross(r_ic, self.v).sum(axis=0)
        return p, math.sqrt(float(_dot(spin, spin))) / n


def ramp(
    n: int,
    seed: int,
    values: tuple[float, ...],
    hold: int,
    warmup: int = 1000,
    every: int = 5,
    **coefficients: float,
) -> dict[str, list[float]]:
    """Couzin's Fig. 3 protocol: ``warmup`` steps at delta_r_o = values[0], then delta_r_o steps up
    through ``values`` and back down, the state carried over; at each value ``hold`` steps, P and M
    averaged over the second half (every ``every`` steps). Returns P and M per value for both ramps
    (keys p_up, m_up, p_down, m_down; each in the order of ``values``)."""
    run = CouzinReference(n, seed, values[0], **coefficients)
    for _ in range(warmup):
        run.step()
    out: dict[str, list[float]] = {key: [0.0] * len(values) for key in ("p_up", "m_up", "p_down", "m_down")}
    for direction, order in (("up", values), ("down", values[::-1])):
        for value in order:
            run.set_delta_r_o(value)
            for _ in range(hold // 2):
                run.step()
            samples = []
            for _ in range(max(1, (hold - hold // 2) // every)):
                for _ in range(every):
                    run.step()
                samples.append(run.order())
            k = values.index(value)
            out[f"p_{direction}"][k] = float(np.mean([s[0] for s in samples]))
            out[f"m_{direction}"][k] = float(np.mean([s[1] for s in samples]))
    return out

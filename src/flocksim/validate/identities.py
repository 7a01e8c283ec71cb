"""Metric identities: configurations whose metrics are known exactly or in expectation."""

from __future__ import annotations

import math

import numpy as np

from flocksim.metrics import milling, polarization
from flocksim.metrics.correlation import correlation_function, correlation_length, correlation_sum_rule
from flocksim.metrics.groupstate import classify
from flocksim.metrics.shape import anisotropy_gamma, ellipsoid_axes
from flocksim.validate.checks import CheckResult, Measurement, relative, within


def ring(n: int) -> tuple[np.ndarray, np.ndarray]:
    """n agents evenly on the unit circle, moving counterclockwise along it."""
    a = 2.0 * math.pi * np.arange(n) / n
    return np.stack([np.cos(a), np.sin(a)], axis=1), np.stack([-np.sin(a), np.cos(a)], axis=1)


def random_headings(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    h = rng.standard_normal((n, dim))
    return h / np.linalg.norm(h, axis=1, keepdims=True)


def expected_random_polarization(n: int, dim: int) -> float:
    """E|sum of n random unit vectors| / n for large n: sqrt(pi / (4 n)) in 2D, sqrt(8 / (3 pi n)) in 3D."""
    return math.sqrt(math.pi / (4 * n)) if dim == 2 else math.sqrt(8.0 / (3.0 * math.pi * n))


def check_identities(quick: bool, seed: int = 0) -> CheckResult:
    """Metric identities: aligned, ring and random headings, group states, correlation sum rule, shape, gamma."""
    rng = np.random.default_rng(seed)
    n = 200
    draws = 200 if quick else 2000
    out: list[Measurement] = []
    aligned_p = rng.random((n, 2)) * 10
    aligned_v = np.tile([0.6, 0.8], (n, 1)) * rng.uniform(0.5, 2.0, (n, 1))
    out.append(within("aligned: polarization", polarization(aligned_v), 1.0, 1e-12, "exact"))
    rp, rv = ring(n)
    out.append(within("ring: milling", milling(rp, rv), 1.0, 1e-12, "exact"))
    out.append(within("ring: polarization", polarization(rv), 0.0, 1e-12, "exact"))
    for dim in (2, 3):
        mean_p = float(np.mean([polarization(random_headings(rng, n, dim)) for _ in range(draws)]))
        out.append(
            relative(
                f"random headings {dim}D: mean polarization (N = {n})",
                mean_p,
                expected_random_polarization(n, dim),
                0.05,
                "random walk of unit steps",
            )
        )
    states = [
        classify(polarization(aligned_v), milling(aligned_p, aligned_v)),
        classify(polarization(rv), milling(rp, rv)),
    ]
    random_p = rng.random((n, 3)) * 10
    random_v = random_headings(rng, n, 3)
    states.append(classify(polarization(random_v), milling(random_p, random_v)))
    out.append(
        Measurement(
            "group states of aligned, ring, random (1 = all as expected)",
            float(states == ["polarized", "milling", "swarm"]),
            1.0,
            1.0,
            f"polarized, milling, swarm (got {', '.join(states)})",
        )
    )
    corr = correlation_function(random_p, rng.standard_normal((n, 3)), "orientation", bins=20)
    out.append(
        within(
            "correlation sum rule, orientation (relative residual)",
            correlation_sum_rule(corr),
            0.0,
            1e-9,
            "exact: fluctuations sum to zero",
        )
    )
    corr_s = correlation_function(random_p, rng.standard_normal((n, 3)), "speed", bins=20)
    out.append(
        within("correlation sum rule, speed (relative residual)", correlation_sum_rule(corr_s), 0.0, 1e-9, "exact")
    )
    # a linear velocity gradient along x: C(r) falls through zero; r0 is finite and inside the group
    grad_p = rng.random((n, 3)) * [10.0, 1.0, 1.0]
    grad_v = np.stack([np.ones(n), 0.2 * (grad_p[:, 0] - 5.0), np.zeros(n)], axis=1)
    r0 = correlation_length(correlation_function(grad_p, grad_v, "orientation", bins=20))
    out.append(
        Measurement(
            "correlation length of a velocity gradient across 10 units",
            r0,
            1.0,
            9.0,
            "inside (1, 9): C(r) crosses zero within the group",
        )
    )
    u = random_headings(rng, 20000, 3)
    pts = u * rng.random(20000)[:, None] ** (1 / 3) * np.array([1.0, 2.0, 3.0])
    axes = ellipsoid_axes(pts)
    for k, full in enumerate((2.0, 4.0, 6.0)):
        out.append(
            relative(f"uniform ellipsoid semi-axes 1, 2, 3: I{k + 1}", axes[k], full, 0.02, "I = 2 sqrt(5 lambda)")
        )
    configs = 30 if quick else 200
    gammas = [anisotropy_gamma(rng.random((500, 3)), random_headings(rng, 500, 3), n_max=3)[0] for _ in range(configs)]
    out.append(
        within(
            f"isotropic gamma(1), mean of {configs} random configurations",
            float(np.mean(gammas)),
            1 / 3,
            3 * 0.3 / math.sqrt(configs),
            "1/3 (Ballerini et al. 2008), 3 standard errors",
        )
    )
    return CheckResult(
        "identities",
        "Metric identities",
        "Couzin et al. 2002 (polarization, angular momentum); Cavagna et al. 2010 (connected correlation, "
        "sum rule); Ballerini et al. 2008 (gamma); Tunstrom et al. 2013 (group states)",
        out,
        notes=f"N = {n}; {draws} draws of random headings per dimension; {configs} random configurations for gamma.",
    )

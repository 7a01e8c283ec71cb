"""The maximum-entropy estimate (flocksim/inference/maxent.py) against headings drawn from the model
itself by an independent heat-bath sampler (tests/maxent_heatbath.py), and its sparse algebra
against dense eigenvalues."""

from __future__ import annotations

import math

import numpy as np
import pytest

from flocksim.inference.maxent import (
    deviations,
    log_pseudo_determinant,
    maxent_alignment,
    neighbor_table,
    peak_of,
    sparse_laplacian,
)
from maxent_heatbath import heat_bath_headings, neighbor_matrix


def _cloud(rng: np.random.Generator, n: int) -> np.ndarray:
    """A flat, elongated cloud of birds (proportions about 1 : 2.5 : 5, as a flock's)."""
    return rng.uniform(0.0, 1.0, size=(n, 3)) * np.array([10.0, 2.0, 5.0])


@pytest.mark.parametrize(("coupling", "nc"), [(15.0, 6), (6.0, 12)])
def test_the_estimate_recovers_coupling_and_neighbours_of_the_exact_model(coupling, nc):
    """Headings from the full (not spin-wave) model on fixed positions: J within 5 %, n_c exact,
    by the full scan and by the peak search alike."""
    rng = np.random.default_rng(1)
    position = _cloud(rng, 300)
    headings = heat_bath_headings(position, coupling, nc, frames=10, rng=rng)
    assert min(np.linalg.norm(h.mean(axis=0)) for h in headings) > 0.9  # ordered: the approximation holds
    for search in ("full", "peak"):
        estimate = maxent_alignment([position] * len(headings), headings, max_nc=20, search=search)
        assert estimate.neighbors == nc, (search, estimate)
        assert estimate.coupling == pytest.approx(coupling, rel=0.05), (search, estimate)


def test_shuffled_headings_show_no_topological_coupling():
    """The control: the same headings given to other birds lose the neighbour structure."""
    rng = np.random.default_rng(2)
    position = _cloud(rng, 300)
    headings = [h[rng.permutation(300)] for h in heat_bath_headings(position, 15.0, 6, frames=10, rng=rng)]
    estimate = maxent_alignment([position] * len(headings), headings, max_nc=20, search="full")
    assert estimate.coupling * estimate.neighbors < 0.5 * 15.0 * 6 or estimate.neighbors == 20


def _dense_log_likelihood(positions, headings, nc):
    """The spin-wave log-likelihood at its best J, from dense eigenvalues (no sparse algebra)."""
    quad, logdet, modes = 0.0, 0.0, 0
    for p, h in zip(positions, headings, strict=True):
        n = neighbor_matrix(p, nc)
        a = 0.5 * (n + n.T)
        lap = np.diag(a.sum(axis=1)) - a
        pi = deviations(h)
        quad += float(np.einsum("ia,ij,ja->", pi, lap, pi))
        lam = np.linalg.eigvalsh(lap)
        lam = lam[lam > 1e-9]
        logdet += float(np.sum(np.log(lam)))
        modes += len(lam)
    J = 2 * modes / quad
    return J, modes * math.log(J / (2 * math.pi)) + logdet - 0.5 * J * quad


def test_log_likelihoods_match_dense_eigenvalues():
    rng = np.random.default_rng(3)
    positions = [_cloud(rng, 120) for _ in range(3)]
    headings = heat_bath_headings(positions[0], 10.0, 5, frames=3, rng=rng)
    estimate = maxent_alignment(positions, headings, max_nc=12, search="full")
    for nc in (1, 4, 12):
        J, loglik = _dense_log_likelihood(positions, headings, nc)
        assert estimate.log_likelihood[nc - 1] == pytest.approx(loglik, rel=1e-9, abs=1e-6)
    J, _ = _dense_log_likelihood(positions, headings, estimate.neighbors)
    assert estimate.coupling == pytest.approx(J, rel=1e-12)


def test_the_pseudo_determinant_of_a_disconnected_flock():
    """Two groups far apart: one zero eigenvalue each; the matrix-tree product over components."""
    rng = np.random.default_rng(4)
    position = np.concatenate([_cloud(rng, 40), _cloud(rng, 30) + 1000.0])
    lap = sparse_laplacian(neighbor_table(position, 3), 3)
    lam = np.linalg.eigvalsh(lap.toarray())
    nonzero = lam[lam > 1e-9]
    logdet, modes = log_pseudo_determinant(lap)
    assert modes == len(nonzero) <= 68  # at least the two groups' zero modes (a 3-nearest graph may split more)
    assert logdet == pytest.approx(float(np.sum(np.log(nonzero))), rel=1e-10)


def test_peak_search_finds_the_peak_and_reuses_points():
    calls = []

    def f(x):
        calls.append(x)
        return -((x - 17) ** 2)

    assert peak_of(f, 1, 40) == 17
    assert len(set(calls)) <= 12
    assert peak_of(lambda x: -abs(x - 1), 1, 40) == 1
    assert peak_of(lambda x: float(x), 1, 40) == 40
    assert peak_of(lambda x: 0.0, 3, 3) == 3


def test_a_large_frame_uses_the_peak_search_and_says_how_many_it_tried():
    rng = np.random.default_rng(5)
    position = _cloud(rng, 1200) * 2.0
    heading = np.array([1.0, 0.0, 0.0]) + 0.2 * rng.standard_normal((1200, 3))
    estimate = maxent_alignment([position], [heading], max_nc=40)
    assert estimate.search == "peak"
    assert 5 <= estimate.tried < 40
    assert np.isnan(estimate.log_likelihood).sum() == 40 - estimate.tried

"""ABC-SMC with pyabc on a Dask cluster: the simulations of a fit and the posterior they give.

pyabc (Klinger et al. 2018, Bioinformatics 34:3591) runs approximate Bayesian computation by
sequential Monte Carlo: generations of ``population`` particles, each a parameter vector whose
simulated statistics fell within the generation's tolerance of the observed ones, the tolerance
being the median distance of the previous generation. Distances are Euclidean over the statistics,
each scaled by its median absolute deviation in the current generation (pyabc's
``AdaptivePNormDistance``), so statistics of different units weigh alike. Every simulation is one
Dask task (``DaskDistributedSampler``); a task whose worker dies is run again by Dask on another
worker, and its result is delivered once.
"""

from __future__ import annotations

import hashlib
import logging
import math
import struct
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from flocksim.inference.priors import Prior
from flocksim.inference.statistics import RunPlan, finite_or, simulate_statistics

UNDEFINED_OFFSET = 1e3
"""A run whose statistic is undefined (NaN: e.g. no frame ordered enough for the shape) gets the
observed value plus this much times (1 + |observed|) instead: far outside the data, so the particle
is rejected, while the median-based scales stay finite."""

_THREADS_READ = False
"""Whether this worker process has made numba read its thread count (once, before the first run)."""


def simulation_seed(seed: int, values: tuple[float, ...]) -> int:
    """The seed of the run at ``values`` in a fit seeded ``seed``: a hash of both, so the same fit
    seed and parameter values give the same run on any worker, in any order."""
    digest = hashlib.sha256(struct.pack(f"<q{len(values)}d", seed, *values)).digest()
    return int.from_bytes(digest[:4], "little")


@dataclass
class SimulationModel:
    """What a Dask worker runs for one particle: pyabc's parameters (``p0``, ``p1``, ...) -> the
    statistics of one run (NaN replaced as :data:`UNDEFINED_OFFSET` says)."""

    plan: RunPlan
    keys: tuple[str, ...]
    seed: int
    observed: dict[str, float]

    def __call__(self, pars: Any) -> dict[str, float]:
        global _THREADS_READ
        if not _THREADS_READ:  # the worker's NUMBA_NUM_THREADS, as sweeps read it (flocksim.sweep.task)
            from flocksim.sweep.task import numba_threads_from_environment

            numba_threads_from_environment()
            _THREADS_READ = True
        values = tuple(float(pars[f"p{i}"]) for i in range(len(self.keys)))
        stats = simulate_statistics(
            self.plan, dict(zip(self.keys, values, strict=True)), simulation_seed(self.seed, values)
        )
        return {
            name: finite_or(stats[name], obs + UNDEFINED_OFFSET * (1.0 + abs(obs)))
            for name, obs in self.observed.items()
        }


@dataclass
class Posterior:
    """The last generation: ``samples`` (particles, parameters) and normalised ``weights``;
    ``distances`` of its particles; ``epsilons`` per generation; ``simulations`` run in all;
    ``generations``; ``acceptance`` rate per generation."""

    samples: np.ndarray
    weights: np.ndarray
    distances: np.ndarray
    epsilons: list[float]
    simulations: int
    generations: int
    acceptance: list[float]


def population_size(simulations: int) -> int:
    """Particles per generation for a budget of ``simulations`` runs: an eighth of it (at least 10),
    which leaves room for the calibration sample and three or four generations."""
    return max(10, simulations // 8)


def run_abc(
    model: SimulationModel,
    priors: list[Prior],
    observed: dict[str, float],
    simulations: int,
    client: Any,
    population: int | None = None,
) -> Posterior:
    """ABC-SMC until about ``simulations`` runs are spent (pyabc stops after the generation that
    crosses the budget), on the Dask ``client``."""
    import pyabc
    from pyabc.sampler import DaskDistributedSampler

    logging.getLogger("ABC").setLevel(logging.WARNING)
    for name in ("ABC.Sampler", "ABC.History", "ABC.Distance", "ABC.Epsilon", "ABC.Adaptation"):
        logging.getLogger(name).setLevel(logging.WARNING)
    prior = pyabc.Distribution(**{f"p{i}": pyabc.RV("uniform", p.low, p.high - p.low) for i, p in enumerate(priors)})
    distance = pyabc.AdaptivePNormDistance(p=2, scale_function=pyabc.distance.mad)
    sampler = DaskDistributedSampler(dask_client=client, batch_size=1)
    abc = pyabc.ABCSMC(
        model, prior, distance, population_size=population or population_size(simulations), sampler=sampler
    )
    with tempfile.TemporaryDirectory(prefix="flocksim-fit-") as tmp:
        abc.new(f"sqlite:///{Path(tmp) / 'abc.db'}", observed)
        history = abc.run(max_total_nr_simulations=simulations, minimum_epsilon=0.0)
        frame, weights = history.get_distribution(m=0, t=history.max_t)
        samples = frame[[f"p{i}" for i in range(len(priors))]].to_numpy(dtype=np.float64)
        distances = history.get_weighted_distances(t=history.max_t)["distance"].to_numpy(dtype=np.float64)
        populations = history.get_all_populations()
        populations = populations[populations["t"] >= 0]
        epsilons = [float(e) for e in populations["epsilon"]]
        counts = [int(s) for s in populations["samples"]]
        size = len(frame)
        result = Posterior(
            samples=samples,
            weights=np.asarray(weights, dtype=np.float64) / float(np.sum(weights)),
            distances=distances,
            epsilons=epsilons,
            simulations=int(history.total_nr_simulations),
            generations=history.max_t + 1,
            acceptance=[size / c if c else math.nan for c in counts],
        )
    return result


def weighted_quantile(values: np.ndarray, weights: np.ndarray, q: float) -> float:
    """The ``q`` quantile (0..1) of ``values`` with ``weights`` (interpolated weighted CDF)."""
    order = np.argsort(values)
    v, w = values[order], weights[order]
    cdf = np.cumsum(w) - 0.5 * w
    cdf /= np.sum(w)
    return float(np.interp(q, cdf, v))

"""ABC-SMC with pyabc on a Dask cluster: the simulations of a fit and the posterior they give.

pyabc (Klinger et al. 2018, Bioinformatics 34:3591) runs approximate Bayesian computation by
sequential Monte Carlo: generations of ``population`` particles, each a parameter vector whose
simulated statistics fell within the generation's tolerance of the observed ones, the tolerance
being the median distance of the previous generation. Distances are Euclidean over the statistics,
each scaled by its median absolute deviation in the current generation, so statistics of different
units are comparable, and by default weighted by how much each tells about the parameters (pyabc's
``InfoWeightedPNormDistance``; ``AdaptivePNormDistance`` for ``distance="mad"``:
:func:`make_distance`). Every simulation is one Dask task (:class:`SeededDaskSampler`, pyabc's
``DaskDistributedSampler`` with seeded jobs); a task whose worker dies is run again by Dask on
another worker, and its result is delivered once.

Reproducibility: pyabc draws each particle's parameters on the worker from NumPy's global random
state, which its own sampler reseeds from the operating system in every job. The sampler here
seeds every job instead from the fit's seed, the number of the sampling round (calibration,
generation 0, 1, ...) and the job's number in the round (:func:`job_seed`), keeps the jobs up to
the round's last accepted particle in job order (as pyabc does) and counts exactly those as the
round's simulations, so the posterior of a fit depends on its seed, not on the number of workers
or the order in which they finish.

The last generation: the generation that reaches the budget goes on past its ``population``
particles until they are worth ``final_effective`` effective particles (:func:`_enough_jobs`; 100 in
a fit by default), so that its weighted 2.5 % and 97.5 % quantiles rest on enough particles for a
95 % interval, while the generations before it stay small (an eighth of the budget).
"""

from __future__ import annotations

import hashlib
import logging
import math
import random
import struct
import tempfile
import time
from collections.abc import Callable
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


def job_seed(seed: int, round_: int, job: int) -> np.ndarray:
    """The state (4 uint32 words) that seeds NumPy's and Python's global random generators for job
    ``job`` of sampling round ``round_`` of a fit seeded ``seed`` (a ``SeedSequence`` of the three,
    so jobs draw independent streams)."""
    return np.random.SeedSequence([seed, round_, job]).generate_state(4)


def _seeded_jobs(simulate_one_pickle: bytes, seed: int, round_: int, jobs: list[int]) -> list[tuple[Any, bool, int]]:
    """What a Dask worker runs: pyabc's ``simulate_one`` once per job number, the global random
    generators seeded by :func:`job_seed` before each; (result, accepted, job) per job."""
    import cloudpickle

    simulate_one = cloudpickle.loads(simulate_one_pickle)
    out = []
    for job in jobs:
        state = job_seed(seed, round_, job)
        np.random.seed(state)
        random.seed(int.from_bytes(state.tobytes(), "little"))
        result = simulate_one()
        out.append((result, bool(result.accepted), job))
    return out


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
    ``distances`` of its particles; ``epsilons`` per generation; ``simulations`` used (each sampling
    round's jobs up to its last accepted particle); ``generations``; ``acceptance`` rate per
    generation."""

    samples: np.ndarray
    weights: np.ndarray
    distances: np.ndarray
    epsilons: list[float]
    simulations: int
    generations: int
    acceptance: list[float]
    first_generation: tuple[np.ndarray, np.ndarray, tuple[str, ...]] | None = None
    """(parameters (particles, keys), statistics (particles, names), names) of the first
    generation's particles: the runs that :func:`flocksim.inference.result.sensitivity` reads."""


def _seeded_sampler_class() -> type:
    """:class:`SeededDaskSampler`, made on first use (pyabc is an optional dependency)."""
    from pyabc.sampler import DaskDistributedSampler

    class SeededDaskSampler(DaskDistributedSampler):
        """pyabc's Dask sampler with every job seeded by :func:`job_seed` (one simulation per job):
        a round keeps the jobs numbered up to its ``n``-th accepted one, whatever the workers."""

        def __init__(
            self,
            dask_client: Any,
            seed: int,
            report: Callable[[str], None] | None = None,
            budget: int = 0,
            final_effective: int = 0,
        ) -> None:
            super().__init__(dask_client=dask_client, batch_size=1)
            self.seed = seed
            self.rounds = 0
            self.report, self.budget, self.spent = report, budget, 0
            self.final_effective = final_effective
            self.started = time.monotonic()

        def sample_round(self, n: int, simulate_one: Any, t: int, **kwargs: Any) -> Any:
            """pyabc's ``sample_until_n_accepted``: the first jobs, in job order, up to and including the
            ``n``-th accepted one; in the generation that reaches the budget, on until the accepted
            particles are worth ``final_effective`` effective particles (:func:`_enough_jobs`); with
            ``report``, one line when the round is done."""
            import cloudpickle

            round_, self.rounds = self.rounds, self.rounds + 1
            pickled = cloudpickle.dumps(simulate_one)
            rule = _enough_jobs(n, self.budget - self.spent if t >= 0 else None, self.final_effective)
            results = _run_round(self.client, pickled, self.seed, round_, rule, self.client_cores)
            sample = self._create_empty_sample()
            for result, _, _ in results:
                sample.append(result)
            self.nr_evaluations_ = len(results)
            self.spent += len(results)
            if self.report is not None:
                accepted = sum(ok for _, ok, _ in results)
                line = round_line(t, accepted, len(results), self.spent, self.budget, time.monotonic() - self.started)
                self.report(line)
            if sample.n_accepted < n:
                raise AssertionError(f"Expected at least {n} but got {sample.n_accepted} acceptances.")
            return sample

    # pyabc's metaclass wraps sample_until_n_accepted in a check that a round accepts exactly n; the
    # generation that reaches the budget accepts more on purpose (_enough_jobs), so the method is set
    # again unwrapped, checking at least n instead (its particles are all evaluated: one job each).
    SeededDaskSampler.sample_until_n_accepted = SeededDaskSampler.sample_round
    return SeededDaskSampler


def round_line(t: int, accepted: int, simulations: int, spent: int, budget: int, seconds: float) -> str:
    """The line a fit prints when a sampling round ends: ``t`` -1 is the calibration sample from the
    priors (every run kept), 0, 1, ... the generations."""
    what = f"calibration: {simulations} simulations from the priors" if t < 0 else (
        f"generation {t}: {accepted} accepted of {simulations} simulations"
    )  # fmt: skip
    return f"fit: {what}; {spent} of about {budget} spent, {seconds:.0f} s"


EFFECTIVE_SPARE = 1e-6
"""How far above ``final_effective`` the last generation's effective particles must come: the fit's
result recomputes them from pyabc's normalised weights, which may round 100 equal weights to 99.999..."""

FINAL_MAX_FACTOR = 4
"""The last generation stops at this many times ``final_effective`` accepted particles even if they
are worth fewer effective ones (weights so uneven leave the fit's warning to say so)."""


def kish(weights: Any) -> float:
    """Kish's effective sample size of ``weights`` (>= 0, not all 0): (sum w)^2 / sum w^2 (n for n
    equal weights, 1 for all the weight on one)."""
    w = np.asarray(weights, dtype=np.float64)
    return float(np.sum(w) ** 2 / np.sum(w * w))


def _nth_accepted(done: dict[int, tuple[Any, bool, int]], n: int) -> int | None:
    """The job number of the ``n``-th accepted result among the finished jobs ``done`` (by job number),
    if that many are accepted."""
    accepted = sorted(job for job, (_, ok, _) in done.items() if ok)
    return accepted[n - 1] if len(accepted) >= n else None


def _enough_jobs(
    n: int, left: int | None, final_effective: int
) -> Callable[[dict[int, tuple[Any, bool, int]]], int | None]:
    """The stopping rule of a sampling round: the job number its jobs run up to, from the finished
    jobs ``done`` (by job number), or None while it cannot tell yet.

    A round ends at its ``n``-th accepted job, unless it is the generation that reaches the budget
    (``left``: simulations left before it; None for the calibration sample, which never is) and
    ``final_effective`` is above 0: then it ends at the first job, from that one on, at which the
    accepted particles so far are worth ``final_effective`` effective particles (:func:`kish` of
    their importance weights, summed as they come, plus :data:`EFFECTIVE_SPARE`), or are
    :data:`FINAL_MAX_FACTOR` times as many. Every job up to the one returned must have finished: the
    answer depends on job numbers only, not on which worker finished first."""

    def rule(done: dict[int, tuple[Any, bool, int]]) -> int | None:
        last = _nth_accepted(done, n)
        if last is None or final_effective <= 0 or left is None or last + 1 < left:
            return last
        count, total, squares = 0, 0.0, 0.0  # accepted so far, sum and sum of squares of their weights
        job = -1
        while True:
            job += 1
            if job not in done:
                return None
            result, ok, _ = done[job]
            if ok:
                w = float(result.weight)
                count, total, squares = count + 1, total + w, squares + w * w
            if job < last:
                continue
            enough = squares > 0.0 and total * total / squares >= final_effective + EFFECTIVE_SPARE
            if enough or count >= FINAL_MAX_FACTOR * final_effective:
                return job

    return rule


def _run_round(
    client: Any,
    pickled: bytes,
    seed: int,
    round_: int,
    rule: Callable[[dict[int, tuple[Any, bool, int]]], int | None],
    cores: Callable[[], int],
) -> list[tuple[Any, bool, int]]:
    """Submit jobs 0, 1, 2, ... (as many at once as the cluster has cores) until ``rule`` names the
    round's last job (:func:`_enough_jobs`) and the jobs up to it have all finished; cancel the later
    ones. The results of jobs 0 to that one, in job order: the same for any number of workers, since
    each job's result depends on its number only."""
    running: dict[int, Any] = {}
    done: dict[int, tuple[Any, bool, int]] = {}
    next_job = 0
    while True:
        for job, future in list(running.items()):
            if future.done():
                done[job] = future.result()[0]
                del running[job]
        last = rule(done)
        if last is not None:
            for job in [j for j in running if j > last]:
                running.pop(job).cancel()
            if not running:
                return [done[j] for j in range(last + 1)]
        else:
            for _ in range(max(1, int(cores())) - len(running)):
                running[next_job] = client.submit(_seeded_jobs, pickled, seed, round_, [next_job], pure=False)
                next_job += 1
        time.sleep(0.01)


def population_size(simulations: int) -> int:
    """Particles per generation for a budget of ``simulations`` runs: an eighth of it (at least 10),
    which leaves room for the calibration sample and three or four generations."""
    return max(10, simulations // 8)


INFO_FIT_GENERATIONS: Any = np.inf
"""Generations whose runs the informative distance's regression is fitted to (pyabc ``EventIxs``
``ts``): every one. Fitted once, to the prior's calibration sample only, it gave the starlings'
alignment weight [0.60, 2.84] (benchmarks/bench_fit.py starlings --seed 4), no narrower than the
MAD-scaled distance's [0.78, 2.87]; refitted every generation, [0.60, 1.55]."""

DISTANCES = ("informative", "mad")
"""The distances a fit can use (:func:`make_distance`); the first is the default."""

DISTANCE_METRICS = {
    "informative": "Euclidean over the statistics, each scaled by its median absolute deviation and weighted by "
    "its information about the parameters (pyabc InfoWeightedPNormDistance, LinearPredictor)",
    "mad": "Euclidean over the statistics, each scaled by its median absolute deviation",
}
"""What each of :data:`DISTANCES` is, in words (fit.json's ``distances.metric``)."""


def make_distance(name: str) -> Any:
    """pyabc's distance for ``name`` (one of :data:`DISTANCES`).

    ``"mad"``: Euclidean over the statistics, each scaled by its median absolute deviation (MAD) in
    the current generation (``AdaptivePNormDistance``): every statistic weighs alike.
    ``"informative"``: the same, times an information weight per statistic
    (``InfoWeightedPNormDistance``; the regression of Fearnhead and Prangle 2012, J. R. Stat. Soc.
    B 74:419, used to weight the distance): a linear regression of the parameters on the MAD-scaled
    statistics of every run of the generation (accepted and rejected; the prior's calibration
    sample first), and each statistic's weight the absolute sensitivity of the predicted parameters
    to it at the observed statistics (normalised per parameter), refitted every generation
    (:data:`INFO_FIT_GENERATIONS`). A statistic that does not move with the parameters gets a small
    weight, one that does a large one. Deterministic: the regression has no random state.
    """
    import pyabc

    if name == "mad":
        return pyabc.AdaptivePNormDistance(p=2, scale_function=pyabc.distance.mad)
    if name == "informative":
        from pyabc.predictor import LinearPredictor

        return pyabc.distance.InfoWeightedPNormDistance(
            predictor=LinearPredictor(),
            p=2,
            scale_function=pyabc.distance.mad,
            fit_info_ixs=INFO_FIT_GENERATIONS,
            feature_normalization="mad",
        )
    raise ValueError(f"distance: {name!r}; allowed: {', '.join(DISTANCES)}")


def run_abc(
    model: SimulationModel,
    priors: list[Prior],
    observed: dict[str, float],
    simulations: int,
    client: Any,
    population: int | None = None,
    distance: str = DISTANCES[0],
    report: Callable[[str], None] | None = None,
    final_effective: int = 0,
) -> Posterior:
    """ABC-SMC until about ``simulations`` runs are spent (pyabc stops after the generation that
    crosses the budget), on the Dask ``client``, with the distance :func:`make_distance` ``(distance)``.
    With ``final_effective`` above 0, that last generation goes on past its ``population`` particles
    until they are worth ``final_effective`` effective particles (:func:`_enough_jobs`), so that its
    weighted quantiles rest on that many. ``report`` gets one line per sampling round
    (:func:`round_line`)."""
    import pyabc

    logging.getLogger("ABC").setLevel(logging.WARNING)
    for name in ("ABC.Sampler", "ABC.History", "ABC.Distance", "ABC.Epsilon", "ABC.Adaptation", "ABC.Predictor"):
        logging.getLogger(name).setLevel(logging.WARNING)
    prior = pyabc.Distribution(**{f"p{i}": pyabc.RV("uniform", p.low, p.high - p.low) for i, p in enumerate(priors)})
    sampler = _seeded_sampler_class()(client, model.seed, report, simulations, final_effective)
    abc = pyabc.ABCSMC(
        model,
        prior,
        make_distance(distance),
        population_size=population or population_size(simulations),
        sampler=sampler,
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
        sizes = [int(p) for p in populations["particles"]]
        first = history.get_population(t=0).get_particles_by_model()[0]
        names = tuple(observed)
        result = Posterior(
            samples=samples,
            weights=np.asarray(weights, dtype=np.float64) / float(np.sum(weights)),
            distances=distances,
            epsilons=epsilons,
            simulations=int(history.total_nr_simulations),
            generations=history.max_t + 1,
            acceptance=[size / c if c else math.nan for size, c in zip(sizes, counts, strict=True)],
            first_generation=(
                np.array([[p.parameter[f"p{i}"] for i in range(len(priors))] for p in first], dtype=np.float64),
                np.array([[p.sum_stat[name] for name in names] for p in first], dtype=np.float64),
                names,
            ),
        )
    return result


def weighted_quantile(values: np.ndarray, weights: np.ndarray, q: float) -> float:
    """The ``q`` quantile (0..1) of ``values`` with ``weights`` (>= 0, not all 0): the weighted CDF
    interpolated between the particles' midpoints, each particle sitting at the middle of its own
    weight (the particle at cumulative weight ``c`` before it and weight ``w``: at ``(c + w/2) / sum``).
    Equal weights give numpy's ``quantile(..., method="hazen")``; a ``q`` below the first midpoint
    (above the last) gives the smallest (largest) value. Particles of zero weight are left out, so
    all the weight on one particle gives that particle for every ``q``."""
    values = np.asarray(values, dtype=np.float64)
    weights = np.asarray(weights, dtype=np.float64)
    if values.shape != weights.shape or values.ndim != 1 or not np.all(weights >= 0) or not np.sum(weights) > 0:
        raise ValueError("weighted_quantile: one weight >= 0 per value, not all 0")
    if not 0.0 <= q <= 1.0:
        raise ValueError(f"weighted_quantile: q = {q!r}; allowed: 0 to 1")
    kept = weights > 0
    order = np.argsort(values[kept], kind="stable")
    v, w = values[kept][order], weights[kept][order]
    cdf = (np.cumsum(w) - 0.5 * w) / np.sum(w)
    return float(np.interp(q, cdf, v))

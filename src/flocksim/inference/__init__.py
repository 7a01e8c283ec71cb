"""``flocksim fit`` and :func:`flocksim.fit`: which parameters of a model explain these tracks,
and how sure we are (docs/fitting.md).

The tracks are read by :func:`flocksim.io.open_tracks` (in the periodic box of ``box``, or else the
preset's, if it has one) and summarised by the analyses of ``flocksim analyze``
(:mod:`flocksim.inference.statistics`); simulated runs at parameters drawn from the priors are
summarised the same way, and pyabc's ABC-SMC keeps the parameters whose runs look like the tracks
(:mod:`flocksim.inference.smc`), one Dask task per simulation. :mod:`flocksim.inference.maxent`
gives a fast point estimate of topological alignment from the headings alone. Needs the fit
extra: ``pip install 'flocksim[fit]'``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from flocksim.inference.priors import FitError, Prior, parse_priors
from flocksim.inference.result import MIN_INTERVAL_PARTICLES, FitResult, plot_fit
from flocksim.inference.stability import MAX_REPLICATES
from flocksim.inference.statistics import STATISTICS, default_statistics

DEFAULT_SIMULATIONS = 200
MAX_SIMULATIONS = 1_000_000
FINAL_EFFECTIVE = MIN_INTERVAL_PARTICLES
"""Effective particles the last generation is drawn until (``final_effective``): as many as a 95 %
interval needs (:data:`flocksim.inference.result.MIN_INTERVAL_PARTICLES`), whatever the budget. 0
gives the last generation as many particles as the others (before 8 December 2026: 25 at the
default budget, and every default fit warned)."""
MAX_FINAL_EFFECTIVE = 10_000
BURN_IN_DURATIONS = 4
BURN_IN_MIN_STEPS = 500
"""Default burn-in of every run: :data:`BURN_IN_DURATIONS` times the tracks' duration, and at least
this many model steps, run and discarded before the first frame, so that a run started from the
preset's initial conditions is compared in its steady state (a short recording would otherwise be
compared with runs that have not settled: a flock of 64 Vicsek particles is still ordering after
100 steps)."""

VARIANTS: dict[str, dict[str, dict[str, str]]] = {
    "vicsek": {
        "vicsek.update": {
            "paper": "a particle moves by its heading before the step's alignment (Vicsek et al. 1995)",
            "forward": "a particle moves by its new heading (Gregoire and Chate 2004)",
        }
    }
}
"""Per model, the parameters that choose a variant of its update rule, and what each value means: a
fit takes them from the preset (or ``--set``), never fits them, and says which it assumed
(``provenance.assumed``): tracks made with another variant fit with a bias (docs/fitting.md)."""


__all__ = [
    "DEFAULT_SIMULATIONS",
    "FINAL_EFFECTIVE",
    "STATISTICS",
    "FitError",
    "FitResult",
    "Prior",
    "default_statistics",
    "describe_assumed",
    "fit",
    "plot_fit",
]


def _file_hash(path: Path) -> str:
    """sha256 of a file, or of a directory's files (a run store) in sorted order."""
    digest = hashlib.sha256()
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    for f in files:
        if f is not path:
            digest.update(str(f.relative_to(path)).encode())
        with open(f, "rb") as handle:
            for chunk in iter(lambda h=handle: h.read(1 << 20), b""):
                digest.update(chunk)
    return digest.hexdigest()


def _params(params: Any) -> Any:
    from flocksim.config import AnyParams, validate
    from flocksim.scenarios import load_preset

    if isinstance(params, str):
        return load_preset(params)
    if isinstance(params, Mapping):
        return validate(dict(params))
    if isinstance(params, AnyParams):
        return params
    raise FitError(f"params: expected a preset name, a mapping or parameters, got {type(params).__name__}")


def _in_box(params: Any, box: str) -> Any:
    """``params`` in the periodic box ``box`` ("L" or "Lx,Ly[,Lz]" [units], as ``flocksim analyze
    --box`` reads it): the box the tracks wrap in is the one the runs are made in."""
    from flocksim.config import ConfigError, to_dict, validate
    from flocksim.io.unwrap import WrapError, box_sizes

    try:
        sides = box_sizes(box, params.world.dim)
    except WrapError as exc:
        raise FitError(str(exc)) from None
    data = to_dict(params)
    data["world"]["bounds"].update(kind="periodic", size=[float(v) for v in sides])
    try:
        return validate(data)
    except ConfigError as exc:
        raise FitError(f"--box: {box!r}: {exc}") from None


def _check_run_box(path: Path, box: tuple[float, ...]) -> None:
    """FitError when ``path`` is a flocksim run whose periodic box is not the box the fit's runs are
    made in (``box``; () for bounds that are not periodic): ``--box`` with the run's own fixes it."""
    import numpy as np

    from flocksim.io.tracks import run_box, track_kind

    if track_kind(path) != "flocksim run":
        return
    own = run_box(path)
    if own is None or (len(own) == len(box) and np.allclose(own, box, rtol=1e-9, atol=0.0)):
        return
    sides = ",".join(f"{v:.15g}" for v in own)
    fits = f"in the box {','.join(f'{v:.15g}' for v in box)}" if box else "without a periodic box"
    raise FitError(f"--box: {path} is a run in the periodic box {sides}, the fit's runs {fits}; allowed: --box {sides}")


def assumed_variants(params: Any) -> dict[str, str]:
    """{dotted key: value} of the :data:`VARIANTS` of ``params``' model: the update rule a fit assumes."""
    from flocksim.config import to_dict

    data = to_dict(params)
    assumed = {}
    for key in VARIANTS.get(params.model, {}):
        value: Any = data
        for part in key.split("."):
            value = value[part]
        assumed[key] = str(value)
    return assumed


def describe_assumed(assumed: Mapping[str, str]) -> list[str]:
    """One line per assumed variant: its value, what it means, and how to fit with another."""
    lines = []
    for key, value in assumed.items():
        meanings = next((v[key] for v in VARIANTS.values() if key in v), {})
        others = [other for other in meanings if other != value]
        line = f"assumed {key} = {value}"
        if value in meanings:
            line += f": {meanings[value]}"
        if others:
            line += f"; tracks made otherwise: --set {key}={'|'.join(others)}"
        lines.append(line)
    return lines


def _priors(priors: Any, params: Any) -> list[Prior]:
    if isinstance(priors, Mapping):
        texts = [k if v is None else f"{k}={float(v[0])!r}:{float(v[1])!r}" for k, v in priors.items()]
    elif isinstance(priors, str):
        texts = [priors]
    else:
        texts = list(priors)
    return parse_priors(texts, params)


def fit(
    tracks: str | Path,
    params: Any,
    priors: Mapping[str, tuple[float, float] | None] | Sequence[str],
    *,
    simulations: int = DEFAULT_SIMULATIONS,
    population: int | None = None,
    client: Any = None,
    scheduler: str | None = None,
    workers: int | None = None,
    seed: int = 0,
    fps: float | None = None,
    velocity: str | None = None,
    burn_in: float | None = None,
    statistics: Sequence[str] | None = None,
    distance: str = "informative",
    box: str | None = None,
    console: Any = None,
    replicates: int = 1,
    final_effective: int = FINAL_EFFECTIVE,
) -> FitResult:
    """Fit the ``priors``' parameters of ``params`` to ``tracks``.

    ``tracks``: a CSV, movement dataset or run store (as ``flocksim analyze`` reads). ``params``: a
    preset name, a mapping or parameters (the fixed values, and the model). ``priors``: {dotted key:
    (low, high) or None for the schema's range} or texts ``KEY=LO:HI``. ``simulations``: the budget
    of runs (pyabc finishes the generation that crosses it). ``client`` (a distributed.Client) wins
    over ``scheduler`` (an address), which wins over a local cluster of ``workers`` processes.
    ``seed``: seeds every run (from itself and the run's parameter values). ``fps``: frame rate
    [1/s] of tracks without times; ``velocity``: the tracks' velocity estimator; ``burn_in``: model
    time [s] run before the first frame (default: :data:`BURN_IN_DURATIONS` times the tracks'
    duration, at least :data:`BURN_IN_MIN_STEPS` steps). ``statistics``: summary keys to compare (default:
    :func:`flocksim.inference.statistics.default_statistics`). ``distance``: ``"informative"`` (each
    statistic weighted by how much it tells about the parameters, from a regression of the
    parameters on the statistics) or ``"mad"`` (every statistic alike, scaled by its median absolute
    deviation): :func:`flocksim.inference.smc.make_distance`. ``box``: the periodic box the tracks
    wrap in, "L" or "Lx,Ly[,Lz]" [units]; the runs are made in it too (``world.bounds``: periodic,
    that size), in place of the preset's bounds (default: the preset's periodic box, if any). Bad
    input raises :class:`FitError` or :class:`flocksim.io.tracks.TracksError` before any simulation
    runs. ``console`` (a rich Console): one line as the fit starts and one per sampling round
    (calibration, each generation), whether or not it is a terminal. ``provenance.assumed`` names
    the model's update variant taken from ``params`` (:data:`VARIANTS`). ``replicates``: fit the
    tracks this many times (1 to :data:`flocksim.inference.stability.MAX_REPLICATES`), with seeds
    ``seed``, ``seed + 1``, ...; the result is the first fit's, and :meth:`FitResult.stability` says
    whether the others agree with it (each spends ``simulations``). ``final_effective``: the generation
    that reaches the budget goes on past its particles until they are worth this many effective
    particles (0: it stops at as many as the others), :data:`FINAL_EFFECTIVE` by default, so that
    its 95 % intervals rest on enough of them; it adds about that many particles' simulations to
    the budget (docs/fitting.md).
    """
    from flocksim._extras import require

    require("fit", "flocksim.fit")
    import numpy as np

    from flocksim._version import __version__
    from flocksim.config import to_dict
    from flocksim.inference.result import finite, summarize_posterior
    from flocksim.inference.smc import DISTANCE_METRICS, DISTANCES, SimulationModel, population_size, run_abc
    from flocksim.inference.statistics import RunPlan, check_tracks, statistics_of, steps_per_frame
    from flocksim.io.tracks import open_tracks
    from flocksim.sweep.cluster import local_workers
    from flocksim.sweep.runner import dask_client

    params = _params(params)
    if box is not None:
        params = _in_box(params, box)
    priors = _priors(priors, params)
    if isinstance(simulations, bool) or not isinstance(simulations, int) or not 20 <= simulations <= MAX_SIMULATIONS:
        raise FitError(f"--simulations: {simulations!r}; allowed: a whole number from 20 to {MAX_SIMULATIONS}")
    if population is not None and not (isinstance(population, int) and 5 <= population <= simulations):
        raise FitError(f"population: {population!r}; allowed: a whole number from 5 to the simulations")
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63:
        raise FitError(f"--seed: {seed!r}; allowed: a whole number >= 0")
    if isinstance(replicates, bool) or not isinstance(replicates, int) or not 1 <= replicates <= MAX_REPLICATES:
        raise FitError(f"--replicates: {replicates!r}; allowed: a whole number from 1 to {MAX_REPLICATES}")
    if seed + replicates > 2**63:
        raise FitError(f"--seed: {seed!r}; allowed: a whole number >= 0 and below 2^63 - replicates")
    if (
        isinstance(final_effective, bool)
        or not isinstance(final_effective, int)
        or not 0 <= final_effective <= MAX_FINAL_EFFECTIVE
    ):
        raise FitError(
            f"--final-effective: {final_effective!r}; allowed: a whole number from 0 to {MAX_FINAL_EFFECTIVE}"
        )
    if distance not in DISTANCES:
        raise FitError(f"--distance: {distance!r}; allowed: {', '.join(DISTANCES)}")
    if client is None and scheduler is None:
        local_workers(workers)  # more workers than the cores or the memory allow: refused before any work
    bounds = params.world.bounds
    if statistics is None:
        statistics = default_statistics(bounds.kind == "periodic")
    unknown = [s for s in statistics if s not in STATISTICS]
    if unknown or not statistics or len(set(statistics)) != len(statistics):
        raise FitError(
            f"--statistic: {unknown or list(statistics)}; allowed: one or more of {', '.join(STATISTICS)}, each once"
        )
    if burn_in is not None and not (isinstance(burn_in, int | float) and 0 <= burn_in < 1e9):
        raise FitError(f"--burn-in: {burn_in!r}; allowed: a time >= 0 [s]")
    box_sides = tuple(float(v) for v in bounds.size) if bounds.kind == "periodic" else ()
    path = Path(tracks)
    _check_run_box(path, box_sides)
    ds = open_tracks(path, fps=fps, velocity=velocity, box=",".join(f"{v!r}" for v in box_sides) if box_sides else None)
    if ds.attrs["time_unit"] != "s":
        raise FitError(f"--fps: {path} counts frames, not seconds; allowed: --fps F, the tracks' frame rate [1/s]")
    dim = ds.sizes["space"]
    if dim != params.world.dim:
        raise FitError(
            f"world.dim: the tracks are {dim}D and the {params.model} parameters {params.world.dim}D; "
            f"allowed: --set world.dim={dim}"
        )
    present = ds["present"].values
    check_tracks(present, str(path))
    time = ds["time"].values
    k = steps_per_frame(float(ds.attrs["dt"]), params.world.dt)
    duration = (len(time) - 1) * k
    burn_in_steps = (
        max(BURN_IN_DURATIONS * duration, BURN_IN_MIN_STEPS) if burn_in is None else round(burn_in / params.world.dt)
    )
    base = to_dict(params)
    base["agents"]["n"] = int(ds.sizes["agent"])
    plan = RunPlan(
        base=base,
        time=time,
        steps_per_frame=k,
        burn_in_steps=burn_in_steps,
        present=present,
        velocity=ds.attrs["velocity_estimator"],
        box=box_sides,
        statistics=tuple(statistics),
    )
    position, vel = ds["position"].values, ds["velocity"].values
    measured = statistics_of(time, position, vel, present, box_sides, plan.statistics, plan.correlation_frames)
    observed = {k_: v for k_, v in measured.items() if np.isfinite(v)}
    if not observed:
        raise FitError(f"{path}: none of the statistics {', '.join(statistics)} is defined for these tracks")
    seeds = [seed + r for r in range(replicates)]
    models = [SimulationModel(plan, tuple(p.key for p in priors), s, observed) for s in seeds]

    def report(line: str) -> None:
        if console is not None:
            console.print(line, markup=False, highlight=False, soft_wrap=True)

    def sample(on: Any) -> list[Any]:
        report(
            f"fit: {int(ds.sizes['agent'])} birds, {len(time)} frames, {burn_in_steps} burn-in steps per run; "
            f"{population or population_size(simulations)} particles per generation"
            + (f", the last until {final_effective} effective" if final_effective else "")
            + f", about {simulations} simulations"
            + (f" per replicate, {replicates} replicates (seeds {seeds[0]} to {seeds[-1]})" if replicates > 1 else "")
        )
        found = []
        for r, model in enumerate(models):
            if replicates > 1:
                report(f"fit: replicate {r + 1} of {replicates} (seed {model.seed})")
            found.append(
                run_abc(model, priors, observed, simulations, on, population, distance, report, final_effective)
            )
        return found

    if client is not None:
        posteriors = sample(client)
    else:
        with dask_client(scheduler, workers, 1, console) as own:
            posteriors = sample(own)
    posterior = posteriors[0]
    import pyabc

    return FitResult(
        parameters=summarize_posterior(posterior, priors),
        priors=priors,
        statistics={
            "observed": observed,
            "dropped": [name for name in statistics if name not in observed],
            "computed_by": "flocksim.metrics.series.analyze (as flocksim analyze)",
        },
        distances={
            "distance": distance,
            "metric": DISTANCE_METRICS[distance],
            "epsilon_per_generation": posterior.epsilons,
            "acceptance_per_generation": posterior.acceptance,
            "final": [finite(float(d)) for d in posterior.distances],
        },
        simulations=posterior.simulations,
        generations=posterior.generations,
        provenance={
            "flocksim_version": __version__,
            "pyabc_version": pyabc.__version__,
            "tracks": str(path),
            "tracks_sha256": _file_hash(path),
            "seed": seed,
            "replicates": replicates,
            "model": params.model,
            "parameters": base,
            "population": population or population_size(simulations),
            "final_effective": final_effective,
            "frames": len(time),
            "frame_interval_s": float(ds.attrs["dt"]),
            "steps_per_frame": k,
            "burn_in_steps": burn_in_steps,
            "agents": int(ds.sizes["agent"]),
            "box": list(box_sides),
            "velocity": plan.velocity,
            "assumed": assumed_variants(params),
        },
        posterior=posterior,
        replicates=[summarize_posterior(p, priors) for p in posteriors] if replicates > 1 else None,
        replicate_seeds=seeds if replicates > 1 else None,
    )

"""Running an experiment: its runs (conditions x seeds), in this process or in worker processes,
as tidy rows, and the rows as CSV."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed

from flocksim.config import apply_overrides
from flocksim.experiments.common import PRESETS, RunSpec
from flocksim.experiments.registry import EXPERIMENTS
from flocksim.scenarios import load_preset


def run_specs(name: str, seeds: list[int], quick: bool, overrides: tuple[str, ...] = ()) -> list[RunSpec]:
    experiment = EXPERIMENTS[name]
    return [RunSpec(name, c, seed, quick, overrides) for c in experiment.conditions for seed in seeds]


def check_experiment_overrides(name: str, overrides: tuple[str, ...]) -> None:
    """Raise ConfigError (naming the key) unless ``overrides`` apply to every condition's parameters."""
    for c in EXPERIMENTS[name].conditions:
        apply_overrides(load_preset(c.preset or PRESETS[c.dim]), [*c.overrides, *overrides])


def run_one(spec: RunSpec) -> list[dict[str, object]]:
    """Tidy rows of one run."""
    values = (spec.condition.measure or EXPERIMENTS[spec.experiment].measure)(spec)
    return [
        {
            "experiment": spec.experiment,
            "dim": spec.condition.dim,
            "condition": spec.condition.label,
            "seed": spec.seed,
            "metric": metric,
            "value": value,
        }
        for metric, value in values.items()
    ]


def _one_thread() -> None:
    import numba

    numba.set_num_threads(1)


def run_experiment(
    name: str,
    seeds: list[int],
    quick: bool = False,
    jobs: int = 1,
    on_done: Callable[[RunSpec], None] | None = None,
    overrides: tuple[str, ...] = (),
) -> list[dict[str, object]]:
    """All runs of an experiment (``overrides`` applied to every condition); ``jobs`` > 1 runs them in
    that many processes, each with one numba thread. Rows come back in (condition, seed) order whatever
    the completion order."""
    specs = run_specs(name, seeds, quick, overrides)
    results: dict[int, list[dict[str, object]]] = {}
    if jobs <= 1:
        for k, spec in enumerate(specs):
            results[k] = run_one(spec)
            if on_done:
                on_done(spec)
    else:
        with ProcessPoolExecutor(max_workers=jobs, initializer=_one_thread) as pool:
            futures = {pool.submit(run_one, spec): k for k, spec in enumerate(specs)}
            for future in as_completed(futures):
                k = futures[future]
                results[k] = future.result()
                if on_done:
                    on_done(specs[k])
    return [row for k in range(len(specs)) for row in results[k]]


CSV_COLUMNS = ("experiment", "dim", "condition", "seed", "metric", "value")


def write_csv(rows: list[dict[str, object]], handle) -> None:
    """Tidy rows as CSV (one line per run and metric)."""
    import csv

    writer = csv.DictWriter(handle, fieldnames=list(CSV_COLUMNS))
    writer.writeheader()
    for row in rows:
        writer.writerow({k: (repr(v) if isinstance(v, float) else v) for k, v in row.items()})

"""Every committed results file re-makes: one cheap slice of each file under docs/results/ (one condition,
one seed) is run again with the code under test and must give the numbers in the file, bit for bit.

A results file without a slice here fails ``test_every_results_file_has_a_slice``: a number that cannot
be re-made does not go into docs/.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from flocksim.experiments import EXPERIMENTS, RunSpec, run_one

RESULTS = Path(__file__).resolve().parent.parent / "docs" / "results"

EXPERIMENT_SLICES = {
    # file: (dim, condition, seed, the command's --set overrides), among the cheaper runs of each file
    "starlings/predator-multipliers.csv": (2, "none (1, 1, 1)", 0, ()),
    "starlings/predator-flee-weight-3.csv": (3, "none (1, 1, 1)", 1, ("predator.flee_weight=3.0",)),
    "starlings/edge-deviation.csv": (2, "k=7 inertial-spin", 0, ()),
    "starlings/shape.csv": (3, "k=7 basic", 0, ()),
    "starlings/speed-fluctuation.csv": (2, "before the fix", 0, ()),
    "starlings/turn-propagation.csv": (3, "wave: underdamped", 0, ()),
    "starlings/spontaneous-turning.csv": (3, "without turns", 0, ()),
}


def committed_files() -> set[str]:
    return {p.relative_to(RESULTS).as_posix() for p in RESULTS.rglob("*.csv")}


def test_every_results_file_has_a_slice():
    assert committed_files() == set(EXPERIMENT_SLICES)


def read_rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(EXPERIMENT_SLICES))
def test_experiment_slice_is_remade_bitwise(name):
    dim, label, seed, overrides = EXPERIMENT_SLICES[name]
    rows = read_rows(RESULTS / name)
    experiment = EXPERIMENTS[rows[0]["experiment"]]
    (condition,) = [c for c in experiment.conditions if (c.dim, c.label) == (dim, label)]
    committed = {
        r["metric"]: r["value"] for r in rows if (int(r["dim"]), r["condition"], int(r["seed"])) == (dim, label, seed)
    }
    assert committed, f"{name} has no rows for {dim}D {label!r} seed {seed}"
    spec = RunSpec(experiment.name, condition, seed, False, overrides)
    remade = {r["metric"]: repr(r["value"]) for r in run_one(spec)}
    assert remade == committed

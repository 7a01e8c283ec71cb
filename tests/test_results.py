"""Every committed results file re-makes: one cheap slice of each file under docs/results/ (one condition,
one seed) is run again with the code under test and must give the numbers in the file, bit for bit.
The experiment files (starlings/) are re-made by ``flocksim experiment``'s own run function, the
validation reference curves (validation/) by ``flocksim validate --make-reference`` itself, cut down
to one point and one seed of the reference.

A results file without a slice here fails ``test_every_results_file_has_a_slice``: a number that cannot
be re-made does not go into docs/.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from flocksim.cli import app
from flocksim.validate import curves

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
    "starlings/murmuration-hallmarks.csv": (3, "500 birds", 0, ()),
    "starlings/murmuration-dynamics.csv": (3, "500 birds", 0, ()),
    "starlings/turn-waves.csv": (3, "underdamped", 0, ()),
    "starlings/agitation-waves.csv": (3, "copy 7, 50 ms, 1000 birds", 0, ()),
}


SWEEP_SLICES = {
    # file: the index of the task re-run (in the sweep's expansion), the sweep being the file's name
    "sweeps/starlings-alignment.parquet": 0,
    "sweeps/boids-separation.parquet": 5,
}


VALIDATION_SLICES = {
    # file: (--only check, protocol, the row's key columns); the protocol cut down to that one point and seed 0
    "validation/vicsek.csv": ("vicsek", "quick", {"eta": "4.0", "seed": "0"}),
    "validation/couzin.csv": ("couzin-reference", "quick", {"seed": "0", "ramp": "up", "delta_r_o": "0.0"}),
}


STUDY_SLICES = {
    # file: the seed whose first window (relax, then one window) is re-run on both sides
    "validation/vicsek-transition.csv": 0,
}


DETAIL_SLICES = {
    # file: (preset, condition, seed) of one run of benchmarks/detail_effect.py
    "detail/effect.csv": ("starlings-3d", "on-4", 0),
}


FIT_SLICES = {
    # file: (the regimes' fit budget, its --final-effective, the dataset re-fitted, the regimes re-fitted) of
    # ``python benchmarks/bench_fit.py regimes``: the test re-fits that dataset of those regimes (its tracks
    # made again by the regime's generator). The first file is of fits before the last generation was drawn
    # until 100 effective particles (--final-effective 0); the second of the default fit since.
    "fitting/calibration-regimes.csv": (40, 0, 0, ("couzin-parallel", "vicsek-ordered")),
    "fitting/calibration-default.csv": (200, 100, 0, ("vicsek-ordered",)),
}


def committed_files() -> set[str]:
    return {p.relative_to(RESULTS).as_posix() for pattern in ("*.csv", "*.parquet") for p in RESULTS.rglob(pattern)}


def test_every_results_file_has_a_slice():
    sliced = set(EXPERIMENT_SLICES) | set(SWEEP_SLICES) | set(VALIDATION_SLICES) | set(STUDY_SLICES)
    assert committed_files() == sliced | set(DETAIL_SLICES) | set(FIT_SLICES)


def read_rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


# The experiment files were made with OpenBLAS's Haswell kernels and NumPy's AVX2 (x86-64-v3) loops.
# OpenBLAS picks its kernels per CPU (SkylakeX on AVX-512 Intel, Zen on AMD, ...), and NumPy picks
# an AVX-512 (x86-64-v4) loop for arccos, arctan2, power, sin, exp, ... where the CPU has one; both
# round differently in the last digit, which a chaotic flock's run turns into different counts.
# Pinned, every x86-64 CPU with AVX2 and FMA re-makes them bit for bit. Both variables are read when the library
# loads, so the slice runs in a fresh process.
PINNED_BLAS = {"OPENBLAS_CORETYPE": "Haswell", "NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR"}

REMAKE_EXPERIMENT = """
import json, sys
from flocksim.experiments import EXPERIMENTS, RunSpec, run_one
name, dim, label, seed, overrides = json.loads(sys.argv[1])
experiment = EXPERIMENTS[name]
(condition,) = [c for c in experiment.conditions if (c.dim, c.label) == (dim, label)]
rows = run_one(RunSpec(experiment.name, condition, seed, False, tuple(overrides)))
print(json.dumps({r["metric"]: repr(r["value"]) for r in rows}))
"""


def _runs_haswell_kernels() -> bool:
    """Whether this CPU can run OpenBLAS's Haswell kernels (x86-64 with AVX2 and FMA)."""
    from numpy._core._multiarray_umath import __cpu_features__

    return bool(__cpu_features__.get("AVX2") and __cpu_features__.get("FMA3"))


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(EXPERIMENT_SLICES))
def test_experiment_slice_is_remade_bitwise(name):
    dim, label, seed, overrides = EXPERIMENT_SLICES[name]
    rows = read_rows(RESULTS / name)
    committed = {
        r["metric"]: r["value"] for r in rows if (int(r["dim"]), r["condition"], int(r["seed"])) == (dim, label, seed)
    }
    assert committed, f"{name} has no rows for {dim}D {label!r} seed {seed}"
    if not _runs_haswell_kernels():
        pytest.skip(f"{name}: made with OpenBLAS's Haswell kernels, which need a CPU with AVX2 and FMA")
    spec = json.dumps([rows[0]["experiment"], dim, label, seed, list(overrides)])
    done = subprocess.run(
        [sys.executable, "-c", REMAKE_EXPERIMENT, spec],
        env={**os.environ, **PINNED_BLAS},
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    remade = json.loads(done.stdout.strip().splitlines()[-1])
    assert remade == committed


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SWEEP_SLICES))
def test_sweep_slice_is_remade_bitwise(name):
    """One run of a shipped sweep (``flocksim sweep NAME -o docs/results/sweeps/NAME.parquet``) gives
    the summaries of its row in the committed results, bit for bit."""
    from flocksim.config import to_dict
    from flocksim.sweep import read_results
    from flocksim.sweep.expand import expand
    from flocksim.sweep.spec import load_sweep
    from flocksim.sweep.task import Job, run_task

    path = RESULTS / name
    sweep = load_sweep(path.stem)
    task = expand(sweep)[SWEEP_SLICES[name]]
    rows = [r for r in read_results(path).to_pylist() if r["task_id"] == task.task_id]
    assert len(rows) == 1 and rows[0]["status"] == "ok", f"{name} has no finished row for task {task.task_id}"
    job = Job(base=to_dict(sweep.base), steps=sweep.spec.steps, summaries=tuple(sweep.spec.summaries))
    remade = run_task(job, task)
    assert remade["status"] == "ok", remade["error"]
    for summary in sweep.spec.summaries:
        assert repr(remade[summary.column]) == repr(rows[0][summary.column]), summary.column


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(VALIDATION_SLICES))
def test_validation_slice_is_remade_bitwise(name, tmp_path, monkeypatch):
    """``flocksim validate --make-reference --only CHECK`` with its protocol cut to one point (the first
    noise value or delta_r_o of the row) and one reference seed writes that row again, every digit. The
    Couzin row is of the up ramp at the ramp's first value: nothing after it changes it."""
    check, protocol, key = VALIDATION_SLICES[name]
    committed = [r for r in read_rows(RESULTS / name) if r["protocol"] == protocol]
    (row,) = [r for r in committed if all(r[k] == v for k, v in key.items())]
    if check == "vicsek":
        p = curves.VICSEK[protocol]
        monkeypatch.setattr(curves, "VICSEK", {protocol: replace(p, etas=(float(key["eta"]),), reference_seeds=1)})
    else:
        p = curves.COUZIN[protocol]
        assert float(key["delta_r_o"]) == p.values[0] and key["ramp"] == "up"
        monkeypatch.setattr(curves, "COUZIN", {protocol: replace(p, values=p.values[:1], reference_seeds=1)})
    args = ["validate", "--make-reference", "--only", check, "--reference", str(tmp_path), "--jobs", "1"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    remade = read_rows(tmp_path / Path(name).name)
    assert row in remade, (row, remade)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(STUDY_SLICES))
def test_transition_study_slice_is_remade_bitwise(name):
    """``python -m flocksim.validate.transition``: the first window of one seed, flocksim's and the
    reference's, run again (relax, then that window only) gives the file's rows, every digit."""
    from flocksim.validate import transition

    rows = read_rows(RESULTS / name)
    seed = STUDY_SLICES[name]
    first = rows[0]
    p = transition.TransitionProtocol(
        int(first["n"]), float(first["eta"]), int(first["relax"]), int(first["window"]), 1, int(first["every"])
    )
    for side in transition.SIDES:
        committed = [r for r in rows if r["side"] == side and int(r["seed"]) == seed and r["index"] == "0"]
        remade = [
            {k: repr(v) if isinstance(v, float) else str(v) for k, v in r.items()}
            for r in transition.run_rows(p, side, seed)
        ]
        assert remade == committed, side


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(DETAIL_SLICES))
def test_detail_effect_slice_is_remade_bitwise(name):
    """``python benchmarks/detail_effect.py --only PRESET,CONDITION,SEED`` (the level of detail's
    effect on results) writes that run's rows of the committed file again, every digit."""
    preset, condition, seed = DETAIL_SLICES[name]
    rows = read_rows(RESULTS / name)
    committed = [r for r in rows if (r["preset"], r["condition"], r["seed"]) == (preset, condition, str(seed))]
    steps = sorted(int(r["step"]) for r in committed)
    assert len(steps) > 2, f"{name} has no rows for {preset} {condition} seed {seed}"
    script = Path(__file__).resolve().parent.parent / "benchmarks" / "detail_effect.py"
    only = f"{preset},{condition},{seed}"
    args = ["--only", only, "--steps", str(steps[-1]), "--every", str(steps[1] - steps[0])]
    done = subprocess.run(
        [sys.executable, str(script), *args], env={**os.environ, **PINNED_BLAS}, capture_output=True, text=True,
        timeout=900,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    remade = list(csv.DictReader(done.stdout.splitlines()))
    assert remade == committed


FIT_REGIMES = [(name, regime) for name, (*_, regimes) in FIT_SLICES.items() for regime in regimes]
"""The (file, regime) whose dataset the slices re-fit: of the 40-simulation table one per generator family of
the six (one to two minutes each on a busy 2-core machine, so not all six: the suite's time); of the default
fit's table (about 500 simulations, several minutes) one."""


@pytest.mark.slow
@pytest.mark.parametrize(("name", "regime"), FIT_REGIMES)
def test_fit_calibration_slice_is_refitted_bitwise(name, regime):
    """``python benchmarks/bench_fit.py regimes --only REGIME --first D --datasets 1``: the tracks of one
    dataset made again by the regime's independent generator and fitted again (seeded fits, one worker)
    give that row of the committed calibration table, every digit."""
    budget, final, dataset, _ = FIT_SLICES[name]
    committed = [r for r in read_rows(RESULTS / name) if (r["regime"], r["dataset"]) == (regime, str(dataset))]
    assert len(committed) == 1, f"{name} has no row for {regime} dataset {dataset}"
    if not _runs_haswell_kernels():
        pytest.skip(f"{name}: made with OpenBLAS's Haswell kernels, which need a CPU with AVX2 and FMA")
    script = Path(__file__).resolve().parent.parent / "benchmarks" / "bench_fit.py"
    args = ["regimes", "--only", regime, "--first", str(dataset), "--datasets", "1", "--workers", "1"]
    args += ["--simulations", str(budget), "--final-effective", str(final), "--csv", "-"]
    done = subprocess.run(
        [sys.executable, str(script), *args], env={**os.environ, **PINNED_BLAS, "NUMBA_NUM_THREADS": "1"},
        capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert list(csv.DictReader(done.stdout.splitlines())) == committed


def test_the_pinned_environment_keeps_numpy_on_its_avx2_loops():
    """Under the pinned environment no NumPy float64 loop runs its AVX-512 (x86-64-v4) version,
    whatever the CPU: the variable's feature names are ones this NumPy knows."""
    probe = (
        "import json; from numpy.lib.introspect import opt_func_info;"
        "print(json.dumps({f: s['current'] for f, sigs in opt_func_info().items()"
        " for t, s in sigs.items() if t in ('dd', 'ddd')}))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], env={**os.environ, **PINNED_BLAS}, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "not supported" not in done.stderr and "unknown" not in done.stderr.lower(), done.stderr
    current = json.loads(done.stdout)
    assert {"arccos", "arctan2", "sin", "exp"} <= set(current)
    assert not {f: v for f, v in current.items() if "V4" in v or "AVX512" in v}

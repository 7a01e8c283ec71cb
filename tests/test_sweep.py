"""flocksim sweep: sweep files, expansion, Dask execution on a 2-process LocalCluster, Parquet
results, resume, worker loss, and the parquet branch of flocksim plot."""

from __future__ import annotations

import logging
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from distributed import Client, LocalCluster
from typer.testing import CliRunner

from flocksim import Simulation, apply_overrides
from flocksim.cli import app
from flocksim.config import to_dict
from flocksim.sweep import SweepError, expand, load_sweep, parse_sweep, read_results, run_sweep, shipped_sweeps
from flocksim.sweep.expand import Task
from flocksim.sweep.spec import override_text
from flocksim.sweep.task import Job, run_task, worker_stats

CONSOLE_SCRIPT = Path(sys.executable).with_name("flocksim")
VOLATILE = {"wall_s", "compile_s", "worker"}  # the only columns that may differ between two runs

GRID = """
description = "test grid"
base = "boids-2d"
set = ["agents.n=40"]
seeds = 2
steps = 60

[[axes]]
key = "rules.alignment.weight"
values = [0, 0.5, 2]

[[axes]]
key = "rules.steering"
values = ["reynolds", "clamped-sum"]

[[summaries]]
metric = "polarization"
stat = "mean"
window = [0.2, 1.0]
every = 5

[[summaries]]
metric = "nnd_mean"
stat = "final"

[[summaries]]
metric = "polarization"
stat = "fraction-below"
threshold = 0.5
every = 20
"""


def slow_sweep(runs: int, tmp: Path, name: str = "slow") -> Path:
    """A grid of ``runs`` boids runs of about 0.6 s each on one core (5000 steps of 200 birds at ~0.12 ms),
    so a sweep of 16 on 2 workers lasts several journal flushes (1 s) and can be caught mid-way."""
    path = tmp / f"{name}.toml"
    values = ", ".join(f"{0.1 * i:.1f}" for i in range(runs))
    path.write_text(
        f"""base = "boids-2d"
set = ["agents.n=200"]
steps = 5000
[[axes]]
key = "rules.cohesion.weight"
values = [{values}]
[[summaries]]
metric = "polarization"
every = 10
""",
        encoding="utf-8",
    )
    return path


@pytest.fixture(scope="module")
def client():
    """One LocalCluster of 2 worker processes (1 thread each) for the whole module, warmed."""
    with (
        LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            silence_logs=logging.ERROR,
            env={"NUMBA_NUM_THREADS": "1"},
        ) as cluster,
        Client(cluster) as c,
    ):
        warm_sweep = parse_sweep(GRID.replace("steps = 60", "steps = 1").replace("window = [0.2, 1.0]", ""))
        job = Job(base=to_dict(warm_sweep.base), steps=1, summaries=tuple(warm_sweep.spec.summaries))
        warm = [
            c.submit(run_task, job, Task(0, "warm", (), 0), workers=[w], allow_other_workers=False, pure=False)
            for w in c.nthreads()
        ]
        assert all(f.result()["status"] == "ok" for f in warm)
        yield c


@pytest.fixture(scope="module")
def runner() -> CliRunner:
    return CliRunner()


def rows_of(path: Path) -> list[dict]:
    return read_results(path).to_pylist()


def stable(rows: list[dict]) -> list[dict]:
    return [{k: v for k, v in r.items() if k not in VOLATILE} for r in rows]


def same_rows(a: list[dict], b: list[dict]) -> bool:
    """Equal, with NaN equal to NaN."""
    norm = [
        [{k: ("nan" if isinstance(v, float) and math.isnan(v) else v) for k, v in r.items()} for r in x] for x in (a, b)
    ]
    return norm[0] == norm[1]


# --- sweep files and expansion (no cluster) -----------------------------------------------------------


def test_grid_expansion_order_and_ids():
    sweep = parse_sweep(GRID, name="g")
    tasks = expand(sweep)
    assert sweep.n_tasks == len(tasks) == 3 * 2 * 2
    assert [t.values for t in tasks[:4]] == [
        {"rules.alignment.weight": 0.0, "rules.steering": "reynolds"},
        {"rules.alignment.weight": 0.0, "rules.steering": "reynolds"},
        {"rules.alignment.weight": 0.0, "rules.steering": "clamped-sum"},
        {"rules.alignment.weight": 0.0, "rules.steering": "clamped-sum"},
    ]
    assert [t.seed for t in tasks[:4]] == [0, 1, 0, 1]
    assert len({t.task_id for t in tasks}) == len(tasks)
    assert [t.task_id for t in expand(parse_sweep(GRID))] == [t.task_id for t in tasks]


def test_ranges_log_ranges_integer_and_random_sampling():
    text = """base = "boids-2d"
steps = 10
[[axes]]
key = "rules.separation.weight"
log = {start = 0.1, stop = 10.0, num = 3}
[[axes]]
key = "agents.n"
range = {start = 10, stop = 20, num = 3}
integer = true
[[summaries]]
metric = "polarization"
"""
    grid = expand(parse_sweep(text))
    assert sorted({t.values["rules.separation.weight"] for t in grid}) == pytest.approx([0.1, 1.0, 10.0])
    assert sorted({t.values["agents.n"] for t in grid}) == [10, 15, 20]
    assert all(isinstance(t.values["agents.n"], int) for t in grid)
    random_text = text.replace(
        "steps = 10", 'steps = 10\nseeds = 2\n[sampling]\nkind = "random"\nsamples = 50\nseed = 3'
    )
    a, b = expand(parse_sweep(random_text)), expand(parse_sweep(random_text))
    assert len(a) == 100 and [t.task_id for t in a] == [t.task_id for t in b]
    weights = [t.values["rules.separation.weight"] for t in a]
    assert min(weights) >= 0.1 and max(weights) <= 10.0
    assert sum(w < 1.0 for w in weights) > 10  # log-uniform: about half below the geometric middle
    assert all(10 <= t.values["agents.n"] <= 20 for t in a)
    other = expand(parse_sweep(random_text.replace("seed = 3", "seed = 4")))
    assert [t.task_id for t in other] != [t.task_id for t in a]


def test_shipped_sweeps_load():
    names = shipped_sweeps()
    assert {"starlings-alignment", "boids-separation"} <= set(names)
    star = load_sweep("starlings-alignment")
    assert star.spec.base == "starlings-2d-reference"
    assert set(star.axis_keys) == {"rules.alignment.weight", "neighbors.mode"}
    assert "polarization_mean" in star.summary_columns
    sep = load_sweep("boids-separation")
    assert sep.spec.base == "boids-2d" and sep.axis_keys == ["rules.separation.weight"]
    assert "nnd_mean_mean" in sep.summary_columns


def test_list_shipped_sweeps(runner):
    result = runner.invoke(app, ["sweep", "--list"])
    assert result.exit_code == 0, result.output
    assert "starlings-alignment" in result.stdout and "boids-separation" in result.stdout


SUMMARY = "[[summaries]]\nmetric = 'polarization'\n"
HEAD = "base = 'boids-2d'\nsteps = 10\n"
AXIS = "[[axes]]\nkey = 'rules.alignment.weight'\n"
BAD = [
    (HEAD + "colour = 'red'\n" + SUMMARY, ["colour", "unknown key", "allowed keys here", "axes"]),
    (HEAD + AXIS + "values = []\n" + SUMMARY, ["axes[0].values", "empty axis"]),
    (
        HEAD + AXIS + "range = {start = 0, stop = 1, num = 0}\n" + SUMMARY,
        ["axes[0].range.num", "greater than or equal to 1"],
    ),
    (HEAD + AXIS + "values = [1]\nstep = 2\n" + SUMMARY, ["axes[0].step", "unknown key", "values, range, log"]),
    (HEAD + AXIS.replace("alignment", "alinement") + "values = [1]\n" + SUMMARY, ["rules.alinement", "unknown key"]),
    (HEAD + AXIS + "values = [1, -2]\n" + SUMMARY, ["axes[0]", "-2", "allowed: >= 0"]),
    (HEAD + AXIS + "values = [1, 'many']\n" + SUMMARY, ["axes[0].values", "mix"]),
    (HEAD + "[[axes]]\nkey = 'seed'\nvalues = [1, 2]\n" + SUMMARY, ["axes[0].key", "seeds"]),
    (HEAD + AXIS + "values = [1]\n" + AXIS + "values = [2]\n" + SUMMARY, ["axes[1].key", "twice"]),
    (HEAD + AXIS + "range = {start = 1, stop = 9}\n" + SUMMARY, ["axes[0].range.num", "missing"]),
    (HEAD + AXIS + "log = {start = 0, stop = 9, num = 2}\n" + SUMMARY, ["axes[0]", "log range", "> 0"]),
    (HEAD + AXIS + "values = [1]\nrange = {start = 1, stop = 9, num = 2}\n" + SUMMARY, ["exactly one of"]),
    (HEAD + "seeds = 0\n" + SUMMARY, ["seeds", "allowed: 1 to 1000000"]),
    (HEAD + "seeds = true\n" + SUMMARY, ["seeds", "true/false"]),
    (HEAD, ["summaries", "missing"]),
    ("steps = 10\n" + SUMMARY, ["base", "missing"]),
    ("base = 'no-such-preset'\nsteps = 10\n" + SUMMARY, ["preset", "no-such-preset", "boids-2d"]),
    (HEAD + "set = ['agents.nn=3']\n" + SUMMARY, ["set", "agents.nn", "unknown key"]),
    (HEAD + "steps = = 3\n", ["not valid TOML"]),
]


@pytest.mark.parametrize(("text", "expected"), BAD)
def test_bad_sweep_file_exits_2_with_one_line(runner, tmp_path, text, expected):
    path = tmp_path / "bad.toml"
    path.write_text(text, encoding="utf-8")
    result = runner.invoke(app, ["sweep", str(path), "-o", str(tmp_path / "r.parquet")])
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"error: {path}: "), lines[0]
    for text_part in expected:
        assert text_part in lines[0], (text_part, lines[0])
    assert list(tmp_path.iterdir()) == [path]  # nothing written


@pytest.mark.parametrize(
    ("summary", "expected"),
    [
        ("metric = 'speed'\n", ["summaries[0].metric", "polarization | milling"]),
        ("metric = 'polarization'\nstat = 'mode'\n", ["summaries[0].stat", "fraction-below"]),
        ("metric = 'polarization'\nstat = 'fraction-below'\n", ["summaries[0]", "needs a threshold"]),
        ("metric = 'polarization'\nwindow = [50.0, 60.0]\n", ["summaries[0].window", "no sample", "[0, 0.166"]),
        ("metric = 'polarization'\nwindow = [2.0, 1.0]\n", ["summaries[0]", "window", "start <= stop"]),
        ("metric = 'polarization'\nevery = 0\n", ["summaries[0].every", ">= 1"]),
        ("metric = 'polarization'\nname = 'seed'\n", ["summaries[0]", "'seed'", "already used"]),
    ],
)
def test_bad_summary_exits_2(runner, tmp_path, summary, expected):
    path = tmp_path / "bad.toml"
    path.write_text(f"base = 'boids-2d'\nsteps = 10\n[[summaries]]\n{summary}", encoding="utf-8")
    result = runner.invoke(app, ["sweep", str(path)])
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    for text_part in expected:
        assert text_part in lines[0], (text_part, lines[0])


def test_unknown_shipped_sweep_and_bad_options(runner, tmp_path):
    result = runner.invoke(app, ["sweep"])
    assert result.exit_code == 2 and "TARGET: missing" in result.stderr and "--list" in result.stderr
    result = runner.invoke(app, ["sweep", "nope"])
    assert result.exit_code == 2 and "boids-separation" in result.stderr
    result = runner.invoke(app, ["sweep", "boids-separation", "-o", str(tmp_path / "r.csv")])
    assert result.exit_code == 2 and "-o" in result.stderr and ".parquet" in result.stderr
    result = runner.invoke(app, ["sweep", "boids-separation", "-o", str(tmp_path / "r.parquet"), "--resume", "--force"])
    assert result.exit_code == 2 and "--resume and --force" in result.stderr
    result = runner.invoke(
        app,
        ["sweep", "boids-separation", "-o", str(tmp_path / "r.parquet"), "--scheduler", "tcp://x:1", "--workers", "2"],
    )
    assert result.exit_code == 2 and "--workers" in result.stderr
    assert list(tmp_path.iterdir()) == []


# --- running on the cluster ---------------------------------------------------------------------------


def test_grid_sweep_produces_the_expected_rows(client, tmp_path):
    sweep = parse_sweep(GRID, name="grid")
    out = tmp_path / "grid.parquet"
    report = run_sweep(sweep, out, client=client)
    assert (report.total, report.ran, report.resumed, report.ok, report.failed) == (12, 12, 0, 12, 0)
    assert not report.interrupted and report.workers == 2
    rows = rows_of(out)
    assert len(rows) == 12 and not (tmp_path / "grid.parquet.parts").exists()
    assert [(r["rules.alignment.weight"], r["rules.steering"], r["seed"]) for r in rows] == [
        (w, m, s) for w in (0.0, 0.5, 2.0) for m in ("reynolds", "clamped-sum") for s in (0, 1)
    ]
    schema = pq.read_schema(out)
    assert schema.names == [
        "rules.alignment.weight",
        "rules.steering",
        "seed",
        "polarization_mean",
        "nnd_mean_final",
        "polarization_fraction_below_0.5",
        "status",
        "error",
        "steps",
        "wall_s",
        "compile_s",
        "worker",
        "flocksim_version",
        "task_id",
    ]
    for r in rows:
        assert r["status"] == "ok" and r["error"] is None and r["steps"] == 60
        assert 0.0 <= r["polarization_mean"] <= 1.0 and r["nnd_mean_final"] > 0
        assert r["polarization_fraction_below_0.5"] in (0.0, 0.25, 0.5, 0.75, 1.0)  # 4 samples: steps 0, 20, 40, 60
        assert r["wall_s"] > 0 and r["flocksim_version"]
    assert len({r["polarization_mean"] for r in rows}) == 12  # every run differs
    # a row equals the same run done here, sampled the same way
    r = rows[7]  # weight 0.5, clamped-sum, seed 1
    assert (r["rules.alignment.weight"], r["rules.steering"], r["seed"]) == (0.5, "clamped-sum", 1)
    params = apply_overrides(
        sweep.base, [override_text("rules.alignment.weight", 0.5), override_text("rules.steering", "clamped-sum")]
    )
    sim = Simulation(params, seed=1, threads=1)
    polarization = {}
    for step in range(0, 61, 5):
        sim.step(step - sim.steps)
        polarization[step] = sim.metrics()["polarization"]
    window = [polarization[s] for s in (15, 20, 25, 30, 35, 40, 45, 50, 55, 60)]  # 0.2 s .. 1.0 s at 60 steps/s
    assert r["polarization_mean"] == pytest.approx(float(np.mean(window)), rel=1e-12)
    assert r["polarization_fraction_below_0.5"] == np.mean([polarization[s] < 0.5 for s in (0, 20, 40, 60)])
    assert r["nnd_mean_final"] == pytest.approx(sim.metrics()["nnd_mean"], rel=1e-12)
    # kernels were loaded once per worker process, not once per task
    stats = client.run(worker_stats)
    assert all(s["warm_ups"] == 1 and s["tasks"] >= 1 for s in stats.values()), stats
    assert sum(s["tasks"] for s in stats.values()) >= 12 + 2
    assert sum(r["compile_s"] > 0 for r in rows) == 0  # the fixture warmed both workers


def test_same_sweep_twice_gives_identical_rows(client, tmp_path):
    sweep = parse_sweep(GRID, name="grid")
    run_sweep(sweep, tmp_path / "a.parquet", client=client)
    run_sweep(sweep, tmp_path / "b.parquet", client=client)
    a, b = rows_of(tmp_path / "a.parquet"), rows_of(tmp_path / "b.parquet")
    assert len(a) == 12 and same_rows(stable(a), stable(b))
    assert [r["wall_s"] for r in a] != [r["wall_s"] for r in b]  # really run twice


@pytest.mark.parametrize(
    ("base", "key", "values"), [("vicsek", "vicsek.eta", "[1.0, 4.0]"), ("couzin", "couzin.delta_r_o", "[2.0, 12.0]")]
)
def test_research_model_sweeps_run(client, tmp_path, base, key, values):
    """The research presets have no neighbors.mode (their model fixes the neighbourhood): a sweep over them
    runs (it failed in every task with "'SearchMethod' object has no attribute 'mode'"), and a row is the
    same run done here."""
    text = f"""base = "{base}"
set = ["agents.n=40"]
steps = 10
[[axes]]
key = "{key}"
values = {values}
[[summaries]]
metric = "polarization"
stat = "final"
"""
    sweep = parse_sweep(text, name=base)
    report = run_sweep(sweep, tmp_path / f"{base}.parquet", client=client)
    rows = rows_of(tmp_path / f"{base}.parquet")
    assert (report.ok, report.failed) == (2, 0), [r["error"] for r in rows]
    r = rows[1]
    sim = Simulation(apply_overrides(sweep.base, [override_text(key, r[key])]), seed=0, threads=1)
    sim.step(10)
    assert r["polarization_final"] == sim.metrics()["polarization"]


def test_numba_reads_the_workers_thread_count_before_its_threads_start():
    """A worker whose numba was imported before the Nanny set NUMBA_NUM_THREADS takes the variable's value
    (a later compile would otherwise fail on the mismatch), in a fresh process with no threads started."""
    code = """
import os
import numba
before = numba.config.NUMBA_NUM_THREADS
os.environ["NUMBA_NUM_THREADS"] = str(before + 1)
from flocksim.sweep.task import numba_threads_from_environment
numba_threads_from_environment()
assert numba.config.NUMBA_NUM_THREADS == before + 1, (before, numba.config.NUMBA_NUM_THREADS)
"""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_NUM_THREADS"}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def test_failing_run_is_recorded_and_the_sweep_goes_on(client, tmp_path):
    text = """base = "boids-2d"
set = ["agents.n=30"]
steps = 20
[[axes]]
key = "agents.min_speed"
values = [10.0, 50.0]
[[axes]]
key = "agents.max_speed"
values = [30.0, 80.0]
[[summaries]]
metric = "polarization"
"""
    report = run_sweep(parse_sweep(text, name="f"), tmp_path / "f.parquet", client=client)
    assert (report.ok, report.failed, report.lost) == (3, 1, 0)
    rows = rows_of(tmp_path / "f.parquet")
    bad = [r for r in rows if r["status"] == "failed"]
    assert len(bad) == 1 and (bad[0]["agents.min_speed"], bad[0]["agents.max_speed"]) == (50.0, 30.0)
    assert "min_speed" in bad[0]["error"] and "\n" not in bad[0]["error"]
    assert math.isnan(bad[0]["polarization_mean"])
    # failed runs count as finished: --resume does not run them again
    again = run_sweep(parse_sweep(text, name="f"), tmp_path / "f.parquet", client=client, resume=True)
    assert (again.ran, again.resumed, again.failed) == (0, 4, 1)


def test_resume_after_interrupt_does_not_redo_rows(client, tmp_path):
    sweep = parse_sweep(GRID, name="grid")
    out = tmp_path / "r.parquet"
    seen = []

    def stop_after_three(row):
        seen.append(row["task_id"])
        if len(seen) == 3:
            raise KeyboardInterrupt

    first = run_sweep(sweep, out, client=client, on_row=stop_after_three)
    assert first.interrupted and first.ran == 3
    before = {r["task_id"]: r for r in rows_of(out)}
    assert set(before) == set(seen)
    # without --resume an existing output is refused
    with pytest.raises(SweepError, match="--resume"):
        run_sweep(sweep, out, client=client)
    second = run_sweep(sweep, out, client=client, resume=True)
    assert (second.resumed, second.ran, second.ok, second.total) == (3, 9, 12, 12)
    after = rows_of(out)
    assert len({r["task_id"] for r in after}) == 12
    for r in after:
        if r["task_id"] in before:
            assert r == before[r["task_id"]]  # same wall time and worker: not run again
    whole = tmp_path / "whole.parquet"
    run_sweep(sweep, whole, client=client)
    assert same_rows(stable(after), stable(rows_of(whole)))
    # a sweep whose rows mean something else cannot resume this file
    other = parse_sweep(GRID.replace("steps = 60", "steps = 61"), name="grid")
    with pytest.raises(SweepError, match="different sweep"):
        run_sweep(other, out, client=client, resume=True)
    # more seeds: only the new runs are done
    more = parse_sweep(GRID.replace("seeds = 2", "seeds = 3"), name="grid")
    third = run_sweep(more, out, client=client, resume=True)
    assert (third.resumed, third.ran, third.total) == (12, 6, 18)


@pytest.mark.slow
def test_resume_after_sigkill_of_the_sweep_process(client, tmp_path):
    sweep_file = slow_sweep(16, tmp_path)
    out = tmp_path / "k.parquet"
    parts = tmp_path / "k.parquet.parts"
    address = client.scheduler.address
    proc = subprocess.Popen(
        [str(CONSOLE_SCRIPT), "sweep", str(sweep_file), "-o", str(out), "--scheduler", address, "-q"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        # the first part waits for the workers' compile: about a minute quiet, several on a loaded machine
        deadline = time.monotonic() + 600
        while not list(parts.glob("part-*.parquet")) and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.02)
        assert proc.poll() is None, proc.stderr.read().decode()
        assert list(parts.glob("part-*.parquet")), "no part written in 10 minutes"
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        if proc.poll() is None:  # a failed check above leaves it running
            proc.kill()
        proc.wait()
    assert not out.exists()
    journal = pq.read_table(sorted(parts.glob("part-*.parquet"))).to_pylist()
    kept = {r["task_id"]: r for r in journal}
    assert 0 < len(kept) < 16
    report = run_sweep(load_sweep(sweep_file), out, client=client, resume=True)
    assert report.resumed == len(kept) and report.ran == 16 - len(kept)
    rows = rows_of(out)
    assert len(rows) == 16 and len({r["task_id"] for r in rows}) == 16 and not parts.exists()
    assert all(r["status"] == "ok" for r in rows)
    for r in rows:
        if r["task_id"] in kept:
            assert r == kept[r["task_id"]]


@pytest.mark.slow
def test_worker_killed_mid_sweep_every_row_once(client, tmp_path):
    sweep = load_sweep(slow_sweep(12, tmp_path))
    killed = []

    def kill_a_busy_worker(row):
        if killed:
            return
        busy = [w for w, keys in client.processing().items() if keys]
        if not busy:  # both between tasks at this instant: try at the next row
            return
        pid = client.run(os.getpid, workers=[busy[0]])[busy[0]]
        os.kill(pid, signal.SIGKILL)
        killed.append(pid)

    report = run_sweep(sweep, tmp_path / "w.parquet", client=client, on_row=kill_a_busy_worker)
    assert killed
    rows = rows_of(tmp_path / "w.parquet")
    assert len(rows) == 12 and len({r["task_id"] for r in rows}) == 12
    assert [r["rules.cohesion.weight"] for r in rows] == pytest.approx([0.1 * i for i in range(12)])
    assert (report.ok, report.lost) == (12, 0)
    client.wait_for_workers(2, timeout=60)


# --- the command line ---------------------------------------------------------------------------------


def test_cli_sweep_summary_and_plot(client, runner, tmp_path):
    path = tmp_path / "grid.toml"
    path.write_text(GRID, encoding="utf-8")
    out = tmp_path / "res.parquet"
    address = client.scheduler.address
    result = runner.invoke(app, ["sweep", str(path), "-o", str(out), "--scheduler", address, "--seeds", "1"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("sweep grid: 6 of 6 runs in ")
    assert "6 ok, 0 failed, 0 lost" in lines[0] and "runs/s" in lines[0]
    # standard error is not a terminal (nohup, | tee, a batch job): no bar, a line per tenth of the runs
    said = [line.rsplit(",", 1)[0] for line in result.stderr.splitlines()]
    assert said == [f"sweep grid: {k} of 6 runs done" for k in range(1, 7)], result.stderr
    assert len(rows_of(out)) == 6
    again = runner.invoke(app, ["sweep", str(path), "-o", str(out), "--scheduler", address, "--seeds", "1"])
    assert again.exit_code == 2 and "--resume" in again.stderr
    resumed = runner.invoke(
        app, ["sweep", str(path), "-o", str(out), "--scheduler", address, "--seeds", "1", "--resume"]
    )
    assert resumed.exit_code == 0 and "0 run now, 6 resumed" in resumed.stdout

    fig = tmp_path / "fig.png"
    args = ["plot", str(out), "-x", "rules.alignment.weight", "-y", "polarization_mean", "--hue", "rules.steering"]
    result = runner.invoke(app, [*args, "-o", str(fig)])
    assert result.exit_code == 0, result.output
    assert fig.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and fig.stat().st_size > 5000
    default = runner.invoke(app, args)
    assert default.exit_code == 0 and (tmp_path / "res.png").exists()
    for bad, expected in [
        (["-x", "nope", "-y", "polarization_mean"], "-x: unknown column 'nope'; allowed: rules.alignment.weight"),
        (["-x", "seed", "-y", "status"], "-y: unknown summary 'status'; allowed: polarization_mean"),
        (["-x", "seed", "-y", "polarization_mean", "-o", str(tmp_path / "f.jpg")], "allowed: a path ending in .png"),
    ]:
        result = runner.invoke(app, ["plot", str(out), *bad])
        assert result.exit_code == 2 and expected in result.stderr, result.stderr
    foreign = tmp_path / "foreign.parquet"
    pq.write_table(read_results(out).drop_columns(["seed"]).replace_schema_metadata({}), foreign)
    result = runner.invoke(app, ["plot", str(foreign), "-x", "seed", "-y", "polarization_mean"])
    assert result.exit_code == 2 and "not a flocksim sweep results file" in result.stderr
    result = runner.invoke(app, ["plot", str(tmp_path / "grid.toml")])
    assert result.exit_code == 2 and "allowed: a file ending in .parquet" in result.stderr


def test_a_long_sweep_without_a_terminal_says_how_far_it_got_a_tenth_at_a_time():
    from flocksim.sweep.runner import PROGRESS_EVERY_S, _say_progress

    assert [d for d in range(1, 1001) if _say_progress(d, 1000, 0.0)] == [1, *range(100, 1001, 100)]
    assert _say_progress(150, 1000, PROGRESS_EVERY_S) and not _say_progress(150, 1000, PROGRESS_EVERY_S - 1)


def test_docs_describe_the_shipped_sweeps_and_their_example_parses():
    docs = Path(__file__).resolve().parent.parent / "docs"
    text = (docs / "sweeps.md").read_text(encoding="utf-8")
    for name in shipped_sweeps():
        assert f"### {name}" in text, f"docs/sweeps.md does not describe {name}"
        assert (docs / "img" / f"sweep-{name}.png").is_file()
    example = text.split("```toml\n", 1)[1].split("```", 1)[0]
    sweep = parse_sweep(example, name="example")
    assert sweep.n_tasks == 2 * 9 * 7 * 4 * 5
    assert sweep.axis_keys == ["neighbors.mode", "rules.alignment.weight", "rules.separation.weight", "neighbors.k"]


def test_random_draws_that_repeat_a_point_run_once():
    text = "base = 'boids-2d'\nsteps = 10\n[sampling]\nkind = 'random'\nsamples = 50\n"
    text += "[[axes]]\nkey = 'neighbors.mode'\nvalues = ['metric', 'topological']\n" + SUMMARY
    sweep = parse_sweep(text)
    assert sweep.n_tasks == len(expand(sweep)) == 2


def test_lost_rows_are_run_again_by_resume(tmp_path):
    from flocksim.sweep.results import ResultsStore
    from flocksim.sweep.runner import lost_row

    sweep = parse_sweep(GRID, name="grid")
    tasks = expand(sweep)
    job = Job(base=to_dict(sweep.base), steps=sweep.spec.steps, summaries=tuple(sweep.spec.summaries))
    store = ResultsStore(sweep, tmp_path / "l.parquet")
    store.add(lost_row(job, tasks[0], RuntimeError("KilledWorker: worker died 3 times")))
    store.add({**lost_row(job, tasks[1], RuntimeError("x")), "status": "failed", "error": "ValueError: bad"})
    store.flush()  # as if the sweep were killed here: only the journal exists
    resumed = ResultsStore(sweep, tmp_path / "l.parquet", resume=True)
    assert resumed.done == {tasks[1].task_id}  # the failed run is finished, the lost one is not
    resumed.add({**lost_row(job, tasks[0], RuntimeError("x")), "status": "ok", "error": None})
    table = resumed.finalize([t.task_id for t in tasks])
    assert table.column("task_id").to_pylist() == [tasks[0].task_id, tasks[1].task_id]
    assert table.column("status").to_pylist() == ["ok", "failed"]
    assert not (tmp_path / "l.parquet.parts").exists()

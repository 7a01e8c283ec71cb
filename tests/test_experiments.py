"""``flocksim experiment``: every experiment runs from the CLI (--quick), prints a table and writes CSV;
bad input is one line with exit status 2 and leaves no file."""

from __future__ import annotations

import csv
import importlib
import math
import pkgutil
from pathlib import Path
from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

from flocksim.cli import app
from flocksim.experiments import EXPERIMENTS, format_value, make_sim, run_experiment, run_specs, summarize


@pytest.fixture(scope="module")
def runner() -> CliRunner:
    return CliRunner()


def invoke(runner: CliRunner, *args: str):
    return runner.invoke(app, [str(a) for a in args], catch_exceptions=False)


@pytest.mark.parametrize("name", list(EXPERIMENTS))
def test_every_experiment_runs_quick(runner, tmp_path, name):
    path = tmp_path / f"{name}.csv"
    result = invoke(runner, "experiment", name, "--quick", "--seeds", "1", "--csv", path, "-q")
    assert result.exit_code == 0, result.output
    experiment = EXPERIMENTS[name]
    assert name in result.stdout and "seed" in result.stdout and "±" not in result.stdout  # one seed: no sd
    last = result.stdout.strip().splitlines()[-1]
    assert last.startswith(f"{name}: {len(experiment.conditions)} runs in ") and str(path) in last
    with path.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert rows and set(rows[0]) == {"experiment", "dim", "condition", "seed", "metric", "value"}
    conditions = {(int(r["dim"]), r["condition"]) for r in rows}
    assert conditions == {(c.dim, c.label) for c in experiment.conditions}
    assert {r["experiment"] for r in rows} == {name} and {r["seed"] for r in rows} == {"0"}
    for row in rows:
        value = float(row["value"])
        may_be_nan = {"edge_rad", "interior_rad", "polarization_used", "axis_cos", "aspect", "repetition"}
        # no sample of the kind (no turn in a quick run), no roost, no zero crossing, too few birds reached
        may_be_nan |= {"polarization_cruise", "polarization_turning", "r0_over_L", "L", "roost_distance_max"}
        may_be_nan |= {"heading_length_cos_cruise", "heading_length_cos_turning", "border_nnd_ratio", "gamma1"}
        may_be_nan |= {"xi_speed_over_L", "splits_per_minute", "merges_per_minute"}  # no speed correlation's zero
        if name == "agitation-waves":  # a wave that reaches too few birds (the control: none) has no fit
            may_be_nan |= {"crossing_s", "speed", "r2", "width_m"}
        fit = row["metric"].endswith(("deg", "pct")) and row["metric"].rsplit("_", 1)[0] in {
            "speed", "theory_speed", "speed_ratio", "r2", "exponent", "control_speed", "control_exponent", "lag_frames"
        }  # fmt: skip
        assert math.isfinite(value) or row["metric"] in may_be_nan or fit, row


def test_without_a_terminal_each_finished_run_says_so(runner, tmp_path):
    """No bar where nobody watches it: one line per finished run on standard error instead."""
    result = invoke(runner, "experiment", "shape", "--quick", "--seeds", "1", "--csv", tmp_path / "s.csv")
    assert result.exit_code == 0, result.output
    lines = [line for line in result.stderr.splitlines() if line.startswith("shape: run ")]
    assert len(lines) == len(EXPERIMENTS["shape"].conditions)
    assert lines[-1].startswith(f"shape: run {len(lines)}/{len(lines)} done (3D ")


def test_predator_experiment_counts_catches():
    rows = run_experiment("predator-multipliers", [0], quick=True)
    per_min = {(r["dim"], r["condition"]): r["value"] for r in rows if r["metric"] == "catch_per_min"}
    caught = {(r["dim"], r["condition"]): r["value"] for r in rows if r["metric"] == "caught"}
    assert len(per_min) == 6
    for key, rate in per_min.items():
        assert rate == pytest.approx(caught[key] * 60 / 20.0)  # quick: 20 simulated seconds
    assert sum(caught.values()) >= 3, caught  # a smoke check that can fail: the predators do catch


def test_turn_propagation_first_change_is_about_the_turned_share():
    # quick: 80 birds, 10 turned by 60 degrees. In a perfectly aligned flock the mean heading moves
    # by atan(10 sin 60 / (70 + 10 cos 60)) = 6.6 degrees at once; the 3D flock starts aligned
    # (polarization > 0.85 after the 2 s warm-up), so it is close to that.
    rows = run_experiment("turn-propagation", [0], quick=True)
    pol = {r["condition"]: r["value"] for r in rows if r["metric"] == "polarization" and r["dim"] == 3}
    first = {r["condition"]: r["value"] for r in rows if r["metric"] == "dheading_0s_deg" and r["dim"] == 3}
    assert set(first) == {"inertial-spin", "basic"}
    for condition, change in first.items():
        assert pol[condition] > 0.85
        assert 4.0 < change < 10.0, (condition, change, pol[condition])


def test_set_overrides_reach_every_condition_after_its_own():
    experiment = EXPERIMENTS["edge-deviation"]
    specs = run_specs("edge-deviation", [0], False, ("agents.max_speed=100.0", "neighbors.k=5"))
    assert len(specs) == len(experiment.conditions)
    for spec in specs:
        p = make_sim(spec, 50).params
        assert p.agents.max_speed == 100.0 and p.agents.n == 50
        # a condition's own k (k=12) is overridden by --set, which comes after it
        assert p.neighbors.k == 5


def test_every_family_module_is_registered():
    """A module of the package that defines experiments is in the registry's FAMILIES (else its
    experiments would silently be missing from ``flocksim experiment``), and every experiment is in
    EXPERIMENTS once, in the families' order."""
    import flocksim.experiments as package
    from flocksim.experiments.registry import FAMILIES

    names = [m.name for m in pkgutil.iter_modules(package.__path__)]
    modules = [importlib.import_module(f"flocksim.experiments.{name}") for name in names]
    defining = {m.__name__ for m in modules if hasattr(m, "EXPERIMENTS") and isinstance(m.EXPERIMENTS, tuple)}
    assert defining == {f.__name__ for f in FAMILIES}
    assert list(EXPERIMENTS) == [e.name for f in FAMILIES for e in f.EXPERIMENTS]


def test_registry_refuses_one_name_twice():
    from flocksim.experiments.registry import collect

    a = SimpleNamespace(__name__="family_a", EXPERIMENTS=(EXPERIMENTS["shape"],))
    b = SimpleNamespace(__name__="family_b", EXPERIMENTS=(EXPERIMENTS["turn-waves"], EXPERIMENTS["shape"]))
    assert list(collect([a])) == ["shape"]
    with pytest.raises(ValueError, match="'shape' is defined twice: in family_a and family_b"):
        collect([a, b])


def test_summarize_mean_sd_count():
    rows = [
        {"dim": 2, "condition": "a", "metric": "m", "value": v, "seed": s, "experiment": "x"}
        for s, v in enumerate([1.0, 2.0, 3.0, math.nan])
    ]
    (row,) = summarize(rows)
    assert row["mean"] == 2.0 and row["sd"] == 1.0 and row["n"] == 3


def test_format_value_gives_sd_and_the_t_interval():
    # mean 2, sd 1, 3 runs: t(0.975, 2 dof) = 4.3027, half width 4.3027 / sqrt(3) = 2.4842
    assert format_value(2.0, 1.0, 3) == "2.00 ± 1.00 [-0.48, 4.48]"
    assert format_value(123.4, 5.0, 10) == "123 ± 5 [120, 127]"  # 2.2622 x 5 / sqrt(10) = 3.58
    assert format_value(0.5, 0.0, 1) == "0.500"
    assert format_value(math.nan, 0.0, 3) == "n/a"


def test_list_and_help(runner):
    result = invoke(runner, "experiment", "--list")
    assert result.exit_code == 0
    for name in EXPERIMENTS:
        assert name in result.stdout
    help_text = invoke(runner, "experiment", "--help").stdout
    assert "Example: flocksim experiment" in help_text
    for option in ("--seeds", "--quick", "--csv", "--jobs"):
        assert option in help_text


@pytest.mark.parametrize(
    "args, words",
    [
        (["nope"], ["unknown experiment", "predator-multipliers"]),
        ([], ["NAME", "missing"]),
        (["shape", "--seeds", "0"], ["--seeds"]),
        (["shape", "--set", "rules.nope=1"], ["rules.nope"]),
    ],
)
def test_bad_input_is_one_line_exit_2(runner, tmp_path, args, words):
    path = tmp_path / "out.csv"
    result = invoke(runner, "experiment", *args, "--csv", path, "-q")
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:"), result.output
    for word in words:
        assert word in lines[0]
    assert not path.exists()


def test_csv_into_missing_directory_is_refused(runner, tmp_path):
    result = invoke(runner, "experiment", "shape", "--quick", "--csv", tmp_path / "no" / "x.csv")
    assert result.exit_code == 2 and "does not exist" in result.output


DOCS = Path(__file__).resolve().parent.parent / "docs"
MAIN_METRICS = {
    "predator-multipliers": ("catch_per_min",),
    "edge-deviation": ("edge_rad", "interior_rad", "polarization_used"),
    "shape": ("axis_cos", "aspect"),
    "speed-fluctuation": ("speed_var_rel", "mean_speed_rel", "at_min_speed"),
    "turn-propagation": ("dheading_0s_deg", "reached", "exponent", "speed", "speed_ratio"),
    "spontaneous-turning": ("repetition",),
    "murmuration-hallmarks": (
        "polarization_last_10s",
        "polarization_min_last_10s",
        "r0_over_L",
        "thickness_to_length",
        "width_to_length",
        "gamma1",
        "roost_distance_max",
        "nnd_body_lengths",
        "border_nnd_ratio",
        "border_nnd_ratio_uniform",
    ),
    "murmuration-dynamics": (
        "polarization",
        "polarization_min",
        "speed_fluctuation",
        "xi_speed_over_L",
        "r0_over_L",
        "nnd_m",
        "border_nnd_ratio",
        "border_nnd_ratio_uniform",
        "gamma1",
        "thickness_to_length",
        "width_to_length",
        "cv_thickness",
        "cv_width",
        "cv_length",
        "turns_per_minute",
        "turning_fraction",
        "flocks_mean",
        "splits_per_minute",
        "merges_per_minute",
        "opacity_from_below",
        "roost_distance_max",
    ),
    "agitation-waves": ("reached", "crossing_s", "speed", "width_m"),
    "turn-waves": (
        "bird_speed",
        "nnd",
        *(
            f"{m}_{d}pct"
            for m in ("reached", "speed", "speed_ratio", "exponent", "control_speed", "lag_frames", "agree")
            for d in ("0.5", "1", "2")
        ),
    ),
}


def test_docs_hold_the_measured_tables():
    """docs/starlings.md shows, for every results file (docs/results/starlings/), the mean ± sd [95 % CI]
    of its experiment's main numbers as computed from the file, and names the command that made it."""
    text = (DOCS / "starlings.md").read_text(encoding="utf-8")
    assert set(MAIN_METRICS) == set(EXPERIMENTS)
    files = sorted((DOCS / "results" / "starlings").glob("*.csv"))
    assert {p.stem for p in files} >= set(EXPERIMENTS)
    for path in files:
        with path.open(newline="") as handle:
            rows = [{**r, "value": float(r["value"])} for r in csv.DictReader(handle)]
        name = rows[0]["experiment"]
        assert f"#### {name}" in text
        assert f"--csv docs/results/starlings/{path.name}`" in text, f"no command writes {path.name}"
        conditions = {(int(r["dim"]), r["condition"]) for r in rows}
        assert conditions == {(c.dim, c.label) for c in EXPERIMENTS[name].conditions}, name
        for s in summarize(rows):
            if s["metric"] in MAIN_METRICS[name]:
                shown = format_value(s["mean"], s["sd"], s["n"])
                assert shown in text, f"{path.name} {s['dim']}D {s['condition']} {s['metric']}: {shown} not in the docs"
